/* 01_matmul_add: y = x @ w + b, part 1 of "Profiling in PyTorch", one layer down.
 *
 * The question: at size 64 the GPU finishes a step long before the CPU has issued it; at 4096
 * the GPU is the bottleneck. Where is the crossover, and what does fusing the add save?
 *
 *   make 01_matmul_add && ./run                         size 64: overhead-bound
 *   ./run 01_matmul_add --size 4096                     compute-bound
 *   ./run 01_matmul_add --size 4096 --variant all       eager vs addmm vs fused in one run
 *   ./run 01_matmul_add --warmup 5                      warm first step
 *   ./run 01_matmul_add --sweep                         sizes 64..8192: the crossover plot
 *
 * x, w and b are all size x size (bf16 by default, fp32 accumulation); --batched B turns every
 * variant into B independent problems (strided batched: the bmm detour). All GEMMs go through one
 * cuBLASLt plan made on first use. With --variant all the comparison ends with the GEMM alone,
 * through that plan and through cublasGemmEx (which plans inside every call): the floor of every
 * variant, and the CPU cost of a library call that plans on every call.
 *
 * Read it from main() at the bottom: the flags, then for each variant one run (set up, time,
 * report, check, trace), then the comparison. Buffers and the check: model.c; the timing and
 * report helpers: common/run.h and common/compare.h; our add kernel: kernels.cu.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compare.h"
#include "model.h"
#include "program.h"
#include "report.h"
#include "run.h"

/* our kernel, in kernels.cu */
void launch_add(dtype_t t, const void *a, const void *b, void *out, size_t n, cudaStream_t stream);

/* ---- the forwards ---------------------------------------------------------------------- */

/* One plan's layout serves all three variants: D = x @ w + beta * C. Each model makes its plan
 * on its first forward (handle, descriptors, the heuristic query that picks the kernel, the
 * workspace) and reuses it after: its cost is part of the cold first step. */
static void ensure_plan(matmul_add *m)
{
    if (m->planned) return;
    CUBLASLT_CHECK(cublasLtCreate(&m->lt));
    if (lt_plan_init(&m->plan, m->lt, m->dtype, 1, m->n, m->n, m->n, m->batch,
                     CUBLASLT_EPILOGUE_DEFAULT, NULL) != 0)
        exit(EXIT_BAD_INPUT);
    m->planned = 1;
}

/* PyTorch eager: the GEMM writes a temporary, our add kernel reads it back. */
static void forward_eager(void *model)
{
    matmul_add *m = model;
    prof_range_push("matmul_add");
    ensure_plan(m);
    prof_range_push("gemm");
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 0.0f, m->tmp, m->tmp, m->stream);
    prof_range_pop();
    prof_range_push("add");
    launch_add(m->dtype, m->tmp, m->b, m->y, matmul_add_elems(m), m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_pop();
}

/* torch.compile's aten::addmm: b copied into y, then the GEMM adds x @ w onto it (beta = 1). */
static void forward_addmm(void *model)
{
    matmul_add *m = model;
    prof_range_push("matmul_add");
    ensure_plan(m);
    prof_range_push("copy_bias");
    CUDA_CHECK(cudaMemcpyAsync(m->y, m->b, matmul_add_elems(m) * dtype_size(m->dtype), cudaMemcpyDeviceToDevice,
                               m->stream));
    prof_range_pop();
    prof_range_push("gemm");
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 1.0f, m->y, m->y, m->stream);
    prof_range_pop();
    prof_range_pop();
}

/* The fusion the article wished for: the GEMM's epilogue reads b (C) while it writes y (D). */
static void forward_fused(void *model)
{
    matmul_add *m = model;
    prof_range_push("matmul_add");
    ensure_plan(m);
    prof_range_push("gemm_add");
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 1.0f, m->b, m->y, m->stream);
    prof_range_pop();
    prof_range_pop();
}

/* The yardsticks of the comparison: the GEMM alone, through the plan and through cublasGemmEx. */
static void gemm_alone_lt(void *model)
{
    matmul_add *m = model;
    ensure_plan(m);
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 0.0f, m->tmp, m->tmp, m->stream);
}

