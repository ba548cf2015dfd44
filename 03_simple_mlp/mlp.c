/* mlp.c (03_simple_mlp): the GeGLU MLP's buffers, their setup, and its correctness check. The
 * eager forward is the lesson, in main.c; 04_fused_mlp links both for its own variants. */
#include "mlp.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "gpu.h"
#include "program.h"
#include "ref.h"
#include "ref_mlp.h"
#include "size.h"

const char *const mlp_op_names[MLP_N_OPS] = {"gate_proj", "up_proj", "gelu", "mul", "down_proj"};

/* ---- setup ------------------------------------------------------------------------------ */

static size_t add_sz(size_t a, size_t b, const char *what)
{
    if (a > SIZE_MAX - b) {
        program_error("%s overflows", what);
        exit(EXIT_BAD_INPUT);
    }
    return a + b;
}

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        program_error("out of host memory (%.2f GB for the MLP's host copies)", (double)bytes / 1e9);
        exit(EXIT_BAD_INPUT);
    }
    return p;
}

/* Draws n values uniform in [-bound, bound), rounds them to the storage type in place (the host
 * copy then holds exactly what the GPU holds) and uploads them. */
static void fill_and_upload(rng_t *rng, dtype_t t, float *host, void *dev, size_t n, float bound, void *staging)
{
    fill_uniform(rng, host, n, -bound, bound);
    dtype_round_and_pack(t, host, staging, n);
    CUDA_CHECK(cudaMemcpy(dev, staging, n * dtype_size(t), cudaMemcpyHostToDevice));
}

const char mlp_device_buffers[] = "x, the three weights, gate, up, h, m and y";

double mlp_device_bytes(dtype_t t, size_t tokens, size_t dim, size_t hidden)
{
    const double T = (double)mlp_rows_allocated(tokens), D = (double)dim, H = (double)hidden;
    return (2 * T * D + 3 * D * H + 4 * T * H) * (double)dtype_size(t) + (64u << 20);
}

size_t mlp_rows_allocated(size_t tokens)
{
    return tokens < MLP_MIN_ROWS ? MLP_MIN_ROWS : tokens;
}

void mlp_setup(mlp_t *m, dtype_t t, size_t tokens, size_t dim, size_t hidden, uint64_t seed)
{
    *m = (mlp_t){.dtype = t, .tokens = tokens, .dim = dim, .hidden = hidden};
    if (tokens == 0 || dim == 0 || hidden == 0) {
        program_error("the MLP needs at least 1 token, dim >= 1 and hidden >= 1 (got %zu, %zu, %zu)",
                tokens, dim, hidden);
        exit(EXIT_BAD_INPUT);
    }
    if (tokens > INT_MAX || dim > INT_MAX || hidden > INT_MAX) { /* cuBLAS takes int dimensions */
        program_error("tokens %zu, dim %zu, hidden %zu: cuBLAS takes dimensions up to %d",
                tokens, dim, hidden, INT_MAX);
        exit(EXIT_BAD_INPUT);
    }
    size_t e = dtype_size(t);
    size_t n_x = size_mul(tokens, dim, "tokens x dim");
    size_t n_w = size_mul(dim, hidden, "dim x hidden");
    /* the device buffers of x, y and the intermediates: at least MLP_MIN_ROWS rows, zeros past
     * the tokens (mlp.h) */
    const size_t rows = mlp_rows_allocated(tokens);
    size_t a_x = size_mul(rows, dim, "rows x dim"), a_h = size_mul(rows, hidden, "rows x hidden");
    /* x and y, three weights, four intermediates; plus the two plans' 32 MB cuBLASLt workspaces */
    size_t elems = add_sz(add_sz(size_mul(a_x, 2, "x and y"), size_mul(n_w, 3, "the weights"), "the MLP's size"),
                          size_mul(a_h, 4, "the intermediates"), "the MLP's size");
    gpu_require_fits(add_sz(size_mul(elems, e, "the MLP's bytes"), 64u << 20, "the MLP's bytes"),
                     mlp_device_buffers);
    size_t host_floats = add_sz(n_x, size_mul(n_w, 3, "the weights"), "the host copies");
    size_mul(host_floats, sizeof(float), "the host copies");

    CUDA_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    void **big[] = {&m->gate, &m->up, &m->act, &m->prod};
    for (int i = 0; i < 4; i++) {
        CUDA_CHECK(cudaMalloc(big[i], a_h * e));
        CUDA_CHECK(cudaMemset(*big[i], 0, a_h * e));
    }
    CUDA_CHECK(cudaMalloc(&m->x, a_x * e));
    CUDA_CHECK(cudaMemset(m->x, 0, a_x * e));
    CUDA_CHECK(cudaMalloc(&m->y, a_x * e));
    CUDA_CHECK(cudaMemset(m->y, 0, a_x * e));
    void **w[] = {&m->wg, &m->wu, &m->wd};
    for (int i = 0; i < 3; i++) CUDA_CHECK(cudaMalloc(w[i], n_w * e));

    m->hx = host_alloc(n_x * sizeof(float));
    m->hwg = host_alloc(n_w * sizeof(float));
    m->hwu = host_alloc(n_w * sizeof(float));
    m->hwd = host_alloc(n_w * sizeof(float));
    void *staging = host_alloc((n_x > n_w ? n_x : n_w) * e);

    /* nn.Linear's default init: uniform in +-1/sqrt(fan_in); fan_in is dim for Wg and Wu, hidden
     * for Wd. Random data, never zeros: zeros hide unwritten outputs and can even run faster. */
    rng_t rng = rng_seed(seed);
    float bound_in = (float)(1.0 / sqrt((double)dim)), bound_down = (float)(1.0 / sqrt((double)hidden));
    fill_and_upload(&rng, t, m->hx, m->x, n_x, 1.0f, staging);
    fill_and_upload(&rng, t, m->hwg, m->wg, n_w, bound_in, staging);
    fill_and_upload(&rng, t, m->hwu, m->wu, n_w, bound_in, staging);
    fill_and_upload(&rng, t, m->hwd, m->wd, n_w, bound_down, staging);
    free(staging);
}

