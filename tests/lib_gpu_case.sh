# shellcheck shell=bash
# lib_gpu_case.sh: sourced by the tests/gpu_*.sh scripts (not a test itself).
#
# gpu_case LABEL MIN_CHECKS PROGRAM ARGS...
#   runs PROGRAM ARGS with a two-step schedule, no trace and no plot, writing into $tmp, and
#   prints one line:
#     SKIP  no usable GPU (exit 2), or the program said this shape is not available here
#     FAIL  any other non-zero exit, a failed check, or fewer than MIN_CHECKS passing checks
#     PASS  with the number of passing checks, plus $GPU_CASE_NOTE when the output contains
#           $GPU_CASE_NOTE_IF (e.g. a documented fallback the reader should know was taken)
# Every check is the program's own: its output against the CPU reference in double, outputs
# poisoned with NaN first, exit 1 on a failed check.
# quick: true under `make test` (TEST_LEVEL=quick), where each script runs one dtype and the
# shapes that find real bugs; `make test-full` runs every dtype, the big shapes and the sweeps.
quick() { [ "${TEST_LEVEL:-full}" = quick ]; }
# The dtypes a script loops over: bf16 alone when quick.
test_dtypes() { if quick; then echo bf16; else echo bf16 fp16 fp32; fi; }

# shellcheck disable=SC2154 # $tmp, the caller's scratch directory, is set by the sourcing script
gpu_case() {
    local label=$1 min=$2 program=$3
    shift 3
    "$program" "$@" --wait 0 --warmup-steps 0 --steps 2 --no-trace --no-plot --out "$tmp/out" \
        >"$tmp/log" 2>"$tmp/err"
    local rc=$? checks note=""
    checks=$(grep -c 'check: .*PASS' "$tmp/log")
    if [ "$rc" -eq 2 ]; then
        echo "SKIP $label: $(grep -m1 waived "$tmp/log")"
    elif [ "$rc" -eq 1 ] && grep -q "is not available here" "$tmp/err"; then
        echo "SKIP $label: $(head -1 "$tmp/err")"
    elif [ "$rc" -ne 0 ]; then
        echo "FAIL $label: exit $rc"
        grep -hE "check|error" "$tmp/log" "$tmp/err" | head -5 | sed 's/^/  /'
    elif grep -q 'check: .*FAIL' "$tmp/log"; then
        echo "FAIL $label: a check failed"
        grep 'check: .*FAIL' "$tmp/log" | head -3 | sed 's/^/  /'
    elif [ "$checks" -lt "$min" ]; then
        echo "FAIL $label: $checks passing checks, expected $min"
    else
        [ -n "${GPU_CASE_NOTE_IF:-}" ] && grep -q -- "$GPU_CASE_NOTE_IF" "$tmp/log" "$tmp/err" && note=$GPU_CASE_NOTE
        echo "PASS $label ($checks checks$note)"
    fi
}
