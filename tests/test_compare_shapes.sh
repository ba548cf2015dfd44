#!/usr/bin/env bash
# CPU test of compare/shapes.py's command line: --help, bad input (one line, exit 1), and the
# waived path without PyTorch (one line, exit 2, no temporary directory left behind). PyTorch is
# hidden behind a package named torch whose import fails, so the test means the same on a machine
# that has it. The measurement itself needs a GPU: tests/gpu_compare.sh runs it.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v python3 >/dev/null; then
    echo "SKIP compare shapes: python3 not found"
    exit 0
fi
mkdir -p "$tmp/hide/torch" "$tmp/scratch"
echo 'raise ImportError("hidden by the test")' >"$tmp/hide/torch/__init__.py"

check() {  # check NAME WANT_RC WANT_LINES PATTERN -- COMMAND...: one PASS/FAIL line
    local name=$1 want_rc=$2 want_lines=$3 pattern=$4; shift 5
    local out rc lines
    out=$(TMPDIR="$tmp/scratch" PYTHONPATH="$tmp/hide" "$@" 2>&1)
    rc=$?
    lines=$(printf '%s\n' "$out" | grep -c .)
    if [ "$rc" -ne "$want_rc" ]; then
        echo "FAIL $name: exit $rc, expected $want_rc: $(printf '%s' "$out" | head -n 3)"
    elif [ "$want_lines" != any ] && [ "$lines" -ne "$want_lines" ]; then
        echo "FAIL $name: $lines lines of output, expected $want_lines: $(printf '%s' "$out" | head -n 3)"
    elif ! printf '%s\n' "$out" | grep -qE -- "$pattern"; then
        echo "FAIL $name: no line matches '$pattern': $(printf '%s' "$out" | head -n 3)"
    else
        echo "PASS $name"
    fi
}

check "compare shapes --help" 0 any "--tokens" -- python3 compare/shapes.py --help
check "compare shapes rejects a token count of 0" 1 1 "^compare/shapes.py: error: argument --tokens" \
    -- python3 compare/shapes.py --tokens 1,0
check "compare shapes rejects a repeated token count" 1 1 "repeats a token count" \
    -- python3 compare/shapes.py --tokens 8,8
check "compare shapes rejects an unknown flag" 1 1 "unrecognized arguments: --bogus" \
    -- python3 compare/shapes.py --bogus
check "compare shapes without PyTorch: waived" 2 1 "^compare: PyTorch is required" \
    -- python3 compare/shapes.py --no-plot
check "./run --compare shapes reaches compare/shapes.py" 2 1 "^compare: PyTorch is required" \
    -- ./run --compare shapes --tokens 1,8
if [ -z "$(ls -A "$tmp/scratch")" ]; then
    echo "PASS compare shapes leaves no temporary directory"
else
    echo "FAIL compare shapes leaves no temporary directory: $(ls "$tmp/scratch")"
fi