void mlp_free(mlp_t *m)
{
    void *dev[] = {m->x, m->wg, m->wu, m->wd, m->gate, m->up, m->act, m->prod, m->y};
    for (int i = 0; i < 9; i++) CUDA_CHECK(cudaFree(dev[i]));
    if (m->planned) {
        lt_plan_free(&m->plan_in);
        lt_plan_free(&m->plan_down);
        CUBLASLT_CHECK(cublasLtDestroy(m->lt));
    }
    if (m->stream) CUDA_CHECK(cudaStreamDestroy(m->stream));
    free(m->hx);
    free(m->hwg);
    free(m->hwu);
    free(m->hwd);
    *m = (mlp_t){0};
}

/* ---- correctness ------------------------------------------------------------------------ */

/* The reference is computed in double with no intermediate rounding; the eager GPU forward
 * rounds five times in a row: gate and up (to the storage type), act, prod, then y, each within the
 * unit roundoff u (bf16 2^-8, fp16 2^-11). GELU passes gate's error on times its condition
 * number |x gelu'(x) / gelu(x)|, at most 1.3 for |x| <= 1, where nn.Linear's init keeps almost
 * every gate value. So one output can be off by (1.3 + 4) u = 5.3 u relative to the size of the
 * terms summed into it (ref_mlp_error measures against that size, so cancellation in the sum
 * does not inflate it). At the smallest shapes (hidden = 1: nothing averages out) the error can
 * come near that bound: above dtype_tolerance's 1e-2 = 2.6 u for bf16. At large shapes the
 * roundings are independent and average out: about 1 u in bf16 at the article's shape (a CPU
 * emulation of the eager roundings; over 3000 seeds per shape, from 1x1x1 to 100x100x100, its
 * largest error was 3.7 u). We allow 8 u: a wrong index or a missing tail still gives errors of
 * order 1, and NaN poisoning catches unwritten elements. fp32 differs from the reference by
 * accumulation order and tanhf only, so dtype_tolerance holds there, and is tight enough to
 * catch a wrong GELU formula (erf instead of tanh changes y by about 1e-4). */
