#!/usr/bin/env bash
# Regenerates every figure of the docs (docs/img/*.png) from the raw outputs of one run of
# bench/run_all.sh, with gnuplot and the scripts in common/plots/ (the stages' own plots):
#   bench/figures.sh RESULTS_DIR [SWEEPS_DIR [TRACE_DIR]]
#   bench/figures.sh docs/results/h200          the chapters' figures and the grid's heat maps
#   GRID_DIR=OTHER/shape_grid bench/figures.sh RESULTS_DIR  the heat maps of a grid from another run
#   TRACE_DIR=tests/data/h200-2026-12-01 bench/figures.sh RESULTS_DIR   timelines from fixtures
# The sweeps are optional in run_all.sh (RUN_ONLY=sweeps) and slow, so they may come from an
# earlier run: SWEEPS_DIR (default RESULTS_DIR) holds the sweep_*.csv files. The timelines are
# drawn from the traces under TRACE_DIR (the third argument or the environment; default
# RESULTS_DIR): a run's results, or a folder of fixtures with a FIXTURES file
# (tools/h200_fixtures.sh). PyTorch's traces drawn beside ours are tests/data/reference/'s.
# Each title ends with the GPU, driver, CUDA version and date the run's env.txt (or the
# fixtures' FIXTURES) names, so a figure says where its numbers came from. Each figure is drawn
# twice: NAME.png with English words and NAME_ko.png with Korean ones, for the Korean pages (the
# scripts and tools/trace_timeline.py take the language from the PNG's name); code names (kernels,
# variants, flags) and units stay as they are in both. IMG_DIR (default docs/img) is where they go:
#   IMG_DIR=/tmp/figs bench/figures.sh RESULTS_DIR      every figure there, docs/img left as it is
# Needs gnuplot, python3 and, for the Korean words, a font with Hangul such as fonts-nanum
# (`fc-list :lang=ko`); no GPU.
set -euo pipefail
here=$(readlink -f -- "$0") && cd "${here%/*}/.."
prog=figures usage="bench/figures.sh RESULTS_DIR [SWEEPS_DIR [TRACE_DIR]]"
# shellcheck source=tools/lib_args.sh
. tools/lib_args.sh
# The command line and the environment, before anything is drawn: one line and exit 1 if bad.
help_or_flags "$@"
if [ -z "$help_asked" ]; then
    no_flags "$@"
    [ $# -ge 1 ] || die "RESULTS_DIR is missing (usage: $usage)"
    [ $# -le 3 ] || die "unexpected argument '$4' (usage: $usage)"
    in_dir RESULTS_DIR "$1"
    in_file RESULTS_DIR "$1/env.txt"
    [ $# -lt 2 ] || in_dir SWEEPS_DIR "$2"
    [ $# -lt 3 ] || in_dir TRACE_DIR "$3"
    [ $# -ge 3 ] || [ -z "${TRACE_DIR+x}" ] || in_dir TRACE_DIR "$TRACE_DIR"
    [ -z "${GRID_DIR+x}" ] || in_dir GRID_DIR "$GRID_DIR"
    [ -z "${IMG_DIR+x}" ] || out_dir IMG_DIR "$IMG_DIR"
fi
help_done
command -v gnuplot >/dev/null || die "gnuplot is required (not found on PATH)"
hangul_font # the Korean words
run=$1
sweeps=${2:-$run}
trace_dir=${3:-${TRACE_DIR:-$run}}
img=${IMG_DIR:-docs/img}
mkdir -p "$img"
# run_all.sh writes the stages' outputs under traces/; an older copy may have no traces/ level
traces_of() { if [ -d "$1/traces" ]; then echo "$1/traces"; else echo "$1"; fi; }
t=$(traces_of "$run")
ts=$(traces_of "$sweeps")
tt=$(traces_of "$trace_dir")
ref=tests/data/reference
bench/diagrams.sh "$img"   # the GEMM chapter's concept diagrams: drawn from the code, no run's results

# "NVIDIA H200, driver 580.159.04, CUDA 13.0, 2026-11-29" from env.txt
# A part rerun on another day (the results of a later bench/run_all.sh with RUN_ONLY copied in)
# keeps that run's env.txt as env.PART.txt; its figures name that run.
where_of() {  # where_of PART [DIR]: "GPU, driver D, CUDA C, YYYY-MM-DD"
    local dir=${2:-$run}
    local env=$dir/env.txt
    [ -f "$dir/env.$1.txt" ] && env=$dir/env.$1.txt
    local gpu cuda day
    gpu=$(sed -n "s/^gpu: \([^,]*\), \([^,]*\),.*/\1, $(T driver 드라이버) \2/p" "$env" | head -1)
    cuda=$(sed -n 's/^driver CUDA Version: \(.*\)/CUDA \1/p' "$env" | head -1)
    day=$(sed -n 's/^date: \([0-9-]*\).*/\1/p' "$env" | head -1)
    echo "$gpu, $cuda, $day"
}
where_traces_of() {  # where_traces_of PART: as where_of, for the traces under TRACE_DIR
    local fx=$trace_dir/FIXTURES
    [ -f "$fx" ] || { where_of "$1" "$trace_dir"; return; }
    local gpu cuda day
    gpu=$(sed -n "s/^gpu: \([^,]*\), \([^,]*\).*/\1, $(T driver 드라이버) \2/p" "$fx" | head -1)
    cuda=$(sed -n 's/^toolkit: .*release \([0-9.]*\),.*/CUDA \1/p' "$fx" | head -1)
    day=$(sed -n 's/^date: \([0-9-]*\).*/\1/p' "$fx" | head -1)
    echo "$gpu, $cuda, $day"
}

T() {  # T ENGLISH KOREAN: the words in the language of the pass (lang: en or ko)
    if [ "$lang" = ko ]; then printf '%s' "$2"; else printf '%s' "$1"; fi
}
as_file() {  # a name gnuplot reads as a file: it takes '<cmd' and '|cmd' as commands
    case $1 in /*) printf '%s' "$1" ;; *) printf './%s' "$1" ;; esac
}
png() {  # png NAME: the PNG of figure NAME in the pass's language, under IMG_DIR (NAME_ko.png in Korean)
    printf '%s/%s%s.png' "$img" "$1" "$(T "" _ko)"
}
plot() {  # plot SCRIPT CSV PNG TITLE: the names and title reach gnuplot as they are (call.gp)
    [ -f "$2" ] || { echo "figures: $2 missing" >&2; exit 1; }
    gnuplot -c common/plots/call.gp "common/plots/$1" "$(as_file "$2")" "$(as_file "$3")" "$4 ($where)"
    echo "wrote $3"
}
sweep_plot() {  # sweep_plot SCRIPT CSV PNG TITLE: as plot, dated by the sweeps' run
    local w=$where
    where=$where_sweeps
    plot "$@"
    where=$w
}
timeline() {  # timeline TRACE STEP PNG TITLE [REF_TRACE REF_STEP REF_TITLE]: dated by TRACE_DIR
    local f
    local ref=${5:-$1}
    [ "$ref" != --label ] || ref=$1
    for f in "$1" "$ref"; do [ -f "$f" ] || { echo "figures: $f missing" >&2; exit 1; }; done
    if [ "${5:-}" = --label ]; then  # timeline TRACE STEP PNG TITLE --label START END TEXT ...
        tools/trace_timeline.py "$1" "$2" "$3" --title "$4 ($where_traces)" "${@:5}"
    elif [ $# -ge 7 ]; then
        tools/trace_timeline.py "$1" "$2" "$3" --title "$(T ours "우리 트레이스"): $4 ($where_traces)" --also "$5" "$6" "$7"
    else
        tools/trace_timeline.py "$1" "$2" "$3" --title "$4 ($where_traces)"
    fi
    echo "wrote $3"
}
torch_title() {  # torch_title WHAT STEP: the title of PyTorch's panel
    T "PyTorch 2.11's trace: $1, the same program on the same GPU, $2" \
      "PyTorch 2.11의 트레이스: $1, 같은 GPU에서 돌린 같은 프로그램, $2"
}
# The cold step, its stretches named (tools/trace_timeline.py --label): what fills the gaps,
# found in the trace by the CUDA calls and ranges around each gap, so another run's trace gets
# its own spans and lengths
cold_labels() {  # cold_labels TRACE 01|03: the --label arguments, one a line, in the pass's language
    python3 - "$1" "$2" "$lang" <<'PY'
import json, sys
path, stage, lang = sys.argv[1:4]
ev = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X" and "dur" in e]
t0 = next(e["ts"] for e in ev if e["name"] == "ProfilerStep#0")
def at(name, n=0, end=False):
    e = sorted((e for e in ev if e["name"] == name), key=lambda e: e["ts"])[n]
    return e["ts"] - t0 + (e["dur"] if end else 0)
def label(a, b, en, ko):
    print(f"--label\n{a:.0f}\n{b:.0f}\n{ko if lang == 'ko' else en} ({(b - a) / 1000:.0f} ms)")
if stage == "01":
    a, b, c, d = at("matmul_add"), at("cudaMalloc", end=True), at("gemm"), at("cuLaunchKernelEx")
    label(a, b, "cublasLtCreate: module loading, then the workspace's cudaMalloc",
          "cublasLtCreate: 모듈 로딩, 이어서 워크스페이스의 cudaMalloc")
    label(b, c, "the heuristic query: cuBLASLt loads its kernel catalogue, no CUDA call",
          "휴리스틱 쿼리: cuBLASLt가 커널 카탈로그를 불러옴, CUDA 호출 없음")
    label(c, d, "cublasLtMatmul's first call, then the GEMM kernel's lazy loading",
          "cublasLtMatmul의 첫 호출, 이어서 GEMM 커널의 지연 로딩")
else:
    a, b, c = at("gate_proj"), at("cudaMalloc", end=True), at("cudaMalloc", 1)
    d, e, f = at("cuLaunchKernelEx"), at("down_proj"), at("cuLaunchKernelEx", 2)
    label(a, b, "cublasLtCreate: module loading, the first workspace",
          "cublasLtCreate: 모듈 로딩, 첫 워크스페이스")
    label(b, c, "the first heuristic query: cuBLASLt loads its kernel catalogue, no CUDA call",
          "첫 휴리스틱 쿼리: cuBLASLt가 커널 카탈로그를 불러옴, CUDA 호출 없음")
    label(c, d, "the second plan, the first cublasLtMatmul", "두 번째 플랜, 첫 cublasLtMatmul")
    label(e, f, "down_proj's first cublasLtMatmul", "down_proj의 첫 cublasLtMatmul")
PY
}

figures() {  # figures en|ko: every figure of the chapters, its words in that language
    lang=$1
    local mt m l st s f ft tl tl_day shape v labels
    where=$(where_of 01)
    where_sweeps=$(where_of 01 "$sweeps")
    where_traces=$(where_traces_of 01)

    mt=$tt/01_matmul_add
    timeline "$mt/64_bf16_cold_eager.json" "ProfilerStep#3" "$(png 01_timeline_64_eager_step3)" \
        "$(T "matmul + add, size 64, eager, ProfilerStep#3" "matmul + add, 크기 64, eager, ProfilerStep#3")"
    timeline "$mt/64_bf16_cold_addmm.json" "ProfilerStep#3" "$(png 01_timeline_64_addmm_step3)" \
        "$(T "matmul + add, size 64, addmm (bias copied, GEMM with beta = 1), ProfilerStep#3" \
             "matmul + add, 크기 64, addmm (편향 복사, beta = 1인 GEMM), ProfilerStep#3")"
    mapfile -t labels < <(cold_labels "$mt/cold_step/64_bf16_cold_eager.json" 01)
    [ ${#labels[@]} -gt 0 ] || { echo "figures: no gaps found in $mt/cold_step/64_bf16_cold_eager.json" >&2; exit 1; }
    timeline "$mt/cold_step/64_bf16_cold_eager.json" "ProfilerStep#0" "$(png 01_timeline_64_eager_step0)" \
        "$(T "matmul + add, size 64, eager, the cold ProfilerStep#0" "matmul + add, 크기 64, eager, 콜드 ProfilerStep#0")" \
        "${labels[@]}"
    timeline "$mt/4096_bf16_cold_eager.json" "ProfilerStep#3" "$(png 01_timeline_4096_eager_step3)" \
        "$(T "matmul + add, size 4096, eager, ProfilerStep#3" "matmul + add, 크기 4096, eager, ProfilerStep#3")"
    timeline "$mt/bmm/b8_64_bf16_cold_eager.json" "ProfilerStep#3" "$(png 01_timeline_b8_eager_step3)" \
        "$(T "matmul + add, 8 x size 64 (batched), eager, ProfilerStep#3" "matmul + add, 8 x 크기 64 (배치), eager, ProfilerStep#3")"
    m=$t/01_matmul_add
    # the cold run and the warm one on one log axis (the warm CSV reaches gnuplot as call.gp's CSV2)
    for f in "$m/64_bf16_cold_eager.csv" "$m/64_bf16_warm_eager.csv"; do [ -f "$f" ] || { echo "figures: $f missing" >&2; exit 1; }; done
    gnuplot -c common/plots/call.gp common/plots/cold_vs_warm.gp "$(as_file "$m/64_bf16_cold_eager.csv")" \
        "$(as_file "$(png 01_steps_64_cold_vs_warm)")" \
        "$(T "matmul + add, size 64, eager: each step's CPU time, cold and warm" \
             "matmul + add, 크기 64, eager: 스텝별 CPU 시간, 콜드와 웜") ($where)" \
        "$(as_file "$m/64_bf16_warm_eager.csv")"
    echo "wrote $(png 01_steps_64_cold_vs_warm)"
    plot steps.gp "$m/4096_bf16_cold_eager.csv" "$(png 01_steps_4096_eager_30)" \
        "$(T "matmul + add, size 4096, eager, 30 steps" "matmul + add, 크기 4096, eager, 스텝 30개")"
    sweep_plot crossover.gp "$ts/01_matmul_add/sweep_bf16_eager.csv" "$(png 01_crossover_eager)" "matmul + add, eager, bf16"
    sweep_plot crossover.gp "$ts/01_matmul_add/sweep_bf16_fused.csv" "$(png 01_crossover_fused)" "matmul + add, fused, bf16"

    # t is a view (no call, no kernel under it), and one GEMM with the bias in its epilogue
    timeline "$tt/02_linear/1024x32x64_bf16_cold_epilogue.json" "ProfilerStep#3" "$(png 02_timeline_ours_vs_pytorch)" \
        "$(T "Linear 32 -> 64, batch 1024, epilogue, ProfilerStep#3" "Linear 32 -> 64, 배치 1024, epilogue, ProfilerStep#3")" \
        "$ref/torch_02_linear_1024x32x64.json" "ProfilerStep#3" \
        "$(torch_title "$(T "nn.Linear 32 -> 64, batch 1024" "nn.Linear 32 -> 64, 배치 1024")" "ProfilerStep#3")"
    l=$t/02_linear
    plot steps.gp "$l/1024x32x64_bf16_cold_epilogue.csv" "$(png 02_linear_1024x32x64_bf16_cold_epilogue)" \
        "$(T "Linear 32 -> 64, batch 1024, epilogue" "Linear 32 -> 64, 배치 1024, epilogue")"
    sweep_plot batch_crossover.gp "$ts/02_linear/sweep_32x64_bf16_epilogue.csv" "$(png 02_linear_sweep_32x64_bf16_epilogue)" \
        "Linear 32 -> 64, epilogue, bf16"

    st=$tt/03_simple_mlp
    timeline "$st/64x128_768x3072_bf16_cold_eager.json" "ProfilerStep#3" "$(png 03_timeline_article_eager_step3)" \
        "$(T "GeGLU MLP, article shape, eager, ProfilerStep#3" "GeGLU MLP, 글의 형태, eager, ProfilerStep#3")"
    mapfile -t labels < <(cold_labels "$st/cold_step/64x128_768x3072_bf16_cold_eager.json" 03)
    [ ${#labels[@]} -gt 0 ] || { echo "figures: no gaps found in $st/cold_step/64x128_768x3072_bf16_cold_eager.json" >&2; exit 1; }
    timeline "$st/cold_step/64x128_768x3072_bf16_cold_eager.json" "ProfilerStep#0" "$(png 03_timeline_article_eager_step0)" \
        "$(T "GeGLU MLP, article shape, eager, the cold ProfilerStep#0" "GeGLU MLP, 글의 형태, eager, 콜드 ProfilerStep#0")" \
        "${labels[@]}"
    # Ours beside PyTorch's: its metadata ops (aten::t, aten::view, ...) and the same five kernels
    timeline "$st/64x128_768x3072_bf16_cold_eager.json" "ProfilerStep#3" "$(png 03_timeline_ours_vs_pytorch)" \
        "$(T "GeGLU MLP, article shape, eager, ProfilerStep#3" "GeGLU MLP, 글의 형태, eager, ProfilerStep#3")" \
        "$ref/torch_03_mlp_article_eager.json" "ProfilerStep#3" \
        "$(torch_title "$(T "GeGLU MLP, article shape, eager" "GeGLU MLP, 글의 형태, eager")" "ProfilerStep#3")"
    s=$t/03_simple_mlp
    plot steps.gp "$s/1x8_768x3072_bf16_cold_eager.csv" "$(png 03_simple_mlp_steps_1x8_768x3072_bf16)" \
        "$(T "GeGLU MLP, 8 tokens, eager" "GeGLU MLP, 토큰 8개, eager")"
    sweep_plot tokens_sweep.gp "$ts/03_simple_mlp/sweep_768x3072_bf16_eager.csv" "$(png 03_simple_mlp_sweep_768x3072_bf16_eager)" \
        "GeGLU MLP 768 -> 3072, eager, bf16"

    f=$t/04_fused_mlp
    where=$(where_of 04)
    # eager's five kernels over the epilogue rung's two, one time scale
    ft=$tt/04_fused_mlp
    where_traces=$(where_traces_of 04)
    for v in eager epilogue; do [ -f "$ft/64x128_768x3072_bf16_cold_$v.json" ] || { echo "figures: $ft/64x128_768x3072_bf16_cold_$v.json missing" >&2; exit 1; }; done
    tools/trace_timeline.py "$ft/64x128_768x3072_bf16_cold_eager.json" "ProfilerStep#3" "$(png 04_timeline_eager_vs_epilogue)" \
        --title "$(T "GeGLU MLP, article shape, eager, ProfilerStep#3" "GeGLU MLP, 글의 형태, eager, ProfilerStep#3") ($where_traces)" \
        --also "$ft/64x128_768x3072_bf16_cold_epilogue.json" "ProfilerStep#3" \
        "$(T "the same, epilogue rung, ProfilerStep#3: the GeGLU in the first GEMM's epilogue" \
             "같은 MLP, epilogue 단, ProfilerStep#3: GeGLU를 첫 GEMM의 에필로그에 접합")"
    echo "wrote $(png 04_timeline_eager_vs_epilogue)"
    where_sweeps=$(where_of 04 "$sweeps")
    for shape in 64x128_768x3072 1x8_768x3072 64x512_4096x11008; do
        plot ladder.gp "$f/ladder_${shape}_bf16.csv" "$(png "04_fused_mlp_ladder_${shape}_bf16")" \
            "$(T "GeGLU MLP ladder" "GeGLU MLP 사다리"), ${shape/_/, }, bf16"
    done
    plot clocks.gp "$f/64x512_4096x11008_bf16_cold_epilogue_clocks.csv" "$(png 04_clocks_llama_hold)" \
        "$(T "GeGLU MLP, 64x512, 4096 -> 11008, epilogue, 20 s back to back" \
             "GeGLU MLP, 64x512, 4096 -> 11008, epilogue, 20 s 동안 연달아 실행")"
    sweep_plot ladder_sweep.gp "$ts/04_fused_mlp/sweep_768x3072_bf16.csv" "$(png 04_fused_mlp_sweep_768x3072_bf16)" \
        "$(T "GeGLU MLP 768 -> 3072, every rung, bf16" "GeGLU MLP 768 -> 3072, 모든 단, bf16")"
    # The timeline's CSV names its own date (its first line), which may be a later day than env.txt's.
    tl=$run/decode_timeline_8tokens.csv
    [ -f "$tl" ] || { echo "figures: $tl missing" >&2; exit 1; }
    tl_day=$(sed -n '1s/^# date: \([0-9-]*\).*/\1/p' "$tl")
    [ -n "$tl_day" ] && where="${where%, *}, $tl_day"
    plot decode_timeline.gp "$tl" "$(png 04_decode_timeline_8tokens)" \
        "$(T "decode rung, 8 tokens, 768 -> 3072, bf16, block by block" "decode 단, 토큰 8개, 768 -> 3072, bf16, 블록 단위")"
}
figures en
figures ko

# The shape grid's heat maps sit beside its CSV (./run 04_fused_mlp --shapes --out DIR); the grid
# may come from another run than the rest: GRID_DIR (default RESULTS_DIR/shape_grid).
grid=${GRID_DIR:-$run/shape_grid}
if [ -f "$grid/shape_grid.csv" ]; then
    python3 bench/shape_grid.py --plot-only --out "$grid"
else
    echo "figures: no shape grid in $grid (GRID_DIR names one); its heat maps left as they are"
fi
