/* 02_linear: y = x W^T + b, nn.Linear, part 2 of "Profiling in PyTorch", one layer down.
 *
 * The question: nn.Linear stores W as [out_dim, in_dim] and computes x W^T + b. The profiler
 * shows aten::t and aten::addmm but no transpose kernel and no add kernel: where did the
 * transpose go, and the add?
 *
 *   make 02_linear && ./run                                  the article's shape: 1024 x 32 -> 64
 *   ./run 02_linear --variant all                            the four ways below, compared
 *   ./run 02_linear --batch 8192 --in_dim 4096 --out_dim 4096 --variant all     compute-bound
 *   ./run 02_linear --explain-views                          the 3x2 example: a transpose moves nothing
 *   ./run 02_linear --sweep --variant epilogue               batch 1..65536: the crossover plot
 *
 * bf16 by default, fp32 accumulation. Every variant starts like aten::linear, with W^T as a
 * *view* of W (common/view.h: shape and strides swapped, no kernel); the GEMM's transpose flag
 * is read off the view's strides. The comparison ends with the bare GEMM x W^T (no bias) through
 * a cuBLASLt plan and through cublasGemmEx; the trace pass lists the kernels by name (cuBLAS's
 * kernel name changes with the layout flag).
 *
 * Read it from main() at the bottom: the flags, then for each variant one run (set up, time,
 * report, check, trace), then the comparison. Buffers, the check and the report's extras:
 * model.c; the timing and report helpers: common/run.h and common/compare.h; our kernels:
 * kernels.cu.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compare.h"
#include "model.h"
#include "prof.h"
#include "program.h"
#include "report.h"
#include "run.h"

/* ---- W^T is a view: the layout comes from its strides ---------------------------------- */

/* blas_gemm's w_kn flag for this W^T operand: 1 when its rows are contiguous (op N), 0 when its
 * columns are (op T). blas_gemm derives the leading dimension from the flag (out_dim or in_dim);
 * the view must agree. */
static int gemm_flag(const view_t *wt, const linear_layer *m)
{
    view_gemm_layout l;
    if (view_gemm_operand(wt, &l) != 0 || l.ld != (l.transposed ? m->in_dim : m->out_dim)) {
        char d[128];
        view_describe(wt, d, sizeof d);
        program_error("W^T (%s) has no layout cuBLAS can read without a copy", d);
        exit(EXIT_BAD_INPUT);
    }
    return !l.transposed;
}

/* aten::linear begins with aten::t: metadata only, no GPU work. The caller pops linear_fwd. */
static view_t begin_linear(const linear_layer *m)
{
    prof_range_push("linear_fwd");
    prof_range_push("t");
    view_t wt = view_transpose(m->w_view, 0, 1);
    prof_range_pop();
    return wt;
}

/* Handles are made on first use, as PyTorch makes them: part of the cold first step. */
static void ensure_cublas(linear_layer *m)
{
    if (m->blas) return;
    CUBLAS_CHECK(cublasCreate(&m->blas));
    CUBLAS_CHECK(cublasSetStream(m->blas, m->stream));
}

static void ensure_lt(linear_layer *m)
{
    if (!m->lt) CUBLASLT_CHECK(cublasLtCreate(&m->lt));
}

/* ---- the forwards ------------------------------------------------------------------------ */

