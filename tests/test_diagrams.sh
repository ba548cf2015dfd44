#!/usr/bin/env bash
# The concept diagrams of the GEMM chapter (common/plots/diagrams/*.gp, drawn by
# bench/diagrams.sh), on the CPU: bench/diagrams.sh draws each script alone into a temporary
# folder; it must exit 0 and the PNG be over 5 KB. A script there that bench/diagrams.sh does not
# draw fails too: no PNG.
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
    png=$tmp/05_$name.png  # the GEMM chapter's diagrams; the primer's is 00_<name>.png
    [ -f "$png" ] || png=$tmp/00_$name.png
    if [ "$rc" -eq 0 ] && [ -f "$png" ] && [ "$(wc -c <"$png")" -gt 5120 ]; then
        echo "PASS diagram_$name"
    else
        echo "FAIL diagram_$name: bench/diagrams.sh $name exited $rc; $png missing or under 5 KB"
        sed 's/^/    /' "$tmp/log"
        failed=1
    fi
done
[ "$failed" -eq 0 ]
