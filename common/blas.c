#include "program.h"
#include "blas.h"

#include <stdio.h>

#include "check.h"

cudaDataType_t blas_type(dtype_t t)
{
    return t == DTYPE_BF16 ? CUDA_R_16BF : t == DTYPE_FP16 ? CUDA_R_16F : CUDA_R_32F;
}

void blas_gemm(cublasHandle_t h, dtype_t t, int w_kn, size_t M, size_t N, size_t K, float alpha,
               const void *X, const void *W, float beta, void *Y, int batch)
{
    cudaDataType_t ty = blas_type(t);
    cublasOperation_t op_w = w_kn ? CUBLAS_OP_N : CUBLAS_OP_T;
    int lda = (int)(w_kn ? N : K);
    if (batch <= 1) {
        CUBLAS_CHECK(cublasGemmEx(h, op_w, CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha, W, ty, lda,
                                  X, ty, (int)K, &beta, Y, ty, (int)N, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
    } else {
        CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            h, op_w, CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha, W, ty, lda, (long long)(K * N), X,
            ty, (int)K, (long long)(M * K), &beta, Y, ty, (int)N, (long long)(M * N), batch,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
}

static void set_batch(cublasLtMatrixLayout_t l, int batch, long long stride)
{
    if (batch <= 1) return;
    CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
    CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
}

int lt_plan_init(lt_plan *p, cublasLtHandle_t h, dtype_t t, int w_kn, size_t M, size_t N, size_t K,
                 int batch, cublasLtEpilogue_t epilogue, const void *bias)
{
    cudaDataType_t ty = blas_type(t);
    *p = (lt_plan){0};
    p->handle = h;
    CUBLASLT_CHECK(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t op_w = w_kn ? CUBLAS_OP_N : CUBLAS_OP_T;
    CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_w, sizeof op_w));
    CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
    if (bias) {
        CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
        CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &ty, sizeof ty));
    }
    /* column-major views: W is N x K (w_kn) or K x N read transposed; X^T is K x M; D^T N x M */
    if (w_kn) CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&p->w_layout, ty, N, K, (int64_t)N));
    else CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&p->w_layout, ty, K, N, (int64_t)K));
    CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&p->x_layout, ty, K, M, (int64_t)K));
    CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&p->c_layout, ty, N, M, (int64_t)N));
    CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&p->d_layout, ty, N, M, (int64_t)N));
    set_batch(p->w_layout, batch, (long long)K * (long long)N);
    set_batch(p->x_layout, batch, (long long)K * (long long)M);
    set_batch(p->c_layout, batch, (long long)N * (long long)M);
    set_batch(p->d_layout, batch, (long long)N * (long long)M);

    p->workspace_bytes = 32u << 20;
    CUDA_CHECK(cudaMalloc(&p->workspace, p->workspace_bytes));
    cublasLtMatmulPreference_t pref;
    CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                        &p->workspace_bytes, sizeof p->workspace_bytes));
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(h, p->desc, p->w_layout, p->x_layout, p->c_layout,
                                                       p->d_layout, pref, 1, &result, &found);
    CUBLASLT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
        program_error("cuBLASLt has no algorithm for this matmul (M=%zu N=%zu K=%zu): %s",
                M, N, K, cublasGetStatusString(st));
        lt_plan_free(p);
        return -1;
    }
    p->algo = result.algo;
    return 0;
}

void lt_plan_run(const lt_plan *p, float alpha, const void *X, const void *W, float beta,
                 const void *C, void *D, cudaStream_t stream)
{
    CUBLASLT_CHECK(cublasLtMatmul(p->handle, p->desc, &alpha, W, p->w_layout, X, p->x_layout, &beta,
                                  C, p->c_layout, D, p->d_layout, &p->algo, p->workspace,
                                  p->workspace_bytes, stream));
}

void lt_plan_free(lt_plan *p)
{
    if (p->desc) cublasLtMatmulDescDestroy(p->desc);
    if (p->w_layout) cublasLtMatrixLayoutDestroy(p->w_layout);
    if (p->x_layout) cublasLtMatrixLayoutDestroy(p->x_layout);
    if (p->c_layout) cublasLtMatrixLayoutDestroy(p->c_layout);
    if (p->d_layout) cublasLtMatrixLayoutDestroy(p->d_layout);
    if (p->workspace) cudaFree(p->workspace);
    *p = (lt_plan){0};
}
