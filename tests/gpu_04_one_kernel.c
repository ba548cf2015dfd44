/* GPU test of 04_fused_mlp's one-kernel rung (one_kernel.cu): y = (gelu(x Wg^T) * (x Wu^T)) Wd^T in
 * one launch, against the CPU reference in double (common/ref_mlp.h) on the same rounded inputs,
 * with the MLP stages' tolerance (03_simple_mlp's mlp_tolerance: 8 units of the storage type's
 * rounding, measured against the size of the terms summed).
 *
 * Inputs are fresh random values (never zeros), the output is poisoned with NaN (0xFF bytes)
 * before every run. x and y have 16 rows, as the stages allocate them (MLP_MIN_ROWS); x's rows
 * past the tokens hold NaN and y's rows past the tokens must keep their poison: the kernel reads
 * and writes the tokens' rows only. Wd^T is made from Wd by one_kernel_transpose, as the stage
 * makes it. Each case runs twice in a row on one workspace, then twice more as replays of a CUDA
 * graph that captured it: the workspace (an fp32 accumulator of y and a counter per share of
 * y's columns, zeroed once) must come back all zeros after every run, or the next would add to
 * stale sums; one workspace serves every token count of a shape in turn.
 * Shapes: tiny; hidden below one slice, not a multiple of 8, not a multiple of the slice (a
 * partial last slice, blocks with no rows); dim not a multiple of 16 (K padded in shared
 * memory); several slices per SM's worth; the article's 768 -> 3072; the widest dims taken.
 * Tokens 1 .. 16: partial and whole tiles.
 *
 * --small keeps the shapes below 300 wide (for the sanitizers). With --time (or
 * ONE_KERNEL_TIME=1) it times instead: forwards issued back to back on random data, the one-kernel
 * forward (in a graph and launched directly) against the decode rung's two-kernel forward captured
 * in a graph, in alternating rounds, with the floor set by the weights' bytes.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../03_simple_mlp/mlp.h"
#include "../04_fused_mlp/decode.h"
#include "../04_fused_mlp/one_kernel.h"
#include "check.h"
#include "dtype.h"
#include "gpu.h"
#include "harness.h"
#include "ref.h"
#include "ref_mlp.h"

static int have_gpu(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

/* The storage type's smallest normal value: below it, rounding errors are absolute. */
static double smallest_normal(dtype_t t)
{
    return t == DTYPE_FP16 ? 6.103515625e-05 : (double)FLT_MIN;
}

/* n random values in [-bound, bound), rounded to t in place in host, packed into bits (n values
 * of t). */
static void random_rounded(rng_t *r, dtype_t t, float *host, void *bits, size_t n, float bound)
{
    fill_uniform(r, host, n, -bound, bound);
    dtype_round_and_pack(t, host, bits, n);
}

