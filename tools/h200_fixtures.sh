#!/usr/bin/env bash
# tools/h200_fixtures.sh OUTDIR
#   On a GPU machine: builds the stages and records, with the articles' schedule (--wait 1
#   --warmup-steps 1 --active 3), the traces the tests read as fixtures (tests/test_hta.py,
#   tests/test_h200_traces.py) and the chapters' timelines draw: every stage's traced runs, the
#   cold step of 01 and 03, 01's batched detour. Then, time allowing, Nsight Systems captures of
#   03 at 8 tokens with each recorder it finds (an nsys on the machine; the recorder that
#   tools/nsys_host.sh --experimental --target-pack packed under .nsys/target/), left raw
#   (.qdstrm) for an importer elsewhere, beside our trace of the same flags.
#   Everything lands in one folder h200-<date>/ (FIXTURES: the machine and the runs; <stage>/
#   <tag>.json and .txt; logs/; nsys/), packed as OUTDIR/h200-fixtures.tar.gz, with
#   OUTDIR/log.txt. In the repository: tar -xzf h200-fixtures.tar.gz -C tests/data/
# Environment: FIXTURES_BUDGET_S (default 150): no optional part starts past this many seconds.
set -uo pipefail
here=$(readlink -f -- "$0") && repo=${here%/tools/*} && cd "$repo" || exit 1
prog=h200_fixtures usage="tools/h200_fixtures.sh OUTDIR"
# shellcheck source=tools/lib_args.sh
. tools/lib_args.sh
# shellcheck source=tools/nsys_recorders.sh
. tools/nsys_recorders.sh
# The command line and the environment, before anything is made: one line and exit 1 if bad.
help_or_flags "$@"
if [ -z "$help_asked" ]; then
    no_flags "$@"
    [ $# -ge 1 ] || die "OUTDIR is missing (usage: $usage)"
    [ $# -eq 1 ] || die "unexpected argument '$2' (usage: $usage)"
    out_dir OUTDIR "$1"
fi
budget=${FIXTURES_BUDGET_S:-150}
whole FIXTURES_BUDGET_S "$budget" 0 1000000
help_done
mkdir -p "$1" || exit 1
out=$(cd "$1" && pwd)
t0=$SECONDS
name=h200-$(date -u +%F)
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
f=$work/$name
mkdir -p "$f/logs"

say() { printf '\n==== [%3ds] %s\n' $((SECONDS - t0)) "$*"; }
late() { [ $((SECONDS - t0)) -gt "$budget" ]; }

# run LOG STAGE SUBDIR FLAGS...: one traced run of bin/STAGE into $f/STAGE/SUBDIR, its output in
# logs/LOG.log, its command and exit status in FIXTURES
run() {
    local log=$1 stage=$2 sub=$3
    shift 3
    local dir=$f/$stage${sub:+/$sub} s=$SECONDS
    mkdir -p "$dir"
    timeout 90 "bin/$stage" --out "$dir" --no-check --no-plot "$@" >"$f/logs/$log.log" 2>&1
    local rc=$?
    echo "run: bin/$stage $* (exit $rc, $((SECONDS - s)) s)" >>"$f/FIXTURES"
    echo "$log: exit $rc after $((SECONDS - s)) s"
    tail -n 3 "$f/logs/$log.log"
}

schedule=(--wait 1 --warmup-steps 1 --active 3)
cold=(--wait 0 --warmup-steps 0 --active 3)

main() {
    say "machine"
    command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
    {
        echo "fixtures: traces of the current layout, recorded by tools/h200_fixtures.sh"
        date -u +"date: %Y-%m-%d"
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -n 1 | sed 's/^/gpu: /'
        nvcc --version 2>/dev/null | grep release | sed 's/^/toolkit: /'
    } >"$f/FIXTURES"
    cat "$f/FIXTURES"

    say "build"
    make -j"$(nproc)" --no-print-directory -s 01_matmul_add 02_linear 03_simple_mlp 04_fused_mlp \
        >"$f/logs/build.log" 2>&1 || { tail -n 20 "$f/logs/build.log"; echo "build failed"; return 1; }

    say "the fixtures"
    run 01_64 01_matmul_add "" --variant all "${schedule[@]}"
    run 01_4096 01_matmul_add "" --size 4096 --variant eager "${schedule[@]}"
    run 02 02_linear "" --variant all "${schedule[@]}"
    run 03_article 03_simple_mlp "" "${schedule[@]}"
    run 03_1x8 03_simple_mlp "" --batch 1 --seq 8 "${schedule[@]}"
    for v in eager fused_geglu merged epilogue; do
        run "04_$v" 04_fused_mlp "" --variant "$v" "${schedule[@]}"
    done
    # the graph rung of the committed traces: what was fastest on the H200 at each shape
    run 04_graph 04_fused_mlp "" --variant graph --graph-of epilogue "${schedule[@]}"
    run 04_1x8_decode 04_fused_mlp "" --batch 1 --seq 8 --variant decode "${schedule[@]}"
    run 04_1x8_graph 04_fused_mlp "" --batch 1 --seq 8 --variant graph --graph-of merged "${schedule[@]}"

    say "the chapters' other timelines"
    late || run 01_cold 01_matmul_add cold_step "${cold[@]}"
    late || run 01_bmm 01_matmul_add bmm --batched 8 "${schedule[@]}"
    late || run 03_cold 03_simple_mlp cold_step "${cold[@]}"

    say "Nsight Systems"
    local -A rec=()
    local order=()
    find_nsys_recorders "$work"
    local r suffix tag=1x8_768x3072_bf16_cold_eager
    mkdir -p "$f/nsys/03_simple_mlp"
    cp "$f/03_simple_mlp/$tag.json" "$f/03_simple_mlp/$tag.txt" "$f/nsys/03_simple_mlp/" 2>/dev/null
    for r in "${order[@]}"; do
        if late; then echo "$r: not started (past ${budget} s)"; continue; fi
        suffix=.$r
        echo "$r: ${rec[$r]}: $("${rec[$r]}" --version 2>&1)"
        NSYS=${rec[$r]} timeout 90 tools/nsys_capture.sh --record-only --suffix "$suffix" \
            03_simple_mlp --batch 1 --seq 8 "${schedule[@]}" --no-check >"$f/logs/nsys$suffix.log" 2>&1
        echo "$r: exit $? (logs/nsys$suffix.log)"
        tail -n 3 "$f/logs/nsys$suffix.log"
        mv traces/03_simple_mlp/"$tag$suffix".* "$f/nsys/03_simple_mlp/" 2>/dev/null
        echo "nsys: $r as $suffix, ${rec[$r]}" >>"$f/FIXTURES"
    done

    say "pack"
    find "$f" -type f \( -name '*.csv' -o -name '*.png' -o -name '*.dat' \) -delete
    tar -czf "$out/h200-fixtures.tar.gz" -C "$work" "$name"
    ls -l "$out"
    say "done"
}
main 2>&1 | tee "$out/log.txt"
