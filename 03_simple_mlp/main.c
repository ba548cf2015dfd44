/* 03_simple_mlp: the GeGLU MLP of part 2 of "Profiling in PyTorch", as PyTorch eager runs it.
 *
 *   make 03_simple_mlp && ./run                   the article's shape: 64 x 128 tokens, 768 -> 3072
 *   ./run 03_simple_mlp --batch 1 --seq 8         a decode step: overhead-bound
 *   ./run 03_simple_mlp --warmup 5                warm first step
 *   ./run 03_simple_mlp --sweep                   1..32768 tokens: CPU dispatch vs GPU time
 *
 *   gate = x Wg^T,  up = x Wu^T,  h = gelu_tanh(gate),  m = h * up,  y = m Wd^T
 *
 * x is [batch * seq, dim]; Wg, Wu are [hidden, dim] and Wd is [dim, hidden] (nn.Linear, no bias);
 * bf16 by default, fp32 accumulation. One variant:
 *   eager  5 kernels per forward, each result through device memory: 3 cuBLAS GEMMs (cuBLASLt,
 *          one cached plan per shape, as PyTorch caches them), our GELU kernel and our multiply
 *          kernel (kernels.cu); the model and the forward are in mlp.c
 *
 * The report: per forward (steps, back to back, verdict, throughput), per op (each of the 5 timed
 * alone), the floor (the least time the GPU's measured ceilings allow) and what the intermediates
 * cost in HBM traffic; the trace pass adds the per-kernel table with cuBLAS's kernel names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "dump.h"
#include "gpu.h"
#include "mlp.h"
#include "out.h"
#include "plot.h"
#include "prof.h"
#include "report.h"
#include "trace.h"

static const char *const variants[] = {"eager", NULL};
static const char *const variant_help[] = {
    "3 cuBLAS GEMMs + our GELU and multiply kernels, intermediates through HBM (5 kernels)",
};

static void forward(void *ctx) { mlp_forward_eager(ctx); }

/* ---- the report's pieces ------------------------------------------------------------------ */

/* "8192.768.3072" (M.K.N) for a GEMM, "100.7 MB" moved for an elementwise kernel. */
static void problem_of(const mlp_t *m, mlp_op op, char *buf, size_t len)
{
    if (op == MLP_GELU || op == MLP_MUL)
        snprintf(buf, len, "%.1f MB", mlp_op_bytes(m, op) / 1e6);
    else if (op == MLP_DOWN)
        snprintf(buf, len, "%zu.%zu.%zu", m->tokens, m->hidden, m->dim);
    else
        snprintf(buf, len, "%zu.%zu.%zu", m->tokens, m->dim, m->hidden);
}

/* "612.3 TFLOP/s  77%" for a GEMM against the GEMM ceiling, "3905 GB/s  92%" for the rest
 * against the copy ceiling; "-" where this GPU has no measured ceiling. */
static void rate_of(const mlp_t *m, const gpu_info *g, mlp_op op, double us, char *buf, size_t len)
{
    if (op == MLP_GELU || op == MLP_MUL) {
        double gbps = mlp_op_bytes(m, op) / (us * 1e-6) / 1e9;
        if (g->copy_gbps > 0) snprintf(buf, len, "%7.0f GB/s %4.0f%%", gbps, 100.0 * gbps / g->copy_gbps);
        else snprintf(buf, len, "%7.0f GB/s     -", gbps);
    } else {
        double tflops = mlp_op_flops(m, op) / (us * 1e-6) / 1e12, ceiling = gpu_gemm_ceiling(g, m->dtype);
        if (ceiling > 0) snprintf(buf, len, "%5.1f TFLOP/s %4.0f%%", tflops, 100.0 * tflops / ceiling);
        else snprintf(buf, len, "%5.1f TFLOP/s     -", tflops);
    }
}

typedef struct {
    mlp_t *m;
    mlp_op op;
} op_ctx;

static void run_op(void *ctx)
{
    const op_ctx *c = ctx;
    mlp_run_op(c->m, c->op);
}

/* Each op alone, in a gated step (the GPU starts it only once it is fully issued, so the time
 * is the op's own): 3 warm-up runs, then the median of 20. The CPU column is what issuing the op
 * costs: a cuBLASLt call with its plan made, or a plain kernel launch. */
