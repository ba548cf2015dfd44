/* model.h (01_matmul_add): the buffers of y = x @ w + b, their setup and the check.
 *
 * x, w and b are size x size (batch of them with --batched), random in [-1, 1), never zeros
 * (zeros hide unwritten outputs). The forwards (main.c) share one cuBLASLt plan, made by the
 * first forward, as PyTorch caches its plans.
 */
#ifndef MATMUL_ADD_MODEL_H
#define MATMUL_ADD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "blas.h"
#include "dtype.h"
#include "run.h"

typedef struct {
    dtype_t dtype;
    size_t n;  /* matrices are n x n */
    int batch; /* independent problems */
    cudaStream_t stream;
    void *x, *w, *b, *y, *tmp; /* device */
    cublasLtHandle_t lt;       /* the plan, made on the first forward */
    int planned;
    lt_plan plan;
    cublasHandle_t blas; /* the GemmEx reference row only */
    float *hx, *hw, *hb; /* dtype-rounded host copies: what the GPU sees, for the reference */
} matmul_add;

/* Elements in each of x, w, b, y and the temporary: batch problems of n x n. */
static inline size_t matmul_add_elems(const matmul_add *m) { return (size_t)m->batch * m->n * m->n; }

/* 1, with one line in why, for sizes whose buffers overflow or need more device memory than any
 * GPU holds; else 0. No GPU needed. */
int matmul_add_validate(size_t n, size_t batch, dtype_t t, char *why, size_t len);
matmul_add *matmul_add_setup(dtype_t t, size_t n, int batch, uint64_t seed);
void matmul_add_free(matmul_add *m);
/* Poisons y and the temporary with NaN, runs forward(m) once, compares y with the CPU reference
 * in double: every element up to 1024 x 1024, else 16 rows of the first and the last problem. */
double matmul_add_check(matmul_add *m, run_forward forward);
/* x, w, b and y for --dump: fills out[0..3], returns 4. */
int matmul_add_arrays(const matmul_add *m, dump_array *out);
double matmul_add_flops(const matmul_add *m);
/* The files' names: "64_bf16_cold" (b8_64_bf16_cold with --batched 8; warm after --warmup). */
void matmul_add_tag(const matmul_add *m, const common_args *a, char *buf, size_t len);

#endif
