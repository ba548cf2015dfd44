#!/usr/bin/env bash
# GPU tests: every stage, every variant and dtype, at awkward sizes, checked by the stage itself
# against the CPU reference in double (outputs poisoned with NaN first; exit 1 on a failed check).
# Without a usable GPU each case is reported as SKIP with the reason the stage gave.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# case STAGE ARGS...: one PASS/FAIL/SKIP line
case_() {
    local stage=$1; shift
    [ -x "bin/$stage" ] || return 0
    local label="$stage $*"
    "bin/$stage" "$@" --wait 0 --warmup-steps 0 --steps 2 --no-trace --no-plot --out "$tmp/$stage" >"$tmp/log" 2>&1
    local rc=$?
    if [ "$rc" -eq 2 ]; then
        echo "SKIP $label: $(grep -m1 waived "$tmp/log")"
    elif [ "$rc" -ne 0 ]; then
        echo "FAIL $label: exit $rc"; grep -E "check|error" "$tmp/log" | head -5 | sed 's/^/  /'
    elif [ "$(grep -c 'check: .*PASS' "$tmp/log")" -lt 1 ]; then
        echo "FAIL $label: no passing check in the output"
    else
        echo "PASS $label ($(grep -c 'check: .*PASS' "$tmp/log") checks)"
    fi
}

for dtype in bf16 fp16 fp32; do
    for size in 1 3 63 100 257 1024; do
        case_ 01_matmul_add --variant all --dtype "$dtype" --size "$size"
    done
    case_ 01_matmul_add --variant all --dtype "$dtype" --size 63 --batch 3
done
case_ 01_matmul_add --variant all --size 4096
