/* 01_matmul_add: y = x @ w + b, part 1 of "Profiling in PyTorch", one layer down.
 *
 *   make 01_matmul_add && ./run                         size 64: overhead-bound
 *   ./run 01_matmul_add --size 4096                     compute-bound
 *   ./run 01_matmul_add --size 4096 --variant all       eager vs addmm vs fused in one run
 *   ./run 01_matmul_add --warmup 5                      warm first step
 *   ./run 01_matmul_add --sweep                         sizes 64..8192: the crossover plot
 *
 * x, w and b are all size x size (bf16 by default, fp32 accumulation). Variants:
 *   eager  a GEMM into a temporary, then our add kernel: 2 kernels (PyTorch eager)
 *   addmm  copy b into y, then the GEMM with beta = 1 adds x @ w onto it: 2 GPU operations,
 *          what torch.compile's aten::addmm ran in the article
 *   fused  one cuBLASLt matmul D = x @ w + C with C = b and D = y as separate buffers: 1 kernel,
 *          the fusion the article wished for (the GEMM's epilogue reads b while writing y)
 * --batched B turns every variant into B independent problems (strided batched: the bmm detour).
 * All GEMMs go through one cuBLASLt plan made on first use. With --variant all the report ends
 * with the GEMM alone, through that plan and through cublasGemmEx: the floor for every variant,
 * and the CPU cost of a library call that plans on every call.
 *
 * The program: setup, the three forwards, the step loop, the correctness check, the report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "check.h"
#include "cli.h"
#include "dump.h"
#include "gpu.h"
#include "out.h"
#include "plot.h"
#include "prof.h"
#include "ref.h"
#include "report.h"
#include "trace.h"

/* our kernel, in kernels.cu */
void launch_add(dtype_t t, const void *a, const void *b, void *out, size_t n, cudaStream_t stream);

static const char *const variants[] = {"eager", "addmm", "fused", NULL};
static const char *const variant_help[] = {
    "GEMM into a temporary + our add kernel (2 kernels)",
    "copy b into y + GEMM with beta = 1 (memcpy + 1 kernel)",
    "one cuBLASLt matmul, D = x @ w + b into a separate y (1 kernel)",
};
static const char *const launches[] = {
    "cublasLtMatmul -> 1 GEMM kernel into a temporary; launch_add -> 1 add kernel",
    "cudaMemcpyAsync b -> y (device to device); cublasLtMatmul (beta = 1, C = D = y) -> 1 GEMM kernel",
    "cublasLtMatmul (C = b, D = y) -> 1 GEMM kernel with the add in its epilogue",
};
static const int gpu_ops_per_step[] = {2, 2, 1};

typedef struct {
    dtype_t dtype;
    size_t n;  /* matrices are n x n */
    int batch; /* independent problems */
    int variant;
    cudaStream_t stream;
    void *x, *w, *b, *y, *tmp; /* device */
    /* One cuBLASLt plan serves all three variants: D = x @ w + beta * C. It is made on the first
     * forward (handle, descriptors, the heuristic query that picks the kernel, the workspace) and
     * reused after, as PyTorch caches its plans: its cost is part of the cold first step. */
    cublasLtHandle_t lt;
    int planned;
    lt_plan plan;
} model_t;

static size_t elems(const model_t *m) { return (size_t)m->batch * m->n * m->n; }

/* ---- the forwards ---------------------------------------------------------------------- */

static void ensure_plan(model_t *m)
{
    if (m->planned) return;
    CUBLASLT_CHECK(cublasLtCreate(&m->lt));
    if (lt_plan_init(&m->plan, m->lt, m->dtype, 1, m->n, m->n, m->n, m->batch,
                     CUBLASLT_EPILOGUE_DEFAULT, NULL) != 0)
        exit(EXIT_BAD_INPUT);
    m->planned = 1;
}

static void forward_eager(model_t *m)
{
    prof_range_push("matmul_add");
    ensure_plan(m);
    prof_range_push("gemm");
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 0.0f, m->tmp, m->tmp, m->stream);
    prof_range_pop();
    prof_range_push("add");
    launch_add(m->dtype, m->tmp, m->b, m->y, elems(m), m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_pop();
}

