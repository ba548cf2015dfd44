#!/usr/bin/env bash
# compare/run_compare.sh STAGE [FLAGS...] [--torch-variant eager|compile|graph|all]
# compare/run_compare.sh shapes [FLAGS...]      compare/shapes.py: our fused GeGLU across token
#                                               counts next to torch.compile recompiling per shape
#   compare/run_compare.sh 01_matmul_add --size 4096
#   compare/run_compare.sh 03_simple_mlp --batch 1 --seq 8          the decode shape
#   compare/run_compare.sh 04_fused_mlp --variant all --torch-variant compile
#   compare/run_compare.sh 04_fused_mlp --batch 1 --seq 8 --torch-variant graph
#
# Ours and PyTorch's on identical shapes, in one go:
#   1. bin/STAGE FLAGS --dump OUT/dump      our run, writing x, the weights and y as .npy
#   2. compare/<script>.py FLAGS --load OUT/dump --variant V
#                                           PyTorch on the same tensors, the same schedule; it
#                                           checks our y against its own (exit 1 on a mismatch)
#   3. compare/side_by_side.py              one table and one plot of both
# OUT is --out if given, else traces/STAGE. Our --variant goes to our stage only; PyTorch runs
# --torch-variant (default all: eager, torch.compile, and graph: the eager forward captured once
# in a CUDA graph by hand and replayed, the rival of our graph rung).
# Every flag is checked, by our stage's parser and by the PyTorch script's, before PyTorch is
# looked for and before anything is written: a bad flag is one line and exit 1 with or without
# PyTorch, and leaves OUT as it was.
# Exit status: 0 agreed, 1 bad input or a mismatch, 2 waived (no GPU, or no PyTorch), 3 a CUDA
# error in our stage.
set -uo pipefail
here=$(readlink -f -- "$0") && cd "${here%/*}/.." || exit 1

error() {  # error MESSAGE...: one line on stderr, control characters shown as '?'
    printf 'compare: error: %s\n' "$(printf '%s' "$*" | tr -c '[:print:]' '?')" >&2
}

stage=${1:-}
if [ "$stage" = shapes ]; then
    shift
    exec python3 compare/shapes.py "$@"
fi
case "${stage%/}" in
    01_matmul_add) script=matmul_add.py; extra=() ;;
    02_linear) script=linear.py; extra=() ;;
    03_simple_mlp | 04_fused_mlp) script=mlp.py; extra=(--stage "${stage%/}") ;;
    *) error "unknown stage '$stage' (01_matmul_add, 02_linear, 03_simple_mlp, 04_fused_mlp, or shapes)"
       exit 1 ;;
esac
stage=${stage%/}
shift

ours=() torch=() out="traces/$stage" torch_variant=all torch_variant_given=""
while [ $# -gt 0 ]; do
    case "$1" in
        --torch-variant | --torch-variant=*)
            if [ -n "$torch_variant_given" ]; then error "--torch-variant given twice"; exit 1; fi
            torch_variant_given=1
            if [ "$1" = --torch-variant ]; then
                torch_variant=${2:-}; shift 2 || { error "--torch-variant needs a value"; exit 1; }
            else
                torch_variant=${1#*=}; shift
            fi ;;
        --variant) ours+=("$1" "${2:-}"); shift 2 || shift ;;
        --variant=*) ours+=("$1"); shift ;;
        --sweep | --dump | --dump=* | --help)
            error "$1 is not for a comparison (run the stage itself for it)"; exit 1 ;;
        --out) out=${2:-}; ours+=("$1" "$out"); torch+=("$1" "$out"); shift 2 || shift ;;
        --out=*) out=${1#*=}; ours+=("$1"); torch+=("$1"); shift ;;
        *) ours+=("$1"); torch+=("$1"); shift ;;
    esac
done
case "$torch_variant" in
    eager | compile | graph | all) ;;
    *) error "--torch-variant: '$torch_variant' is not eager, compile, graph or all"; exit 1 ;;
