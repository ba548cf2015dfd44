#!/usr/bin/env bash
# The tests can fail: for each way a test used to pass or skip whatever happened, the cause is
# planted (a fake program, a fake nvidia-smi first on PATH, a module hidden or broken, a capture
# that disagrees with our trace) and the test must print FAIL and exit non-zero; the same test
# without the cause must pass, or skip for the reason it can show. No GPU needed: where a GPU
# matters, nvidia-smi is a fake that lists one, or none.
# One PASS/FAIL line per cause, then "N passed, N failed"; exit status 1 on any FAIL.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
repo=$PWD
py=${PYTHON:-python3}
root=$(mktemp -d) || exit 1
trap 'rm -rf "$root"' EXIT
pass=0 fail=0

# result LABEL OK WHY: PASS LABEL when OK is "yes", else FAIL LABEL: WHY
result() {
    if [ "$2" = yes ]; then
        echo "PASS $1"
        pass=$((pass + 1))
    else
        echo "FAIL $1: $3"
        fail=$((fail + 1))
    fi
}
one_line() { tr '\n' ' ' <"$1" | head -c 300; }

# nvidia-smi that lists a GPU (compute capability 9.0), and one that finds no driver.
mkdir -p "$root/gpu" "$root/nogpu" "$root/fake"
cat >"$root/gpu/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in
*compute_cap*) echo "9.0" ;;
*) echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
esac
EOF
cat >"$root/nogpu/nvidia-smi" <<'EOF'
#!/bin/sh
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
exit 9
EOF
# A stand-in program: prints $FAKE_OUT on stdout and $FAKE_ERR on stderr, exits $FAKE_RC.
cat >"$root/fake/program" <<'EOF'
#!/bin/sh
[ -z "${FAKE_OUT:-}" ] || printf '%s\n' "$FAKE_OUT"
[ -z "${FAKE_ERR:-}" ] || printf '%s\n' "$FAKE_ERR" >&2
exit "${FAKE_RC:-0}"
EOF
chmod +x "$root/gpu/nvidia-smi" "$root/nogpu/nvidia-smi" "$root/fake/program"
waiver="prog: waived: a CUDA GPU is required; found no NVIDIA driver"

# ---- tests/lib_gpu_case.sh: gpu_case's verdict on one run of a stand-in -----------------------
# verdict NVIDIA_SMI_DIR RC STDOUT STDERR EXPECTED_REFUSAL: the first word of gpu_case's line
verdict() {
    (
        # shellcheck disable=SC2030 # the fake nvidia-smi first on PATH, in this subshell only
        PATH=$1:$PATH
        export FAKE_RC=$2 FAKE_OUT=$3 FAKE_ERR=$4
        tmp=$(mktemp -d "$root/case.XXXXXX")
        # shellcheck source=tests/lib_gpu_case.sh
        . tests/lib_gpu_case.sh
        GPU_CASE_UNAVAILABLE=$5 gpu_case "stand-in" 1 "$root/fake/program" | tee "$root/verdict.line" | cut -d' ' -f1
    )
}
# case_verdict LABEL WANT ARGS...: gpu_case must answer WANT
case_verdict() {
    local label=$1 want=$2 got
    shift 2
    got=$(verdict "$@")
    result "gpu_case: $label: $want" "$([ "$got" = "$want" ] && echo yes)" "got $(one_line "$root/verdict.line")"
}
refused="prog: error: --variant decode is not available here: fp32: decode takes bf16 or fp16"
passed="check: max rel err 1e-3 PASS"
case_verdict "exit 2 (waived) where nvidia-smi lists a GPU" FAIL "$root/gpu" 2 "$waiver" "" ""
case_verdict "exit 2 (waived) where nvidia-smi finds no driver" SKIP "$root/nogpu" 2 "$waiver" "" ""
case_verdict "exit 2 without a waiver line, no GPU" FAIL "$root/nogpu" 2 "" "" ""
case_verdict "a refusal nobody said would come" FAIL "$root/gpu" 1 "" "$refused" ""
case_verdict "a refusal said in advance (fp32)" SKIP "$root/gpu" 1 "" "$refused" "fp32"
case_verdict "a refusal for another reason than the one said" FAIL "$root/gpu" 1 "" "$refused" "17 tokens"
case_verdict "a case said to be refused that runs" FAIL "$root/gpu" 0 "$passed" "" "fp32"
case_verdict "a case that runs and passes its check" PASS "$root/gpu" 0 "$passed" "" ""

# ---- a whole GPU script: tests/gpu_pressure.sh with stages that are waived ---------------------
# A copy of the checkout's test scripts whose bin/ holds stand-ins that exit 2 with a waiver.
co=$root/co
mkdir -p "$co/tests" "$co/bin"
cp tests/gpu_pressure.sh tests/lib_gpu_case.sh tests/lib_status.sh tests/lib_cli.sh tests/cli_contract.sh "$co/tests/"
for s in 03_simple_mlp 04_fused_mlp; do
    printf '#!/bin/sh\necho "%s: waived: a CUDA GPU is required; found no NVIDIA driver"\nexit 2\n' "$s" >"$co/bin/$s"
    chmod +x "$co/bin/$s"
