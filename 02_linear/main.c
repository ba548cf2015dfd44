/* 02_linear: y = x W^T + b, nn.Linear, part 2 of "Profiling in PyTorch", one layer down.
 *
 *   make 02_linear && ./run                                  the article's shape: 1024 x 32 -> 64
 *   ./run 02_linear --variant all                            the four ways below, compared
 *   ./run 02_linear --batch 8192 --in_dim 4096 --out_dim 4096 --variant all     compute-bound
 *   ./run 02_linear --explain-views                          the 3x2 example: a transpose moves nothing
 *   ./run 02_linear --sweep --variant epilogue               batch 1..65536: the crossover plot
 *
 * x is [batch, in_dim], W is [out_dim, in_dim] as nn.Linear stores it, b is [out_dim], and
 * y = x W^T + b is [batch, out_dim] (bf16 by default, fp32 accumulation). Every variant starts
 * like aten::linear, with W^T as a *view* of W (common/view.h: shape and strides swapped, no
 * kernel); the GEMM's transpose flag and leading dimension are read off the view's strides.
 *   epilogue        one cuBLASLt matmul with the BIAS epilogue: 1 kernel, what eager nn.Linear runs
 *   view            cuBLAS reads W through the view (op T) + our bias_add kernel: 2 kernels
 *   addmm           our bias_broadcast kernel fills every row of y with b, then the GEMM with
 *                   beta = 1 adds x W^T onto it: 2 kernels
 *   transpose_copy  our transpose kernel materialises W^T, the GEMM reads the copy as it is
 *                   (op N), then bias_add: 3 kernels, what a real transpose would cost
 * Next to each variant the report times the bare GEMM (x W^T alone, no bias) at the same shape,
 * and the trace pass lists the kernels by name: cuBLAS's name changes with the layout flag.
 *
 * The program: the view, setup, the forwards, the correctness check, the report, the sweep.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "check.h"
#include "size.h"
#include "cli.h"
#include "dump.h"
#include "gpu.h"
#include "out.h"
#include "plot.h"
#include "prof.h"
#include "ref.h"
#include "report.h"
#include "trace.h"
#include "view.h"

/* our kernels, in kernels.cu */
void launch_transpose(dtype_t t, const void *src, void *dst, size_t rows, size_t cols, cudaStream_t stream);
void launch_bias_add(dtype_t t, void *y, const void *b, size_t rows, size_t cols, cudaStream_t stream);
void launch_bias_broadcast(dtype_t t, void *y, const void *b, size_t rows, size_t cols, cudaStream_t stream);

enum { V_EPILOGUE, V_VIEW, V_ADDMM, V_TRANSPOSE_COPY, N_VARIANTS };
static const char *const variants[] = {"epilogue", "view", "addmm", "transpose_copy", NULL};
static const char *const variant_help[] = {
    "one cuBLASLt matmul with the bias in its epilogue (1 kernel): eager nn.Linear",
    "GEMM reading W^T as a view (op T) + our bias_add kernel (2 kernels)",
    "our bias_broadcast into y + GEMM with beta = 1 (2 kernels): addmm",
    "our transpose kernel copies W^T + GEMM (op N) + bias_add (3 kernels)",
};
static const char *const launches[] = {
    "cublasLtMatmul (op T on W, epilogue BIAS) -> 1 GEMM kernel that adds b as it writes y",
    "cublasGemmEx (op T on W: the view) -> 1 GEMM kernel; launch_bias_add -> 1 bias_add kernel",
    "launch_bias_broadcast b -> every row of y (1 kernel); cublasGemmEx (beta = 1) -> 1 GEMM kernel",
    "launch_transpose W -> W^T (1 kernel); cublasGemmEx (op N on the copy) -> 1 GEMM kernel; "
    "launch_bias_add -> 1 bias_add kernel",
};
static const int gpu_ops_per_step[] = {1, 2, 2, 3};

typedef struct {
    dtype_t dtype;
    size_t batch, in_dim, out_dim; /* the GEMM's M, K and N */
    int variant;
    cudaStream_t stream;
    void *x, *w, *b, *y; /* device */
    void *wt;            /* device, transpose_copy only: W^T materialised, [in_dim, out_dim] */
    view_t w_view;       /* W as stored: shape [out_dim, in_dim], strides [in_dim, 1] */
    /* Created on the first forward, as PyTorch creates handles and plans on first use: their
     * cost is part of the cold first step. */
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    int lt_state; /* 0: not planned yet; 1: planned; -1: cuBLASLt had no algorithm (view path) */
    lt_plan plan;
} model_t;

/* ---- the view decides the layout -------------------------------------------------------- */

/* blas_gemm's w_kn flag for this W^T operand, from its strides (view.h): 1 when its rows are
 * contiguous (op N), 0 when its columns are (op T). blas_gemm derives the leading dimension
 * from the flag (out_dim or in_dim); the view must agree. */
