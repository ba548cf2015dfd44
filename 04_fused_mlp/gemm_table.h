/* gemm_table.h (04_fused_mlp): --gemm all, every version of our GEMM with the GeGLU epilogue
 * against cuBLAS's plain GEMM on the same [Wg; Wu], one table and one CSV. */
#ifndef GEMM_TABLE_H
#define GEMM_TABLE_H

#include "fused_model.h"

/* Times cublas_gemm(md) (the merged rung's [gate | up] GEMM) and each version's launch in
 * alternating rounds, checks each version's whole epilogue rung (epilogue_forward with that
 * version) against the CPU reference, prints the table and writes
 * <out>/gemm_versions_<ladder tag>.csv. */
void gemm_versions_table(fused_mlp *md, const gpu_info *g, const common_args *a, void (*cublas_gemm)(fused_mlp *md),
                         void (*epilogue_forward)(void *model));

#endif
