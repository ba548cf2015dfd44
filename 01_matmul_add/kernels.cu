// kernels.cu (01_matmul_add): the elementwise add of the eager path, out = a + b.
//
// What PyTorch's eager `torch.add` launches after the GEMM. Nothing to plan: a few registers, no
// shared memory, so it launches without the occupancy query the GEMM needs. It does one add per
// 6 bytes moved (bf16), so its ceiling is the device's copy bandwidth, and it is written to reach
// it: each thread loads 16 bytes of a and of b with one instruction each and stores 16 bytes of
// out (elementwise.cuh's map_elements). One bf16 per thread would issue eight times the memory
// instructions for the same bytes and leave HBM half idle. Arithmetic is fp32, rounded once.
#include <cuda_runtime.h>

#include "dtype.h"
#include "elementwise.cuh"

struct add_op {
    __device__ float operator()(float x, float y) const { return x + y; }
};

extern "C" __global__ void add_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, __nv_bfloat16 *out, size_t n)
{
    map_elements(add_op{}, out, n, a, b);
}
extern "C" __global__ void add_fp16(const __half *a, const __half *b, __half *out, size_t n)
{
    map_elements(add_op{}, out, n, a, b);
}
extern "C" __global__ void add_fp32(const float *a, const float *b, float *out, size_t n)
{
    map_elements(add_op{}, out, n, a, b);
}

// out = a + b over n elements of type t, on `stream`.
extern "C" void launch_add(dtype_t t, const void *a, const void *b, void *out, size_t n, cudaStream_t stream)
{
    if (n == 0) return;
    LAUNCH_BY_DTYPE(t, add, elementwise_blocks(t, n), ELEMENTWISE_THREADS, stream, (const T *)a, (const T *)b,
                    (T *)out, n);
}
