/* 03_simple_mlp: the GeGLU MLP of part 2 of "Profiling in PyTorch", as PyTorch eager runs it.
 *
 * The question: where do the GPU's microseconds of one MLP forward go, op by op, and how far is
 * eager from the least time the hardware allows?
 *
 *   make 03_simple_mlp && ./run                   the article's shape: 64 x 128 tokens, 768 -> 3072
 *   ./run 03_simple_mlp --batch 1 --seq 8         a decode step: overhead-bound
 *   ./run 03_simple_mlp --warmup 5                warm first step
 *   ./run 03_simple_mlp --sweep                   1..32768 tokens: CPU dispatch vs GPU time
 *
 *   gate = x Wg^T,  up = x Wu^T,  act = gelu_tanh(gate),  prod = act * up,  y = prod Wd^T
 *
 * x is [batch * seq, dim]; Wg, Wu are [hidden, dim] and Wd is [dim, hidden] (nn.Linear, no
 * bias); bf16 by default, fp32 accumulation. The report: per forward (steps, back to back, as a
 * CUDA graph, verdict, throughput), per op (each of the 5 timed alone), the floor and what the
 * intermediates cost in HBM traffic; the trace pass adds each kernel under the op that launched it.
 *
 * Read it from the forward just below, then main() at the bottom: the flags, the model, one run
 * (time, report, check, trace). The GEMM helper: common/blas.c; the ranges: common/prof.c; our
 * GELU and multiply kernels: kernels.cu; the model's buffers and the check: mlp.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compare.h"
#include "mlp.h"
#include "mlp_shape.h"
#include "prof.h"
#include "program.h"
#include "report.h"
#include "run.h"

/* ---- the forward (04_fused_mlp links it too: its ladder starts here) ------------------------ */

/* The handle, then one plan per GEMM shape: descriptors, the heuristic query that picks the
 * kernel, a workspace. Once: every later call goes straight to the launch. (cublasGemmEx, the
 * classic API, makes that choice inside every call, and at a few tokens that CPU time is most
 * of the forward.) */
static void plan_gemms(mlp_t *m)
{
    size_t M = m->tokens, D = m->dim, H = m->hidden;
    CUBLASLT_CHECK(cublasLtCreate(&m->lt));
    /* w_kn = 0: y[M, N] = x[M, K] . W^T with W stored [N, K], read through the transpose flag
     * instead of a transposed copy (02_linear shows why that costs nothing) */
    if (lt_plan_init(&m->plan_in, m->lt, m->dtype, 0, M, H, D, 1, CUBLASLT_EPILOGUE_DEFAULT, NULL) != 0 ||
        lt_plan_init(&m->plan_down, m->lt, m->dtype, 0, M, D, H, 1, CUBLASLT_EPILOGUE_DEFAULT, NULL) != 0)
        exit(EXIT_BAD_INPUT);
    m->planned = 1;
}

/* One op of the five; each result goes to device memory and the next op reads it back. */
void mlp_run_op(mlp_t *m, mlp_op op)
{
    size_t n = m->tokens * m->hidden;
    if (op != MLP_GELU && op != MLP_MUL && !m->planned) plan_gemms(m);
    switch (op) {
    case MLP_GATE: lt_plan_run(&m->plan_in, 1.0f, m->x, m->wg, 0.0f, m->gate, m->gate, m->stream); break;
    case MLP_UP: lt_plan_run(&m->plan_in, 1.0f, m->x, m->wu, 0.0f, m->up, m->up, m->stream); break;
    case MLP_GELU:
        launch_gelu_tanh(m->dtype, m->gate, m->act, n, m->stream);
        LAUNCH_CHECK();
        break;
    case MLP_MUL:
        launch_mul(m->dtype, m->act, m->up, m->prod, n, m->stream);
        LAUNCH_CHECK();
        break;
    default: lt_plan_run(&m->plan_down, 1.0f, m->prod, m->wd, 0.0f, m->y, m->y, m->stream); break;
    }
}

/* PyTorch eager, op by op, each op in its own range, as the profiler shows aten ops. */
void mlp_forward_eager(mlp_t *m)
{
    prof_range_push("mlp_fwd");
    for (int op = 0; op < MLP_N_OPS; op++) {
        prof_range_push(mlp_op_names[op]);
        mlp_run_op(m, (mlp_op)op);
        prof_range_pop();
    }
    prof_range_pop();
}

