#!/usr/bin/env bash
# Reruns everything the docs quote, on the GPU at hand, in one go:
#   bench/run_all.sh [OUTDIR]          (default: results/)
#   bench/figures.sh OUTDIR            then draws the docs' figures from it (needs gnuplot)
# The ceilings, each stage's runs, sweeps and traces, PyTorch side by side, Nsight Compute on the
# GEMMs the chapters read counters of, then the GPU tests and the sanitizer runs.
# Everything lands in OUTDIR: a log per part, the traces/ tree, env.txt naming the GPU, driver,
# CUDA and date.
# Expects the programs built (make all && make bin/tests/...: `make test` builds them).
set -u
here=$(readlink -f -- "$0") && cd "${here%/*}/.." || exit 1
prog=run_all usage="bench/run_all.sh [OUTDIR]"
# shellcheck source=tools/lib_args.sh
. tools/lib_args.sh
# The command line and the environment, before anything is made: one line and exit 1 if bad.
help_or_flags "$@"
[ -z "$help_asked" ] || set --
no_flags "$@"
[ $# -le 1 ] || die "unexpected argument '$2' (usage: $usage)"
out=${1:-results}
out_dir OUTDIR "$out"
# RUN_ONLY: some parts, e.g. "tests 01" (ceilings 01 02 03 04 sweeps compare ncu tests sanitize;
# "grid" the shape grid, which "all" leaves out)
only=${RUN_ONLY:-all}
words RUN_ONLY "$only" all ceilings 01 02 03 04 sweeps compare ncu tests sanitize grid
for v in LIMIT TESTS_LIMIT SANITIZE_LIMIT GRID_BUDGET; do
    [ -z "${!v:-}" ] || whole "$v" "${!v}" 1 10000000
done
help_done
mkdir -p "$out" || exit 1
export PATH=$PATH:/usr/local/cuda/bin

want() { [ "$only" = all ] || [[ " $only " == *" $1 "* ]]; }
# PyTorch side by side (needs torch): compare/run_compare.sh, each into its own log.
compare_part() {
    local name=$1; shift
    part "compare_$name" timeout "${LIMIT:-120}" compare/run_compare.sh "$@"
}
part() {  # part NAME COMMAND...: runs, logs to OUTDIR/NAME.log, keeps going on failure
    local name=$1; shift
    echo "== $name: $*" | tee -a "$out/$name.log"
    local t0=$SECONDS
    "$@" >>"$out/$name.log" 2>&1
    local rc=$?
    echo "   exit $rc after $((SECONDS - t0)) s" | tee -a "$out/$name.log"
    return 0
}

{
    date -u +"date: %Y-%m-%d %H:%M UTC"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
    nvidia-smi | grep -o "CUDA Version: [0-9.]*" | sed 's/^/driver /'
    nvcc --version 2>/dev/null | grep release | sed 's/^/toolkit: /'
} >"$out/env.txt"
cat "$out/env.txt"

want ceilings && part ceilings bin/ceilings

o=$out/traces
# Each part has a time limit (LIMIT seconds, default 120) so one slow part cannot eat the rest.
lim=${LIMIT:-120}
if want 01 && [ -x bin/01_matmul_add ]; then
    s=(timeout "$lim" bin/01_matmul_add) d=$o/01_matmul_add
    part 01 "${s[@]}" --out "$d" --variant all                     # size 64: overhead-bound, traces
    part 01 "${s[@]}" --out "$d" --size 4096 --variant all         # compute-bound; fused vs addmm vs eager
    part 01 "${s[@]}" --out "$d" --warmup 5 --no-trace             # a warm first step
    part 01 "${s[@]}" --out "$d" --size 4096 --steps 30 --no-trace # the same kernel over 30 steps
    part 01 "${s[@]}" --out "$d" --batched 8 --no-trace            # the bmm detour
    part 01 "${s[@]}" --wait 0 --warmup-steps 0 --active 3 --out "$d/cold_step"   # step 0 inside the trace
    part 01 "${s[@]}" --wait 0 --warmup-steps 0 --active 20 --out "$d/buffers"    # CUPTI's buffers, the lane offset
    part 01 "${s[@]}" --batched 8 --out "$d/bmm"                                  # the bmm detour, traced
    want sweeps && part 01 "${s[@]}" --out "$d" --sweep --variant eager
    want sweeps && part 01 "${s[@]}" --out "$d" --sweep --variant fused
fi
if want 02 && [ -x bin/02_linear ]; then
    s=(timeout "$lim" bin/02_linear --out "$o/02_linear")
    part 02 "${s[@]}" --variant all
    part 02 "${s[@]}" --batch 8192 --in_dim 4096 --out_dim 4096 --variant all --steps 20 --no-trace
    want sweeps && part 02 "${s[@]}" --sweep --variant epilogue
fi
if want 03 && [ -x bin/03_simple_mlp ]; then
    s=(timeout "$lim" bin/03_simple_mlp) d=$o/03_simple_mlp
    part 03 "${s[@]}" --out "$d"
    part 03 "${s[@]}" --out "$d" --batch 1 --seq 8 --steps 30
    part 03 "${s[@]}" --wait 0 --warmup-steps 0 --active 3 --out "$d/cold_step"   # step 0 inside the trace
    want sweeps && part 03 "${s[@]}" --out "$d" --sweep
fi
if want 04 && [ -x bin/04_fused_mlp ]; then
    s=(timeout "$lim" bin/04_fused_mlp --out "$o/04_fused_mlp")
    part 04 "${s[@]}" --steps 20
    part 04 "${s[@]}" --batch 1 --seq 8 --steps 20
    part 04 "${s[@]}" --batch 64 --seq 512 --dim 4096 --hidden 11008 --steps 5 --no-trace
    part 04 "${s[@]}" --variant epilogue --gemm all --no-trace                                # every GEMM version
    part 04 "${s[@]}" --variant epilogue --gemm all --no-trace --batch 64 --seq 512 --dim 4096 --hidden 11008
    part 04 "${s[@]}" --variant epilogue --no-trace --batch 64 --seq 512 --dim 4096 --hidden 11008 --hold 20  # clocks
    want sweeps && part 04 "${s[@]}" --sweep --no-trace
fi
if want 04 && [ -x bin/decode_timeline ]; then  # the decode rung, block by block
    for t in 8 1 16; do
        part decode_timeline timeout "$lim" bin/decode_timeline --tokens "$t" --csv "$out/decode_timeline_${t}tokens.csv"
    done
    part decode_timeline timeout "$lim" bin/decode_timeline --tokens 8 --cold-l2  # weights from HBM, as in a model
    part decode_timeline_4096x11008 timeout "$lim" bin/decode_timeline --tokens 8 --dim 4096 --hidden 11008  # 07's waves
fi
# The tests and the sanitizers take minutes, not seconds: limits of their own.
if want tests; then  # the README's test command, timed
    part tests timeout "${TESTS_LIMIT:-900}" make --no-print-directory test
    tail -2 "$out/tests.log"
fi
if want compare; then
    compare_part 01_64 01_matmul_add --size 64 --variant all --out "$o/01_matmul_add/compare"
    compare_part 01_4096 01_matmul_add --size 4096 --variant all --out "$o/01_matmul_add/compare"
    compare_part 02 02_linear --variant epilogue --out "$o/02_linear/compare"
    compare_part 04_article 04_fused_mlp --out "$o/04_fused_mlp/compare"
    compare_part 03_decode 03_simple_mlp --batch 1 --seq 8 --steps 3 --out "$o/03_simple_mlp/compare_decode"
    compare_part 04_decode 04_fused_mlp --batch 1 --seq 8 --variant all --steps 10 --out "$o/04_fused_mlp/compare_decode"
    compare_part shapes shapes
fi
# Nsight Compute, one call of each GEMM with every section (--set full) at the clocks the GPU
# sets (--clock-control none), into ncu.log: version 1 at the article's shape, then cuBLAS and
# versions 5 to 8 at 2048 x 4096 -> 2 x 14336, where held back to back ours trail cuBLAS.
ncu_part() {  # ncu_part KERNEL_REGEX STAGE_FLAGS...
    local kernel=$1; shift
    part ncu timeout "$lim" ncu --clock-control none --set full -k "regex:$kernel" -c 1 bin/04_fused_mlp "$@" \
        --no-trace --no-plot --no-check --wait 0 --warmup-steps 0 --active 1
}
if want ncu && [ -x bin/04_fused_mlp ]; then
    if command -v ncu >/dev/null; then
        ncu_part gemm_geglu_ --variant epilogue --gemm 1
        big=(--batch 2048 --seq 1 --dim 4096 --hidden 14336)
        ncu_part nvjet --variant merged "${big[@]}"
        for v in 5 6 7 8 9; do ncu_part gemm_geglu_ --variant epilogue --gemm "$v" "${big[@]}"; done
    else
        echo "ncu: not found on PATH, skipped" | tee -a "$out/ncu.log"
    fi
fi
# The shape grid (./run 04_fused_mlp --shapes): about 40 minutes on an H200 with PyTorch, so only
# when asked (RUN_ONLY="grid"); it resumes from OUTDIR/shape_grid, GRID_BUDGET seconds at a time.
if [[ " $only " == *" grid "* ]]; then
    part grid python3 bench/shape_grid.py --out "$out/shape_grid" ${GRID_BUDGET:+--budget-s "$GRID_BUDGET"}
fi
if want sanitize; then
    part sanitize timeout "${SANITIZE_LIMIT:-1800}" tests/sanitize.sh
    tail -1 "$out/sanitize.log"
fi
echo "done: $out"