/* A device copy of n values of t, NULL on failure. */
static void *upload(const void *bits, size_t bytes)
{
    void *dev = NULL;
    if (cudaMalloc(&dev, bytes) != cudaSuccess) return NULL;
    if (cudaMemcpy(dev, bits, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaFree(dev);
        return NULL;
    }
    return dev;
}

/* The weights and 128 rows of x of one shape, on both sides. */
typedef struct {
    dtype_t t;
    size_t dim, hidden;
    float *x, *wg, *wu, *wd;     /* rounded values, host */
    void *xbits;                 /* x packed, host */
    void *dwg, *dwu, *dwd, *dwdt; /* device; dwdt: Wd transposed */
} shape_data;

static void shape_free(shape_data *s)
{
    free(s->x);
    free(s->wg);
    free(s->wu);
    free(s->wd);
    free(s->xbits);
    cudaFree(s->dwg);
    cudaFree(s->dwu);
    cudaFree(s->dwd);
    cudaFree(s->dwdt);
}

/* nn.Linear's init for the weights (+-1/sqrt(fan_in)), x in +-1. 0 on success. */
static int shape_make(shape_data *s, dtype_t t, size_t dim, size_t hidden, size_t rows, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->t = t;
    s->dim = dim;
    s->hidden = hidden;
    const size_t e = dtype_size(t), nw = dim * hidden;
    rng_t r = rng_seed(seed);
    s->x = malloc(rows * dim * sizeof(float));
    s->wg = malloc(nw * sizeof(float));
    s->wu = malloc(nw * sizeof(float));
    s->wd = malloc(nw * sizeof(float));
    s->xbits = malloc(rows * dim * e);
    void *bits = malloc(nw * e);
    if (!s->x || !s->wg || !s->wu || !s->wd || !s->xbits || !bits) {
        free(bits);
        return -1;
    }
    random_rounded(&r, t, s->x, s->xbits, rows * dim, 1.0f);
    const float b_in = 1.0f / sqrtf((float)dim), b_down = 1.0f / sqrtf((float)hidden);
    random_rounded(&r, t, s->wg, bits, nw, b_in);
    s->dwg = upload(bits, nw * e);
    random_rounded(&r, t, s->wu, bits, nw, b_in);
    s->dwu = upload(bits, nw * e);
    random_rounded(&r, t, s->wd, bits, nw, b_down);
    s->dwd = upload(bits, nw * e);
    free(bits);
    if (!s->dwg || !s->dwu || !s->dwd || cudaMalloc(&s->dwdt, nw * e) != cudaSuccess) return -1;
    one_kernel_transpose(s->dwd, s->dwdt, dim, hidden, 0);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
}

/* x's first `tokens` rows, then NaN up to max(16, tokens) rows: what the kernel may be given. */
static void *upload_x(const shape_data *s, size_t tokens)
{
    const size_t e = dtype_size(s->t), rows = tokens < 16 ? 16 : tokens;
    void *dev = NULL;
    if (cudaMalloc(&dev, rows * s->dim * e) != cudaSuccess) return NULL;
    if (cudaMemset(dev, 0xFF, rows * s->dim * e) != cudaSuccess ||
        cudaMemcpy(dev, s->xbits, tokens * s->dim * e, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaFree(dev);
        return NULL;
    }
    return dev;
}

/* 1 when all n bytes of the device buffer are `byte`; 0 when not; -1 on a CUDA error. */
static int device_bytes_are(const void *dev, size_t n, unsigned char byte, size_t *first_bad)
{
    unsigned char *h = malloc(n ? n : 1);
    if (!h) return -1;
    if (cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost) != cudaSuccess) {
        free(h);
        return -1;
    }
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        if (h[i] != byte) {
            *first_bad = i;
            ok = 0;
            break;
        }
    free(h);
    return ok;
}

/* After one run: y's first `tokens` rows against the reference, its rows past them still
 * poisoned, the workspace zeros again. */
static int check_run(const shape_data *s, const void *dy, size_t tokens, size_t y_rows, const double *want,
                     const double *scale, const void *dws, size_t ws_bytes, const char *what, const char *how)
{
    const size_t e = dtype_size(s->t), dim = s->dim;
    EXPECT(cudaDeviceSynchronize() == cudaSuccess, "%s: kernel failed: %s", what, cudaGetErrorString(cudaGetLastError()));
    void *bits = malloc(y_rows * dim * e);
    float *got = malloc(tokens * dim * sizeof *got);
    EXPECT(bits && got, "host allocation");
    EXPECT(cudaMemcpy(bits, dy, y_rows * dim * e, cudaMemcpyDeviceToHost) == cudaSuccess, "copy of y");
    dtype_unpack(s->t, bits, got, tokens * dim);
    const double err = ref_mlp_error(got, want, scale, tokens * dim), tol = mlp_tolerance(s->t);
    EXPECT(err <= tol, "%s %s, %zu tokens, dim %zu, hidden %zu, %s: rel. error %.3e > %.3e", dtype_name(s->t), what,
           tokens, dim, s->hidden, how, err, tol);
    const unsigned char *pad = (const unsigned char *)bits + tokens * dim * e;
    for (size_t i = 0; i < (y_rows - tokens) * dim * e; i++)
        EXPECT(pad[i] == 0xFF, "%s %s, %zu tokens, dim %zu: y written past the tokens (row %zu)", dtype_name(s->t),
               what, tokens, dim, tokens + i / (dim * e));
    free(bits);
    free(got);
    size_t bad = 0;
    const int zero = device_bytes_are(dws, ws_bytes, 0, &bad);
    EXPECT(zero >= 0, "copy of the workspace");
    EXPECT(zero == 1, "%s %s, %zu tokens, dim %zu, hidden %zu, %s: workspace not zero again (byte %zu)",
           dtype_name(s->t), what, tokens, dim, s->hidden, how, bad);
    return 0;
}

static int poison(void *dy, size_t bytes, cudaStream_t stream)
{
    return cudaMemsetAsync(dy, 0xFF, bytes, stream) == cudaSuccess ? 0 : -1;
}

/* One token count: two launches, then two replays of a captured launch. */
static int one_case(const shape_data *s, size_t tokens, one_kernel_plan plan, const double *want,
                    const double *scale, void *dws, size_t ws_bytes)
{
    const size_t e = dtype_size(s->t), dim = s->dim, hidden = s->hidden;
    const size_t y_rows = tokens < 16 ? 16 : tokens, y_bytes = y_rows * dim * e;
    char how[96];
    snprintf(how, sizeof how, "slices of %d, clusters of %d, %zu blocks", plan.slice, plan.cluster, plan.blocks);
    void *dx = upload_x(s, tokens), *dy = NULL;
    EXPECT(dx && cudaMalloc(&dy, y_bytes) == cudaSuccess, "device allocation");
    cudaStream_t stream;
    EXPECT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess, "stream");
    for (int run = 0; run < 2; run++) {
        EXPECT(poison(dy, y_bytes, stream) == 0, "poison");
        launch_one_kernel_mlp(s->t, dx, s->dwg, s->dwu, s->dwdt, dy, tokens, dim, hidden, plan, dws, stream);
        if (check_run(s, dy, tokens, y_rows, want, scale, dws, ws_bytes, run ? "second launch" : "launch", how))
            return 1;
    }
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    EXPECT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "begin capture");
    launch_one_kernel_mlp(s->t, dx, s->dwg, s->dwu, s->dwdt, dy, tokens, dim, hidden, plan, dws, stream);
    EXPECT(cudaStreamEndCapture(stream, &graph) == cudaSuccess, "end capture");
    EXPECT(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "graph instantiation");
    for (int run = 0; run < 2; run++) {
        EXPECT(poison(dy, y_bytes, stream) == 0, "poison");
        EXPECT(cudaGraphLaunch(exec, stream) == cudaSuccess, "graph launch");
        if (check_run(s, dy, tokens, y_rows, want, scale, dws, ws_bytes, run ? "second graph replay" : "graph replay",
                      how))
            return 1;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    cudaFree(dx);
    cudaFree(dy);
    return 0;
}

