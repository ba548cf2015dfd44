/* GPU tests of 04_fused_mlp's GEMM with the GeGLU epilogue, m = gelu_tanh(x Wg^T) * (x Wu^T),
 * against the CPU reference in double on the same rounded inputs: every version, bf16 and fp16;
 * a version that cannot run on this GPU (or in this build) is a SKIP that says why.
 *
 *   gpu_04_gemm_geglu                       every version, small shapes and the article's; a
 *                                           version whose tile width depends on the shape
 *                                           (version 9) also at one shape per width it picks
 *   gpu_04_gemm_geglu --version N --small   version N on the small shapes (and its widths'
 *                                           shapes) only: the sanitizers
 *   gpu_04_gemm_geglu --versions            prints the version numbers, one a line
 *   gpu_04_gemm_geglu --needs               prints each version and the compute capability it
 *                                           needs (10 * major + minor; 90 and up: that one exactly)
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
#include <string.h>

#include <cuda_runtime.h>

#include "dtype.h"
#include "../04_fused_mlp/gemm_geglu.h"
#include "harness.h"
#include "ref.h"

static int have_gpu(void) { return harness_no_gpu() == NULL; }

/* One problem: its inputs rounded to the dtype and packed for the GPU, and the reference of the
 * rows checked (all rows when rows is NULL). The reference costs 2 * dim * hidden multiply-adds
 * in double per row, seconds for the small shapes together: it is made once per dtype and shape
 * and checked against every version (see problem_for). */
typedef struct {
    dtype_t t;
    size_t M, dim, hidden, checked;
    size_t *rows;                      /* the rows of ref: checked of them */
    void *x_bits, *wg_bits, *wu_bits;  /* what the GPU reads */
    double *ref;                       /* checked x hidden: gelu_tanh(x Wg^T) * (x Wu^T) */
} problem;

static void problem_free(problem *p)
{
    free(p->rows), free(p->x_bits), free(p->wg_bits), free(p->wu_bits), free(p->ref);
    memset(p, 0, sizeof *p);
}

static int problem_make(problem *p, dtype_t t, size_t M, size_t dim, size_t hidden, const size_t *rows,
                        size_t nrows, uint64_t seed)
{
    const size_t es = dtype_size(t), checked = rows ? nrows : M;
    *p = (problem){.t = t, .M = M, .dim = dim, .hidden = hidden, .checked = checked};
    float *x = malloc(M * dim * sizeof *x), *wg = malloc(hidden * dim * sizeof *wg);
    float *wu = malloc(hidden * dim * sizeof *wu);
    double *g = malloc(hidden * sizeof *g), *u = malloc(hidden * sizeof *u);
    p->rows = malloc(checked * sizeof *p->rows);
    p->x_bits = malloc(M * dim * es), p->wg_bits = malloc(hidden * dim * es), p->wu_bits = malloc(hidden * dim * es);
    p->ref = malloc(checked * hidden * sizeof *p->ref);
    EXPECT(x && wg && wu && g && u && p->rows && p->x_bits && p->wg_bits && p->wu_bits && p->ref, "host allocation");

    /* Weights scaled like nn.Linear's init, so gate values are O(1) and GELU is exercised on
     * both its linear and its curved parts. */
    rng_t r = rng_seed(seed);
    const float w = 1.0f / sqrtf((float)dim);
    fill_uniform(&r, x, M * dim, -1.0f, 1.0f);
    fill_uniform(&r, wg, hidden * dim, -w, w);
    fill_uniform(&r, wu, hidden * dim, -w, w);
    dtype_round_and_pack(t, x, p->x_bits, M * dim);
    dtype_round_and_pack(t, wg, p->wg_bits, hidden * dim);
    dtype_round_and_pack(t, wu, p->wu_bits, hidden * dim);
    for (size_t k = 0; k < checked; k++) {
        const size_t row = rows ? rows[k] : k;
        p->rows[k] = row;
        ref_gemm_rows(x, wg, g, row, 1, dim, hidden, 1);
        ref_gemm_rows(x, wu, u, row, 1, dim, hidden, 1);
        for (size_t j = 0; j < hidden; j++) p->ref[k * hidden + j] = ref_gelu_tanh(g[j]) * u[j];
    }
    free(x), free(wg), free(wu), free(g), free(u);
    return 0;
}

