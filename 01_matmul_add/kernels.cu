// kernels.cu (01_matmul_add): the elementwise add of the eager path, out = a + b.
//
// What PyTorch's eager `torch.add` launches after the GEMM: one thread per element, read two
// values, add in fp32, round once, write one. Nothing to plan: a few registers, no shared
// memory, so it launches without the occupancy query the GEMM needs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "dtype.h"

extern "C" __global__ void add_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
                                    __nv_bfloat16 *out, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __float2bfloat16(__bfloat162float(a[i]) + __bfloat162float(b[i]));
}

extern "C" __global__ void add_fp16(const __half *a, const __half *b, __half *out, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __float2half(__half2float(a[i]) + __half2float(b[i]));
}

extern "C" __global__ void add_fp32(const float *a, const float *b, float *out, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

// out = a + b over n elements of type t, on `stream`.
extern "C" void launch_add(dtype_t t, const void *a, const void *b, void *out, size_t n,
                           cudaStream_t stream)
{
    const unsigned threads = 256;
    const unsigned blocks = (unsigned)((n + threads - 1) / threads);
    switch (t) {
    case DTYPE_BF16:
        add_bf16<<<blocks, threads, 0, stream>>>((const __nv_bfloat16 *)a,
                                                 (const __nv_bfloat16 *)b, (__nv_bfloat16 *)out, n);
        break;
    case DTYPE_FP16:
        add_fp16<<<blocks, threads, 0, stream>>>((const __half *)a, (const __half *)b,
                                                 (__half *)out, n);
        break;
    case DTYPE_FP32:
        add_fp32<<<blocks, threads, 0, stream>>>((const float *)a, (const float *)b, (float *)out, n);
        break;
    }
}