static int gemm_flag(const view_t *wt, const model_t *m)
{
    view_gemm_layout l;
    if (view_gemm_operand(wt, &l) != 0 || l.ld != (l.transposed ? m->in_dim : m->out_dim)) {
        char d[128];
        view_describe(wt, d, sizeof d);
        fprintf(stderr, "error: W^T (%s) has no layout cuBLAS can read without a copy\n", d);
        exit(EXIT_BAD_INPUT);
    }
    return !l.transposed;
}

/* ---- the forwards ----------------------------------------------------------------------- */

static void ensure_cublas(model_t *m)
{
    if (m->blas) return;
    CUBLAS_CHECK(cublasCreate(&m->blas));
    CUBLAS_CHECK(cublasSetStream(m->blas, m->stream));
}

static void forward_view(model_t *m, const view_t *wt)
{
    ensure_cublas(m);
    prof_range_push("mm");
    blas_gemm(m->blas, m->dtype, gemm_flag(wt, m), m->batch, m->out_dim, m->in_dim, 1.0f, m->x,
              wt->data, 0.0f, m->y, 1);
    prof_range_pop();
    prof_range_push("bias_add");
    launch_bias_add(m->dtype, m->y, m->b, m->batch, m->out_dim, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
}

static void forward_addmm(model_t *m, const view_t *wt)
{
    ensure_cublas(m);
    prof_range_push("addmm");
    prof_range_push("bias_broadcast");
    launch_bias_broadcast(m->dtype, m->y, m->b, m->batch, m->out_dim, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_push("mm");
    blas_gemm(m->blas, m->dtype, gemm_flag(wt, m), m->batch, m->out_dim, m->in_dim, 1.0f, m->x,
              wt->data, 1.0f, m->y, 1);
    prof_range_pop();
    prof_range_pop();
}

static void forward_transpose_copy(model_t *m, const view_t *wt)
{
    prof_range_push("contiguous"); /* what .contiguous() on W^T would do: move the data */
    launch_transpose(m->dtype, m->w, m->wt, m->out_dim, m->in_dim, m->stream);
    LAUNCH_CHECK();
    view_t copy = view_contiguous(m->wt, 2, wt->shape); /* same shape, row-major strides */
    prof_range_pop();
    forward_view(m, &copy);
}

static void forward_epilogue(model_t *m, const view_t *wt)
{
    if (m->lt_state == 0) { /* handle, descriptors, heuristic query, workspace: once */
        CUBLASLT_CHECK(cublasLtCreate(&m->lt));
        m->lt_state = lt_plan_init(&m->plan, m->lt, m->dtype, gemm_flag(wt, m), m->batch, m->out_dim,
                                   m->in_dim, 1, CUBLASLT_EPILOGUE_BIAS, m->b) == 0 ? 1 : -1;
        if (m->lt_state < 0)
            printf("epilogue: no cuBLASLt BIAS-epilogue algorithm at %zu x %zu -> %zu (%s): running "
                   "the view path instead (GEMM + bias_add, 2 kernels)\n",
                   m->batch, m->in_dim, m->out_dim, dtype_name(m->dtype));
    }
    if (m->lt_state < 0) {
        forward_view(m, wt);
        return;
    }
    prof_range_push("addmm"); /* aten::addmm, bias in the epilogue */
    lt_plan_run(&m->plan, 1.0f, m->x, wt->data, 0.0f, m->y, m->y, m->stream);
    prof_range_pop();
}

static void forward(void *ctx)
{
    model_t *m = ctx;
    prof_range_push("linear_fwd");
    prof_range_push("t"); /* aten::t: metadata only, no GPU work */
    view_t wt = view_transpose(m->w_view, 0, 1);
    prof_range_pop();
    switch (m->variant) {
    case V_EPILOGUE: forward_epilogue(m, &wt); break;
    case V_VIEW: forward_view(m, &wt); break;
    case V_ADDMM: forward_addmm(m, &wt); break;
    default: forward_transpose_copy(m, &wt); break;
    }
    prof_range_pop();
}

/* The yardsticks the report puts next to a variant: the bare GEMM x W^T (through the view,
 * beta = 0, no bias) and, for transpose_copy, the transpose alone. */
typedef struct {
    model_t *m;
    view_t wt;
    lt_plan plan; /* the bare GEMM through cuBLASLt: no epilogue */
} bare_ctx;

static void bare_gemm_lt(void *ctx)
{
    bare_ctx *c = ctx;
    lt_plan_run(&c->plan, 1.0f, c->m->x, c->wt.data, 0.0f, c->m->y, c->m->y, c->m->stream);
}

static void bare_gemm_cublas(void *ctx)
{
    bare_ctx *c = ctx;
    model_t *m = c->m;
    blas_gemm(m->blas, m->dtype, gemm_flag(&c->wt, m), m->batch, m->out_dim, m->in_dim, 1.0f, m->x,
              c->wt.data, 0.0f, m->y, 1);
}

static void transpose_only(void *ctx)
{
    model_t *m = ctx;
    launch_transpose(m->dtype, m->w, m->wt, m->out_dim, m->in_dim, m->stream);
    LAUNCH_CHECK();
}

/* ---- setup ------------------------------------------------------------------------------ */

typedef struct {
    float *x, *w, *b; /* dtype-rounded host copies: what the GPU sees, for the reference */
} host_inputs;

static void model_setup(model_t *m, host_inputs *h, uint64_t seed)
{
    size_t es = dtype_size(m->dtype);
    size_t nx = size_mul(m->batch, m->in_dim, "batch x in_dim");
    size_t nw = size_mul(m->out_dim, m->in_dim, "out_dim x in_dim");
    size_t ny = size_mul(m->batch, m->out_dim, "batch x out_dim");
    int copy = m->variant == V_TRANSPOSE_COPY;
    size_t elems = nx + nw * (copy ? 2 : 1) + m->out_dim + ny;
    gpu_require_fits(size_mul(elems, es, "buffer size") + (32u << 20), "x, W, b, y (and W^T) and the workspace");
    CUDA_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&m->x, nx * es));
    CUDA_CHECK(cudaMalloc(&m->w, nw * es));
    CUDA_CHECK(cudaMalloc(&m->b, m->out_dim * es));
    CUDA_CHECK(cudaMalloc(&m->y, ny * es));
    if (copy) CUDA_CHECK(cudaMalloc(&m->wt, nw * es));
    m->w_view = view_contiguous(m->w, 2, (size_t[]){m->out_dim, m->in_dim});

    /* x in [-1, 1); W as nn.Linear initialises it, in [-1/sqrt(in_dim), 1/sqrt(in_dim)), so
     * x W^T stays of order 1 at any in_dim; b in [-1, 1), larger than nn.Linear's, so that a
     * missing or misplaced bias is an order-1 error no tolerance can hide. Never zeros: zeros
     * hide unwritten outputs. */
    rng_t rng = rng_seed(seed);
    float wb = 1.0f / sqrtf((float)m->in_dim);
    struct { float **host; void *dev; size_t n; float lo, hi; } in[] = {
        {&h->x, m->x, nx, -1.0f, 1.0f}, {&h->w, m->w, nw, -wb, wb}, {&h->b, m->b, m->out_dim, -1.0f, 1.0f},
    };
    for (int i = 0; i < 3; i++) {
        float *v = malloc(in[i].n * sizeof *v);
        void *staging = malloc(in[i].n * es);
        if (!v || !staging) {
            fprintf(stderr, "error: out of host memory for %zu elements\n", in[i].n);
            exit(EXIT_BAD_INPUT);
        }
        fill_uniform(&rng, v, in[i].n, in[i].lo, in[i].hi);
        dtype_round_and_pack(m->dtype, v, staging, in[i].n);
        CUDA_CHECK(cudaMemcpy(in[i].dev, staging, in[i].n * es, cudaMemcpyHostToDevice));
        free(staging);
        *in[i].host = v;
    }
}