static void time_ops(mlp_t *m, double cpu_us[MLP_N_OPS], double gpu_us[MLP_N_OPS])
{
    const int tool = prof_under_tool(); /* a sanitizer: one step, nothing to time */
    const schedule_t sched = {.wait = 0, .warmup_steps = tool ? 0 : 3, .active = tool ? 1 : 20, .warmup = 0};
    for (int op = 0; op < MLP_N_OPS; op++) {
        char label[64];
        snprintf(label, sizeof label, "op_timing:%s", mlp_op_names[op]);
        prof_range_push(label);
        prof_run run;
        op_ctx c = {m, (mlp_op)op};
        prof_run_schedule(&run, &sched, m->stream, run_op, &c);
        cpu_us[op] = prof_active_stats(&run, 0).median;
        gpu_us[op] = prof_active_stats(&run, 1).median;
        prof_free(&run);
        prof_range_pop();
    }
}

static void report_ops(mlp_t *m, const gpu_info *g, double forward_gpu_us)
{
    double cpu[MLP_N_OPS], gpu[MLP_N_OPS], sum = 0.0;
    time_ops(m, cpu, gpu);
    for (int op = 0; op < MLP_N_OPS; op++) sum += gpu[op];
    printf("\nper op (each alone in a gated step: median of 20 after 3 warm-ups; CUDA events add about a microsecond):\n");
    printf("%-10s %-16s %10s %10s %-22s %6s\n", "op", "M.K.N | bytes", "cpu_us", "gpu_us", "rate (% of ceiling)", "share");
    for (int op = 0; op < MLP_N_OPS; op++) {
        char prob[48], rate[48];
        problem_of(m, (mlp_op)op, prob, sizeof prob);
        rate_of(m, g, (mlp_op)op, gpu[op], rate, sizeof rate);
        printf("%-10s %-16s %10.2f %10.2f %-22s %5.1f%%\n", mlp_op_names[op], prob, cpu[op], gpu[op], rate,
               100.0 * gpu[op] / sum);
    }
    printf("sum of the 5 ops: %.2f us (the forward's steps: %.2f us)\n", sum, forward_gpu_us);
    char gate_prob[48], down_prob[48];
    problem_of(m, MLP_GATE, gate_prob, sizeof gate_prob);
    problem_of(m, MLP_DOWN, down_prob, sizeof down_prob);
    printf("down_proj: the same %.2f GFLOP as gate_proj, shaped %s instead of %s: %.2f us vs %.2f us;"
           " cuBLAS picks a kernel per shape (names: the trace pass's kernel table)\n",
           mlp_op_flops(m, MLP_DOWN) / 1e9, down_prob, gate_prob, gpu[MLP_DOWN], gpu[MLP_GATE]);
}

/* The least time any forward could take on this GPU: all GEMM FLOPs at the GEMM ceiling, or the
 * unavoidable bytes (x, weights, y) at the copy ceiling, whichever is longer. Then what eager
 * spends on top: the four [M, hidden] intermediates, each written once and read back once. */
