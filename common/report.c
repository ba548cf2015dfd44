#include "report.h"

#include <stdio.h>

#include "plot.h"

void report_steps(const prof_run *r)
{
    printf("%5s  %-13s %-7s %12s %12s\n", "step", "label", "phase", "cpu_us", "gpu_us");
    for (int s = 0; s < r->n_steps; s++) {
        char label[32];
        snprintf(label, sizeof label, "ProfilerStep#%d", s);
        printf("%5d  %-13s %-7s %12.2f %12.2f%s\n", s, label, prof_phase_name(prof_phase(r, s)),
               r->cpu_us[s], r->gpu_us[s],
               r->traced ? "" : r->gated[s] ? "" : "  (gpu_us includes CPU gaps: first step)");
    }
    /* one line per early phase: cold first steps and recorded ones differ by orders; the
     * phases are consecutive runs of steps, wait first */
    int first = 0;
    for (phase_t p = PHASE_WAIT; p < PHASE_ACTIVE; p++) {
        int n = p == PHASE_WAIT ? r->sched.wait : r->sched.warmup_steps;
        if (n)
            printf("%-6s steps (%d): cpu_us median %.2f, gpu_us median %.2f\n", prof_phase_name(p), n,
                   stats_of(r->cpu_us + first, (size_t)n).median, stats_of(r->gpu_us + first, (size_t)n).median);
        first += n;
    }
    stats_t c = prof_active_stats(r, 0), g = prof_active_stats(r, 1);
    printf("active steps (%zu): cpu_us median %.2f (min %.2f, mean %.2f, max %.2f, sd %.2f)\n", c.n,
           c.median, c.min, c.mean, c.max, c.stddev);
    printf("                   gpu_us median %.2f (min %.2f, mean %.2f, max %.2f, sd %.2f)\n",
           g.median, g.min, g.mean, g.max, g.stddev);
}

void report_verdict(double cpu_us, double gpu_us)
{
    if (cpu_us > gpu_us)
        printf("verdict: overhead-bound: the CPU needs %.2f us to issue a step the GPU runs in %.2f us"
               " (the GPU would idle %.0f%% of each step)\n",
               cpu_us, gpu_us, 100.0 * (1.0 - gpu_us / cpu_us));
    else
        printf("verdict: compute-bound: the GPU needs %.2f us per step, the CPU issues it in %.2f us"
               " and runs ahead\n",
               gpu_us, cpu_us);
}

/* How a report names where a ceiling comes from: this machine's measurement, or the reference
 * figure of its model (common/ceilings.h). */
static const char *ceiling_origin(const gpu_info *g)
{
    return g->ceilings_measured ? "measured on" : "a reference figure for";
}

void report_throughput(const gpu_info *g, dtype_t t, double flops, double gpu_us)
{
    double tflops = flops / (gpu_us * 1e-6) / 1e12;
    double ceiling = gpu_gemm_ceiling(g, t);
    printf("throughput: %.3f GFLOP per step in %.2f us = %.1f TFLOP/s", flops / 1e9, gpu_us, tflops);
    if (ceiling > 0)
        printf(" (%.1f%% of the %.0f TFLOP/s %s GEMM ceiling, %s %s)\n", 100.0 * tflops / ceiling, ceiling,
               dtype_name(t), ceiling_origin(g), g->prop.name);
    else
        printf(" (no measured %s ceiling for %s)\n", dtype_name(t), g->prop.name);
}

void report_bandwidth(const gpu_info *g, double bytes, double gpu_us)
{
    double gbps = bytes / (gpu_us * 1e-6) / 1e9;
    printf("bandwidth: %.1f MB in %.2f us = %.0f GB/s", bytes / 1e6, gpu_us, gbps);
    if (g->copy_gbps > 0)
        printf(" (%.0f%% of the %.0f GB/s copy ceiling, %s %s)\n", 100.0 * gbps / g->copy_gbps, g->copy_gbps,
               ceiling_origin(g), g->prop.name);
    else
        printf("\n");
}

int report_check(double err, double tolerance)
{
    int ok = err <= tolerance; /* NaN compares false: fails */
    printf("check: rel. Frobenius error %.2e vs the CPU reference in double (tolerance %.0e): %s\n",
           err, tolerance, ok ? "PASS" : "FAIL");
    return ok;
}

void report_step_files(const prof_run *r, const char *base, const char *title, int plot)
{
    char csv[1024], png[1024];
    snprintf(csv, sizeof csv, "%s.csv", base);
    snprintf(png, sizeof png, "%s.png", base);
    if (prof_write_csv(r, csv) != 0) return;
    printf("wrote %s\n", csv);
    if (plot && plot_run("steps.gp", csv, png, title) == 0) printf("wrote %s\n", png);
}