static void model_free(model_t *m, host_inputs *h)
{
    void *bufs[] = {m->x, m->w, m->b, m->y, m->wt};
    for (int i = 0; i < 5; i++) CUDA_CHECK(cudaFree(bufs[i])); /* cudaFree(NULL) is a no-op */
    if (m->blas) CUBLAS_CHECK(cublasDestroy(m->blas));
    if (m->lt_state > 0) lt_plan_free(&m->plan);
    if (m->lt) CUBLASLT_CHECK(cublasLtDestroy(m->lt));
    CUDA_CHECK(cudaStreamDestroy(m->stream));
    free(h->x);
    free(h->w);
    free(h->b);
    *m = (model_t){0};
}

/* ---- correctness ------------------------------------------------------------------------ */

/* Poisons y (and the W^T copy) with NaN, runs one forward, and compares y with the CPU
 * reference in double: every row while that costs at most 2^27 multiply-adds, else 16 rows
 * spread from the first to the last. Returns the relative error. */
static double check_forward(model_t *m, const host_inputs *h)
{
    size_t M = m->batch, N = m->out_dim, K = m->in_dim, es = dtype_size(m->dtype);
    CUDA_CHECK(cudaMemsetAsync(m->y, 0xFF, M * N * es, m->stream)); /* all-ones bits: NaN in every dtype */
    if (m->wt) CUDA_CHECK(cudaMemsetAsync(m->wt, 0xFF, N * K * es, m->stream));
    forward(m);
    CUDA_CHECK(cudaStreamSynchronize(m->stream));

    size_t rows = (double)M * N * K <= (double)(1u << 27) || M <= 16 ? M : 16;
    float *got = malloc(rows * N * sizeof *got);
    double *want = malloc(rows * N * sizeof *want);
    void *row_bits = malloc(N * es);
    if (!got || !want || !row_bits) {
        fprintf(stderr, "error: out of host memory for the check\n");
        exit(EXIT_BAD_INPUT);
    }
    for (size_t r = 0; r < rows; r++) {
        size_t row = rows == M ? r : r * (M - 1) / (rows - 1);
        CUDA_CHECK(cudaMemcpy(row_bits, (char *)m->y + row * N * es, N * es, cudaMemcpyDeviceToHost));
        dtype_unpack(m->dtype, row_bits, got + r * N, N);
        ref_gemm_rows(h->x, h->w, want + r * N, row, 1, K, N, 1); /* W is [N, K]: read transposed */
        for (size_t j = 0; j < N; j++) want[r * N + j] += h->b[j];
    }
    double err = rel_fro_error(got, want, rows * N);
    free(got);
    free(want);
    free(row_bits);
    return err;
}

