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
#include "stats.h"
#include "trace.h"

enum { ROUNDS = 5 };

/* ---- the command line ------------------------------------------------------------------ */

static stage_spec spec_of(const stage_def *d, const char **names, const char **helps)
{
    for (int v = 0; v < d->n_variants; v++) {
        names[v] = d->variants[v].name;
        helps[v] = d->variants[v].help;
    }
    names[d->n_variants] = NULL;
    return (stage_spec){d->name, d->summary, names, helps, d->opts, d->n_opts, d->all_name, 0, d->all_is_default};
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
    for (int i = 0; i < d->n_opts; i++)
        if (d->opts[i].swept && (a->given_own >> i & 1)) {
            program_error("--sweep does not take --%s: it sweeps %s itself", d->opts[i].name, d->sweep_label);
            return -1;
        }
    return 0;
}

/* Every check that needs no GPU, before the GPU is asked for. */
static int validate(const stage_def *d, const common_args *a, int first, int last)
{
    if (out_dir_check("--out", a->out_dir) != 0) return -1;
    if (a->dump_dir[0] && out_dir_check("--dump", a->dump_dir) != 0) return -1;
    for (int i = 0; d->opt_for && i < d->n_opts; i++) {
        int applies = 0;
        char list[256] = "";
        for (int v = 0; v < d->n_variants; v++)
            if (d->opt_for(i, v)) {
                applies |= v >= first && v <= last;
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "",
                         d->variants[v].name);
            }
        if ((a->given_own >> i & 1) && !applies) {
            program_error("--%s does not apply to --variant %s (it applies to %s)", d->opts[i].name, a->variant, list);
            return -1;
        }
    }
    if (a->sweep) return sweep_refusals(d, a);
    if (!d->validate) return 0;
    char why[512];
    int any = 0;
    for (int v = first; v <= last; v++) {
        int rc = d->validate(a, v, why, sizeof why);
        if (rc == 0) any = 1;
        else if (first == last || rc > 0) { /* asked for by name, or the shape itself is bad */
            if (first == last && rc < 0) program_error("--variant %s is not available here: %s", d->variants[v].name, why);
            else if (first == last) program_error("--variant %s: %s", d->variants[v].name, why);
            else program_error("%s", why);
            return -1;
        }
    }
    if (!any) program_error("no variant takes this problem (%s)", why);
    return any ? 0 : -1;
}

