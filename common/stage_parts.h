/* stage_parts.h: what the driver's three files share (stage.c runs one variant and main,
 * stage_compare.c the comparison of several, stage_sweep.c --sweep). Not for stages. */
#ifndef STAGE_PARTS_H
#define STAGE_PARTS_H

#include "stage.h"

enum { STAGE_ROUNDS = 5 };

/* The floor of the model's problem: the slower of its FLOPs at the GEMM ceiling and its least
 * bytes at the copy ceiling, in us; 0 when a ceiling or min_bytes is unknown. */
double stage_floor_us(const stage_def *d, const void *model, const gpu_info *g, dtype_t t);
/* Forwards back to back for about 50 ms of GPU work at `us` each, 10 to 200 of them. */
int stage_batch_for(double us);
/* Whether variant v takes the flags' problem at `size` (0: the flags' size, not checked against
 * the variant's size range, as --sweep sets it itself): 1, or 0 with why. */
int stage_takes(const stage_def *d, int v, const void *flags, dtype_t t, size_t size, char *why, size_t len);

void stage_compare(const stage_def *d, int first, int last, const stage_result *r, const common_args *a, void *flags,
                   const gpu_info *g);
/* --sweep of variants first..last; returns 1 when a check failed. */
int stage_sweep_run(const stage_def *d, int first, int last, const common_args *a, void *flags, const gpu_info *g);

#endif