double mlp_tolerance(dtype_t t)
{
    switch (t) {
    case DTYPE_BF16: return 8.0 / 256.0;
    case DTYPE_FP16: return 8.0 / 2048.0;
    default: return dtype_tolerance(t);
    }
}

/* The storage type's smallest normal value: below it, rounding errors are absolute. */
static double smallest_normal(dtype_t t)
{
    return t == DTYPE_FP16 ? 6.103515625e-05 : (double)FLT_MIN; /* bf16 has fp32's exponent */
}

static void reference(const mlp_t *m, size_t row0, size_t rows, double *out, double *scale)
{
    if (ref_geglu_mlp_rows(m->hx, m->hwg, m->hwu, m->hwd, m->dim, m->hidden, row0, rows, out,
                           scale, smallest_normal(m->dtype)) != 0) {
        program_error("out of host memory for the reference");
        exit(EXIT_BAD_INPUT);
    }
}

/* The reference at rows row_of[0..n) of x, on every core. */
static void reference_at(const mlp_t *m, const size_t *row_of, size_t n, double *out, double *scale)
{
    if (ref_geglu_mlp_rows_at(m->hx, m->hwg, m->hwu, m->hwd, m->dim, m->hidden, row_of, n, out, scale,
                              smallest_normal(m->dtype)) != 0) {
        program_error("out of host memory for the reference");
        exit(EXIT_BAD_INPUT);
    }
}

void mlp_reference_rows(const mlp_t *m, size_t row0, size_t rows, double *out)
{
    reference(m, row0, rows, out, NULL);
}

double mlp_check(mlp_t *m, void (*forward)(void *ctx), void *ctx)
{
    size_t M = m->tokens, D = m->dim, e = dtype_size(m->dtype);
    size_t n_h = M * m->hidden;
    void *poisoned[] = {m->gate, m->up, m->act, m->prod};
    for (int i = 0; i < 4; i++) /* all-ones bits: NaN in every dtype */
        CUDA_CHECK(cudaMemsetAsync(poisoned[i], 0xFF, n_h * e, m->stream));
    CUDA_CHECK(cudaMemsetAsync(m->y, 0xFF, M * D * e, m->stream));
    CUDA_CHECK(cudaStreamSynchronize(m->stream));
    forward(ctx);
    CUDA_CHECK(cudaDeviceSynchronize());

    /* A row of the reference costs 3 * dim * hidden multiply-adds: every row while the whole
     * output costs at most 2^27 (a fraction of a second), else 16 rows spread from the first to
     * the last, fewer if even those would take more than about 2^31. */
    double row_cost = 3.0 * (double)D * (double)m->hidden;
    int every_row = (double)M * row_cost <= (double)(1u << 27);
    size_t rows = every_row ? M : (M < 16 ? M : 16);
    if (!every_row && (double)rows * row_cost > 2147483648.0) {
        rows = (size_t)(2147483648.0 / row_cost);
        if (rows < 2) rows = M < 2 ? M : 2;
    }

    float *got = host_alloc(rows * D * sizeof *got);
    double *want = host_alloc(rows * D * sizeof *want);
    double *scale = host_alloc(rows * D * sizeof *scale);
    void *bits = host_alloc((every_row ? M : 1) * D * e);
    size_t *row_of = host_alloc(rows * sizeof *row_of);
    if (every_row) {
        CUDA_CHECK(cudaMemcpy(bits, m->y, M * D * e, cudaMemcpyDeviceToHost));
        dtype_unpack(m->dtype, bits, got, M * D);
        for (size_t r = 0; r < rows; r++) row_of[r] = r;
    } else {
        for (size_t r = 0; r < rows; r++) {
            row_of[r] = rows == 1 ? 0 : r * (M - 1) / (rows - 1);
            CUDA_CHECK(cudaMemcpy(bits, (char *)m->y + row_of[r] * D * e, D * e, cudaMemcpyDeviceToHost));
            dtype_unpack(m->dtype, bits, got + r * D, D);
        }
    }
    reference_at(m, row_of, rows, want, scale);
    double err = ref_mlp_error(got, want, scale, rows * D);
    free(got);
    free(want);
    free(scale);
    free(bits);
    free(row_of);
    return err;
}