/* Runs one version on one problem and compares its rows with the reference. Returns 0 when it
 * passes; prints the numbers either way. */
static int check_version(int version, const problem *p)
{
    const dtype_t t = p->t;
    const size_t M = p->M, dim = p->dim, hidden = p->hidden, checked = p->checked, es = dtype_size(t);
    float *got = malloc(M * hidden * sizeof *got), *got_rows = malloc(checked * hidden * sizeof *got_rows);
    void *m_bits = malloc(M * hidden * es);
    EXPECT(got && got_rows && m_bits, "host allocation");

    void *dx, *dwg, *dwu, *dm;
    EXPECT(cudaMalloc(&dx, M * dim * es) == cudaSuccess, "cudaMalloc x");
    EXPECT(cudaMalloc(&dwg, hidden * dim * es) == cudaSuccess, "cudaMalloc Wg");
    EXPECT(cudaMalloc(&dwu, hidden * dim * es) == cudaSuccess, "cudaMalloc Wu");
    EXPECT(cudaMalloc(&dm, M * hidden * es) == cudaSuccess, "cudaMalloc m");
    EXPECT(cudaMemcpy(dx, p->x_bits, M * dim * es, cudaMemcpyHostToDevice) == cudaSuccess, "copy x");
    EXPECT(cudaMemcpy(dwg, p->wg_bits, hidden * dim * es, cudaMemcpyHostToDevice) == cudaSuccess, "copy Wg");
    EXPECT(cudaMemcpy(dwu, p->wu_bits, hidden * dim * es, cudaMemcpyHostToDevice) == cudaSuccess, "copy Wu");
    EXPECT(cudaMemset(dm, 0xFF, M * hidden * es) == cudaSuccess, "poison m"); /* NaN everywhere */

    launch_gemm_geglu(version, t, dx, dwg, dwu, dm, M, dim, hidden, 0);
    EXPECT(cudaGetLastError() == cudaSuccess, "launch");
    cudaError_t err = cudaDeviceSynchronize();
    EXPECT(err == cudaSuccess, "kernel: %s", cudaGetErrorString(err));
    EXPECT(cudaMemcpy(m_bits, dm, M * hidden * es, cudaMemcpyDeviceToHost) == cudaSuccess, "copy m");
    dtype_unpack(t, m_bits, got, M * hidden);

    /* Every element written (no poison left), even in rows the reference does not cover. */
    size_t unwritten = 0;
    for (size_t i = 0; i < M * hidden; i++) unwritten += !isfinite(got[i]);
    for (size_t k = 0; k < checked; k++)
        memcpy(got_rows + k * hidden, got + p->rows[k] * hidden, hidden * sizeof *got_rows);
    const double e = rel_fro_error(got_rows, p->ref, checked * hidden), tol = dtype_tolerance(t);
    printf("  %s M=%zu dim=%zu hidden=%zu (%zu rows checked): rel. error %.2e (tolerance %.0e)\n",
           dtype_name(t), M, dim, hidden, checked, e, tol);

    cudaFree(dx), cudaFree(dwg), cudaFree(dwu), cudaFree(dm);
    free(got), free(got_rows), free(m_bits);
    EXPECT(unwritten == 0, "%zu elements left unwritten (NaN)", unwritten);
    EXPECT(e <= tol, "rel. error %.3e over tolerance %.0e", e, tol);
    return 0;
}

