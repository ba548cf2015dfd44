#!/usr/bin/env bash
# GPU tests of 04_fused_mlp: every rung, every dtype, at shapes that leave tails everywhere (token
# counts, dim and hidden that are not multiples of any tile or vector width), and the decode
# shapes; each checked by the program itself against the CPU reference in double (outputs
# poisoned with NaN first; exit 1 on a failed check). A rung that cannot take a shape (epilogue:
# fp32 or dim not a multiple of 8; decode: fp32 or more than 16 tokens; both: a GPU older than
# sm_80; a GEMM version this GPU cannot run) says so in one line: a SKIP where this script said
# in advance that it would (refusal, GPU_CASE_UNAVAILABLE), a FAIL anywhere else, and a case
# expected to be refused that runs is a FAIL too.
# Without a usable GPU each case is reported as SKIP with the reason the program gave.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
. tests/lib_gpu_case.sh
stage=04_fused_mlp
[ -x "bin/$stage" ] || { echo "SKIP $stage: bin/$stage not built (make $stage)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# case_ ARGS...: one PASS/FAIL/SKIP line (tests/lib_gpu_case.sh)
case_() { gpu_case "$stage $*" 1 "bin/$stage" "$@"; }

# refusal VARIANT DTYPE SHAPE_FLAGS...: the piece of the line the rung must refuse this case
# with, from the rules above (the first that applies, in the order the program checks them), or
# nothing: the rung must take it. The GPU's compute capability comes from nvidia-smi.
refusal() {
    local variant=$1 dtype=$2 batch=64 seq=128 dim=768 cc
    shift 2
    while [ $# -gt 1 ]; do
        case $1 in --batch) batch=$2 ;; --seq) seq=$2 ;; --dim) dim=$2 ;; esac
        shift 2
    done
    cc=$(gpu_compute_capability)
    case $variant in
    epilogue)
        if [ "$dtype" = fp32 ]; then echo "fp32"
        elif [ $((dim % 8)) -ne 0 ]; then echo "dim must be a multiple of 8"
        elif [ -n "$cc" ] && [ "$cc" -lt 80 ]; then echo "sm_80 or newer GPU"
        fi ;;
    decode)
        if [ "$dtype" = fp32 ]; then echo "fp32"
        elif [ $((batch * seq)) -gt 16 ]; then echo "$((batch * seq)) tokens"
        elif [ -n "$cc" ] && [ "$cc" -lt 80 ]; then echo "sm_80 or newer GPU"
        fi ;;
    esac
}

# No usable GPU: one SKIP line with the program's reason, not one per case.
"bin/$stage" --variant eager --batch 1 --seq 1 --dim 8 --hidden 8 --wait 0 --warmup-steps 0 --steps 1 \
    --no-trace --no-plot --out "$tmp/out" >"$tmp/log" 2>&1
if [ $? -eq 2 ]; then
    waived_line "$stage (every case)" "$tmp/log"
    exit 0
fi

shapes=(
    "--batch 1 --seq 3 --dim 24 --hidden 40"
    "--batch 1 --seq 17 --dim 72 --hidden 130"
    "--batch 2 --seq 50 --dim 264 --hidden 257"
    "--batch 1 --seq 5 --dim 30 --hidden 50"
    "--batch 3 --seq 129 --dim 520 --hidden 1000"
    "--batch 1 --seq 1 --dim 768 --hidden 3072"
    "--batch 1 --seq 8 --dim 768 --hidden 3072"
    "--batch 1 --seq 16 --dim 64 --hidden 4096"
)
if quick; then
    # the shapes with tails in every dimension, and the decode shapes, bf16: one run of the whole
    # ladder each, in which every rung that takes the shape is checked (decode takes at most 16
    # tokens); test-full also runs each rung alone, at every shape and dtype
    ladder_case() {
        local rungs=$1
        shift
        gpu_case "$stage $* (the ladder, $rungs rungs)" "$rungs" "bin/$stage" "$@"
    }
    ladder_case 5 --batch 1 --seq 17 --dim 72 --hidden 130
    ladder_case 5 --batch 2 --seq 50 --dim 264 --hidden 257
    ladder_case 6 --batch 1 --seq 8 --dim 768 --hidden 3072
    ladder_case 6 --batch 1 --seq 16 --dim 64 --hidden 4096
