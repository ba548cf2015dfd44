/* GPU tests of 04_fused_mlp's own kernels (geglu.cu, decode.cu) against the CPU reference in double on the
 * same rounded inputs, outputs poisoned with NaN first:
 *   - the fused GeGLU, m = gelu(gate) * up, in both forms the stage uses: separate buffers (one
 *     flat array) and the two halves of each row of the merged GEMM's output;
 *   - the decode kernels, m = gelu(x Wg^T) * (x Wu^T) and y = m Wd^T, for 1..16 tokens.
 * Lengths are odd on purpose: not multiples of the 16-byte vector (8 bf16 values), rows that do
 * not start on 16-byte boundaries, a pointer one element past an aligned one, more rows than
 * the grid's y limit, and decode dot products split over several warps.
 *
 * Tolerance: each output is computed in fp32 and rounded once, so its relative error is about
 * one rounding of the storage type (2^-8 bf16, 2^-11 fp16) plus fp32 sums; dtype_tolerance
 * (1e-2, 2e-3, 1e-5) leaves a margin and still catches a wrong index or a missing tail, which
 * gives errors of order 1 (or NaN from the poison).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "../04_fused_mlp/decode.h"
#include "../04_fused_mlp/geglu.h"
#include "dtype.h"
#include "gpu.h"
#include "harness.h"
#include "ref.h"

static const dtype_t dtypes[] = {DTYPE_BF16, DTYPE_FP16, DTYPE_FP32};

static int have_gpu(void) { return harness_no_gpu() == NULL; }

/* n random values in [-bound, bound), rounded to t in place, uploaded, then `pad` NaN values
 * (all-ones bits in every dtype): the rows past the tokens that the decode kernels read
 * (decode_padded_rows) and must never let through to a stored output. NULL on failure. */
static void *upload_random_padded(rng_t *r, dtype_t t, float *host, size_t n, size_t pad, float bound)
{
    void *bits = malloc(n * dtype_size(t) + 1), *dev = NULL;
    if (!bits) return NULL;
    fill_uniform(r, host, n, -bound, bound);
    dtype_round_and_pack(t, host, bits, n);
    if (cudaMalloc(&dev, (n + pad) * dtype_size(t) + 16) != cudaSuccess ||
        cudaMemset(dev, 0xFF, (n + pad) * dtype_size(t) + 16) != cudaSuccess ||
        cudaMemcpy(dev, bits, n * dtype_size(t), cudaMemcpyHostToDevice) != cudaSuccess)
        dev = NULL;
    free(bits);
    return dev;
}

/* The same without padding. */
static void *upload_random(rng_t *r, dtype_t t, float *host, size_t n, float bound)
{
    return upload_random_padded(r, t, host, n, 0, bound);
}

/* An output of n values, poisoned with NaN (all-ones bits in every dtype). */
static void *poisoned(dtype_t t, size_t n)
{
    void *dev = NULL;
    if (cudaMalloc(&dev, n * dtype_size(t) + 16) != cudaSuccess) return NULL;
    if (cudaMemset(dev, 0xFF, n * dtype_size(t) + 16) != cudaSuccess) return NULL;
    return dev;
}

/* Waits for the kernels, copies n values back as floats; 0 on success. */
static int download(dtype_t t, const void *dev, float *host, size_t n)
{
    void *bits = malloc(n * dtype_size(t) + 1);
    if (!bits) return -1;
    int rc = cudaDeviceSynchronize() == cudaSuccess &&
                     cudaMemcpy(bits, dev, n * dtype_size(t), cudaMemcpyDeviceToHost) == cudaSuccess
                 ? 0
                 : -1;
    if (rc == 0) dtype_unpack(t, bits, host, n);
    free(bits);
    return rc;
}

/* ---- the fused GeGLU ---------------------------------------------------------------------- */

/* rows x cols outputs from gate/up rows of stride ld; `offset` elements into each input buffer
 * (1: every input pointer misaligned). concat: gate and up are the halves of one buffer. */
