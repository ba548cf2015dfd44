/* decode.h (04_fused_mlp): the decode rung's kernels. The launchers enqueue on `stream` and
 * return at once.
 */
#ifndef FUSED_MLP_DECODE_H
#define FUSED_MLP_DECODE_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The decode rung: weight-streaming kernels for a few tokens (see decode.cu).
 *   launch_decode_gate_up:  m[t, j] = gelu(x_t . Wg_j) * (x_t . Wu_j)   m is [tokens, hidden]
 *   launch_decode_down:     y[t, d] = m_t . Wd_d                       y is [tokens, dim]
 * for t < tokens; x and m are read over decode_padded_rows(tokens) rows (below).
 * decode_supported says whether they take this problem (dtype and shape only, no device query);
 * when not, `why` gets one line. decode_runs_here says whether the device can run them (sm_80 or
 * newer: mma.sync with bf16 or fp16 operands). */
enum { DECODE_MAX_TOKENS = 16 };
int decode_supported(dtype_t t, size_t tokens, size_t dim, size_t hidden, char *why, size_t why_len);
int decode_runs_here(void);
/* decode_padded_rows: the rows of x (gate_up) and of m (down) the kernels read for `tokens`:
 * the tokens' own up to 8, else the whole mma tile of 16, so that the lanes of a warp load alike
 * (at 13 tokens, rows 13-15 too). x and m must have that many rows; what the rows past the
 * tokens hold reaches only accumulators that are never stored. */
size_t decode_padded_rows(size_t tokens);
/* How one kernel divides its weights (see decode.cu): units of unit_rows weight rows (8 or 16),
 * each unit's K split between the `split` blocks of a cluster (1, 2 or 4; more than 1 needs
 * sm_90). decode_plan_for picks the plan for `tokens` and a kernel over `rows` weight rows of K
 * values (gate_up: K = dim, rows = hidden; down: K = hidden, rows = dim), after the GPU is known.
 * stamps: NULL, or a device buffer of DECODE_STAMP_BLOCKS x DECODE_STAMP_SLOTS for the timeline
 * below. */
typedef struct {
    int unit_rows, split;
} decode_plan;
decode_plan decode_plan_for(size_t tokens, size_t K, size_t rows);
void launch_decode_gate_up(dtype_t t, const void *x, const void *wg, const void *wu, void *m,
                           size_t tokens, size_t dim, size_t hidden, decode_plan plan, cudaStream_t stream,
                           unsigned long long *stamps);
void launch_decode_down(dtype_t t, const void *m, const void *wd, void *y, size_t tokens,
                        size_t hidden, size_t dim, decode_plan plan, cudaStream_t stream, unsigned long long *stamps);

/* The decode kernels' timeline (bench/decode_timeline). Given a stamps buffer, thread 0 of each
 * block, for the first DECODE_STAMP_BLOCKS blocks of the kernel, writes %globaltimer (ns) at
 * these events, and its SM's number in slot DECODE_STAMP_SM:
 *   START     the block begins
 *   ISSUED    its first weight loads are issued (down: before it waits for gate_up)
 *   WAITED    griddepcontrol.wait returned (down: gate_up complete; gate_up: at once)
 *   COMPUTED  warp 0 is through its loads and mma of the block's last unit of 8 rows
 *   END       the block's last outputs are written
 * decode_blocks is the grid a launch over `rows` weight rows of K values with `plan` uses (after
 * the GPU is known): the blocks that stamp. */
enum { DECODE_STAMP_START, DECODE_STAMP_ISSUED, DECODE_STAMP_WAITED, DECODE_STAMP_COMPUTED, DECODE_STAMP_END,
       DECODE_STAMP_SM, DECODE_STAMP_SLOTS };
enum { DECODE_STAMP_BLOCKS = 16384 };
size_t decode_blocks(size_t K, size_t rows, decode_plan plan);

#ifdef __cplusplus
}
#endif

#endif