static void forward_addmm(model_t *m)
{
    prof_range_push("matmul_add");
    ensure_plan(m);
    prof_range_push("copy_bias");
    CUDA_CHECK(cudaMemcpyAsync(m->y, m->b, elems(m) * dtype_size(m->dtype), cudaMemcpyDeviceToDevice, m->stream));
    prof_range_pop();
    prof_range_push("gemm");
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 1.0f, m->y, m->y, m->stream);
    prof_range_pop();
    prof_range_pop();
}

static void forward_fused(model_t *m)
{
    prof_range_push("matmul_add");
    ensure_plan(m);
    prof_range_push("gemm_add");
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 1.0f, m->b, m->y, m->stream);
    prof_range_pop();
    prof_range_pop();
}

static void forward(void *ctx)
{
    model_t *m = ctx;
    switch (m->variant) {
    case 0: forward_eager(m); break;
    case 1: forward_addmm(m); break;
    default: forward_fused(m); break;
    }
}

/* ---- setup ------------------------------------------------------------------------------ */

typedef struct {
    float *x, *w, *b; /* dtype-rounded host copies: what the GPU sees, for the reference */
} host_inputs;

static void model_setup(model_t *m, host_inputs *h, uint64_t seed)
{
    size_t n = elems(m), bytes = n * dtype_size(m->dtype);
    gpu_require_fits(cli_mul(bytes, 5, "buffer size") + (32u << 20), "x, w, b, y and the temporary");
    CUDA_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    void **bufs[] = {&m->x, &m->w, &m->b, &m->y, &m->tmp};
    for (int i = 0; i < 5; i++) CUDA_CHECK(cudaMalloc(bufs[i], bytes));

    /* Random inputs, never zeros: zeros hide unwritten outputs and can even run faster. */
    rng_t rng = rng_seed(seed);
    float **host[] = {&h->x, &h->w, &h->b};
    void *dev[] = {m->x, m->w, m->b};
    void *staging = malloc(bytes);
    for (int i = 0; i < 3; i++) {
        *host[i] = malloc(n * sizeof(float));
        if (!*host[i] || !staging) {
            fprintf(stderr, "error: out of host memory for %zu elements\n", n);
            exit(EXIT_BAD_INPUT);
        }
        fill_uniform(&rng, *host[i], n, -1.0f, 1.0f);
        dtype_round_and_pack(m->dtype, *host[i], staging, n);
        CUDA_CHECK(cudaMemcpy(dev[i], staging, bytes, cudaMemcpyHostToDevice));
    }
    free(staging);
}

static void model_free(model_t *m, host_inputs *h)
{
    void *bufs[] = {m->x, m->w, m->b, m->y, m->tmp};
    for (int i = 0; i < 5; i++) CUDA_CHECK(cudaFree(bufs[i]));
    if (m->planned) {
        lt_plan_free(&m->plan);
        CUBLASLT_CHECK(cublasLtDestroy(m->lt));
    }
    CUDA_CHECK(cudaStreamDestroy(m->stream));
    free(h->x);
    free(h->w);
    free(h->b);
    *m = (model_t){0};
}

/* ---- correctness ------------------------------------------------------------------------ */

/* Poisons y and the temporary with NaN, runs one forward, and compares y with the CPU reference
 * in double: every element up to 1024 x 1024, else 16 rows spread over the first and the last
 * problem of the batch (the reference costs n^2 per row). Returns the relative error. */
static double check_forward(model_t *m, const host_inputs *h)
{
    size_t n = m->n, bytes = elems(m) * dtype_size(m->dtype);
    CUDA_CHECK(cudaMemsetAsync(m->y, 0xFF, bytes, m->stream)); /* all-ones bits: NaN in every dtype */
    CUDA_CHECK(cudaMemsetAsync(m->tmp, 0xFF, bytes, m->stream));
    forward(m);
    CUDA_CHECK(cudaStreamSynchronize(m->stream));

    size_t rows = n <= 1024 ? n : 16;
    int probs[2] = {0, m->batch - 1};
    int n_probs = m->batch > 1 ? 2 : 1;
    size_t count = (size_t)n_probs * rows * n;
    float *got = malloc(count * sizeof *got);
    double *want = malloc(count * sizeof *want);
    void *row_bits = malloc(n * dtype_size(m->dtype));
    if (!got || !want || !row_bits) {
        fprintf(stderr, "error: out of host memory for the check\n");
        exit(EXIT_BAD_INPUT);
    }
    size_t at = 0;
    for (int p = 0; p < n_probs; p++) {
        size_t base = (size_t)probs[p] * n * n;
        for (size_t r = 0; r < rows; r++, at += n) {
            size_t row = rows == n ? r : r * (n - 1) / (rows - 1);
            size_t off = (base + row * n) * dtype_size(m->dtype);
            CUDA_CHECK(cudaMemcpy(row_bits, (char *)m->y + off, n * dtype_size(m->dtype), cudaMemcpyDeviceToHost));
            dtype_unpack(m->dtype, row_bits, got + at, n);
            ref_gemm_rows(h->x + base, h->w + base, want + at, row, 1, n, n, 0);
            for (size_t j = 0; j < n; j++) want[at + j] += h->b[base + row * n + j];
        }
    }
    double err = rel_fro_error(got, want, count);
    free(got);
    free(want);
    free(row_bits);
    return err;
}