static const size_t test_tokens[] = {1, 3, 8, 13, 16};
enum { N_TEST_TOKENS = sizeof test_tokens / sizeof test_tokens[0], REF_ROWS = ONE_KERNEL_MAX_TOKENS };

/* Every token count on one shape, one workspace for all. */
static int shape_case(dtype_t t, size_t dim, size_t hidden, uint64_t seed)
{
    char why[256];
    shape_data s;
    EXPECT(shape_make(&s, t, dim, hidden, REF_ROWS, seed) == 0, "allocation (%zu x %zu)", dim, hidden);
    double *want = malloc(REF_ROWS * dim * sizeof *want), *scale = malloc(REF_ROWS * dim * sizeof *scale);
    size_t row_of[REF_ROWS];
    for (size_t i = 0; i < REF_ROWS; i++) row_of[i] = i;
    EXPECT(want && scale, "host allocation");
    /* rows are independent: row i of the reference is row i of x's forward at any token count */
    EXPECT(ref_geglu_mlp_rows_at(s.x, s.wg, s.wu, s.wd, dim, hidden, row_of, REF_ROWS, want, scale,
                                 smallest_normal(t)) == 0,
           "reference");
    const size_t ws_bytes = one_kernel_workspace_bytes(dim);
    const one_kernel_plan plan = one_kernel_plan_for(t, dim, hidden);
    void *dws = NULL;
    EXPECT(cudaMalloc(&dws, ws_bytes) == cudaSuccess && cudaMemset(dws, 0, ws_bytes) == cudaSuccess, "workspace");
    for (size_t k = 0; k < N_TEST_TOKENS; k++) {
        EXPECT(one_kernel_supported(t, test_tokens[k], dim, hidden, why, sizeof why), "refused: %s", why);
        if (one_case(&s, test_tokens[k], plan, want, scale, dws, ws_bytes)) return 1;
    }
    cudaFree(dws);
    free(want);
    free(scale);
    shape_free(&s);
    return 0;
}

