/* gemm_geglu.h: our tensor-core GEMM with the GeGLU epilogue, the `epilogue` rung of 04_fused_mlp.
 *
 *   m[M, hidden] = gelu_tanh(x Wg^T) * (x Wu^T)
 *
 * x is [M, dim], Wg and Wu are [hidden, dim], all row-major (PyTorch's nn.Linear layout). Each
 * output tile is computed as the matching gate tile and up tile, accumulated in fp32 registers;
 * the epilogue applies gelu(g) * u in fp32 and rounds once to the storage type. Gate and up never
 * touch device memory: the kernel reads x, Wg, Wu and writes m, nothing else.
 *
 * The kernel comes in numbered versions, one idea each (04_fused_mlp/gemm/N_<name>.cuh, whose
 * header comments explain them); every version computes the same m. Version 1 runs on any GPU
 * from sm_80 on; the others are Hopper code (sm_90a) and run on compute capability 9.0 only.
 */
#ifndef GEMM_GEGLU_H
#define GEMM_GEGLU_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int number;       /* 1..gemm_geglu_n_versions() */
    const char *name; /* short, for tables and flags: "mma_sync", "tma_store", ... */
    const char *idea; /* one line: what this version adds */
    int min_cc;       /* compute capability it needs, as 10 * major + minor */
} gemm_geglu_version;

int gemm_geglu_n_versions(void);
/* Version `number`, 1..n; NULL outside. */
const gemm_geglu_version *gemm_geglu_version_info(int number);
/* The newest version that runs on this device; 0 when none does (no GPU, or older than sm_80).
 * Which is fastest at a shape is measured (gemm_tuning.h). */
int gemm_geglu_default_version(void);

/* 1 if `version` takes this problem, else 0 with one line in why (when len > 0). Dtype and shape
 * only, no device query: t is bf16 or fp16 (tensor-core operands); M, dim, hidden >= 1 and each
 * below 2^31; dim a multiple of 8, so that every row of x, Wg and Wu starts on a 16-byte boundary
 * and is read in whole 16-byte pieces; versions with one block per tile need ceil(M / 128) within
 * the grid's y limit (65535). M and hidden are otherwise free: tails are handled. */
int gemm_geglu_accepts(int version, dtype_t t, size_t M, size_t dim, size_t hidden, char *why, size_t len);

/* The tile `version` computes m in at this shape, rows x columns of m (0 x 0 for no such version).
 * Fixed for most versions; version 9 picks its width per shape and GPU (asks the device). */
void gemm_geglu_tile(int version, size_t M, size_t hidden, int *rows, int *cols);

/* When these kernels were built ("Dec  1 2026 09:30:00"): a measurement of them is stale past a
 * rebuild (gemm_tuning.h). */
const char *gemm_geglu_build_stamp(void);

/* 1 if `version` can run on the current device: its compute capability and the code this
 * program was built with (sm_90a code exists only where the build asked for it). */
int gemm_geglu_runs_here(int version);

/* Enqueues m = gelu_tanh(x Wg^T) * (x Wu^T) with `version` on `stream`. x, wg and wu must be
 * 16-byte aligned (cudaMalloc pointers are) and m 4-byte aligned. A problem the version does not
 * accept, a version that cannot run here, or a misaligned pointer is reported on stderr and
 * exits 1: never a silent wrong answer. */
void launch_gemm_geglu(int version, dtype_t t, const void *x, const void *wg, const void *wu, void *m, size_t M,
                       size_t dim, size_t hidden, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
