// kernels.cu (03_simple_mlp): the two elementwise kernels of the eager MLP.
//
//   act = gelu_tanh(gate)   gelu_tanh_bf16 / _fp16 / _fp32    reads n values, writes n
//   prod = act * up         mul_bf16 / _fp16 / _fp32          reads 2n values, writes n
//
// What PyTorch eager launches between the GEMMs: nothing to plan (few registers, no shared
// memory), so no occupancy query on the CPU, but every byte goes through HBM. At the article's
// shape gate, act and up are 8192 x 3072 bf16, 50.3 MB each: the GELU moves 100.7 MB and the
// multiply 151.0 MB, about 24 and 36 us at a 4.25 TB/s copy rate, whatever the arithmetic.
//
// Being memory-bound, they are written to move bytes well: each thread loads and stores 16 bytes
// at a time (8 bf16 / fp16 or 4 fp32 values: one 128-bit load instruction instead of eight 16-bit
// ones), in a grid-stride loop, with a scalar tail and a scalar path for pointers that are not
// 16-byte aligned (elementwise.cuh's map_elements, which 01's add uses too). Arithmetic is fp32,
// rounded once to the storage type.
#include <cuda_runtime.h>

#include "elementwise.cuh"
#include "gelu.cuh"
#include "mlp.h"

struct gelu_op {
    __device__ float operator()(float x) const { return gelu_tanh(x); }
};
struct mul_op {
    __device__ float operator()(float x, float y) const { return x * y; }
};

// Readable names in traces: one extern "C" kernel per storage type.
extern "C" __global__ void gelu_tanh_bf16(const __nv_bfloat16 *in, __nv_bfloat16 *out, size_t n) { map_elements(gelu_op{}, out, n, in); }
extern "C" __global__ void gelu_tanh_fp16(const __half *in, __half *out, size_t n) { map_elements(gelu_op{}, out, n, in); }
extern "C" __global__ void gelu_tanh_fp32(const float *in, float *out, size_t n) { map_elements(gelu_op{}, out, n, in); }

extern "C" __global__ void mul_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, __nv_bfloat16 *out, size_t n) { map_elements(mul_op{}, out, n, a, b); }
extern "C" __global__ void mul_fp16(const __half *a, const __half *b, __half *out, size_t n) { map_elements(mul_op{}, out, n, a, b); }
extern "C" __global__ void mul_fp32(const float *a, const float *b, float *out, size_t n) { map_elements(mul_op{}, out, n, a, b); }

// out[i] = gelu_tanh(in[i]) for n elements of type t, on `stream`.
extern "C" void launch_gelu_tanh(dtype_t t, const void *in, void *out, size_t n, cudaStream_t stream)
{
    if (n == 0) return;
    LAUNCH_BY_DTYPE(t, gelu_tanh, elementwise_blocks(t, n), ELEMENTWISE_THREADS, stream, (const T *)in, (T *)out, n);
}

// out[i] = a[i] * b[i] for n elements of type t, on `stream`.
extern "C" void launch_mul(dtype_t t, const void *a, const void *b, void *out, size_t n, cudaStream_t stream)
{
    if (n == 0) return;
    LAUNCH_BY_DTYPE(t, mul, elementwise_blocks(t, n), ELEMENTWISE_THREADS, stream, (const T *)a, (const T *)b,
                    (T *)out, n);
}
