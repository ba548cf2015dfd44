#!/usr/bin/env bash
# GPU tests of 03_simple_mlp: every dtype at small shapes with 1, 3, 17 and 100 in every position
# (the whole output checked), element counts that are not multiples of the 16-byte vector width,
# and the article's shape (sampled rows); each checked by the program itself against the CPU
# reference in double (outputs and intermediates poisoned with NaN first; exit 1 on a failed
# check). Then the trace pass (5 kernels per step), --dump, --sweep, and impossible shapes.
# Without a usable GPU each case is reported as SKIP with the reason the program gave.
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
. tests/lib_gpu_case.sh
stage=03_simple_mlp
[ -x "bin/$stage" ] || { echo "SKIP $stage: bin/$stage not built (make $stage)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# case_ ARGS...: one PASS/FAIL/SKIP line (tests/lib_gpu_case.sh)
case_() { gpu_case "$stage $*" 1 "bin/$stage" "$@"; }

shapes=(
    "--batch 1 --seq 1 --dim 1 --hidden 1"
    "--batch 1 --seq 3 --dim 17 --hidden 100"
    "--batch 1 --seq 17 --dim 100 --hidden 3"
    "--batch 1 --seq 100 --dim 3 --hidden 17"
    "--batch 1 --seq 100 --dim 1 --hidden 100"
    "--batch 3 --seq 33 --dim 100 --hidden 1"
    "--batch 2 --seq 5 --dim 64 --hidden 1001"
    "--batch 1 --seq 8 --dim 768 --hidden 3072"
)
# quick: the shapes with 1s and odd sizes in every position, and the decode shape
quick && shapes=("${shapes[0]}" "${shapes[1]}" "${shapes[6]}" "${shapes[7]}")
for dtype in $(test_dtypes); do
    for shape in "${shapes[@]}"; do
        # shellcheck disable=SC2086
        case_ $shape --dtype "$dtype"
    done
    case_ --dtype "$dtype" # the article's shape, 16 sampled rows
done
case_ --variant all --seed 7 --warmup 2

# The trace pass: the child prints how many kernels the first active step launched, and the
# timeline holds exactly 5 kernels in every active step (tests/check_trace_json.py).
label="$stage trace --batch 4 --seq 8 --dim 64 --hidden 256"
bin/$stage --batch 4 --seq 8 --dim 64 --hidden 256 --no-plot --out "$tmp/trace" >"$tmp/log" 2>&1
rc=$?
json="$tmp/trace/4x8_64x256_bf16_cold_eager.json"
if [ "$rc" -eq 2 ]; then
    waived_line "$label" "$tmp/log"
elif [ "$rc" -ne 0 ] || [ ! -f "$json" ]; then
    echo "FAIL $label: exit $rc, no trace"; tail -3 "$tmp/log" | sed 's/^/  /'
elif ! grep -q "ran 5 kernels" "$tmp/log"; then
    echo "FAIL $label: the trace pass did not count 5 kernels"; grep "kernels" "$tmp/log" | head -3 | sed 's/^/  /'
elif python3 tests/check_trace_json.py --layered --lanes-nest --step-prefix ProfilerStep# --expect-kernels-per-step 5 \
        --require-categories user_annotation,gpu_user_annotation,cpu_op,kernel,cuda_runtime,ac2g,Trace "$json" >"$tmp/check" 2>&1; then
    echo "PASS $label (5 kernels per step)"
else
    echo "FAIL $label:"; head -5 "$tmp/check" | sed 's/^/  /'
fi

# --dump: the five tensors as .npy, with the shapes compare/mlp.py --load expects.
label="$stage --dump"
bin/$stage --batch 2 --seq 3 --dim 5 --hidden 7 --steps 1 --no-trace --no-plot --out "$tmp/d" --dump "$tmp/d/dump" >"$tmp/log" 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then
    waived_line "$label" "$tmp/log"
elif [ "$rc" -ne 0 ]; then
    echo "FAIL $label: exit $rc"; tail -3 "$tmp/log" | sed 's/^/  /'
else
    missing=""
    for f in x wg wu wd y_eager; do [ -s "$tmp/d/dump/$f.npy" ] || missing="$missing $f.npy"; done
    if [ -n "$missing" ]; then echo "FAIL $label: missing$missing"; else echo "PASS $label"; fi
fi

# --sweep at a small width: 16 token counts, each checked. make test-full only: 02's sweep runs
# a sweep in make test, and this one's checks of up to 32768 tokens take seconds.
if ! quick; then
    label="$stage --sweep --dim 64 --hidden 256"
    bin/$stage --sweep --dim 64 --hidden 256 --no-plot --no-trace --out "$tmp/s" >"$tmp/log" 2>&1
    rc=$?
    if [ "$rc" -eq 2 ]; then
        waived_line "$label" "$tmp/log"
    elif [ "$rc" -ne 0 ] || [ "$(grep -c . "$tmp/s/sweep_64x256_bf16_eager.csv" 2>/dev/null)" -ne 17 ]; then
        echo "FAIL $label: exit $rc"; tail -3 "$tmp/log" | sed 's/^/  /'
    else
        echo "PASS $label"
    fi
fi

# Impossible shapes: one line on stderr, exit 1.
bad_case() {
    local label="$stage $* (refused)"
    "bin/$stage" "$@" --no-trace --no-plot --out "$tmp/bad" >"$tmp/log" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq 2 ]; then
        waived_line "$label" "$tmp/log"
    elif [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^$stage: error: " "$tmp/err"; then
        echo "PASS $label: $(cat "$tmp/err")"
    else
        echo "FAIL $label: exit $rc, stderr: $(head -c 300 "$tmp/err")"
    fi
}
bad_case --batch 65536 --seq 65536 --dim 1 --hidden 1
bad_case --batch 1048576 --seq 1024 --dim 65536 --hidden 262144
