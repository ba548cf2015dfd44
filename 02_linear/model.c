#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "gpu.h"
#include "prof.h"
#include "program.h"
#include "ref.h"
#include "report.h"
#include "size.h"
#include "stats.h"

/* What linear_setup asks the GPU for: x, W, W^T, b, y and 32 MB for cuBLAS. */
static const char buffers[] = "x, W, W^T, b, y and the workspace";

int linear_validate(dtype_t t, size_t batch, size_t in_dim, size_t out_dim, char *why, size_t len)
{
    const double elems = (double)batch * (double)in_dim + 2.0 * (double)out_dim * (double)in_dim + (double)out_dim +
                         (double)batch * (double)out_dim;
    return size_device_check(elems * (double)dtype_size(t) + (32u << 20), buffers, why, len);
}

linear_layer *linear_setup(dtype_t t, size_t batch, size_t in_dim, size_t out_dim, uint64_t seed)
{
    linear_layer *m = calloc(1, sizeof *m);
    if (!m) exit(EXIT_BAD_INPUT);
    *m = (linear_layer){.dtype = t, .batch = batch, .in_dim = in_dim, .out_dim = out_dim};
    size_t es = dtype_size(t);
    size_t nx = size_mul(batch, in_dim, "batch x in_dim");
    size_t nw = size_mul(out_dim, in_dim, "out_dim x in_dim");
    size_t ny = size_mul(batch, out_dim, "batch x out_dim");
    size_t elems = nx + 2 * nw + out_dim + ny;
    gpu_require_fits(size_mul(elems, es, "buffer size") + (32u << 20), buffers);
    CUDA_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&m->x, nx * es));
    CUDA_CHECK(cudaMalloc(&m->w, nw * es));
    CUDA_CHECK(cudaMalloc(&m->wt, nw * es));
    CUDA_CHECK(cudaMalloc(&m->b, out_dim * es));
    CUDA_CHECK(cudaMalloc(&m->y, ny * es));
    m->w_view = view_contiguous(m->w, 2, (size_t[]){out_dim, in_dim});

    /* x in [-1, 1); W as nn.Linear initialises it, in [-1/sqrt(in_dim), 1/sqrt(in_dim)), so
     * x W^T stays of order 1 at any in_dim; b in [-1, 1), larger than nn.Linear's, so that a
     * missing or misplaced bias is an order-1 error no tolerance can hide. Never zeros: zeros
     * hide unwritten outputs. */
    rng_t rng = rng_seed(seed);
    float wb = 1.0f / sqrtf((float)in_dim);
    struct { float **host; void *dev; size_t n; float lo, hi; } in[] = {
        {&m->hx, m->x, nx, -1.0f, 1.0f}, {&m->hw, m->w, nw, -wb, wb}, {&m->hb, m->b, out_dim, -1.0f, 1.0f},
    };
    for (int i = 0; i < 3; i++) {
        float *v = malloc(in[i].n * sizeof *v);
        void *staging = malloc(in[i].n * es);
        if (!v || !staging) {
            program_error("out of host memory for %zu elements", in[i].n);
            exit(EXIT_BAD_INPUT);
        }
        fill_uniform(&rng, v, in[i].n, in[i].lo, in[i].hi);
        dtype_round_and_pack(t, v, staging, in[i].n);
        CUDA_CHECK(cudaMemcpy(in[i].dev, staging, in[i].n * es, cudaMemcpyHostToDevice));
        free(staging);
        *in[i].host = v;
    }
    return m;
}

void linear_free(linear_layer *m)
{
    CUDA_CHECK(cudaStreamSynchronize(m->stream));
    void *bufs[] = {m->x, m->w, m->wt, m->b, m->y};
    for (int i = 0; i < 5; i++) CUDA_CHECK(cudaFree(bufs[i]));
    if (m->blas) CUBLAS_CHECK(cublasDestroy(m->blas));
    if (m->lt_state > 0) lt_plan_free(&m->plan);
    if (m->alone_state > 0) lt_plan_free(&m->alone_plan);
    if (m->lt) CUBLASLT_CHECK(cublasLtDestroy(m->lt));
    CUDA_CHECK(cudaStreamDestroy(m->stream));
    free(m->hx);
    free(m->hw);
    free(m->hb);
    free(m);
}

