#!/usr/bin/env bash
# GPU tests: every stage, every variant and dtype, at awkward sizes, checked by the stage itself
# against the CPU reference in double (outputs poisoned with NaN first; exit 1 on a failed check).
# make test (quick) runs bf16; make test-full adds fp16 and fp32 (tests/lib_gpu_case.sh).
# Without a usable GPU each case is reported as SKIP with the reason the stage gave.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
. tests/lib_gpu_case.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# case_ STAGE ARGS...: one PASS/FAIL/SKIP line (tests/lib_gpu_case.sh)
case_() {
    local stage=$1
    shift
    [ -x "bin/$stage" ] || return 0
    gpu_case "$stage $*" 1 "bin/$stage" "$@"
}

for dtype in $(test_dtypes); do
    for size in 1 3 63 100 257 1024; do
        case_ 01_matmul_add --variant all --dtype "$dtype" --size "$size"
    done
    case_ 01_matmul_add --variant all --dtype "$dtype" --size 63 --batched 3
done
case_ 01_matmul_add --variant all --size 4096

# The trace pass on the GPU: each variant's trace holds, in every active step, exactly the
# kernels the stage says it launches; every kernel has a flow from its launch; ranges nest;
# no event ends before it starts (tests/check_trace_json.py checks all of it).
trace_case() {
    local variant=$1 kernels=$2
    [ -x bin/01_matmul_add ] || return 0
    local label="01_matmul_add trace --variant $variant"
    bin/01_matmul_add --variant "$variant" --size 64 --no-plot --out "$tmp/trace" >"$tmp/log" 2>&1
    local rc=$?
    if [ "$rc" -eq 2 ]; then
        waived_line "$label" "$tmp/log"
    elif [ "$rc" -ne 0 ] || [ ! -f "$tmp/trace/64_bf16_cold_$variant.json" ]; then
        echo "FAIL $label: exit $rc, no trace"; tail -3 "$tmp/log" | sed 's/^/  /'
    elif python3 tests/check_trace_json.py --layered --lanes-nest --step-prefix ProfilerStep# --expect-kernels-per-step "$kernels" \
            --require-categories user_annotation,gpu_user_annotation,cpu_op,kernel,cuda_runtime,ac2g,Trace "$tmp/trace/64_bf16_cold_$variant.json" >"$tmp/check" 2>&1; then
        echo "PASS $label ($kernels kernels per step)"
    else
        echo "FAIL $label:"; head -5 "$tmp/check" | sed 's/^/  /'
    fi
}
trace_case eager 2
trace_case addmm 1
trace_case fused 1

# PROF_TRACE_PASS in the environment does not make a run its own trace pass: the run times its
# steps and reports them, then writes its trace from a trace pass of its own.
if [ -x bin/01_matmul_add ]; then
    PROF_TRACE_PASS=1 bin/01_matmul_add --no-plot --no-check --out "$tmp/env" >"$tmp/log" 2>&1
    rc=$?
    if [ "$rc" -eq 2 ]; then
        waived_line "01_matmul_add PROF_TRACE_PASS=1" "$tmp/log"
    elif [ "$rc" -eq 0 ] && grep -q "^== 64_bf16_cold_eager" "$tmp/log" && [ -f "$tmp/env/64_bf16_cold_eager.json" ]; then
        echo "PASS 01_matmul_add PROF_TRACE_PASS=1: an ordinary run, report and trace"
    else
        echo "FAIL 01_matmul_add PROF_TRACE_PASS=1: exit $rc: $(head -3 "$tmp/log")"
    fi
fi

# Shapes that cannot fit in device memory are refused before anything is allocated, with the
# bytes needed and free (exit 1, one line).
if [ -x bin/01_matmul_add ]; then
    bin/01_matmul_add --size 32768 --batched 4096 --no-trace --no-plot --out "$tmp/big" >"$tmp/log" 2>&1
    rc=$?
    if [ "$rc" -eq 2 ]; then
        waived_line "01_matmul_add too-big" "$tmp/log"
    elif [ "$rc" -eq 1 ] && grep -q "GB of device memory" "$tmp/log" && [ "$(grep -c "error:" "$tmp/log")" -eq 1 ]; then
        echo "PASS 01_matmul_add too-big: $(grep -m1 'device memory' "$tmp/log")"
    else
        echo "FAIL 01_matmul_add too-big: exit $rc: $(head -3 "$tmp/log")"
    fi
fi
