#include "stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clocks.h"
#include "dump.h"
#include "out.h"
#include "plot.h"
#include "prof.h"
#include "program.h"
#include "report.h"
#include "stage_parts.h"
#include "stats.h"
#include "profiler/trace.h"

/* ---- a variant's facts ------------------------------------------------------------------ */

/* 1 when the space-separated list `names` holds `name`. */
static int names_hold(const char *names, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = names; p && *p;) {
        while (*p == ' ') p++;
        const size_t len = strcspn(p, " ");
        if (len == n && strncmp(p, name, n) == 0) return 1;
        p += len;
    }
    return 0;
}

/* 1 when own flag i matters to variant v: no row names it in `takes`, or v's row does. */
static int opt_matters(const stage_def *d, int i, int v)
{
    int named = 0;
    for (int w = 0; w < d->n_variants; w++)
        if (names_hold(d->variants[w].takes, d->flags.opts[i].name)) {
            if (w == v) return 1;
            named = 1;
        }
    return !named;
}

int stage_variant_takes(const stage_variant *v, const char *unit, const void *flags, dtype_t t, size_t size,
                        char *why, size_t len)
{
    if (v->dtypes && !(v->dtypes & STAGE_DTYPE(t))) {
        char list[64] = "";
        for (int k = DTYPE_BF16; k <= DTYPE_FP32; k++)
            if (v->dtypes & STAGE_DTYPE(k))
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? " or " : "",
                         dtype_name((dtype_t)k));
        snprintf(why, len, "%s: %s takes %s", dtype_name(t), v->name, list);
        return 0;
    }
    if (size && ((v->min_size && size < v->min_size) || (v->max_size && size > v->max_size))) {
        snprintf(why, len, "%zu %s: %s takes %zu..%zu %s", size, unit, v->name, v->min_size ? v->min_size : 1,
                 v->max_size, unit);
        return 0;
    }
    return v->accepts ? v->accepts(flags, t, size, why, len) : 1;
}

int stage_takes(const stage_def *d, int v, const void *flags, dtype_t t, size_t size, char *why, size_t len)
{
    return stage_variant_takes(&d->variants[v], d->sweep.label, flags, t, size, why, len);
}

int stage_variant_kernels(const stage_variant *v, const void *model)
{
    stage_traffic rows[STAGE_MAX_TRAFFIC];
    return v->traffic ? v->traffic(model, rows) : v->kernels;
}

double stage_variant_bytes(const stage_variant *v, const void *model)
{
    stage_traffic rows[STAGE_MAX_TRAFFIC];
    if (!v->traffic) return NAN;
    double sum = 0;
    for (int i = 0, n = v->traffic(model, rows); i < n; i++) sum += rows[i].bytes;
    return sum;
}

/* ---- the command line ------------------------------------------------------------------ */

static stage_spec spec_of(const stage_def *d, const char **names, const char **helps)
{
    for (int v = 0; v < d->n_variants; v++) {
        names[v] = d->variants[v].name;
        helps[v] = d->variants[v].help;
    }
    names[d->n_variants] = NULL;
    return (stage_spec){d->name, d->summary, names, helps, d->flags.opts, d->flags.n, d->all_name, 0, d->all_is_default};
}

/* The variants this run asks for: [first, last]. */
static void chosen(const stage_def *d, const common_args *a, int *first, int *last)
{
    *first = 0;
    *last = d->n_variants - 1;
    for (int v = 0; v < d->n_variants; v++)
        if (strcmp(d->variants[v].name, a->variant) == 0) *first = *last = v;
}

/* --sweep honours the flags it can and refuses the rest by name. */
static int sweep_refusals(const stage_def *d, const common_args *a)
{
    static const struct { unsigned bit; const char *flag; } shared[] = {
        {GIVEN_WAIT, "--wait"}, {GIVEN_WARMUP_STEPS, "--warmup-steps"}, {GIVEN_WARMUP, "--warmup"},
        {GIVEN_DUMP, "--dump"}, {GIVEN_HOLD, "--hold"},
    };
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
        if (a->given & shared[i].bit) {
            program_error("--sweep does not take %s (each size runs %s untraced, 3 warm-ups first)",
                          shared[i].flag, "--steps steps");
            return -1;
        }
    for (int i = 0; i < d->flags.n; i++)
        if (d->flags.opts[i].swept && (a->given_own >> i & 1)) {
            program_error("--sweep does not take --%s: it sweeps %s itself", d->flags.opts[i].name, d->sweep.label);
            return -1;
        }
    return 0;
}

