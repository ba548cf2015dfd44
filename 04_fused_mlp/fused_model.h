/* fused_model.h (04_fused_mlp): the model the rungs share, the stage's flags, setup, the check,
 * the napkin math of each rung's HBM traffic, and which problems the epilogue and decode rungs
 * take. The forwards themselves are in main.c; the graph rung's choice in graph_choice.c; the
 * --gemm all table in gemm_table.c.
 */
#ifndef FUSED_MODEL_H
#define FUSED_MODEL_H

#include "../03_simple_mlp/mlp.h"
#include "../03_simple_mlp/mlp_shape.h"
#include "run.h"

/* The flags: 03's shape first, then the two of the ladder's own. */
typedef struct {
    mlp_shape shape;
    const char *gemm;     /* --gemm: NULL or "auto" (chosen by measurement), "all", or a version number */
    const char *graph_of; /* --graph-of: NULL or "fastest", or the name of the rung the graph captures */
    /* Set when --graph-of fastest was measured at the flags' shape: graph_of then names the rung
     * it measured, so that every later model of the run and the trace pass capture that rung. */
    int graph_of_measured;
} fused_flags;

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

/* The shape (mlp_shape.h), then --gemm's text: 1 with one line in why, else 0. */
int fused_validate(const fused_flags *f, const common_args *a, char *why, size_t len);
/* 03's model at `tokens` tokens of the flags' shape; the model keeps `f`, where the graph rung
 * records the rung it measured (so that later models of the run and the trace pass capture it). */
fused_mlp *fused_setup(const common_args *a, fused_flags *f, size_t tokens);
void fused_free(fused_mlp *md);
/* mlp_check on 03's buffers, the merged output poisoned too. */
double fused_check(fused_mlp *md, run_forward forward);
/* ladder_<batch>x<seq>_<dim>x<hidden>_<dtype>.csv: the names the docs' figures are made from */
void fused_ladder_tag(const fused_mlp *md, const common_args *a, char *buf, size_t len);

/* merged: builds [Wg; Wu] (Wg's rows then Wu's) once, as a model would store it, and its output. */
void fused_make_merged_weight(fused_mlp *md);

/* The napkin HBM traffic of each rung, kernel by kernel (every operand of every kernel read or
 * written once; a GEMM re-reads its tiles from L2, not HBM): fills t, returns the kernels. */
int fused_traffic_eager(const fused_mlp *md, run_traffic *t);
int fused_traffic_fused_geglu(const fused_mlp *md, run_traffic *t);
int fused_traffic_merged(const fused_mlp *md, run_traffic *t);
int fused_traffic_epilogue(const fused_mlp *md, run_traffic *t);
int fused_traffic_decode(const fused_mlp *md, run_traffic *t);

/* The epilogue rung's facts: which problems our GEMM takes (--gemm N's version, or any), whether
 * it runs here, and its prepare: the version it runs with (md->gemm_version, and how it was
 * chosen in md->gemm_choice). The decode rung's: the shapes its grid takes, the GPU it needs. */
int fused_epilogue_accepts(const fused_flags *f, dtype_t t, size_t tokens, char *why, size_t len);
int fused_epilogue_runs(const fused_mlp *md, char *why, size_t len);
void fused_epilogue_prepare(fused_mlp *md);
int fused_decode_accepts(const fused_flags *f, dtype_t t, size_t tokens, char *why, size_t len);
int fused_decode_runs(char *why, size_t len);

#endif
