#!/usr/bin/env bash
# The chapters' figures (bench/figures.sh), on the CPU, from the committed results of
# docs/results/h200: bench/figures.sh draws them all into a temporary folder (IMG_DIR;
# no shape grid, so nothing is written under docs/), each NAME.png with English words and its
# Korean twin NAME_ko.png (the scripts of common/plots/ and tools/trace_timeline.py take the
# language from the PNG's name). One line per figure, PASS/FAIL figure_<NAME>: it fails when
# NAME_ko.png is missing, under 5 KB or the same as NAME.png (no word switched language), or when
# docs/img/NAME.png is committed without docs/img/NAME_ko.png, the twin the Korean pages link
# (tests/test_docs_ko.py checks that they do). Then figures_twin_check: the same check on a copy
# with one Korean twin taken away must name that figure. SKIP without gnuplot.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
results=docs/results/h200
if ! command -v gnuplot >/dev/null; then
    echo "SKIP figures: gnuplot not found"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/img" "$tmp/no_grid"

# twin_problems DIR COMMITTED: one line per English figure of DIR whose Korean twin is missing
# (in DIR, or in COMMITTED where COMMITTED holds the English one), small or the same
twin_problems() {
    local png ko name
    for png in "$1"/*.png; do
        case $png in *_ko.png) continue ;; esac
        name=$(basename "$png" .png)
        ko=$1/${name}_ko.png
        if [ ! -f "$ko" ]; then
            echo "$name: bench/figures.sh drew $name.png and no ${name}_ko.png"
        elif [ "$(wc -c <"$ko")" -le 5120 ] || [ "$(wc -c <"$png")" -le 5120 ]; then
            echo "$name: $name.png or ${name}_ko.png under 5 KB"
        elif cmp -s "$png" "$ko"; then
            echo "$name: ${name}_ko.png is $name.png (its words did not switch to Korean)"
        elif [ -f "$2/$name.png" ] && [ ! -f "$2/${name}_ko.png" ]; then
            echo "$name: $2/$name.png is committed without its Korean twin $2/${name}_ko.png (bench/figures.sh draws it)"
        fi
    done
}

if ! IMG_DIR=$tmp/img GRID_DIR=$tmp/no_grid bench/figures.sh "$results" >"$tmp/log" 2>&1; then
    echo "FAIL figures_drawn: bench/figures.sh $results exited non-zero"
    sed 's/^/    /' "$tmp/log"
    exit 1
fi
n=0
problems=$(twin_problems "$tmp/img" docs/img)
for png in "$tmp"/img/*.png; do
    case $png in *_ko.png) continue ;; esac
    name=$(basename "$png" .png)
    n=$((n + 1))
    line=$(printf '%s\n' "$problems" | grep -F -- "$name: " | head -1)
    if [ -z "$line" ]; then echo "PASS figure_$name"; else echo "FAIL figure_$line"; fi
done
[ "$n" -gt 0 ] || echo "FAIL figures_drawn: bench/figures.sh drew no PNG into IMG_DIR"

# The check itself: a Korean twin taken away (from what was drawn, then from what is committed)
# must be named
mkdir "$tmp/drawn" "$tmp/committed"
cp "$tmp"/img/01_crossover_eager*.png "$tmp/drawn/"
cp "$tmp"/img/01_crossover_eager*.png "$tmp/committed/"
rm "$tmp/drawn/01_crossover_eager_ko.png"
drawn=$(twin_problems "$tmp/drawn" "$tmp/committed")
cp "$tmp/committed/01_crossover_eager_ko.png" "$tmp/drawn/"
rm "$tmp/committed/01_crossover_eager_ko.png"
committed=$(twin_problems "$tmp/drawn" "$tmp/committed")
if [[ $drawn == "01_crossover_eager: bench/figures.sh drew 01_crossover_eager.png and no 01_crossover_eager_ko.png" &&
    $committed == "01_crossover_eager: $tmp/committed/01_crossover_eager.png is committed without its Korean twin"* ]]; then
    echo "PASS figures_twin_check"
else
    echo "FAIL figures_twin_check: a missing Korean twin was not named (drawn: '$drawn'; committed: '$committed')"
fi
