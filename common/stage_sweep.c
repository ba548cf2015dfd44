/* stage_sweep.c: --sweep, the stage's size from sweep.first, doubling, to sweep.last. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "out.h"
#include "plot.h"
#include "prof.h"
#include "stage_parts.h"

/* A sweep's CSV and PNG paths and the plot's title (the GPU's name appended); variant is NULL
 * for the sweep of every variant together. */
typedef struct {
    char csv[1200], png[1200], title[400];
} sweep_files;

static void sweep_files_of(const stage_def *d, const char *variant, const common_args *a, const void *flags,
                           const gpu_info *g, sweep_files *out)
{
    char stem[200];
    d->sweep.names(flags, a, variant, stem, out->title, sizeof stem);
    snprintf(out->csv, sizeof out->csv, "%s/%s.csv", a->out_dir, stem);
    snprintf(out->png, sizeof out->png, "%s/%s.png", a->out_dir, stem);
    size_t used = strlen(out->title);
    snprintf(out->title + used, sizeof out->title - used, ", %.150s", g->prop.name);
}

static int sweep(const stage_def *d, int v, const common_args *a, void *flags, const gpu_info *g)
{
    const stage_model *md = &d->model;
    sweep_files files;
    sweep_files_of(d, d->variants[v].name, a, flags, g, &files);
    const char *csv = files.csv;
    char tmp[1300];
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (!f) return 1;
    fprintf(f, "%s,cpu_us,gpu_us,back_to_back_us,tflops,rel_err\n", d->sweep.label);
    printf("%7s %10s %10s %14s %9s %10s\n", d->sweep.label, "cpu_us", "gpu_us", "back2back_us", "TFLOP/s", "rel_err");
    schedule_t sched = {.wait = 0, .warmup_steps = 0, .active = a->given & GIVEN_ACTIVE ? a->sched.active : 10, .warmup = 3};
    int failed = 0;
    char why[512];
    const stage_variant *sv = &d->variants[v];
    for (size_t x = d->sweep.first; x <= d->sweep.last; x *= 2) {
        if (!stage_takes(d, v, flags, a->dtype, x, why, sizeof why)) {
            printf("%7zu skipped: %s\n", x, why);
            continue;
        }
        void *model = md->setup(a, flags, x);
        cudaStream_t stream = md->stream(model);
        if (sv->runs && !sv->runs(model, why, sizeof why)) {
            printf("%7zu skipped: %s\n", x, why);
            md->teardown(model);
            continue;
        }
        if (sv->prepare) sv->prepare(model);
        prof_run run;
        prof_run_schedule(&run, &sched, stream, sv->forward, model);
        double cpu = prof_active_stats(&run, 0).median, gpu = prof_active_stats(&run, 1).median;
        double b2b = prof_back_to_back_us(sv->forward, model, stream, stage_batch_for(gpu), 3);
        double tflops = md->flops(model) / (gpu * 1e-6) / 1e12;
        double err = a->check ? md->check(model, sv->forward) : 0.0;
        failed |= !(err <= md->tolerance(a->dtype));
        printf("%7zu %10.2f %10.2f %14.2f %9.1f %10.2e\n", x, cpu, gpu, b2b, tflops, err);
        fprintf(f, "%zu,%.3f,%.3f,%.3f,%.2f,%.3e\n", x, cpu, gpu, b2b, tflops, err);
        prof_free(&run);
        md->teardown(model);
    }
    if (out_commit(f, tmp, csv) != 0) return 1;
    printf("wrote %s\n", csv);
    if (a->plot && plot_run(d->sweep.plot, csv, files.png, files.title) == 0) printf("wrote %s\n", files.png);
    if (failed) printf("check: FAILED at one or more sizes (tolerance %.1e)\n", md->tolerance(a->dtype));
    return failed;
}

/* Which variant was fastest at which sizes, one line per variant. */
static void print_wins(const stage_def *d, const int *winner, const size_t *sizes, int n, int first, int last)
{
    printf("fastest variant by %s:\n", d->sweep.label);
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
static int sweep_together(const stage_def *d, int first, int last, const common_args *a, void *flags, const gpu_info *g)
{
    const stage_model *md = &d->model;
    sweep_files files;
    sweep_files_of(d, NULL, a, flags, g, &files);
    const char *csv = files.csv;
    char tmp[1300];
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (!f) return 1;
    fprintf(f, "%s", d->sweep.label);
    printf("us per forward, back to back (median of 3 batches), each checked:\n%7s", d->sweep.label);
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
    for (size_t x = d->sweep.first; x <= d->sweep.last && n < MAX_SIZES; x *= 2, n++) {
        sizes[n] = x;
        winner[n] = -1;
        void *model = md->setup(a, flags, x);
        cudaStream_t stream = md->stream(model);
        double best = INFINITY;
        fprintf(f, "%zu", x);
        printf("%7zu", x);
        for (int v = first; v <= last; v++) {
            const stage_variant *sv = &d->variants[v];
            if (!stage_takes(d, v, flags, a->dtype, x, why, sizeof why) || (sv->runs && !sv->runs(model, why, sizeof why))) {
                fprintf(f, ",NaN");
                printf(" %12s", "-");
                continue;
            }
            void (*fwd)(void *) = sv->forward;
            if (sv->prepare) sv->prepare(model);
            for (int w = 0; w < 3; w++) fwd(model); /* module loading, handles, graph capture */
            double once = prof_back_to_back_us(fwd, model, stream, 3, 1);
            double us = prof_back_to_back_us(fwd, model, stream, stage_batch_for(once), 3);
            if (a->check && !(md->check(model, fwd) <= md->tolerance(a->dtype))) {
                printf("\ncheck: %s FAILED at %zu %s\n", sv->name, x, d->sweep.label);
                failed = 1;
            }
            fprintf(f, ",%.3f", us);
            printf(" %12.2f", us);
            if (us < best) best = us, winner[n] = v;
        }
        double fl = stage_floor_us(d, model, g, a->dtype);
        fprintf(f, fl > 0 ? ",%.3f\n" : ",NaN\n", fl);
        printf(" %10.2f  %s\n", fl, winner[n] >= 0 ? d->variants[winner[n]].name : "-");
        md->teardown(model);
    }
    if (out_commit(f, tmp, csv) != 0) return 1;
    printf("wrote %s\n", csv);
    print_wins(d, winner, sizes, n, first, last);
    if (a->plot && plot_run(d->sweep.together_plot, csv, files.png, files.title) == 0) printf("wrote %s\n", files.png);
    if (failed) printf("check: FAILED at one or more sizes (tolerance %.1e)\n", md->tolerance(a->dtype));
    return failed;
}

int stage_sweep_run(const stage_def *d, int first, int last, const common_args *a, void *flags, const gpu_info *g)
{
    if (d->sweep.together_plot && last > first) return sweep_together(d, first, last, a, flags, g);
    int failed = 0;
    for (int v = first; v <= last; v++) failed |= sweep(d, v, a, flags, g);
    return failed;
}