static int geglu_case(dtype_t t, size_t rows, size_t cols, int concat, size_t offset, uint64_t seed)
{
    const size_t ld = concat ? 2 * cols : cols, e = dtype_size(t);
    const size_t n_in = rows * ld + offset;
    rng_t r = rng_seed(seed);
    float *g = malloc(n_in * sizeof *g), *u = malloc(n_in * sizeof *u), *got = malloc(rows * cols * sizeof *got);
    double *want = malloc(rows * cols * sizeof *want);
    EXPECT(g && u && got && want, "host allocation");
    void *dg = upload_random(&r, t, g, n_in, 3.0f), *du = concat ? dg : upload_random(&r, t, u, n_in, 3.0f);
    void *dm = poisoned(t, rows * cols);
    EXPECT(dg && du && dm, "device allocation");
    const float *gh = g + offset, *uh = (concat ? g : u) + offset + (concat ? cols : 0);
    const char *gate = (const char *)dg + offset * e, *up = (const char *)du + (offset + (concat ? cols : 0)) * e;

    launch_geglu(t, gate, up, ld, dm, rows, cols, 0);
    EXPECT(cudaGetLastError() == cudaSuccess, "launch");
    EXPECT(download(t, dm, got, rows * cols) == 0, "kernel or copy failed");
    for (size_t i = 0; i < rows; i++)
        for (size_t c = 0; c < cols; c++)
            want[i * cols + c] = ref_gelu_tanh(gh[i * ld + c]) * (double)uh[i * ld + c];
    double err = rel_fro_error(got, want, rows * cols);
    EXPECT(err <= dtype_tolerance(t), "%s %zu x %zu (ld %zu, offset %zu, %s): rel. error %.3e > %.0e",
           dtype_name(t), rows, cols, ld, offset, concat ? "halves" : "separate", err, dtype_tolerance(t));
    cudaFree(dg);
    if (!concat) cudaFree(du);
    cudaFree(dm);
    free(g);
    free(u);
    free(got);
    free(want);
    return 0;
}

/* Separate buffers, as rung fused_geglu passes them: one flat array of M * hidden. */
static int test_geglu_separate(void)
{
    if (!have_gpu()) SKIP(harness_no_gpu());
    const size_t lengths[] = {1, 7, 8, 9, 31, 1000, 4099, 1 << 20};
    for (int d = 0; d < 3; d++)
        for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
            if (geglu_case(dtypes[d], 1, lengths[i], 0, 0, 10 + i)) return 1;
            if (geglu_case(dtypes[d], 1, lengths[i], 0, 1, 20 + i)) return 1; /* misaligned: scalar path */
        }
    return 0;
}

