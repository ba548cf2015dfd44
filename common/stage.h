/* stage.h: the one driver every stage hands its variants to.
 *
 * A stage's main.c holds the lesson: its forward variants and one table of them, one row per
 * variant with everything the driver needs to know about it. Everything else a run does is
 * here, the same for every stage: the flags, the checks that need no GPU, the schedule and its
 * timing (gated steps, back to back, CUDA graph), the check against the CPU reference, the
 * report, the trace pass, --sweep, --dump, the step CSV and plot, and, when several variants
 * run, one comparison measured in alternating rounds (stage_compare.c, stage_sweep.c).
 *
 *   static const stage_variant variants[] = {
 *       {"eager", "two kernels", "cublasLtMatmul -> GEMM; launch_add -> add", 2, forward_eager},
 *       ...
 *   };
 *   int main(int argc, char **argv) { return stage_main(argc, argv, &my_stage); }
 *
 * The stage's own flags fill one struct of its own (stage_flags); the driver holds it for the
 * whole program and hands it to setup, which builds the model from it. A stage's `model` is
 * whatever its setup returns; the driver only passes it back.
 */
#ifndef STAGE_H
#define STAGE_H

#include <stddef.h>

#include "cli.h"
#include "gpu.h"

/* One row of a variant's napkin HBM traffic: a kernel, what it moves, how many bytes. */
typedef struct {
    const char *kernel, *moves;
    double bytes;
} stage_traffic;
enum { STAGE_MAX_TRAFFIC = 8 };

typedef struct {
    double cpu_us, step_us, fwd_us, graph_us, err;
    double first_cpu_us; /* step 0's CPU time: the cold start when --warmup is 0 */
    double sm_mhz, power_w; /* median SM clock and board power during fwd_us (NaN without NVML) */
    int ran;
    char skipped[256]; /* why it did not run, when the variant's runs() said so */
} stage_result;

/* A variant's dtypes, as bits: STAGE_DTYPE(DTYPE_BF16) | STAGE_DTYPE(DTYPE_FP16). */
#define STAGE_DTYPE(t) (1u << (t))

/* One row of a stage's table: a variant and its facts. Only the first five are required; the
 * rest are zero (anything, nothing) unless the variant differs. */
typedef struct {
    const char *name;
    const char *help;     /* one line: what it does */
    const char *launches; /* what one forward launches, for the report */
    int kernels;          /* GPU operations per forward (with traffic set: its rows' count) */
    void (*forward)(void *model);

    /* What it takes, checked before the GPU: a run of all variants skips a variant that does
     * not take the problem; one asked for by name exits 1 saying why. */
    const char *takes;         /* the stage's own flags that matter to this variant alone ("gemm graph-of");
                                * a flag no row names matters to every variant */
    unsigned dtypes;           /* STAGE_DTYPE bits; 0: every dtype */
    size_t min_size, max_size; /* of the stage's size (stage_model.size, e.g. tokens); 0: no bound */
    int (*accepts)(const void *flags, dtype_t t, size_t size, char *why, size_t len); /* 1, or 0 and why */

    /* After setup, with the GPU known: 1 when it runs this model on this device, else 0 and why. */
    int (*runs)(const void *model, char *why, size_t len);
    /* Then, before its first forward: what it needs besides the forward (a weight stored another
     * way, a choice measured once). */
    void (*prepare)(void *model);
    /* Napkin HBM traffic, kernel by kernel: writes at most STAGE_MAX_TRAFFIC rows, returns their
     * count (the kernels per forward). */
    int (*traffic)(const void *model, stage_traffic *rows);
    /* Lines of its own after the standard report. */
    void (*report)(void *model, const stage_result *r, const gpu_info *g, const common_args *a);
} stage_variant;

/* A reference row of the comparison (e.g. the GEMM alone): timed in the same rounds. */
typedef struct {
    const char *name, *help;
    void (*run)(void *model);
} stage_reference;

/* An array --dump writes as <dir>/<name>.npy. */
typedef struct {
    char name[32];
    const void *dev;
    int ndim;
    size_t shape[3];
} stage_array;

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

