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
 * The forward: eager.c; the model, its setup and the check: mlp.c; what the driver needs:
 * mlp_stage.c.
 */
#include "mlp.h"
#include "mlp_stage.h"

/* ---- the variant, its ops and main ----------------------------------------------------- */

/* The forward itself is in eager.c, which 04_fused_mlp links too. */
static void forward_eager(void *model) { mlp_forward_eager(model); }

static const stage_variant variants[] = {
    {"eager", "3 cuBLAS GEMMs + our GELU and multiply kernels, intermediates through HBM (5 kernels)",
     "cublasLtMatmul x3 (2 plans, made by the first forward) -> 3 GEMM kernels (gate_proj, up_proj, "
     "down_proj); launch_gelu_tanh -> gelu_tanh_<dtype>; launch_mul -> mul_<dtype>", 5, forward_eager},
};

/* The per-op report times each of the five ops alone. */
static void run_op(void *model, int op) { mlp_run_op(model, (mlp_op)op); }
static const stage_ops ops = {mlp_op_names, MLP_N_OPS, run_op, mlp_stage_op_flops, mlp_stage_op_bytes,
                              mlp_stage_op_problem};

static const stage_def stage_03 = {
    .name = "03_simple_mlp",
    .summary = "GeGLU MLP y = (gelu_tanh(x Wg^T) * x Wu^T) Wd^T, PyTorch eager's 5 kernels (part 2 of the articles)",
    .variants = variants, .n_variants = 1,
    .flags = {mlp_opts, MLP_N_SHAPE_OPTS, sizeof(mlp_shape), &mlp_default_shape},
    .model = {.validate = mlp_stage_validate, .size = mlp_stage_size, .setup = mlp_stage_setup,
              .teardown = mlp_stage_free, .check = mlp_stage_check, .tolerance = mlp_tolerance,
              .flops = mlp_stage_flops, .min_bytes = mlp_stage_min_bytes, .stream = mlp_stage_stream,
              .tag = mlp_stage_tag, .arrays = mlp_stage_arrays, .describe = mlp_stage_describe,
              .report = mlp_report_intermediates},
    .ops = &ops, .graph = 1, .kernel_table = 1,
    .sweep = {"tokens", 1, 32768, "tokens_sweep.gp", NULL, mlp_stage_sweep_names},
};

int main(int argc, char **argv) { return stage_main(argc, argv, &stage_03); }