static void report_floor(const mlp_t *m, const gpu_info *g, double gpu_us, double b2b_us)
{
    double flops = mlp_flops(m), bytes = mlp_min_bytes(m), ceiling = gpu_gemm_ceiling(g, m->dtype);
    printf("\nfloor: ");
    if (ceiling <= 0 || g->copy_gbps <= 0) {
        printf("no measured %s ceilings for %s, no floor\n", dtype_name(m->dtype), g->prop.name);
        return;
    }
    double t_flops = flops / (ceiling * 1e12) * 1e6, t_bytes = bytes / (g->copy_gbps * 1e9) * 1e6;
    double floor_us = t_flops > t_bytes ? t_flops : t_bytes;
    printf("%.2f GFLOP at %.0f TFLOP/s = %.2f us; x, weights and y once: %.2f MB at %.0f GB/s = %.2f us"
           " -> %.2f us (%s-bound)\n", flops / 1e9, ceiling, t_flops, bytes / 1e6, g->copy_gbps, t_bytes,
           floor_us, t_flops > t_bytes ? "compute" : "memory");
    printf("eager: %.2f us per forward (step median) = %.2fx the floor, %.2f us above it;"
           " back to back %.2f us = %.2fx\n", gpu_us, gpu_us / floor_us, gpu_us - floor_us, b2b_us,
           b2b_us / floor_us);

    double one = 2.0 * mlp_elem_bytes(m) * (double)m->tokens * (double)m->hidden; /* write + read */
    static const char *const trips[4][2] = {{"gate", "gate_proj -> gelu"}, {"up", "up_proj -> mul"},
                                            {"h", "gelu -> mul"}, {"m", "mul -> down_proj"}};
    printf("intermediates [%zu, %zu] %s, %.1f MB each, written once and read back once:\n", m->tokens,
           m->hidden, dtype_name(m->dtype), one / 2e6);
    for (int i = 0; i < 4; i++)
        printf("  %-4s %-18s %7.1f MB  %7.2f us at the copy ceiling\n", trips[i][0], trips[i][1],
               one / 1e6, one / (g->copy_gbps * 1e9) * 1e6);
    printf("  all four: %.1f MB, %.2f us at the copy ceiling (%.0f%% of the eager forward); the GELU and"
           " multiply kernels move %.1f MB of it with no arithmetic to hide behind\n",
           4.0 * one / 1e6, 4.0 * one / (g->copy_gbps * 1e9) * 1e6,
           100.0 * 4.0 * one / (g->copy_gbps * 1e9) * 1e6 / gpu_us,
           (mlp_op_bytes(m, MLP_GELU) + mlp_op_bytes(m, MLP_MUL)) / 1e6);
}

/* In the trace pass, after trace_write: what each kernel cost, from CUPTI's records. The
 * trace has no per-range kernel names, so a GEMM kernel is matched to its op by its call count:
 * gate_proj and up_proj share a shape, hence a kernel (2 calls per forward); down_proj has 1. */
static void report_trace_kernels(const mlp_t *m, const gpu_info *g, const schedule_t *sched)
{
    int active = sched->active, first = sched->wait + sched->warmup_steps;
    char step[32];
    snprintf(step, sizeof step, "ProfileStep#%d", first);
    int kernels = 0, memcpys = 0, memsets = 0;
    if (trace_gpu_ops_in_range(step, &kernels, &memcpys, &memsets) >= 0)
        printf("trace: %s launched %d kernels, %d memcpys, %d memsets (eager: 5 kernels)\n", step, kernels,
               memcpys, memsets);

    trace_kernel_row rows[32];
    int n = trace_kernel_rows(rows, 32);
    if (n > 32) n = 32;
    double total = 0.0;
    for (int i = 0; i < n; i++) total += rows[i].total_us;
    char gelu_name[32], mul_name[32];
    snprintf(gelu_name, sizeof gelu_name, "gelu_tanh_%s", dtype_name(m->dtype));
    snprintf(mul_name, sizeof mul_name, "mul_%s", dtype_name(m->dtype));

    printf("\nper kernel (trace, %d active steps):\n", active);
    printf("%-19s %-52s %-16s %5s %9s %-22s %6s\n", "op", "kernel", "M.K.N | bytes", "calls", "median_us",
           "rate (% of ceiling)", "share");
    for (int i = 0; i < n; i++) {
        const trace_kernel_row *r = &rows[i];
        const char *op_label = "?";
        int op = -1;
        if (strcmp(r->name, gelu_name) == 0) op = MLP_GELU, op_label = "gelu";
        else if (strcmp(r->name, mul_name) == 0) op = MLP_MUL, op_label = "mul";
        else if (r->calls == 2 * active) op = MLP_GATE, op_label = "gate_proj, up_proj";
        else if (r->calls == active) op = MLP_DOWN, op_label = "down_proj";
        else if (r->calls == 3 * active) op = MLP_GATE, op_label = "all three GEMMs";
        char prob[48] = "-", rate[48] = "-";
        if (op >= 0) {
            problem_of(m, (mlp_op)op, prob, sizeof prob);
            rate_of(m, g, (mlp_op)op, r->median_us, rate, sizeof rate);
        }
        printf("%-19s %-52.52s %-16s %5d %9.2f %-22s %5.1f%%\n", op_label, r->name, prob, r->calls,
               r->median_us, rate, total > 0 ? 100.0 * r->total_us / total : 0.0);
    }
    printf("kernel time per forward: %.2f us\n", total / active);
}