/* The stage's own flags: opts[i].offset is where flag i's value lives in a struct of `size`
 * bytes, which starts as a copy of `defaults`. */
typedef struct {
    const stage_opt *opts;
    int n;
    size_t size;
    const void *defaults;
} stage_flags;

/* What the driver does with a model. `flags` is the stage's struct of flag values. */
typedef struct {
    /* No GPU: 0, or 1 with one line in why when the flags' problem is impossible (overflow,
     * limits, a flag's text that means nothing). May be NULL. */
    int (*validate)(const void *flags, const common_args *a, char *why, size_t len);
    size_t (*size)(const void *flags); /* the stage's size at the flags' shape (what --sweep varies) */
    /* Allocates and fills the model; size is size(flags), or the swept size. The model may keep
     * `flags` and record in it what it measured once (so that later models of the run, and the
     * trace pass, make the same choice). */
    void *(*setup)(const common_args *a, void *flags, size_t size);
    void (*teardown)(void *model);
    /* Poisons the outputs, runs forward once, compares with the CPU reference: relative error. */
    double (*check)(void *model, void (*forward)(void *model));
    double (*tolerance)(dtype_t t);
    double (*flops)(const void *model);
    double (*min_bytes)(const void *model); /* x, weights, y once; may be NULL */
    cudaStream_t (*stream)(const void *model);
    void (*tag)(const void *model, const common_args *a, char *buf, size_t len);         /* file names */
    void (*compare_tag)(const void *model, const common_args *a, char *buf, size_t len); /* NULL: tag */
    int (*arrays)(const void *model, stage_array *out, int max); /* --dump, the output last */
    void (*describe)(const void *model);                         /* a line of shapes; may be NULL */
    /* After each variant's report, lines the stage prints for every variant (may be NULL). */
    void (*report)(void *model, int variant, const stage_result *r, const gpu_info *g, const common_args *a);
} stage_model;

/* --sweep: the size from first, doubling, to last; each variant swept on its own and plotted
 * with common/plots/<plot>, or, with together_plot set and several variants, all of them in one
 * table (time per forward back to back at each size, the floor, the fastest) and one plot. */
typedef struct {
    const char *label; /* "tokens" */
    size_t first, last;
    const char *plot, *together_plot;
    /* variant is NULL for the sweep of several variants together */
    void (*names)(const void *flags, const common_args *a, const char *variant, char *stem, char *title, size_t len);
} stage_sweep;

typedef struct stage_def {
    const char *name, *summary;
    const stage_variant *variants;
    int n_variants;
    const char *all_name; /* the --variant that runs them all ("all" when NULL) */
    int all_is_default;   /* with no --variant, run them all */
    stage_flags flags;
    stage_model model;
    const stage_reference *references; /* extra rows of the comparison */
    int n_references;
    const stage_ops *ops; /* NULL: no per-op report, no op column in the kernel table */
    int graph;            /* also time the forward captured as a CUDA graph */
    int kernel_table;     /* trace pass: the kernels under each range */
    stage_sweep sweep;
    /* A stage's own action that needs no GPU (02's --explain-views), run right after the flags
     * are parsed: returns -1 when the flags ask for none, else the exit status. May be NULL. */
    int (*no_gpu_action)(const void *flags, const common_args *a);
} stage_def;

int stage_main(int argc, char **argv, const stage_def *def);

/* Whether variant v takes the problem (its dtypes, size range and accepts; size 0: not checked
 * against the range, unit: what size counts, for why): 1, or 0 with one line in why. For a
 * variant that stands for another (04's graph rung asks of the rung it captures). */
int stage_variant_takes(const stage_variant *v, const char *unit, const void *flags, dtype_t t, size_t size,
                        char *why, size_t len);
/* The variant's kernels per forward and napkin HBM bytes (NaN without a traffic hook). */
int stage_variant_kernels(const stage_variant *v, const void *model);
double stage_variant_bytes(const stage_variant *v, const void *model);

#endif