/* Every check that needs no GPU, before the GPU is asked for. */
static int validate(const stage_def *d, const common_args *a, const void *flags, int first, int last)
{
    if (out_dir_check("--out", a->out_dir) != 0) return -1;
    if (a->dump_dir[0] && out_dir_check("--dump", a->dump_dir) != 0) return -1;
    for (int i = 0; i < d->flags.n; i++) {
        int applies = 0;
        char list[256] = "";
        for (int v = 0; v < d->n_variants; v++)
            if (opt_matters(d, i, v)) {
                applies |= v >= first && v <= last;
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "",
                         d->variants[v].name);
            }
        if ((a->given_own >> i & 1) && !applies) {
            program_error("--%s does not apply to --variant %s (it applies to %s)", d->flags.opts[i].name, a->variant,
                          list);
            return -1;
        }
    }
    char why[512];
    if (d->model.validate && d->model.validate(flags, a, why, sizeof why) != 0) {
        program_error("%s", why);
        return -1;
    }
    if (a->sweep) return sweep_refusals(d, a);
    const size_t size = d->model.size ? d->model.size(flags) : 0;
    int any = 0;
    for (int v = first; v <= last; v++) {
        if (stage_takes(d, v, flags, a->dtype, size, why, sizeof why)) any = 1;
        else if (first == last) {
            program_error("--variant %s is not available here: %s", d->variants[v].name, why);
            return -1;
        }
    }
    if (!any) program_error("no variant takes this problem (%s)", why);
    return any ? 0 : -1;
}

/* The trace pass's command line, from the parsed values: the same run, one variant. */
static char **trace_argv(const stage_def *d, const common_args *a, void *flags, int v, char *argv0)
{
    enum { MAX = 64 };
    static char texts[MAX][600];
    static char *argv[MAX + 1];
    int n = 0, t = 0;
    argv[n++] = argv0;
#define ADD(...)                                                   \
    do {                                                           \
        snprintf(texts[t], sizeof texts[t], __VA_ARGS__);          \
        argv[n++] = texts[t++];                                    \
    } while (0)
    ADD("--variant=%s", d->variants[v].name);
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
    for (int i = 0; i < d->flags.n && n < MAX - 1; i++) {
        const stage_opt *o = &d->flags.opts[i];
        if (!opt_matters(d, i, v)) continue;
        if (o->kind == FLAG_WHOLE) ADD("--%s=%lld", o->name, *stage_opt_whole(o, flags));
        else if (o->kind == FLAG_SWITCH && *stage_opt_whole(o, flags)) ADD("--%s", o->name);
        else if (o->kind == FLAG_WORD && *stage_opt_word(o, flags)) ADD("--%s=%s", o->name, *stage_opt_word(o, flags));
    }
#undef ADD
    argv[n] = NULL;
    return argv;
}

/* --hold S: the forward back to back for S seconds, the SM clock, board power and temperature
 * sampled all along: under sustained load the board reaches its power limit and the clock falls,
 * which is why a long loop runs slower than one step. Writes <base>_clocks.csv and its plot. */
static void hold(void (*forward)(void *), void *model, cudaStream_t stream, int batch, int seconds,
                 const char *base, const char *tag, int plot)
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
        last_us = prof_back_to_back_us(forward, model, stream, batch, 1);
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

/* ---- one variant ------------------------------------------------------------------------ */

double stage_floor_us(const stage_def *d, const void *model, const gpu_info *g, dtype_t t)
{
    double ceiling = gpu_gemm_ceiling(g, t);
    if (ceiling <= 0 || g->copy_gbps <= 0 || !d->model.min_bytes) return 0;
    return fmax(d->model.flops(model) / (ceiling * 1e12), d->model.min_bytes(model) / (g->copy_gbps * 1e9)) * 1e6;
}

