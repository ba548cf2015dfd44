#!/usr/bin/env bash
# GPU tests of 02_linear: every variant and dtype, checked by the stage itself against the CPU
# reference in double (outputs poisoned with NaN first; exit 1 on a failed check), at the sizes
# that break careless code: in_dim or out_dim of 1, 3, 33, batch 1, shapes whose leading
# dimensions miss cuBLASLt's alignment (the epilogue variant must fall back, not be wrong), the
# article's shape, and 8192 x 4096 -> 4096 (sampled rows). Then one traced run: each variant
# must launch exactly the kernels it claims; then --sweep and --dump. Without a usable GPU each case is a SKIP.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
. tests/lib_gpu_case.sh
bin=bin/02_linear
[ -x "$bin" ] || exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --explain-views needs no GPU: the 3x2 example, M^T's strides and its flatten order.
if "$bin" --explain-views >"$tmp/views" 2>&1 && grep -q "M^T  shape \[2, 3\], strides \[1, 2\], contiguous: no" "$tmp/views" &&
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
    waived_line "02_linear GPU cases" "$tmp/log"
    exit 0
fi

for dtype in $(test_dtypes); do
    case_ --dtype "$dtype"
    case_ --dtype "$dtype" --batch 1
    for d in 1 3 33; do
        case_ --dtype "$dtype" --in_dim "$d"
        case_ --dtype "$dtype" --out_dim "$d"
    done
    case_ --dtype "$dtype" --batch 1 --in_dim 1 --out_dim 1
    case_ --dtype "$dtype" --batch 7 --in_dim 33 --out_dim 3
    case_ --dtype "$dtype" --batch 1000 --in_dim 100 --out_dim 257
    quick || case_ --dtype "$dtype" --batch 8192 --in_dim 4096 --out_dim 4096
done

# One traced run of all four: each variant's timeline holds, in every active step, exactly the
# kernels the variant says it launches (at the default bf16 shape cuBLAS neither splits a GEMM
# nor falls back), with a flow from each launch (tests/check_trace_json.py).
"$bin" --variant all --no-plot --out "$tmp/traced" >"$tmp/log" 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then
    waived_line "02_linear kernels per step" "$tmp/log"
elif [ "$rc" -ne 0 ]; then
    echo "FAIL 02_linear kernels per step: exit $rc"; tail -3 "$tmp/log" | sed 's/^/  /'
elif grep -q "trace: CUPTI is in use" "$tmp/log"; then
    echo "SKIP 02_linear kernels per step: another tool owns CUPTI"
else
    for pair in epilogue:1 view:2 addmm:2 transpose_copy:3; do
        v=${pair%:*} kernels=${pair#*:} json="$tmp/traced/1024x32x64_bf16_cold_${pair%:*}.json"
        label="02_linear trace --variant $v"
        if [ ! -f "$json" ]; then
            echo "FAIL $label: no $json"
        elif python3 tests/check_trace_json.py --layered --lanes-nest --step-prefix ProfilerStep# --expect-kernels-per-step "$kernels" \
                --require-categories user_annotation,gpu_user_annotation,cpu_op,kernel,cuda_runtime,ac2g,Trace "$json" >"$tmp/check" 2>&1; then
            echo "PASS $label ($kernels kernels per step)"
        else
            echo "FAIL $label:"; head -5 "$tmp/check" | sed 's/^/  /'
        fi
    done
    if [ -f "$tmp/traced/comparison_1024x32x64_bf16_cold.csv" ] && grep -q "^gemm alone (GemmEx)," "$tmp/traced/comparison_1024x32x64_bf16_cold.csv"; then
        echo "PASS 02_linear comparison CSV (four variants and the bare GEMM rows)"
    else
        echo "FAIL 02_linear comparison CSV: $(find "$tmp/traced" -mindepth 1 -printf '%f ')"
    fi
fi

# --sweep: every batch 1..65536 checked (exit 1 on a failed check), its CSV and the batch column.
"$bin" --sweep --variant epilogue --steps 2 --no-plot --out "$tmp/sweep" >"$tmp/log" 2>&1
rc=$?
csv="$tmp/sweep/sweep_32x64_bf16_epilogue.csv"
if [ "$rc" -eq 2 ]; then
    waived_line "02_linear --sweep" "$tmp/log"
elif [ "$rc" -eq 0 ] && [ -f "$csv" ] && head -1 "$csv" | grep -q "^batch," && [ "$(wc -l <"$csv")" -eq 18 ]; then
    echo "PASS 02_linear --sweep (17 batch sizes)"
else
    echo "FAIL 02_linear --sweep: exit $rc"; tail -3 "$tmp/log" | sed 's/^/  /'
fi

# --dump: x, w, b and y_<variant> as .npy, the names compare/linear.py --load expects.
"$bin" --variant view --batch 3 --in_dim 5 --out_dim 7 --steps 1 --no-trace --no-plot --out "$tmp/d" \
    --dump "$tmp/d/dump" >"$tmp/log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ -f "$tmp/d/dump/x.npy" ] && [ -f "$tmp/d/dump/w.npy" ] && [ -f "$tmp/d/dump/b.npy" ] &&
    [ -f "$tmp/d/dump/y_view.npy" ]; then
    echo "PASS 02_linear --dump"
else
    echo "FAIL 02_linear --dump: exit $rc, $(find "$tmp/d/dump" -mindepth 1 -printf '%f ' 2>&1)"
fi