/* Smaller shapes: every row checked. (1, 8, 1) is one row, one column, one 16-byte chunk of K;
 * (2049, 136, 2055) has 17 x 17 tiles, more than a GPU has SMs, so a persistent kernel's blocks
 * each walk several tiles, tails included. Where m goes out through TMA stores (hidden a multiple
 * of 8: 512, 200, 1160 here; the others take the direct stores), (200, 96, 200) and
 * (1000, 264, 1160) have boxes that end past M and past hidden, which the engine clips; in
 * (60, 96, 200) the second consumer's 64 rows all lie past M. For stream-K (version 7): in
 * (130, 2048, 1000) 32 tiles of 32 steps of K are cut into 132 ranges, four or five blocks to a
 * tile; in (600, 512, 2056) 165 tiles, one wave and a part, are all split, each tile in two; in
 * (2049, 136, 2055) the first three waves stay whole and the rest are split. */
enum { N_SMALL = 12, N_DTYPES = 2 };
static const size_t small_shapes[N_SMALL][3] = {
    {1, 8, 1},         {17, 24, 33},      {100, 72, 130}, {129, 264, 257},   {256, 768, 512},
    {300, 40, 7},      {2049, 136, 2055}, {200, 96, 200}, {1000, 264, 1160}, {60, 96, 200},
    {130, 2048, 1000}, {600, 512, 2056},
};
static const dtype_t dtypes[N_DTYPES] = {DTYPE_BF16, DTYPE_FP16};

/* The problems of one dtype, the small shapes then the article's, made on first use and kept
 * for the other versions; main frees them. */
static problem problems[N_DTYPES][N_SMALL + 1];

static const problem *problem_for(dtype_t t, size_t shape, size_t M, size_t dim, size_t hidden, const size_t *rows,
                                  size_t nrows, uint64_t seed)
{
    problem *p = &problems[t == DTYPE_FP16][shape];
    if (!p->ref && problem_make(p, t, M, dim, hidden, rows, nrows, seed) != 0) {
        problem_free(p);
        return NULL;
    }
    return p;
}

static int check_small(int version, dtype_t t)
{
    for (size_t i = 0; i < N_SMALL; i++) {
        const size_t *s = small_shapes[i];
        char why[256] = "";
        EXPECT(gemm_geglu_accepts(version, t, s[0], s[1], s[2], why, sizeof why), "refused: %s", why);
        const problem *p = problem_for(t, i, s[0], s[1], s[2], NULL, 0, 100 + i);
        if (!p || check_version(version, p)) return 1;
    }
    return 0;
}

/* The article's shape (64 x 128 tokens, 768 -> 3072), on rows at the edges of tiles and spread
 * over the whole output. */
static int check_article(int version, dtype_t t)
{
    const size_t M = 8192, dim = 768, hidden = 3072;
    size_t rows[48], n = 0;
    for (size_t k = 0; k < 16; k++) rows[n++] = k * 509 % M;                /* spread out */
    for (size_t k = 0; k < 16; k++) rows[n++] = 128 * (k * 37 % 64) + 127; /* last of a tile */
    for (size_t k = 0; k < 14; k++) rows[n++] = 128 * (k * 11 % 64) + 64;  /* second warp row */
    rows[n++] = 0, rows[n++] = M - 1;
    char why[256] = "";
    EXPECT(gemm_geglu_accepts(version, t, M, dim, hidden, why, sizeof why), "refused: %s", why);
    const problem *p = problem_for(t, N_SMALL, M, dim, hidden, rows, n, 7);
    return !p || check_version(version, p);
}

/* A version whose tile width depends on the shape (version 9): one problem for each width its rule
 * picks on this GPU for 200 rows (two rows of tiles, the second short), at the first hidden size
 * (scanned from 1 up) that gets that width; dim 72 (a tail of K). Returns how many widths it found
 * in *widths. */
enum { WIDTH_ROWS = 200, WIDTH_DIM = 72, WIDTH_SCAN = 12000, MAX_WIDTHS = 16 };
static int width_shapes(int version, size_t hidden_of[MAX_WIDTHS], int cols_of[MAX_WIDTHS])
{
    int n = 0;
    for (size_t hidden = 1; hidden <= WIDTH_SCAN && n < MAX_WIDTHS; hidden++) {
        int rows, cols, seen = 0;
        gemm_geglu_tile(version, WIDTH_ROWS, hidden, &rows, &cols);
        for (int i = 0; i < n; i++) seen |= cols_of[i] == cols;
        if (!seen) hidden_of[n] = hidden, cols_of[n++] = cols;
    }
    return n;
}