/* The trace pass's command line, from the parsed values: the same run, one variant. */
static char **trace_argv(const stage_def *d, const common_args *a, int v, char *argv0)
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
    for (int i = 0; i < d->n_opts && n < MAX - 1; i++) {
        const stage_opt *o = &d->opts[i];
        if (d->opt_for && !d->opt_for(i, v)) continue;
        if (o->kind == FLAG_WHOLE) ADD("--%s=%lld", o->name, *o->value);
        else if (o->kind == FLAG_SWITCH && *o->value) ADD("--%s", o->name);
        else if (o->kind == FLAG_WORD && *o->word) ADD("--%s=%s", o->name, *o->word);
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

static double floor_us(const stage_def *d, const void *model, const gpu_info *g, dtype_t t)
{
    double ceiling = gpu_gemm_ceiling(g, t);
    if (ceiling <= 0 || g->copy_gbps <= 0 || !d->min_bytes) return 0;
    return fmax(d->flops(model) / (ceiling * 1e12), d->min_bytes(model) / (g->copy_gbps * 1e9)) * 1e6;
}

/* Median of one row's rounds, NaN when nothing was sampled (no NVML). */
static double median_of(const double x[ROUNDS])
{
    double v[ROUNDS];
    size_t n = 0;
    for (int k = 0; k < ROUNDS; k++)
        if (!isnan(x[k])) v[n++] = x[k];
    return n ? stats_of(v, n).median : NAN;
}

static int kernels_of(const stage_def *d, const void *model, int v)
{
    return d->variant_kernels ? d->variant_kernels(model, v) : d->variants[v].kernels;
}

/* Enough forwards back to back for about 50 ms of GPU work, 10 to 200 of them. */
static int batch_for(double us)
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
        prof_run_schedule(&run, &sched, d->stream(model), run_op, &c);
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
    int n = d->arrays(model, arr, 8);
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

static stage_result run_variant(const stage_def *d, int v, const common_args *a, const gpu_info *g, char *argv0)
{
    stage_result res = {0};
    const stage_variant *sv = &d->variants[v];
    void *model = d->setup(a, 0);
    cudaStream_t stream = d->stream(model);
    if (d->runs && !d->runs(model, v, res.skipped, sizeof res.skipped)) {
        d->teardown(model);
        return res;
    }
    if (d->prepare) d->prepare(model, v);
    char tag[200], base[800];
    d->tag(model, a, tag, sizeof tag);
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
        d->teardown(model);
        return res;
    }

    printf("\n== %s: %s\n", tag, sv->help);
    if (d->describe) d->describe(model);
    printf("launches per forward: %s\n", sv->launches);
    if (d->variant_bytes)
        printf("HBM traffic per forward (napkin math: each operand read or written once): %.1f MB; the least any "
               "forward moves (x, weights, y): %.1f MB\n", d->variant_bytes(model, v) / 1e6, d->min_bytes(model) / 1e6);
    report_steps(&run);
    res.ran = 1;
    res.cpu_us = prof_active_stats(&run, 0).median;
    res.step_us = prof_active_stats(&run, 1).median;
    res.first_cpu_us = run.cpu_us[0];
    int n = batch_for(res.step_us);
    clocks_summary_t clk;
    clocks_start(NULL);
    res.fwd_us = prof_back_to_back_us(sv->forward, model, stream, n, ROUNDS);
    clocks_stop(&clk);
    res.sm_mhz = clk.samples ? clk.sm_mhz_median : NAN;
    res.power_w = clk.samples ? clk.power_w_median : NAN;
    char clk_line[256];
    clocks_format(&clk, clk_line, sizeof clk_line);
    printf("back to back: %.2f us per forward (%d forwards issued without waiting, median of %d)\n%s\n", res.fwd_us, n,
           ROUNDS, clk_line);
    if (d->graph) {
        res.graph_us = prof_graph_back_to_back_us(sv->forward, model, stream, n, ROUNDS);
        printf("as a CUDA graph (the same %d launches captured once, replayed with cudaGraphLaunch): %.2f us per "
               "forward back to back\n", kernels_of(d, model, v), res.graph_us);
    }
    report_verdict(res.cpu_us, res.step_us);
    report_throughput(g, a->dtype, d->flops(model), res.step_us);
    if (d->ops) report_ops(d, model, g, a->dtype, res.step_us);
    double fl = floor_us(d, model, g, a->dtype);
    if (fl > 0)
        printf("\nfloor: %.2f us (the slower of %.2f GFLOP at the GEMM ceiling and %.2f MB of x, weights and y at the "
               "copy ceiling): one step is %.2fx it, back to back %.2fx\n", fl, d->flops(model) / 1e9,
               d->min_bytes(model) / 1e6, res.step_us / fl, res.fwd_us / fl);
    if (d->report) d->report(model, v, &res, g, a);
    if (a->check) {
        res.err = d->check(model, sv->forward);
        report_check(res.err, d->tolerance(a->dtype));
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
    d->teardown(model);
    if (a->trace) prof_spawn_trace_pass(trace_argv(d, a, v, argv0));
    return res;
}

/* ---- several variants: one comparison, measured in alternating rounds ------------------- */

static void compare(const stage_def *d, int first, int last, const stage_result *r, const common_args *a,
                    const gpu_info *g)
{
    void *model = d->setup(a, 0);
    cudaStream_t stream = d->stream(model);
    int n_rows = last - first + 1 + d->n_references;
    void (*fns[32])(void *);
    const char *names[32];
    int ok[32] = {0};
    char why[512];
    for (int i = 0; i < n_rows && i < 32; i++) {
        int v = first + i;
        int is_variant = v <= last;
        fns[i] = is_variant ? d->variants[v].forward : d->references[v - last - 1].run;
        names[i] = is_variant ? d->variants[v].name : d->references[v - last - 1].name;
        ok[i] = !is_variant || (r[v].ran && (!d->validate || d->validate(a, v, why, sizeof why) == 0));
    }
    double step_us = INFINITY;
    for (int v = first; v <= last; v++)
        if (r[v].ran && r[v].step_us < step_us) step_us = r[v].step_us;
    int n = batch_for(step_us);
    for (int v = first; v <= last; v++)
        if (d->prepare && ok[v - first]) d->prepare(model, v);
    for (int i = 0; i < n_rows; i++) /* warm every path: plans, handles, module loading, graphs */
        for (int w = 0; ok[i] && w < 3; w++) fns[i](model);
    double us[32][ROUNDS], mhz[32][ROUNDS], watts[32][ROUNDS];
    for (int k = 0; k < ROUNDS; k++)
        for (int i = 0; i < n_rows; i++) {
            us[i][k] = mhz[i][k] = watts[i][k] = NAN;
            if (!ok[i]) continue;
            clocks_summary_t clk = {0};
            clocks_start(NULL);
            us[i][k] = prof_back_to_back_us(fns[i], model, stream, n, 1);
            clocks_stop(&clk);
            if (clk.samples) mhz[i][k] = clk.sm_mhz_median, watts[i][k] = clk.power_w_median;
        }
    double fl = floor_us(d, model, g, a->dtype), flops = d->flops(model), first_us = 0;

    char stem[200] = "", csv[1200], png[1200], title[400], tmp[1300];
    (d->compare_tag ? d->compare_tag : d->tag)(model, a, stem, sizeof stem);
    snprintf(csv, sizeof csv, "%s/%s_%s.csv", a->out_dir, d->all_name ? d->all_name : "comparison", stem);
    snprintf(png, sizeof png, "%.*s.png", (int)(strlen(csv) - 4), csv);
    snprintf(title, sizeof title, "%s, %.150s, %.200s", d->name, stem, g->prop.name);
    printf("\n== comparison: %s, %s\n", stem, g->prop.name);
    printf("fwd_us: per forward, %d issued back to back, median of %d rounds that alternate the rows (the clocks\n"
           "drift under load; alternating charges the drift to no row); step_us: GPU time of one gated step;\n"
           "SM MHz, W: median SM clock and board power while the row ran back to back.",
           n, ROUNDS);
    if (fl > 0) printf(" Floor: %.2f us.", fl);
    printf("\n%-22s %7s %10s %10s %10s %8s %8s %8s %10s %7s %5s\n", "variant", "kernels", "HBM MB", "fwd_us", "step_us",
           "TFLOP/s", "% floor", "vs first", "rel_err", "SM MHz", "W");
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (f) fprintf(f, "variant,kernels,hbm_mb,fwd_us,step_us,tflops,pct_floor,speedup,floor_us,rel_err,sm_mhz,power_w\n");
    for (int i = 0; i < n_rows; i++) {
        int v = first + i, is_variant = v <= last;
        if (!ok[i]) {
            const char *reason = "did not run";
            if (is_variant && r[v].skipped[0]) reason = r[v].skipped;
            else if (is_variant && d->validate && d->validate(a, v, why, sizeof why)) reason = why;
            printf("%-22s skipped: %s\n", names[i], reason);
            continue;
        }
        double fwd = stats_of(us[i], ROUNDS).median;
        if (first_us == 0) first_us = fwd;
        double tflops = flops / (fwd * 1e-6) / 1e12, pct = fl > 0 ? 100.0 * fl / fwd : NAN;
        double bytes = is_variant && d->variant_bytes ? d->variant_bytes(model, v) : NAN;
        char pct_s[16] = "-", bytes_s[16] = "-", step_s[16] = "-", err_s[16] = "-", kern_s[8] = "-";
        if (fl > 0) snprintf(pct_s, sizeof pct_s, "%.0f%%", pct);
        if (!isnan(bytes)) snprintf(bytes_s, sizeof bytes_s, "%.1f", bytes / 1e6);
        if (is_variant) {
            snprintf(step_s, sizeof step_s, "%.2f", r[v].step_us);
            snprintf(kern_s, sizeof kern_s, "%d", kernels_of(d, model, v));
            if (a->check) snprintf(err_s, sizeof err_s, "%.2e", r[v].err);
        }
        double sm = median_of(mhz[i]), w = median_of(watts[i]);
        printf("%-22s %7s %10s %10.2f %10s %8.1f %8s %7.2fx %10s %7.0f %5.0f\n", names[i], kern_s, bytes_s, fwd, step_s,
               tflops, pct_s, first_us / fwd, err_s, sm, w);
        if (f)
            fprintf(f, "%s,%s,%.3f,%.3f,%.3f,%.2f,%.2f,%.3f,%.3f,%s,%.0f,%.1f\n", names[i], kern_s, bytes / 1e6, fwd,
                    is_variant ? r[v].step_us : NAN, tflops, pct, first_us / fwd, fl > 0 ? fl : NAN, err_s, sm, w);
    }
    if (f && out_commit(f, tmp, csv) == 0) {
        printf("wrote %s\n", csv);
        if (a->plot && d->variant_bytes && plot_run("ladder.gp", csv, png, title) == 0) printf("wrote %s\n", png);
    }
    d->teardown(model);
}

/* ---- --sweep --------------------------------------------------------------------------- */

/* A sweep's CSV and PNG paths and the plot's title (the GPU's name appended); variant is NULL
 * for the sweep of every variant together. */
typedef struct {
    char csv[1200], png[1200], title[400];
} sweep_files;

static void sweep_files_of(const stage_def *d, const char *variant, const common_args *a, const gpu_info *g,
                           sweep_files *out)
{
    char stem[200];
    d->sweep_names(a, variant, stem, out->title, sizeof stem);
    snprintf(out->csv, sizeof out->csv, "%s/%s.csv", a->out_dir, stem);
    snprintf(out->png, sizeof out->png, "%s/%s.png", a->out_dir, stem);
    size_t used = strlen(out->title);
    snprintf(out->title + used, sizeof out->title - used, ", %.150s", g->prop.name);
}

static int sweep(const stage_def *d, int v, const common_args *a, const gpu_info *g)
{
    sweep_files files;
    sweep_files_of(d, d->variants[v].name, a, g, &files);
    const char *csv = files.csv;
    char tmp[1300];
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (!f) return 1;
    fprintf(f, "%s,cpu_us,gpu_us,back_to_back_us,tflops,rel_err\n", d->sweep_label);
    printf("%7s %10s %10s %14s %9s %10s\n", d->sweep_label, "cpu_us", "gpu_us", "back2back_us", "TFLOP/s", "rel_err");
    schedule_t sched = {.wait = 0, .warmup_steps = 0, .active = a->given & GIVEN_ACTIVE ? a->sched.active : 10, .warmup = 3};
    int failed = 0;
    char why[512];
    for (size_t x = d->sweep_first; x <= d->sweep_last; x *= 2) {
        common_args at = *a;
        if (d->validate && d->validate(&at, v, why, sizeof why) != 0) continue;
        void *model = d->setup(&at, x);
        cudaStream_t stream = d->stream(model);
        if (d->runs && !d->runs(model, v, why, sizeof why)) {
            printf("%7zu skipped: %s\n", x, why);
            d->teardown(model);
            continue;
        }
        if (d->prepare) d->prepare(model, v);
        prof_run run;
        prof_run_schedule(&run, &sched, stream, d->variants[v].forward, model);
        double cpu = prof_active_stats(&run, 0).median, gpu = prof_active_stats(&run, 1).median;
        double b2b = prof_back_to_back_us(d->variants[v].forward, model, stream, batch_for(gpu), 3);
        double tflops = d->flops(model) / (gpu * 1e-6) / 1e12;
        double err = a->check ? d->check(model, d->variants[v].forward) : 0.0;
        failed |= !(err <= d->tolerance(a->dtype));
        printf("%7zu %10.2f %10.2f %14.2f %9.1f %10.2e\n", x, cpu, gpu, b2b, tflops, err);
        fprintf(f, "%zu,%.3f,%.3f,%.3f,%.2f,%.3e\n", x, cpu, gpu, b2b, tflops, err);
        prof_free(&run);
        d->teardown(model);
    }
    if (out_commit(f, tmp, csv) != 0) return 1;
    printf("wrote %s\n", csv);
    if (a->plot && plot_run(d->sweep_plot, csv, files.png, files.title) == 0) printf("wrote %s\n", files.png);
    if (failed) printf("check: FAILED at one or more sizes (tolerance %.1e)\n", d->tolerance(a->dtype));
    return failed;
}

/* Which variant was fastest at which sizes, one line per variant. */
static void print_wins(const stage_def *d, const int *winner, const size_t *sizes, int n, int first, int last)
{
    printf("fastest variant by %s:\n", d->sweep_label);
    for (int v = first; v <= last; v++) {
        printf("  %-14s", d->variants[v].name);
        int any = 0;
        for (int i = 0; i < n; i++) {
            if (winner[i] != v) continue;
            int j = i;
            while (j + 1 < n && winner[j + 1] == v) j++;
            if (j > i) printf("%s%zu..%zu", any ? ", " : " ", sizes[i], sizes[j]);
            else printf("%s%zu", any ? ", " : " ", sizes[i]);
            any = 1;
            i = j;
        }
        printf("%s\n", any ? "" : " never");
    }
}

/* Every variant at every size, back to back, in one table: who wins where. */
static int sweep_together(const stage_def *d, int first, int last, const common_args *a, const gpu_info *g)
{
    sweep_files files;
    sweep_files_of(d, NULL, a, g, &files);
    const char *csv = files.csv;
    char tmp[1300];
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (!f) return 1;
    fprintf(f, "%s", d->sweep_label);
    printf("us per forward, back to back (median of 3 batches), each checked:\n%7s", d->sweep_label);
    for (int v = first; v <= last; v++) {
        fprintf(f, ",%s", d->variants[v].name);
        printf(" %12.12s", d->variants[v].name);
    }
    fprintf(f, ",floor\n");
    printf(" %10s  %s\n", "floor", "fastest");
    enum { MAX_SIZES = 64 };
    size_t sizes[MAX_SIZES];
    int winner[MAX_SIZES], n = 0, failed = 0;
    char why[512];
    for (size_t x = d->sweep_first; x <= d->sweep_last && n < MAX_SIZES; x *= 2, n++) {
        sizes[n] = x;
        winner[n] = -1;
        void *model = d->setup(a, x);
        cudaStream_t stream = d->stream(model);
        double best = INFINITY;
        fprintf(f, "%zu", x);
        printf("%7zu", x);
        for (int v = first; v <= last; v++) {
            if ((d->validate && d->validate(a, v, why, sizeof why) != 0) ||
                (d->runs && !d->runs(model, v, why, sizeof why))) {
                fprintf(f, ",NaN");
                printf(" %12s", "-");
                continue;
            }
            void (*fwd)(void *) = d->variants[v].forward;
            if (d->prepare) d->prepare(model, v);
            for (int w = 0; w < 3; w++) fwd(model); /* module loading, handles, graph capture */
            double once = prof_back_to_back_us(fwd, model, stream, 3, 1);
            double us = prof_back_to_back_us(fwd, model, stream, batch_for(once), 3);
            if (a->check && !(d->check(model, fwd) <= d->tolerance(a->dtype))) {
                printf("\ncheck: %s FAILED at %zu %s\n", d->variants[v].name, x, d->sweep_label);
                failed = 1;
            }
            fprintf(f, ",%.3f", us);
            printf(" %12.2f", us);
            if (us < best) best = us, winner[n] = v;
        }
        double fl = floor_us(d, model, g, a->dtype);
        fprintf(f, fl > 0 ? ",%.3f\n" : ",NaN\n", fl);
        printf(" %10.2f  %s\n", fl, winner[n] >= 0 ? d->variants[winner[n]].name : "-");
        d->teardown(model);
    }
    if (out_commit(f, tmp, csv) != 0) return 1;
    printf("wrote %s\n", csv);
    print_wins(d, winner, sizes, n, first, last);
    if (a->plot && plot_run(d->sweep_together_plot, csv, files.png, files.title) == 0) printf("wrote %s\n", files.png);
    if (failed) printf("check: FAILED at one or more sizes (tolerance %.1e)\n", d->tolerance(a->dtype));
    return failed;
}

/* ---- main ------------------------------------------------------------------------------ */

int stage_main(int argc, char **argv, const stage_def *d)
{
    const char *names[33], *helps[33];
    if (d->n_variants > 32) return EXIT_BAD_INPUT;
    stage_spec spec = spec_of(d, names, helps);
    common_args a;
    prof_take_trace_pass_flag(&argc, argv);
    cli_parse(argc, argv, &spec, &a);
    if (d->all_is_default && !(a.given & GIVEN_VARIANT)) a.variant = d->all_name;
    int action = d->no_gpu_action ? d->no_gpu_action(&a) : -1;
    if (action >= 0) return action;
    if (!prof_trace_pass_open()) return 0; /* trace pass, and CUPTI unavailable: said why */
    trace_set_api_filter(a.trace_api_all);
    int first, last;
    chosen(d, &a, &first, &last);
    if (validate(d, &a, first, last) != 0) return EXIT_BAD_INPUT; /* before the GPU: nothing made */

    gpu_info g;
    gpu_require(&g, d->name);
    if (out_mkdirs(a.out_dir) != 0) return EXIT_BAD_INPUT;
    const int traced = prof_is_trace_pass();
    if (!traced) gpu_print(&g);

    int failed = 0;
    if (a.sweep) {
        if (d->sweep_together_plot && last > first) return sweep_together(d, first, last, &a, &g) ? EXIT_BAD_INPUT : 0;
        for (int v = first; v <= last; v++) failed |= sweep(d, v, &a, &g);
        return failed ? EXIT_BAD_INPUT : 0;
    }
    stage_result r[32] = {{0}};
    char why[512];
    for (int v = first; v <= last; v++) {
        if (d->validate && d->validate(&a, v, why, sizeof why) != 0) {
            if (!traced) printf("\n== %s: skipped: %s\n", d->variants[v].name, why);
            continue;
        }
        r[v] = run_variant(d, v, &a, &g, argv[0]);
        if (!r[v].ran && r[v].skipped[0] && !traced) {
            if (first == last) {
                program_error("--variant %s is not available here: %s", d->variants[v].name, r[v].skipped);
                return EXIT_BAD_INPUT;
            }
            printf("\n== %s: skipped: %s\n", d->variants[v].name, r[v].skipped);
        }
        failed |= a.check && r[v].ran && !(r[v].err <= d->tolerance(a.dtype));
    }
    if (traced) return 0;
    if (last > first) compare(d, first, last, r, &a, &g);
    printf("\noutputs: %s/\n", a.out_dir);
    return failed ? EXIT_BAD_INPUT : 0;
}
