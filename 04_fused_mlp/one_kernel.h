/* one_kernel.h (04_fused_mlp): the whole GeGLU MLP forward in one kernel, for a few tokens. The
 * launcher enqueues on `stream` and returns at once.
 */
#ifndef FUSED_MLP_ONE_KERNEL_H
#define FUSED_MLP_ONE_KERNEL_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One launch computes
 *   y[t, d] = sum_j gelu(x_t . Wg_j) * (x_t . Wu_j) * Wd[d, j]        for t < tokens
 * (see one_kernel.cu). Each block takes slices of hidden and computes its slice of m (the gated
 * product, rounded to the storage type as the other rungs round it); `handoff` says how the
 * slices of m meet in y:
 *   ONE_KERNEL_ADD      the block keeps its slice of m in shared memory, multiplies it by the
 *                       slice's columns of Wd and adds its share of y into an fp32 accumulator;
 *                       the last block to add into a tile of y rounds it into y. m is not used.
 *   ONE_KERNEL_BARRIER  the blocks write m to `m` ([tokens, hidden]), meet at one grid-wide
 *                       barrier, then compute y = m Wd^T as the decode rung's down kernel does.
 *
 * x and m are read over their first `tokens` rows only and y written over its first `tokens`
 * rows only (rows past them, as in MLP_MIN_ROWS's padding, are left as they are).
 *
 * workspace: one_kernel_workspace_bytes(tokens, dim) bytes of device memory, 16-byte aligned,
 * ZEROED ONCE before the first launch (cudaMemset); every launch, of either hand-off, leaves it
 * zeroed again, so it serves any number of launches in a row and graph replays, for any tokens
 * up to the count it was sized for and the same or a smaller dim. Launches that share a
 * workspace must not run concurrently (one stream). A launch that fails part-way leaves it
 * undefined: zero it again.
 *
 * one_kernel_supported says whether the kernel takes this problem (dtype and shape only, no
 * device query); when not, `why` gets one line. one_kernel_runs_here: sm_80 or newer (mma.sync
 * with bf16 or fp16 operands).
 *
 * slice_rows (ONE_KERNEL_ADD): the rows of hidden a block takes at a time, 32 or 64, or 0 to let
 * one_kernel_slice_rows pick. 32 gives more units (more SMs busy on small MLPs); 64 halves the
 * fp32 additions into y and reads Wd in 128-byte rows instead of 64. ONE_KERNEL_BARRIER takes 32
 * whatever is asked. */
enum { ONE_KERNEL_MAX_TOKENS = 128 };
typedef enum { ONE_KERNEL_ADD = 0, ONE_KERNEL_BARRIER = 1 } one_kernel_handoff;
int one_kernel_supported(dtype_t t, size_t tokens, size_t dim, size_t hidden, char *why, size_t why_len);
int one_kernel_runs_here(void);
size_t one_kernel_workspace_bytes(size_t tokens, size_t dim);
int one_kernel_slice_rows(size_t tokens, size_t dim, size_t hidden);
/* The grid a launch uses (after the GPU is known): one block per unit of work, at most the
 * blocks the GPU holds at once. slice_rows as for the launcher (0: one_kernel_slice_rows). */
size_t one_kernel_blocks(dtype_t t, size_t tokens, size_t dim, size_t hidden, int slice_rows,
                         one_kernel_handoff handoff);
void launch_one_kernel_mlp(dtype_t t, const void *x, const void *wg, const void *wu, const void *wd, void *y,
                           size_t tokens, size_t dim, size_t hidden, one_kernel_handoff handoff, int slice_rows,
                           void *workspace, void *m, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