/* --dump DIR: the inputs, the weights and the output as .npy files, for compare/mlp.py --load. */
static void dump_tensors(const mlp_t *m, const char *dir)
{
    const struct {
        const char *name;
        const void *dev;
        size_t rows, cols;
    } t[] = {{"x", m->x, m->tokens, m->dim}, {"wg", m->wg, m->hidden, m->dim}, {"wu", m->wu, m->hidden, m->dim},
             {"wd", m->wd, m->dim, m->hidden}, {"y", m->y, m->tokens, m->dim}};
    for (int i = 0; i < 5; i++) {
        size_t shape[2] = {t[i].rows, t[i].cols};
        if (dump_device_array(dir, t[i].name, m->dtype, shape, 2, t[i].dev) != 0) exit(EXIT_BAD_INPUT);
    }
    printf("dump: x, wg, wu, wd and y written to %s/ as .npy\n", dir);
}

/* ---- one run of the schedule ------------------------------------------------------------- */

typedef struct {
    stats_t cpu, gpu;
    double back_to_back_us, graph_us, err;
} run_result;

static run_result run_variant(mlp_t *m, const char *tag, const common_args *a, const gpu_info *g,
                              int argc, char **argv)
{
    run_result res = {0};
    char base[700];
    snprintf(base, sizeof base, "%s/%s", a->out_dir, tag);

    prof_run run;
    prof_run_schedule(&run, &a->sched, m->stream, forward, m);

    if (run.traced) { /* the trace pass only records; the timed pass reports */
        if (trace_write(base, 12) == 0) {
            printf("trace: wrote %s.json and %s.txt\n", base, base);
            report_trace_kernels(m, g, &a->sched);
        }
        prof_free(&run);
        return res;
    }

    printf("\n== %s: %s\n", tag, variant_help[0]);
    printf("shapes: x [%zu, %zu]; Wg, Wu [%zu, %zu]; Wd [%zu, %zu]; gate, up, h, m [%zu, %zu]; y [%zu, %zu]\n",
           m->tokens, m->dim, m->hidden, m->dim, m->dim, m->hidden, m->tokens, m->hidden, m->tokens, m->dim);
    printf("launches per step: cublasLtMatmul x3 (2 plans, made by the first forward) -> 3 GEMM kernels"
           " (gate_proj, up_proj, down_proj); launch_gelu_tanh -> gelu_tanh_%s; launch_mul -> mul_%s\n",
           dtype_name(m->dtype), dtype_name(m->dtype));
    report_steps(&run);
    res.cpu = prof_active_stats(&run, 0);
    res.gpu = prof_active_stats(&run, 1);
    res.back_to_back_us = prof_back_to_back_us(forward, m, m->stream, 200, 5);
    printf("back to back: %.2f us per forward (200 forwards issued without waiting, median of 5)\n",
           res.back_to_back_us);
    res.graph_us = prof_graph_back_to_back_us(forward, m, m->stream, 200, 5);
    printf("as a CUDA graph (the same %d launches captured once, replayed with cudaGraphLaunch): %.2f us per "
           "forward back to back\n", MLP_N_OPS, res.graph_us);
    report_verdict(res.cpu.median, res.gpu.median);
    report_throughput(g, m->dtype, mlp_flops(m), res.gpu.median);
    report_ops(m, g, res.gpu.median);
    report_floor(m, g, res.gpu.median, res.back_to_back_us);
    if (a->check) {
        res.err = mlp_check(m, forward, m);
        printf("\n");
        report_check(res.err, mlp_tolerance(m->dtype));
    }
    if (a->dump_dir[0]) dump_tensors(m, a->dump_dir);

    report_step_files(&run, base, tag, a->plot);
    prof_free(&run);
    if (a->trace) prof_spawn_trace_pass(argc, argv, variants[0]);
    return res;
}

/* ---- --sweep: 1..32768 tokens, where CPU dispatch and GPU time cross ----------------------- */

