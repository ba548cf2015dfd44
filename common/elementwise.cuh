// elementwise.cuh: what every kernel that streams bf16 / fp16 / fp32 arrays needs.
// Arithmetic is fp32 whatever the storage type: to_float on the way in, from_float (one
// rounding) on the way out. vec16 is 16 bytes of T, aligned so that one 128-bit instruction
// loads or stores all of them: the access width that keeps HBM busy.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(float v) { return v; }

template <typename T> __device__ __forceinline__ T from_float(float f);
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float f) { return __float2bfloat16(f); }
template <> __device__ __forceinline__ __half from_float<__half>(float f) { return __float2half(f); }
template <> __device__ __forceinline__ float from_float<float>(float f) { return f; }

template <typename T> struct alignas(16) vec16 {
    static constexpr int n = 16 / sizeof(T);
    T v[n];
};
