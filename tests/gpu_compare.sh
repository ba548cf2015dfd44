#!/usr/bin/env bash
# GPU tests of the side-by-side comparison (compare/run_compare.sh): each built stage and PyTorch
# on the same dumped tensors must agree within the dtype's tolerance, and the side-by-side table
# must list kernels for both. SKIP with the reason when there is no GPU, no PyTorch, or a stage
# without --dump.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

case_() {
    local stage=$1; shift
    [ -x "bin/$stage" ] || return 0
    local label="compare $stage $*"
    if ! "bin/$stage" --help 2>/dev/null | grep -q -- "--dump"; then
        echo "SKIP $label: bin/$stage has no --dump flag"
        return 0
    fi
    compare/run_compare.sh "$stage" "$@" --steps 3 --no-plot --out "$tmp/$stage" >"$tmp/log" 2>&1
    local rc=$?
    if [ "$rc" -eq 2 ]; then
        echo "SKIP $label: $(grep -m1 -E 'waived|required' "$tmp/log")"
    elif [ "$rc" -ne 0 ]; then
        echo "FAIL $label: exit $rc"; grep -E "compare|error|FAIL" "$tmp/log" | head -5 | sed 's/^/  /'
    elif ! grep -q "^compare: .*PASS" "$tmp/log" || grep -q "^compare: .*FAIL" "$tmp/log"; then
        echo "FAIL $label: no passing comparison of outputs"
    elif ! grep -qE "^torch .* [0-9]+(-[0-9]+)? kernels" "$tmp/log"; then
        echo "FAIL $label: the side-by-side table lists no PyTorch kernels"
    else
        echo "PASS $label ($(grep -c '^compare: .*PASS' "$tmp/log") outputs agree)"
    fi
}

for dtype in bf16 fp16 fp32; do
    case_ 01_matmul_add --dtype "$dtype" --size 100 --torch-variant eager
    case_ 02_linear --dtype "$dtype" --batch 33 --in_dim 17 --out_dim 65 --torch-variant eager
    case_ 03_simple_mlp --dtype "$dtype" --batch 1 --seq 8 --dim 64 --hidden 256 --torch-variant eager
done
case_ 01_matmul_add --size 4096 --variant all
case_ 02_linear --variant all
case_ 03_simple_mlp --batch 1 --seq 8
case_ 04_fused_mlp --batch 1 --seq 8 --variant all --torch-variant eager
case_ 04_fused_mlp --variant all