/* --dump DIR: inputs and this variant's checked output as .npy files, for compare/. */
static void dump_arrays(const model_t *m, const char *dir)
{
    size_t shape[3] = {(size_t)m->batch, m->n, m->n};
    int ndim = m->batch > 1 ? 3 : 2;
    const size_t *s = m->batch > 1 ? shape : shape + 1;
    char y_name[32];
    snprintf(y_name, sizeof y_name, "y_%s", variants[m->variant]);
    const struct { const char *name; const void *dev; } arrays[] = {
        {"x", m->x}, {"w", m->w}, {"b", m->b}, {y_name, m->y}};
    for (int i = 0; i < 4; i++)
        if (dump_device_array(dir, arrays[i].name, m->dtype, s, ndim, arrays[i].dev) != 0) exit(EXIT_BAD_INPUT);
    printf("dump: wrote x, w, b and %s as .npy files in %s/\n", y_name, dir);
}

/* ---- one run of the schedule ------------------------------------------------------------- */

typedef struct {
    stats_t cpu, gpu;
    double back_to_back_us, err;
} run_result;

static void tag_of(char *tag, size_t len, const model_t *m, const common_args *a)
{
    char batch[32] = "";
    if (m->batch > 1) snprintf(batch, sizeof batch, "b%d_", m->batch);
    snprintf(tag, len, "%s%zu_%s_%s_%s", batch, m->n, dtype_name(m->dtype),
             a->sched.warmup > 0 ? "warm" : "cold", variants[m->variant]);
}

static run_result run_variant(model_t *m, const host_inputs *h, const common_args *a,
                              const gpu_info *g, int argc, char **argv)
{
    run_result res = {0};
    char tag[128], base[700];
    tag_of(tag, sizeof tag, m, a);
    snprintf(base, sizeof base, "%s/%s", a->out_dir, tag);

    prof_run run;
    prof_run_schedule(&run, &a->sched, m->stream, forward, m);

    if (run.traced) { /* the trace pass only records; the timed pass below reports */
        if (trace_write(base, 12) == 0) printf("trace: wrote %s.json and %s.txt\n", base, base);
        prof_free(&run);
        return res;
    }

    double flops = 2.0 * (double)m->n * (double)m->n * (double)m->n * m->batch;
    printf("\n== %s: %s\n", tag, variant_help[m->variant]);
    printf("launches per step: %s\n", launches[m->variant]);
    report_steps(&run);
    res.cpu = prof_active_stats(&run, 0);
    res.gpu = prof_active_stats(&run, 1);
    res.back_to_back_us = prof_back_to_back_us(forward, m, m->stream, 200, 5);
    printf("back to back: %.2f us per step (200 steps issued without waiting, median of 5)\n",
           res.back_to_back_us);
    report_verdict(res.cpu.median, res.gpu.median);
    report_throughput(g, m->dtype, flops, res.gpu.median);
    if (a->check) {
        res.err = check_forward(m, h);
        report_check(res.err, dtype_tolerance(m->dtype));
    }
    if (a->dump_dir[0]) { /* y holds the checked forward's output (or one run's, with --no-check) */
        if (!a->check) {
            forward(m);
            CUDA_CHECK(cudaStreamSynchronize(m->stream));
        }
        dump_arrays(m, a->dump_dir);
    }

    report_step_files(&run, base, tag, a->plot);
    prof_free(&run);
    if (a->trace) prof_spawn_trace_pass(argc, argv, variants[m->variant]);
    return res;
}

