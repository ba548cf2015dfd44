#include "compare.h"

#include <math.h>
#include <string.h>

#include "clocks.h"
#include "out.h"
#include "plot.h"
#include "stats.h"

enum { ROUNDS = 5, MAX_ROWS = 32 };

void compare_rounds(const compare_row *rows, int n, void *model, cudaStream_t stream, const compare_spec *c,
                    const common_args *a, const gpu_info *g)
{
    double step_us = INFINITY;
    int any_traffic = 0;
    if (n > MAX_ROWS) n = MAX_ROWS;
    for (int i = 0; i < n; i++) {
        if (!rows[i].skipped && rows[i].step_us < step_us) step_us = rows[i].step_us;
        any_traffic |= !isnan(rows[i].bytes);
    }
    const int forwards = run_batch_for(step_us);
    for (int i = 0; i < n; i++) /* warm every path: plans, handles, module loading, graphs */
        for (int w = 0; !rows[i].skipped && w < 3; w++) rows[i].forward(model);
    double us[MAX_ROWS][ROUNDS], mhz[MAX_ROWS][ROUNDS], watts[MAX_ROWS][ROUNDS];
    for (int k = 0; k < ROUNDS; k++)
        for (int j = 0; j < n; j++) {
            const int i = stats_round_row(k, j, n);
            us[i][k] = mhz[i][k] = watts[i][k] = NAN;
            if (rows[i].skipped) continue;
            clocks_summary_t clk = {0};
            us[i][k] = prof_back_to_back_clocked_us(rows[i].forward, model, stream, forwards, 1, &clk);
            if (clk.samples) mhz[i][k] = clk.sm_mhz_median, watts[i][k] = clk.power_w_median;
        }

    char csv[1200], png[1200], title[400], tmp[1300];
    double first_us = 0;
    snprintf(csv, sizeof csv, "%s/%s_%s.csv", a->out_dir, c->prefix, c->stem);
    snprintf(png, sizeof png, "%.*s.png", (int)(strlen(csv) - 4), csv);
    snprintf(title, sizeof title, "%s, %.150s, %.200s", c->stage, c->stem, g->prop.name);
    printf("\n== comparison: %s, %s\n", c->stem, g->prop.name);
    printf("fwd_us: per forward, %d issued back to back, median of %d rounds that alternate the rows, every other\n"
           "round backwards and each from another start (the clocks and the heat carry over from row to row; no row\n"
           "always runs after the same one); step_us: GPU time of one gated step;\n"
           "SM MHz, W: median SM clock and board power while the row ran back to back.",
           forwards, ROUNDS);
    if (c->floor_us > 0) printf(" Floor: %.2f us.", c->floor_us);
    printf("\n%-22s %7s %10s %10s %10s %8s %8s %8s %10s %7s %5s\n", "variant", "kernels", "HBM MB", "fwd_us", "step_us",
           "TFLOP/s", "% floor", "vs first", "rel_err", "SM MHz", "W");
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (f) fprintf(f, "variant,kernels,hbm_mb,fwd_us,step_us,tflops,pct_floor,speedup,floor_us,rel_err,sm_mhz,power_w,"
                      "forwards\n");
    for (int i = 0; i < n; i++) {
        const compare_row *r = &rows[i];
        if (r->skipped) {
            printf("%-22s skipped: %s\n", r->name, r->skipped);
            continue;
        }
        double fwd = stats_of(us[i], ROUNDS).median;
        if (first_us == 0) first_us = fwd;
        double tflops = c->flops / (fwd * 1e-6) / 1e12, pct = c->floor_us > 0 ? 100.0 * c->floor_us / fwd : NAN;
        char pct_s[16] = "-", bytes_s[16] = "-", step_s[16] = "-", err_s[16] = "-", kern_s[16] = "-";
        if (c->floor_us > 0) snprintf(pct_s, sizeof pct_s, "%.0f%%", pct);
        if (!isnan(r->bytes)) snprintf(bytes_s, sizeof bytes_s, "%.1f", r->bytes / 1e6);
        if (!isnan(r->step_us)) snprintf(step_s, sizeof step_s, "%.2f", r->step_us);
        if (r->kernels >= 0) snprintf(kern_s, sizeof kern_s, "%d", r->kernels);
        if (!isnan(r->step_us) && a->check) snprintf(err_s, sizeof err_s, "%.2e", r->err);
        double sm = stats_median_sampled(mhz[i], ROUNDS), w = stats_median_sampled(watts[i], ROUNDS);
        printf("%-22s %7s %10s %10.2f %10s %8.1f %8s %7.2fx %10s %7.0f %5.0f\n", r->name, kern_s, bytes_s, fwd, step_s,
               tflops, pct_s, first_us / fwd, err_s, sm, w);
        if (f)
            fprintf(f, "%s,%s,%.3f,%.3f,%.3f,%.2f,%.2f,%.3f,%.3f,%s,%.0f,%.1f,%d\n", r->name, kern_s, r->bytes / 1e6, fwd,
                    r->step_us, tflops, pct, first_us / fwd, c->floor_us > 0 ? c->floor_us : NAN, err_s, sm, w, forwards);
    }
    if (f && out_commit(f, tmp, csv) == 0) {
        printf("wrote %s\n", csv);
        if (a->plot && any_traffic && plot_run("ladder.gp", csv, png, title) == 0) printf("wrote %s\n", png);
    }
}

