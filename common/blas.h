/* blas.h: row-major GEMMs through cuBLAS and cuBLASLt, the way PyTorch calls them.
 *
 * cuBLAS is column-major; PyTorch (and every stage here) stores matrices row-major. A row-major
 * M x N matrix, read column-major, is its N x M transpose. So row-major Y = X . W is computed as
 * column-major Y^T = W^T . X^T, with no data moved: pass W as cuBLAS's A and X as its B, and
 * swap M and N. When W is stored [N, K] (nn.Linear's weight, used as W^T) cuBLAS reads it with
 * its transpose flag instead: the transpose is a view, never a copy.
 */
#ifndef BLAS_H
#define BLAS_H

#include <stddef.h>

#include <cublasLt.h>
#include <cublas_v2.h>

#include "dtype.h"

cudaDataType_t blas_type(dtype_t t);

/* Row-major Y[M,N] = alpha * X[M,K] . op(W) + beta * Y, fp32 accumulation.
 * w_kn = 1: W stored [K, N] (x @ w);  w_kn = 0: W stored [N, K] (x @ W^T, nn.Linear).
 * batch > 1: `batch` independent products, matrices strided by their size (bmm). */
void blas_gemm(cublasHandle_t h, dtype_t t, int w_kn, size_t M, size_t N, size_t K, float alpha,
               const void *X, const void *W, float beta, void *Y, int batch);

/* A cuBLASLt matmul planned once and run many times: D = alpha * X . op(W) + beta * C (+ the
 * epilogue), row-major as above. Planning (descriptors, the heuristic query that picks the
 * kernel, the workspace) costs CPU time: do it once, as PyTorch caches its plans. */
typedef struct {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t w_layout, x_layout, c_layout, d_layout;
    cublasLtMatmulAlgo_t algo;
    void *workspace;
    size_t workspace_bytes;
    cublasLtHandle_t handle;
} lt_plan;

/* Plans the matmul. epilogue: CUBLASLT_EPILOGUE_DEFAULT, _BIAS (bias[N] added to every row),
 * _GELU, _GELU_BIAS...; bias may be NULL when the epilogue takes none. Returns 0, or -1 with a
 * one-line message when cuBLASLt has no algorithm for this problem (e.g. alignment). */
int lt_plan_init(lt_plan *p, cublasLtHandle_t h, dtype_t t, int w_kn, size_t M, size_t N, size_t K,
                 int batch, cublasLtEpilogue_t epilogue, const void *bias);
void lt_plan_run(const lt_plan *p, float alpha, const void *X, const void *W, float beta,
                 const void *C, void *D, cudaStream_t stream);
void lt_plan_free(lt_plan *p);

#endif