static void gemm_alone_gemmex(void *model)
{
    matmul_add *m = model;
    if (!m->blas) {
        CUBLAS_CHECK(cublasCreate(&m->blas));
        CUBLAS_CHECK(cublasSetStream(m->blas, m->stream));
    }
    blas_gemm(m->blas, m->dtype, 1, m->n, m->n, m->n, 1.0f, m->x, m->w, 0.0f, m->tmp, m->batch);
}

/* ---- the variants, in the order the chapter tells them --------------------------------- */

enum { EAGER, ADDMM, FUSED, N_VARIANTS };
static const char *const names[N_VARIANTS + 1] = {"eager", "addmm", "fused", NULL};
static const char *const helps[N_VARIANTS] = {
    "GEMM into a temporary + our add kernel (2 kernels)",
    "copy b into y + GEMM with beta = 1 (memcpy + 1 kernel)",
    "one cuBLASLt matmul, D = x @ w + b into a separate y (1 kernel)",
};
static const char *const launches[N_VARIANTS] = {
    "cublasLtMatmul -> 1 GEMM kernel into a temporary; launch_add -> 1 add kernel",
    "cudaMemcpyAsync b -> y (device to device); cublasLtMatmul (beta = 1, C = D = y) -> 1 GEMM kernel",
    "cublasLtMatmul (C = b, D = y) -> 1 GEMM kernel with the add in its epilogue",
};
static const run_forward forwards[N_VARIANTS] = {forward_eager, forward_addmm, forward_fused};
static const int kernels[N_VARIANTS] = {2, 2, 1};

/* ---- the flags ----------------------------------------------------------------------------- */

typedef struct {
    long long size, batch;
} matmul_add_flags;
static const matmul_add_flags defaults = {.size = 64, .batch = 1};
static const stage_opt opts[] = {
    {"size", offsetof(matmul_add_flags, size), 1, 32768, "x, w and b are size x size", FLAG_WHOLE, 1},
    {"batched", offsetof(matmul_add_flags, batch), 1, 4096,
     "independent matmul + adds per step (strided batched, the bmm detour)"},
};
static const stage_spec spec = {"01_matmul_add", "y = x @ w + b with x, w, b all size x size (part 1 of the articles)",
                                names, helps, opts, 2};

/* ---- one variant: set up, time, report, check, trace ---------------------------------------- */

static run_result run_variant(int v, const common_args *a, const gpu_info *g, matmul_add_flags *f, char *argv0)
{
    run_result r = {0};
    matmul_add *m = matmul_add_setup(a->dtype, (size_t)f->size, (int)f->batch, a->seed);
    char tag[200];
    matmul_add_tag(m, a, tag, sizeof tag);
    snprintf(tag + strlen(tag), sizeof tag - strlen(tag), "_%s", names[v]);

    prof_run steps; /* the schedule: --wait, --warmup-steps, --active steps around one forward each */
    if (run_steps(&steps, a, g, tag, forwards[v], m, m->stream, NULL)) { /* the trace pass records only */
        matmul_add_free(m);
        return r;
    }
    printf("\n== %s: %s\n", tag, helps[v]);
    printf("launches per forward: %s\n", launches[v]);
    run_time(&r, &steps, forwards[v], m, m->stream, 0, 0);
    report_verdict(r.cpu_us, r.step_us);
    report_throughput(g, a->dtype, matmul_add_flops(m), r.step_us);
    if (a->check) {
        r.err = matmul_add_check(m, forwards[v]);
        report_check(r.err, dtype_tolerance(a->dtype));
    }
    dump_array arrays[4];
    run_finish(&steps, a, tag, forwards[v], m, m->stream, &r, arrays, matmul_add_arrays(m, arrays), names[v]);
    matmul_add_free(m);
    run_trace_pass(a, &spec, f, 3 /* --size, --batched */, names[v], argv0);
    return r;
}

/* ---- several variants: one table, measured in alternating rounds, then the GEMM alone --------- */

