/* fused_stage.h (04_fused_mlp): the model the rungs share, and what the shared driver
 * (common/stage.h) needs to run them: flags, setup, which rung runs where, napkin math of each
 * rung's HBM traffic, the graph rung's choice, the table of GEMM versions. The forwards
 * themselves are in main.c.
 */
#ifndef FUSED_STAGE_H
#define FUSED_STAGE_H

#include "../03_simple_mlp/mlp.h"
#include "../03_simple_mlp/mlp_stage.h"
#include "stage.h"

/* The rungs, in ladder order: the index of each in fused_rungs (main.c). */
enum { EAGER, FUSED_GEGLU, MERGED, EPILOGUE, GRAPH, DECODE, N_RUNGS };
extern const stage_variant fused_rungs[N_RUNGS];

typedef struct {
    mlp_t mlp;        /* 03's model: x, the weights, the intermediates, y, the stream, its plans */
    int gemm_version; /* the epilogue rung's GEMM (gemm_geglu.h) */
    /* merged: [Wg; Wu] as one [2 * hidden, dim] weight, its GEMM's output [M, 2 * hidden], and
     * that GEMM's cuBLASLt plan (made by the first merged forward) */
    void *wgu, *gu;
    cublasLtHandle_t lt;
    lt_plan plan_gate_up;
    /* graph: the rung it captures; each graph made by its rung's first forward */
    int graph_of;
    cudaGraphExec_t graph, decode_graph;
} fused_mlp;

/* The merged rung's GEMM, [gate | up] = x [Wg; Wu]^T through one cuBLASLt plan (main.c); also
 * the cuBLAS row of the --gemm all table. */
void gate_up_gemm(fused_mlp *md);

/* --batch, --seq, --dim, --hidden (03's), --gemm N|all, --graph-of RUNG|fastest */
extern stage_opt fused_opts[6];
extern const stage_def stage_04; /* main.c */
int fused_opt_for(int opt, int rung);
int fused_validate(const common_args *a, int rung, char *why, size_t len);
void *fused_setup(const common_args *a, size_t tokens);
void fused_free(void *model);
int fused_runs(const void *model, int rung, char *why, size_t len);
void fused_prepare(void *model, int rung);
double fused_check(void *model, void (*forward)(void *model));
double fused_flops(const void *model);
double fused_min_bytes(const void *model);
double fused_rung_bytes(const void *model, int rung);
int fused_rung_kernels(const void *model, int rung);
cudaStream_t fused_stream(const void *model);
void fused_tag(const void *model, const common_args *a, char *buf, size_t len);
void fused_ladder_tag(const void *model, const common_args *a, char *buf, size_t len);
int fused_arrays(const void *model, stage_array *out, int max);
void fused_describe(const void *model);
void fused_sweep_names(const common_args *a, const char *rung, char *stem, char *title, size_t len);
/* After a rung's report: its traffic kernel by kernel; after epilogue's, with --gemm all, the
 * table of GEMM versions against cuBLAS. */
void fused_report(void *model, int rung, const stage_result *r, const gpu_info *g, const common_args *a);

#endif