/* cuBLAS reads W through the view (op T, no copy), then our kernel adds b to every row. */
static void mm_then_bias_add(linear_layer *m, const view_t *wt)
{
    ensure_cublas(m);
    prof_range_push("mm");
    blas_gemm(m->blas, m->dtype, gemm_flag(wt, m), m->batch, m->out_dim, m->in_dim, 1.0f, m->x, wt->data,
              0.0f, m->y, 1);
    prof_range_pop();
    prof_range_push("bias_add");
    launch_bias_add(m->dtype, m->y, m->b, m->batch, m->out_dim, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
}

/* What eager nn.Linear runs: one cuBLASLt matmul whose BIAS epilogue adds b as it writes y. The
 * plan (descriptors, heuristic query, workspace) is made once; where cuBLASLt has no algorithm
 * (e.g. misaligned leading dimensions) the forward takes the view path instead. */
static void forward_epilogue(void *model)
{
    linear_layer *m = model;
    view_t wt = begin_linear(m);
    if (m->lt_state == 0) {
        ensure_lt(m);
        m->lt_w_kn = gemm_flag(&wt, m);
        m->lt_state = lt_plan_init(&m->plan, m->lt, m->dtype, m->lt_w_kn, m->batch, m->out_dim, m->in_dim, 1,
                                   CUBLASLT_EPILOGUE_BIAS, m->b) == 0 ? 1 : -1;
        if (m->lt_state < 0)
            printf("epilogue: no cuBLASLt BIAS-epilogue algorithm at %zu x %zu -> %zu (%s): running the view "
                   "path instead (GEMM + bias_add, 2 kernels)\n", m->batch, m->in_dim, m->out_dim,
                   dtype_name(m->dtype));
    }
    if (m->lt_state > 0) {
        prof_range_push("addmm"); /* aten::addmm, the bias in the epilogue */
        lt_plan_run(&m->plan, 1.0f, m->x, wt.data, 0.0f, m->y, m->y, m->stream);
        prof_range_pop();
    } else {
        mm_then_bias_add(m, &wt);
    }
    prof_range_pop();
}

/* The GEMM through the view, and the add as a second kernel. */
static void forward_view(void *model)
{
    linear_layer *m = model;
    view_t wt = begin_linear(m);
    mm_then_bias_add(m, &wt);
    prof_range_pop();
}

/* addmm the long way: b copied into every row of y, then the GEMM adds x W^T onto it (beta = 1). */
static void forward_addmm(void *model)
{
    linear_layer *m = model;
    view_t wt = begin_linear(m);
    ensure_cublas(m);
    prof_range_push("addmm");
    prof_range_push("bias_broadcast");
    launch_bias_broadcast(m->dtype, m->y, m->b, m->batch, m->out_dim, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_push("mm");
    blas_gemm(m->blas, m->dtype, gemm_flag(&wt, m), m->batch, m->out_dim, m->in_dim, 1.0f, m->x, wt.data,
              1.0f, m->y, 1);
    prof_range_pop();
    prof_range_pop();
    prof_range_pop();
}

/* What a real transpose would cost: W^T.contiguous() moves the data, and the GEMM then reads
 * the copy as it lies (op N). */
static void forward_transpose_copy(void *model)
{
    linear_layer *m = model;
    view_t wt = begin_linear(m);
    prof_range_push("contiguous");
    launch_transpose(m->dtype, m->w, m->wt, m->out_dim, m->in_dim, m->stream);
    LAUNCH_CHECK();
    view_t copy = view_contiguous(m->wt, 2, wt.shape); /* same shape, row-major strides */
    prof_range_pop();
    mm_then_bias_add(m, &copy);
    prof_range_pop();
}

/* The yardsticks of the comparison: the bare GEMM x W^T (no bias), through a cuBLASLt plan
 * without epilogue (the floor of the epilogue variant: same library, same heuristic) and
 * through cublasGemmEx (the call the other variants make). */
static void gemm_alone_gemmex(void *model)
{
    linear_layer *m = model;
    view_t wt = view_transpose(m->w_view, 0, 1);
    ensure_cublas(m);
    blas_gemm(m->blas, m->dtype, gemm_flag(&wt, m), m->batch, m->out_dim, m->in_dim, 1.0f, m->x, wt.data,
              0.0f, m->y, 1);
}

static void gemm_alone_lt(void *model)
{
    linear_layer *m = model;
    view_t wt = view_transpose(m->w_view, 0, 1);
    if (m->alone_state == 0) {
        ensure_lt(m);
        m->alone_state = lt_plan_init(&m->alone_plan, m->lt, m->dtype, gemm_flag(&wt, m), m->batch, m->out_dim,
                                      m->in_dim, 1, CUBLASLT_EPILOGUE_DEFAULT, NULL) == 0 ? 1 : -1;
        if (m->alone_state < 0) printf("gemm alone (Lt plan): no cuBLASLt algorithm here, the row times cublasGemmEx\n");
    }
    if (m->alone_state > 0) lt_plan_run(&m->alone_plan, 1.0f, m->x, wt.data, 0.0f, m->y, m->y, m->stream);
    else gemm_alone_gemmex(model);
}

/* ---- the variants (in the order of model.h's enum) ----------------------------------------- */

enum { N_VARIANTS = 4 };
static const char *const names[N_VARIANTS + 1] = {"epilogue", "view", "addmm", "transpose_copy", NULL};
static const char *const helps[N_VARIANTS] = {
    "one cuBLASLt matmul with the bias in its epilogue (1 kernel): eager nn.Linear",
    "GEMM reading W^T as a view (op T) + our bias_add kernel (2 kernels)",
    "our bias_broadcast into y + GEMM with beta = 1 (2 kernels): addmm",
    "our transpose kernel copies W^T + GEMM (op N) + bias_add (3 kernels)",
};
static const char *const launches[N_VARIANTS] = {
    "cuBLASLt plan (cublasLtMatmul, op T on W, epilogue BIAS) -> 1 GEMM kernel that adds b as it writes y",
    "cublasGemmEx (op T on W: the view) -> 1 GEMM kernel; launch_bias_add -> 1 bias_add kernel",
    "launch_bias_broadcast b -> every row of y (1 kernel); cublasGemmEx (beta = 1) -> 1 GEMM kernel",
    "launch_transpose W -> W^T (1 kernel); cublasGemmEx (op N on the copy) -> 1 GEMM kernel; "
    "launch_bias_add -> 1 bias_add kernel",
};
static const run_forward forwards[N_VARIANTS] = {forward_epilogue, forward_view, forward_addmm, forward_transpose_copy};

/* ---- the flags ----------------------------------------------------------------------------- */

typedef struct {
    long long batch, in_dim, out_dim, explain;
} linear_flags;
static const linear_flags defaults = {.batch = 1024, .in_dim = 32, .out_dim = 64};
static const stage_opt opts[] = {
    {"batch", offsetof(linear_flags, batch), 1, 1 << 24, "rows of x and y", FLAG_WHOLE, 1},
    {"in_dim", offsetof(linear_flags, in_dim), 1, 65536, "columns of x and of W"},
    {"out_dim", offsetof(linear_flags, out_dim), 1, 65536, "rows of W, columns of y, length of b"},
    {"explain-views", offsetof(linear_flags, explain), 0, 1, "print the 3x2 example (a transpose moves nothing) and "
     "W^T's cuBLAS layout, then exit (no GPU)", FLAG_SWITCH},
};
static const stage_spec spec = {"02_linear", "y = x W^T + b with W stored [out_dim, in_dim] (nn.Linear, part 2 of the "
                                "articles)", names, helps, opts, 4};

/* --explain-views prints the example and exits, on the CPU: a flag of a run given with it would
 * do nothing, so it is refused by name. */
static int explain_views(const linear_flags *f, const common_args *a)
{
    const char *ignored = cli_given_name(a, ~0u);
    if (!ignored && (a->given_own & 1)) ignored = opts[0].name; /* --batch: the views have no rows of x */
    if (ignored) {
        program_error("--explain-views does not take --%s (it prints the 3x2 example and W^T's layout, then exits: "
                      "no run, no files)", ignored);
        return EXIT_BAD_INPUT;
    }
    linear_explain_views((size_t)f->in_dim, (size_t)f->out_dim);
    return 0;
}

/* ---- one variant: set up, time, report, check, trace ---------------------------------------- */

static run_result run_variant(int v, const common_args *a, const gpu_info *g, linear_flags *f, char *argv0)
{
    run_result r = {0};
    linear_layer *m = linear_setup(a->dtype, (size_t)f->batch, (size_t)f->in_dim, (size_t)f->out_dim, a->seed);
    char tag[200];
    linear_tag(m, a, tag, sizeof tag);
    snprintf(tag + strlen(tag), sizeof tag - strlen(tag), "_%s", names[v]);

    prof_run steps; /* the schedule: --wait, --warmup-steps, --active steps around one forward each */
    const run_kernel_table table = {NULL, 0, a->dtype};
    if (run_steps(&steps, a, g, tag, forwards[v], m, m->stream, &table)) { /* the trace pass records only */
        linear_free(m);
        return r;
    }
    run_traffic traffic[RUN_MAX_TRAFFIC];
    const int kernels = linear_traffic(m, v, traffic); /* after the first forward: the epilogue's plan is made */
    printf("\n== %s: %s\n", tag, helps[v]);
    linear_describe(m);
    printf("launches per forward: %s\n", launches[v]);
    run_report_traffic(traffic, kernels, linear_min_bytes(m));
    run_time(&r, &steps, forwards[v], m, m->stream, 1, kernels);
    report_verdict(r.cpu_us, r.step_us);
    report_throughput(g, a->dtype, linear_flops(m), r.step_us);
    run_report_floor(run_floor_us(g, a->dtype, linear_flops(m), linear_min_bytes(m)), linear_flops(m),
                     linear_min_bytes(m), &r);
    linear_report(m, v, &r, g, a);
    if (a->check) {
        r.err = linear_check(m, forwards[v]);
        report_check(r.err, dtype_tolerance(a->dtype));
    }
    dump_array arrays[4];
    run_finish(&steps, a, tag, forwards[v], m, m->stream, &r, arrays, linear_arrays(m, arrays), names[v]);
    linear_free(m);
    run_trace_pass(a, &spec, f, 0xF /* every flag of the stage */, names[v], argv0);
    return r;
}

/* ---- several variants: one table, measured in alternating rounds, then the GEMM alone --------- */

static void compare(const common_args *a, const gpu_info *g, const linear_flags *f, const run_result *r)
{
    linear_layer *m = linear_setup(a->dtype, (size_t)f->batch, (size_t)f->in_dim, (size_t)f->out_dim, a->seed);
    compare_row rows[N_VARIANTS + 2];
    for (int v = 0; v < N_VARIANTS; v++) {
        run_traffic traffic[RUN_MAX_TRAFFIC];
        double bytes = 0;
        forwards[v](m); /* the epilogue variant learns on its first forward whether cuBLASLt runs it */
        const int kernels = linear_traffic(m, v, traffic);
        for (int k = 0; k < kernels; k++) bytes += traffic[k].bytes;
        rows[v] = (compare_row){names[v], forwards[v], r[v].ran ? NULL : "did not run", kernels, bytes, r[v].step_us,
                                r[v].err};
    }
    rows[N_VARIANTS] = (compare_row){"gemm alone (Lt plan)", gemm_alone_lt, NULL, -1, NAN, NAN, NAN};
    rows[N_VARIANTS + 1] = (compare_row){"gemm alone (GemmEx)", gemm_alone_gemmex, NULL, -1, NAN, NAN, NAN};
    char stem[200];
    linear_tag(m, a, stem, sizeof stem);
    const compare_spec c = {spec.stage, "comparison", stem, linear_flops(m),
                            run_floor_us(g, a->dtype, linear_flops(m), linear_min_bytes(m))};
    compare_rounds(rows, N_VARIANTS + 2, m, m->stream, &c, a, g);
    linear_free(m);
}

/* ---- --sweep: batch 1..65536, each variant on its own: where the crossover lies --------------- */

static int sweep(int first, int last, const common_args *a, const gpu_info *g, const linear_flags *f)
{
    int failed = 0;
    for (int v = first; v <= last; v++) {
        char stem[200], title[200];
        snprintf(stem, sizeof stem, "sweep_%lldx%lld_%s_%s", f->in_dim, f->out_dim, dtype_name(a->dtype), names[v]);
        snprintf(title, sizeof title, "Linear %lld -> %lld, %s, %s", f->in_dim, f->out_dim, names[v],
                 dtype_name(a->dtype));
        sweep_table s;
        if (sweep_open(&s, a, g, stem, title, "batch", dtype_tolerance(a->dtype)) != 0) return 1;
        for (size_t batch = 1; batch <= 65536; batch *= 2) {
            linear_layer *m = linear_setup(a->dtype, batch, (size_t)f->in_dim, (size_t)f->out_dim, a->seed);
            const sweep_point p = sweep_measure(a, forwards[v], m, m->stream);
            sweep_row(&s, batch, &p, linear_flops(m), a->check ? linear_check(m, forwards[v]) : 0.0);
            linear_free(m);
        }
        failed |= sweep_close(&s, a->plot, "batch_crossover.gp");
    }
    return failed;
}

/* ---- main: the program, in the order it runs -------------------------------------------- */

int main(int argc, char **argv)
{
    /* The flags: the shared ones (common/cli.h) and the shape. Every check that needs no GPU comes
     * first, --help's too: a bad line is refused before anything is made. */
    linear_flags f = defaults;
    common_args a;
    const int help = run_parse(argc, argv, &spec, &a, &f);
    if (f.explain && !help) return explain_views(&f, &a); /* on the CPU, then exit */
    char why[512];
    if (run_check_outputs(&a) != 0) return EXIT_BAD_INPUT;
    if (linear_validate(a.dtype, (size_t)f.batch, (size_t)f.in_dim, (size_t)f.out_dim, why, sizeof why) != 0) {
        program_error("%s", why);
        return EXIT_BAD_INPUT;
    }
    if (a.sweep && run_check_sweep(&a, &spec, "batch") != 0) return EXIT_BAD_INPUT;
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