static void compare(const common_args *a, const gpu_info *g, const matmul_add_flags *f, const run_result *r)
{
    matmul_add *m = matmul_add_setup(a->dtype, (size_t)f->size, (int)f->batch, a->seed);
    compare_row rows[N_VARIANTS + 2];
    for (int v = 0; v < N_VARIANTS; v++)
        rows[v] = (compare_row){names[v], forwards[v], r[v].ran ? NULL : "did not run", kernels[v], NAN, r[v].step_us,
                                r[v].err};
    rows[N_VARIANTS] = (compare_row){"gemm alone (Lt plan)", gemm_alone_lt, NULL, -1, NAN, NAN, NAN};
    rows[N_VARIANTS + 1] = (compare_row){"gemm alone (GemmEx)", gemm_alone_gemmex, NULL, -1, NAN, NAN, NAN};
    char stem[200];
    matmul_add_tag(m, a, stem, sizeof stem);
    const compare_spec c = {spec.stage, "comparison", stem, matmul_add_flops(m), 0};
    compare_rounds(rows, N_VARIANTS + 2, m, m->stream, &c, a, g);
    matmul_add_free(m);
}

/* ---- --sweep: sizes 64..8192, each variant on its own: where the crossover lies --------------- */

static int sweep(int first, int last, const common_args *a, const gpu_info *g, const matmul_add_flags *f)
{
    int failed = 0;
    for (int v = first; v <= last; v++) {
        char stem[200], title[200];
        snprintf(stem, sizeof stem, "sweep_%s_%s", dtype_name(a->dtype), names[v]);
        snprintf(title, sizeof title, "matmul + add, %s, %s", names[v], dtype_name(a->dtype));
        sweep_table s;
        if (sweep_open(&s, a, g, stem, title, "size", dtype_tolerance(a->dtype)) != 0) return 1;
        for (size_t size = 64; size <= 8192; size *= 2) {
            matmul_add *m = matmul_add_setup(a->dtype, size, (int)f->batch, a->seed);
            const sweep_point p = sweep_measure(a, forwards[v], m, m->stream);
            sweep_row(&s, size, &p, matmul_add_flops(m), a->check ? matmul_add_check(m, forwards[v]) : 0.0);
            matmul_add_free(m);
        }
        failed |= sweep_close(&s, a->plot, "crossover.gp");
    }
    return failed;
}

/* ---- main: the program, in the order it runs -------------------------------------------- */

int main(int argc, char **argv)
{
    /* The flags: the shared ones (common/cli.h) and the shape. Every check that needs no GPU comes
     * first, --help's too: a bad line is refused before anything is made. */
    matmul_add_flags f = defaults;
    common_args a;
    const int help = run_parse(argc, argv, &spec, &a, &f);
    char why[512];
    if (run_check_outputs(&a) != 0) return EXIT_BAD_INPUT;
    if (matmul_add_validate((size_t)f.size, (size_t)f.batch, a.dtype, why, sizeof why) != 0) {
        program_error("%s", why);
        return EXIT_BAD_INPUT;
    }
    if (a.sweep && run_check_sweep(&a, &spec, "size") != 0) return EXIT_BAD_INPUT;
    if (help) return run_help(&spec, &defaults);

    gpu_info g;
    run_open(&a, &g, spec.stage);
    int first, last;
    run_chosen(&a, &spec, &first, &last);
    if (a.sweep) return sweep(first, last, &a, &g, &f) ? EXIT_BAD_INPUT : 0;

    run_result r[N_VARIANTS] = {{0}};
    int failed = 0;
    for (int v = first; v <= last; v++) {
        r[v] = run_variant(v, &a, &g, &f, argv[0]);
        failed |= a.check && r[v].ran && !(r[v].err <= dtype_tolerance(a.dtype));
    }
    if (prof_is_trace_pass()) return 0;
    if (last > first) compare(&a, &g, &f, r);
    printf("\noutputs: %s/\n", a.out_dir);
    return failed ? EXIT_BAD_INPUT : 0;
}