/* ---- the flags ----------------------------------------------------------------------------- */

static const char *const names[] = {"eager", NULL};
static const char *const helps[] = {"3 cuBLAS GEMMs + our GELU and multiply kernels, intermediates through HBM (5 "
                                    "kernels)"};
static const stage_opt opts[MLP_N_SHAPE_OPTS] = {MLP_SHAPE_OPTS(mlp_shape, )};
static const stage_spec spec = {"03_simple_mlp", "GeGLU MLP y = (gelu_tanh(x Wg^T) * x Wu^T) Wd^T, PyTorch eager's 5 "
                                "kernels (part 2 of the articles)", names, helps, opts, MLP_N_SHAPE_OPTS};

/* ---- the report's lines of its own --------------------------------------------------------- */

/* An op of the five, alone, for the per-op report (each timed in a gated step of its own). */
typedef struct {
    mlp_t *m;
    mlp_op op;
} op_call;

static void run_one_op(void *ctx)
{
    const op_call *c = ctx;
    mlp_run_op(c->m, c->op);
}

/* The five ops as the per-op report and the trace's per-kernel table name and rate them:
 * "8192.768.3072" (M.K.N) for a GEMM, "100.7 MB" moved for an elementwise kernel. */
static void describe_ops(mlp_t *m, op_call *calls, run_op *ops)
{
    for (int op = 0; op < MLP_N_OPS; op++) {
        calls[op] = (op_call){m, (mlp_op)op};
        ops[op] = (run_op){mlp_op_names[op], mlp_op_flops(m, (mlp_op)op), mlp_op_bytes(m, (mlp_op)op), "", run_one_op,
                           &calls[op]};
        if (op == MLP_GELU || op == MLP_MUL)
            snprintf(ops[op].problem, sizeof ops[op].problem, "%.1f MB", mlp_op_bytes(m, (mlp_op)op) / 1e6);
        else if (op == MLP_DOWN) snprintf(ops[op].problem, sizeof ops[op].problem, "%zu.%zu.%zu", m->tokens, m->hidden, m->dim);
        else snprintf(ops[op].problem, sizeof ops[op].problem, "%zu.%zu.%zu", m->tokens, m->dim, m->hidden);
    }
}

/* What eager's four [M, hidden] intermediates cost in HBM traffic. */
static void report_intermediates(const mlp_t *m, const run_result *r, const gpu_info *g)
{
    if (g->copy_gbps <= 0) return;
    double one = 2.0 * mlp_elem_bytes(m) * (double)m->tokens * (double)m->hidden; /* write + read */
    static const char *const trips[4][2] = {{"gate", "gate_proj -> gelu"}, {"up", "up_proj -> mul"},
                                            {"act", "gelu -> mul"}, {"prod", "mul -> down_proj"}};
    printf("intermediates [%zu, %zu] %s, %.1f MB each, written once and read back once:\n", m->tokens,
           m->hidden, dtype_name(m->dtype), one / 2e6);
    for (int i = 0; i < 4; i++)
        printf("  %-4s %-18s %7.1f MB  %7.2f us at the copy ceiling\n", trips[i][0], trips[i][1], one / 1e6,
               one / (g->copy_gbps * 1e9) * 1e6);
    printf("  all four: %.1f MB, %.2f us at the copy ceiling (%.0f%% of the eager forward); the GELU and"
           " multiply kernels move %.1f MB of it with no arithmetic to hide behind\n",
           4.0 * one / 1e6, 4.0 * one / (g->copy_gbps * 1e9) * 1e6,
           100.0 * 4.0 * one / (g->copy_gbps * 1e9) * 1e6 / r->step_us,
           (mlp_op_bytes(m, MLP_GELU) + mlp_op_bytes(m, MLP_MUL)) / 1e6);
}

/* ---- one run: time, report, check, trace ----------------------------------------------------- */

static void forward_eager(void *model) { mlp_forward_eager(model); }