/* The halves of the merged GEMM's output, [rows, 2 * hidden], as rung merged passes them. */
static int test_geglu_halves(void)
{
    if (!have_gpu()) SKIP(harness_no_gpu());
    const size_t shapes[][2] = {{1, 1}, {3, 8}, {5, 13}, {17, 40}, {50, 130}, {100, 257}, {64, 3072}, {65537, 3}};
    for (int d = 0; d < 3; d++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            if (geglu_case(dtypes[d], shapes[i][0], shapes[i][1], 1, 0, 30 + i)) return 1;
    return 0;
}

/* ---- the decode kernels ------------------------------------------------------------------ */

static int decode_case(dtype_t t, size_t tokens, size_t dim, size_t hidden, uint64_t seed)
{
    char why[256];
    if (!decode_runs_here()) {
        printf("  not run on this GPU: the decode kernels need sm_80 or newer\n");
        return 0;
    }
    EXPECT(decode_supported(t, tokens, dim, hidden, why, sizeof why), "refused: %s", why);
    rng_t r = rng_seed(seed);
    float *x = malloc(tokens * dim * sizeof *x), *wg = malloc(hidden * dim * sizeof *wg);
    float *wu = malloc(hidden * dim * sizeof *wu), *wd = malloc(dim * hidden * sizeof *wd);
    float *m_in = malloc(tokens * hidden * sizeof *m_in), *got_m = malloc(tokens * hidden * sizeof *got_m);
    float *got_y = malloc(tokens * dim * sizeof *got_y);
    double *want_m = malloc(tokens * hidden * sizeof *want_m), *want_y = malloc(tokens * dim * sizeof *want_y);
    EXPECT(x && wg && wu && wd && m_in && got_m && got_y && want_m && want_y, "host allocation");
    const float b_in = 1.0f / sqrtf((float)dim), b_down = 1.0f / sqrtf((float)hidden);
    /* x and the down kernel's input have the rows the kernels read, NaN past the tokens */
    const size_t pad = decode_padded_rows(tokens) - tokens;
    void *dx = upload_random_padded(&r, t, x, tokens * dim, pad * dim, 1.0f);
    void *dwg = upload_random(&r, t, wg, hidden * dim, b_in);
    void *dwu = upload_random(&r, t, wu, hidden * dim, b_in), *dwd = upload_random(&r, t, wd, dim * hidden, b_down);
    /* The down kernel gets its own input, so each kernel is tested alone. */
    void *dmi = upload_random_padded(&r, t, m_in, tokens * hidden, pad * hidden, 0.5f);
    EXPECT(dx && dwg && dwu && dwd && dmi, "device allocation");

    ref_gemm_rows(x, wg, want_m, 0, tokens, dim, hidden, 1);
    double *up = malloc(tokens * hidden * sizeof *up);
    EXPECT(up, "host allocation");
    ref_gemm_rows(x, wu, up, 0, tokens, dim, hidden, 1);
    for (size_t i = 0; i < tokens * hidden; i++) want_m[i] = ref_gelu_tanh(want_m[i]) * up[i];
    ref_gemm_rows(m_in, wd, want_y, 0, tokens, hidden, dim, 1);
    /* Every plan, each on freshly poisoned outputs: both unit shapes, and where clusters exist
     * K split 2 and 4 ways at 3 and 16 tokens (a partial and a whole tile of tokens; at a K of
     * one or two steps some ranks have none). The plans decode_plan_for picks are among them. */
    const int max_split = gpu_compute_capability() >= 90 && (tokens == 3 || tokens == 16) ? 4 : 1;
    for (int rows = 8; rows <= 16; rows += 8)
        for (int split = 1; split <= max_split; split *= 2) {
            const decode_plan plan = {rows, split};
            void *dm = poisoned(t, tokens * hidden), *dy = poisoned(t, tokens * dim);
            EXPECT(dm && dy, "device allocation");
            launch_decode_gate_up(t, dx, dwg, dwu, dm, tokens, dim, hidden, plan, 0, NULL);
            launch_decode_down(t, dmi, dwd, dy, tokens, hidden, dim, plan, 0, NULL);
            EXPECT(cudaGetLastError() == cudaSuccess, "launch");
            EXPECT(download(t, dm, got_m, tokens * hidden) == 0, "gate_up kernel or copy failed");
            EXPECT(download(t, dy, got_y, tokens * dim) == 0, "down kernel or copy failed");
            double err_m = rel_fro_error(got_m, want_m, tokens * hidden);
            double err_y = rel_fro_error(got_y, want_y, tokens * dim);
            EXPECT(err_m <= dtype_tolerance(t),
                   "%s decode_gate_up, %d-row units split %d ways, %zu tokens, dim %zu, hidden %zu: rel. error %.3e",
                   dtype_name(t), rows, split, tokens, dim, hidden, err_m);
            EXPECT(err_y <= dtype_tolerance(t),
                   "%s decode_down, %d-row units split %d ways, %zu tokens, hidden %zu -> dim %zu: rel. error %.3e",
                   dtype_name(t), rows, split, tokens, hidden, dim, err_y);
            cudaFree(dm);
            cudaFree(dy);
        }
    void *dev[] = {dx, dwg, dwu, dwd, dmi};
    for (int i = 0; i < 5; i++) cudaFree(dev[i]);
    float *host[] = {x, wg, wu, wd, m_in, got_m, got_y};
    for (int i = 0; i < 7; i++) free(host[i]);
    free(want_m);
    free(want_y);
    free(up);
    return 0;
}

static int test_decode(void)
{
    if (!have_gpu()) SKIP(harness_no_gpu());
    /* {dim, hidden}: tiny; not multiples of 8 (element-by-element loads); K with a partial last
     * step of 64; K long enough for several rounds of loads per warp (4104 = 64 x 64 + 8;
     * 25000: nine; 65536: 22, with 8192 gate_up blocks of one warp); the article's widths.
     * Rows not a multiple of 8 leave a partial weight tile everywhere (36: a last block of 4 rows
     * of Wd, with 16-byte loads). */
    const size_t shapes[][2] = {{24, 40},    {7, 9},      {30, 50},    {72, 130},   {264, 257},  {36, 1000},
                                {64, 4096},  {4104, 520}, {768, 3072}, {16, 25000}, {8, 65536}};
    const size_t tokens[] = {1, 3, 8, 9, 16};
    const dtype_t tc[] = {DTYPE_BF16, DTYPE_FP16};
    for (int d = 0; d < 2; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t k = 0; k < sizeof tokens / sizeof tokens[0]; k++)
                if (decode_case(tc[d], tokens[k], shapes[s][0], shapes[s][1], 100 + s * 8 + k)) return 1;
    return 0;
}

static int test_decode_refuses(void)
{
    if (!have_gpu()) SKIP(harness_no_gpu());
    char why[256] = "";
    EXPECT(!decode_supported(DTYPE_BF16, DECODE_MAX_TOKENS + 1, 768, 3072, why, sizeof why), "17 tokens accepted");
    EXPECT(why[0] != '\0', "no reason given");
    EXPECT(!decode_supported(DTYPE_BF16, 0, 768, 3072, why, sizeof why), "0 tokens accepted");
    EXPECT(!decode_supported(DTYPE_FP32, 8, 768, 3072, why, sizeof why), "fp32 accepted by tensor-core kernels");
    EXPECT(decode_supported(DTYPE_FP16, 16, 768, 3072, why, sizeof why), "fp16, 16 tokens refused: %s", why);
    return 0;
}

int main(void)
{
    TEST_RUN(test_geglu_separate);
    TEST_RUN(test_geglu_halves);
    TEST_RUN(test_decode);
    TEST_RUN(test_decode_refuses);
    TEST_EXIT();
}