double linear_check(linear_layer *m, run_forward forward)
{
    size_t M = m->batch, N = m->out_dim, K = m->in_dim, es = dtype_size(m->dtype);
    CUDA_CHECK(cudaMemsetAsync(m->y, 0xFF, M * N * es, m->stream)); /* all-ones bits: NaN in every dtype */
    CUDA_CHECK(cudaMemsetAsync(m->wt, 0xFF, N * K * es, m->stream));
    forward(m);
    CUDA_CHECK(cudaStreamSynchronize(m->stream));

    size_t rows = (double)M * N * K <= (double)(1u << 27) || M <= 16 ? M : 16;
    float *got = malloc(rows * N * sizeof *got);
    double *want = malloc(rows * N * sizeof *want);
    void *row_bits = malloc(N * es);
    if (!got || !want || !row_bits) {
        program_error("out of host memory for the check");
        exit(EXIT_BAD_INPUT);
    }
    for (size_t r = 0; r < rows; r++) {
        size_t row = rows == M ? r : r * (M - 1) / (rows - 1);
        CUDA_CHECK(cudaMemcpy(row_bits, (char *)m->y + row * N * es, N * es, cudaMemcpyDeviceToHost));
        dtype_unpack(m->dtype, row_bits, got + r * N, N);
        ref_gemm_rows(m->hx, m->hw, want + r * N, row, 1, K, N, 1); /* W is [N, K]: read transposed */
        for (size_t j = 0; j < N; j++) want[r * N + j] += m->hb[j];
    }
    double err = rel_fro_error(got, want, rows * N);
    free(got);
    free(want);
    free(row_bits);
    return err;
}

/* --dump: x [batch, in_dim], w [out_dim, in_dim], b [out_dim], y [batch, out_dim]. */
int linear_arrays(const linear_layer *m, dump_array *out)
{
    const dump_array arrays[] = {
        {"x", m->x, 2, {m->batch, m->in_dim}},
        {"w", m->w, 2, {m->out_dim, m->in_dim}},
        {"b", m->b, 1, {m->out_dim}},
        {"y", m->y, 2, {m->batch, m->out_dim}},
    };
    for (int i = 0; i < 4; i++) out[i] = arrays[i];
    return 4;
}

double linear_flops(const linear_layer *m)
{
    return 2.0 * (double)m->batch * (double)m->out_dim * (double)m->in_dim;
}

/* Napkin math, in elements: x, W, b read once and y written once... */
static double elems_least(const linear_layer *m)
{
    return (double)m->batch * (double)m->in_dim + (double)m->out_dim * (double)m->in_dim + (double)m->out_dim +
           (double)m->batch * (double)m->out_dim;
}

double linear_min_bytes(const linear_layer *m)
{
    return elems_least(m) * (double)dtype_size(m->dtype);
}

/* ...and what each variant moves, kernel by kernel: y read and written again by bias_add (view,
 * transpose_copy; the epilogue variant too where it falls back), y written by bias_broadcast and
 * read back by the GEMM with beta = 1 (addmm), W read and W^T written by the transpose
 * (transpose_copy). */
static double bytes_of(const linear_layer *m, double elems) { return elems * (double)dtype_size(m->dtype); }

static int gemm_then_bias_add(const linear_layer *m, const char *gemm, run_traffic *t)
{
    const double x = (double)m->batch * (double)m->in_dim, w = (double)m->out_dim * (double)m->in_dim;
    const double b = (double)m->out_dim, y = (double)m->batch * (double)m->out_dim;
    t[0] = (run_traffic){gemm, "x, W in; y out", bytes_of(m, x + w + y)};
    t[1] = (run_traffic){"bias_add", "y, b in; y out", bytes_of(m, 2 * y + b)};
    return 2;
}

int linear_traffic(const linear_layer *m, int variant, run_traffic *t)
{
    const double x = (double)m->batch * (double)m->in_dim, w = (double)m->out_dim * (double)m->in_dim;
    const double b = (double)m->out_dim, y = (double)m->batch * (double)m->out_dim;
    switch (variant) {
    case LINEAR_EPILOGUE:
        if (m->lt_state < 0) return gemm_then_bias_add(m, "gemm", t); /* no cuBLASLt algorithm: the fallback */
        t[0] = (run_traffic){"gemm_bias", "x, W, b in; y out", bytes_of(m, elems_least(m))};
        return 1;
    case LINEAR_VIEW: return gemm_then_bias_add(m, "gemm", t);
    case LINEAR_ADDMM:
        t[0] = (run_traffic){"bias_broadcast", "b in; y out", bytes_of(m, b + y)};
        t[1] = (run_traffic){"gemm", "x, W, y in; y out", bytes_of(m, x + w + 2 * y)};
        return 2;
    default: /* transpose_copy */
        t[0] = (run_traffic){"transpose", "W in; W^T out", bytes_of(m, 2 * w)};
        return 1 + gemm_then_bias_add(m, "gemm", t + 1);
    }
}

