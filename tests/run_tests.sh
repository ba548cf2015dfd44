#!/usr/bin/env bash
# Runs test binaries and stage CLI checks, and ends with one line CI can read:
#   "N passed, N failed, N skipped in N s"
# After each test, a line "-- TEST: N s" says how long it took (what decides what make test
# runs and what only make test-full does).
# Usage: tests/run_tests.sh TEST... -- [STAGE...]
#   TEST: an executable, or a tests/*.py script run by $PYTHON (SKIP when it is missing)
# The tests that use the GPU (gpu_*) run one after another, their lines shown as they come: two
# at once would share the GPU and the measurements some make once and keep (--gemm auto's). The
# others need only the CPU and run beside them, TEST_JOBS at a time (default: the CPUs); their
# lines are shown, in the order given, once each has ended. TEST_JOBS=1 runs everything in turn.
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
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
case $jobs in '' | *[!0-9]* | 0) echo "FAIL TEST_JOBS=$jobs: not a whole number of at least 1"; exit 1 ;; esac

count() {  # count NAME RC SECONDS LOG: its PASS/FAIL/SKIP lines; a crash or bad exit is a failure
    local name=$1 rc=$2 secs=$3 log=$4
    local p f s
    p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log"); s=$(grep -c '^SKIP ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $name: exited with status $rc"
        f=1
    fi
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    echo "-- $name: $secs s"
}

run_one() {  # run_one TEST: the test, its lines on stdout; its exit status
    case $1 in
    *.py)
        if command -v "$PYTHON" >/dev/null; then "$PYTHON" "$1"; else echo "SKIP $(basename "$1" .py): $PYTHON not found"; fi ;;
    *) "$1" ;;
    esac
}

# What runs where: the GPU tests in turn, here; the others in the pool below.
cpu=() gpu=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $(basename "$1") in
    gpu_*) gpu+=("$1") ;;
    *) cpu+=("test:$1") ;;
    esac
    shift
done
[ "${1:-}" = "--" ] && shift
for stage in "$@"; do  # every built stage: the CLI contract (tests/cli_contract.sh), no GPU needed
    cpu+=("contract:$stage")
done
name_of() {  # name_of I: how the I-th CPU test is named in the output
    case ${cpu[$1]} in contract:*) echo "cli_contract ${cpu[$1]#contract:}" ;; *) echo "${cpu[$1]#test:}" ;; esac
}
run_cpu() {  # run_cpu I: the I-th CPU test, into $dir/I.log, its status and seconds beside
    local t0=$SECONDS
    case ${cpu[$1]} in
    contract:*) tests/cli_contract.sh "bin/${cpu[$1]#contract:}" ;;
    *) run_one "${cpu[$1]#test:}" ;;
    esac >"$dir/$1.log" 2>&1
    echo $? >"$dir/$1.rc"
    echo $((SECONDS - t0)) >"$dir/$1.secs"
}

(  # the pool: the CPU tests, TEST_JOBS at a time, beside the GPU tests
    for ((i = 0; i < ${#cpu[@]}; i++)); do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
        run_cpu "$i" &
    done
    wait
) &
pool=$!

# The GPU tests, one at a time; lines shown as they come (tee), so a run cut short still shows
# what it reached.
for bin in "${gpu[@]}"; do
    echo "== $bin"
    t0=$SECONDS
    run_one "$bin" 2>&1 | tee "$dir/gpu.log"
    rc=${PIPESTATUS[0]}
    count "$bin" "$rc" "$((SECONDS - t0))" "$dir/gpu.log"
done

wait "$pool"
for ((i = 0; i < ${#cpu[@]}; i++)); do
    echo "== $(name_of "$i")"
    cat "$dir/$i.log"
    count "$(name_of "$i")" "$(cat "$dir/$i.rc" 2>/dev/null || echo 1)" "$(cat "$dir/$i.secs" 2>/dev/null || echo 0)" \
        "$dir/$i.log"
done

echo "$pass passed, $fail failed, $skip skipped in $SECONDS s"
[ "$fail" -eq 0 ]
