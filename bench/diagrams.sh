#!/usr/bin/env bash
# Draws the concept diagrams (docs/img/05_<name>.png for the GEMM chapters 05 and 06, 00_gpu.png
# for the primer), each also with Korean labels (05_<name>_ko.png, 00_gpu_ko.png), with gnuplot and the scripts in common/plots/diagrams/, called as every figure is
# (common/plots/call.gp). They hold
# no measurements: each is drawn from the kernels' constants and a shape CSV beside the scripts,
# so they need no run's results and no GPU.
#   bench/diagrams.sh [OUT_DIR [NAME...]]   (default docs/img, every diagram)
# NAME (tile, tma_ring, pingpong, stream_k, gpu) draws only those, in both languages; gpu is the
# primer's. The Korean labels need a font with Hangul, such as fonts-nanum (`fc-list :lang=ko`).
set -euo pipefail
here=$(readlink -f -- "$0") && cd "${here%/*}/.."
prog=diagrams usage="bench/diagrams.sh [OUT_DIR [NAME...]]"
# shellcheck source=tools/lib_args.sh
. tools/lib_args.sh
# The command line, before anything is drawn: one line and exit 1 if bad.
help_or_flags "$@"
[ -z "$help_asked" ] || set --
no_flags "$@"
out=${1:-docs/img}
out_dir OUT_DIR "$out"
only=("${@:2}")
names=(tile tma_ring pingpong stream_k gpu)
for n in "${only[@]}"; do
    [ "$(printf '%s\n' "${names[@]}" | grep -cxF -- "$n")" -eq 1 ] ||
        die "NAME: unknown diagram '$n' (diagrams: ${names[*]})"
    [ "$(printf '%s\n' "${only[@]}" | grep -cxF -- "$n")" -eq 1 ] || die "NAME: '$n' given twice"
done
help_done
command -v gnuplot >/dev/null || die "gnuplot is required (not found on PATH)"
hangul_font # the Korean words
d=common/plots/diagrams
mkdir -p "$out"

as_file() {  # a name gnuplot reads as a file: it takes '<cmd' and '|cmd' as commands
    case $1 in /*) printf '%s' "$1" ;; *) printf './%s' "$1" ;; esac
}
draw() {  # draw NAME SHAPE_CSV TITLE [CHAPTER [LANG]]: common/plots/diagrams/NAME.gp into OUT/CHAPTER_NAME[_LANG].png
    # (05); a script that knows LANG reads it from the PNG's name
    local png=$out/${4:-05}_$1${5:+_$5}.png
    if [ ${#only[@]} -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qxF -- "$1"; then return 0; fi
    gnuplot -c common/plots/call.gp "$d/$1.gp" "$(as_file "$d/$2")" "$(as_file "$png")" "$3"
    echo "wrote $png"
}

draw tile article.csv "Version 6's tile: 128 x 64 of m from a gate tile and an up tile, K in slices of 64 (8192 tokens, 768 -> 3072)"
draw tile article.csv "버전 6의 타일: gate 타일과 up 타일로 만드는 m의 128 x 64 타일, K는 64씩 조각으로 (토큰 8192개, 768 -> 3072)" 05 ko
draw tma_ring article.csv "Version 3's ring: 4 stages of 48 KB, a full and an empty mbarrier each, the phase flipping at every wrap"
draw tma_ring article.csv "버전 3의 링: 48 KB 단계 4개, 단계마다 full과 empty mbarrier 하나씩, 한 바퀴 돌 때마다 페이즈가 뒤집힘" 05 ko
draw pingpong article.csv "Version 6, ping-pong: one consumer's epilogue under the other's wgmmas (dim 768: 12 steps of K a tile)"
draw pingpong article.csv "버전 6, 핑퐁: 한 소비자의 에필로그가 다른 소비자의 wgmma 아래에 숨음 (dim 768: 타일마다 K 12 스텝)" 05 ko
draw stream_k llama_512.csv "Stream-K, 512 tokens, 4096 -> 11008: 688 tiles of 128 x 64 on 132 SMs"
draw stream_k llama_512.csv "Stream-K, 토큰 512개, 4096 -> 11008: SM 132개에 놓인 128 x 64 타일 688개" 05 ko
draw gpu llama_512.csv "The GPU in a dozen terms: launches queue in a stream, SMs run blocks of warps, tiles go to the SMs in waves" 00
draw gpu llama_512.csv "열두 가지 용어로 보는 GPU: 런치는 스트림에 쌓이고, SM은 워프로 된 블록을 실행하며, 타일은 웨이브 단위로 SM에 배정된다" 00 ko
