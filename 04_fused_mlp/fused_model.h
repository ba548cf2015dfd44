/* fused_model.h (04_fused_mlp): the model the rungs share, the stage's flags, and what the shared
 * driver (common/stage.h) needs besides the rungs' table in main.c: setup, the check, napkin
 * math of each rung's HBM traffic, file names. The forwards themselves are in main.c; the graph
 * rung's choice in graph_choice.c; the --gemm all table in gemm_table.c.
 */
#ifndef FUSED_MODEL_H
#define FUSED_MODEL_H

#include "../03_simple_mlp/mlp.h"
#include "../03_simple_mlp/mlp_stage.h"
#include "stage.h"

/* The flags: 03's shape first (03's hooks read it), then the two of the ladder's own. */
typedef struct {
    mlp_shape shape;
    const char *gemm;     /* --gemm: NULL or "auto" (chosen by measurement), "all", or a version number */
    const char *graph_of; /* --graph-of: NULL or "fastest", or the name of the rung the graph captures */
    /* Set when --graph-of fastest was measured at the flags' shape: graph_of then names the rung
     * it measured, so that every later model of the run and the trace pass capture that rung. */
    int graph_of_measured;
} fused_flags;
extern const stage_opt fused_opts[MLP_N_SHAPE_OPTS + 2];
extern const fused_flags fused_defaults;

typedef struct {
    mlp_t mlp;          /* 03's model: x, the weights, the intermediates, y, the stream, its plans */
    fused_flags *flags; /* the run's flags (the graph rung records its measured choice there) */
    int gemm_version;   /* the epilogue rung's GEMM (gemm_geglu.h), chosen by its prepare */
    char gemm_choice[400]; /* how, for the report */
    /* merged: [Wg; Wu] as one [2 * hidden, dim] weight, its GEMM's output [M, 2 * hidden], and
     * that GEMM's cuBLASLt plan (made by the first merged forward) */
    void *wgu, *gu;
    cublasLtHandle_t lt;
    lt_plan plan_gate_up;
    /* graph: the rung it captures (-1 until its prepare chose), how it chose, the graphs (each
     * made by its rung's first forward) */
    int graph_of;
    char graph_choice[600];
    cudaGraphExec_t graph, decode_graph;
} fused_mlp;

/* --gemm: 0 for auto, -1 for all, else the version; -2 when the text names none of them. */
enum { GEMM_AUTO = 0, GEMM_ALL = -1, GEMM_NONE = -2 };
int fused_gemm_flag(const fused_flags *f);

int fused_validate(const void *flags, const common_args *a, char *why, size_t len);
void *fused_setup(const common_args *a, void *flags, size_t tokens);
void fused_free(void *model);
double fused_check(void *model, void (*forward)(void *model));
double fused_flops(const void *model);
double fused_min_bytes(const void *model);
cudaStream_t fused_stream(const void *model);
void fused_tag(const void *model, const common_args *a, char *buf, size_t len);
void fused_ladder_tag(const void *model, const common_args *a, char *buf, size_t len);
int fused_arrays(const void *model, stage_array *out, int max);
void fused_describe(const void *model);
void fused_sweep_names(const void *flags, const common_args *a, const char *rung, char *stem, char *title,
                       size_t len);

/* merged: builds [Wg; Wu] (Wg's rows then Wu's) once, as a model would store it, and its output. */
void fused_make_merged_weight(fused_mlp *md);

/* The napkin HBM traffic of each rung, kernel by kernel (every operand of every kernel read or
 * written once; a GEMM re-reads its tiles from L2, not HBM). */
int fused_traffic_eager(const void *model, stage_traffic *t);
int fused_traffic_fused_geglu(const void *model, stage_traffic *t);
int fused_traffic_merged(const void *model, stage_traffic *t);
int fused_traffic_epilogue(const void *model, stage_traffic *t);
int fused_traffic_decode(const void *model, stage_traffic *t);

/* The epilogue rung's facts: which problems our GEMM takes (--gemm N's version, or any), whether
 * it runs here, and its prepare: the version it runs with (md->gemm_version, and how it was
 * chosen in md->gemm_choice). The decode rung's: the shapes its grid takes, the GPU it needs. */
int fused_epilogue_accepts(const void *flags, dtype_t t, size_t tokens, char *why, size_t len);
int fused_epilogue_runs(const void *model, char *why, size_t len);
void fused_epilogue_prepare(void *model);
int fused_decode_accepts(const void *flags, dtype_t t, size_t tokens, char *why, size_t len);
int fused_decode_runs(const void *model, char *why, size_t len);

#endif
