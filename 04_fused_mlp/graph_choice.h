/* graph_choice.h (04_fused_mlp): which rung the graph rung captures. A graph takes the CPU's
 * launch cost away, so what decides is GPU time, and that ranks the rungs differently from eager
 * timing: at 8 tokens our GEMM beats cuBLAS's launches but not its kernels. */
#ifndef GRAPH_CHOICE_H
#define GRAPH_CHOICE_H

#include <stddef.h>

#include "fused_model.h"
#include "stage.h"

/* A rung the graph may capture, and what its forward launches (the kernels themselves, for a
 * rung whose forward is a graph already). */
typedef struct {
    const stage_variant *rung;
    void (*launches)(void *model);
} graph_candidate;

/* The candidate whose graph replays fastest, of those that take md's problem and run here: each
 * prepared, captured
 * once and replayed in alternating rounds. Says how in report (one line). */
int graph_fastest(fused_mlp *md, const graph_candidate *c, int n, char *report, size_t len);

#endif
