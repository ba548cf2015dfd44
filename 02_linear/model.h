/* model.h (02_linear): nn.Linear's buffers, their setup, the check, and the report's extras.
 *
 * x is [batch, in_dim], W is [out_dim, in_dim] as nn.Linear stores it, b is [out_dim], y is
 * [batch, out_dim]. The forwards (main.c) make their cuBLAS handle and cuBLASLt plan on first
 * use, as PyTorch does: that cost belongs to the cold first step.
 */
#ifndef LINEAR_MODEL_H
#define LINEAR_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "blas.h"
#include "run.h"
#include "view.h"

/* The variants, in the order of main.c's table (the report's extras name them by index). */
enum { LINEAR_EPILOGUE, LINEAR_VIEW, LINEAR_ADDMM, LINEAR_TRANSPOSE_COPY };

typedef struct {
    dtype_t dtype;
    size_t batch, in_dim, out_dim; /* the GEMM's M, K and N */
    cudaStream_t stream;
    void *x, *w, *b, *y; /* device */
    void *wt;            /* device: W^T materialised by transpose_copy, [in_dim, out_dim] */
    view_t w_view;       /* W as stored: shape [out_dim, in_dim], strides [in_dim, 1] */
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    /* 0: not planned yet; 1: planned; -1: cuBLASLt has no algorithm at this shape */
    int lt_state, alone_state;
    int lt_w_kn;              /* the layout flag the epilogue plan was made with */
    lt_plan plan, alone_plan; /* GEMM + BIAS epilogue; the GEMM alone (a reference row) */
    float *hx, *hw, *hb;      /* dtype-rounded host copies: what the GPU sees, for the reference */
} linear_layer;

/* Our kernels, in kernels.cu. */
void launch_transpose(dtype_t t, const void *src, void *dst, size_t rows, size_t cols, cudaStream_t stream);
void launch_bias_add(dtype_t t, void *y, const void *b, size_t rows, size_t cols, cudaStream_t stream);
void launch_bias_broadcast(dtype_t t, void *y, const void *b, size_t rows, size_t cols, cudaStream_t stream);

/* 1, with one line in why, for a shape that needs more device memory than any GPU holds; else 0.
 * No GPU needed. */
int linear_validate(dtype_t t, size_t batch, size_t in_dim, size_t out_dim, char *why, size_t len);
linear_layer *linear_setup(dtype_t t, size_t batch, size_t in_dim, size_t out_dim, uint64_t seed);
void linear_free(linear_layer *m);
/* Poisons y and the W^T copy with NaN, runs forward once, compares y with the CPU reference in
 * double: every row while that costs at most 2^27 multiply-adds, else 16 rows spread from the
 * first to the last. Returns the relative error. */
double linear_check(linear_layer *m, run_forward forward);
/* x, W, b and y for --dump: fills out[0..3], returns 4. */
int linear_arrays(const linear_layer *m, dump_array *out);
double linear_flops(const linear_layer *m);
double linear_min_bytes(const linear_layer *m);
/* A variant's napkin HBM traffic, kernel by kernel: fills t, returns the kernels per forward. */
int linear_traffic(const linear_layer *m, int variant, run_traffic *t);
/* The files' names: "1024x32x64_bf16_cold". */
void linear_tag(const linear_layer *m, const common_args *a, char *buf, size_t len);
void linear_describe(const linear_layer *m);
/* After a variant's report: its cold first step, what the cuBLASLt plan cache saves (epilogue),
 * and the transpose alone against the copy ceiling (transpose_copy). */
void linear_report(linear_layer *m, int variant, const run_result *r, const gpu_info *g, const common_args *a);

/* --explain-views (explain_views.c): the article's 3x2 example on the CPU, then W and W^T at
 * this shape, each with the cuBLAS layout read off its strides. */
void linear_explain_views(size_t in_dim, size_t out_dim);

#endif
