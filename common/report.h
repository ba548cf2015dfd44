/* report.h: the lines every stage prints, so every stage reads the same way. */
#ifndef REPORT_H
#define REPORT_H

#include "dtype.h"
#include "gpu.h"
#include "prof.h"

/* Per-step table (step, phase, cpu_us, gpu_us) and the active-step statistics. */
void report_steps(const prof_run *r);
/* "overhead-bound" when the CPU needs longer to issue a step than the GPU needs to run it,
 * "compute-bound" otherwise, with both numbers. */
void report_verdict(double cpu_us, double gpu_us);
/* Achieved TFLOP/s, and the share of the GEMM ceiling measured on this GPU where we have one. */
void report_throughput(const gpu_info *g, dtype_t t, double flops, double gpu_us);
/* Achieved GB/s against the measured copy ceiling. */
void report_bandwidth(const gpu_info *g, double bytes, double gpu_us);
/* The run's per-step CSV as <base>.csv and, when plot is set, its figure as <base>.png
 * (common/plots/steps.gp, titled `title`); says what it wrote. */
void report_step_files(const prof_run *r, const char *base, const char *title, int plot);
/* "check: rel. Frobenius error ... PASS|FAIL"; returns 1 on pass. */
int report_check(double err, double tolerance);

#endif
