#!/usr/bin/env bash
# GPU tests of 02_linear: every variant and dtype, checked by the stage itself against the CPU
# reference in double (outputs poisoned with NaN first; exit 1 on a failed check), at the sizes
# that break careless code: in_dim or out_dim of 1, 3, 33, batch 1, shapes whose leading
# dimensions miss cuBLASLt's alignment (the epilogue variant must fall back, not be wrong), the
# article's shape, and 8192 x 4096 -> 4096 (sampled rows). Then one traced run: each variant
# must launch exactly the kernels it claims. Without a usable GPU each case is a SKIP.
set -u
cd "$(dirname "$0")/.."
. tests/lib_gpu_case.sh
bin=bin/02_linear
[ -x "$bin" ] || exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --explain-views needs no GPU: the 3x2 example, M^T's strides and its flatten order.
"$bin" --explain-views >"$tmp/views" 2>&1
if [ $? -eq 0 ] && grep -q "M^T  shape \[2, 3\], strides \[1, 2\], contiguous: no" "$tmp/views" &&
    grep -q "flatten reads offsets 0 2 4 1 3 5" "$tmp/views"; then
    echo "PASS 02_linear --explain-views"
else
    echo "FAIL 02_linear --explain-views: $(head -c 300 "$tmp/views")"
fi

# case_ ARGS...: all four variants must pass their check (tests/lib_gpu_case.sh); the epilogue
# variant may fall back to the view path where cuBLASLt has no algorithm, and the line says so
GPU_CASE_NOTE_IF="running the view path instead"
GPU_CASE_NOTE=", epilogue fell back to the view path"
case_() { gpu_case "02_linear $*" 4 "$bin" --variant all "$@"; }

# Without a usable GPU every case would be waived for the same reason: say it once.
"$bin" --no-trace --no-plot --no-check --steps 1 --out "$tmp/probe" >"$tmp/log" 2>&1
if [ $? -eq 2 ]; then
    echo "SKIP 02_linear GPU cases: $(grep -m1 waived "$tmp/log")"
    exit 0
fi

for dtype in bf16 fp16 fp32; do
    case_ --dtype "$dtype"
    case_ --dtype "$dtype" --batch 1
    for d in 1 3 33; do
        case_ --dtype "$dtype" --in_dim "$d"
        case_ --dtype "$dtype" --out_dim "$d"
    done
    case_ --dtype "$dtype" --batch 1 --in_dim 1 --out_dim 1
    case_ --dtype "$dtype" --batch 7 --in_dim 33 --out_dim 3
    case_ --dtype "$dtype" --batch 1000 --in_dim 100 --out_dim 257
    case_ --dtype "$dtype" --batch 8192 --in_dim 4096 --out_dim 4096
done

# One traced run: the trace pass counts the kernels inside a recorded step of each variant.
"$bin" --variant all --no-plot --out "$tmp/traced" >"$tmp/log" 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then
    echo "SKIP 02_linear kernels per step: $(grep -m1 waived "$tmp/log")"
elif [ "$rc" -ne 0 ]; then
    echo "FAIL 02_linear kernels per step: exit $rc"
elif grep -q "trace: CUPTI is in use" "$tmp/log"; then
    echo "SKIP 02_linear kernels per step: another tool owns CUPTI"
else
    counts=$(grep -E "^GPU operations in ProfileStep" "$tmp/log")
    # "K kernels, M memcpy, S memset (expected K)": the kernel counts must agree at this shape
    # (cuBLASLt may add a memset of its own workspace at large shapes, and split a GEMM into
    # several kernels at others; the default bf16 shape has neither)
    pairs=$(printf '%s\n' "$counts" | sed -nE 's/.*: ([0-9]+) kernels, [0-9]+ memcpy, [0-9]+ memset \(expected ([0-9]+)\).*/\1 \2/p')
    matched=$(printf '%s\n' "$pairs" | grep -c .)
    bad=$(printf '%s\n' "$pairs" | awk 'NF == 2 && $1 != $2' | wc -l)
    if [ "$matched" -eq 4 ] && [ "$bad" -eq 0 ]; then
        echo "PASS 02_linear kernels per step (each variant launches what it claims)"
    else
        echo "FAIL 02_linear kernels per step:"; printf '%s\n' "$counts" | sed 's/^/  /'
    fi
fi