/* --small: the shapes below 300 wide only (for the sanitizers, whose runs are slow). */
static int small_only;

static int test_one_kernel(void)
{
    if (!have_gpu()) SKIP("no CUDA GPU");
    if (!one_kernel_runs_here()) {
        printf("  not run on this GPU: the one-kernel forward needs sm_90 or newer\n");
        return 0;
    }
    /* {dim, hidden}: tiny; hidden below one slice and not a multiple of 8; dim not a multiple of
     * 16 (K padded); hidden not a multiple of the slice; many slices; the article's widths; the
     * widest dim taken, with more slices than SMs. */
    const size_t shapes[][2] = {{8, 8},     {8, 3},      {24, 72},    {40, 100},   {72, 130},
                                {264, 257}, {1000, 2000}, {768, 3072}, {1728, 7000}};
    const dtype_t tc[] = {DTYPE_BF16, DTYPE_FP16};
    for (int d = 0; d < 2; d++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            if ((!small_only || (shapes[i][0] < 300 && shapes[i][1] < 300)) &&
                shape_case(tc[d], shapes[i][0], shapes[i][1], 500 + 16 * i + (uint64_t)d)) return 1;
    return 0;
}

static int test_one_kernel_refuses(void)
{
    char why[256] = "";
    EXPECT(!one_kernel_supported(DTYPE_BF16, ONE_KERNEL_MAX_TOKENS + 1, 768, 3072, why, sizeof why),
           "17 tokens accepted");
    EXPECT(why[0] != '\0', "no reason given");
    EXPECT(!one_kernel_supported(DTYPE_BF16, 0, 768, 3072, why, sizeof why), "0 tokens accepted");
    EXPECT(!one_kernel_supported(DTYPE_FP32, 8, 768, 3072, why, sizeof why), "fp32 accepted by tensor-core kernels");
    EXPECT(!one_kernel_supported(DTYPE_FP16, 8, 0, 3072, why, sizeof why), "dim 0 accepted");
    EXPECT(!one_kernel_supported(DTYPE_FP16, 8, 7, 9, why, sizeof why), "dim 7 accepted (rows in 16-byte pieces)");
    EXPECT(!one_kernel_supported(DTYPE_BF16, 1, 1792, 7168, why, sizeof why), "dim 1792 accepted (beyond shared memory)");
    EXPECT(one_kernel_supported(DTYPE_FP16, 16, 8, 9, why, sizeof why), "fp16, 16 tokens, 8 x 9 refused: %s", why);
    EXPECT(one_kernel_supported(DTYPE_BF16, 1, 1728, 7000, why, sizeof why), "bf16, 1728 x 7000 refused: %s", why);
    return 0;
}

/* ---- timing mode --------------------------------------------------------------------------- */

enum { TIME_FORWARDS = 200, TIME_ROUNDS = 7, TIME_WARMUP = 50 };
static const double HBM_BYTES_PER_S = 4.25e12; /* an H200's measured copy bandwidth */

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One forward's arguments: the one kernel (decode 0) or the decode rung's two kernels. */
typedef struct {
    const shape_data *s;
    const void *dx;
    void *dy, *dws, *dm;
    size_t tokens;
    one_kernel_plan plan;
    int decode;
    decode_plan up_plan, down_plan;
} forward_args;

static void enqueue_forward(const forward_args *a, cudaStream_t stream)
{
    const shape_data *s = a->s;
    if (a->decode) {
        launch_decode_gate_up(s->t, a->dx, s->dwg, s->dwu, a->dm, a->tokens, s->dim, s->hidden, a->up_plan, stream,
                              NULL);
        launch_decode_down(s->t, a->dm, s->dwd, a->dy, a->tokens, s->hidden, s->dim, a->down_plan, stream, NULL);
    } else {
        launch_one_kernel_mlp(s->t, a->dx, s->dwg, s->dwu, s->dwdt, a->dy, a->tokens, s->dim, s->hidden, a->plan,
                              a->dws, stream);
    }
}

/* A graph of one forward, captured from `stream` and instantiated. */
static cudaGraphExec_t capture_forward(const forward_args *a, cudaStream_t stream)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    enqueue_forward(a, stream);
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_CHECK(cudaGraphDestroy(graph));
    return exec;
}

