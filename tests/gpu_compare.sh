#!/usr/bin/env bash
# GPU tests of the side-by-side comparison (compare/run_compare.sh): each built stage and PyTorch
# on the same dumped tensors must agree within the dtype's tolerance, and the side-by-side table
# must list kernels for both; where PyTorch runs its graph variant (--torch-variant graph, or all,
# the default), the graph's replayed output must agree with PyTorch eager's and the table must
# list the graph run's kernels. SKIP with the reason when there is no GPU, no PyTorch, or a stage
# without --dump; a waiver where nvidia-smi lists a GPU, or PyTorch imports, is a FAIL.
# The cases run COMPARE_JOBS at a time (3 by default): each starts PyTorch twice (a timed pass
# and a profiled one), tens of seconds that are mostly CPU; what is checked here is agreement,
# not timing. A case's line is printed when it ends.
# COMPARE_LOGS=DIR keeps each case's whole output (both tables, the side-by-side) as DIR/N.log.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
. tests/lib_gpu_case.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jobs_max=${COMPARE_JOBS:-3}

# compare_waived LABEL LOG: run_compare.sh exited 2: SKIP only for a cause this machine shows, no
# GPU (waived_line, tests/lib_gpu_case.sh) or no python3 that imports PyTorch and NumPy; else FAIL.
compare_waived() {
    local label=$1 log=$2
    if grep -qE "^compare: (PyTorch|python3) is required" "$log" && ! python3 -c 'import torch, numpy' 2>/dev/null; then
        echo "SKIP $label: $(grep -m1 -E "^compare: (PyTorch|python3) is required" "$log")"
    elif grep -qE "^compare: (PyTorch|python3) is required" "$log"; then
        echo "FAIL $label: exit 2, $(grep -m1 -E "is required" "$log"), but python3 imports torch and numpy here"
    else
        waived_line "$label" "$log"
    fi
}

one_case() {  # one_case ID STAGE ARGS...: one PASS/FAIL/SKIP line
    local id=$1 stage=$2; shift 2
    local label="compare $stage $*" log="$tmp/$id.log" line graph=1
    case " $* " in *" --torch-variant eager "* | *" --torch-variant compile "*) graph="" ;; esac
    compare/run_compare.sh "$stage" "$@" --steps 3 --no-plot --out "$tmp/$id" >"$log" 2>&1
    local rc=$?
    if [ "$rc" -eq 2 ]; then
        line=$(compare_waived "$label" "$log")
    elif [ "$rc" -ne 0 ]; then
        line="FAIL $label: exit $rc"$'\n'"$(grep -E "compare|error|FAIL" "$log" | head -5 | sed 's/^/  /')"
    elif ! grep -q "^compare: .*PASS" "$log" || grep -q "^compare: .*FAIL" "$log"; then
        line="FAIL $label: no passing comparison of outputs"
    elif ! grep -qE "^torch .* [0-9]+(-[0-9]+)? kernels" "$log"; then
        line="FAIL $label: the side-by-side table lists no PyTorch kernels"
    elif [ -n "$graph" ] && ! grep -q "^compare: PyTorch graph (replayed) vs PyTorch eager.*PASS" "$log"; then
        line="FAIL $label: no passing check of PyTorch's graph replay against its eager forward"
    elif [ -n "$graph" ] && ! grep -qE "^torch +[^ ]+_graph_torch .* [1-9][0-9]*(-[0-9]+)? kernels" "$log"; then
        line="FAIL $label: the side-by-side table lists no kernels for PyTorch's graph run"
    else
        line="PASS $label ($(grep -c '^compare: .*PASS' "$log") outputs agree)"
    fi
    printf '%s\n' "$line"
    if [ -n "${COMPARE_LOGS:-}" ]; then
        mkdir -p "$COMPARE_LOGS" && { echo "# $label"; cat "$log"; } >"$COMPARE_LOGS/$id.log"
    fi
}

