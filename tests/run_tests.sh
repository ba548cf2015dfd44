#!/usr/bin/env bash
# Runs test binaries and stage CLI checks, and ends with one line CI can read:
#   "N passed, N failed, N skipped in N s"
# After each test, a line "-- TEST: N s" says how long it took (what decides what make test
# runs and what only make test-full does).
# Usage: tests/run_tests.sh TEST... -- [STAGE...]
#   TEST: an executable, or a tests/*.py script run by $PYTHON (SKIP when it is missing)
# PYTHON: the Python of the tests, python3 unless set (make test sets the project's virtual
# environment, .venv/bin/python3, where it exists). A path puts its directory first on PATH, so
# that every python3 a test starts (from a script or a C test) is that one too.
# Exit status: 0 only when nothing failed (a crashed binary counts as a failure).
set -u
cd "$(dirname "$0")/.." || exit 1
PYTHON=${PYTHON:-python3}
case $PYTHON in
*/*)
    python_dir=$(cd "$(dirname "$PYTHON")" 2>/dev/null && pwd)
    if [ -z "$python_dir" ] || [ ! -x "$python_dir/$(basename "$PYTHON")" ]; then
        echo "FAIL PYTHON=$PYTHON: not an executable"
        exit 1
    fi
    PYTHON=$python_dir/$(basename "$PYTHON")
    PATH=$python_dir:$PATH
    export PATH PYTHON ;;
esac
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
        if command -v "$PYTHON" >/dev/null; then
            "$PYTHON" "$bin" 2>&1 | tee "$log"
            rc=${PIPESTATUS[0]}
        else
            echo "SKIP $(basename "$bin" .py): $PYTHON not found" | tee "$log"
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