typedef struct {
    stats_t cpu, gpu;
    double back_to_back_us, err;
    double bare_lt_us, bare_gemmex_us; /* the bare GEMM, back to back (measure_back_to_back) */
    double vs_bare;                    /* this variant over the bare GEMM of its own library */
    double graph_us;                   /* the planned matmul replayed as a CUDA graph; 0: none */
    int gpu_ops;
} run_result;

/* ---- the report's extras ---------------------------------------------------------------- */

/* What the first call costs once, and what caching the cuBLASLt plan saves on every call. */
static void report_cold_start(model_t *m, const prof_run *run, const common_args *a)
{
    double first = run->cpu_us[0], typical = prof_active_stats(run, 0).median;
    if (a->sched.warmup > 0)
        printf("cold start: none to see, %d warm-up forwards ran before step 0 (step 0: %.2f us CPU)\n",
               a->sched.warmup, first);
    else
        printf("cold start: step 0 took %.2f us of CPU time vs %.2f us for an active step (median): "
               "%.2f us more, paid once (%s, lazy loading of the kernels' modules)\n",
               first, typical, first - typical,
               m->variant == V_EPILOGUE ? "cuBLASLt handle, plan: heuristic query and workspace" : "cuBLAS handle");
    if (m->lt_state <= 0) return;

    enum { REPS = 5 };
    const int calls = prof_under_tool() ? 1 : 100;
    double init_us[REPS], run_us[REPS];
    view_t wt = view_transpose(m->w_view, 0, 1);
    for (int r = 0; r < REPS; r++) {
        lt_plan p;
        double t0 = prof_now_us();
        int rc = lt_plan_init(&p, m->lt, m->dtype, gemm_flag(&wt, m), m->batch, m->out_dim, m->in_dim, 1,
                              CUBLASLT_EPILOGUE_BIAS, m->b);
        init_us[r] = prof_now_us() - t0;
        if (rc == 0) lt_plan_free(&p);
    }
    for (int r = 0; r < REPS; r++) {
        double t0 = prof_now_us();
        for (int i = 0; i < calls; i++) lt_plan_run(&m->plan, 1.0f, m->x, wt.data, 0.0f, m->y, m->y, m->stream);
        run_us[r] = (prof_now_us() - t0) / calls;
        CUDA_CHECK(cudaStreamSynchronize(m->stream));
    }
    double init = stats_of(init_us, REPS).median, issue = stats_of(run_us, REPS).median;
    printf("plan cache: lt_plan_init alone costs %.2f us of CPU (median of %d: descriptors, heuristic "
           "query, 32 MiB workspace); lt_plan_run issues a planned matmul in %.2f us (median of %d x %d "
           "calls): planning on every call would make each forward %.0fx as costly to issue\n",
           init, REPS, issue, REPS, calls, (init + issue) / issue);
}

/* The epilogue variant's planned matmul alone, for capture into a graph. */
static void planned_matmul(void *model)
{
    model_t *m = model;
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 0.0f, m->y, m->y, m->stream);
}

/* Back to back: the forward, and the bare GEMM at the same shape through a cuBLASLt plan
 * without epilogue (the floor for the epilogue variant: same library, same heuristic) and
 * through cublasGemmEx (the call the other variants make). Measured in alternation, one batch
 * of each per round, medians over the rounds: under sustained load the clocks drift (power,
 * temperature), and alternating makes the drift hit all alike. bare_lt_us is 0 when cuBLASLt
 * has no algorithm here. With a cuBLASLt plan (the epilogue variant) a fourth contender: the
 * matmul captured once into a CUDA graph and replayed, what is left of the per-forward cost
 * once cuBLASLt's host-side work per call is done once, at capture. */
