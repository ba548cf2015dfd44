#!/usr/bin/env bash
# bin/decode_timeline's command line, on the built binary (no GPU needed): --help exits 0; each
# bad input exits 1 with one line on stderr naming the problem; without a GPU a valid command
# exits 2 with one "waived" line.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
. tests/lib_cli.sh
bin=bin/decode_timeline
if [ ! -x "$bin" ]; then
    echo "SKIP decode_timeline: $bin not built (make all; make test builds it)"
    exit 0
fi
out=$(mktemp); err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

expect() {  # expect LABEL NEEDLE ARGS...: exit 1 and one stderr line containing NEEDLE
    local label=$1 needle=$2; shift 2
    "$bin" "$@" >"$out" 2>"$err"
    local rc=$?
    if [ "$rc" -eq 1 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -qF -- "$needle" "$err"; then
        echo "PASS decode_timeline $label"
    else
        echo "FAIL decode_timeline $label: exit $rc, expected 1 and one line with '$needle': $(cat "$err")"
    fi
}

if "$bin" --help >"$out" 2>&1 && grep -q -- "--tokens" "$out" && grep -q -- "--cold-l2" "$out"; then
    echo "PASS decode_timeline help"
else
    echo "FAIL decode_timeline help: --help must exit 0 and list the flags"
fi
expect unknown-flag "unknown flag '--bogus'" --bogus
expect missing-value "decode_timeline: error: --dim needs a value" --dim
expect too-many-tokens "--tokens: 17 is too large (at most 16)" --tokens 17
expect not-a-number "--hidden: '12x' is not a whole number" --hidden 12x
expect fp32 "--dtype: the decode kernels take bf16 or fp16" --dtype fp32
expect csv-missing "--csv needs a value" --csv
expect abbreviation "abbreviations are refused: write --tokens" --tok 4
expect cold-l2-value "--cold-l2 takes no value" --cold-l2=1
expect csv-unwritable "cannot write /dev/null/x" --csv /dev/null/x

no_gpu_waived decode_timeline "waived" "$bin" --tokens 1
no_gpu_waived "decode_timeline --cold-l2" "waived" "$bin" --cold-l2