/* Whether a version's tile width depends on the shape: its tile differs between two shapes. */
static int several_widths(int version)
{
    int rows, narrow, wide;
    gemm_geglu_tile(version, 1, 8, &rows, &narrow);
    gemm_geglu_tile(version, 8192, 3072, &rows, &wide);
    return narrow != wide;
}

static int check_widths(int version, dtype_t t)
{
    size_t hidden_of[MAX_WIDTHS] = {0};
    int cols_of[MAX_WIDTHS] = {0};
    const int n = width_shapes(version, hidden_of, cols_of);
    for (int i = 0; i < n; i++) {
        problem p = {0};
        printf("  tile width %d: %d x %d -> %zu\n", cols_of[i], WIDTH_ROWS, WIDTH_DIM, hidden_of[i]);
        if (problem_make(&p, t, WIDTH_ROWS, WIDTH_DIM, hidden_of[i], NULL, 0, 300 + (uint64_t)i) != 0) {
            problem_free(&p);
            return 1;
        }
        const int rc = check_version(version, &p);
        problem_free(&p);
        if (rc) return 1;
    }
    return 0;
}

/* Dtype and shape only: runs without a GPU. */
static int test_accepts_conditions(void)
{
    char why[256];
    EXPECT(gemm_geglu_n_versions() >= 5, "%d versions", gemm_geglu_n_versions());
    EXPECT(!gemm_geglu_version_info(0) && !gemm_geglu_version_info(gemm_geglu_n_versions() + 1), "info outside 1..n");
    EXPECT(!gemm_geglu_accepts(0, DTYPE_BF16, 8192, 768, 3072, why, sizeof why), "version 0 accepted");
    for (int v = 1; v <= gemm_geglu_n_versions(); v++) {
        const gemm_geglu_version *info = gemm_geglu_version_info(v);
        EXPECT(info && info->number == v && info->name && info->idea && info->min_cc >= 80, "version %d's row", v);
        why[0] = '\0';
        EXPECT(gemm_geglu_accepts(v, DTYPE_BF16, 8192, 768, 3072, why, sizeof why), "v%d article bf16: %s", v, why);
        EXPECT(gemm_geglu_accepts(v, DTYPE_FP16, 8192, 768, 3072, why, sizeof why), "v%d article fp16: %s", v, why);
        EXPECT(!gemm_geglu_accepts(v, DTYPE_FP32, 8192, 768, 3072, why, sizeof why), "v%d: fp32 accepted", v);
        EXPECT(why[0] != '\0', "v%d: no reason given", v);
        EXPECT(!gemm_geglu_accepts(v, DTYPE_BF16, 8192, 772, 3072, why, sizeof why), "v%d: dim %% 8 != 0", v);
        EXPECT(!gemm_geglu_accepts(v, DTYPE_BF16, 0, 768, 3072, why, sizeof why), "v%d: empty M", v);
        EXPECT(!gemm_geglu_accepts(v, DTYPE_BF16, 8, 768, 0, why, sizeof why), "v%d: empty hidden", v);
        EXPECT(!gemm_geglu_accepts(v, DTYPE_BF16, (size_t)1 << 31, 768, 3072, why, sizeof why), "v%d: M past int", v);
        EXPECT(gemm_geglu_accepts(v, DTYPE_BF16, 8, 768, 3072, NULL, 0), "v%d: accepted without room for why", v);
        EXPECT(!gemm_geglu_accepts(v, DTYPE_FP32, 8, 768, 3072, NULL, 0), "v%d: refused without room for why", v);
    }
    /* 65536 rows of tiles: past the grid's y limit for one block per tile, not for persistent blocks. */
    const size_t tall = (size_t)65535 * 128 + 1;
    EXPECT(!gemm_geglu_accepts(1, DTYPE_BF16, tall, 768, 128, why, sizeof why), "v1: %zu rows accepted", tall);
    EXPECT(gemm_geglu_accepts(4, DTYPE_BF16, tall, 768, 128, why, sizeof why), "v4: %zu rows refused: %s", tall, why);
    return 0;
}