static run_result run_eager(mlp_t *m, const common_args *a, const gpu_info *g)
{
    run_result r = {0};
    char tag[200];
    mlp_tag(m, a, tag, sizeof tag);
    snprintf(tag + strlen(tag), sizeof tag - strlen(tag), "_%s", names[0]);
    op_call calls[MLP_N_OPS];
    run_op ops[MLP_N_OPS];
    describe_ops(m, calls, ops);

    prof_run steps; /* the schedule: --wait, --warmup-steps, --active steps around one forward each */
    const run_kernel_table table = {ops, MLP_N_OPS, a->dtype};
    if (run_steps(&steps, a, g, tag, forward_eager, m, m->stream, &table)) /* the trace pass records only */
        return r;
    printf("\n== %s: %s\n", tag, helps[0]);
    mlp_describe(m);
    printf("launches per forward: cublasLtMatmul x3 (2 plans, made by the first forward) -> 3 GEMM kernels "
           "(gate_proj, up_proj, down_proj); launch_gelu_tanh -> gelu_tanh_<dtype>; launch_mul -> mul_<dtype>\n");
    run_time(&r, &steps, forward_eager, m, m->stream, 1, MLP_N_OPS);
    report_verdict(r.cpu_us, r.step_us);
    report_throughput(g, a->dtype, mlp_flops(m), r.step_us);
    run_report_ops(ops, MLP_N_OPS, m->stream, g, a->dtype, r.step_us);
    run_report_floor(run_floor_us(g, a->dtype, mlp_flops(m), mlp_min_bytes(m)), mlp_flops(m), mlp_min_bytes(m), &r);
    report_intermediates(m, &r, g);
    if (a->check) {
        r.err = mlp_check(m, forward_eager, m);
        report_check(r.err, mlp_tolerance(a->dtype));
    }
    dump_array arrays[5];
    run_finish(&steps, a, tag, forward_eager, m, m->stream, &r, arrays, mlp_arrays(m, arrays), names[0]);
    return r;
}

/* ---- --sweep: 1..32768 tokens: where CPU dispatch and GPU time cross ---------------------- */

static int sweep(const common_args *a, const gpu_info *g, const mlp_shape *s)
{
    char stem[200], title[200];
    snprintf(stem, sizeof stem, "sweep_%lldx%lld_%s_%s", s->dim, s->hidden, dtype_name(a->dtype), names[0]);
    snprintf(title, sizeof title, "GeGLU MLP %lld -> %lld, %s, %s", s->dim, s->hidden, names[0], dtype_name(a->dtype));
    sweep_table t;
    if (sweep_open(&t, a, g, stem, title, "tokens", mlp_tolerance(a->dtype)) != 0) return 1;
    for (size_t tokens = 1; tokens <= 32768; tokens *= 2) {
        mlp_t m;
        mlp_setup_shape(&m, a, s, tokens);
        const sweep_point p = sweep_measure(a, forward_eager, &m, m.stream);
        sweep_row(&t, tokens, &p, mlp_flops(&m), a->check ? mlp_check(&m, forward_eager, &m) : 0.0);
        mlp_free(&m);
    }
    return sweep_close(&t, a->plot, "tokens_sweep.gp");
}

/* ---- main: the program, in the order it runs -------------------------------------------- */

int main(int argc, char **argv)
{
    /* The flags: the shared ones (common/cli.h) and the shape. Every check that needs no GPU comes
     * first, --help's too: a bad line is refused before anything is made. */
    mlp_shape s = mlp_default_shape;
    common_args a;
    const int help = run_parse(argc, argv, &spec, &a, &s);
    char why[512];
    if (run_check_outputs(&a) != 0) return EXIT_BAD_INPUT;
    if (mlp_shape_validate(&s, &a, why, sizeof why) != 0) {
        program_error("%s", why);
        return EXIT_BAD_INPUT;
    }
    if (a.sweep && run_check_sweep(&a, &spec, "tokens") != 0) return EXIT_BAD_INPUT;
    if (help) return run_help(&spec, &mlp_default_shape);

    gpu_info g;
    run_open(&a, &g, spec.stage);
    if (a.sweep) return sweep(&a, &g, &s) ? EXIT_BAD_INPUT : 0;

    /* The model: x and the weights, random; the intermediates; y (mlp.c). */
    mlp_t m;
    mlp_setup_shape(&m, &a, &s, mlp_shape_tokens(&s));
    const run_result r = run_eager(&m, &a, &g);
    mlp_free(&m);
    if (prof_is_trace_pass()) return 0;
    run_trace_pass(&a, &spec, &s, 0xF /* the shape */, names[0], argv[0]);
    printf("\noutputs: %s/\n", a.out_dir);
    return a.check && !(r.err <= mlp_tolerance(a.dtype)) ? EXIT_BAD_INPUT : 0;
}
