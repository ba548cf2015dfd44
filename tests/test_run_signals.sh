#!/usr/bin/env bash
# ./run interrupted while its stage runs: Ctrl-C (SIGINT to the whole process group, as a
# terminal sends it), SIGTERM, SIGHUP and SIGQUIT. ./run must die of the signal and leave
# nothing in TMPDIR (it keeps nothing there while the stage runs). The stage is a stand-in
# that waits, in a checkout of ./run whose Makefile builds nothing. No GPU needed.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
unset MAKEFLAGS MFLAGS MAKELEVEL
root=$(mktemp -d) || exit 1
trap 'rm -rf "$root"' EXIT
co=$root/co
mkdir -p "$co/bin" "$co/01_matmul_add"
cp run "$co/"
: >"$co/01_matmul_add/main.c"
printf '.PHONY: 01_matmul_add\n01_matmul_add:\n\t@:\n' >"$co/Makefile"
cat >"$co/bin/01_matmul_add" <<'STAGE'
#!/bin/sh
: >"$STARTED"
exec sleep 30
STAGE
chmod +x "$co/bin/01_matmul_add"

set -m # each background job in a process group of its own, its signals not ignored
for sig in INT TERM HUP QUIT; do
    mkdir "$root/tmp.$sig"
    TMPDIR=$root/tmp.$sig STARTED=$root/started.$sig "$co/run" 01_matmul_add 2>/dev/null &
    pid=$!
    for _ in $(seq 50); do  # until the stage runs: the marker exists by then
        [ -e "$root/started.$sig" ] && break
        sleep 0.1
    done
    sleep 0.1 # the stand-in's exec
    kill -s "$sig" -- "-$pid"
    { wait "$pid"; } 2>/dev/null # bash's own line about the job's signal
    rc=$?
    left=$(ls -A "$root/tmp.$sig")
    want=$((128 + $(kill -l "$sig")))
    if [ "$rc" -eq "$want" ] && [ -z "$left" ]; then
        echo "PASS ./run interrupted by SIG$sig leaves nothing"
    else
        echo "FAIL ./run interrupted by SIG$sig: exit $rc (expected $want), left in TMPDIR: ${left:-nothing}"
    fi
done
