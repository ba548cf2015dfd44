/* graph_choice.h (04_fused_mlp): which rung the graph rung captures. A graph takes the CPU's
 * launch cost away, so what decides is GPU time, and that ranks the rungs differently from eager
 * timing: at 8 tokens our GEMM beats cuBLAS's launches but not its kernels. */
#ifndef GRAPH_CHOICE_H
#define GRAPH_CHOICE_H

#include <stddef.h>

#include "fused_model.h"

/* A rung the graph may capture: its name, what its forward launches (the kernels themselves, for
 * a rung whose forward is a graph already), and whether it takes md's problem and runs here (the
 * caller has prepared those that do). */
typedef struct {
    const char *name;
    run_forward launches;
    int runs;
} graph_candidate;

/* The candidate whose graph replays fastest, of those that run: each captured once and replayed
 * in alternating rounds. Says how in report (one line). */
int graph_fastest(fused_mlp *md, const graph_candidate *c, int n, char *report, size_t len);

#endif
