#!/usr/bin/env bash
# tools/nsys_h200.sh: on a GPU machine, records every stage at the chapters' shapes under each
# Nsight Systems recorder it finds, and our own CUPTI trace of the same runs, then packs it all
# for a machine with the importer (tools/nsys_capture.sh --import):
#   an nsys already installed (PATH, the CUDA toolkit, Nsight Compute's copy; NSYS_INSTALLED=...)
#   the recorder tools/nsys_host.sh --target-pack packed under .nsys/target/
# each named after its version's year (suffix .nsys2025, .nsys2024, ...).
# Outputs under $OUT (default ./nsys-out): log.txt, and traces.tar.xz.NN (15 MiB parts; join
# them with `cat traces.tar.xz.* | tar -xJf -`). Every failure prints the recorder's own error.
set -uo pipefail
here=$(readlink -f -- "$0") && repo=${here%/tools/*} && cd "$repo" || exit 1
prog=nsys_h200 usage="tools/nsys_h200.sh (no arguments; environment OUT, NSYS_BUDGET_S)"
# shellcheck source=tools/lib_args.sh
. tools/lib_args.sh
# The command line (none) and the environment, before anything is made: one line and exit 1 if bad.
help_or_flags "$@"
[ -z "$help_asked" ] || set --
no_flags "$@"
[ $# -eq 0 ] || die "unexpected argument '$1' (usage: $usage)"
out=${OUT:-$repo/nsys-out}
out_dir OUT "$out"
budget=${NSYS_BUDGET_S:-200} # recording stops being started past this many seconds
whole NSYS_BUDGET_S "$budget" 0 1000000
help_done
mkdir -p "$out" || exit 1
t0=$SECONDS
main() {
say() { printf '\n==== [%3ds] %s\n' $((SECONDS - t0)) "$*"; }

say "machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -n 2
nvcc --version 2>/dev/null | tail -n 1

# shellcheck source=tools/nsys_recorders.sh
. tools/nsys_recorders.sh
declare -A rec
order=()
find_nsys_recorders "$(mktemp -d)"
for r in "${order[@]}"; do
    echo "$r: ${rec[$r]}: $("${rec[$r]}" --version 2>&1)"
    "${rec[$r]}" status -e 2>&1 | sed "s/^/  $r status: /"
done

say "build"
make -j"$(nproc)" --no-print-directory -s 01_matmul_add 02_linear 03_simple_mlp 04_fused_mlp >/dev/null ||
    { echo "build failed"; exit 1; }

runs=(
    "01_matmul_add --size 64"
    "01_matmul_add --size 4096"
    "02_linear"
    "03_simple_mlp"
    "03_simple_mlp --batch 1 --seq 8"
    "04_fused_mlp --batch 1 --seq 8 --variant eager"
    "04_fused_mlp --batch 1 --seq 8 --variant epilogue"
    "04_fused_mlp --batch 1 --seq 8 --variant graph"
    "04_fused_mlp --batch 1 --seq 8 --variant decode"
)
declare -A broken
capture() { # RECORDER [--suffix S] EXTRA... -- STAGE FLAGS...: the capture's suffix .RECORDER unless S
    local r=$1 suffix=.$1; shift
    if [ "${1:-}" = --suffix ]; then suffix=$2; shift 2; fi
    [ -n "${rec[$r]:-}" ] || return 0
    if [ -n "${broken[$r]:-}" ]; then echo "$r: skipped (failed before)"; return 0; fi
    if [ $((SECONDS - t0)) -gt "$budget" ]; then echo "$r: skipped (past ${budget}s)"; return 0; fi
    if ! NSYS=${rec[$r]} timeout 90 tools/nsys_capture.sh --record-only --suffix "$suffix" "$@"; then
        echo "$r: FAILED with -t cuda,nvtx,cublas; again with -t cuda,nvtx"
        NSYS=${rec[$r]} timeout 90 tools/nsys_capture.sh --record-only --suffix "$suffix" --trace cuda,nvtx "$@" ||
            { echo "$r: FAILED again; no further captures with it"; broken[$r]=1; }
    fi
}
for run in "${runs[@]}"; do
    read -r -a argv <<<"$run"
    say "${argv[*]}: plain run with our CUPTI trace"
    timeout 120 "bin/${argv[0]}" "${argv[@]:1}" --no-plot --no-check | tail -n 25
    for r in "${order[@]}"; do
        say "${argv[*]}: $r"
        capture "$r" "${argv[@]}" --no-check
    done
done
for r in "${order[@]}"; do
    say "03_simple_mlp --batch 1 --seq 8 --cold: $r (step 0 inside the capture)"
    capture "$r" --suffix ".$r.cold" --cold 03_simple_mlp --batch 1 --seq 8 --no-check
done

say "pack"
find traces -type f \( -name '*.png' -o -name '*.svg' -o -name '*.dat' \) -delete
du -ah traces | sort -h | tail -n 12
tar -cf - traces | xz -T0 -3 | split -b 15M -d - "$out/traces.tar.xz."
ls -l "$out"
say "done"
}
main 2>&1 | tee "$out/log.txt"