/* us per forward of TIME_FORWARDS forwards back to back: replays of `exec`, or (exec NULL) direct
 * launches of `a`. */
static double time_batch(cudaGraphExec_t exec, const forward_args *a, cudaStream_t stream, cudaEvent_t start,
                         cudaEvent_t stop)
{
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < TIME_FORWARDS; i++) {
        if (exec)
            CUDA_CHECK(cudaGraphLaunch(exec, stream));
        else
            enqueue_forward(a, stream);
    }
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return 1e3 * (double)ms / TIME_FORWARDS;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* ||a - b|| / ||b|| over n values of two device outputs: a quick sign that the timed forwards
 * computed the same thing (the test proper checks each against the reference). */
static double y_difference(dtype_t t, const void *a, const void *b, size_t n)
{
    const size_t e = dtype_size(t);
    void *ha = malloc(n * e), *hb = malloc(n * e);
    float *fa = malloc(n * sizeof *fa), *fb = malloc(n * sizeof *fb);
    double num = 0.0, den = 0.0;
    if (ha && hb && fa && fb && cudaMemcpy(ha, a, n * e, cudaMemcpyDeviceToHost) == cudaSuccess &&
        cudaMemcpy(hb, b, n * e, cudaMemcpyDeviceToHost) == cudaSuccess) {
        dtype_unpack(t, ha, fa, n);
        dtype_unpack(t, hb, fb, n);
        for (size_t i = 0; i < n; i++) {
            num += ((double)fa[i] - fb[i]) * ((double)fa[i] - fb[i]);
            den += (double)fb[i] * fb[i];
        }
    } else {
        num = NAN;
    }
    free(ha);
    free(hb);
    free(fa);
    free(fb);
    return den > 0.0 ? sqrt(num / den) : num;
}

/* The forwards timed, in the order printed. */
enum { V_ONE, V_ONE_DIRECT, V_DECODE, N_VARIANTS };