int sweep_open(sweep_table *s, const common_args *a, const gpu_info *g, const char *stem, const char *title,
               const char *label, double tolerance)
{
    *s = (sweep_table){.tolerance = tolerance};
    snprintf(s->csv, sizeof s->csv, "%s/%s.csv", a->out_dir, stem);
    snprintf(s->png, sizeof s->png, "%s/%s.png", a->out_dir, stem);
    snprintf(s->title, sizeof s->title, "%s, %.150s", title, g->prop.name);
    s->f = out_open(s->csv, s->tmp, sizeof s->tmp);
    if (!s->f) return -1;
    fprintf(s->f, "%s,cpu_us,gpu_us,back_to_back_us,tflops,rel_err\n", label);
    printf("%7s %10s %10s %14s %9s %10s\n", label, "cpu_us", "gpu_us", "back2back_us", "TFLOP/s", "rel_err");
    return 0;
}

sweep_point sweep_measure(const common_args *a, run_forward fn, void *model, cudaStream_t stream)
{
    const schedule_t sched = {.active = a->given & GIVEN_ACTIVE ? a->sched.active : 10, .warmup = 3};
    prof_run run;
    prof_run_schedule(&run, &sched, stream, fn, model);
    sweep_point p = {prof_active_stats(&run, 0).median, prof_active_stats(&run, 1).median, 0};
    prof_free(&run);
    p.fwd_us = prof_back_to_back_us(fn, model, stream, run_batch_for(p.gpu_us), 3);
    return p;
}

void sweep_row(sweep_table *s, size_t size, const sweep_point *p, double flops, double err)
{
    const double tflops = flops / (p->gpu_us * 1e-6) / 1e12;
    s->failed |= !(err <= s->tolerance);
    printf("%7zu %10.2f %10.2f %14.2f %9.1f %10.2e\n", size, p->cpu_us, p->gpu_us, p->fwd_us, tflops, err);
    fprintf(s->f, "%zu,%.3f,%.3f,%.3f,%.2f,%.3e\n", size, p->cpu_us, p->gpu_us, p->fwd_us, tflops, err);
}

void sweep_skip(size_t size, const char *why) { printf("%7zu skipped: %s\n", size, why); }

int sweep_close(sweep_table *s, int plot, const char *script)
{
    if (out_commit(s->f, s->tmp, s->csv) != 0) return 1;
    printf("wrote %s\n", s->csv);
    if (plot && plot_run(script, s->csv, s->png, s->title) == 0) printf("wrote %s\n", s->png);
    if (s->failed) printf("check: FAILED at one or more sizes (tolerance %.1e)\n", s->tolerance);
    return s->failed;
}