int stage_batch_for(double us)
{
    double n = 50000.0 / (us > 1 ? us : 1);
    return n < 10 ? 10 : n > 200 ? 200 : (int)n;
}

/* "612.3 TFLOP/s  77%" against the GEMM ceiling, or "3905 GB/s  92%" against the copy ceiling. */
static void rate_of(const gpu_info *g, dtype_t t, double flops, double bytes, double us, char *buf, size_t len)
{
    if (flops > 0) {
        double tflops = flops / (us * 1e-6) / 1e12, ceiling = gpu_gemm_ceiling(g, t);
        if (ceiling > 0) snprintf(buf, len, "%5.1f TFLOP/s %4.0f%%", tflops, 100.0 * tflops / ceiling);
        else snprintf(buf, len, "%5.1f TFLOP/s     -", tflops);
    } else {
        double gbps = bytes / (us * 1e-6) / 1e9;
        if (g->copy_gbps > 0) snprintf(buf, len, "%7.0f GB/s %4.0f%%", gbps, 100.0 * gbps / g->copy_gbps);
        else snprintf(buf, len, "%7.0f GB/s     -", gbps);
    }
}

typedef struct {
    void *model;
    int op;
    void (*run)(void *model, int op);
} op_call;

static void run_op(void *ctx)
{
    const op_call *c = ctx;
    c->run(c->model, c->op);
}

static void report_ops(const stage_def *d, void *model, const gpu_info *g, dtype_t t, double forward_us)
{
    const stage_ops *o = d->ops;
    const int tool = prof_under_tool();
    const schedule_t sched = {.wait = 0, .warmup_steps = tool ? 0 : 3, .active = tool ? 1 : 20, .warmup = 0};
    double cpu[16], gpu[16], sum = 0.0;
    for (int op = 0; op < o->n && op < 16; op++) {
        char label[64];
        snprintf(label, sizeof label, "op_timing:%s", o->names[op]);
        prof_range_push(label);
        prof_run run;
        op_call c = {model, op, o->run};
        prof_run_schedule(&run, &sched, d->model.stream(model), run_op, &c);
        cpu[op] = prof_active_stats(&run, 0).median;
        gpu[op] = prof_active_stats(&run, 1).median;
        sum += gpu[op];
        prof_free(&run);
        prof_range_pop();
    }
    printf("\nper op (each alone in a gated step: median of 20 after 3 warm-ups; CUDA events add about a microsecond):\n");
    printf("%-10s %-16s %10s %10s %-22s %6s\n", "op", "M.K.N | bytes", "cpu_us", "gpu_us", "rate (% of ceiling)", "share");
    for (int op = 0; op < o->n && op < 16; op++) {
        char prob[48], rate[48];
        o->problem(model, op, prob, sizeof prob);
        rate_of(g, t, o->flops(model, op), o->bytes(model, op), gpu[op], rate, sizeof rate);
        printf("%-10s %-16s %10.2f %10.2f %-22s %5.1f%%\n", o->names[op], prob, cpu[op], gpu[op], rate,
               100.0 * gpu[op] / sum);
    }
    printf("sum of the %d ops: %.2f us (the forward's steps: %.2f us)\n", o->n, sum, forward_us);
}

/* In the trace pass: each kernel under the op (range) that launched it, from the trace model. */
static void report_kernels(const stage_def *d, void *model, const gpu_info *g, dtype_t t, const common_args *a)
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
        for (int op = 0; d->ops && op < d->ops->n; op++)
            if (strcmp(r->range, d->ops->names[op]) == 0) {
                d->ops->problem(model, op, prob, sizeof prob);
                rate_of(g, t, d->ops->flops(model, op), d->ops->bytes(model, op), r->median_us, rate, sizeof rate);
            }
        printf("%-16s %-52.52s %-16s %5d %9.2f %-22s %5.1f%%\n", r->range[0] ? r->range : "-", r->kernel, prob,
               r->calls, r->median_us, rate, total > 0 ? 100.0 * r->total_us / total : 0.0);
    }
    printf("kernel time per forward: %.2f us\n", total / a->sched.active);
}