/* ---- the GEMM alone: what every variant is measured against ------------------------------ */

typedef struct {
    model_t *m;
    cublasHandle_t blas;
} gemm_alone_ctx;

static void gemm_alone_lt(void *ctx)
{
    model_t *m = ((gemm_alone_ctx *)ctx)->m;
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 0.0f, m->tmp, m->tmp, m->stream);
}

static void gemm_alone_cublas(void *ctx)
{
    gemm_alone_ctx *c = ctx;
    blas_gemm(c->blas, c->m->dtype, 1, c->m->n, c->m->n, c->m->n, 1.0f, c->m->x, c->m->w, 0.0f,
              c->m->tmp, c->m->batch);
}

/* Back-to-back time per call of the fused forward and of the bare GEMM, through the cached
 * cuBLASLt plan and through cublasGemmEx (which plans inside every call). Measured in turns, one
 * batch of each per round, median of 5 rounds: under sustained load the GPU's clocks drift by
 * several percent, and measuring one after the other would charge that drift to whichever came
 * second. */
static void report_gemm_alone(model_t *m, double *fused_us, double *lt_us, double *cublas_us)
{
    gemm_alone_ctx c = {.m = m};
    m->variant = 2; /* forward() runs the fused variant */
    ensure_plan(m);
    CUBLAS_CHECK(cublasCreate(&c.blas));
    CUBLAS_CHECK(cublasSetStream(c.blas, m->stream));
    int n = m->n <= 1024 ? 200 : 20;
    for (int i = 0; i < 3; i++) { /* warm every path: module loading, cuBLAS's own setup */
        forward(m);
        gemm_alone_lt(&c);
        gemm_alone_cublas(&c);
    }
    enum { ROUNDS = 5 };
    double fused[ROUNDS], lt[ROUNDS], cublas[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        fused[r] = prof_back_to_back_us(forward, m, m->stream, n, 1);
        lt[r] = prof_back_to_back_us(gemm_alone_lt, &c, m->stream, n, 1);
        cublas[r] = prof_back_to_back_us(gemm_alone_cublas, &c, m->stream, n, 1);
    }
    *fused_us = stats_of(fused, ROUNDS).median;
    *lt_us = stats_of(lt, ROUNDS).median;
    *cublas_us = stats_of(cublas, ROUNDS).median;
    CUBLAS_CHECK(cublasDestroy(c.blas));
}

/* ---- --sweep: sizes 64..8192, the crossover of CPU dispatch and GPU time ---------------- */