esac
if [ -z "$out" ]; then
    error "--out: directory name empty"
    exit 1
fi
dump="$out/dump"

# The flags, before PyTorch: our stage's parser checks every flag given with --help (and what it
# can without a GPU: the output folders, the variant against the dtype, the sizes) and prints its
# usage only when all are good, one line naming the bad one otherwise; the PyTorch script parses
# its own and stops there with --check-flags. Any refusal is exit 1, whatever status it came with.
# The stage is built as bin/STAGE, not as `make STAGE`: that would write .last_stage, which is
# ./run's, not a comparison's.
if ! make --no-print-directory -s "bin/$stage" >/dev/null; then
    error "building $stage failed (make $stage shows why)"
    exit 1
fi
if ! "bin/$stage" "${ours[@]}" --dump "$dump" --help >/dev/null; then
    exit 1
fi
if ! command -v python3 >/dev/null; then
    echo "compare: python3 is required (with PyTorch and NumPy)"
    exit 2
fi
python3 "compare/$script" "${torch[@]}" "${extra[@]}" --variant "$torch_variant" --load "$dump" --check-flags ||
    exit 1
if ! why=$(python3 -c 'import torch, numpy' 2>&1); then
    echo "compare: PyTorch is required (import torch failed: $(printf '%s\n' "$why" | tail -n 1))"
    exit 2
fi

logs=$(mktemp -d) || exit 1
trap 'rm -rf "$logs"' EXIT
touch "$logs/start"
sleep 1 # file times are compared to the second on some file systems

echo "==== ours: bin/$stage ${ours[*]} --dump $dump"
"bin/$stage" "${ours[@]}" --dump "$dump" | tee "$logs/ours.log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
    echo "compare: $stage exited with status $rc; nothing to compare"
    exit "$rc"
fi
# A y from an earlier run must never be the one checked: what this run did not write goes.
find "$dump" -maxdepth 1 -name '*.npy' ! -newer "$logs/start" -delete

echo
echo "==== PyTorch: compare/$script ${torch[*]} ${extra[*]} --variant $torch_variant --load $dump"
python3 "compare/$script" "${torch[@]}" "${extra[@]}" --variant "$torch_variant" --load "$dump" |
    tee "$logs/torch.log"
torch_rc=${PIPESTATUS[0]}
if [ "$torch_rc" -eq 2 ]; then
    exit 2
fi

# This run's CSVs, in the order they were written: ours <tag>.csv, PyTorch's <tag>_torch.csv.
mapfile -t csvs < <(find "$out" -maxdepth 1 -name '*.csv' -newer "$logs/start" \
    -printf '%T@ %p\n' | sort -n | cut -d' ' -f2-)
ours_csv=() torch_csv=()
for c in "${csvs[@]}"; do
    # per-step CSVs only: a stage may also write tables of its own (a ladder, a sweep)
    [ "$(head -n 1 "$c")" = "step,phase,cpu_us,gpu_us,gated" ] || continue
    if [[ $c == *_torch.csv ]]; then torch_csv+=("$c"); else ours_csv+=("$c"); fi
done
if [ ${#ours_csv[@]} -eq 0 ] || [ ${#torch_csv[@]} -eq 0 ]; then
    echo "compare: no per-step CSV from $([ ${#ours_csv[@]} -eq 0 ] && echo "our stage" || echo PyTorch) in $out"
    exit 1
fi
echo
echo "==== side by side"
python3 compare/side_by_side.py --ours "${ours_csv[@]}" --torch "${torch_csv[@]}" \
    --log "$logs/ours.log" --log "$logs/torch.log" --png "$out/side_by_side.png" \
    --title "$stage ${ours[*]}: ours vs PyTorch ($(python3 -c 'import torch; print(torch.cuda.get_device_name(0) + ", PyTorch " + torch.__version__)'))" || exit 1
if [ "$torch_rc" -ne 0 ]; then
    echo "compare: FAILED: our output and PyTorch's disagree (or PyTorch's side failed: status $torch_rc)"
fi
exit "$torch_rc"