done
# shellcheck disable=SC2031 # PATH as it was: verdict changed it in a subshell
PATH=$root/gpu:$PATH "$co/tests/gpu_pressure.sh" >"$root/out" 2>&1
rc=$?
result "gpu_pressure.sh: stages waived where nvidia-smi lists a GPU: FAIL, exit 1" \
    "$([ "$rc" -ne 0 ] && [ "$(grep -c '^FAIL ' "$root/out")" -eq 2 ] && echo yes)" "exit $rc: $(one_line "$root/out")"
# shellcheck disable=SC2031
PATH=$root/nogpu:$PATH "$co/tests/gpu_pressure.sh" >"$root/out" 2>&1
rc=$?
result "gpu_pressure.sh: stages waived where there is no driver: SKIP, exit 0" \
    "$([ "$rc" -eq 0 ] && [ "$(grep -c '^SKIP ' "$root/out")" -eq 2 ] && ! grep -q '^FAIL ' "$root/out" && echo yes)" \
    "exit $rc: $(one_line "$root/out")"

# ---- tests/cli_contract.sh ---------------------------------------------------------------------
tests/cli_contract.sh /nonexistent >"$root/out" 2>&1
rc=$?
result "cli_contract.sh /nonexistent: one FAIL line, exit 1" \
    "$([ "$rc" -ne 0 ] && [ "$(grep -c '^FAIL ' "$root/out")" -eq 1 ] && [ "$(grep -c . "$root/out")" -eq 1 ] && echo yes)" \
    "exit $rc: $(one_line "$root/out")"
stage=01_matmul_add
if [ -x "bin/$stage" ]; then
    # The copy has no $stage/main.c at all: the stage's shared flags are read from its --help.
    "$co/tests/cli_contract.sh" "$repo/bin/$stage" >"$root/out" 2>&1
    rc=$?
    result "cli_contract.sh without the stage's main.c: every check runs (the shared flags' from --help)" \
        "$([ "$rc" -eq 0 ] && grep -q "^PASS $stage sweep-wait" "$root/out" && grep -q "^PASS $stage error-prefix" "$root/out" &&
            ! grep -q '^FAIL ' "$root/out" && echo yes)" "exit $rc: $(grep -E '^(FAIL|SKIP)' "$root/out" | head -3 | tr '\n' ' ')"
    # The stage, but its --help without the shared flags' section.
    mkdir -p "$root/noshared"
    cat >"$root/noshared/$stage" <<EOF
#!/bin/sh
if [ "\$1" = --help ]; then "$repo/bin/$stage" --help | grep -v '^shared flags:'; exit 0; fi
exec "$repo/bin/$stage" "\$@"
EOF
    chmod +x "$root/noshared/$stage"
    tests/cli_contract.sh "$root/noshared/$stage" >"$root/out" 2>&1
    rc=$?
    result "cli_contract.sh, a stage whose --help has no driver section: FAIL, exit 1, the checks after it run" \
        "$([ "$rc" -ne 0 ] && grep -q "^FAIL $stage shared-flags" "$root/out" &&
            grep -q "^PASS $stage refused-creates-nothing" "$root/out" && echo yes)" "exit $rc: $(one_line "$root/out")"
    # A stage that takes an unknown flag: an ordinary FAIL line makes the script exit 1.
    cat >"$root/fake/$stage" <<EOF
#!/bin/sh
[ "\$1" = --bogus ] && exit 0
exec "$repo/bin/$stage" "\$@"
EOF
    chmod +x "$root/fake/$stage"
    tests/cli_contract.sh "$root/fake/$stage" >"$root/out" 2>&1
    rc=$?
    result "cli_contract.sh, a stage that takes --bogus: FAIL, exit 1" \
        "$([ "$rc" -ne 0 ] && grep -q "^FAIL $stage unknown-flag" "$root/out" && echo yes)" "exit $rc: $(one_line "$root/out")"
else
    echo "SKIP cli_contract.sh on a stage: bin/$stage not built (make test builds it)"
fi

# ---- every test script exits 1 on a FAIL line (tests/lib_status.sh) -----------------------------
# tests/test_bad_input.sh is left to its own fix; every other script that prints FAIL lines must
# source tests/lib_status.sh.
missing=""
for f in tests/test_*.sh tests/gpu_*.sh tests/cli_contract.sh; do
    [ "$f" = tests/test_bad_input.sh ] && continue
    # shellcheck disable=SC2016 # the line itself, $( ) and all
    grep -q '^\. "\$(dirname "\$0")/lib_status\.sh"' "$f" || missing="$missing $f"
