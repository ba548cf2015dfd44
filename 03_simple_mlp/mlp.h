/* mlp.h (03_simple_mlp): the GeGLU MLP of part 2 of the articles, as PyTorch eager runs it.
 *
 *   gate = x Wg^T     [M, hidden]    a cuBLAS GEMM
 *   up   = x Wu^T     [M, hidden]    a cuBLAS GEMM
 *   act  = gelu(gate) [M, hidden]    our elementwise kernel (tanh approximation)
 *   prod = act * up   [M, hidden]    our elementwise kernel
 *   y    = prod Wd^T  [M, dim]       a cuBLAS GEMM
 *
 * x is [M, dim] with M = batch * seq tokens; Wg and Wu are [hidden, dim] and Wd is [dim, hidden],
 * nn.Linear's layout (no biases). 04_fused_mlp builds its variants on this: the same model, the
 * same inputs, the same check, and this eager forward as the first rung of its ladder.
 */
#ifndef MLP_H
#define MLP_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "blas.h"
#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlp_t {
    dtype_t dtype;
    size_t tokens, dim, hidden; /* M, and the two widths */
    size_t batch, seq;          /* tokens as batch x seq, as the flags gave them; 0 for a swept size */
    cudaStream_t stream;
    /* Created by the first forward, as PyTorch creates its handle on first use: the handle and
     * one cuBLASLt plan per GEMM shape (gate and up share one), each with its kernel chosen
     * once, as PyTorch caches its plans. That cost is part of the cold first step. */
    cublasLtHandle_t lt;
    lt_plan plan_in, plan_down;
    int planned;
    void *x, *wg, *wu, *wd;      /* device: inputs and weights */
    void *gate, *up, *act, *prod, *y; /* device: the intermediates eager writes (act = gelu(gate),
                                       * prod = act * up), and the output */
    float *hx, *hwg, *hwu, *hwd; /* host: dtype-rounded copies, exactly what the GPU holds */
} mlp_t;

/* The five GPU operations of the eager forward, in order; names as in the NVTX ranges. */
typedef enum { MLP_GATE, MLP_UP, MLP_GELU, MLP_MUL, MLP_DOWN, MLP_N_OPS } mlp_op;
extern const char *const mlp_op_names[MLP_N_OPS]; /* "gate_proj", "up_proj", "gelu", "mul", "down_proj" */

/* The device buffers of x, y and the intermediates hold at least MLP_MIN_ROWS rows, zeros past
 * the tokens: from 9 tokens, 04's decode kernels read a whole tensor-core tile of 16 token rows,
 * so that a warp's lanes load alike. mlp_rows_allocated(tokens) is that count. */
enum { MLP_MIN_ROWS = 16 };
size_t mlp_rows_allocated(size_t tokens);

/* Allocates everything and fills x (uniform in +-1) and the weights (uniform in
 * +-1/sqrt(fan_in), nn.Linear's default) from `seed`. Impossible shapes (products that overflow,
 * more than the device or host holds, dimensions cuBLAS cannot take) exit 1 with one line. */
void mlp_setup(mlp_t *m, dtype_t t, size_t tokens, size_t dim, size_t hidden, uint64_t seed);
void mlp_free(mlp_t *m);
/* The device memory mlp_setup asks for, in double (no shape overflows it), and what it holds:
 * for the host-side bound (size_device_check) before the GPU is looked for. */
double mlp_device_bytes(dtype_t t, size_t tokens, size_t dim, size_t hidden);
extern const char mlp_device_buffers[];

/* The lesson of 03_simple_mlp, defined in its main.c (04_fused_mlp links it too, so both stages
 * run the very code a reader of 03 reads): mlp_run_op runs one operation alone, on m->stream,
 * without ranges; mlp_forward_eager is the eager forward: 5 kernels, each in its own range, all
 * inside "mlp_fwd". The first GEMM creates the cuBLASLt handle and plans both GEMM shapes. */
void mlp_run_op(mlp_t *m, mlp_op op);
void mlp_forward_eager(mlp_t *m);

/* Poisons y and every intermediate with NaN, runs forward(ctx) once, and compares y with the
 * CPU reference in double: every row at small shapes, 16 spread rows (first and last included)
 * at large ones. Returns the relative Frobenius error (ref_mlp_error: against the larger of
 * ||ref|| and the size of the terms summed into it); compare it with mlp_tolerance(). */
double mlp_check(mlp_t *m, void (*forward)(void *ctx), void *ctx);
/* y rows [row0, row0 + rows) in double from the rounded host inputs, no intermediate rounding:
 * out is rows x dim. */
void mlp_reference_rows(const mlp_t *m, size_t row0, size_t rows, double *out);
/* What a correct forward's error stays under (see mlp.c for why it is not dtype_tolerance). */
double mlp_tolerance(dtype_t t);

/* Our elementwise kernels (kernels.cu): out = gelu_tanh(in), out = a * b, n elements of type t.
 * Any length, any alignment (16-byte vectors where the pointers allow, scalar otherwise). */
void launch_gelu_tanh(dtype_t t, const void *in, void *out, size_t n, cudaStream_t stream);
void launch_mul(dtype_t t, const void *a, const void *b, void *out, size_t n, cudaStream_t stream);

/* ---- napkin math ---------------------------------------------------------------------- */

/* Bytes per element (dtype_size, spelled out so that .cu files may include this header too). */
static inline double mlp_elem_bytes(const mlp_t *m) { return m->dtype == DTYPE_FP32 ? 4.0 : 2.0; }

/* Multiply-adds count 2 FLOPs; the elementwise work (a few FLOPs per element) is left out. */
static inline double mlp_op_flops(const mlp_t *m, mlp_op op)
{
    double M = (double)m->tokens, D = (double)m->dim, H = (double)m->hidden;
    return op == MLP_GELU || op == MLP_MUL ? 0.0 : 2.0 * M * D * H;
}

/* Bytes one operation reads and writes at least, each operand once. */
static inline double mlp_op_bytes(const mlp_t *m, mlp_op op)
{
    double e = mlp_elem_bytes(m);
    double M = (double)m->tokens, D = (double)m->dim, H = (double)m->hidden;
    switch (op) {
    case MLP_GATE:
    case MLP_UP:
    case MLP_DOWN: return e * (M * D + H * D + M * H); /* activation in, weight, activation out */
    case MLP_GELU: return e * 2.0 * M * H;             /* gate in, act out */
    default: return e * 3.0 * M * H;                   /* act and up in, prod out */
    }
}

/* 3 GEMMs of 2 * M * dim * hidden FLOPs each. */
static inline double mlp_flops(const mlp_t *m)
{
    return 3.0 * mlp_op_flops(m, MLP_GATE);
}

/* The least any forward must move: x, the three weights and y, once each. */
static inline double mlp_min_bytes(const mlp_t *m)
{
    double e = mlp_elem_bytes(m);
    double M = (double)m->tokens, D = (double)m->dim, H = (double)m->hidden;
    return e * (2.0 * M * D + 3.0 * D * H);
}

#ifdef __cplusplus
}
#endif

#endif