static void time_shape(dtype_t t, size_t dim, size_t hidden, const size_t *tokens, int n_tokens)
{
    shape_data s;
    const size_t e = dtype_size(t), rows = ONE_KERNEL_MAX_TOKENS;
    if (shape_make(&s, t, dim, hidden, rows, 7000 + dim) != 0) {
        printf("  %zu -> %zu: allocation failed\n", dim, hidden);
        shape_free(&s);
        return;
    }
    const size_t ws_bytes = one_kernel_workspace_bytes(dim);
    void *dx = upload(s.xbits, rows * dim * e), *dy[N_VARIANTS], *dm = NULL, *dws = NULL;
    if (!dx) {
        printf("  %zu -> %zu: allocation failed\n", dim, hidden);
        shape_free(&s);
        return;
    }
    for (int v = 0; v < N_VARIANTS; v++) {
        CUDA_CHECK(cudaMalloc(&dy[v], rows * dim * e));
        CUDA_CHECK(cudaMemset(dy[v], 0, rows * dim * e));
    }
    CUDA_CHECK(cudaMalloc(&dm, rows * hidden * e));
    CUDA_CHECK(cudaMemset(dm, 0, rows * hidden * e));
    CUDA_CHECK(cudaMalloc(&dws, ws_bytes));
    CUDA_CHECK(cudaMemset(dws, 0, ws_bytes));
    cudaStream_t stream;
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    const double weight_bytes = 3.0 * (double)dim * (double)hidden * (double)e;
    const double floor_us = weight_bytes / HBM_BYTES_PER_S * 1e6;
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("%s %zu -> %zu: weights %.1f MB, HBM floor %.2f us at %.2f TB/s%s\n", dtype_name(t), dim, hidden,
           weight_bytes / 1e6, floor_us, HBM_BYTES_PER_S / 1e12,
           weight_bytes < (double)prop.l2CacheSize ? " (the weights fit in L2: back to back, forwards may find them there)"
                                                   : "");
    for (int k = 0; k < n_tokens; k++) {
        const size_t tok = tokens[k];
        const one_kernel_plan plan = one_kernel_plan_for(t, dim, hidden);
        char why[256];
        const int decode = decode_runs_here() && decode_supported(t, tok, dim, hidden, why, sizeof why);
        forward_args a[N_VARIANTS];
        for (int v = 0; v < N_VARIANTS; v++) {
            a[v] = (forward_args){&s, dx, dy[v], dws, dm, tok, plan, 0, {8, 1}, {8, 1}};
        }
        if (decode) {
            a[V_DECODE].decode = 1;
            a[V_DECODE].up_plan = decode_plan_for(tok, dim, hidden);
            a[V_DECODE].down_plan = decode_plan_for(tok, hidden, dim);
        }
        /* each forward once outside a capture (the launchers ask the GPU's occupancy once) */
        for (int v = 0; v < N_VARIANTS; v++)
            if (v != V_DECODE || decode) enqueue_forward(&a[v], stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        cudaGraphExec_t g[N_VARIANTS] = {NULL};
        for (int v = 0; v < N_VARIANTS; v++)
            if (v != V_ONE_DIRECT && (v != V_DECODE || decode)) g[v] = capture_forward(&a[v], stream);
        for (int i = 0; i < TIME_WARMUP; i++)
            for (int v = 0; v < N_VARIANTS; v++)
                if (g[v]) CUDA_CHECK(cudaGraphLaunch(g[v], stream));
        double us[N_VARIANTS][TIME_ROUNDS];
        for (int r = 0; r < TIME_ROUNDS; r++) /* alternating, so that clocks and heat treat them alike */
            for (int v = 0; v < N_VARIANTS; v++)
                if (g[v] || v == V_ONE_DIRECT) us[v][r] = time_batch(g[v], &a[v], stream, start, stop);
        double med[N_VARIANTS];
        for (int v = 0; v < N_VARIANTS; v++)
            med[v] = g[v] || v == V_ONE_DIRECT ? median(us[v], TIME_ROUNDS) : NAN;
        printf("  %3zu tokens: one kernel (slices of %d, clusters of %d, %zu blocks): %7.2f us (graph), %7.2f us "
               "(launched directly) | decode graph: ",
               tok, plan.slice, plan.cluster, plan.blocks, med[V_ONE], med[V_ONE_DIRECT]);
        if (decode)
            printf("%7.2f us", med[V_DECODE]);
        else
            printf("n/a");
        printf(" | floor %.2f us\n", floor_us);
        /* the outputs against each other (against decode's where it ran, else the first) */
        const int ref_v = decode ? V_DECODE : V_ONE;
        for (int v = 0; v < N_VARIANTS; v++) {
            if (v == ref_v || !(g[v] || v == V_ONE_DIRECT)) continue;
            const double diff = y_difference(t, dy[v], dy[ref_v], tok * dim);
            if (!(diff <= 2 * mlp_tolerance(t)))
                printf("  WARNING: variant %d's y differs from variant %d's by %.2e\n", v, ref_v, diff);
        }
        for (int v = 0; v < N_VARIANTS; v++)
            if (g[v]) CUDA_CHECK(cudaGraphExecDestroy(g[v]));
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaStreamDestroy(stream));
    cudaFree(dx);
    for (int v = 0; v < N_VARIANTS; v++) cudaFree(dy[v]);
    cudaFree(dm);
    cudaFree(dws);
    shape_free(&s);
}

static int run_timing(void)
{
    if (!have_gpu() || !one_kernel_runs_here()) {
        printf("SKIP timing: no CUDA GPU of sm_90 or newer\n");
        return 0;
    }
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, %d SMs; median of %d rounds of %d forwards back to back, after %d warm-up forwards\n", prop.name,
           prop.multiProcessorCount, TIME_ROUNDS, TIME_FORWARDS, TIME_WARMUP);
    const size_t tokens[] = {1, 8, 16};
    time_shape(DTYPE_BF16, 768, 3072, tokens, 3);
    time_shape(DTYPE_FP16, 768, 3072, tokens, 3);
    time_shape(DTYPE_BF16, 1024, 4096, tokens, 3);
    time_shape(DTYPE_BF16, 1536, 6144, tokens, 3);
    return 0;
}

int main(int argc, char **argv)
{
    const char *env = getenv("ONE_KERNEL_TIME");
    if ((argc > 1 && strcmp(argv[1], "--time") == 0) || (env && env[0] && strcmp(env, "0") != 0))
        return run_timing();
    small_only = argc > 1 && strcmp(argv[1], "--small") == 0;
    TEST_RUN(test_one_kernel);
    TEST_RUN(test_one_kernel_refuses);
    TEST_EXIT();
}