static void measure_back_to_back(model_t *m, int calls, run_result *res)
{
    enum { ROUNDS = 7 };
    bare_ctx c = {.m = m, .wt = view_transpose(m->w_view, 0, 1)};
    cublasLtHandle_t lt;
    CUBLASLT_CHECK(cublasLtCreate(&lt));
    ensure_cublas(m);
    int have_lt = lt_plan_init(&c.plan, lt, m->dtype, gemm_flag(&c.wt, m), m->batch, m->out_dim,
                               m->in_dim, 1, CUBLASLT_EPILOGUE_DEFAULT, NULL) == 0;
    for (int i = 0; i < 3; i++) { /* warm the bare paths: module loading, cuBLAS's own setup */
        if (have_lt) bare_gemm_lt(&c);
        bare_gemm_cublas(&c);
    }
    const int graph = m->lt_state > 0;
    prof_graph g = {0};
    if (graph) prof_graph_capture(&g, planned_matmul, m, m->stream);
    double fwd[ROUNDS], bare_lt[ROUNDS] = {0}, bare_gemmex[ROUNDS], replay[ROUNDS] = {0};
    for (int r = 0; r < ROUNDS; r++) {
        fwd[r] = prof_back_to_back_us(forward, m, m->stream, calls, 1);
        if (have_lt) bare_lt[r] = prof_back_to_back_us(bare_gemm_lt, &c, m->stream, calls, 1);
        bare_gemmex[r] = prof_back_to_back_us(bare_gemm_cublas, &c, m->stream, calls, 1);
        if (graph) replay[r] = prof_back_to_back_us(prof_graph_replay, &g, m->stream, calls, 1);
    }
    res->back_to_back_us = stats_of(fwd, ROUNDS).median;
    res->bare_lt_us = stats_of(bare_lt, ROUNDS).median;
    res->bare_gemmex_us = stats_of(bare_gemmex, ROUNDS).median;
    res->graph_us = stats_of(replay, ROUNDS).median;
    if (graph) prof_graph_free(&g);
    if (have_lt) lt_plan_free(&c.plan);
    CUBLASLT_CHECK(cublasLtDestroy(lt));
}

/* In the trace pass: the kernels CUPTI saw, by name, and the GPU operations of one step. */
static void report_trace_kernels(const model_t *m, const common_args *a)
{
    trace_kernel_row rows[16];
    int n = trace_kernel_rows(rows, 16);
    printf("kernels in the trace (%d distinct):\n", n);
    for (int i = 0; i < n && i < 16; i++)
        printf("  %-64s %4d calls, median %9.2f us\n", rows[i].name, rows[i].calls, rows[i].median_us);
    char step[32];
    snprintf(step, sizeof step, "ProfileStep#%d", a->sched.wait + a->sched.warmup_steps);
    int k, mc, ms, expected = gpu_ops_per_step[m->lt_state < 0 ? V_VIEW : m->variant];
    if (trace_gpu_ops_in_range(step, &k, &mc, &ms) >= 0)
        printf("GPU operations in %s: %d kernels, %d memcpy, %d memset (expected %d)%s\n", step, k, mc,
               ms, expected, k > expected ? ": cuBLAS ran a GEMM as several kernels (e.g. split-K), see the names above" : "");
}

/* --dump DIR: the inputs and this variant's output as .npy files, for the compare scripts:
 * x [batch, in_dim], w [out_dim, in_dim], b [out_dim], y_<variant> [batch, out_dim]. */
static void dump_arrays(const model_t *m, const char *dir)
{
    char y_name[64];
    snprintf(y_name, sizeof y_name, "y_%s", variants[m->variant]);
    struct { const char *name; size_t shape[2]; int ndim; const void *dev; } arrays[] = {
        {"x", {m->batch, m->in_dim}, 2, m->x},
        {"w", {m->out_dim, m->in_dim}, 2, m->w},
        {"b", {m->out_dim, 0}, 1, m->b},
        {y_name, {m->batch, m->out_dim}, 2, m->y},
    };
    for (int i = 0; i < 4; i++)
        if (dump_device_array(dir, arrays[i].name, m->dtype, arrays[i].shape, arrays[i].ndim, arrays[i].dev) != 0)
            exit(EXIT_BAD_INPUT);
    printf("dump: wrote x, w, b and %s as .npy files in %s/\n", y_name, dir);
}

/* The trace pass: this command line again, for one variant. */
static void spawn_trace(int argc, char **argv, const char *variant)
{
    char **child = calloc((size_t)argc + 3, sizeof *child);
    if (!child) exit(EXIT_BAD_INPUT);
    for (int i = 0; i < argc; i++) child[i] = argv[i];
    child[argc] = "--variant";
    child[argc + 1] = (char *)variant;
    prof_spawn_trace_pass(child);
    free(child);
}

