/* run.h: the steps a stage's main() takes, one call each, in the order it takes them.
 *
 *   int main(int argc, char **argv)
 *   {
 *       my_flags f = defaults;                       the stage's own flags, in a struct of its own
 *       common_args a;
 *       int help = run_parse(argc, argv, &spec, &a, &f);   the shared flags and the stage's (cli.h)
 *       ... the stage's own checks, none of which needs the GPU ...
 *       if (help) return run_help(&spec, &defaults);       --help, once the whole line is good
 *       gpu_info g;
 *       run_open(&a, &g, "01_matmul_add");                  the GPU, the output folder
 *       for each variant asked for:
 *           model = setup(...);
 *           prof_run steps;
 *           if (run_steps(&steps, &a, &g, tag, forward, model, stream, &table)) ...   trace pass
 *           ... the report: run_time (steps, back to back, graph), verdict, check ...
 *           run_finish(&steps, &a, ...);                    --dump, the step CSV and plot, --hold
 *           teardown(model);
 *           run_trace_pass(&a, &spec, &f, flags, variant, argv[0]);   the same run, traced
 *       compare_rounds(...)                                  several variants: compare.h
 *   }
 *
 * common/ never calls a stage back, except the forward it is handed to time or trace: fn(model)
 * enqueues one forward on the model's stream (the C way of handing over a function and its data,
 * as qsort and pthread_create do).
 */
#ifndef RUN_H
#define RUN_H

#include <stddef.h>

#include "cli.h"
#include "dump.h"
#include "gpu.h"
#include "prof.h"

typedef void (*run_forward)(void *model);

/* What one variant's run measured: the comparison's step_us and rel_err columns. */
typedef struct {
    double cpu_us, step_us, fwd_us, graph_us, err;
    double first_cpu_us; /* step 0's CPU time: the cold start when --warmup is 0 */
    double sm_mhz, power_w; /* median SM clock and board power during fwd_us (NaN without NVML) */
    int ran;
} run_result;

/* One kernel of a variant's napkin HBM traffic: what it moves, how many bytes. */
typedef struct {
    const char *kernel, *moves;
    double bytes;
} run_traffic;
enum { RUN_MAX_TRAFFIC = 8 };

/* An op of a forward, for the per-op report and the trace pass's per-kernel table: named as the
 * forward's range names it, rated by its FLOPs against the GEMM ceiling or, with none, by its
 * bytes against the copy ceiling. run(ctx) runs it alone (the per-op report times it). */
typedef struct {
    const char *name;
    double flops, bytes;
    char problem[48]; /* "8192.768.3072" (M.K.N) or "12.6 MB" */
    run_forward run;
    void *ctx;
} run_op;

/* The trace pass's per-kernel table: each kernel under the op (range) that launched it. */
typedef struct {
    const run_op *ops; /* NULL: no problem or rate columns */
    int n_ops;
    dtype_t dtype;
} run_kernel_table;

/* ---- before the GPU ---------------------------------------------------------------------- */

/* The flags (cli.h): exits 1 with one line on a bad one. With spec->all_is_default and no
 * --variant, a->variant is the name that runs them all. Returns 1 when --help was asked for:
 * the caller checks the rest of the line first, then prints it with run_help. */
int run_parse(int argc, char **argv, const stage_spec *spec, common_args *a, void *values);
int run_help(const stage_spec *spec, const void *defaults);
/* The variants --variant asks for: [*first, *last] of the spec's n. */
void run_chosen(const common_args *a, const stage_spec *spec, int *first, int *last);
/* --out and --dump can be made (nothing is made yet): 0, or -1 after the error line. */
int run_check_outputs(const common_args *a);
/* --sweep refuses the shared flags it would ignore and the stage's flags it varies itself
 * (stage_opt.swept), by name: 0, or -1 after the error line. */
int run_check_sweep(const common_args *a, const stage_spec *spec, const char *label);
/* Own flag i (bits of a->given_own) given for a variant it does not apply to: -1 after
 * "--gemm does not apply to --variant merged (it applies to epilogue, graph)", else 0. */
int run_check_applies(const common_args *a, const stage_spec *spec, int i, int applies, const char *applies_to);

/* ---- the GPU ------------------------------------------------------------------------------- */

/* The GPU (exits 2, waived, without one), the output folder (exits 1 when it cannot be made), a
 * line saying what the device is. In the trace pass: turns CUPTI on first, and exits 0 quietly
 * when CUPTI is unavailable (it said why). */
void run_open(const common_args *a, gpu_info *g, const char *stage);

/* ---- one variant --------------------------------------------------------------------------- */

/* Forwards back to back for about 50 ms of GPU work at `us` each, 10 to 200 of them. */
int run_batch_for(double us);
/* The slower of `flops` at the GEMM ceiling and `min_bytes` at the copy ceiling, in us; 0 when
 * a ceiling or min_bytes is unknown. */
double run_floor_us(const gpu_info *g, dtype_t t, double flops, double min_bytes);

/* The schedule around fn(model): --warmup untimed forwards, then the steps (prof.h), under
 * <out>/<tag>. In the trace pass it only records: writes <tag>.json and .txt, prints `table`
 * when given, frees the steps and returns 1. Else 0: the caller reports. */
int run_steps(prof_run *steps, const common_args *a, const gpu_info *g, const char *tag, run_forward fn, void *model,
              cudaStream_t stream, const run_kernel_table *table);
/* The step table, then the forward back to back with the SM clock and power, and (graph set) the
 * same forward captured once in a CUDA graph and replayed (its `kernels` launches): into *r. */
void run_time(run_result *r, const prof_run *steps, run_forward fn, void *model, cudaStream_t stream, int graph,
              int kernels);
/* "HBM traffic per forward (napkin math ...)": the total, then kernel by kernel. */
void run_report_traffic(const run_traffic *rows, int n, double min_bytes);
/* "floor: ... one step is 1.31x it, back to back 1.40x" (nothing when floor_us is 0). */
void run_report_floor(double floor_us, double flops, double min_bytes, const run_result *r);
/* Each op timed alone in a gated step, one table (03's per-op report). */
void run_report_ops(const run_op *ops, int n, cudaStream_t stream, const gpu_info *g, dtype_t t, double forward_us);

/* After the report: --dump (the arrays, the output last and named y_<variant>, after one forward
 * when the check did not run one), the step CSV and plot, the steps freed, --hold. */
void run_finish(prof_run *steps, const common_args *a, const char *tag, run_forward fn, void *model,
                cudaStream_t stream, const run_result *r, dump_array *arrays, int n_arrays, const char *variant);
/* Unless --no-trace: this program again in a fresh process with the trace on, for `variant`
 * alone, with the shared flags as parsed and the own flags whose bits are set in `own` (the
 * values as they are now: a choice measured once and written back into them travels too). */
void run_trace_pass(const common_args *a, const stage_spec *spec, void *values, unsigned own, const char *variant,
                    char *argv0);

#endif
