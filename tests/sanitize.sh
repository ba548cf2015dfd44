#!/usr/bin/env bash
# make sanitize: every stage and variant, and the GPU tests, under compute-sanitizer's memcheck,
# racecheck, initcheck and synccheck, at small and tail-heavy shapes (every dimension off the
# tile sizes). One PASS/FAIL line per run, then "N passed, N failed". Needs a GPU.
# Under the sanitizer our own CUPTI trace turns itself off (the tool owns CUPTI) and says so.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
export PATH=$PATH:${CUDA_HOME:-/usr/local/cuda}/bin
if ! command -v compute-sanitizer >/dev/null; then
    echo "SKIP sanitize: compute-sanitizer not found (it comes with the CUDA toolkit)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi

run() {  # run TOOL LABEL COMMAND...
    local tool=$1 label=$2; shift 2
    compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 5 "$@" >"$tmp/log" 2>&1
    local rc=$?
    if [ "$rc" -eq 2 ] && grep -q waived "$tmp/log"; then
        echo "SKIP $tool $label: no GPU"
        return
    fi
    if [ "$rc" -eq 0 ]; then
        echo "PASS $tool $label"; pass=$((pass + 1))
    else
        echo "FAIL $tool $label (exit $rc)"; grep -m5 -E "=========|error" "$tmp/log" | sed 's/^/  /'
        fail=$((fail + 1))
    fi
}

small="--wait 0 --warmup-steps 0 --steps 1 --no-plot --no-trace --out $tmp/out"
for tool in memcheck racecheck initcheck synccheck; do
    [ -x bin/01_matmul_add ] && run "$tool" "01 size 67 batched 2" bin/01_matmul_add --variant all --size 67 --batched 2 $small
    [ -x bin/02_linear ] && run "$tool" "02 33x35->17" bin/02_linear --variant all --batch 33 --in_dim 35 --out_dim 17 $small
    [ -x bin/03_simple_mlp ] && run "$tool" "03 1x37 24->40" bin/03_simple_mlp --batch 1 --seq 37 --dim 24 --hidden 40 $small
    [ -x bin/04_fused_mlp ] && run "$tool" "04 ladder 2x65 72->130" bin/04_fused_mlp --batch 2 --seq 65 --dim 72 --hidden 130 $small
    [ -x bin/04_fused_mlp ] && run "$tool" "04 decode 1x3 72->130" bin/04_fused_mlp --variant decode --batch 1 --seq 3 --dim 72 --hidden 130 $small
    for t in bin/tests/gpu_*; do
        [ -x "$t" ] && run "$tool" "$(basename "$t")" "$t"
    done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
