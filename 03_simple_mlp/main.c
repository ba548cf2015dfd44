/* 03_simple_mlp: the GeGLU MLP of part 2 of "Profiling in PyTorch", as PyTorch eager runs it.
 *
 * The question: where do the GPU's microseconds of one MLP forward go, op by op, and how far is
 * eager from the least time the hardware allows?
 *
 *   make 03_simple_mlp && ./run                   the article's shape: 64 x 128 tokens, 768 -> 3072
 *   ./run 03_simple_mlp --batch 1 --seq 8         a decode step: overhead-bound
 *   ./run 03_simple_mlp --warmup 5                warm first step
 *   ./run 03_simple_mlp --sweep                   1..32768 tokens: CPU dispatch vs GPU time
 *
 *   gate = x Wg^T,  up = x Wu^T,  act = gelu_tanh(gate),  prod = act * up,  y = prod Wd^T
 *
 * x is [batch * seq, dim]; Wg, Wu are [hidden, dim] and Wd is [dim, hidden] (nn.Linear, no
 * bias); bf16 by default, fp32 accumulation. The report: per forward (steps, back to back, as a
 * CUDA graph, verdict, throughput), per op (each of the 5 timed alone), the floor and what the
 * intermediates cost in HBM traffic; the trace pass adds each kernel under the op that launched it.
 * The model, its setup and the check: mlp.c; what the driver needs: mlp_stage.c.
 */
#include <stdlib.h>

#include "check.h"
#include "mlp.h"
#include "mlp_stage.h"
#include "prof.h"

/* ---- the forward ----------------------------------------------------------------------- */

/* The handle, then one plan per GEMM shape: descriptors, the heuristic query that picks the
 * kernel, a workspace. Once: every later call goes straight to the launch. (cublasGemmEx, the
 * classic API, makes that choice inside every call, and at a few tokens that CPU time is most
 * of the forward.) */
static void plan_gemms(mlp_t *m)
{
    size_t M = m->tokens, D = m->dim, H = m->hidden;
    CUBLASLT_CHECK(cublasLtCreate(&m->lt));
    /* w_kn = 0: y[M, N] = x[M, K] . W^T with W stored [N, K], read through the transpose flag
     * instead of a transposed copy (02_linear shows why that costs nothing) */
    if (lt_plan_init(&m->plan_in, m->lt, m->dtype, 0, M, H, D, 1, CUBLASLT_EPILOGUE_DEFAULT, NULL) != 0 ||
        lt_plan_init(&m->plan_down, m->lt, m->dtype, 0, M, D, H, 1, CUBLASLT_EPILOGUE_DEFAULT, NULL) != 0)
        exit(EXIT_BAD_INPUT);
    m->planned = 1;
}

/* One op of the five; each result goes to device memory and the next op reads it back. */
void mlp_run_op(mlp_t *m, mlp_op op)
{
    size_t n = m->tokens * m->hidden;
    if (op != MLP_GELU && op != MLP_MUL && !m->planned) plan_gemms(m);
    switch (op) {
    case MLP_GATE: lt_plan_run(&m->plan_in, 1.0f, m->x, m->wg, 0.0f, m->gate, m->gate, m->stream); break;
    case MLP_UP: lt_plan_run(&m->plan_in, 1.0f, m->x, m->wu, 0.0f, m->up, m->up, m->stream); break;
    case MLP_GELU:
        launch_gelu_tanh(m->dtype, m->gate, m->act, n, m->stream);
        LAUNCH_CHECK();
        break;
    case MLP_MUL:
        launch_mul(m->dtype, m->act, m->up, m->prod, n, m->stream);
        LAUNCH_CHECK();
        break;
    default: lt_plan_run(&m->plan_down, 1.0f, m->prod, m->wd, 0.0f, m->y, m->y, m->stream); break;
    }
}

/* PyTorch eager, op by op, each op in its own range, as the profiler shows aten ops. */
void mlp_forward_eager(mlp_t *m)
{
    prof_range_push("mlp_fwd");
    for (int op = 0; op < MLP_N_OPS; op++) {
        prof_range_push(mlp_op_names[op]);
        mlp_run_op(m, (mlp_op)op);
        prof_range_pop();
    }
    prof_range_pop();
}

static void forward_eager(void *model) { mlp_forward_eager(model); }

/* ---- the variants and main ------------------------------------------------------------- */

static const stage_variant variants[] = {
    {"eager", "3 cuBLAS GEMMs + our GELU and multiply kernels, intermediates through HBM (5 kernels)",
     "cublasLtMatmul x3 (2 plans, made by the first forward) -> 3 GEMM kernels (gate_proj, up_proj, "
     "down_proj); launch_gelu_tanh -> gelu_tanh_<dtype>; launch_mul -> mul_<dtype>", 5, forward_eager},
};

const stage_def stage_03 = { /* not static: 04_fused_mlp links this file without its main */
    .name = "03_simple_mlp",
    .summary = "GeGLU MLP y = (gelu_tanh(x Wg^T) * x Wu^T) Wd^T, PyTorch eager's 5 kernels (part 2 of the articles)",
    .variants = variants, .n_variants = 1, .opts = mlp_opts, .n_opts = 4, .validate = mlp_stage_validate,
    .setup = mlp_stage_setup, .teardown = mlp_stage_free, .check = mlp_stage_check, .tolerance = mlp_tolerance,
    .flops = mlp_stage_flops, .min_bytes = mlp_stage_min_bytes, .tag = mlp_stage_tag, .stream = mlp_stage_stream,
    .arrays = mlp_stage_arrays, .describe = mlp_stage_describe, .report = mlp_report_intermediates,
    .ops = &mlp_stage_ops, .graph = 1, .kernel_table = 1, .sweep_label = "tokens", .sweep_first = 1,
    .sweep_last = 32768, .sweep_plot = "tokens_sweep.gp", .sweep_names = mlp_stage_sweep_names,
};

STAGE_MAIN(stage_03)
