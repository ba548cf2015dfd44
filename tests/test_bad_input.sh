#!/usr/bin/env bash
# Bad input to every program, one PASS/FAIL line per case: the four stages, bin/ceilings,
# bin/decode_timeline, ./run and ./run --compare. Each case must
#   - exit with status 1,
#   - print nothing on stdout and exactly one line on stderr, "<program>: error: ..." naming the
#     problem (each case gives a piece of that line),
#   - create, change and remove nothing: it runs in a scratch directory of its own (its working
#     directory and its TMPDIR), which holds the fixtures below and is compared before and after.
# Among the inputs: names holding shell syntax ($(...), backticks, quotes, backslashes, a newline)
# beside a bad flag, which must refuse without running anything (the file PWNED would appear);
# and special files as outputs: /proc, /sys, /dev/full, a FIFO, a directory, symbolic links to
# a file and to nothing, a path below a regular file.
# Then each program's --help: usage on stdout, exit 0, nothing else.
# No GPU is needed: every case is refused before the GPU is looked for, so the suite means the
# same on a machine with one. Cases run side by side, one per CPU; lines print in order.
# The shell syntax in the cases' arguments is meant literally: it must reach the programs as it is.
# shellcheck disable=SC2016,SC1003
set -u
cd "$(dirname "$0")/.." || exit 1
repo=$PWD
# ./run's cases build under make: a make running this suite must not lend them its jobserver
unset MAKEFLAGS MFLAGS MAKELEVEL
root=$(mktemp -d) || exit 1
trap 'rm -rf "$root"' EXIT

stages=()
for s in 01_matmul_add 02_linear 03_simple_mlp 04_fused_mlp; do
    if [ -x "bin/$s" ]; then stages+=("$s"); else echo "SKIP bad input to $s: bin/$s not built (make $s)"; fi
done
for b in ceilings decode_timeline; do
    [ -x "bin/$b" ] || echo "SKIP bad input to $b: bin/$b not built (make all)"
done

# The fixtures every case starts from. co/ is a checkout for ./run: its scripts, the stages'
# folders, bin/ (a link to the real one) and a Makefile under which every stage is built.
t=$root/template
mkdir -p "$t/dir" "$t/tmp" "$t/co/compare"
echo x >"$t/file"
mkfifo "$t/fifo"
ln -s nowhere "$t/dangling"
ln -s file "$t/link_to_file"
cp run "$t/co/"
cp compare/*.sh compare/*.py "$t/co/compare/"
ln -s "$repo/bin" "$t/co/bin"
for s in "${stages[@]}"; do mkdir "$t/co/$s" && : >"$t/co/$s/main.c"; done
printf '.PHONY: %s\n%s:\n\t@:\n' "${stages[*]}" "${stages[*]}" >"$t/co/Makefile"

# What a case may not change: names, kinds, link targets, sizes, modes (one directory, read
# twice in the same order unless something changed).
listing() { find . -printf '%p %y %l %s %m\n'; }
shown() { printf '%s' "$*" | tr -c '[:print:]' '?'; }

# one_case ID LABEL PREFIX NEEDLE LAST_STAGE COMMAND...: the case's PASS/FAIL line. LAST_STAGE:
# "-" for none, else what co/.last_stage holds
one_case() {
    local id=$1 label=$2 prefix=$3 needle=$4 last_stage=$5
    shift 5
    local dir=$root/case.$id out=$root/out.$id err=$root/err.$id
    cp -a "$t" "$dir" || { echo "FAIL $label: cannot copy the fixtures"; return; }
    [ "$last_stage" = - ] || printf '%s' "$last_stage" >"$dir/co/.last_stage"
    local before after rc text="" newlines
    before=$(cd "$dir" && listing)
    (cd "$dir" && TMPDIR="$dir/tmp" exec timeout 20 "$@" >"$out" 2>"$err")
    rc=$?
    after=$(cd "$dir" && listing)
    IFS= read -r -d '' text <"$err"
    newlines=${text//[!$'\n']/}
    local why=""
    if [ "$rc" -ne 1 ]; then why="exit $rc, expected 1"
    elif [ -s "$out" ]; then why="wrote to stdout: $(shown "$(head -c 200 "$out")")"
    elif [ ${#newlines} -ne 1 ] || [[ $text != *$'\n' ]]; then why="${#newlines} lines on stderr, expected one"
    elif [[ $text != "$prefix"* ]]; then why="the line does not start with '$prefix'"
    elif [[ $text != *"$needle"* ]]; then why="the line does not say '$(shown "$needle")'"
    elif [ "$before" != "$after" ]; then
        why="files changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -3 | tr '\n' ' ')"
    fi
    if [ -z "$why" ]; then echo "PASS $label"
    else echo "FAIL $label: $why; stderr: $(shown "$(head -c 300 "$err")")"; fi
    rm -rf "$dir" "$out" "$err"
}

jobs_max=$(nproc 2>/dev/null || echo 2)
n=0 running=0
queue() {  # queue LABEL PREFIX NEEDLE LAST_STAGE COMMAND...: runs one_case in the background
    if [ "$running" -ge "$jobs_max" ]; then
        wait -n
        running=$((running - 1))
    fi
    one_case "$n" "$(shown "$1")" "${@:2}" >"$root/result.$n" &
    n=$((n + 1)) running=$((running + 1))
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
bad 04_fused_mlp "--gemm: '9' is not a version" --variant epilogue --gemm 9
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
    via_run "compare: error: " "--torch-variant: 'x' is not eager, compile or all" --compare 01_matmul_add --torch-variant x
    via_run "compare: error: " "--torch-variant needs a value" --compare 01_matmul_add --torch-variant
    via_run "compare: error: " "--out: directory name empty" --compare 01_matmul_add --out ''
    if command -v python3 >/dev/null; then
        via_run "compare/matmul_add.py: error: " "unrecognized arguments: --hold 3" --compare 01_matmul_add --hold 3
        via_run "compare/linear.py: error: " "unrecognized arguments: --explain-views" --compare 02_linear --explain-views
    fi
fi

# Every program's --help: its usage on stdout, exit 0, nothing on stderr, nothing made.
help_case() {
    local program=$1 label="$1 --help"
    local dir=$root/help.$program
    shift
    cp -a "$t" "$dir"
    local before after rc
    before=$(cd "$dir" && listing)
    (cd "$dir" && TMPDIR=$dir/tmp "$@" --help >"$root/help.out" 2>"$root/help.err")
    rc=$?
    after=$(cd "$dir" && listing)
    if [ "$rc" -eq 0 ] && [ ! -s "$root/help.err" ] && head -n 1 "$root/help.out" | grep -q "^usage: $program" &&
       ! grep -q "flags flags" "$root/help.out" && [ "$before" = "$after" ]; then
        echo "PASS $label"
    else
        echo "FAIL $label: exit $rc, $(shown "$(head -c 200 "$root/help.err" "$root/help.out")")"
    fi
    rm -rf "$dir"
}

wait
for ((i = 0; i < n; i++)); do cat "$root/result.$i"; done
for p in "${stages[@]}" ceilings decode_timeline; do
    [ -x "bin/$p" ] && help_case "$p" "$repo/bin/$p"
done
exit 0
