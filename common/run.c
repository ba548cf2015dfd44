#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clocks.h"
#include "out.h"
#include "plot.h"
#include "profiler/trace.h"
#include "program.h"
#include "report.h"

enum { ROUNDS = 5 };

/* ---- before the GPU ---------------------------------------------------------------------- */

int run_parse(int argc, char **argv, const stage_spec *spec, common_args *a, void *values)
{
    prof_take_trace_pass_flag(&argc, argv);
    const int help = cli_parse(argc, argv, spec, a, values) == CLI_HELP;
    if (spec->all_is_default && !(a->given & GIVEN_VARIANT)) a->variant = spec->all_name;
    return help;
}

int run_help(const stage_spec *spec, const void *defaults)
{
    cli_print_help(spec, defaults);
    return 0;
}

void run_chosen(const common_args *a, const stage_spec *spec, int *first, int *last)
{
    int n = 0;
    while (spec->variants[n]) n++;
    *first = 0;
    *last = n - 1;
    for (int v = 0; v < n; v++)
        if (strcmp(spec->variants[v], a->variant) == 0) *first = *last = v;
}

int run_check_outputs(const common_args *a)
{
    if (out_dir_check("--out", a->out_dir) != 0) return -1;
    return a->dump_dir[0] && out_dir_check("--dump", a->dump_dir) != 0 ? -1 : 0;
}

int run_check_sweep(const common_args *a, const stage_spec *spec, const char *label)
{
    static const struct { unsigned bit; const char *flag; } shared[] = {
        {GIVEN_WAIT, "--wait"}, {GIVEN_WARMUP_STEPS, "--warmup-steps"}, {GIVEN_WARMUP, "--warmup"},
        {GIVEN_DUMP, "--dump"}, {GIVEN_HOLD, "--hold"},
    };
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
        if (a->given & shared[i].bit) {
            program_error("--sweep does not take %s (each size runs %s untraced, 3 warm-ups first)", shared[i].flag,
                          "--steps steps");
            return -1;
        }
    for (int i = 0; i < spec->n_opts; i++)
        if (spec->opts[i].swept && (a->given_own >> i & 1)) {
            program_error("--sweep does not take --%s: it sweeps %s itself", spec->opts[i].name, label);
            return -1;
        }
    return 0;
}

int run_check_applies(const common_args *a, const stage_spec *spec, int i, int applies, const char *applies_to)
{
    if (!(a->given_own >> i & 1) || applies) return 0;
    program_error("--%s does not apply to --variant %s (it applies to %s)", spec->opts[i].name, a->variant,
                  applies_to);
    return -1;
}

/* ---- the GPU ------------------------------------------------------------------------------- */

void run_open(const common_args *a, gpu_info *g, const char *stage)
{
    if (!prof_trace_pass_open()) exit(0); /* the trace pass, and CUPTI unavailable: it said why */
    trace_set_api_filter(a->trace_api_all);
    gpu_require(g, stage);
    if (out_mkdirs(a->out_dir) != 0) exit(EXIT_BAD_INPUT);
    if (!prof_is_trace_pass()) gpu_print(g);
}

/* ---- one variant --------------------------------------------------------------------------- */

int run_batch_for(double us)
{
    double n = 50000.0 / (us > 1 ? us : 1);
    return n < 10 ? 10 : n > 200 ? 200 : (int)n;
}

double run_floor_us(const gpu_info *g, dtype_t t, double flops, double min_bytes)
{
    double ceiling = gpu_gemm_ceiling(g, t);
    if (ceiling <= 0 || g->copy_gbps <= 0 || min_bytes <= 0) return 0;
    return fmax(flops / (ceiling * 1e12), min_bytes / (g->copy_gbps * 1e9)) * 1e6;
}