/* ---- one run of the schedule ------------------------------------------------------------- */


static void tag_of(char *tag, size_t len, const model_t *m, const common_args *a)
{
    snprintf(tag, len, "%zux%zux%zu_%s_%s_%s", m->batch, m->in_dim, m->out_dim, dtype_name(m->dtype),
             a->sched.warmup > 0 ? "warm" : "cold", variants[m->variant]);
}

static run_result run_variant(model_t *m, const host_inputs *h, const common_args *a,
                              const gpu_info *g, int argc, char **argv)
{
    run_result res = {0};
    char tag[160], base[700];
    tag_of(tag, sizeof tag, m, a);
    snprintf(base, sizeof base, "%s/%s", a->out_dir, tag);

    prof_run run;
    prof_run_schedule(&run, &a->sched, m->stream, forward, m);

    if (run.traced) { /* the trace pass only records; the timed pass below reports */
        if (trace_write(base, 12) == 0) {
            printf("trace: wrote %s.json and %s.txt\n", base, base);
            report_trace_kernels(m, a);
        }
        prof_free(&run);
        return res;
    }

    int fell_back = m->lt_state < 0;
    res.gpu_ops = gpu_ops_per_step[fell_back ? V_VIEW : m->variant];
    double flops = 2.0 * (double)m->batch * (double)m->out_dim * (double)m->in_dim;
    printf("\n== %s: %s\n", tag, variant_help[m->variant]);
    printf("launches per step: %s%s\n", fell_back ? "(fallback) " : "", launches[fell_back ? V_VIEW : m->variant]);
    report_steps(&run);
    res.cpu = prof_active_stats(&run, 0);
    res.gpu = prof_active_stats(&run, 1);
    int calls = flops <= 2e10 ? 200 : 20;
    measure_back_to_back(m, calls, &res);
    printf("back to back: %.2f us per forward (%d forwards issued without waiting, median of 7 rounds)\n",
           res.back_to_back_us, calls);
    report_verdict(res.cpu.median, res.gpu.median);
    report_throughput(g, m->dtype, flops, res.gpu.median);
    int lt_path = m->variant == V_EPILOGUE && !fell_back && res.bare_lt_us > 0;
    double bare = lt_path ? res.bare_lt_us : res.bare_gemmex_us;
    res.vs_bare = res.back_to_back_us / bare - 1.0;
    printf("gemm_only: the bare GEMM (x W^T, no bias) back to back, in alternation with the forward: ");
    if (res.bare_lt_us > 0) printf("%.2f us through a cuBLASLt plan, ", res.bare_lt_us);
    printf("%.2f us through cublasGemmEx\n", res.bare_gemmex_us);
    printf("this variant vs the bare GEMM through the same library (%s): %+.2f us (%+.1f%%)\n",
           lt_path ? "cuBLASLt plan" : "cublasGemmEx", res.back_to_back_us - bare, 100.0 * res.vs_bare);
    if (res.graph_us > 0)
        printf("as a CUDA graph (the matmul captured once, replayed with cudaGraphLaunch): %.2f us per "
               "forward back to back\n", res.graph_us);
    if (m->variant == V_TRANSPOSE_COPY) {
        double bytes = 2.0 * (double)m->out_dim * (double)m->in_dim * (double)dtype_size(m->dtype);
        double t = prof_back_to_back_us(transpose_only, m, m->stream, calls, 5);
        printf("the transpose alone (reads and writes W once: 2 x %zu x %zu x %zu bytes): ", m->out_dim,
               m->in_dim, dtype_size(m->dtype));
        report_bandwidth(g, bytes, t);
        if (g->copy_gbps > 0)
            printf("at the copy ceiling it would take %.2f us\n", bytes / (g->copy_gbps * 1e3));
    }
    report_cold_start(m, &run, a);
    if (a->check) {
        res.err = check_forward(m, h);
        report_check(res.err, dtype_tolerance(m->dtype));
    }
    if (a->dump_dir[0]) dump_arrays(m, a->dump_dir);

    report_step_files(&run, base, tag, a->plot);
    prof_free(&run);
    if (a->trace) spawn_trace(argc, argv, variants[m->variant]);
    return res;
}

/* ---- --sweep: batch 1..65536 at fixed in_dim and out_dim --------------------------------- */