static int run_sweep(const common_args *a, long long batch, int variant, const gpu_info *g)
{
    char csv[600], png[600], title[400];
    snprintf(csv, sizeof csv, "%s/sweep_%s_%s.csv", a->out_dir, dtype_name(a->dtype), variants[variant]);
    snprintf(png, sizeof png, "%s/sweep_%s_%s.png", a->out_dir, dtype_name(a->dtype), variants[variant]);
    snprintf(title, sizeof title, "matmul + add, %s, %s, %s", variants[variant], dtype_name(a->dtype), g->prop.name);
    char tmp[700];
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (!f) return 1;
    fprintf(f, "size,cpu_us,gpu_us,back_to_back_us,tflops,rel_err\n");
    printf("%6s %10s %10s %14s %9s %10s\n", "size", "cpu_us", "gpu_us", "back2back_us", "TFLOP/s", "rel_err");
    schedule_t sched = {.wait = 0, .warmup_steps = 0, .active = a->sched.active < 10 ? 10 : a->sched.active, .warmup = 3};
    int failed = 0;
    for (size_t n = 64; n <= 8192; n *= 2) {
        model_t m = {.dtype = a->dtype, .n = n, .batch = (int)batch, .variant = variant};
        host_inputs h;
        model_setup(&m, &h, a->seed);
        prof_run run;
        prof_run_schedule(&run, &sched, m.stream, forward, &m);
        double cpu = prof_active_stats(&run, 0).median, gpu = prof_active_stats(&run, 1).median;
        double b2b = prof_back_to_back_us(forward, &m, m.stream, n <= 1024 ? 100 : 10, 3);
        double tflops = 2.0 * (double)n * n * n * batch / (gpu * 1e-6) / 1e12;
        double err = a->check ? check_forward(&m, &h) : 0.0;
        failed |= !(err <= dtype_tolerance(a->dtype));
        printf("%6zu %10.2f %10.2f %14.2f %9.1f %10.2e\n", n, cpu, gpu, b2b, tflops, err);
        fprintf(f, "%zu,%.3f,%.3f,%.3f,%.2f,%.3e\n", n, cpu, gpu, b2b, tflops, err);
        prof_free(&run);
        model_free(&m, &h);
    }
    if (out_commit(f, tmp, csv) != 0) return 1;
    printf("wrote %s\n", csv);
    if (a->plot && plot_run("crossover.gp", csv, png, title) == 0) printf("wrote %s\n", png);
    if (failed) printf("check: FAILED at one or more sizes (tolerance %.0e)\n", dtype_tolerance(a->dtype));
    return failed;
}

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    long long size = 64, batch = 1;
    const stage_opt opts[] = {
        {"size", &size, 1, 32768, "x, w and b are size x size"},
        {"batched", &batch, 1, 4096, "independent matmul + adds per step (strided batched, the bmm detour)"},
    };
    const stage_spec spec = {"01_matmul_add", "y = x @ w + b with x, w, b all size x size (part 1 of the articles)",
                             variants, variant_help, opts, 2};
    common_args a;
    cli_parse(argc, argv, &spec, &a);
    if (!prof_trace_pass_open()) return 0; /* trace pass, and CUPTI unavailable: said why */
    cli_mul(cli_mul((size_t)size, (size_t)size, "size x size"), (size_t)batch, "batch x size x size");

    gpu_info g;
    if (out_mkdirs(a.out_dir) != 0) return EXIT_BAD_INPUT; /* every input checked before the GPU */
    gpu_require(&g, spec.stage);
    if (!prof_is_trace_pass()) gpu_print(&g);

    int first = 0, last = 2;
    if (strcmp(a.variant, "all") != 0) {
        for (first = 0; variants[first] && strcmp(variants[first], a.variant) != 0; first++) {}
        last = first;
    }
    if (a.sweep) {
        int failed = 0;
        for (int v = first; v <= last; v++) failed |= run_sweep(&a, batch, v, &g);
        return failed ? EXIT_BAD_INPUT : 0;
    }

    run_result results[3];
    int failed = 0;
    for (int v = first; v <= last; v++) {
        model_t m = {.dtype = a.dtype, .n = (size_t)size, .batch = (int)batch, .variant = v};
        host_inputs h;
        model_setup(&m, &h, a.seed);
        results[v] = run_variant(&m, &h, &a, &g, argc, argv);
        failed |= a.check && !prof_is_trace_pass() && !(results[v].err <= dtype_tolerance(a.dtype));
        model_free(&m, &h);
    }
    if (prof_is_trace_pass()) return 0;

    if (last > first) {
        model_t m = {.dtype = a.dtype, .n = (size_t)size, .batch = (int)batch};
        host_inputs h;
        model_setup(&m, &h, a.seed);
        double fused_us, lt_us, cublas_us;
        report_gemm_alone(&m, &fused_us, &lt_us, &cublas_us);
        model_free(&m, &h);

        printf("\n== comparison (medians over active steps; one run, one GPU)\n");
        printf("%-22s %8s %10s %10s %14s %10s\n", "variant", "gpu ops", "cpu_us", "gpu_us", "back2back_us", "rel_err");
        for (int v = first; v <= last; v++)
            printf("%-22s %8d %10.2f %10.2f %14.2f %10.2e\n", variants[v], gpu_ops_per_step[v],
                   results[v].cpu.median, results[v].gpu.median, results[v].back_to_back_us, results[v].err);
        printf("%-22s %8d %10s %10s %14.2f\n", "gemm alone (Lt plan)", 1, "", "", lt_us);
        printf("%-22s %8d %10s %10s %14.2f\n", "gemm alone (GemmEx)", 1, "", "", cublas_us);
        printf("fused vs the GEMM alone, back to back, measured in turns: %.2f vs %.2f us (%+.1f%%)\n",
               fused_us, lt_us, 100.0 * (fused_us / lt_us - 1.0));
    }
    printf("\noutputs: %s/\n", a.out_dir);
    return failed ? EXIT_BAD_INPUT : 0;
}
