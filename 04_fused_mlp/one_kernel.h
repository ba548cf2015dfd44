/* one_kernel.h (04_fused_mlp): the one-kernel rung, the whole GeGLU MLP forward in one launch for
 * a few tokens of a small model. The launchers enqueue on `stream` and return at once.
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
 *   y[t, d] = sum_j m[t, j] * Wd[d, j],   m[t, j] = gelu(x_t . Wg_j) * (x_t . Wu_j)
 * for t < tokens (see one_kernel.cu). Each block owns a slice of hidden: at its start it asks the
 * copy engine for every byte it will read (its rows of Wg, Wu and Wd^T, and x), so all the
 * weights are in flight at once; it computes its slice of m (rounded to the storage type, as the
 * other rungs round m) and its partial y; the blocks of a cluster add their partials through
 * each other's shared memory, then into an fp32 accumulator in `workspace`; the last cluster to
 * add into a slice of y's columns rounds the slice into y and zeroes it again.
 *
 * wdt is Wd transposed, [hidden, dim] (one_kernel_transpose makes it once from Wd [dim, hidden]):
 * a block's rows of it are one contiguous stretch of memory.
 * x, wg, wu, wdt and y: 16-byte aligned (cudaMalloc's are). x is read over its first `tokens`
 * rows only and y written over its first `tokens` rows only.
 *
 * workspace: one_kernel_workspace_bytes(dim) bytes, ZEROED ONCE before the first launch; every
 * launch leaves it zeroed again, so it serves any number of launches and graph replays on one
 * stream. A launch that fails part-way leaves it undefined: zero it again.
 *
 * one_kernel_supported: whether the kernel takes this problem (dtype and shape only, no device
 * query); when not, `why` gets one line. It takes 1..16 tokens (one tensor-core tile of rows),
 * dim a multiple of 8 (rows copied in 16-byte pieces), and shapes whose slice of 8 rows of every
 * weight fits in one block's shared memory (dim up to about 2,300). one_kernel_runs_here: sm_90
 * (clusters, the copy engine's bulk copies). */
enum { ONE_KERNEL_MAX_TOKENS = 16 };
int one_kernel_supported(dtype_t t, size_t tokens, size_t dim, size_t hidden, char *why, size_t why_len);
int one_kernel_runs_here(void);
size_t one_kernel_workspace_bytes(size_t dim);

/* How a launch divides the work (after the GPU is known): `slice` rows of hidden per block (a
 * multiple of 8, at most 48), `cluster` blocks per cluster (8, 4, 2 or 1: the most the GPU holds
 * at once for the grid), `blocks` in all, `smem` bytes of shared memory per block. */
typedef struct {
    int slice, cluster;
    size_t blocks, smem;
} one_kernel_plan;
one_kernel_plan one_kernel_plan_for(dtype_t t, size_t dim, size_t hidden);
void launch_one_kernel_mlp(dtype_t t, const void *x, const void *wg, const void *wu, const void *wdt, void *y,
                           size_t tokens, size_t dim, size_t hidden, one_kernel_plan plan, void *workspace,
                           cudaStream_t stream);
/* dst[c, r] = src[r, c] for a [rows, cols] matrix of 2-byte values (bf16 or fp16). */
void one_kernel_transpose(const void *src, void *dst, size_t rows, size_t cols, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
