// kernels.cu (03_simple_mlp): the two elementwise kernels of the eager MLP.
//
//   h = gelu_tanh(gate)     gelu_tanh_bf16 / _fp16 / _fp32    reads n values, writes n
//   m = h * up              mul_bf16 / _fp16 / _fp32          reads 2n values, writes n
//
// What PyTorch eager launches between the GEMMs: nothing to plan (few registers, no shared
// memory), so no occupancy query on the CPU, but every byte goes through HBM. At the article's
// shape gate, h and up are 8192 x 3072 bf16, 50.3 MB each: the GELU moves 100.7 MB and the
// multiply 151.0 MB, about 24 and 36 us at a 4.25 TB/s copy rate, whatever the arithmetic.
//
// Being memory-bound, they are written to move bytes well: each thread loads and stores 16 bytes
// at a time (8 bf16 / fp16 or 4 fp32 values: one 128-bit load instruction instead of eight 16-bit
// ones), in a grid-stride loop. Lengths that are not a multiple of the vector width finish with a
// scalar tail; pointers that are not 16-byte aligned (a view into the middle of a buffer) take the
// scalar path for the whole array. Arithmetic is fp32, rounded once to the storage type.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "elementwise.cuh"
#include "gelu.cuh"
#include "mlp.h"

__device__ __forceinline__ bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

template <typename T> __device__ __forceinline__ void gelu_body(const T *in, T *out, size_t n)
{
    constexpr int V = vec16<T>::n;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t done = 0;
    if (aligned16(in) && aligned16(out)) {
        const size_t nv = n / V;
        for (size_t i = tid; i < nv; i += stride) {
            vec16<T> a = reinterpret_cast<const vec16<T> *>(in)[i];
#pragma unroll
            for (int j = 0; j < V; j++) a.v[j] = from_float<T>(gelu_tanh(to_float(a.v[j])));
            reinterpret_cast<vec16<T> *>(out)[i] = a;
        }
        done = nv * V;
    }
    for (size_t i = done + tid; i < n; i += stride) out[i] = from_float<T>(gelu_tanh(to_float(in[i])));
}

template <typename T> __device__ __forceinline__ void mul_body(const T *a, const T *b, T *out, size_t n)
{
    constexpr int V = vec16<T>::n;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t done = 0;
    if (aligned16(a) && aligned16(b) && aligned16(out)) {
        const size_t nv = n / V;
        for (size_t i = tid; i < nv; i += stride) {
            vec16<T> x = reinterpret_cast<const vec16<T> *>(a)[i];
            const vec16<T> y = reinterpret_cast<const vec16<T> *>(b)[i];
#pragma unroll
            for (int j = 0; j < V; j++) x.v[j] = from_float<T>(to_float(x.v[j]) * to_float(y.v[j]));
            reinterpret_cast<vec16<T> *>(out)[i] = x;
        }
        done = nv * V;
    }
    for (size_t i = done + tid; i < n; i += stride) out[i] = from_float<T>(to_float(a[i]) * to_float(b[i]));
}

// Readable names in traces: one extern "C" kernel per storage type.
extern "C" __global__ void gelu_tanh_bf16(const __nv_bfloat16 *in, __nv_bfloat16 *out, size_t n) { gelu_body(in, out, n); }
extern "C" __global__ void gelu_tanh_fp16(const __half *in, __half *out, size_t n) { gelu_body(in, out, n); }
extern "C" __global__ void gelu_tanh_fp32(const float *in, float *out, size_t n) { gelu_body(in, out, n); }

extern "C" __global__ void mul_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, __nv_bfloat16 *out, size_t n) { mul_body(a, b, out, n); }
extern "C" __global__ void mul_fp16(const __half *a, const __half *b, __half *out, size_t n) { mul_body(a, b, out, n); }
extern "C" __global__ void mul_fp32(const float *a, const float *b, float *out, size_t n) { mul_body(a, b, out, n); }

// One thread per 16-byte vector, 256 threads per block; the grid-stride loop covers the scalar
// path (misaligned pointers) and any grid we had to cap.
static unsigned grid_for(size_t n, size_t per_thread)
{
    const size_t threads = 256, max_blocks = 1u << 30;
    size_t blocks = (n + per_thread * threads - 1) / (per_thread * threads);
    if (blocks == 0) blocks = 1;
    return (unsigned)(blocks < max_blocks ? blocks : max_blocks);
}

// out[i] = gelu_tanh(in[i]) for n elements of type t, on `stream`.
extern "C" void launch_gelu_tanh(dtype_t t, const void *in, void *out, size_t n, cudaStream_t stream)
{
    if (n == 0) return;
    const unsigned blocks = grid_for(n, t == DTYPE_FP32 ? 4 : 8);
    switch (t) {
    case DTYPE_BF16:
        gelu_tanh_bf16<<<blocks, 256, 0, stream>>>((const __nv_bfloat16 *)in, (__nv_bfloat16 *)out, n);
        break;
    case DTYPE_FP16:
        gelu_tanh_fp16<<<blocks, 256, 0, stream>>>((const __half *)in, (__half *)out, n);
        break;
    case DTYPE_FP32:
        gelu_tanh_fp32<<<blocks, 256, 0, stream>>>((const float *)in, (float *)out, n);
        break;
    }
}

// out[i] = a[i] * b[i] for n elements of type t, on `stream`.
extern "C" void launch_mul(dtype_t t, const void *a, const void *b, void *out, size_t n, cudaStream_t stream)
{
    if (n == 0) return;
    const unsigned blocks = grid_for(n, t == DTYPE_FP32 ? 4 : 8);
    switch (t) {
    case DTYPE_BF16:
        mul_bf16<<<blocks, 256, 0, stream>>>((const __nv_bfloat16 *)a, (const __nv_bfloat16 *)b,
                                             (__nv_bfloat16 *)out, n);
        break;
    case DTYPE_FP16:
        mul_fp16<<<blocks, 256, 0, stream>>>((const __half *)a, (const __half *)b, (__half *)out, n);
        break;
    case DTYPE_FP32:
        mul_fp32<<<blocks, 256, 0, stream>>>((const float *)a, (const float *)b, (float *)out, n);
        break;
    }
}
