#!/usr/bin/env bash
# make sanitize: every stage and variant, and the GPU tests, under compute-sanitizer's memcheck,
# racecheck, initcheck and synccheck, at small and tail-heavy shapes (every dimension off the
# tile sizes). One PASS/FAIL line per run with its time, then "N passed, N failed". Needs a GPU.
# The tools run one after the other: four sanitized processes side by side once made the
# sanitizer itself run out of memory ("Internal Sanitizer Error ... Unable to allocate").
# Under a tool our own CUPTI trace turns itself off (the tool owns CUPTI), and the stages cut
# their timing loops to one call and do not gate their steps; both say so.
# 02's variants are cases of their own, so that a slow one (racecheck spends minutes in cuBLAS's
# kernels) is named and the others still report. Likewise each version of 04's GEMM with the
# GeGLU epilogue (gpu_04_gemm_geglu --version N --small: its tail-heavy shapes, not the article's).
# A subset: SANITIZE_TOOLS="racecheck initcheck" (default all four), SANITIZE_ONLY=REGEX (cases
# whose label matches, e.g. "^04|gpu_04"). SANITIZE_LOGS=DIR keeps every run's whole output.
# SANITIZE_CASE_LIMIT=SECONDS stops a run that takes longer and reports it INCOMPLETE: racecheck
# of a stage that calls cuBLAS can take minutes per case, and a bounded run should say which
# cases it did not finish rather than end without a word. An incomplete run fails the target.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib_gpu_case.sh # gpu_listed
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PATH=$PATH:${CUDA_HOME:-/usr/local/cuda}/bin
if ! command -v compute-sanitizer >/dev/null; then
    echo "SKIP sanitize: compute-sanitizer not found (it comes with the CUDA toolkit)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi

check() {  # check TOOL LABEL COMMAND...: one PASS/FAIL/SKIP line
    local tool=$1 label=$2; shift 2
    [[ $label =~ ${SANITIZE_ONLY:-.} ]] || return 0
    local log="$tmp/$tool.log" t0=$SECONDS
    local limit=()
    [ -n "${SANITIZE_CASE_LIMIT:-}" ] && limit=(timeout --kill-after=10 "$SANITIZE_CASE_LIMIT")
    "${limit[@]}" compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 5 "$@" >"$log" 2>&1
    local rc=$? dt=$((SECONDS - t0))
    if [ ${#limit[@]} -gt 0 ] && { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; }; then
        echo "INCOMPLETE $tool $label: no result in ${SANITIZE_CASE_LIMIT} s"
    elif [ "$rc" -eq 2 ] && grep -q waived "$log" && ! gpu_listed; then
        echo "SKIP $tool $label: no GPU ($(grep -m1 waived "$log"))"
    elif [ "$rc" -eq 0 ]; then
        echo "PASS $tool $label (${dt} s)"
    else
        echo "FAIL $tool $label (exit $rc, ${dt} s)"
        # the tool's findings, then the program's own last words (an error of its own, not the tool's)
        grep "^========= [^ ]" "$log" | grep -v "COMPUTE-SANITIZER" | head -n 5 | sed 's/^/  /'
        grep -v "^=========" "$log" | tail -n 3 | sed 's/^/  program: /'
    fi
    [ -n "${SANITIZE_LOGS:-}" ] && mkdir -p "$SANITIZE_LOGS" && cp "$log" "$SANITIZE_LOGS/$tool-${label//[^A-Za-z0-9_.-]/_}.log"
    return 0
}

one_tool() {  # every case under one tool
    local tool=$1
    local small=(--wait 0 --warmup-steps 0 --steps 1 --no-plot --no-trace --out "$tmp/out-$1")
    [ -x bin/01_matmul_add ] && check "$tool" "01 size 67 batched 2" bin/01_matmul_add --variant all --size 67 --batched 2 "${small[@]}"
    if [ -x bin/02_linear ]; then
        for v in epilogue view addmm transpose_copy; do  # one case per variant: each is a run of its own
            check "$tool" "02 $v 33x35->17" bin/02_linear --variant "$v" --batch 33 --in_dim 35 --out_dim 17 "${small[@]}"
        done
    fi
    [ -x bin/03_simple_mlp ] && check "$tool" "03 2x65 72->130" bin/03_simple_mlp --batch 2 --seq 65 --dim 72 --hidden 130 "${small[@]}"
    [ -x bin/04_fused_mlp ] && check "$tool" "04 ladder 2x65 72->130" bin/04_fused_mlp --batch 2 --seq 65 --dim 72 --hidden 130 "${small[@]}"
    [ -x bin/04_fused_mlp ] && check "$tool" "04 decode 1x3 72->130" bin/04_fused_mlp --variant decode --batch 1 --seq 3 --dim 72 --hidden 130 "${small[@]}"
    for t in bin/tests/gpu_*; do
        [ "$t" = bin/tests/gpu_04_gemm_geglu ] && continue  # below, one case per version
        [ -x "$t" ] && check "$tool" "$(basename "$t")" "$t"
    done
    if [ -x bin/tests/gpu_04_gemm_geglu ]; then  # every version of the GEMM on its tail-heavy small shapes
        for v in $(bin/tests/gpu_04_gemm_geglu --versions); do
            check "$tool" "gpu_04_gemm_geglu version $v" bin/tests/gpu_04_gemm_geglu --version "$v" --small
        done
    fi
}

touch "$tmp/results"
for tool in ${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}; do
    one_tool "$tool" | tee -a "$tmp/results"
done
pass=$(grep -c "^PASS" "$tmp/results")
fail=$(grep -c "^FAIL" "$tmp/results")
incomplete=$(grep -c "^INCOMPLETE" "$tmp/results")
if [ "$incomplete" -gt 0 ]; then
    echo "$pass passed, $fail failed, $incomplete incomplete"
else
    echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ] && [ "$incomplete" -eq 0 ]