static int test_default_version(void)
{
    if (!have_gpu()) SKIP(harness_no_gpu());
    const int v = gemm_geglu_default_version();
    if (!v) SKIP("no version runs here (needs sm_80 or newer)");
    printf("  default: version %d (%s)\n", v, gemm_geglu_version_info(v)->name);
    EXPECT(gemm_geglu_runs_here(v), "the default does not run here");
    EXPECT(!gemm_geglu_runs_here(0) && !gemm_geglu_runs_here(gemm_geglu_n_versions() + 1), "versions outside 1..n");
    return 0;
}

/* One version, one dtype, one group of shapes: a PASS/FAIL/SKIP line of its own. */
enum shapes { SMALL, WIDTHS, ARTICLE };
static void run_version(int version, dtype_t t, enum shapes group)
{
    static char skip_why[160];
    const gemm_geglu_version *info = gemm_geglu_version_info(version);
    char name[96];
    snprintf(name, sizeof name, "gemm_geglu_%d_%s_%s_%s", version, info->name, dtype_name(t),
             group == ARTICLE ? "article_shape" : group == WIDTHS ? "every_tile_width" : "small");
    harness_skip_reason = NULL;
    fflush(stdout);
    int rc = 0;
    if (!have_gpu()) {
        harness_skip_reason = harness_no_gpu();
    } else if (!gemm_geglu_runs_here(version)) {
        snprintf(skip_why, sizeof skip_why, "version %d needs sm_%d%s", version, info->min_cc,
                 info->min_cc >= 90 ? " exactly, and this file built for sm_90a" : " or newer");
        harness_skip_reason = skip_why;
    } else {
        rc = group == ARTICLE ? check_article(version, t) : group == WIDTHS ? check_widths(version, t) : check_small(version, t);
    }
    if (rc) {
        printf("FAIL %s\n", name);
        harness_failed = 1;
    } else if (harness_skip_reason) {
        printf("SKIP %s: %s\n", name, harness_skip_reason);
    } else {
        printf("PASS %s\n", name);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int only = 0, small = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--versions")) {
            for (int v = 1; v <= gemm_geglu_n_versions(); v++) printf("%d\n", v);
            return 0;
        } else if (!strcmp(argv[i], "--needs")) {
            for (int v = 1; v <= gemm_geglu_n_versions(); v++) printf("%d %d\n", v, gemm_geglu_version_info(v)->min_cc);
            return 0;
        } else if (!strcmp(argv[i], "--small")) {
            small = 1;
        } else if (!strcmp(argv[i], "--version") && i + 1 < argc) {
            char *end;
            const long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > gemm_geglu_n_versions()) {
                fprintf(stderr, "gpu_04_gemm_geglu: error: --version takes 1..%d, not '%s'\n", gemm_geglu_n_versions(),
                        argv[i]);
                return 1;
            }
            only = (int)v;
        } else {
            fprintf(stderr, "gpu_04_gemm_geglu: error: unknown argument '%s' (--version N, --small, --versions, --needs)\n",
                    argv[i]);
            return 1;
        }
    }
    TEST_RUN(test_accepts_conditions);
    TEST_RUN(test_default_version);
    /* the small shapes, each tile width of the versions that have several, then the article's */
    const int groups = small ? WIDTHS + 1 : ARTICLE + 1;
    for (int g = SMALL; g < groups; g++)
        for (int v = 1; v <= gemm_geglu_n_versions(); v++)
            for (int d = 0; d < N_DTYPES; d++)
                if ((!only || v == only) && (g != WIDTHS || (have_gpu() && several_widths(v)))) run_version(v, dtypes[d], (enum shapes)g);
    for (int d = 0; d < N_DTYPES; d++)
        for (int i = 0; i <= N_SMALL; i++) problem_free(&problems[d][i]);
    TEST_EXIT();
}
