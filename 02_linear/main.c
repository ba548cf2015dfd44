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
 * Buffers, the check, --dump and the report's extras: model.c. The run, the report and the
 * trace: common/stage.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "model.h"
#include "prof.h"
#include "program.h"

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

static const stage_variant variants[] = {
    {"epilogue", "one cuBLASLt matmul with the bias in its epilogue (1 kernel): eager nn.Linear",
     "cuBLASLt plan (cublasLtMatmul, op T on W, epilogue BIAS) -> 1 GEMM kernel that adds b as it writes y",
     1, forward_epilogue, .traffic = linear_traffic_epilogue},
    {"view", "GEMM reading W^T as a view (op T) + our bias_add kernel (2 kernels)",
     "cublasGemmEx (op T on W: the view) -> 1 GEMM kernel; launch_bias_add -> 1 bias_add kernel", 2,
     forward_view, .traffic = linear_traffic_view},
    {"addmm", "our bias_broadcast into y + GEMM with beta = 1 (2 kernels): addmm",
     "launch_bias_broadcast b -> every row of y (1 kernel); cublasGemmEx (beta = 1) -> 1 GEMM kernel", 2,
     forward_addmm, .traffic = linear_traffic_addmm},
    {"transpose_copy", "our transpose kernel copies W^T + GEMM (op N) + bias_add (3 kernels)",
     "launch_transpose W -> W^T (1 kernel); cublasGemmEx (op N on the copy) -> 1 GEMM kernel; "
     "launch_bias_add -> 1 bias_add kernel", 3, forward_transpose_copy, .traffic = linear_traffic_transpose_copy},
};
static const stage_reference references[] = {
    {"gemm alone (Lt plan)", "x W^T through a cuBLASLt plan, no epilogue", gemm_alone_lt},
    {"gemm alone (GemmEx)", "x W^T through cublasGemmEx, which plans on every call", gemm_alone_gemmex},
};

/* ---- main: the shape, and the variants handed to the driver --------------------------------- */

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

/* --explain-views prints the example and exits, on the CPU: a flag of a run given with it would
 * do nothing, so it is refused by name. */
static int explain_views(const void *flags, const common_args *a)
{
    const linear_flags *f = flags;
    if (!f->explain) return -1;
    const char *ignored = cli_given_name(a, ~0u);
    for (size_t i = 0; !ignored && i < sizeof opts / sizeof opts[0]; i++) /* --batch: the views have no rows of x */
        if ((a->given_own >> i & 1) && opts[i].offset == offsetof(linear_flags, batch)) ignored = opts[i].name;
    if (ignored) {
        program_error("--explain-views does not take --%s (it prints the 3x2 example and W^T's layout, then exits: "
                      "no run, no files)", ignored);
        return EXIT_BAD_INPUT;
    }
    linear_explain_views((size_t)f->in_dim, (size_t)f->out_dim);
    return 0;
}
static int validate(const void *flags, const common_args *a, char *why, size_t len)
{
    const linear_flags *f = flags;
    return linear_validate(a->dtype, (size_t)f->batch, (size_t)f->in_dim, (size_t)f->out_dim, why, len);
}
static size_t size_of(const void *flags) { return (size_t)((const linear_flags *)flags)->batch; }
static void *setup(const common_args *a, void *flags, size_t size)
{
    const linear_flags *f = flags;
    return linear_setup(a->dtype, size, (size_t)f->in_dim, (size_t)f->out_dim, a->seed);
}
static void sweep_names(const void *flags, const common_args *a, const char *variant, char *stem, char *title,
                        size_t len)
{
    const linear_flags *f = flags;
    snprintf(stem, len, "sweep_%lldx%lld_%s_%s", f->in_dim, f->out_dim, dtype_name(a->dtype), variant);
    snprintf(title, len, "Linear %lld -> %lld, %s, %s", f->in_dim, f->out_dim, variant, dtype_name(a->dtype));
}
static const stage_def stage_02 = {
    .name = "02_linear", .summary = "y = x W^T + b with W stored [out_dim, in_dim] (nn.Linear, part 2 of the articles)",
    .variants = variants, .n_variants = 4,
    .flags = {opts, 4, sizeof(linear_flags), &defaults},
    .model = {.validate = validate, .size = size_of, .setup = setup, .teardown = linear_free, .check = linear_check,
              .tolerance = dtype_tolerance, .flops = linear_flops, .min_bytes = linear_min_bytes,
              .stream = linear_stream, .tag = linear_tag, .arrays = linear_arrays, .describe = linear_describe,
              .report = linear_report},
    .references = references, .n_references = 2, .graph = 1, .kernel_table = 1,
    .sweep = {"batch", 1, 65536, "batch_crossover.gp", NULL, sweep_names},
    .no_gpu_action = explain_views,
};

int main(int argc, char **argv) { return stage_main(argc, argv, &stage_02); }