static int run_sweep(const common_args *a, size_t in_dim, size_t out_dim, int variant, const gpu_info *g)
{
    char csv[600], png[600], title[400];
    snprintf(csv, sizeof csv, "%s/sweep_%zux%zu_%s_%s.csv", a->out_dir, in_dim, out_dim, dtype_name(a->dtype), variants[variant]);
    snprintf(png, sizeof png, "%s/sweep_%zux%zu_%s_%s.png", a->out_dir, in_dim, out_dim, dtype_name(a->dtype), variants[variant]);
    snprintf(title, sizeof title, "Linear %zu -> %zu, %s, %s, %s", in_dim, out_dim, variants[variant],
             dtype_name(a->dtype), g->prop.name);
    char tmp[700];
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (!f) return 1;
    fprintf(f, "batch,cpu_us,gpu_us,back_to_back_us,tflops,rel_err\n");
    printf("%6s %10s %10s %14s %9s %10s\n", "batch", "cpu_us", "gpu_us", "back2back_us", "TFLOP/s", "rel_err");
    schedule_t sched = {.wait = 0, .warmup_steps = 0, .active = a->sched.active < 10 ? 10 : a->sched.active, .warmup = 3};
    int failed = 0;
    for (size_t batch = 1; batch <= 65536; batch *= 2) {
        model_t m = {.dtype = a->dtype, .batch = batch, .in_dim = in_dim, .out_dim = out_dim, .variant = variant};
        host_inputs h;
        model_setup(&m, &h, a->seed);
        prof_run run;
        prof_run_schedule(&run, &sched, m.stream, forward, &m);
        double flops = 2.0 * (double)batch * (double)in_dim * (double)out_dim;
        double cpu = prof_active_stats(&run, 0).median, gpu = prof_active_stats(&run, 1).median;
        double b2b = prof_back_to_back_us(forward, &m, m.stream, flops <= 1e9 ? 100 : 10, 3);
        double tflops = flops / (gpu * 1e-6) / 1e12;
        double err = a->check ? check_forward(&m, &h) : 0.0;
        failed |= !(err <= dtype_tolerance(a->dtype));
        printf("%6zu %10.2f %10.2f %14.2f %9.2f %10.2e\n", batch, cpu, gpu, b2b, tflops, err);
        fprintf(f, "%zu,%.3f,%.3f,%.3f,%.3f,%.3e\n", batch, cpu, gpu, b2b, tflops, err);
        prof_free(&run);
        model_free(&m, &h);
    }
    if (out_commit(f, tmp, csv) != 0) return 1;
    printf("wrote %s\n", csv);
    if (a->plot && plot_run("batch_crossover.gp", csv, png, title) == 0) printf("wrote %s\n", png);
    if (failed) printf("check: FAILED at one or more batch sizes (tolerance %.0e)\n", dtype_tolerance(a->dtype));
    return failed;
}

/* ---- --explain-views: the article's 3x2 example, on the CPU --------------------------------- */

static void print_int_view(const char *name, const view_t *v)
{
    char d[128];
    view_describe(v, d, sizeof d);
    int contiguous = view_is_contiguous(v);
    printf("%-4s %s, contiguous: %s\n     as a matrix:", name, d, contiguous ? "yes" : "no");
    const int *data = v->data;
    for (size_t i = 0; i < v->shape[0]; i++) {
        printf(" [");
        for (size_t j = 0; j < v->shape[1]; j++)
            printf("%s%d", j ? " " : "", data[(ptrdiff_t)i * v->strides[0] + (ptrdiff_t)j * v->strides[1]]);
        printf("]");
    }
    ptrdiff_t offsets[6];
    view_flatten_order(v, offsets);
    printf("\n     flatten reads offsets");
    for (int i = 0; i < 6; i++) printf(" %td", offsets[i]);
    printf(" -> values");
    for (int i = 0; i < 6; i++) printf(" %d", data[offsets[i]]);
    printf(" (%s)\n", contiguous ? "in memory order: the flatten is a view too" : "out of memory order: the flatten must copy");
}

static void print_operand(const char *name, const view_t *v)
{
    char d[128];
    view_gemm_layout l;
    view_describe(v, d, sizeof d);
    if (view_gemm_operand(v, &l) == 0)
        printf("%-28s %s -> cuBLAS reads it with op %s, leading dimension %zu\n", name, d, l.transposed ? "T" : "N", l.ld);
    else
        printf("%-28s %s -> no cuBLAS layout: copy it first\n", name, d);
}

static void explain_views(size_t in_dim, size_t out_dim)
{
    int memory[6] = {0, 1, 2, 3, 4, 5};
    view_t M = view_contiguous(memory, 2, (size_t[]){3, 2});
    view_t T = view_transpose(M, 0, 1);
    printf("the article's 3x2 example (strides in elements)\nmemory: 0 1 2 3 4 5\n");
    print_int_view("M", &M);
    printf("M^T = view_transpose(M, 0, 1): no data moved\n");
    print_int_view("M^T", &T);
    printf("M^T points at the same data as M: %s; memory is still:", T.data == M.data ? "yes" : "no");
    for (int i = 0; i < 6; i++) printf(" %d", memory[i]);

    printf("\n\nnn.Linear at this stage's shape (in_dim %zu, out_dim %zu): the same trick\n", in_dim, out_dim);
    view_t W = view_contiguous(NULL, 2, (size_t[]){out_dim, in_dim});
    view_t Wt = view_transpose(W, 0, 1);
    view_t copy = view_contiguous(NULL, 2, Wt.shape);
    print_operand("W [out_dim, in_dim]", &W);
    print_operand("W^T, a view (view, epilogue)", &Wt);
    print_operand("W^T, a copy (transpose_copy)", &copy);
}

