/* stage.h: the one driver every stage hands its variants to.
 *
 * A stage's main.c holds the lesson: its forward variants and one table of them. Everything
 * else a run does is here, the same for every stage: the flags, the checks that need no GPU,
 * the schedule and its timing (gated steps, back to back, CUDA graph), the check against the
 * CPU reference, the report, the trace pass, --sweep, --dump, the step CSV and plot, and, when
 * several variants run, one comparison measured in alternating rounds.
 *
 *   static const stage_variant variants[] = {
 *       {"eager", "two kernels", "cublasLtMatmul -> GEMM; launch_add -> add", 2, forward_eager},
 *       ...
 *   };
 *   int main(int argc, char **argv) { return stage_main(argc, argv, &my_stage); }
 *
 * A stage's `model` is whatever its setup returns; the driver only passes it back.
 */
#ifndef STAGE_H
#define STAGE_H

#include <stddef.h>

#include "cli.h"
#include "gpu.h"

typedef struct {
    const char *name;
    const char *help;     /* one line: what it does */
    const char *launches; /* what one forward launches, for the report */
    int kernels;          /* GPU operations per forward */
    void (*forward)(void *model);
} stage_variant;

/* An array --dump writes as <dir>/<name>.npy. */
typedef struct {
    char name[32];
    const void *dev;
    int ndim;
    size_t shape[3];
} stage_array;

/* A reference row of the comparison (e.g. the GEMM alone): timed in the same rounds. */
typedef struct {
    const char *name, *help;
    void (*run)(void *model);
} stage_reference;

/* The ops of the forward, each timed alone (03's per-op report), and the rows of the trace
 * pass's per-kernel table (a kernel belongs to the op whose range launched it). An op is rated
 * by its FLOPs against the GEMM ceiling, or, with none, by its bytes against the copy ceiling. */
typedef struct {
    const char *const *names; /* as the forward's ranges name them */
    int n;
    void (*run)(void *model, int op);
    double (*flops)(const void *model, int op);
    double (*bytes)(const void *model, int op);
    void (*problem)(const void *model, int op, char *buf, size_t len); /* "8192.768.3072" or "12.6 MB" */
} stage_ops;

typedef struct {
    double cpu_us, step_us, fwd_us, graph_us, err;
    double first_cpu_us; /* step 0's CPU time: the cold start when --warmup is 0 */
    double sm_mhz, power_w; /* median SM clock and board power during fwd_us (NaN without NVML) */
    int ran;
    char skipped[256]; /* why it did not run, when the stage's runs() said so */
} stage_result;

typedef struct stage_def {
    const char *name, *summary;
    const stage_variant *variants;
    int n_variants;
    const char *all_name; /* the --variant that runs them all ("all" when NULL) */
    int all_is_default;   /* with no --variant, run them all */
    stage_opt *opts;
    int n_opts;
    /* 1 when own flag `opt` matters to `variant` (may be NULL: every flag to every variant). A
     * flag given with one variant it does not matter to is refused; the trace pass of a
     * variant is given only the flags that matter to it. */
    int (*opt_for)(int opt, int variant);

    /* No GPU needed: shape limits, overflow, whether `variant` takes this problem. Returns 0;
     * 1 when the problem itself is bad; -1 when only this variant cannot take it (a run of all
     * variants skips it). With one line in why. */
    int (*validate)(const common_args *a, int variant, char *why, size_t len);
    /* Allocates and fills the model; sweep_value is 0 for the flags' shape, else the swept size. */
    void *(*setup)(const common_args *a, size_t sweep_value);
    void (*teardown)(void *model);
    /* After setup, with the GPU known (may be NULL): 1 when `variant` runs this model on this
     * device, else 0 with one line in why (a run of all variants skips it; asked for by name,
     * exit 1). Then prepare (may be NULL) makes what the variant needs besides its forward (a
     * weight stored another way, a choice measured once), before its first forward. */
    int (*runs)(const void *model, int variant, char *why, size_t len);
    void (*prepare)(void *model, int variant);
    /* Poisons the outputs, runs forward once, compares with the CPU reference: relative error. */
    double (*check)(void *model, void (*forward)(void *model));
    double (*tolerance)(dtype_t t);
    double (*flops)(const void *model);
    double (*min_bytes)(const void *model);                /* x, weights, y once */
    double (*variant_bytes)(const void *model, int variant); /* napkin HBM bytes; NULL: none */
    int (*variant_kernels)(const void *model, int variant); /* after prepare; NULL: the table's */
    void (*tag)(const void *model, const common_args *a, char *buf, size_t len); /* file names */
    void (*compare_tag)(const void *model, const common_args *a, char *buf, size_t len); /* NULL: tag */
    cudaStream_t (*stream)(const void *model);
    int (*arrays)(const void *model, stage_array *out, int max); /* --dump, the output last */
    void (*describe)(const void *model);                         /* a line of shapes; may be NULL */
    /* After the standard report of a variant (may be NULL). */
    void (*report)(void *model, int variant, const stage_result *r, const gpu_info *g, const common_args *a);
    const stage_reference *references; /* extra rows of the comparison */
    int n_references;
    const stage_ops *ops; /* NULL: no per-op report, no op column in the kernel table */
    int graph;      /* also time the forward captured as a CUDA graph */
    int kernel_table; /* trace pass: the kernels under each range */

    /* --sweep: sweep_value from sweep_first, doubling, to sweep_last. */
    const char *sweep_label;
    size_t sweep_first, sweep_last;
    const char *sweep_plot; /* common/plots/<name> */
    /* variant is NULL for a sweep of several variants together (below) */
    void (*sweep_names)(const common_args *a, const char *variant, char *stem, char *title, size_t len);
    /* Set: a sweep of all variants is one table, time per forward back to back of each variant
     * at each size (NaN where it does not run), the floor, the fastest at each size; plotted
     * with common/plots/<sweep_together_plot>. NULL: each variant swept on its own. */
    const char *sweep_together_plot;

    /* A stage's own action that needs no GPU (02's --explain-views), run right after the flags
     * are parsed: returns -1 when the flags ask for none, else the exit status. May be NULL. */
    int (*no_gpu_action)(const common_args *a);
} stage_def;

int stage_main(int argc, char **argv, const stage_def *def);

/* A stage's main. A stage whose forwards another stage reuses (03's eager forward, in 04) is
 * built a second time with -DSTAGE_NO_MAIN for that stage to link. */
#ifdef STAGE_NO_MAIN
#define STAGE_MAIN(def)
#else
#define STAGE_MAIN(def) \
    int main(int argc, char **argv) { return stage_main(argc, argv, &(def)); }
#endif

#endif
