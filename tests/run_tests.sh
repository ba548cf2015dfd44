#!/usr/bin/env bash
# Runs test binaries and stage CLI checks, and ends with one line CI can read:
#   "N passed, N failed, N skipped in N s"
# After each test, a line "-- TEST: N s" says how long it took (what decides what make test
# runs and what only make test-full does).
# Usage: tests/run_tests.sh TEST... -- [STAGE...]
#   TEST: an executable, or a tests/*.py script run by python3 (SKIP when python3 is missing)
# Exit status: 0 only when nothing failed (a crashed binary counts as a failure).
set -u
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() {  # count PASS/FAIL/SKIP lines of one binary's output; a crash or bad exit is a failure
    local name=$1 rc=$2 t0=$3
    local p f s
    p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log"); s=$(grep -c '^SKIP ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $name: exited with status $rc"
        f=1
    fi
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    echo "-- $name: $((SECONDS - t0)) s"
}

while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    bin=$1; shift
    echo "== $bin"
    t0=$SECONDS
    # Lines are shown as they come (tee), so a run cut short still shows what it reached.
    case $bin in
    *.py)
        if command -v python3 >/dev/null; then
            python3 "$bin" 2>&1 | tee "$log"
            rc=${PIPESTATUS[0]}
        else
            echo "SKIP $(basename "$bin" .py): python3 not found" | tee "$log"
            rc=0
        fi ;;
    *)
        "$bin" 2>&1 | tee "$log"
        rc=${PIPESTATUS[0]} ;;
    esac
    count "$bin" "$rc" "$t0"
done
[ "${1:-}" = "--" ] && shift

# Every built stage: the CLI contract (tests/cli_contract.sh), no GPU needed.
for stage in "$@"; do
    echo "== cli contract: $stage"
    t0=$SECONDS
    tests/cli_contract.sh "bin/$stage" >"$log" 2>&1
    rc=$?
    cat "$log"
    count "cli_contract $stage" "$rc" "$t0"
done

echo "$pass passed, $fail failed, $skip skipped in $SECONDS s"
[ "$fail" -eq 0 ]
