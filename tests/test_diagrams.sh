#!/usr/bin/env bash
# The concept diagrams of the GEMM chapters and the primer (common/plots/diagrams/*.gp, drawn by
# bench/diagrams.sh), on the CPU: bench/diagrams.sh draws each script alone into a temporary
# folder; it must exit 0, and both PNGs, the English <chapter>_<name>.png and the Korean
# <chapter>_<name>_ko.png the Korean pages show, be over 5 KB and differ (the labels switch
# language). A script there that bench/diagrams.sh does not draw in both fails too: no PNG.
# One line per diagram: PASS/FAIL diagram_<name>, or SKIP without gnuplot.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
names=()
for gp in common/plots/diagrams/*.gp; do
    names+=("$(basename "$gp" .gp)")
done
if ! command -v gnuplot >/dev/null; then
    for name in "${names[@]}"; do echo "SKIP diagram_$name: gnuplot not found"; done
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failed=0
for name in "${names[@]}"; do  # each on its own, so that one broken script fails only itself
    bench/diagrams.sh "$tmp" "$name" >"$tmp/log" 2>&1
    rc=$?
    png=$tmp/05_$name.png  # the GEMM chapters' diagrams; the primer's is 00_<name>.png
    [ -f "$png" ] || png=$tmp/00_$name.png
    ko=${png%.png}_ko.png
    if [ "$rc" -eq 0 ] && [ -f "$png" ] && [ "$(wc -c <"$png")" -gt 5120 ] &&
        [ -f "$ko" ] && [ "$(wc -c <"$ko")" -gt 5120 ] && ! cmp -s "$png" "$ko"; then
        echo "PASS diagram_$name"
    else
        echo "FAIL diagram_$name: bench/diagrams.sh $name exited $rc; $png or $ko missing, under 5 KB or the same"
        sed 's/^/    /' "$tmp/log"
        failed=1
    fi
done
[ "$failed" -eq 0 ]