/* "612.3 TFLOP/s  77%" against the GEMM ceiling, or "3905 GB/s  92%" against the copy ceiling. */
static void rate_of(const gpu_info *g, dtype_t t, const run_op *op, double us, char *buf, size_t len)
{
    if (op->flops > 0) {
        double tflops = op->flops / (us * 1e-6) / 1e12, ceiling = gpu_gemm_ceiling(g, t);
        if (ceiling > 0) snprintf(buf, len, "%5.1f TFLOP/s %4.0f%%", tflops, 100.0 * tflops / ceiling);
        else snprintf(buf, len, "%5.1f TFLOP/s     -", tflops);
    } else {
        double gbps = op->bytes / (us * 1e-6) / 1e9;
        if (g->copy_gbps > 0) snprintf(buf, len, "%7.0f GB/s %4.0f%%", gbps, 100.0 * gbps / g->copy_gbps);
        else snprintf(buf, len, "%7.0f GB/s     -", gbps);
    }
}

/* In the trace pass: each kernel under the op (range) that launched it, from the trace model. */
static void report_kernels(const run_kernel_table *t, const gpu_info *g, const common_args *a)
{
    char step[32];
    int kernels, memcpys, memsets;
    snprintf(step, sizeof step, "ProfilerStep#%d", a->sched.wait + a->sched.warmup_steps);
    if (trace_gpu_ops_in_range(step, &kernels, &memcpys, &memsets) >= 0)
        printf("trace: %s ran %d kernels, %d memcpys, %d memsets\n", step, kernels, memcpys, memsets);
    trace_op_kernel rows[32];
    int n = trace_kernel_ops(rows, 32);
    if (n > 32) n = 32;
    double total = 0.0;
    for (int i = 0; i < n; i++) total += rows[i].total_us;
    printf("\nper kernel (trace, %d active steps; op = the range that launched it):\n", a->sched.active);
    printf("%-16s %-52s %-16s %5s %9s %-22s %6s\n", "op", "kernel", "M.K.N | bytes", "calls", "median_us",
           "rate (% of ceiling)", "share");
    for (int i = 0; i < n; i++) {
        const trace_op_kernel *r = &rows[i];
        char prob[48] = "-", rate[48] = "-";
        for (int op = 0; op < t->n_ops; op++)
            if (strcmp(r->range, t->ops[op].name) == 0) {
                snprintf(prob, sizeof prob, "%s", t->ops[op].problem);
                rate_of(g, t->dtype, &t->ops[op], r->median_us, rate, sizeof rate);
            }
        printf("%-16s %-52.52s %-16s %5d %9.2f %-22s %5.1f%%\n", r->range[0] ? r->range : "-", r->kernel, prob,
               r->calls, r->median_us, rate, total > 0 ? 100.0 * r->total_us / total : 0.0);
    }
    printf("kernel time per forward: %.2f us\n", total / a->sched.active);
}

int run_steps(prof_run *steps, const common_args *a, const gpu_info *g, const char *tag, run_forward fn, void *model,
              cudaStream_t stream, const run_kernel_table *table)
{
    prof_run_schedule(steps, &a->sched, stream, fn, model);
    if (!steps->traced) return 0;
    char base[800];
    snprintf(base, sizeof base, "%s/%s", a->out_dir, tag);
    if (trace_write(base, 12) == 0) {
        printf("trace: wrote %s.json and %s.txt\n", base, base);
        if (table) report_kernels(table, g, a);
    }
    prof_free(steps);
    return 1;
}

void run_time(run_result *r, const prof_run *steps, run_forward fn, void *model, cudaStream_t stream, int graph,
              int kernels)
{
    report_steps(steps);
    r->ran = 1;
    r->cpu_us = prof_active_stats(steps, 0).median;
    r->step_us = prof_active_stats(steps, 1).median;
    r->first_cpu_us = steps->cpu_us[0];
    const int n = run_batch_for(r->step_us);
    clocks_summary_t clk;
    r->fwd_us = prof_back_to_back_clocked_us(fn, model, stream, n, ROUNDS, &clk);
    r->sm_mhz = clk.samples ? clk.sm_mhz_median : NAN;
    r->power_w = clk.samples ? clk.power_w_median : NAN;
    char line[256];
    clocks_format(&clk, line, sizeof line);
    printf("back to back: %.2f us per forward (%d forwards issued without waiting, median of %d)\n%s\n", r->fwd_us, n,
           ROUNDS, line);
    if (!graph) return;
    r->graph_us = prof_graph_back_to_back_us(fn, model, stream, n, ROUNDS);
    printf("as a CUDA graph (the same %d launches captured once, replayed with cudaGraphLaunch): %.2f us per "
           "forward back to back\n", kernels, r->graph_us);
}

