/* geglu.h (04_fused_mlp): the fused GeGLU kernel of the ladder. The launcher enqueues on `stream`
 * and returns at once.
 */
#ifndef FUSED_MLP_GEGLU_H
#define FUSED_MLP_GEGLU_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fused GeGLU, rungs fused_geglu and merged: one kernel, reading gate and up once and writing
 * m once (act never exists):
 *   m[r * cols + c] = gelu_tanh(gate[r * ld + c]) * up[r * ld + c],  r < rows, c < cols.
 * Separate buffers (fused_geglu): rows = 1, cols = M * hidden (ld unused): one flat array.
 * Concatenated halves (merged): gate = gu, up = gu + hidden, ld = 2 * hidden, rows = M,
 * cols = hidden: the two halves of each row of the merged GEMM's output. */
void launch_geglu(dtype_t t, const void *gate, const void *up, size_t ld, void *m, size_t rows,
                  size_t cols, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
