# shellcheck shell=bash
# lib_gpu_case.sh: sourced by the tests/gpu_*.sh scripts (not a test itself).
#
# gpu_case LABEL MIN_CHECKS PROGRAM ARGS...
#   runs PROGRAM ARGS with a two-step schedule, no trace and no plot, writing into $tmp, and
#   prints one line:
#     SKIP  the program was waived (exit 2) and no GPU is here (waived_line); or it said this
#           case "is not available here" (exit 1) for the reason the caller expected, given in
#           advance as GPU_CASE_UNAVAILABLE (a piece of the program's line, e.g. "fp32")
#     FAIL  any other non-zero exit (a waiver where nvidia-smi lists a GPU, a refusal nobody
#           expected or for another reason), a case expected to be refused that ran, a failed
#           check, or fewer than MIN_CHECKS passing checks
#     PASS  with the number of passing checks, plus $GPU_CASE_NOTE when the output contains
#           $GPU_CASE_NOTE_IF (e.g. a documented fallback the reader should know was taken)
# Every check is the program's own: its output against the CPU reference in double, outputs
# poisoned with NaN first, exit 1 on a failed check.
#
# waived_line LABEL LOG
#   the line for a program that exited 2 (waived), its output in LOG: SKIP with the program's
#   waiver line only where no GPU is here (gpu_listed), else FAIL: a waiver on a machine with a
#   GPU is a failure to run, not a reason to skip.
# gpu_listed: true when nvidia-smi lists a GPU (nvidia-smi -L prints "GPU 0: ..."); asked once.
# gpu_compute_capability: this GPU's compute capability as 10 * major + minor (90 for 9.0), from
#   nvidia-smi; empty when there is none or nvidia-smi cannot say.
gpu_listed() {
    if [ -z "${gpu_listed_answer:-}" ]; then
        gpu_listed_answer=no
        if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'; then
            gpu_listed_answer=yes
        fi
    fi
    [ "$gpu_listed_answer" = yes ]
}
gpu_compute_capability() {
    gpu_listed || return 0
    nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .'
}
waived_line() {
    local label=$1 log=$2 line
    line=$(grep -m1 waived "$log")
    if gpu_listed; then
        echo "FAIL $label: exit 2 (waived) where nvidia-smi lists a GPU: ${line:-no waiver line}"
    elif [ -z "$line" ]; then
        echo "FAIL $label: exit 2 without a 'waived' line"
    else
        echo "SKIP $label: $line"
    fi
}
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
    local expected=${GPU_CASE_UNAVAILABLE:-}
    if [ "$rc" -eq 2 ]; then
        waived_line "$label" "$tmp/log"
    elif [ "$rc" -eq 1 ] && grep -q "is not available here" "$tmp/err"; then
        if [ -z "$expected" ]; then
            echo "FAIL $label: refused, and nothing said it would be: $(head -1 "$tmp/err")"
        elif grep -qF -- "$expected" "$tmp/err"; then
            echo "SKIP $label: $(head -1 "$tmp/err") (expected: $expected)"
        else
            echo "FAIL $label: refused for another reason than the expected '$expected': $(head -1 "$tmp/err")"
        fi
    elif [ -n "$expected" ]; then
        echo "FAIL $label: expected to be refused ('$expected'), it exited $rc instead"
        grep -hE "check|error" "$tmp/log" "$tmp/err" | head -3 | sed 's/^/  /'
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