static int run_sweep(const common_args *a, size_t dim, size_t hidden, const gpu_info *g)
{
    char csv[600], png[600], title[400], tmp[700];
    snprintf(csv, sizeof csv, "%s/sweep_%zux%zu_%s_eager.csv", a->out_dir, dim, hidden, dtype_name(a->dtype));
    snprintf(png, sizeof png, "%s/sweep_%zux%zu_%s_eager.png", a->out_dir, dim, hidden, dtype_name(a->dtype));
    snprintf(title, sizeof title, "GeGLU MLP %zu -> %zu, eager, %s, %s", dim, hidden, dtype_name(a->dtype),
             g->prop.name);
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (!f) return 1;
    fprintf(f, "tokens,cpu_us,gpu_us,back_to_back_us,tflops,rel_err\n");
    printf("%7s %10s %10s %14s %9s %10s\n", "tokens", "cpu_us", "gpu_us", "back2back_us", "TFLOP/s", "rel_err");
    schedule_t sched = {.wait = 0, .warmup_steps = 0, .active = a->sched.active < 10 ? 10 : a->sched.active, .warmup = 3};
    int failed = 0;
    for (size_t tokens = 1; tokens <= 32768; tokens *= 2) {
        mlp_t m;
        mlp_setup(&m, a->dtype, tokens, dim, hidden, a->seed);
        prof_run run;
        prof_run_schedule(&run, &sched, m.stream, forward, &m);
        double cpu = prof_active_stats(&run, 0).median, gpu = prof_active_stats(&run, 1).median;
        double b2b = prof_back_to_back_us(forward, &m, m.stream, tokens <= 1024 ? 100 : 10, 3);
        double tflops = mlp_flops(&m) / (gpu * 1e-6) / 1e12;
        double err = a->check ? mlp_check(&m, forward, &m) : 0.0;
        failed |= !(err <= mlp_tolerance(a->dtype));
        printf("%7zu %10.2f %10.2f %14.2f %9.1f %10.2e\n", tokens, cpu, gpu, b2b, tflops, err);
        fprintf(f, "%zu,%.3f,%.3f,%.3f,%.2f,%.3e\n", tokens, cpu, gpu, b2b, tflops, err);
        prof_free(&run);
        mlp_free(&m);
    }
    if (out_commit(f, tmp, csv) != 0) return 1;
    printf("wrote %s\n", csv);
    if (a->plot && plot_run("tokens_sweep.gp", csv, png, title) == 0) printf("wrote %s\n", png);
    if (failed) printf("check: FAILED at one or more token counts (tolerance %.1e)\n", mlp_tolerance(a->dtype));
    return failed;
}

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    long long batch = 64, seq = 128, dim = 768, hidden = 3072;
    const stage_opt opts[] = {
        {"batch", &batch, 1, 1 << 20, "sequences per forward"},
        {"seq", &seq, 1, 1 << 20, "tokens per sequence (x has batch * seq rows)"},
        {"dim", &dim, 1, 1 << 16, "model width: x and y are [batch * seq, dim]"},
        {"hidden", &hidden, 1, 1 << 18, "MLP width: gate, up, h and m are [batch * seq, hidden]"},
    };
    const stage_spec spec = {"03_simple_mlp",
                             "GeGLU MLP y = (gelu_tanh(x Wg^T) * x Wu^T) Wd^T, PyTorch eager's 5 kernels (part 2 of the articles)",
                             variants, variant_help, opts, 4};
    common_args a;
    cli_parse(argc, argv, &spec, &a);
    if (!prof_trace_pass_open()) return 0; /* trace pass, and CUPTI unavailable: said why */
    size_t tokens = cli_mul((size_t)batch, (size_t)seq, "batch x seq");

    gpu_info g;
    if (out_mkdirs(a.out_dir) != 0) return EXIT_BAD_INPUT; /* every input checked before the GPU */
    gpu_require(&g, spec.stage);
    if (!prof_is_trace_pass()) gpu_print(&g);

    if (a.sweep) return run_sweep(&a, (size_t)dim, (size_t)hidden, &g) ? EXIT_BAD_INPUT : 0;

    mlp_t m;
    mlp_setup(&m, a.dtype, tokens, (size_t)dim, (size_t)hidden, a.seed);
    char tag[160];
    snprintf(tag, sizeof tag, "%lldx%lld_%lldx%lld_%s_%s_eager", batch, seq, dim, hidden, dtype_name(a.dtype),
             a.sched.warmup > 0 ? "warm" : "cold");
    run_result r = run_variant(&m, tag, &a, &g, argc, argv);
    mlp_free(&m);
    if (prof_is_trace_pass()) return 0;
    printf("\noutputs: %s/\n", a.out_dir);
    return a.check && !(r.err <= mlp_tolerance(a.dtype)) ? EXIT_BAD_INPUT : 0;
}