void linear_tag(const linear_layer *m, const common_args *a, char *buf, size_t len)
{
    snprintf(buf, len, "%zux%zux%zu_%s_%s", m->batch, m->in_dim, m->out_dim, dtype_name(m->dtype),
             a->sched.warmup > 0 ? "warm" : "cold");
}

void linear_describe(const linear_layer *m)
{
    char w[128], wt[128];
    view_t t = view_transpose(m->w_view, 0, 1);
    view_describe(&m->w_view, w, sizeof w);
    view_describe(&t, wt, sizeof wt);
    printf("x [%zu, %zu], W %s, W^T (a view of W) %s, b [%zu] -> y [%zu, %zu]\n", m->batch, m->in_dim, w, wt,
           m->out_dim, m->batch, m->out_dim);
}

/* What planning on every call would cost: lt_plan_init alone, against lt_plan_run's issue time. */
static void report_plan_cache(linear_layer *m)
{
    enum { REPS = 5 };
    const int calls = prof_under_tool() ? 1 : 100;
    double init_us[REPS], run_us[REPS];
    for (int r = 0; r < REPS; r++) {
        lt_plan p;
        double t0 = prof_now_us();
        int rc = lt_plan_init(&p, m->lt, m->dtype, m->lt_w_kn, m->batch, m->out_dim, m->in_dim, 1,
                              CUBLASLT_EPILOGUE_BIAS, m->b);
        init_us[r] = prof_now_us() - t0;
        if (rc == 0) lt_plan_free(&p);
    }
    for (int r = 0; r < REPS; r++) {
        double t0 = prof_now_us();
        for (int i = 0; i < calls; i++) lt_plan_run(&m->plan, 1.0f, m->x, m->w, 0.0f, m->y, m->y, m->stream);
        run_us[r] = (prof_now_us() - t0) / calls;
        CUDA_CHECK(cudaStreamSynchronize(m->stream));
    }
    double init = stats_of(init_us, REPS).median, issue = stats_of(run_us, REPS).median;
    printf("plan cache: lt_plan_init alone costs %.2f us of CPU (median of %d: descriptors, heuristic query, "
           "32 MiB workspace); lt_plan_run issues a planned matmul in %.2f us (median of %d x %d calls): "
           "planning on every call would make each forward %.0fx as costly to issue\n",
           init, REPS, issue, REPS, calls, (init + issue) / issue);
}

static void transpose_only(void *model)
{
    linear_layer *m = model;
    launch_transpose(m->dtype, m->w, m->wt, m->out_dim, m->in_dim, m->stream);
    LAUNCH_CHECK();
}

void linear_report(linear_layer *m, int variant, const run_result *r, const gpu_info *g, const common_args *a)
{
    if (a->sched.warmup > 0)
        printf("cold start: none to see, %d warm-up forwards ran before step 0 (step 0: %.2f us CPU)\n",
               a->sched.warmup, r->first_cpu_us);
    else
        printf("cold start: step 0 took %.2f us of CPU time vs %.2f us for an active step (median): %.2f us more, "
               "paid once (%s, lazy loading of the kernels' modules)\n", r->first_cpu_us, r->cpu_us,
               r->first_cpu_us - r->cpu_us,
               variant == LINEAR_EPILOGUE && m->lt_state > 0 ? "cuBLASLt handle, plan: heuristic query and workspace" : "cuBLAS handle");
    if (variant == LINEAR_EPILOGUE && m->lt_state > 0) report_plan_cache(m);
    if (variant == LINEAR_TRANSPOSE_COPY) {
        double bytes = 2.0 * (double)m->out_dim * (double)m->in_dim * (double)dtype_size(m->dtype);
        double us = prof_back_to_back_us(transpose_only, m, m->stream, 100, 5);
        printf("the transpose alone (reads and writes W once: 2 x %zu x %zu x %zu bytes): ", m->out_dim, m->in_dim,
               dtype_size(m->dtype));
        report_bandwidth(g, bytes, us);
        if (g->copy_gbps > 0) printf("at the copy ceiling it would take %.2f us\n", bytes / (g->copy_gbps * 1e3));
    }
}
