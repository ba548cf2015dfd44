// elementwise.cuh: what every kernel that streams bf16 / fp16 / fp32 arrays needs.
// Arithmetic is fp32 whatever the storage type: to_float on the way in, from_float (one
// rounding) on the way out. vec16 is 16 bytes of T, aligned so that one 128-bit instruction
// loads or stores all of them: the access width that keeps HBM busy.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stddef.h>
#include <stdint.h>

#include <type_traits>
#include <utility>

#include "dtype.h"

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

// A 16-byte access needs a 16-byte aligned address; cudaMalloc gives 256, a view into the middle
// of a buffer may not. Host launchers and kernels ask the same question.
__host__ __device__ __forceinline__ bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

// Elements of type t in one vec16 (what vec16<T>::n says on the device): 4 fp32, 8 bf16 / fp16.
inline size_t vec_width(dtype_t t) { return 16 / dtype_size(t); }

// ---- out[i] = op(in[i]...): the body of every one-to-one elementwise kernel ------------------
//
// A grid-stride loop: thread tid takes chunks tid, tid + grid, ... When every pointer is 16-byte
// aligned a chunk is one vec16: one 128-bit load per input, the arithmetic in registers, one
// 128-bit store. The last n % V elements, and every element when a pointer is not aligned, go
// one at a time. op takes and returns fp32; each result is rounded once to T.
template <typename T, typename Op, typename Ins, size_t... I>
__device__ __forceinline__ T apply_lane(Op op, const Ins &x, int lane, std::index_sequence<I...>)
{
    return from_float<T>(op(to_float(x[I].v[lane])...));
}

template <typename T, typename Op, typename... In>
__device__ __forceinline__ void map_elements(Op op, T *out, size_t n, const In *...in)
{
    static_assert((std::is_same<In, T>::value && ...), "inputs and output share one storage type");
    constexpr int V = vec16<T>::n;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t done = 0;
    if (aligned16(out) && (aligned16(in) && ...)) {
        const size_t chunks = n / V;
        for (size_t c = tid; c < chunks; c += stride) {
            const vec16<T> x[] = {reinterpret_cast<const vec16<T> *>(in)[c]...};
            vec16<T> r;
#pragma unroll
            for (int lane = 0; lane < V; lane++) r.v[lane] = apply_lane<T>(op, x, lane, std::index_sequence_for<In...>{});
            reinterpret_cast<vec16<T> *>(out)[c] = r;
        }
        done = chunks * V;
    }
    for (size_t i = done + tid; i < n; i += stride) out[i] = from_float<T>(op(to_float(in[i])...));
}

// Threads per block of map_elements kernels, and the blocks that give every thread one vec16 of
// n elements of type t: about 8 resident blocks per SM, enough loads in flight to reach the copy
// ceiling without a second pass of the loop. The grid-stride loop covers the capped case.
constexpr unsigned ELEMENTWISE_THREADS = 256;
inline unsigned elementwise_blocks(dtype_t t, size_t n)
{
    const size_t per_block = vec_width(t) * ELEMENTWISE_THREADS, max_blocks = 1u << 30;
    const size_t blocks = (n + per_block - 1) / per_block;
    return (unsigned)(blocks == 0 ? 1 : blocks < max_blocks ? blocks : max_blocks);
}

// ---- one readable kernel name per storage type -----------------------------------------------
//
// Kernels are extern "C" so traces show `add_bf16`, not a mangled template; a family is three
// kernels NAME_bf16, NAME_fp16, NAME_fp32 that differ only in T. LAUNCH_BY_DTYPE(t, NAME, grid,
// block, stream, args...) launches the one for dtype t, with T the storage type in the arguments:
//
//     LAUNCH_BY_DTYPE(t, add, blocks, 256, stream, (const T *)a, (const T *)b, (T *)out, n);
#define LAUNCH_BY_DTYPE(t, name, grid, block, stream, ...)                                        \
    do {                                                                                          \
        switch (t) {                                                                              \
        case DTYPE_BF16: {                                                                        \
            using T = __nv_bfloat16;                                                              \
            name##_bf16<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__);                           \
            break;                                                                                \
        }                                                                                         \
        case DTYPE_FP16: {                                                                        \
            using T = __half;                                                                     \
            name##_fp16<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__);                           \
            break;                                                                                \
        }                                                                                         \
        case DTYPE_FP32: {                                                                        \
            using T = float;                                                                      \
            name##_fp32<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__);                           \
            break;                                                                                \
        }                                                                                         \
        }                                                                                         \
    } while (0)
