#!/usr/bin/env bash
# The command-line contract every stage keeps, checked on the built binary (no GPU needed):
# --help exits 0 and lists the flags; each bad input exits 1 with one line on stderr naming the
# problem; without a GPU a valid command exits 2 with one "waived" line.
# What the stage offers is read from its --help, not from its sources. A path that is not a
# program is one FAIL; the exit status is 1 on any FAIL (tests/lib_status.sh).
# Usage: tests/cli_contract.sh bin/<stage>
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
# shellcheck source=tests/lib_cli.sh
. "$(dirname "$0")/lib_cli.sh"
bin=${1:-}
name=$(basename "${bin:-no-program}")
# No program, no contract to check: one FAIL line, not a FAIL per check after it.
if [ -z "$bin" ] || [ -d "$bin" ] || [ ! -x "$bin" ]; then
    echo "FAIL $name cli-contract: '$bin' is not a program that can be run (usage: tests/cli_contract.sh bin/<stage>)"
    exit 1
fi
out=$(mktemp); err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

expect() {  # expect LABEL STATUS NEEDLE ARGS...: exit status STATUS, one stderr line containing NEEDLE
    local label=$1 status=$2 needle=$3; shift 3
    "$bin" "$@" >"$out" 2>"$err"
    local rc=$? lines
    lines=$(wc -l <"$err")
    if [ "$rc" -ne "$status" ]; then
        echo "FAIL $name $label: exit $rc, expected $status ($(head -c 300 "$err"))"
    elif [ "$status" -eq 1 ] && { [ "$lines" -ne 1 ] || ! grep -qF -- "$needle" "$err"; }; then
        echo "FAIL $name $label: expected one line containing '$needle', got: $(cat "$err")"
    else
        echo "PASS $name $label"
    fi
}

help=$(mktemp)
trap 'rm -f "$out" "$err" "$help"' EXIT
if "$bin" --help >"$help" 2>"$err" && grep -q -- "--variant" "$help" && grep -q -- "--dtype" "$help" && grep -q -- "--steps" "$help"; then
    echo "PASS $name help"
else
    echo "FAIL $name help: --help must exit 0 and list the flags"
fi

expect unknown-flag 1 "unknown flag '--bogus'" --bogus
expect missing-value 1 "--dtype needs a value" --dtype
expect non-numeric 1 "is not a whole number" --steps abc
expect negative 1 "is not a whole number" --steps -5
expect zero 1 "too small" --steps 0
expect overflow 1 "too large" --steps 99999999999999999999999
expect bad-variant 1 "unknown variant" --variant nope
expect bad-dtype 1 "unknown dtype" --dtype int8
expect stray-argument 1 "unexpected argument" stray
expect unwritable-out 1 "cannot create output directory" --out /dev/null/x
expect control-chars 1 "unknown variant 'a?b'" --variant "$(printf 'a\nb')"

# The parser's rules hold for every program; what follows them, for the stages (common/run.h's steps).
expect ambiguous 1 "ambiguous flag '--s' (could be --seed" --s 64
expect abbreviation 1 "abbreviations are refused: write --dtype" --dty fp16
expect sweep-value 1 "--sweep takes no value" --sweep=1
# Every stage takes the shared flags, and its --help ends with their "shared flags:" section,
# --sweep and --dump among them: read from the program itself, so that no source layout is assumed.
if grep -q "^shared flags:" "$help" && grep -q -- "--sweep" "$help" && grep -q -- "--dump" "$help"; then
    expect sweep-wait 1 "--sweep does not take --wait" --sweep --wait 0
    expect sweep-warmup 1 "--sweep does not take --warmup" --sweep --warmup 2
    expect sweep-dump 1 "--sweep does not take --dump" --sweep --dump d
    expect error-prefix 1 "$name: error: --out: cannot create output directory" --out /dev/null/x
    expect dump-unwritable 1 "--dump: cannot create output directory" --dump /dev/null/x
else
    echo "FAIL $name shared-flags: --help has no 'shared flags:' section listing --sweep and --dump" \
         "(the stages' shared flags), so it is not a stage"
fi

# A flag --sweep varies itself is refused by name; a stage's own no-GPU action runs without one.
case $name in
01_matmul_add) expect sweep-swept 1 "--sweep does not take --size: it sweeps size itself" --sweep --size 64 ;;
02_linear)
    expect sweep-swept 1 "--sweep does not take --batch: it sweeps batch itself" --sweep --batch 4
    expect explain-value 1 "--explain-views takes no value" --explain-views=1
    # a flag of a run would do nothing beside it: refused by name, and nothing made
    tmpe=$(mktemp -d)
    expect explain-out 1 "--explain-views does not take --out" --explain-views --out "$tmpe/o"
    if [ -e "$tmpe/o" ]; then echo "FAIL $name explain-out: $tmpe/o was made"; fi
    rm -rf "$tmpe"
    "$bin" --explain-views --in_dim 3 >"$out" 2>"$err"
    rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$err" ] && grep -q "flatten reads offsets 0 2 4 1 3 5" "$out"; then
        echo "PASS $name explain-views (no GPU)"
    else
        echo "FAIL $name explain-views: exit $rc, $(head -c 300 "$err")"
    fi
    ;;
esac

# Bad input is refused before the GPU is asked for (exit 1 even without one) and creates nothing.
tmpd=$(mktemp -d)
"$bin" --out "$tmpd/o" --dump /dev/null/x >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 1 ] && [ ! -e "$tmpd/o" ]; then echo "PASS $name refused-creates-nothing"
else echo "FAIL $name refused-creates-nothing: exit $rc, $(ls "$tmpd")"; fi
if ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }; then
    "$bin" --out "$tmpd/w" --no-trace >"$out" 2>"$err"
    rc=$?
    if [ "$rc" -eq 2 ] && [ ! -s "$err" ] && [ "$(wc -l <"$out")" -eq 1 ] && grep -q "^$name: waived: " "$out" &&
       [ ! -e "$tmpd/w" ]; then
        echo "PASS $name waived-creates-nothing"
    else
        echo "FAIL $name waived-creates-nothing: exit $rc (expected 2 and one 'waived' line), $(ls "$tmpd"):" \
             "$(head -c 300 "$out" "$err")"
    fi
fi
rm -rf "$tmpd"

# No GPU here: a valid command is waived (exit 2) with one line, never a crash.
no_gpu_waived "$name" "waived: a CUDA GPU is required" "$bin" --no-trace --no-plot
