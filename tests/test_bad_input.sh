#!/usr/bin/env bash
# Bad input to every program, one PASS/FAIL line per case: the four stages, bin/ceilings,
# bin/decode_timeline, ./run, ./run --compare, ./run 04_fused_mlp --shapes, and the scripts of
# compare/, bench/ and tools/. Each case must
#   - exit with status 1,
#   - print nothing on stdout and exactly one line on stderr, "<program>: error: ..." naming the
#     problem (each case gives a piece of that line), with no control character in it (C0, DEL
#     or C1, such as U+009B): a bad name is shown with '?' for them,
#   - create, change and remove nothing: it runs in a scratch directory of its own (its working
#     directory and its TMPDIR), which holds the fixtures below and is compared before and after.
# Among the inputs: names holding shell syntax ($(...), backticks, quotes, backslashes, a newline)
# beside a bad flag, which must refuse without running anything (the file PWNED would appear);
# special files as outputs: /proc, /sys, /dev/full, a FIFO, a directory, symbolic links to a
# file and to nothing, a path below a regular file; and as inputs: missing files, folders, FIFOs
# (which must never be opened: a program that did would hang until the case's time limit),
# dangling links, binary files, text that is not JSON or not the CSV asked for. ./run's cases also
# check that a refused run leaves .last_stage as it was, with a Makefile that writes it as the
# real one does.
# Then each program's --help: usage on stdout, exit 0, nothing else.
# No GPU is needed: every case is refused before the GPU is looked for, so the suite means the
# same on a machine with one. The Python programs check their command lines without NumPy or
# PyTorch: the cases run with stand-ins for both on the module path that exit 99 if imported.
# Cases run side by side, two per CPU; lines print in order; the exit status is 1 when
# any case failed.
# The shell syntax in the cases' arguments is meant literally: it must reach the programs as it is.
# shellcheck disable=SC2016,SC1003
set -u
shopt -s extglob
cd "$(dirname "$0")/.." || exit 1
repo=$PWD
# ./run's cases build under make: a make running this suite must not lend them its jobserver
unset MAKEFLAGS MFLAGS MAKELEVEL
# the scripts' settings come from the environment: each case gives its own
unset RUN_ONLY LIMIT TESTS_LIMIT SANITIZE_LIMIT GRID_BUDGET GRID_DIR TRACE_DIR IMG_DIR OUT NSYS_BUDGET_S \
    FIXTURES_BUDGET_S NSYS_HOST_PREFIX NSYS QDSTRM_IMPORTER
root=$(mktemp -d) || exit 1
trap 'rm -rf "$root"' EXIT

stages=()
for s in 01_matmul_add 02_linear 03_simple_mlp 04_fused_mlp; do
    if [ -x "bin/$s" ]; then stages+=("$s"); else echo "SKIP bad input to $s: bin/$s not built (make $s)"; fi
done
for b in ceilings decode_timeline; do
    [ -x "bin/$b" ] || echo "SKIP bad input to $b: bin/$b not built (make all)"
done