static void dump(const stage_def *d, const void *model, const char *variant, const common_args *a)
{
    stage_array arr[8];
    int n = d->model.arrays(model, arr, 8);
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

/* The napkin traffic of a variant: the total, then kernel by kernel. */
static void report_traffic(const stage_def *d, const stage_variant *sv, const void *model)
{
    stage_traffic rows[STAGE_MAX_TRAFFIC];
    if (!sv->traffic) return;
    const int n = sv->traffic(model, rows);
    printf("HBM traffic per forward (napkin math: each operand read or written once): %.1f MB", stage_variant_bytes(sv, model) / 1e6);
    if (d->model.min_bytes) printf("; the least any forward moves (x, weights, y): %.1f MB", d->model.min_bytes(model) / 1e6);
    printf("\n");
    for (int i = 0; n > 1 && i < n; i++)
        printf("  %-15s %-34s %10.1f MB\n", rows[i].kernel, rows[i].moves, rows[i].bytes / 1e6);
}

static stage_result run_variant(const stage_def *d, int v, const common_args *a, void *flags, const gpu_info *g,
                                char *argv0)
{
    stage_result res = {0};
    const stage_variant *sv = &d->variants[v];
    const stage_model *md = &d->model;
    void *model = md->setup(a, flags, md->size ? md->size(flags) : 0);
    cudaStream_t stream = md->stream(model);
    if (sv->runs && !sv->runs(model, res.skipped, sizeof res.skipped)) {
        md->teardown(model);
        return res;
    }
    if (sv->prepare) sv->prepare(model);
    char tag[200], base[800];
    md->tag(model, a, tag, sizeof tag);
    snprintf(tag + strlen(tag), sizeof tag - strlen(tag), "_%s", sv->name);
    snprintf(base, sizeof base, "%s/%s", a->out_dir, tag);

    prof_run run;
    prof_run_schedule(&run, &a->sched, stream, sv->forward, model);
    if (run.traced) { /* the trace pass only records; the timed pass reports */
        if (trace_write(base, 12) == 0) {
            printf("trace: wrote %s.json and %s.txt\n", base, base);
            if (d->kernel_table) report_kernels(d, model, g, a->dtype, a);
        }
        prof_free(&run);
        md->teardown(model);
        return res;
    }

    printf("\n== %s: %s\n", tag, sv->help);
    if (md->describe) md->describe(model);
    printf("launches per forward: %s\n", sv->launches);
    report_traffic(d, sv, model);
    report_steps(&run);
    res.ran = 1;
    res.cpu_us = prof_active_stats(&run, 0).median;
    res.step_us = prof_active_stats(&run, 1).median;
    res.first_cpu_us = run.cpu_us[0];
    int n = stage_batch_for(res.step_us);
    clocks_summary_t clk;
    res.fwd_us = prof_back_to_back_clocked_us(sv->forward, model, stream, n, STAGE_ROUNDS, &clk);
    res.sm_mhz = clk.samples ? clk.sm_mhz_median : NAN;
    res.power_w = clk.samples ? clk.power_w_median : NAN;
    char clk_line[256];
    clocks_format(&clk, clk_line, sizeof clk_line);
    printf("back to back: %.2f us per forward (%d forwards issued without waiting, median of %d)\n%s\n", res.fwd_us, n,
           STAGE_ROUNDS, clk_line);
    if (d->graph) {
        res.graph_us = prof_graph_back_to_back_us(sv->forward, model, stream, n, STAGE_ROUNDS);
        printf("as a CUDA graph (the same %d launches captured once, replayed with cudaGraphLaunch): %.2f us per "
               "forward back to back\n", stage_variant_kernels(sv, model), res.graph_us);
    }
    report_verdict(res.cpu_us, res.step_us);
    report_throughput(g, a->dtype, md->flops(model), res.step_us);
    if (d->ops) report_ops(d, model, g, a->dtype, res.step_us);
    double fl = stage_floor_us(d, model, g, a->dtype);
    if (fl > 0)
        printf("\nfloor: %.2f us (the slower of %.2f GFLOP at the GEMM ceiling and %.2f MB of x, weights and y at the "
               "copy ceiling): one step is %.2fx it, back to back %.2fx\n", fl, md->flops(model) / 1e9,
               md->min_bytes(model) / 1e6, res.step_us / fl, res.fwd_us / fl);
    if (md->report) md->report(model, v, &res, g, a);
    if (sv->report) sv->report(model, &res, g, a);
    if (a->check) {
        res.err = md->check(model, sv->forward);
        report_check(res.err, md->tolerance(a->dtype));
    }
    if (a->dump_dir[0]) { /* the output of the checked forward, or of one run with --no-check */
        if (!a->check) {
            sv->forward(model);
            CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        dump(d, model, sv->name, a);
    }
    report_step_files(&run, base, tag, a->plot);
    prof_free(&run);
    if (a->hold_s > 0) hold(sv->forward, model, stream, n, a->hold_s, base, tag, a->plot);
    md->teardown(model);
    if (a->trace) prof_spawn_trace_pass(trace_argv(d, a, flags, v, argv0));
    return res;
}

/* ---- main ------------------------------------------------------------------------------ */

/* After the flags: the checks before the GPU, then the variants, the comparison or the sweep. */
static int stage_run(const stage_def *d, const common_args *a, void *flags, char *argv0)
{
    if (!prof_trace_pass_open()) return 0; /* trace pass, and CUPTI unavailable: said why */
    trace_set_api_filter(a->trace_api_all);
    int first, last;
    chosen(d, a, &first, &last);
    if (validate(d, a, flags, first, last) != 0) return EXIT_BAD_INPUT; /* before the GPU: nothing made */

    gpu_info g;
    gpu_require(&g, d->name);
    if (out_mkdirs(a->out_dir) != 0) return EXIT_BAD_INPUT;
    const int traced = prof_is_trace_pass();
    if (!traced) gpu_print(&g);
    if (a->sweep) return stage_sweep_run(d, first, last, a, flags, &g) ? EXIT_BAD_INPUT : 0;

    stage_result r[32] = {{0}};
    char why[512];
    const size_t size = d->model.size ? d->model.size(flags) : 0;
    int failed = 0;
    for (int v = first; v <= last; v++) {
        if (!stage_takes(d, v, flags, a->dtype, size, why, sizeof why)) {
            if (!traced) printf("\n== %s: skipped: %s\n", d->variants[v].name, why);
            continue;
        }
        r[v] = run_variant(d, v, a, flags, &g, argv0);
        if (!r[v].ran && r[v].skipped[0] && !traced) {
            if (first == last) {
                program_error("--variant %s is not available here: %s", d->variants[v].name, r[v].skipped);
                return EXIT_BAD_INPUT;
            }
            printf("\n== %s: skipped: %s\n", d->variants[v].name, r[v].skipped);
        }
        failed |= a->check && r[v].ran && !(r[v].err <= d->model.tolerance(a->dtype));
    }
    if (traced) return 0;
    if (last > first) stage_compare(d, first, last, r, a, flags, &g);
    printf("\noutputs: %s/\n", a->out_dir);
    return failed ? EXIT_BAD_INPUT : 0;
}

int stage_main(int argc, char **argv, const stage_def *d)
{
    const char *names[33], *helps[33];
    if (d->n_variants > 32) return EXIT_BAD_INPUT;
    stage_spec spec = spec_of(d, names, helps);
    void *flags = d->flags.size ? malloc(d->flags.size) : NULL;
    if (d->flags.size && !flags) return EXIT_BAD_INPUT;
    if (flags) memcpy(flags, d->flags.defaults, d->flags.size);
    common_args a;
    prof_take_trace_pass_flag(&argc, argv);
    cli_parse(argc, argv, &spec, &a, flags);
    if (d->all_is_default && !(a.given & GIVEN_VARIANT)) a.variant = d->all_name;
    int rc = d->no_gpu_action ? d->no_gpu_action(flags, &a) : -1;
    if (rc < 0) rc = stage_run(d, &a, flags, argv[0]);
    free(flags);
    return rc;
}
