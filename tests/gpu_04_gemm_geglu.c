/* GPU tests of 04_fused_mlp's GEMM with the GeGLU epilogue, m = gelu_tanh(x Wg^T) * (x Wu^T),
 * against the CPU reference in double on the same rounded inputs.
 *
 * Shapes are chosen to leave tails everywhere: M, hidden and dim that are not multiples of the
 * 128 x 128 x 32 tile, down to a single row, column and 16-byte chunk; then the article's shape,
 * checked on sampled rows (the reference costs 2 * dim * hidden per row).
 *
 * Tolerance: the kernel sums exact products of 16-bit inputs in fp32, applies GELU and the
 * product in fp32, and rounds once. The fp32 errors are ~1e-6 relative at these K, so the error
 * is that one final rounding: relative at most 2^-8 (bf16) or 2^-11 (fp16) per element, about
 * 2e-3 and 3e-4 in relative Frobenius norm. dtype_tolerance (1e-2, 2e-3) leaves a 4-5x margin
 * and still catches any wrong tile, lane or tail, which gives errors of order 1.
 */
#include <stdint.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "dtype.h"
#include "../04_fused_mlp/gemm_geglu.h"
#include "harness.h"
#include "ref.h"

static int have_gpu(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

/* Runs one problem and compares `nrows` rows (all rows when rows == NULL) with the reference.
 * Returns 0 when it passes; prints the numbers either way. */
static int check_shape(dtype_t t, size_t M, size_t dim, size_t hidden, const size_t *rows,
                       size_t nrows, uint64_t seed)
{
    const size_t es = dtype_size(t);
    float *x = malloc(M * dim * sizeof *x), *wg = malloc(hidden * dim * sizeof *wg);
    float *wu = malloc(hidden * dim * sizeof *wu), *got = malloc(M * hidden * sizeof *got);
    void *x_bits = malloc(M * dim * es), *wg_bits = malloc(hidden * dim * es);
    void *wu_bits = malloc(hidden * dim * es), *m_bits = malloc(M * hidden * es);
    const size_t checked = rows ? nrows : M;
    double *g = malloc(hidden * sizeof *g), *u = malloc(hidden * sizeof *u);
    double *ref = malloc(checked * hidden * sizeof *ref);
    float *got_rows = malloc(checked * hidden * sizeof *got_rows);
    EXPECT(x && wg && wu && got && x_bits && wg_bits && wu_bits && m_bits && g && u && ref && got_rows,
           "host allocation");

    /* Weights scaled like nn.Linear's init, so gate values are O(1) and GELU is exercised on
     * both its linear and its curved parts. */
    rng_t r = rng_seed(seed);
    const float w = 1.0f / sqrtf((float)dim);
    fill_uniform(&r, x, M * dim, -1.0f, 1.0f);
    fill_uniform(&r, wg, hidden * dim, -w, w);
    fill_uniform(&r, wu, hidden * dim, -w, w);
    dtype_round_and_pack(t, x, x_bits, M * dim);
    dtype_round_and_pack(t, wg, wg_bits, hidden * dim);
    dtype_round_and_pack(t, wu, wu_bits, hidden * dim);

    void *dx, *dwg, *dwu, *dm;
    EXPECT(cudaMalloc(&dx, M * dim * es) == cudaSuccess, "cudaMalloc x");
    EXPECT(cudaMalloc(&dwg, hidden * dim * es) == cudaSuccess, "cudaMalloc Wg");
    EXPECT(cudaMalloc(&dwu, hidden * dim * es) == cudaSuccess, "cudaMalloc Wu");
    EXPECT(cudaMalloc(&dm, M * hidden * es) == cudaSuccess, "cudaMalloc m");
    EXPECT(cudaMemcpy(dx, x_bits, M * dim * es, cudaMemcpyHostToDevice) == cudaSuccess, "copy x");
    EXPECT(cudaMemcpy(dwg, wg_bits, hidden * dim * es, cudaMemcpyHostToDevice) == cudaSuccess, "copy Wg");
    EXPECT(cudaMemcpy(dwu, wu_bits, hidden * dim * es, cudaMemcpyHostToDevice) == cudaSuccess, "copy Wu");
    EXPECT(cudaMemset(dm, 0xFF, M * hidden * es) == cudaSuccess, "poison m"); /* NaN everywhere */

    launch_gemm_geglu(t, dx, dwg, dwu, dm, M, dim, hidden, 0);
    EXPECT(cudaGetLastError() == cudaSuccess, "launch");
    cudaError_t err = cudaDeviceSynchronize();
    EXPECT(err == cudaSuccess, "kernel: %s", cudaGetErrorString(err));
    EXPECT(cudaMemcpy(m_bits, dm, M * hidden * es, cudaMemcpyDeviceToHost) == cudaSuccess, "copy m");
    dtype_unpack(t, m_bits, got, M * hidden);

    /* Every element written (no poison left), even in rows the reference does not cover. */
    size_t unwritten = 0;
    for (size_t i = 0; i < M * hidden; i++) unwritten += !isfinite(got[i]);

    for (size_t k = 0; k < checked; k++) {
        const size_t row = rows ? rows[k] : k;
        ref_gemm_rows(x, wg, g, row, 1, dim, hidden, 1);
        ref_gemm_rows(x, wu, u, row, 1, dim, hidden, 1);
        for (size_t j = 0; j < hidden; j++) {
            ref[k * hidden + j] = ref_gelu_tanh(g[j]) * u[j];
            got_rows[k * hidden + j] = got[row * hidden + j];
        }
    }
    const double e = rel_fro_error(got_rows, ref, checked * hidden), tol = dtype_tolerance(t);
    printf("  %s M=%zu dim=%zu hidden=%zu (%zu rows checked): rel. error %.2e (tolerance %.0e)\n",
           dtype_name(t), M, dim, hidden, checked, e, tol);

    cudaFree(dx), cudaFree(dwg), cudaFree(dwu), cudaFree(dm);
    free(x), free(wg), free(wu), free(got), free(x_bits), free(wg_bits), free(wu_bits), free(m_bits);
    free(g), free(u), free(ref), free(got_rows);
    EXPECT(unwritten == 0, "%zu elements left unwritten (NaN)", unwritten);
    EXPECT(e <= tol, "rel. error %.3e over tolerance %.0e", e, tol);
    return 0;
}

/* Smaller shapes: every row checked. (1, 8, 1) is one row, one column, one 16-byte chunk of K;
 * (2049, 136, 2055) has 17 x 17 tiles, more than a GPU has SMs, so a persistent kernel's CTAs
 * each walk several tiles, tails included. On Hopper, m goes out through TMA stores when hidden
 * is a multiple of 8 (512, 200, 1160 here; the others take the direct stores): (200, 96, 200)
 * and (1000, 264, 1160) have boxes that end past M and past hidden, which the engine clips; in
 * (60, 96, 200) the second consumer's 64 rows all lie past M. */
static int check_small(dtype_t t)
{
    static const size_t shapes[][3] = {
        {1, 8, 1},   {17, 24, 33},      {100, 72, 130}, {129, 264, 257},   {256, 768, 512},
        {300, 40, 7}, {2049, 136, 2055}, {200, 96, 200}, {1000, 264, 1160}, {60, 96, 200},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        EXPECT(gemm_geglu_supported(t, shapes[i][0], shapes[i][1], shapes[i][2]), "supported");
        if (check_shape(t, shapes[i][0], shapes[i][1], shapes[i][2], NULL, 0, 100 + i)) return 1;
    }
    return 0;
}

/* The article's shape (64 x 128 tokens, 768 -> 3072), on rows at the edges of CTA tiles and
 * spread over the whole output. */
static int check_article(dtype_t t)
{
    const size_t M = 8192, dim = 768, hidden = 3072;
    size_t rows[48], n = 0;
    for (size_t k = 0; k < 16; k++) rows[n++] = k * 509 % M;                /* spread out */
    for (size_t k = 0; k < 16; k++) rows[n++] = 128 * (k * 37 % 64) + 127; /* last of a tile */
    for (size_t k = 0; k < 14; k++) rows[n++] = 128 * (k * 11 % 64) + 64;  /* second warp row */
    rows[n++] = 0, rows[n++] = M - 1;
    EXPECT(gemm_geglu_supported(t, M, dim, hidden), "supported");
    return check_shape(t, M, dim, hidden, rows, n, 7);
}

static int test_supported_conditions(void)
{
    if (!have_gpu()) SKIP("no CUDA GPU");
    int major = 0;
    EXPECT(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess, "attr");
    if (major < 8) SKIP("needs sm_80 or newer");
    printf("  path: %s\n", gemm_geglu_path());
    EXPECT(gemm_geglu_supported(DTYPE_BF16, 8192, 768, 3072), "article shape, bf16");
    EXPECT(gemm_geglu_supported(DTYPE_FP16, 8192, 768, 3072), "article shape, fp16");
    EXPECT(!gemm_geglu_supported(DTYPE_FP32, 8192, 768, 3072), "fp32 has no path");
    EXPECT(!gemm_geglu_supported(DTYPE_BF16, 8192, 772, 3072), "dim not a multiple of 8");
    EXPECT(!gemm_geglu_supported(DTYPE_BF16, 0, 768, 3072), "empty M");
    EXPECT(!gemm_geglu_supported(DTYPE_BF16, 8, 768, 0), "empty hidden");
    EXPECT(!gemm_geglu_supported(DTYPE_BF16, (size_t)1 << 31, 768, 3072), "M past int");
    return 0;
}

static int test_bf16_small(void)
{
    if (!have_gpu()) SKIP("no CUDA GPU");
    if (!gemm_geglu_supported(DTYPE_BF16, 1, 8, 1)) SKIP("needs sm_80 or newer");
    return check_small(DTYPE_BF16);
}

static int test_fp16_small(void)
{
    if (!have_gpu()) SKIP("no CUDA GPU");
    if (!gemm_geglu_supported(DTYPE_FP16, 1, 8, 1)) SKIP("needs sm_80 or newer");
    return check_small(DTYPE_FP16);
}

static int test_bf16_article_shape(void)
{
    if (!have_gpu()) SKIP("no CUDA GPU");
    if (!gemm_geglu_supported(DTYPE_BF16, 1, 8, 1)) SKIP("needs sm_80 or newer");
    return check_article(DTYPE_BF16);
}

static int test_fp16_article_shape(void)
{
    if (!have_gpu()) SKIP("no CUDA GPU");
    if (!gemm_geglu_supported(DTYPE_FP16, 1, 8, 1)) SKIP("needs sm_80 or newer");
    return check_article(DTYPE_FP16);
}

int main(void)
{
    TEST_RUN(test_supported_conditions);
    TEST_RUN(test_bf16_small);
    TEST_RUN(test_fp16_small);
    TEST_RUN(test_bf16_article_shape);
    TEST_RUN(test_fp16_article_shape);
    TEST_EXIT();
}