# The fixtures every case starts from. co/ is a checkout for ./run: its scripts (and those of
# compare/, bench/ and tools/), the stages' folders, bin/ (a link to the real one) and a Makefile
# under which every stage is built and which writes .last_stage as the real one does (make
# STAGE). Inputs that are not what they should be: binary.csv (not text), text.txt (not JSON),
# foreign.json (JSON, no trace), list.json, badrow.csv (a grid CSV whose dim is not a number),
# good.csv (a per-step CSV), step.csv beside step.json, a FIFO; results/ holds an env.txt; grid/
# a shape_grid.csv with no point.
t=$root/template
# a fontconfig file that names no font: fc-list lists none, so no font has Hangul
nofonts=$root/nofonts.conf
printf '<?xml version="1.0"?>\n<fontconfig></fontconfig>\n' >"$nofonts"
mkdir -p "$t/dir" "$t/tmp" "$t/results" "$t/grid" "$t/co/compare" "$t/co/bench" "$t/co/tools" "$t/co/tests"
echo x >"$t/file"
mkfifo "$t/fifo"
ln -s nowhere "$t/dangling"
ln -s file "$t/link_to_file"
printf '\x00\xff\xfe\x9b\n' >"$t/binary.csv"
echo 'not JSON' >"$t/text.txt"
echo '{"a": 1}' >"$t/foreign.json"
echo '[1, 2]' >"$t/list.json"
echo '{"traceEvents": []}' >"$t/empty.json"
printf 'step,phase,cpu_us,gpu_us,gated\n0,active,1.0,2.0,0\n' | tee "$t/good.csv" >"$t/step.csv"
mkfifo "$t/step.json"
grid_header=dim,hidden,tokens,floor_us,eager_us,fused_geglu_us,merged_us,epilogue_us,graph_us,decode_us
grid_header+=,cublas_gemm_us,our_gemm_us,our_gemm_version,torch_eager_us,torch_compile_us,torch_best_us,sm_mhz,watts
printf '%s\nx,3072,8,,,,,,,,,,,,,,,\n' "$grid_header" >"$t/badrow.csv"
printf '%s\n' "$grid_header" >"$t/grid/shape_grid.csv"
echo 'date: 2026-12-01 00:00 UTC' >"$t/results/env.txt"
ln -s co/run "$t/runlink"
mkdir "$t/nopy"
for m in numpy torch; do echo 'raise SystemExit(99)' >"$t/nopy/$m.py"; done
ln -s co/compare/run_compare.sh "$t/comparelink"
cp run "$t/co/"
cp compare/*.sh compare/*.py "$t/co/compare/"
cp bench/*.sh bench/*.py "$t/co/bench/"
cp tools/*.sh tools/*.py "$t/co/tools/"
cp tests/doc_numbers.py "$t/co/tests/"
ln -s "$repo/bin" "$t/co/bin"
for s in "${stages[@]}"; do
    mkdir "$t/co/$s" && : >"$t/co/$s/main.c"
    printf '.PHONY: %s\n%s: bin/%s\n\t@echo %s > .last_stage\n' "$s" "$s" "$s" "$s" >>"$t/co/Makefile"
done

# What a case may not change: names, kinds, link targets, sizes, modes (one directory, read
# twice in the same order unless something changed), and what co/.last_stage says.
listing() {
    find . -printf '%p %y %l %s %m\n'
    if [ -f co/.last_stage ] && [ ! -L co/.last_stage ]; then head -c 100 co/.last_stage | tr "\0" "@"; fi
}
shown() { printf '%s' "$*" | tr -c '[:print:]' '?'; }

# has_control TEXT: TEXT holds a control character (C0, DEL, or C1 such as U+009B)
has_control() {
    local LC_ALL=C
    [[ $1 == *[[:cntrl:]]* || $1 == *$'\xc2'[$'\x80'-$'\x9f']* ]]
}

# one_case ID LABEL PREFIX NEEDLE LAST_STAGE SETUP COMMAND...: the case's PASS/FAIL line.
# PREFIX is a pattern (extglob) the line starts with; LAST_STAGE: "-" for none, else what
# co/.last_stage holds; SETUP: shell commands run in the case's directory before it starts
# (the fixtures they make are part of what must not change), "" for none
one_case() {
    local id=$1 label=$2 prefix=$3 needle=$4 last_stage=$5 setup=$6
    shift 6
    local dir=$root/case.$id out=$root/out.$id err=$root/err.$id
    cp -a "$t" "$dir" || { echo "FAIL $label: cannot copy the fixtures"; return; }
    [ "$last_stage" = - ] || printf '%s' "$last_stage" >"$dir/co/.last_stage"
    [ -z "$setup" ] || (cd "$dir" && eval "$setup") || { echo "FAIL $label: setup failed"; return; }
    local before after rc text="" newlines
    before=$(cd "$dir" && listing)
    (cd "$dir" && TMPDIR="$dir/tmp" PYTHONPATH="$dir/nopy" exec timeout 20 "$@" >"$out" 2>"$err" </dev/null)
    rc=$?
    after=$(cd "$dir" && listing)
    IFS= read -r -d '' text <"$err"
    newlines=${text//[!$'\n']/}
    local why=""
    # shellcheck disable=SC2053 # PREFIX is a pattern
    if [ "$rc" -ne 1 ]; then why="exit $rc, expected 1"
    elif [ -s "$out" ]; then why="wrote to stdout: $(shown "$(head -c 200 "$out")")"
    elif [ ${#newlines} -ne 1 ] || [[ $text != *$'\n' ]]; then why="${#newlines} lines on stderr, expected one"
    elif [[ $text != $prefix* ]]; then why="the line does not start with '$prefix'"
    elif [[ $text != *"$needle"* ]]; then why="the line does not say '$(shown "$needle")'"
    elif has_control "${text%$'\n'}"; then why="the line holds a control character"
    elif [ "$before" != "$after" ]; then
        why="files changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -3 | tr '\n' ' ')"
    fi
    if [ -z "$why" ]; then echo "PASS $label"
    else echo "FAIL $label: $why; stderr: $(shown "$(head -c 300 "$err")")"; fi
    rm -rf "$dir" "$out" "$err"
}

jobs_max=$((2 * $(nproc 2>/dev/null || echo 2)))
n=0 running=0
setup=""  # shell commands the next queued case runs first (see one_case)
queue() {  # queue LABEL PREFIX NEEDLE LAST_STAGE COMMAND...: runs one_case in the background
    if [ "$running" -ge "$jobs_max" ]; then
        wait -n
        running=$((running - 1))
    fi
    one_case "$n" "$(shown "$1")" "${@:2:3}" "$setup" "${@:5}" >"$root/result.$n" &
    n=$((n + 1)) running=$((running + 1))
    setup=""
}
# bad PROGRAM NEEDLE ARGS...: bin/PROGRAM ARGS
bad() {
    local program=$1 needle=$2
    shift 2
    [ -x "bin/$program" ] || return 0
    queue "$program $*" "$program: error: " "$needle" - "$repo/bin/$program" "$@"
}
# via_run PREFIX NEEDLE ARGS...: co/run ARGS
via_run() {
    local prefix=$1 needle=$2
    shift 2
    queue "./run $*" "$prefix" "$needle" - co/run "$@"
}
# with_last_stage TEXT PREFIX NEEDLE ARGS...: co/run ARGS, co/.last_stage holding TEXT
with_last_stage() {
    local text=$1 prefix=$2 needle=$3
    shift 3
    queue "./run${*:+ $*} (.last_stage: $text)" "$prefix" "$needle" "$text" co/run "$@"
}

ctl=$(printf 'a\nb')
# The parser's own refusals, the same code in every program: on the first stage.
first=${stages[0]:-}
if [ -n "$first" ]; then
    bad "$first" "unknown flag '-x'" -x
    bad "$first" "unexpected argument '-'" -
    bad "$first" "unknown flag '--'" --
    bad "$first" "unexpected argument 'stray'" stray
    bad "$first" "--dtype needs a value" --dtype
    bad "$first" "unknown dtype 'int8'" --dtype int8
    bad "$first" "unknown dtype ''" --dtype ''
    bad "$first" "'abc' is not a whole number" --steps abc
    bad "$first" "'-5' is not a whole number" --steps -5
    bad "$first" "--steps: 0 is too small" --steps 0
    bad "$first" "'1e3' is not a whole number" --steps 1e3
    bad "$first" "'0x10' is not a whole number" --steps 0x10
    bad "$first" "' 12' is not a whole number" --steps ' 12'
    bad "$first" "is too large" --steps 99999999999999999999
    bad "$first" "--steps needs a number, got an empty value" --steps=
    bad "$first" "--wait: '-1' is not a whole number" --wait -1
    bad "$first" "--warmup: 'abc' is not a whole number" --warmup abc
    bad "$first" "--warmup-steps: 100001 is too large" --warmup-steps 100001
    bad "$first" "--seed: 'x' is not a whole number" --seed x
    bad "$first" "is not a 64-bit whole number" --seed 18446744073709551616
    bad "$first" "unknown variant 'nope'" --variant nope
    bad "$first" "unknown variant 'a?b'" --variant "$ctl"
    bad "$first" "ambiguous flag '--s'" --s 64
    bad "$first" "abbreviations are refused: write --dtype" --dty fp16
    bad "$first" "--sweep takes no value" --sweep=1
    bad "$first" "--no-trace takes no value" --no-trace=yes
    bad "$first" "--no-check takes no value" --no-check=1
    bad "$first" "--trace-api: 'bogus' is neither" --trace-api bogus
    bad "$first" "--hold: 0 is too small" --hold 0
    bad "$first" "--hold: 3601 is too large" --hold 3601
    bad "$first" "--out: directory name empty" --out ''
fi
# What each stage does with what the parser hands it: every stage.
for s in "${stages[@]}"; do
    bad "$s" "unknown flag '--bogus'" --bogus
    bad "$s" "unknown flag '--bogus'" --help --bogus
    bad "$s" "unknown flag '--bogus'" --bogus --help
    bad "$s" "--help given twice" --help --help
    bad "$s" "--help takes no value" --help=1
    bad "$s" "--steps given twice" --steps 3 --steps 4
    bad "$s" "--steps and --active are one flag" --steps 3 --active 4
    bad "$s" "--active and --steps are one flag" --active 3 --steps 4
    bad "$s" "--dtype given twice" --dtype fp16 --dtype bf16
    bad "$s" "--no-plot given twice" --no-plot --no-plot
    bad "$s" "unknown variant '\$(touch PWNED)'" --variant '$(touch PWNED)'
    bad "$s" "--trace-api does nothing with --no-trace" --no-trace --trace-api all
    bad "$s" "--trace-api does nothing with --no-trace" --trace-api all --no-trace
    bad "$s" "--sweep does not take --trace-api" --sweep --trace-api all
    bad "$s" "--sweep does not take --wait" --sweep --wait 0
    bad "$s" "--sweep does not take --warmup" --sweep --warmup 2
    bad "$s" "--sweep does not take --dump" --sweep --dump d
    bad "$s" "--sweep does not take --hold" --sweep --hold 1
    bad "$s" "--out: cannot create output directory /dev/null/x: Not a directory" --out /dev/null/x
    bad "$s" "/proc is on proc, a kernel file system" --out /proc
    bad "$s" "/sys is on sysfs, a kernel file system" --out /sys/x
    bad "$s" "is on proc" --out /proc/self/fd
    bad "$s" "dangling is a symbolic link to nothing" --out dangling
    bad "$s" "dangling is a symbolic link to nothing" --out dangling/sub
    bad "$s" "file is a regular file, not a directory" --out file
    bad "$s" "link_to_file is a regular file, not a directory" --out link_to_file
    bad "$s" "fifo is a FIFO, not a directory" --out fifo
    bad "$s" "/dev/full is a character device, not a directory" --out /dev/full
    bad "$s" "cannot create output directory file/sub: Not a directory" --out file/sub
    bad "$s" "--out: 'a?b' holds a control character (byte 0x0a)" --out "$ctl"
    bad "$s" "--out given twice" --out a --out b
    bad "$s" "--dump: cannot create output directory /dev/null/x" --dump /dev/null/x
    bad "$s" "--dump: cannot create output directory /proc" --dump /proc
    bad "$s" "dangling is a symbolic link to nothing" --dump dangling
    bad "$s" "fifo is a FIFO, not a directory" --dump fifo
    bad "$s" "--dump: 'a?b' holds a control character" --dump "$ctl"
    # shell syntax in a name beside a bad flag: refused, and nothing runs
    bad "$s" "unknown flag '--bogus'" --out 'd$(touch PWNED)' --bogus
    bad "$s" "--steps: 0 is too small" --out 'd`touch PWNED`' --steps 0
    bad "$s" "unknown dtype 'x'" --out 'q"; touch PWNED; "' --dtype x
    bad "$s" "--seed: '-1' is not a whole number" --dump "s'; touch PWNED; '" --seed -1
    bad "$s" "--wait: 'x' is not a whole number" --out 'back\slash\' --wait x
    bad "$s" "--hold: 0 is too small" --out 'with space' --hold 0
    bad "$s" "is a symbolic link to nothing" --out 'new$(touch PWNED)' --dump dangling
done

bad 01_matmul_add "--size: 0 is too small" --size 0
bad 01_matmul_add "--size: 32769 is too large" --size 32769
bad 01_matmul_add "--batched: 'x' is not a whole number" --batched=x
bad 01_matmul_add "--batched: 0 is too small" --batched 0
bad 01_matmul_add "--size given twice" --size 64 --size 64
bad 01_matmul_add "--sweep does not take --size: it sweeps size itself" --sweep --size 64
bad 01_matmul_add "need 43980.50 GB of device memory, more than any GPU holds" --size 32768 --batched 4096
bad 01_matmul_add "need 87960.96 GB of device memory, more than any GPU holds" --size 32768 --batched 4096 --dtype fp32
bad 01_matmul_add "more than any GPU holds" --variant all --size 32768 --batched 1024
bad 02_linear "--explain-views does not take --out" --explain-views --out d
bad 02_linear "--explain-views does not take --hold" --explain-views --hold 1
bad 02_linear "--explain-views does not take --dump" --explain-views --dump d
bad 02_linear "--explain-views does not take --sweep" --explain-views --sweep
bad 02_linear "--explain-views does not take --batch" --explain-views --batch 8
bad 02_linear "--explain-views does not take --variant" --explain-views --variant view
bad 02_linear "--explain-views does not take --steps" --explain-views --steps 3
bad 02_linear "--explain-views takes no value" --explain-views=1
bad 02_linear "--explain-views given twice" --explain-views --explain-views
bad 02_linear "--in_dim: 0 is too small" --in_dim 0
bad 02_linear "--out_dim: 65537 is too large" --out_dim 65537
bad 02_linear "--sweep does not take --batch" --sweep --batch 4
bad 02_linear "more than any GPU holds" --batch 16777216 --in_dim 65536 --out_dim 65536 --dtype fp32
for s in 03_simple_mlp 04_fused_mlp; do
    bad "$s" "cuBLAS takes at most 2147483647 rows" --batch 65536 --seq 65536 --dim 1 --hidden 1
    bad "$s" "need 2533377.94 GB of device memory, more than any GPU holds" \
        --batch 1048576 --seq 1024 --dim 65536 --hidden 262144
    bad "$s" "more than any GPU holds" --batch 1 --seq 1 --dim 1048576 --hidden 1048576
    bad "$s" "--hidden: 0 is too small" --hidden 0
    bad "$s" "--dim: 1048577 is too large" --dim 1048577
    bad "$s" "--sweep does not take --seq" --sweep --seq 4
    bad "$s" "--batch given twice" --batch 2 --batch 2
done
bad 04_fused_mlp "--variant decode is not available here: 17 tokens" --variant decode --batch 1 --seq 17
bad 04_fused_mlp "--variant epilogue is not available here: fp32" --variant epilogue --dtype fp32
bad 04_fused_mlp "--gemm: '99' is not a version" --variant epilogue --gemm 99
bad 04_fused_mlp "--gemm given twice" --gemm 1 --gemm 2
bad 04_fused_mlp "--gemm: 'a?b' holds a control character (byte 0x09)" --gemm "$(printf 'a\tb')"
bad 04_fused_mlp "--gemm does not apply to --variant merged" --variant merged --gemm 1
bad 04_fused_mlp "--graph-of: 'graph' is not a rung" --graph-of graph
bad 04_fused_mlp "--graph-of does not apply to --variant eager" --variant eager --graph-of merged
bad 04_fused_mlp "--graph-of: 'x\$(touch PWNED)' is not a rung" --graph-of 'x$(touch PWNED)'

bad ceilings "unknown flag '--bogus'" --bogus
bad ceilings "unexpected argument 'x'" x
bad ceilings "unknown flag '--bogus'" --help --bogus
bad ceilings "unexpected argument 'x'" --help x
bad ceilings "--help given twice" --help --help
bad ceilings "--help takes no value" --help=1
bad ceilings "unknown flag '-h'" -h
bad ceilings "unknown flag '--he'" --he
bad ceilings "unknown flag '--steps'" --steps 3
bad ceilings "unknown flag '--out'" --out d
bad ceilings "unknown flag '--\$(touch PWNED)'" '--$(touch PWNED)'
bad ceilings "unexpected argument '\`touch PWNED\`'" '`touch PWNED`'

bad decode_timeline "unknown flag '--bogus'" --bogus
bad decode_timeline "unexpected argument 'stray'" stray
bad decode_timeline "unknown flag '-t'" -t 8
bad decode_timeline "unknown flag '--bogus'" --help --bogus
bad decode_timeline "--help given twice" --help --help
bad decode_timeline "--tokens: 17 is too large (at most 16)" --tokens 17
bad decode_timeline "--tokens: 0 is too small" --tokens 0
bad decode_timeline "--tokens: 'x' is not a whole number" --tokens x
bad decode_timeline "--tokens given twice" --tokens 4 --tokens 5
bad decode_timeline "abbreviations are refused: write --tokens" --tok 4
bad decode_timeline "--dim: 0 is too small" --dim 0
bad decode_timeline "--dim: 1048577 is too large" --dim 1048577
bad decode_timeline "--hidden: '12x' is not a whole number" --hidden 12x
bad decode_timeline "the decode kernels take bf16 or fp16 operands, got 'fp32'" --dtype fp32
bad decode_timeline "got 'int8'" --dtype int8
bad decode_timeline "--dtype needs a value, got an empty one" --dtype ''
bad decode_timeline "--cold-l2 takes no value" --cold-l2=1
bad decode_timeline "--cold-l2 given twice" --cold-l2 --cold-l2
bad decode_timeline "unknown flag '--steps'" --steps 3
bad decode_timeline "unknown flag '--out'" --out d
bad decode_timeline "more than any GPU holds" --dim 1048576 --hidden 1048576
bad decode_timeline "--csv needs a value" --csv
bad decode_timeline "--csv needs a value, got an empty one" --csv ''
bad decode_timeline "--csv given twice" --csv a.csv --csv b.csv
bad decode_timeline "--csv: cannot write /dev/full: it is a character device" --csv /dev/full
bad decode_timeline "--csv: cannot write dir: it is a directory" --csv dir
bad decode_timeline "--csv: cannot write fifo: it is a FIFO" --csv fifo
bad decode_timeline "--csv: cannot write link_to_file: it is a symbolic link" --csv link_to_file
bad decode_timeline "--csv: cannot write dangling: it is a symbolic link" --csv dangling
bad decode_timeline "dangling is a symbolic link to nothing" --csv dangling/x.csv
bad decode_timeline "--csv: cannot write /dev/null/x: Not a directory" --csv /dev/null/x
bad decode_timeline "--csv: cannot write file/x.csv: Not a directory" --csv file/x.csv
bad decode_timeline "/proc is on proc, a kernel file system" --csv /proc/x.csv
bad decode_timeline "/sys is on sysfs, a kernel file system" --csv /sys/x/y.csv
bad decode_timeline "'dir/' names a directory, not a file" --csv dir/
bad decode_timeline "--csv: 'a?b' holds a control character" --csv "$ctl"
bad decode_timeline "--tokens: 0 is too small" --csv 'x$(touch PWNED).csv' --tokens 0
bad decode_timeline "--dim: 0 is too small" --csv 'x`touch PWNED`/y.csv' --dim 0
bad decode_timeline "got 'fp32'" --csv "q'\"; touch PWNED; \"'.csv" --dtype fp32

if [ ${#stages[@]} -eq 4 ]; then
    via_run "run: error: " "unknown stage 'nope'" nope
    via_run "run: error: " "unknown stage '01_matmul_add/.'" 01_matmul_add/.
    via_run "run: error: " "unknown stage '01_matmul_add/..'" 01_matmul_add/..
    via_run "run: error: " "unknown stage './01_matmul_add'" ./01_matmul_add
    via_run "run: error: " "unknown stage '../01_matmul_add'" ../01_matmul_add
    via_run "run: error: " "unknown stage '01_matmul_add/'" 01_matmul_add//
    via_run "run: error: " "unknown stage 'bin'" bin
    via_run "run: error: " "unknown stage 'compare'" compare
    via_run "run: error: " "unknown stage ''" ''
    via_run "run: error: " "unknown stage 'a?b'" "$ctl"
    via_run "run: error: " "unknown stage '01\$(touch PWNED)'" '01$(touch PWNED)'
    with_last_stage ../../../bin/echo "run: error: " ".last_stage names '../../../bin/echo', which is not a stage" --x
    with_last_stage nope "run: error: " ".last_stage names 'nope', which is not a stage"
    with_last_stage 01_matmul_add/. "run: error: " ".last_stage names '01_matmul_add/.', which is not a stage" --steps 3
    with_last_stage "$(printf '01_matmul_add\nmore')" "run: error: " \
        ".last_stage names '01_matmul_add?more', which is not a stage"
    with_last_stage "" "run: error: " ".last_stage names '', which is not a stage"
    via_run "01_matmul_add: error: " "unknown flag '--bogus'" 01_matmul_add --bogus
    via_run "02_linear: error: " "--explain-views does not take --out" 02_linear/ --explain-views --out d
    via_run "03_simple_mlp: error: " "dangling is a symbolic link to nothing" 03_simple_mlp --out ../dangling
    via_run "04_fused_mlp: error: " "--steps given twice" 04_fused_mlp --steps 1 --steps 2
    via_run "compare: error: " "unknown stage 'nope'" --compare nope
    via_run "compare: error: " "unknown stage '01_matmul_add/.'" --compare 01_matmul_add/.
    via_run "01_matmul_add: error: " "unknown flag '--bogus'" --compare 01_matmul_add --bogus
    via_run "03_simple_mlp: error: " "--dtype given twice" --compare 03_simple_mlp --dtype fp16 --dtype bf16
    via_run "04_fused_mlp: error: " "--gemm given twice" --compare 04_fused_mlp --gemm 1 --gemm 2
    via_run "compare: error: " "--sweep is not for a comparison" --compare 01_matmul_add --sweep
    via_run "compare: error: " "--help is not for a comparison" --compare 02_linear --help
    via_run "compare: error: " "--torch-variant: 'x' is not eager, compile, graph or all" --compare 01_matmul_add --torch-variant x
    via_run "compare: error: " "--torch-variant needs a value" --compare 01_matmul_add --torch-variant
    via_run "compare: error: " "--out: directory name empty" --compare 01_matmul_add --out ''
    if command -v python3 >/dev/null; then
        via_run "compare/matmul_add.py: error: " "unrecognized arguments: --hold 3" --compare 01_matmul_add --hold 3
        via_run "compare/linear.py: error: " "unrecognized arguments: --explain-views" --compare 02_linear --explain-views
    fi
fi

# ---- the wrappers, the scripts and the tools ---------------------------------------------------
# cmd PREFIX NEEDLE COMMAND...: COMMAND run in the case's directory (the fixtures at ., the
# checkout at co/; the scripts that start from their checkout read names from co/, hence ../)
cmd() {
    local prefix=$1 needle=$2
    shift 2
    queue "$*" "$prefix" "$needle" - "$@"
}
c1=$'\xc2\x9b'  # U+009B, a C1 control character, as UTF-8
if [ ${#stages[@]} -eq 4 ]; then
    # .last_stage names the stage that last ran; a refused run, of another stage or the same,
    # leaves it as it was (the checkout's Makefile writes it on `make STAGE`, as the real one)
    with_last_stage 03_simple_mlp "01_matmul_add: error: " "unknown flag '--bogus'" 01_matmul_add --bogus
    with_last_stage 01_matmul_add "02_linear: error: " "--steps given twice" 02_linear --steps 1 --steps 2
    with_last_stage 01_matmul_add "03_simple_mlp: error: " "--hidden: 0 is too small" 03_simple_mlp --hidden 0
    with_last_stage 02_linear "04_fused_mlp: error: " "--gemm given twice" 04_fused_mlp --gemm 1 --gemm 2
    with_last_stage 03_simple_mlp "03_simple_mlp: error: " "unknown flag '--bogus'" 03_simple_mlp --bogus
    with_last_stage 02_linear "02_linear: error: " "unknown flag '--bogus'" --bogus
    with_last_stage 01_matmul_add "01_matmul_add: error: " "/proc is on proc" --out /proc/x
    with_last_stage 01_matmul_add "shape_grid: error: " "unrecognized arguments: --bogus" 04_fused_mlp --shapes --bogus
    with_last_stage 03_simple_mlp "shape_grid: error: " "--tokens given twice" 04_fused_mlp --shapes --tokens 8 --tokens 9
    with_last_stage 03_simple_mlp "compare: error: " "--torch-variant given twice" \
        --compare 01_matmul_add --torch-variant eager --torch-variant all
    with_last_stage 02_linear "01_matmul_add: error: " "unknown flag '--bogus'" --compare 01_matmul_add --bogus
    # no .last_stage: the whole ladder, refused before any stage runs (nothing printed, none made)
    via_run "01_matmul_add: error: " "unknown flag '--bogus'" --bogus
    via_run "01_matmul_add: error: " "--steps: 0 is too small" --steps 0
    via_run "01_matmul_add: error: " "unknown flag '--bogus'" --help --bogus
    # .last_stage that is not a regular file, or too long to quote
    setup='ln -s ../file co/.last_stage'
    via_run "run: error: " ".last_stage is not a regular file"
    setup='ln -s run co/.last_stage'
    via_run "run: error: " ".last_stage is not a regular file" --steps 3
    setup='ln -s nowhere co/.last_stage'
    via_run "run: error: " ".last_stage is not a regular file"
    setup='mkdir co/.last_stage'
    via_run "run: error: " ".last_stage is not a regular file"
    setup='mkfifo co/.last_stage'
    via_run "run: error: " ".last_stage is not a regular file"
    setup='mkfifo co/.last_stage'  # never written through, nor waited on
    via_run "01_matmul_add: error: " "unknown flag '--bogus'" 01_matmul_add --bogus
    setup='ln -s ../file co/.last_stage'
    via_run "02_linear: error: " "unknown flag '--bogus'" 02_linear --bogus
    with_last_stage "$(printf 'x%.0s' {1..300})" "run: error: " ".last_stage names '$(printf 'x%.0s' {1..64})...'"
    setup='printf "01_matmul_add\\0x" >co/.last_stage'
    via_run "run: error: " ".last_stage names '01_matmul_add?x', which is not a stage"
    # TMPDIR unusable: the stage's own refusal still comes first
    cmd "01_matmul_add: error: " "unknown flag '--bogus'" env TMPDIR=/nonexistent co/run 01_matmul_add --bogus
    cmd "02_linear: error: " "--explain-views does not take --out" env TMPDIR=/nonexistent co/run 02_linear --explain-views --out d
    cmd "compare/shapes.py: error: " "--dim given twice" env TMPDIR=/nonexistent co/run --compare shapes --dim 1 --dim 2
    # ./run and run_compare.sh through a symbolic link find their checkout
    cmd "01_matmul_add: error: " "unknown flag '--bogus'" ./runlink 01_matmul_add --bogus
    cmd "run: error: " "unknown stage 'nope' (stages: 01_matmul_add 02_linear" ./runlink nope
    cmd "04_fused_mlp: error: " "--steps given twice" ./runlink 04_fused_mlp --steps 1 --steps 2
    cmd "compare: error: " "--torch-variant given twice" ./runlink --compare 02_linear --torch-variant all --torch-variant all
    cmd "shape_grid: error: " "unrecognized arguments: --bogus" ./runlink 04_fused_mlp --shapes --bogus
    cmd "01_matmul_add: error: " "unknown flag '--bogus'" ./comparelink 01_matmul_add --bogus
    cmd "compare: error: " "--torch-variant given twice" ./comparelink 01_matmul_add --torch-variant=all --torch-variant all
    # sh run: one line, exit 1 (not dash's 'Illegal option -o pipefail' and exit 2)
    cmd "run: error: " "with bash" sh co/run
    cmd "run: error: " "with bash" sh co/run 01_matmul_add --bogus
    cmd "run: error: " "with bash" sh co/run --compare 01_matmul_add
    # ./run --compare: a flag given twice, and what the stage or PyTorch's script refuses, before
    # PyTorch is looked for
    via_run "compare: error: " "--torch-variant given twice" --compare 01_matmul_add --torch-variant eager --torch-variant compile
    via_run "compare: error: " "--torch-variant given twice" --compare 04_fused_mlp --torch-variant=eager --torch-variant=eager
    via_run "compare: error: " "--torch-variant given twice" --compare 03_simple_mlp --torch-variant all --torch-variant x
    via_run "@(01_matmul_add|compare/matmul_add.py): error: " "../file is" --compare 01_matmul_add --out ../file
    via_run "@(02_linear|compare/linear.py): error: " "cannot create output directory /dev/null/x" --compare 02_linear --out /dev/null/x
    via_run "@(03_simple_mlp|compare/mlp.py): error: " "cannot create output directory /proc/x" --compare 03_simple_mlp --out /proc/x
    via_run "@(04_fused_mlp|compare/mlp.py): error: " "../dangling is a symbolic link to nothing" --compare 04_fused_mlp --out ../dangling
    via_run "@(01_matmul_add|compare/matmul_add.py): error: " "../fifo is" --compare 01_matmul_add --out ../fifo
    via_run "@(02_linear|compare/linear.py): error: " "../link_to_file is" --compare 02_linear --out ../link_to_file
    via_run "@(01_matmul_add|compare/matmul_add.py): error: " "cannot create output directory ../file/sub" --compare 01_matmul_add --out ../file/sub
    # (these need the stage's --help to run its checks without a GPU: the variant against the
    # dtype, the sizes)
    via_run "04_fused_mlp: error: " "--variant epilogue is not available here: fp32" --compare 04_fused_mlp --variant epilogue --dtype fp32
    via_run "03_simple_mlp: error: " "cuBLAS takes at most 2147483647 rows" --compare 03_simple_mlp --batch 46341 --seq 46341
    via_run "04_fused_mlp: error: " "cuBLAS takes at most 2147483647 rows" --compare 04_fused_mlp --batch 46341 --seq 46341
    # ./run --compare shapes: compare/shapes.py's own checks
    via_run "compare/shapes.py: error: " "--tokens given twice" --compare shapes --tokens 1 --tokens 2
    via_run "compare/shapes.py: error: " "unrecognized arguments: --bogus" --compare shapes --help --bogus
    via_run "compare/shapes.py: error: " "unrecognized arguments: --bogus" --compare shapes --bogus --help
    via_run "compare/shapes.py: error: " "--out: ../file is not a directory" --compare shapes --out ../file
    via_run "compare/shapes.py: error: " "cannot create output directory /proc/x" --compare shapes --out /proc/x
    via_run "compare/shapes.py: error: " "--out: 'a?b' holds a control character" --compare shapes --out "$ctl"
    via_run "compare/shapes.py: error: " "--out: '?' holds a control character" --compare shapes --out "$c1"
    via_run "compare/shapes.py: error: " "--help given twice" --compare shapes --help --help
    # ./run 04_fused_mlp --shapes: bench/shape_grid.py's checks, before any folder is made
    via_run "shape_grid: error: " "--out: ../file is not a directory" 04_fused_mlp --shapes --out ../file
    via_run "shape_grid: error: " "--out: ../link_to_file is not a directory" 04_fused_mlp --shapes --out ../link_to_file
    via_run "shape_grid: error: " "cannot create output directory /proc/x" 04_fused_mlp --shapes --out /proc/x
    via_run "shape_grid: error: " "cannot create output directory /proc/self/x" 04_fused_mlp --shapes --out /proc/self/x
    via_run "shape_grid: error: " "cannot create output directory /sys/x" 04_fused_mlp --shapes --out /sys/x
    via_run "shape_grid: error: " "cannot create output directory /dev/null/x" 04_fused_mlp --shapes --out /dev/null/x
    via_run "shape_grid: error: " "cannot create output directory ../file/sub" 04_fused_mlp --shapes --out ../file/sub
    via_run "shape_grid: error: " "../dangling is a symbolic link to nothing" 04_fused_mlp --shapes --out ../dangling
    via_run "shape_grid: error: " "../dangling is a symbolic link to nothing" 04_fused_mlp --shapes --out ../dangling/sub
    via_run "shape_grid: error: " "--out: ../fifo is not a directory" 04_fused_mlp --shapes --out ../fifo
    via_run "shape_grid: error: " "--out: 'a?b' holds a control character" 04_fused_mlp --shapes --out "$ctl"
    via_run "shape_grid: error: " "--out: 'x?' holds a control character" 04_fused_mlp --shapes --out "x$c1"
    via_run "shape_grid: error: " "--out given twice" 04_fused_mlp --shapes --out ../dir/a --out ../dir/b
    via_run "shape_grid: error: " "--models given twice" 04_fused_mlp --shapes --models 768x3072 --models 4096x11008
    via_run "shape_grid: error: " "--rounds given twice" 04_fused_mlp --shapes --rounds 1 --rounds 2
    via_run "shape_grid: error: " "--seed given twice" 04_fused_mlp --shapes --seed 1 --seed=2
    via_run "shape_grid: error: " "--budget-s given twice" 04_fused_mlp --shapes --budget-s 1 --budget-s 2
    via_run "shape_grid: error: " "--no-torch given twice" 04_fused_mlp --shapes --no-torch --no-torch
    via_run "shape_grid: error: " "--no-plot given twice" 04_fused_mlp --shapes --no-plot --no-plot
    via_run "shape_grid: error: " "--plot-only given twice" 04_fused_mlp --shapes --plot-only --plot-only --out ../grid
    via_run "shape_grid: error: " "unrecognized arguments: --bogus" 04_fused_mlp --shapes --help --bogus
    via_run "shape_grid: error: " "unrecognized arguments: --bogus" 04_fused_mlp --shapes --bogus --help
    via_run "shape_grid: error: " "cannot create output directory /proc/x" 04_fused_mlp --shapes --help --out /proc/x
    via_run "shape_grid: error: " "--plot-only and --no-plot leave nothing to do" 04_fused_mlp --shapes --help --plot-only --no-plot
    via_run "shape_grid: error: " "--help given twice" 04_fused_mlp --shapes --help --help
    via_run "shape_grid: error: " "'?' is not a comma-separated list of DIMxHIDDEN" 04_fused_mlp --shapes --models "$c1"
    via_run "shape_grid: error: " "--out: ../nope has no shape_grid.csv" 04_fused_mlp --shapes --plot-only --out ../nope
    setup='cp binary.csv grid/shape_grid.csv'
    via_run "shape_grid: error: " "shape_grid.csv is not a CSV of this grid" 04_fused_mlp --shapes --plot-only --out ../grid
    setup='rm grid/shape_grid.csv && mkfifo grid/shape_grid.csv'
    via_run "shape_grid: error: " "shape_grid.csv is not a regular file" 04_fused_mlp --shapes --plot-only --out ../grid
    setup='cp badrow.csv grid/shape_grid.csv'
    via_run "shape_grid: error: " "shape_grid.csv is not a CSV of this grid" 04_fused_mlp --shapes --plot-only --out ../grid
    setup='cp badrow.csv grid/shape_grid.csv'
    via_run "shape_grid: error: " "shape_grid.csv is not a CSV of this grid" 04_fused_mlp --shapes --no-torch --out ../grid
    setup='rm grid/shape_grid.csv && mkfifo grid/shape_grid.csv'
    via_run "shape_grid: error: " "shape_grid.csv is not a regular file" 04_fused_mlp --shapes --no-torch --out ../grid
    setup='ln -s nowhere grid/shape_grid_rows.csv'
    via_run "shape_grid: error: " "shape_grid_rows.csv is a symbolic link to nothing" 04_fused_mlp --shapes --no-torch --out ../grid
    setup='touch grid/points'
    via_run "shape_grid: error: " "points is not a directory" 04_fused_mlp --shapes --no-torch --out ../grid
fi

# The Python programs, called directly (no NumPy, no PyTorch needed for any of these)
if command -v gnuplot >/dev/null; then  # an error from the system after the checks: one line too
    setup='printf "%s\n4096,11008,2048,700,1000,950,900,800,801,,560,550,6,1000,950,900,1700,600\n" "$grid_header" >grid/shape_grid.csv && mkdir grid/heat_gemm.csv'
    cmd "shape_grid: error: " "Is a directory" python3 co/bench/shape_grid.py --plot-only --out grid
fi
g=co/bench/grid_shortfalls.py
# no argument: the grid ./run 04_fused_mlp --shapes writes, traces/shape_grid/shape_grid.csv, or one line naming it
cmd "grid_shortfalls: error: " "no SHAPE_GRID_CSV given and no traces/shape_grid/shape_grid.csv" python3 "$g"
setup='mkdir -p traces/shape_grid && mkfifo traces/shape_grid/shape_grid.csv'
cmd "grid_shortfalls: error: " "traces/shape_grid/shape_grid.csv is not a regular file" python3 "$g"
setup='mkdir -p traces/shape_grid && cp binary.csv traces/shape_grid/shape_grid.csv'
cmd "grid_shortfalls: error: " "shape_grid.csv is not a shape grid CSV" python3 "$g"
setup='mkdir -p traces/shape_grid/shape_grid.csv'
cmd "grid_shortfalls: error: " "traces/shape_grid/shape_grid.csv is a directory" python3 "$g"
cmd "grid_shortfalls: error: " "unrecognized arguments: --bogus" python3 "$g" --help --bogus
cmd "grid_shortfalls: error: " "unrecognized arguments: --bogus" python3 "$g" grid/shape_grid.csv --bogus
cmd "grid_shortfalls: error: " "unrecognized arguments: b.csv" python3 "$g" a.csv b.csv
cmd "grid_shortfalls: error: " "binary.csv is not a shape grid CSV" python3 "$g" binary.csv
cmd "grid_shortfalls: error: " "badrow.csv is not a shape grid CSV" python3 "$g" badrow.csv
cmd "grid_shortfalls: error: " "fifo is not a regular file" python3 "$g" fifo
cmd "grid_shortfalls: error: " "dir is a directory" python3 "$g" dir
cmd "grid_shortfalls: error: " "dangling is a symbolic link to nothing" python3 "$g" dangling
cmd "grid_shortfalls: error: " "?.csv: no such file" python3 "$g" "$c1.csv"
cmd "grid_shortfalls: error: " "a?b: no such file" python3 "$g" "$ctl"
cmd "grid_shortfalls: error: " "--help given twice" python3 "$g" --help --help
setup='printf "%s\n4096,11008,2048,700,1000,950,900,800,801,,560,550,6,1000,950,900,1700,600\n" "$grid_header" >grid/shape_grid.csv && mkfifo grid/shape_grid_rows.csv'
cmd "grid_shortfalls: error: " "shape_grid_rows.csv is not a regular file" python3 "$g" grid/shape_grid.csv

tl=co/tools/trace_timeline.py
cmd "trace_timeline: error: " "the following arguments are required: trace, window, png" python3 "$tl"
cmd "trace_timeline: error: " "unrecognized arguments: --bogus" python3 "$tl" --help --bogus
cmd "trace_timeline: error: " "unrecognized arguments: --bogus" python3 "$tl" --bogus --help
cmd "trace_timeline: error: " "unrecognized arguments: extra" python3 "$tl" empty.json W o.png extra
cmd "trace_timeline: error: " "no font with Hangul" env FONTCONFIG_FILE="$nofonts" python3 "$tl" empty.json W o_ko.png
cmd "trace_timeline: error: " "nope.json: no such file" python3 "$tl" nope.json ProfilerStep#3 o.png
cmd "trace_timeline: error: " "text.txt is not a trace" python3 "$tl" text.txt ProfilerStep#3 o.png
cmd "trace_timeline: error: " "binary.csv is not a trace" python3 "$tl" binary.csv ProfilerStep#3 o.png
cmd "trace_timeline: error: " "foreign.json is not a trace" python3 "$tl" foreign.json ProfilerStep#3 o.png
cmd "trace_timeline: error: " "list.json is not a trace" python3 "$tl" list.json ProfilerStep#3 o.png
cmd "trace_timeline: error: " "fifo is not a regular file" python3 "$tl" fifo ProfilerStep#3 o.png
cmd "trace_timeline: error: " "dir is a directory" python3 "$tl" dir ProfilerStep#3 o.png
cmd "trace_timeline: error: " "dangling is a symbolic link to nothing" python3 "$tl" dangling ProfilerStep#3 o.png
cmd "trace_timeline: error: " "--also: fifo is not a regular file" python3 "$tl" empty.json W o.png --also fifo W t
cmd "trace_timeline: error: " "--title given twice" python3 "$tl" empty.json W o.png --title a --title b
cmd "trace_timeline: error: " "--also given twice" python3 "$tl" empty.json W o.png --also a b c --also d e f
cmd "trace_timeline: error: " "cannot write /proc/o.png: /proc is a kernel file system" python3 "$tl" empty.json W /proc/o.png
cmd "trace_timeline: error: " "cannot write /dev/null/o.png: Not a directory" python3 "$tl" empty.json W /dev/null/o.png
cmd "trace_timeline: error: " "dangling is a symbolic link to nothing" python3 "$tl" empty.json W dangling/o.png
setup='mkdir dir.png'
cmd "trace_timeline: error: " "dir.png is not a regular file" python3 "$tl" empty.json W dir.png
cmd "trace_timeline: error: " "'o.txt' does not name a .png file" python3 "$tl" empty.json W o.txt
cmd "trace_timeline: error: " "?.json: no such file" python3 "$tl" "$c1.json" W o.png
cmd "trace_timeline: error: " "cannot write file/a?b.png: Not a directory" python3 "$tl" empty.json W "file/$ctl.png"

rp=co/tools/repin_docs.py
cmd "repin_docs: error: " "the following arguments are required: old, new" python3 "$rp"
cmd "repin_docs: error: " "nope: no such folder" python3 "$rp" dir nope --root .
cmd "repin_docs: error: " "unrecognized arguments: --bogus" python3 "$rp" --help --bogus
cmd "repin_docs: error: " "--write given twice" python3 "$rp" dir dir --root . --write --write
cmd "repin_docs: error: " "--root given twice" python3 "$rp" dir dir --root . --root .
cmd "repin_docs: error: " "--root: nope: no such folder" python3 "$rp" dir dir --root nope
cmd "repin_docs: error: " "fifo: not a regular file" python3 "$rp" dir dir --root . fifo

sb=co/compare/side_by_side.py
cmd "compare/side_by_side.py: error: " "binary.csv has no active steps" python3 "$sb" --ours binary.csv --torch binary.csv
cmd "compare/side_by_side.py: error: " "--ours: fifo is not a regular file" python3 "$sb" --ours fifo --torch good.csv
cmd "compare/side_by_side.py: error: " "--ours: step.json is not a regular file" python3 "$sb" --ours step.csv --torch step.csv
cmd "compare/side_by_side.py: error: " "--ours: nope.csv: no such file" python3 "$sb" --ours nope.csv --torch good.csv
cmd "compare/side_by_side.py: error: " "--torch: dir is a directory" python3 "$sb" --ours good.csv --torch dir
cmd "compare/side_by_side.py: error: " "--torch: dangling is a symbolic link to nothing" python3 "$sb" --ours good.csv --torch dangling
cmd "compare/side_by_side.py: error: " "--ours given twice" python3 "$sb" --ours a.csv --ours b.csv --torch c.csv
cmd "compare/side_by_side.py: error: " "--title given twice" python3 "$sb" --ours a.csv --torch c.csv --title a --title b
cmd "compare/side_by_side.py: error: " "unrecognized arguments: --bogus" python3 "$sb" --help --bogus
cmd "compare/side_by_side.py: error: " "--log: fifo is not a regular file" python3 "$sb" --ours good.csv --torch good.csv --log fifo
cmd "compare/side_by_side.py: error: " "--ours: text.txt is not a .csv file" python3 "$sb" --ours text.txt --torch text.txt
cmd "compare/side_by_side.py: error: " "--png: cannot write /proc/x.png: /proc is a kernel file system" python3 "$sb" --ours good.csv --torch good.csv --png /proc/x.png
cmd "compare/side_by_side.py: error: " "--ours: ?.csv: no such file" python3 "$sb" --ours "$c1.csv" --torch good.csv

for script in matmul_add linear mlp; do
    cmd "compare/$script.py: error: " "--seed given twice" python3 "co/compare/$script.py" --seed 1 --seed 2
    cmd "compare/$script.py: error: " "unrecognized arguments: --bogus" python3 "co/compare/$script.py" --help --bogus
    cmd "compare/$script.py: error: " "--out: file is not a directory" python3 "co/compare/$script.py" --out file
    cmd "compare/$script.py: error: " "cannot create output directory /proc/x" python3 "co/compare/$script.py" --out /proc/x --check-flags
    cmd "compare/$script.py: error: " "--steps and --active are one flag" python3 "co/compare/$script.py" --steps 3 --active 4
    cmd "compare/$script.py: error: " "--load nope: no such directory" python3 "co/compare/$script.py" --load nope --out dir
    cmd "compare/$script.py: error: " "--load fifo: no such directory" python3 "co/compare/$script.py" --load fifo --out dir
done
cmd "compare/matmul_add.py: error: " "--size given twice" python3 co/compare/matmul_add.py --size 4 --size 5
cmd "compare/linear.py: error: " "--batch given twice" python3 co/compare/linear.py --batch 1 --batch=2
cmd "compare/mlp.py: error: " "--stage given twice" python3 co/compare/mlp.py --stage 03_simple_mlp --stage 04_fused_mlp
cmd "compare/mlp.py: error: " "dangling is a symbolic link to nothing" python3 co/compare/mlp.py --out dangling/x
cmd "compare/grid_torch.py: error: " "unrecognized arguments: --bogus" python3 co/compare/grid_torch.py --bogus
cmd "compare/grid_torch.py: error: " "unrecognized arguments: --bogus" python3 co/compare/grid_torch.py --help --bogus
cmd "compare/shapes.py: error: " "--hidden given twice" python3 co/compare/shapes.py --hidden 8 --hidden 8

# The shell scripts of bench/ and tools/ (they start from their checkout: names from co/)
ra=co/bench/run_all.sh
cmd "run_all: error: " "RUN_ONLY: unknown part 'none'" env RUN_ONLY=none "$ra" --help
cmd "run_all: error: " "RUN_ONLY: unknown part 'none'" env RUN_ONLY=none "$ra"
cmd "run_all: error: " "RUN_ONLY: unknown part '*'" env RUN_ONLY='*' "$ra"
cmd "run_all: error: " "RUN_ONLY: '01?02' holds a control character" env RUN_ONLY="01${ctl:1:1}02" "$ra"
cmd "run_all: error: " "RUN_ONLY: empty" env RUN_ONLY=' ' "$ra"
cmd "run_all: error: " "LIMIT: 'x' is not a whole number" env RUN_ONLY=01 LIMIT=x "$ra"
cmd "run_all: error: " "TESTS_LIMIT: '-1' is not a whole number" env RUN_ONLY=tests TESTS_LIMIT=-1 "$ra"
cmd "run_all: error: " "SANITIZE_LIMIT: 0 is too small" env RUN_ONLY=sanitize SANITIZE_LIMIT=0 "$ra"
cmd "run_all: error: " "GRID_BUDGET: '1e3' is not a whole number" env RUN_ONLY=grid GRID_BUDGET=1e3 "$ra"
cmd "run_all: error: " "--help goes alone" env RUN_ONLY=ceilings "$ra" --help x
cmd "run_all: error: " "unknown flag '--bogus'" env RUN_ONLY=ceilings "$ra" --bogus
cmd "run_all: error: " "unexpected argument 'b'" env RUN_ONLY=ceilings "$ra" ../dir/a b
cmd "run_all: error: " "OUTDIR: ../file is not a directory" env RUN_ONLY=ceilings "$ra" ../file
cmd "run_all: error: " "cannot create output directory /proc/x" env RUN_ONLY=ceilings "$ra" /proc/x
cmd "run_all: error: " "cannot create output directory /dev/null/x" env RUN_ONLY=ceilings "$ra" /dev/null/x
cmd "run_all: error: " "../dangling is a symbolic link to nothing" env RUN_ONLY=ceilings "$ra" ../dangling
cmd "run_all: error: " "OUTDIR: ../fifo is not a directory" env RUN_ONLY=ceilings "$ra" ../fifo
cmd "run_all: error: " "OUTDIR: 'a?b' holds a control character" env RUN_ONLY=ceilings "$ra" "$ctl"
cmd "run_all: error: " "OUTDIR: '??' holds a control character" env RUN_ONLY=ceilings "$ra" "$c1"

fg=co/bench/figures.sh
cmd "figures: error: " "--help goes alone" "$fg" --help ../results
cmd "figures: error: " "--help goes alone" "$fg" ../results --help
cmd "figures: error: " "RESULTS_DIR is missing" "$fg"
cmd "figures: error: " "unknown flag '--bogus'" "$fg" --bogus
cmd "figures: error: " "RESULTS_DIR: nope: no such folder" "$fg" nope
cmd "figures: error: " "RESULTS_DIR: ../file is not a directory" "$fg" ../file
cmd "figures: error: " "RESULTS_DIR: ../dir/env.txt: no such file" "$fg" ../dir
cmd "figures: error: " "SWEEPS_DIR: ../nope: no such folder" "$fg" ../results ../nope
cmd "figures: error: " "TRACE_DIR: ../fifo is not a directory" "$fg" ../results ../results ../fifo
cmd "figures: error: " "unexpected argument 'x'" "$fg" ../results ../results ../results x
cmd "figures: error: " "GRID_DIR: ../dangling is a symbolic link to nothing" env GRID_DIR=../dangling "$fg" ../results
cmd "figures: error: " "TRACE_DIR: ../file is not a directory" env TRACE_DIR=../file "$fg" ../results
cmd "figures: error: " "IMG_DIR: ../file is not a directory" env IMG_DIR=../file "$fg" ../results
cmd "figures: error: " "IMG_DIR: cannot create output directory /proc/x" env IMG_DIR=/proc/x "$fg" ../results
setup='mkfifo results/env2 && mv results/env.txt dir/ && mv results/env2 results/env.txt'
cmd "figures: error: " "env.txt is not a regular file" "$fg" ../results
if command -v gnuplot >/dev/null; then  # the font is checked once gnuplot is found
    cmd "figures: error: " "no font with Hangul" env FONTCONFIG_FILE="$nofonts" "$fg" ../results
fi

dg=co/bench/diagrams.sh
cmd "diagrams: error: " "--help goes alone" "$dg" --help ../dir
cmd "diagrams: error: " "unknown flag '--bogus'" "$dg" --bogus
cmd "diagrams: error: " "unknown diagram 'nope'" "$dg" ../dir nope
cmd "diagrams: error: " "unknown diagram 'tile pingpong'" "$dg" ../dir 'tile pingpong'
cmd "diagrams: error: " "'tile' given twice" "$dg" ../dir tile tile
cmd "diagrams: error: " "OUT_DIR: ../file is not a directory" "$dg" ../file tile
cmd "diagrams: error: " "cannot create output directory /proc/x" "$dg" /proc/x
cmd "diagrams: error: " "cannot create output directory /dev/null/x" "$dg" /dev/null/x
cmd "diagrams: error: " "../dangling is a symbolic link to nothing" "$dg" ../dangling
cmd "diagrams: error: " "OUT_DIR: 'a?b' holds a control character" "$dg" "$ctl"
if command -v gnuplot >/dev/null; then
    cmd "diagrams: error: " "no font with Hangul" env FONTCONFIG_FILE="$nofonts" "$dg" ../dir tile
fi

hf=co/tools/h200_fixtures.sh
cmd "h200_fixtures: error: " "OUTDIR is missing" "$hf"
cmd "h200_fixtures: error: " "--help goes alone" "$hf" --help x
cmd "h200_fixtures: error: " "unknown flag '--bogus'" "$hf" --bogus
cmd "h200_fixtures: error: " "unexpected argument 'b'" "$hf" a b
cmd "h200_fixtures: error: " "cannot create output directory /proc/x" "$hf" /proc/x
cmd "h200_fixtures: error: " "OUTDIR: ../file is not a directory" "$hf" ../file
cmd "h200_fixtures: error: " "FIXTURES_BUDGET_S: 'x' is not a whole number" env FIXTURES_BUDGET_S=x "$hf" ../dir/out

nc=co/tools/nsys_capture.sh
cmd "nsys_capture: error: " "--cold given twice" "$nc" --cold --cold 01_matmul_add
cmd "nsys_capture: error: " "--suffix given twice" "$nc" --suffix a --suffix b 01_matmul_add
cmd "nsys_capture: error: " "--import given twice" "$nc" --import a --import b
cmd "nsys_capture: error: " "--help goes alone" "$nc" --help --bogus
cmd "nsys_capture: error: " "--help goes alone" "$nc" --bogus --help
cmd "nsys_capture: error: " "--import: ../fifo is not a regular file" "$nc" --import ../fifo
cmd "nsys_capture: error: " "--import: ../dir is a directory" "$nc" --import ../dir
cmd "nsys_capture: error: " "--import: ../file: not a .qdstrm or .nsys-rep" "$nc" --import ../file
cmd "nsys_capture: error: " "--suffix: 'a/b' may hold" "$nc" --suffix a/b 01_matmul_add
cmd "nsys_capture: error: " "--trace: 'a b' is not a comma-separated list" "$nc" --trace 'a b' 01_matmul_add
cmd "nsys_capture: error: " "unknown stage 'nope'" "$nc" nope
cmd "nsys_capture: error: " "unknown stage '01_matmul_add/..'" "$nc" 01_matmul_add/..
cmd "nsys_capture: error: " "STAGE is missing" "$nc" --cold
if [ -x bin/01_matmul_add ]; then
    cmd "01_matmul_add: error: " "unknown flag '--bogus'" "$nc" 01_matmul_add --bogus
    cmd "03_simple_mlp: error: " "--wait given twice" "$nc" --cold 03_simple_mlp --wait 1
    cmd "02_linear: error: " "--no-trace given twice" "$nc" 02_linear --no-trace
fi

nh=co/tools/nsys_h200.sh
cmd "nsys_h200: error: " "unknown flag '--bogus'" "$nh" --bogus
cmd "nsys_h200: error: " "unexpected argument 'x'" "$nh" x
cmd "nsys_h200: error: " "--help goes alone" "$nh" --help x
cmd "nsys_h200: error: " "OUT: cannot create output directory /proc/x" env OUT=/proc/x "$nh"
cmd "nsys_h200: error: " "NSYS_BUDGET_S: 'x' is not a whole number" env OUT=../dir/o NSYS_BUDGET_S=x "$nh"

ns=co/tools/nsys_host.sh
cmd "nsys_host: error: " "--help goes alone" "$ns" --help x
cmd "nsys_host: error: " "unknown flag '--bogus'" "$ns" --bogus
cmd "nsys_host: error: " "unexpected argument 'x'" "$ns" x
cmd "nsys_host: error: " "--help takes no value" "$ns" --help=1


# Every program's --help: its usage on stdout, exit 0, nothing on stderr, nothing made.
h=0
help_case() {  # help_case PROGRAM COMMAND...: COMMAND --help prints "usage: PROGRAM..." first
    local program=$1 label="$1 --help"
    local dir=$root/help.$h
    h=$((h + 1))
    shift
    cp -a "$t" "$dir"
    local before after rc
    before=$(cd "$dir" && listing)
    (cd "$dir" && TMPDIR=$dir/tmp PYTHONPATH="$dir/nopy" exec timeout 20 "$@" --help >"$root/help.out" 2>"$root/help.err" </dev/null)
    rc=$?
    after=$(cd "$dir" && listing)
    if [ "$rc" -eq 0 ] && [ ! -s "$root/help.err" ] && head -n 1 "$root/help.out" | grep -qF "usage: $program" &&
       ! grep -q "flags flags" "$root/help.out" && [ "$before" = "$after" ]; then
        echo "PASS $label"
    else
        echo "FAIL $label: exit $rc, $(shown "$(head -c 200 "$root/help.err" "$root/help.out")")"
    fi
    rm -rf "$dir"
}

wait
{
    for ((i = 0; i < n; i++)); do cat "$root/result.$i"; done
    for p in "${stages[@]}" ceilings decode_timeline; do
        [ -x "bin/$p" ] && help_case "$p" "$repo/bin/$p"
    done
    for s in bench/run_all.sh bench/figures.sh bench/diagrams.sh tools/h200_fixtures.sh tools/nsys_capture.sh \
             tools/nsys_h200.sh tools/nsys_host.sh; do
        help_case "$s" "co/$s"
    done
    for s in compare/side_by_side.py compare/matmul_add.py compare/linear.py compare/mlp.py compare/shapes.py \
             compare/grid_torch.py; do
        help_case "$s" python3 "co/$s"
    done
    help_case shape_grid python3 co/bench/shape_grid.py
    help_case grid_shortfalls python3 co/bench/grid_shortfalls.py
    help_case trace_timeline python3 co/tools/trace_timeline.py
    help_case repin_docs python3 co/tools/repin_docs.py
} | tee "$root/results"
# the status says whether every case passed
! grep -q '^FAIL' "$root/results"