# compare/shapes.py at small widths: ours across token counts next to torch.compile recompiling.
# The CSV must hold one row per token count, every compiled output having matched eager's.
shapes_case() {
    local label="compare shapes $*" log="$tmp/shapes.log" csv="$tmp/shapes/shapes_64x256_bf16.csv" rows
    compare/run_compare.sh shapes "$@" --out "$tmp/shapes" --no-plot >"$log" 2>&1
    local rc=$?
    rows=$(tail -n +2 "$csv" 2>/dev/null | grep -c .)
    if [ "$rc" -eq 2 ]; then
        compare_waived "$label" "$log"
    elif [ "$rc" -ne 0 ]; then
        echo "FAIL $label: exit $rc"$'\n'"$(grep -E "compare|error" "$log" | head -5 | sed 's/^/  /')"
    elif [ "$rows" -ne 3 ] || ! grep -q "^first calls in all" "$log"; then
        echo "FAIL $label: $rows rows in $(basename "$csv"), expected 3, and the table's summary line"
    else
        echo "PASS $label (3 token counts, compiled outputs agree with eager)"
    fi
}

# compare/grid_torch.py, the shape grid's PyTorch process, at two points in one process, as the
# grid runs them: the second point's hand-captured graph must replay after the first point's
# graph is gone (a capture that reused cuBLAS's workspace of a freed graph faulted at replay).
grid_torch_case() {
    local label="compare grid_torch: two points in one process" log="$tmp/grid_torch.log" answers
    answers=$(printf '%s\n' '{"cmd":"point","dim":768,"hidden":3072,"tokens":32768}' \
        '{"cmd":"time","forwards":20,"rounds":1}' '{"cmd":"point","dim":4096,"hidden":11008,"tokens":1}' \
        '{"cmd":"time","forwards":200,"rounds":2}' '{"cmd":"quit"}' | python3 compare/grid_torch.py 2>"$log")
    local rc=$?
    if [ "$rc" -eq 2 ]; then
        compare_waived "$label" "$log"
    elif [ "$rc" -ne 0 ] || [ "$(grep -c '^{' <<<"$answers")" -ne 4 ] || grep -q '"error"' <<<"$answers"; then
        echo "FAIL $label: exit $rc, $(grep -c '^{' <<<"$answers") of 4 answers"$'\n'"$(grep -o '"error": "[^"]*"' <<<"$answers" | head -2 | sed 's/^/  /')"
    else
        echo "PASS $label (both points checked and timed, every mode)"
    fi
}

n=0
case_() {
    local stage=$1
    [ -x "bin/$stage" ] || return 0
    if ! "bin/$stage" --help 2>/dev/null | grep -q -- "--dump"; then
        echo "SKIP compare $*: bin/$stage has no --dump flag"
        return 0
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    one_case "$n" "$@" &
    n=$((n + 1))
}

# Build once, before cases run side by side (run_compare.sh builds its stage too).
built=()
for s in 0*/; do [ -f "$s/main.c" ] && built+=("${s%/}"); done
make --no-print-directory -s "${built[@]}" >/dev/null 2>&1

# The slowest first (torch.compile compiles for tens of seconds), so the cases end close together.
if [ -x bin/04_fused_mlp ]; then
    shapes_case --tokens 1,8,64 --dim 64 --hidden 256 &
fi
grid_torch_case &
case_ 04_fused_mlp --variant all
case_ 04_fused_mlp --batch 1 --seq 8 --variant all
case_ 03_simple_mlp --batch 1 --seq 8
case_ 02_linear --variant all
case_ 01_matmul_add --size 4096 --variant all
for dtype in bf16 fp16 fp32; do
    case_ 01_matmul_add --dtype "$dtype" --size 100 --torch-variant eager
    case_ 02_linear --dtype "$dtype" --batch 33 --in_dim 17 --out_dim 65 --torch-variant eager
    case_ 03_simple_mlp --dtype "$dtype" --batch 1 --seq 8 --dim 64 --hidden 256 --torch-variant eager
done
case_ 03_simple_mlp --dtype fp32 --batch 1 --seq 8 --dim 64 --hidden 256 --torch-variant graph
wait
