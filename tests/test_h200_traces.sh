#!/usr/bin/env bash
# The traces committed from the H200 run (docs/results/h200-2026-11-30/traces) keep the trace format's
# invariants, checked by tests/check_trace_json.py: in every recorded step exactly the kernels
# the stage says it launches, a flow from every launch to its GPU work, properly nested ranges,
# no event ending before it starts. A change to the checker that rejects real traces fails here.
set -u
cd "$(dirname "$0")/.." || exit 1
r=docs/results/h200-2026-11-30/traces
if ! command -v python3 >/dev/null; then echo "SKIP h200_traces: python3 not found"; exit 0; fi
while read -r trace kernels; do
    if out=$(python3 tests/check_trace_json.py --expect-kernels-per-step "$kernels" \
            --require-categories user_annotation,gpu_user_annotation,kernel,cuda_runtime,ac2g "$r/$trace.json" 2>&1); then
        echo "PASS h200 trace $trace ($kernels kernels per step)"
    else
        echo "FAIL h200 trace $trace: $(echo "$out" | tail -2)"
    fi
done <<'LIST'
01_matmul_add/64_bf16_cold_eager 2
01_matmul_add/64_bf16_cold_addmm 1
01_matmul_add/64_bf16_cold_fused 1
01_matmul_add/4096_bf16_cold_eager 2
02_linear/1024x32x64_bf16_cold_epilogue 1
02_linear/1024x32x64_bf16_cold_view 2
02_linear/1024x32x64_bf16_cold_addmm 2
02_linear/1024x32x64_bf16_cold_transpose_copy 3
03_simple_mlp/64x128_768x3072_bf16_cold_eager 5
03_simple_mlp/1x8_768x3072_bf16_cold_eager 6
04_fused_mlp/64x128_768x3072_bf16_cold_eager 5
04_fused_mlp/64x128_768x3072_bf16_cold_fused_geglu 4
04_fused_mlp/64x128_768x3072_bf16_cold_merged 3
04_fused_mlp/64x128_768x3072_bf16_cold_epilogue 2
04_fused_mlp/64x128_768x3072_bf16_cold_graph 2
04_fused_mlp/1x8_768x3072_bf16_cold_decode 2
04_fused_mlp/1x8_768x3072_bf16_cold_graph 4
LIST
