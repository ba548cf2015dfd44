/* 01_matmul_add: y = x @ w + b, part 1 of "Profiling in PyTorch", one layer down.
 *
 * The question: at size 64 the GPU finishes a step long before the CPU has issued it; at 4096
 * the GPU is the bottleneck. Where is the crossover, and what does fusing the add save?
 *
 *   make 01_matmul_add && ./run                         size 64: overhead-bound
 *   ./run 01_matmul_add --size 4096                     compute-bound
 *   ./run 01_matmul_add --size 4096 --variant all       eager vs addmm vs fused in one run
 *   ./run 01_matmul_add --warmup 5                      warm first step
 *   ./run 01_matmul_add --sweep                         sizes 64..8192: the crossover plot
 *
 * x, w and b are all size x size (bf16 by default, fp32 accumulation); --batched B turns every
 * variant into B independent problems (strided batched: the bmm detour). All GEMMs go through one
 * cuBLASLt plan made on first use. With --variant all the comparison ends with the GEMM alone,
 * through that plan and through cublasGemmEx (which plans inside every call): the floor of every
 * variant, and the CPU cost of a library call that plans on every call.
 * Buffers, the check and --dump: model.c. The run, the report and the trace: common/stage.c.
 */
#include <stddef.h>
#include <stdlib.h>

#include "check.h"
#include "model.h"
#include "prof.h"
#include "stage.h"

/* our kernel, in kernels.cu */
void launch_add(dtype_t t, const void *a, const void *b, void *out, size_t n, cudaStream_t stream);

/* ---- the forwards ---------------------------------------------------------------------- */

/* One cuBLASLt plan serves all three variants: D = x @ w + beta * C. It is made on the first
 * forward (handle, descriptors, the heuristic query that picks the kernel, the workspace) and
 * reused after, as PyTorch caches its plans: its cost is part of the cold first step. */
static void ensure_plan(matmul_add *m)
{
    if (m->planned) return;
    CUBLASLT_CHECK(cublasLtCreate(&m->lt));
    if (lt_plan_init(&m->plan, m->lt, m->dtype, 1, m->n, m->n, m->n, m->batch,
                     CUBLASLT_EPILOGUE_DEFAULT, NULL) != 0)
        exit(EXIT_BAD_INPUT);
    m->planned = 1;
}

/* PyTorch eager: the GEMM writes a temporary, our add kernel reads it back. */
static void forward_eager(void *model)
{
    matmul_add *m = model;
    prof_range_push("matmul_add");
    ensure_plan(m);
    prof_range_push("gemm");
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 0.0f, m->tmp, m->tmp, m->stream);
    prof_range_pop();
    prof_range_push("add");
    launch_add(m->dtype, m->tmp, m->b, m->y, matmul_add_elems(m), m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_pop();
}

/* torch.compile's aten::addmm: b copied into y, then the GEMM adds x @ w onto it (beta = 1). */
static void forward_addmm(void *model)
{
    matmul_add *m = model;
    prof_range_push("matmul_add");
    ensure_plan(m);
    prof_range_push("copy_bias");
    CUDA_CHECK(cudaMemcpyAsync(m->y, m->b, matmul_add_elems(m) * dtype_size(m->dtype), cudaMemcpyDeviceToDevice,
                               m->stream));
    prof_range_pop();
    prof_range_push("gemm");
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 1.0f, m->y, m->y, m->stream);
    prof_range_pop();
    prof_range_pop();
}

/* The fusion the article wished for: the GEMM's epilogue reads b (C) while it writes y (D). */
static void forward_fused(void *model)
{
    matmul_add *m = model;
    prof_range_push("matmul_add");
    ensure_plan(m);
    prof_range_push("gemm_add");
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 1.0f, m->b, m->y, m->stream);
    prof_range_pop();
    prof_range_pop();
}

/* The yardsticks of the comparison: the GEMM alone, through the plan and through cublasGemmEx. */
static void gemm_alone_lt(void *model)
{
    matmul_add *m = model;
    ensure_plan(m);
    lt_plan_run(&m->plan, 1.0f, m->x, m->w, 0.0f, m->tmp, m->tmp, m->stream);
}

static void gemm_alone_gemmex(void *model)
{
    matmul_add *m = model;
    if (!m->blas) {
        CUBLAS_CHECK(cublasCreate(&m->blas));
        CUBLAS_CHECK(cublasSetStream(m->blas, m->stream));
    }
    blas_gemm(m->blas, m->dtype, 1, m->n, m->n, m->n, 1.0f, m->x, m->w, 0.0f, m->tmp, m->batch);
}

/* ---- the variants ---------------------------------------------------------------------- */

static const stage_variant variants[] = {
    {"eager", "GEMM into a temporary + our add kernel (2 kernels)",
     "cublasLtMatmul -> 1 GEMM kernel into a temporary; launch_add -> 1 add kernel", 2, forward_eager},
    {"addmm", "copy b into y + GEMM with beta = 1 (memcpy + 1 kernel)",
     "cudaMemcpyAsync b -> y (device to device); cublasLtMatmul (beta = 1, C = D = y) -> 1 GEMM kernel", 2,
     forward_addmm},
    {"fused", "one cuBLASLt matmul, D = x @ w + b into a separate y (1 kernel)",
     "cublasLtMatmul (C = b, D = y) -> 1 GEMM kernel with the add in its epilogue", 1, forward_fused},
};
static const stage_reference references[] = {
    {"gemm alone (Lt plan)", "x @ w through the cached plan", gemm_alone_lt},
    {"gemm alone (GemmEx)", "x @ w through cublasGemmEx, which plans on every call", gemm_alone_gemmex},
};

/* ---- main: the shape, and the variants handed to the driver ----------------------------- */

typedef struct {
    long long size, batch;
} matmul_add_flags;
static const matmul_add_flags defaults = {.size = 64, .batch = 1};
static const stage_opt opts[] = {
    {"size", offsetof(matmul_add_flags, size), 1, 32768, "x, w and b are size x size", FLAG_WHOLE, 1},
    {"batched", offsetof(matmul_add_flags, batch), 1, 4096,
     "independent matmul + adds per step (strided batched, the bmm detour)"},
};

static int validate(const void *flags, const common_args *a, char *why, size_t len)
{
    const matmul_add_flags *f = flags;
    return matmul_add_validate((size_t)f->size, (size_t)f->batch, a->dtype, why, len);
}
static size_t size_of(const void *flags) { return (size_t)((const matmul_add_flags *)flags)->size; }
static void *setup(const common_args *a, void *flags, size_t size)
{
    return matmul_add_setup(a->dtype, size, (int)((const matmul_add_flags *)flags)->batch, a->seed);
}
static const stage_def stage_01 = {
    .name = "01_matmul_add", .summary = "y = x @ w + b with x, w, b all size x size (part 1 of the articles)",
    .variants = variants, .n_variants = 3,
    .flags = {opts, 2, sizeof(matmul_add_flags), &defaults},
    .model = {.validate = validate, .size = size_of, .setup = setup, .teardown = matmul_add_free,
              .check = matmul_add_check, .tolerance = dtype_tolerance, .flops = matmul_add_flops,
              .stream = matmul_add_stream, .tag = matmul_add_tag, .arrays = matmul_add_arrays},
    .references = references, .n_references = 2,
    .sweep = {"size", 64, 8192, "crossover.gp", NULL, matmul_add_sweep_names},
};

int main(int argc, char **argv) { return stage_main(argc, argv, &stage_01); }