done
result "every test script sources tests/lib_status.sh" "$([ -z "$missing" ] && echo yes)" "not:$missing"
cat >"$co/tests/fails.sh" <<'EOF'
#!/usr/bin/env bash
set -u
. "$(dirname "$0")/lib_status.sh"
echo "PASS one"
( echo "FAIL two, from a subshell" ) &
wait
EOF
chmod +x "$co/tests/fails.sh"
"$co/tests/fails.sh" >"$root/out" 2>&1
rc=$?
result "lib_status.sh: a FAIL line from a background subshell: exit 1" \
    "$([ "$rc" -eq 1 ] && [ "$(grep -c . "$root/out")" -eq 2 ] && echo yes)" "exit $rc: $(one_line "$root/out")"

# ---- tests/run_tests.sh: a Python that is not there is a FAIL, not a SKIP ----------------------
PYTHON=$root/none/python3 tests/run_tests.sh tests/test_repin_docs.py -- >"$root/out" 2>&1
rc=$?
result "run_tests.sh with PYTHON=a path to nothing: FAIL, exit 1" \
    "$([ "$rc" -ne 0 ] && grep -q '^FAIL PYTHON=' "$root/out" && echo yes)" "exit $rc: $(one_line "$root/out")"

if ! command -v "$py" >/dev/null; then
    result "the Python tests" no "$py not found"
else
    # ---- tests/test_nsys_capture.py: a capture whose steps differ from our trace's --------------
    capture=$(find tests/data -name '*.nsys.txt' | sort | head -1)
    if [ -z "$capture" ]; then
        result "test_nsys_capture.py" no "no *.nsys.txt under tests/data"
    else
        mkdir -p "$root/nsys/planted" "$root/nsys/clean"
        cp "$(dirname "$capture")"/* "$root/nsys/clean/"
        cp "$(dirname "$capture")"/* "$root/nsys/planted/"
        sed -i 's/ProfilerStep#3/ProfilerStep#9/; s/ProfileStep#3/ProfileStep#9/' "$root/nsys/planted/$(basename "$capture")"
        "$py" tests/test_nsys_capture.py "$root/nsys/planted" >"$root/out" 2>&1
        rc=$?
        result "test_nsys_capture.py, a capture whose steps differ: FAIL, exit 1" \
            "$([ "$rc" -eq 1 ] && grep -q '^FAIL nsys .*capture holds steps' "$root/out" && echo yes)" "exit $rc: $(one_line "$root/out")"
        "$py" tests/test_nsys_capture.py "$root/nsys/clean" >"$root/out" 2>&1
        rc=$?
        result "test_nsys_capture.py, the capture as recorded: PASS, exit 0" \
            "$([ "$rc" -eq 0 ] && grep -q '^PASS ' "$root/out" && ! grep -q '^FAIL ' "$root/out" && echo yes)" \
            "exit $rc: $(one_line "$root/out")"
    fi

    # ---- tests/test_hta.py: HTA hidden (python -S: no site-packages) or broken -----------------
    CI=true "$py" -S tests/test_hta.py >"$root/out" 2>&1
    rc=$?
    result "test_hta.py, HTA missing under CI=true: FAIL, exit 1" \
        "$([ "$rc" -eq 1 ] && grep -q '^FAIL hta_usable' "$root/out" && echo yes)" "exit $rc: $(one_line "$root/out")"
    env -u CI "$py" -S tests/test_hta.py >"$root/out" 2>&1
    rc=$?
    result "test_hta.py, HTA missing outside CI: SKIP, exit 0" \
        "$([ "$rc" -eq 0 ] && grep -q '^SKIP ' "$root/out" && ! grep -q '^FAIL ' "$root/out" && echo yes)" \
        "exit $rc: $(one_line "$root/out")"
    mkdir -p "$root/broken/hta"
    echo 'raise ImportError("broken on purpose")' >"$root/broken/hta/__init__.py"
    env -u CI PYTHONPATH="$root/broken" "$py" tests/test_hta.py >"$root/out" 2>&1
    rc=$?
    result "test_hta.py, HTA installed but broken, outside CI: FAIL, exit 1" \
        "$([ "$rc" -eq 1 ] && grep -q '^FAIL hta_usable.*broken on purpose' "$root/out" && echo yes)" \
        "exit $rc: $(one_line "$root/out")"
fi

# ---- tests/harness.h: the reason a GPU test gives where no driver can be loaded -----------------
if [ ! -x bin/tests/gpu_02_kernels ]; then
    echo "SKIP GPU tests' reason to skip: bin/tests/gpu_02_kernels not built (make test builds it)"
elif "$py" -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
    echo "SKIP GPU tests' reason to skip without a driver: libcuda.so.1 loads here"
else
    bin/tests/gpu_02_kernels >"$root/out" 2>&1
    rc=$?
    result "GPU tests without a driver skip saying 'no CUDA driver', not 'insufficient'" \
        "$([ "$rc" -eq 0 ] && grep -q '^SKIP .*: no CUDA driver' "$root/out" && ! grep -qi 'insufficient' "$root/out" && echo yes)" \
        "exit $rc: $(head -2 "$root/out" | tr '\n' ' ')"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
