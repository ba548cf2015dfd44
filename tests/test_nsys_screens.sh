#!/usr/bin/env bash
# CPU test of tools/nsys_screens.sh's command line, without a display or Nsight Systems: --help,
# bad input (one "nsys_screens: error:" line, exit 1, nothing created), and a missing tool (one
# line naming it, exit 2, nothing created). PATH holds only the few commands the script's checks
# use, so the test means the same on a machine with Xvfb and nsys-ui.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/scratch" "$tmp/reports/01_matmul_add" "$tmp/reports/03_simple_mlp" \
    "$tmp/reports/04_fused_mlp"
for c in bash dirname readlink sed grep awk ldd; do
    p=$(command -v "$c") && ln -s "$p" "$tmp/bin/$c"
done
: >"$tmp/reports/01_matmul_add/64_bf16_cold_eager.nsys2024.nsys-rep"
: >"$tmp/reports/03_simple_mlp/64x128_768x3072_bf16_cold_eager.nsys2024.nsys-rep"
: >"$tmp/reports/04_fused_mlp/1x8_768x3072_bf16_cold_graph.nsys2024.nsys-rep"
passed=0 failed=0

check() {  # check NAME WANT_RC WANT_LINES PATTERN -- ARGS...: one PASS/FAIL line
    local name=$1 want_rc=$2 want_lines=$3 pattern=$4; shift 5
    local out rc lines
    out=$(PATH=$tmp/bin NSYS_UI='' NSYS_HOST_PREFIX=$tmp/none TMPDIR=$tmp/scratch bash tools/nsys_screens.sh "$@" 2>&1)
    rc=$?
    lines=$(printf '%s\n' "$out" | grep -c .)
    if [ "$rc" -ne "$want_rc" ]; then
        echo "FAIL $name: exit $rc, expected $want_rc: $(printf '%s' "$out" | head -n 3)"
    elif [ "$want_lines" != any ] && [ "$lines" -ne "$want_lines" ]; then
        echo "FAIL $name: $lines lines of output, expected $want_lines: $(printf '%s' "$out" | head -n 3)"
    elif ! printf '%s\n' "$out" | grep -qE -- "$pattern"; then
        echo "FAIL $name: no line matches '$pattern': $(printf '%s' "$out" | head -n 3)"
    elif printf '%s\n' "$out" | grep -qE 'line [0-9]+:|command not found|syntax error'; then
        echo "FAIL $name: a shell error: $(printf '%s' "$out" | head -n 3)"
    else
        echo "PASS $name"
        passed=$((passed + 1))
        return
    fi
    failed=$((failed + 1))
}

check "nsys_screens --help" 0 any "--reports DIR" -- --help
check "nsys_screens -h" 0 any "nsys_01_steps.png" -- -h
check "nsys_screens rejects an unknown option" 1 1 "^nsys_screens: error: unknown option '--bogus'" -- --bogus
check "nsys_screens rejects a stray argument" 1 1 "^nsys_screens: error: unexpected argument 'stray'" -- stray
check "nsys_screens: --reports needs a value" 1 1 "^nsys_screens: error: --reports needs a directory" -- --reports
check "nsys_screens: --out needs a value" 1 1 "^nsys_screens: error: --out needs a directory" -- --out
check "nsys_screens: --display needs a value" 1 1 "^nsys_screens: error: --display needs a value" -- --display
check "nsys_screens rejects a missing reports directory" 1 1 \
    "^nsys_screens: error: --reports $tmp/none: no such directory" -- --reports "$tmp/none"
rm "$tmp/reports/03_simple_mlp/64x128_768x3072_bf16_cold_eager.nsys2024.nsys-rep"
check "nsys_screens rejects a missing report file" 1 1 \
    "^nsys_screens: error: .*03_simple_mlp/64x128_768x3072_bf16_cold_eager.nsys2024.nsys-rep: no such report" \
    -- --reports "$tmp/reports" --out "$tmp/out"
: >"$tmp/reports/03_simple_mlp/64x128_768x3072_bf16_cold_eager.nsys2024.nsys-rep"
: >"$tmp/file"
check "nsys_screens rejects an --out that is a file" 1 1 "^nsys_screens: error: --out .*: not a directory" \
    -- --reports "$tmp/reports" --out "$tmp/file"
check "nsys_screens rejects a bad --display" 1 1 "^nsys_screens: error: --display 'abc': expected :N" \
    -- --reports "$tmp/reports" --out "$tmp/out" --display abc
check "nsys_screens rejects control characters" 1 1 "^nsys_screens: error: an argument holds control characters" \
    -- --reports "$(printf 'a\nb')"
check "nsys_screens without Xvfb: exit 2, one line naming it" 2 1 "^nsys_screens: missing: Xvfb" \
    -- --reports "$tmp/reports" --out "$tmp/out"
for c in Xvfb xdotool import convert; do
    printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/$c"
    chmod +x "$tmp/bin/$c"
done
check "nsys_screens without nsys-ui: exit 2, one line naming it" 2 1 "^nsys_screens: missing: nsys-ui" \
    -- --reports "$tmp/reports" --out "$tmp/out"

if [ ! -e "$tmp/out" ] && [ -z "$(find "$tmp/scratch" -mindepth 1)" ]; then
    echo "PASS nsys_screens creates nothing before it can work"
    passed=$((passed + 1))
else
    echo "FAIL nsys_screens creates nothing before it can work: $(find "$tmp/out" "$tmp/scratch" -mindepth 1 2>&1 | tr '\n' ' ')"
    failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
