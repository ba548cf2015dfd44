/* compare.h: several forwards of one stage side by side, and --sweep's table over sizes.
 *
 * A comparison times every row back to back in rounds that alternate the rows (every other round
 * backwards, each from another start), so that the clocks and the heat, which carry over from row
 * to row, favour no row; one table, one CSV, and a bar chart when the rows carry napkin traffic.
 * A sweep runs one forward at each size of a stage's range, one row per size.
 */
#ifndef COMPARE_H
#define COMPARE_H

#include <stdio.h>

#include "run.h"

/* One row: a variant (with the step_us and check of its own run) or a reference (the GEMM
 * alone: kernels -1, step_us and err NaN). */
typedef struct {
    const char *name;
    run_forward forward;
    const char *skipped; /* why it does not run here, or NULL */
    int kernels;         /* per forward; -1: not counted */
    double bytes;        /* napkin HBM traffic; NaN: none */
    double step_us, err;
} compare_row;

/* The table's title and files: "== comparison: <stem>, <GPU>", <out>/<prefix>_<stem>.csv and .png. */
typedef struct {
    const char *stage, *prefix, *stem;
    double flops, floor_us;
} compare_spec;

/* Warms each row that runs (3 forwards: plans, module loading, graph capture), times the rows in
 * alternating rounds on `model`, prints the table and writes the CSV (and the chart with a->plot
 * when any row has bytes). */
void compare_rounds(const compare_row *rows, int n, void *model, cudaStream_t stream, const compare_spec *c,
                    const common_args *a, const gpu_info *g);

/* --sweep, one forward: a row per size, "<label>,cpu_us,gpu_us,back_to_back_us,tflops,rel_err". */
typedef struct {
    FILE *f;
    char csv[1200], png[1200], title[400], tmp[1300];
    double tolerance;
    int failed;
} sweep_table;
typedef struct {
    double cpu_us, gpu_us, fwd_us;
} sweep_point;

/* Opens <out>/<stem>.csv (title: the plot's, the GPU's name appended) and prints the header;
 * -1 when the file cannot be made. */
int sweep_open(sweep_table *s, const common_args *a, const gpu_info *g, const char *stem, const char *title,
               const char *label, double tolerance);
/* One size: the schedule untimed of --warmup, 3 warm-ups, --steps steps (10 by default), then
 * back to back. */
sweep_point sweep_measure(const common_args *a, run_forward fn, void *model, cudaStream_t stream);
void sweep_row(sweep_table *s, size_t size, const sweep_point *p, double flops, double err);
void sweep_skip(size_t size, const char *why);
/* Writes the CSV and the plot (common/plots/<script>); returns 1 when a check failed. */
int sweep_close(sweep_table *s, int plot, const char *script);

#endif