else
    for dtype in $(test_dtypes); do
        for shape in "${shapes[@]}"; do
            for variant in eager fused_geglu merged epilogue graph decode; do
                # shellcheck disable=SC2086
                GPU_CASE_UNAVAILABLE=$(refusal "$variant" "$dtype" $shape) \
                    case_ --variant "$variant" --dtype "$dtype" $shape
            done
        done
        # the whole ladder in one run: the table, rungs skipped where they do not apply
        case_ --dtype "$dtype" --batch 2 --seq 50 --dim 264 --hidden 257
    done
fi
# the article's shape and the LLaMA-7B-sized one, bf16, whole ladder (checked on sampled rows)
case_ --batch 64 --seq 128 --dim 768 --hidden 3072
quick || case_ --batch 64 --seq 512 --dim 4096 --hidden 11008

# --graph-of: each rung named, and fastest (the graph rung prints how it chose)
rungs="eager fused_geglu merged epilogue fastest"
quick && rungs="merged fastest"
for rung in $rungs; do
    case_ --variant graph --graph-of "$rung" --batch 2 --seq 50 --dim 264 --hidden 257
done
GPU_CASE_NOTE=", chose by alternating rounds" GPU_CASE_NOTE_IF="alternating rounds" \
    case_ --variant graph --batch 1 --seq 8 --dim 768 --hidden 3072

# --gemm N: every version, through the epilogue rung; one this GPU cannot run (sm_90a code runs
# on compute capability 9.0 only, bin/tests/gpu_04_gemm_geglu --needs) must be refused, the
# others must pass; --gemm all: one table, one row per version plus cuBLAS, each version's rung
# checked, written to gemm_versions_*.csv (quick: --gemm all below checks every version's rung once)
if ! quick; then
    if ! needs=$(bin/tests/gpu_04_gemm_geglu --needs) || [ -z "$needs" ]; then
        echo "FAIL $stage --gemm N: bin/tests/gpu_04_gemm_geglu --needs listed no versions"
    fi
    cc=$(gpu_compute_capability)
    while read -r version need; do
        [ -n "$version" ] || continue
        expected=""
        if [ -n "$cc" ] && { [ "$cc" -lt "$need" ] || { [ "$need" -ge 90 ] && [ "$cc" -ne "$need" ]; }; }; then
            expected="cannot run on this GPU"
        fi
        GPU_CASE_UNAVAILABLE=$expected \
            case_ --variant epilogue --gemm "$version" --batch 3 --seq 129 --dim 520 --hidden 1000 </dev/null
    done <<<"$needs"
fi
"bin/$stage" --variant epilogue --gemm all --batch 2 --seq 300 --dim 264 --hidden 520 --wait 0 --warmup-steps 0 \
    --steps 2 --no-trace --no-plot --out "$tmp/gemm" >"$tmp/log" 2>&1
rc=$?
csv=$tmp/gemm/gemm_versions_2x300_264x520_bf16.csv
if [ "$rc" -eq 2 ]; then
    waived_line "$stage --gemm all" "$tmp/log"
elif [ "$rc" -ne 0 ] || grep -q "FAIL" "$tmp/log" || ! grep -q "^0 *cublasLt" "$tmp/log" ||
     [ "$(wc -l <"$csv" 2>/dev/null || echo 0)" -lt 7 ]; then
    echo "FAIL $stage --gemm all: exit $rc"; grep -hE "FAIL|error|cannot" "$tmp/log" | head -5 | sed 's/^/  /'
else
    echo "PASS $stage --gemm all ($(grep -cE "^[1-9][0-9]* .* PASS " "$tmp/log") versions checked, $(grep -c "cannot run here" "$tmp/log") cannot run here)"
fi

# --sweep at small widths: every rung over 1..32768 tokens, each checked; the winners listed
quick && exit 0
"bin/$stage" --sweep --dim 264 --hidden 257 --no-plot --out "$tmp/out" >"$tmp/log" 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then
    waived_line "$stage --sweep" "$tmp/log"
elif [ "$rc" -ne 0 ] || ! grep -q "fastest variant by tokens" "$tmp/log" ||
     [ "$(wc -l <"$tmp/out/sweep_264x257_bf16.csv" 2>/dev/null || echo 0)" -ne 17 ]; then
    echo "FAIL $stage --sweep: exit $rc"; grep -hE "check|error" "$tmp/log" | head -5 | sed 's/^/  /'
else
    echo "PASS $stage --sweep (16 token counts, winners reported)"
fi
