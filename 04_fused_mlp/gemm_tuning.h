/* gemm_tuning.h (04_fused_mlp): which version of our GEMM with the GeGLU epilogue runs a shape
 * fastest, measured once and remembered.
 *
 * The versions (gemm_geglu.h) trade differently with the shape: stream-K (version 7) pays a
 * scratch round trip to fill the last wave, ping-pong (6) wins where the waves are whole, the
 * plainer ones sometimes win where a tile's K is short. No fixed order is right everywhere, so
 * `--gemm auto` (the default) times every version that takes the shape and runs here, in
 * alternating rounds on the model's own buffers, and keeps the answer in
 * traces/gemm_tuning/<GPU>_driver<N>.txt of the checkout, one line per dtype and shape, for
 * this build of the kernels: a later run, the trace pass or another stage reads it back.
 */
#ifndef GEMM_TUNING_H
#define GEMM_TUNING_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "dtype.h"

/* The fastest version for m = GeGLU(x, Wg, Wu) at [M, dim] -> [M, hidden], read from the file
 * or measured now (the launches write m). `why`: one line, what was measured or read and where.
 * 0 when no version runs here. */
int gemm_tuned_version(dtype_t t, const void *x, const void *wg, const void *wu, void *m, size_t M, size_t dim,
                       size_t hidden, cudaStream_t stream, char *why, size_t len);

#endif
