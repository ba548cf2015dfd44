#!/usr/bin/env bash
# GPU tests under pressure: a problem too big for the card is refused in one line that names the
# bytes needed and the bytes free, with exit 1 and nothing written; and two stages running at
# once on one GPU both finish with their checks passed (the second may be slower).
# Without a usable GPU each case is reported as SKIP with the reason the program gave.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
. tests/lib_gpu_case.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in 03_simple_mlp 04_fused_mlp; do
    [ -x "bin/$s" ] || { echo "SKIP pressure: bin/$s not built (make $s)"; exit 0; }
done

# Too big: 524,288 tokens of an 8192 -> 65536 MLP need hundreds of GB of intermediates.
label="pressure: out of device memory is one line, exit 1, nothing written"
bin/03_simple_mlp --batch 64 --seq 8192 --dim 8192 --hidden 65536 --out "$tmp/oom" >"$tmp/log" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ]; then
    waived_line "$label" "$tmp/log"
elif [ "$rc" -ne 1 ]; then
    echo "FAIL $label: exit $rc, expected 1"
elif [ "$(grep -c . "$tmp/err")" -ne 1 ] || ! grep -q "GB of device memory, .* GB free" "$tmp/err"; then
    echo "FAIL $label: expected one line naming the size and the free memory, got:"
    sed 's/^/  /' "$tmp/err" | head -5
elif [ -n "$(find "$tmp/oom" -type f 2>/dev/null)" ]; then
    echo "FAIL $label: files were written: $(find "$tmp/oom" -type f | head -3 | tr '\n' ' ')"
else
    echo "PASS $label ($(head -1 "$tmp/err"))"
fi

# Two at once: each process checks its own output against the CPU reference.
label="pressure: two stages at once on one GPU both pass their checks"
common=(--steps 20 --no-trace --no-plot)
bin/03_simple_mlp "${common[@]}" --out "$tmp/a" >"$tmp/a.log" 2>&1 &
a=$!
bin/04_fused_mlp --variant merged "${common[@]}" --out "$tmp/b" >"$tmp/b.log" 2>&1 &
b=$!
wait "$a"; ra=$?
wait "$b"; rb=$?
if [ "$ra" -eq 2 ] || [ "$rb" -eq 2 ]; then
    cat "$tmp/a.log" "$tmp/b.log" >"$tmp/ab.log"
    waived_line "$label" "$tmp/ab.log"
elif [ "$ra" -ne 0 ] || [ "$rb" -ne 0 ]; then
    echo "FAIL $label: exit $ra and $rb"
    grep -hE "error|FAIL" "$tmp/a.log" "$tmp/b.log" | head -4 | sed 's/^/  /'
elif ! grep -q 'check: .*PASS' "$tmp/a.log" || ! grep -q 'check: .*PASS' "$tmp/b.log"; then
    echo "FAIL $label: a check did not pass"
else
    echo "PASS $label"
fi
