/* gemm_geglu.h: our tensor-core GEMM with the GeGLU epilogue, the `epilogue` rung of 04_fused_mlp.
 *
 *   m[M, hidden] = gelu_tanh(x Wg^T) * (x Wu^T)
 *
 * x is [M, dim], Wg and Wu are [hidden, dim], all row-major (PyTorch's nn.Linear layout). Each
 * output tile is computed as the matching gate tile and up tile, accumulated in fp32 registers;
 * the epilogue applies gelu(g) * u in fp32 and rounds once to the storage type. Gate and up never
 * touch device memory: the kernel reads x, Wg, Wu and writes m, nothing else.
 */
#ifndef GEMM_GEGLU_H
#define GEMM_GEGLU_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if launch_gemm_geglu handles this problem on the current device, else 0. Conditions:
 * t is bf16 or fp16 (tensor-core operands); the device is sm_80 or newer (mma.sync, cp.async);
 * dim is a multiple of 8, so that every row of x, Wg and Wu starts on a 16-byte boundary and
 * is read in whole 16-byte copies; M, dim, hidden >= 1 and each below 2^31; M within the grid's
 * y limit (M <= 65535 * 128). M and hidden are otherwise free: tails are predicated. */
int gemm_geglu_supported(dtype_t t, size_t M, size_t dim, size_t hidden);

/* The implementation that runs on the current device, e.g. "mma.sync m16n8k16 (sm_80+)". */
const char *gemm_geglu_path(void);

/* Enqueues m = gelu_tanh(x Wg^T) * (x Wu^T) on `stream`. x, wg and wu must be 16-byte aligned
 * (cudaMalloc pointers are) and m 4-byte aligned. An unsupported problem (see above) or
 * misaligned pointer is reported on stderr and exits 1: never a silent wrong answer. */
void launch_gemm_geglu(dtype_t t, const void *x, const void *wg, const void *wu, void *m,
                       size_t M, size_t dim, size_t hidden, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