/* ---- main ------------------------------------------------------------------------------- */

/* Removes a value-less flag from argv; returns 1 when it was there. cli_parse knows only
 * numeric stage flags, and then still checks everything else on the line. */
static int take_flag(int *argc, char **argv, const char *flag)
{
    int found = 0, out = 1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], flag) == 0) found = 1;
        else argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
    return found;
}

int main(int argc, char **argv)
{
    long long batch = 1024, in_dim = 32, out_dim = 64;
    const stage_opt opts[] = {
        {"batch", &batch, 1, 1 << 24, "rows of x and y"},
        {"in_dim", &in_dim, 1, 65536, "columns of x and of W"},
        {"out_dim", &out_dim, 1, 65536, "rows of W, columns of y, length of b"},
    };
    const stage_spec spec = {"02_linear",
                             "y = x W^T + b with W stored [out_dim, in_dim] (nn.Linear, part 2 of the articles).\n"
                             "--explain-views prints the 3x2 strided-view example and exits (no GPU needed)",
                             variants, variant_help, opts, 3};
    int explain = take_flag(&argc, argv, "--explain-views");
    common_args a;
    cli_parse(argc, argv, &spec, &a);
    if (explain) {
        explain_views((size_t)in_dim, (size_t)out_dim);
        return 0;
    }
    if (!prof_trace_pass_open()) return 0; /* trace pass, and CUPTI unavailable: said why */
    size_mul(size_mul((size_t)batch, (size_t)in_dim, "batch x in_dim"), (size_t)out_dim, "batch x in_dim x out_dim");

    gpu_info g;
    if (out_mkdirs(a.out_dir) != 0) return EXIT_BAD_INPUT; /* every input checked before the GPU */
    gpu_require(&g, spec.stage);
    if (!prof_is_trace_pass()) gpu_print(&g);

    int first = 0, last = N_VARIANTS - 1;
    if (strcmp(a.variant, "all") != 0) {
        for (first = 0; strcmp(variants[first], a.variant) != 0; first++) {}
        last = first;
    }
    if (a.sweep) {
        int failed = 0;
        for (int v = first; v <= last; v++) failed |= run_sweep(&a, (size_t)in_dim, (size_t)out_dim, v, &g);
        return failed ? EXIT_BAD_INPUT : 0;
    }

    run_result results[N_VARIANTS];
    int failed = 0;
    for (int v = first; v <= last; v++) {
        model_t m = {.dtype = a.dtype, .batch = (size_t)batch, .in_dim = (size_t)in_dim,
                     .out_dim = (size_t)out_dim, .variant = v};
        host_inputs h;
        model_setup(&m, &h, a.seed);
        results[v] = run_variant(&m, &h, &a, &g, argc, argv);
        failed |= a.check && !prof_is_trace_pass() && !(results[v].err <= dtype_tolerance(a.dtype));
        model_free(&m, &h);
    }
    if (prof_is_trace_pass()) return 0;

    if (last > first) {
        printf("\n== comparison (medians over active steps; back to back vs the bare GEMM; one run, one GPU)\n");
        printf("%-15s %8s %10s %10s %14s %12s %10s\n", "variant", "gpu ops", "cpu_us", "gpu_us",
               "back2back_us", "vs bare GEMM", "rel_err");
        for (int v = first; v <= last; v++)
            printf("%-15s %8d %10.2f %10.2f %14.2f %+11.1f%% %10.2e\n", variants[v], results[v].gpu_ops,
                   results[v].cpu.median, results[v].gpu.median, results[v].back_to_back_us,
                   100.0 * results[v].vs_bare, results[v].err);
        printf("%-15s %8d %10s %10s %14.2f   (cuBLASLt plan, no epilogue)\n", "gemm_only", 1, "", "",
               results[last].bare_lt_us);
        printf("%-15s %8d %10s %10s %14.2f   (cublasGemmEx)\n", "gemm_only", 1, "", "", results[last].bare_gemmex_us);
        printf("(vs bare GEMM: back to back, against the bare GEMM through the variant's own library)\n");
    }
    printf("\noutputs: %s/\n", a.out_dir);
    return failed ? EXIT_BAD_INPUT : 0;
}
