#!/usr/bin/env bash
# 04_fused_mlp's own refusals, on the built binary (no GPU needed): each is bad input found
# without the GPU, so it exits 1 with one line on stderr naming the problem, even on a machine
# without one, and creates nothing (no output directory).
set -u
# shellcheck source=tests/lib_status.sh
. "$(dirname "$0")/lib_status.sh" # exit status 1 on any FAIL line
cd "$(dirname "$0")/.." || exit 1
bin=bin/04_fused_mlp
if [ ! -x "$bin" ]; then
    echo "SKIP 04_fused_mlp refusals: $bin not built (make 04_fused_mlp)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect() {  # expect LABEL NEEDLE ARGS...: exit 1, one stderr line containing NEEDLE, nothing made
    local label=$1 needle=$2; shift 2
    "$bin" "$@" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$?
    if [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -qF -- "$needle" "$tmp/stderr" &&
       [ ! -e "$tmp/out" ]; then
        echo "PASS 04_fused_mlp $label"
    else
        echo "FAIL 04_fused_mlp $label: exit $rc, expected 1 and one line with '$needle', nothing made:" \
             "$(cat "$tmp/stderr")$(ls "$tmp")"
    fi
    rm -rf "$tmp/out"
}

expect decode-17-tokens "04_fused_mlp: error: --variant decode is not available here: 17 tokens" --variant decode --batch 1 --seq 17
expect decode-default-shape "--variant decode is not available here: 8192 tokens" --variant decode
expect epilogue-fp32 "--variant epilogue is not available here: fp32: epilogue takes bf16 or fp16" --variant epilogue --dtype fp32
expect graph-of-epilogue-fp32 "--variant graph is not available here: fp32" --variant graph --graph-of epilogue --dtype fp32
expect gemm-unknown "--gemm: '99' is not a version" --variant epilogue --gemm 99
expect gemm-zero "--gemm: '0' is not a version" --gemm 0
expect gemm-word "--gemm: 'fast' is not a version" --gemm fast
expect gemm-other-rung "--gemm does not apply to --variant merged" --variant merged --gemm 1
expect gemm-all-decode "--gemm does not apply to --variant decode" --variant decode --batch 1 --seq 8 --gemm all
expect graph-of-unknown "--graph-of: 'graph' is not a rung" --graph-of graph
expect graph-of-other-rung "--graph-of does not apply to --variant eager" --variant eager --graph-of merged
expect sweep-batch "--sweep does not take --batch" --sweep --batch 4