void run_report_traffic(const run_traffic *rows, int n, double min_bytes)
{
    double sum = 0;
    for (int i = 0; i < n; i++) sum += rows[i].bytes;
    printf("HBM traffic per forward (napkin math: each operand read or written once): %.1f MB", sum / 1e6);
    if (min_bytes > 0) printf("; the least any forward moves (x, weights, y): %.1f MB", min_bytes / 1e6);
    printf("\n");
    for (int i = 0; n > 1 && i < n; i++)
        printf("  %-15s %-34s %10.1f MB\n", rows[i].kernel, rows[i].moves, rows[i].bytes / 1e6);
}

void run_report_floor(double floor_us, double flops, double min_bytes, const run_result *r)
{
    if (floor_us <= 0) return;
    printf("\nfloor: %.2f us (the slower of %.2f GFLOP at the GEMM ceiling and %.2f MB of x, weights and y at the "
           "copy ceiling): one step is %.2fx it, back to back %.2fx\n", floor_us, flops / 1e9, min_bytes / 1e6,
           r->step_us / floor_us, r->fwd_us / floor_us);
}

void run_report_ops(const run_op *ops, int n, cudaStream_t stream, const gpu_info *g, dtype_t t, double forward_us)
{
    const int tool = prof_under_tool();
    const schedule_t sched = {.wait = 0, .warmup_steps = tool ? 0 : 3, .active = tool ? 1 : 20, .warmup = 0};
    double cpu[16], gpu[16], sum = 0.0;
    if (n > 16) n = 16;
    for (int op = 0; op < n; op++) {
        char label[64];
        snprintf(label, sizeof label, "op_timing:%s", ops[op].name);
        prof_range_push(label);
        prof_run run;
        prof_run_schedule(&run, &sched, stream, ops[op].run, ops[op].ctx);
        cpu[op] = prof_active_stats(&run, 0).median;
        gpu[op] = prof_active_stats(&run, 1).median;
        sum += gpu[op];
        prof_free(&run);
        prof_range_pop();
    }
    printf("\nper op (each alone in a gated step: median of 20 after 3 warm-ups; CUDA events add about a microsecond):\n");
    printf("%-10s %-16s %10s %10s %-22s %6s\n", "op", "M.K.N | bytes", "cpu_us", "gpu_us", "rate (% of ceiling)", "share");
    for (int op = 0; op < n; op++) {
        char rate[48];
        rate_of(g, t, &ops[op], gpu[op], rate, sizeof rate);
        printf("%-10s %-16s %10.2f %10.2f %-22s %5.1f%%\n", ops[op].name, ops[op].problem, cpu[op], gpu[op], rate,
               100.0 * gpu[op] / sum);
    }
    printf("sum of the %d ops: %.2f us (the forward's steps: %.2f us)\n", n, sum, forward_us);
}

static void dump(const common_args *a, dump_array *arr, int n, const char *variant)
{
    char names[256] = "";
    snprintf(arr[n - 1].name, sizeof arr[n - 1].name, "y_%s", variant); /* the output, by variant */
    for (int i = 0; i < n; i++) {
        if (dump_device_array(a->dump_dir, arr[i].name, a->dtype, arr[i].shape, arr[i].ndim, arr[i].dev) != 0)
            exit(EXIT_BAD_INPUT);
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%.31s", i == 0 ? "" : i == n - 1 ? " and " : ", ", arr[i].name);
    }
    printf("dump: wrote %s as .npy files in %s/\n", names, a->dump_dir);
}

