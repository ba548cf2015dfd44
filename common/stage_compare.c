/* stage_compare.c: several variants of a stage in one table, measured in alternating rounds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clocks.h"
#include "out.h"
#include "plot.h"
#include "prof.h"
#include "stage_parts.h"
#include "stats.h"

void stage_compare(const stage_def *d, int first, int last, const stage_result *r, const common_args *a, void *flags,
                   const gpu_info *g)
{
    const stage_model *md = &d->model;
    void *model = md->setup(a, flags, md->size ? md->size(flags) : 0);
    cudaStream_t stream = md->stream(model);
    int n_rows = last - first + 1 + d->n_references, any_traffic = 0;
    void (*fns[32])(void *);
    const char *names[32];
    int ok[32] = {0};
    char why[512];
    for (int i = 0; i < n_rows && i < 32; i++) {
        int v = first + i;
        int is_variant = v <= last;
        fns[i] = is_variant ? d->variants[v].forward : d->references[v - last - 1].run;
        names[i] = is_variant ? d->variants[v].name : d->references[v - last - 1].name;
        any_traffic |= is_variant && d->variants[v].traffic != NULL;
        ok[i] = !is_variant || (r[v].ran && stage_takes(d, v, flags, a->dtype, 0, why, sizeof why));
    }
    double step_us = INFINITY;
    for (int v = first; v <= last; v++)
        if (r[v].ran && r[v].step_us < step_us) step_us = r[v].step_us;
    int n = stage_batch_for(step_us);
    for (int v = first; v <= last; v++)
        if (d->variants[v].prepare && ok[v - first]) d->variants[v].prepare(model);
    for (int i = 0; i < n_rows; i++) /* warm every path: plans, handles, module loading, graphs */
        for (int w = 0; ok[i] && w < 3; w++) fns[i](model);
    double us[32][STAGE_ROUNDS], mhz[32][STAGE_ROUNDS], watts[32][STAGE_ROUNDS];
    for (int k = 0; k < STAGE_ROUNDS; k++)
        for (int j = 0; j < n_rows; j++) {
            const int i = stats_round_row(k, j, n_rows);
            us[i][k] = mhz[i][k] = watts[i][k] = NAN;
            if (!ok[i]) continue;
            clocks_summary_t clk = {0};
            us[i][k] = prof_back_to_back_clocked_us(fns[i], model, stream, n, 1, &clk);
            if (clk.samples) mhz[i][k] = clk.sm_mhz_median, watts[i][k] = clk.power_w_median;
        }
    double fl = stage_floor_us(d, model, g, a->dtype), flops = md->flops(model), first_us = 0;

    char stem[200] = "", csv[1200], png[1200], title[400], tmp[1300];
    (md->compare_tag ? md->compare_tag : md->tag)(model, a, stem, sizeof stem);
    snprintf(csv, sizeof csv, "%s/%s_%s.csv", a->out_dir, d->all_name ? d->all_name : "comparison", stem);
    snprintf(png, sizeof png, "%.*s.png", (int)(strlen(csv) - 4), csv);
    snprintf(title, sizeof title, "%s, %.150s, %.200s", d->name, stem, g->prop.name);
    printf("\n== comparison: %s, %s\n", stem, g->prop.name);
    printf("fwd_us: per forward, %d issued back to back, median of %d rounds that alternate the rows, every other\n"
           "round backwards and each from another start (the clocks and the heat carry over from row to row; no row\n"
           "always runs after the same one); step_us: GPU time of one gated step;\n"
           "SM MHz, W: median SM clock and board power while the row ran back to back.",
           n, STAGE_ROUNDS);
    if (fl > 0) printf(" Floor: %.2f us.", fl);
    printf("\n%-22s %7s %10s %10s %10s %8s %8s %8s %10s %7s %5s\n", "variant", "kernels", "HBM MB", "fwd_us", "step_us",
           "TFLOP/s", "% floor", "vs first", "rel_err", "SM MHz", "W");
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (f) fprintf(f, "variant,kernels,hbm_mb,fwd_us,step_us,tflops,pct_floor,speedup,floor_us,rel_err,sm_mhz,power_w,"
                      "forwards\n");
    for (int i = 0; i < n_rows; i++) {
        int v = first + i, is_variant = v <= last;
        if (!ok[i]) {
            const char *reason = "did not run";
            if (is_variant && r[v].skipped[0]) reason = r[v].skipped;
            else if (is_variant && !stage_takes(d, v, flags, a->dtype, 0, why, sizeof why)) reason = why;
            printf("%-22s skipped: %s\n", names[i], reason);
            continue;
        }
        double fwd = stats_of(us[i], STAGE_ROUNDS).median;
        if (first_us == 0) first_us = fwd;
        double tflops = flops / (fwd * 1e-6) / 1e12, pct = fl > 0 ? 100.0 * fl / fwd : NAN;
        double bytes = is_variant ? stage_variant_bytes(&d->variants[v], model) : NAN;
        char pct_s[16] = "-", bytes_s[16] = "-", step_s[16] = "-", err_s[16] = "-", kern_s[8] = "-";
        if (fl > 0) snprintf(pct_s, sizeof pct_s, "%.0f%%", pct);
        if (!isnan(bytes)) snprintf(bytes_s, sizeof bytes_s, "%.1f", bytes / 1e6);
        if (is_variant) {
            snprintf(step_s, sizeof step_s, "%.2f", r[v].step_us);
            snprintf(kern_s, sizeof kern_s, "%d", stage_variant_kernels(&d->variants[v], model));
            if (a->check) snprintf(err_s, sizeof err_s, "%.2e", r[v].err);
        }
        double sm = stats_median_sampled(mhz[i], STAGE_ROUNDS), w = stats_median_sampled(watts[i], STAGE_ROUNDS);
        printf("%-22s %7s %10s %10.2f %10s %8.1f %8s %7.2fx %10s %7.0f %5.0f\n", names[i], kern_s, bytes_s, fwd, step_s,
               tflops, pct_s, first_us / fwd, err_s, sm, w);
        if (f)
            fprintf(f, "%s,%s,%.3f,%.3f,%.3f,%.2f,%.2f,%.3f,%.3f,%s,%.0f,%.1f,%d\n", names[i], kern_s, bytes / 1e6, fwd,
                    is_variant ? r[v].step_us : NAN, tflops, pct, first_us / fwd, fl > 0 ? fl : NAN, err_s, sm, w, n);
    }
    if (f && out_commit(f, tmp, csv) == 0) {
        printf("wrote %s\n", csv);
        if (a->plot && any_traffic && plot_run("ladder.gp", csv, png, title) == 0) printf("wrote %s\n", png);
    }
    md->teardown(model);
}