/* --hold S: the forward back to back for S seconds, the SM clock, board power and temperature
 * sampled all along: under sustained load the board reaches its power limit and the clock falls,
 * which is why a long loop runs slower than one step. Writes <base>_clocks.csv and its plot. */
static void hold(run_forward fn, void *model, cudaStream_t stream, int batch, int seconds, const char *base,
                 const char *tag, int plot)
{
    clocks_series_t series = {0};
    if (clocks_start(&series) != 0) {
        printf("hold: %s; nothing to plot\n", clocks_why());
        return;
    }
    const double t0 = prof_now_us();
    int batches = 0;
    double last_us = 0;
    while (prof_now_us() - t0 < seconds * 1e6) {
        last_us = prof_back_to_back_us(fn, model, stream, batch, 1);
        batches++;
    }
    clocks_summary_t clk;
    clocks_stop(&clk);
    char line[256], csv[1100], png[1100], title[400];
    clocks_format(&clk, line, sizeof line);
    printf("hold: %d s back to back (%d batches of %d forwards; the last at %.2f us per forward)\n%s\n", seconds,
           batches, batch, last_us, line);
    snprintf(csv, sizeof csv, "%s_clocks.csv", base);
    snprintf(png, sizeof png, "%s_clocks.png", base);
    snprintf(title, sizeof title, "%.200s: %d s back to back", tag, seconds);
    if (clocks_write_csv(&series, csv) == 0) {
        printf("wrote %s\n", csv);
        if (plot && plot_run("clocks.gp", csv, png, title) == 0) printf("wrote %s\n", png);
    }
    clocks_series_free(&series);
}

void run_finish(prof_run *steps, const common_args *a, const char *tag, run_forward fn, void *model,
                cudaStream_t stream, const run_result *r, dump_array *arrays, int n_arrays, const char *variant)
{
    char base[800];
    snprintf(base, sizeof base, "%s/%s", a->out_dir, tag);
    if (a->dump_dir[0]) { /* the output of the checked forward, or of one run with --no-check */
        if (!a->check) {
            fn(model);
            CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        dump(a, arrays, n_arrays, variant);
    }
    report_step_files(steps, base, tag, a->plot);
    prof_free(steps);
    if (a->hold_s > 0) hold(fn, model, stream, run_batch_for(r->step_us), a->hold_s, base, tag, a->plot);
}

void run_trace_pass(const common_args *a, const stage_spec *spec, void *values, unsigned own, const char *variant,
                    char *argv0)
{
    enum { MAX = 64 };
    static char texts[MAX][600];
    static char *argv[MAX + 1];
    int n = 0, t = 0;
    if (!a->trace) return;
    argv[n++] = argv0;
#define ADD(...)                                                   \
    do {                                                           \
        snprintf(texts[t], sizeof texts[t], __VA_ARGS__);          \
        argv[n++] = texts[t++];                                    \
    } while (0)
    ADD("--variant=%s", variant);
    ADD("--dtype=%s", dtype_name(a->dtype));
    ADD("--seed=%llu", (unsigned long long)a->seed);
    ADD("--wait=%d", a->sched.wait);
    ADD("--warmup-steps=%d", a->sched.warmup_steps);
    ADD("--active=%d", a->sched.active);
    ADD("--warmup=%d", a->sched.warmup);
    ADD("--out=%s", a->out_dir);
    ADD("--no-plot");
    ADD("--no-check");
    if (a->trace_api_all) ADD("--trace-api=all");
    for (int i = 0; i < spec->n_opts && n < MAX - 1; i++) {
        const stage_opt *o = &spec->opts[i];
        if (!(own >> i & 1)) continue;
        if (o->kind == FLAG_WHOLE) ADD("--%s=%lld", o->name, *stage_opt_whole(o, values));
        else if (o->kind == FLAG_SWITCH && *stage_opt_whole(o, values)) ADD("--%s", o->name);
        else if (o->kind == FLAG_WORD && *stage_opt_word(o, values)) ADD("--%s=%s", o->name, *stage_opt_word(o, values));
    }
#undef ADD
    argv[n] = NULL;
    prof_spawn_trace_pass(argv);
}
