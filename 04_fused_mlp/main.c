/* 04_fused_mlp: the GeGLU MLP of 03_simple_mlp, fused rung by rung down to the hardware's floor.
 *
 * The question: how far can fusion go? Each rung keeps fewer intermediates in HBM and launches
 * fewer kernels than the one before; the last ones leave only the launches themselves to cut.
 *
 *   make 04_fused_mlp && ./run                        the whole ladder at the article's shape:
 *                                                     every rung, one table, one bar chart
 *   ./run 04_fused_mlp --variant merged               one rung
 *   ./run 04_fused_mlp --variant epilogue --gemm all  every version of our GEMM against cuBLAS
 *   ./run 04_fused_mlp --batch 1 --seq 8              decode shape: 8 tokens, the weights dominate
 *   ./run 04_fused_mlp --batch 64 --seq 512 --dim 4096 --hidden 11008     LLaMA-7B-sized MLP
 *   ./run 04_fused_mlp --sweep                        every rung over 1..32768 tokens: who wins where
 *
 * y = (gelu_tanh(x Wg^T) * (x Wu^T)) Wd^T with x [batch * seq, dim], Wg and Wu [hidden, dim],
 * Wd [dim, hidden]: 03_simple_mlp's model, inputs and check. The flags, the model, the napkin
 * math and the graph rung's choice: fused_stage.c. The run, the report and the trace:
 * common/stage.c.
 */
#include "check.h"
#include "fused_stage.h"
#include "gemm_geglu.h"
#include "kernels.h"
#include "prof.h"

/* ---- the rungs, in ladder order ------------------------------------------------------------ */

/* eager: 03's forward itself (03_simple_mlp/main.c, linked through mlp.h), ranges and all. */
static void forward_eager(void *model) { mlp_forward_eager(&((fused_mlp *)model)->mlp); }

/* fused_geglu: GELU and multiply in one kernel, as torch.compile and Liger do: act never exists. */
static void forward_fused_geglu(void *model)
{
    mlp_t *m = &((fused_mlp *)model)->mlp;
    prof_range_push("mlp_fwd");
    prof_range_push("gate_proj");
    mlp_run_op(m, MLP_GATE);
    prof_range_pop();
    prof_range_push("up_proj");
    mlp_run_op(m, MLP_UP);
    prof_range_pop();
    prof_range_push("geglu"); /* separate buffers: one flat array of M * hidden */
    launch_geglu(m->dtype, m->gate, m->up, 0, m->prod, 1, m->tokens * m->hidden, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_push("down_proj");
    mlp_run_op(m, MLP_DOWN);
    prof_range_pop();
    prof_range_pop();
}

/* merged: with [Wg; Wu] stored as one weight (fused_prepare builds it once, as a model would
 * store it), row r of gu = x [Wg; Wu]^T holds gate in columns 0..hidden-1 and up in
 * hidden..2*hidden-1: one ordinary GEMM for cuBLAS, and two contiguous half-rows for the GeGLU
 * kernel. The plan is made by the first call, as 03 makes its plans. */
void gate_up_gemm(fused_mlp *md)
{
    mlp_t *m = &md->mlp;
    if (!md->lt) {
        CUBLASLT_CHECK(cublasLtCreate(&md->lt));
        if (lt_plan_init(&md->plan_gate_up, md->lt, m->dtype, 0, m->tokens, 2 * m->hidden, m->dim, 1,
                         CUBLASLT_EPILOGUE_DEFAULT, NULL) != 0)
            exit(EXIT_BAD_INPUT);
    }
    lt_plan_run(&md->plan_gate_up, 1.0f, m->x, md->wgu, 0.0f, md->gu, md->gu, m->stream);
}

static void forward_merged(void *model)
{
    fused_mlp *md = model;
    mlp_t *m = &md->mlp;
    const size_t H = m->hidden, e = dtype_size(m->dtype);
    prof_range_push("mlp_fwd");
    prof_range_push("gate_up_proj");
    gate_up_gemm(md);
    prof_range_pop();
    prof_range_push("geglu");
    launch_geglu(m->dtype, md->gu, (char *)md->gu + H * e, 2 * H, m->prod, m->tokens, H, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_push("down_proj");
    mlp_run_op(m, MLP_DOWN);
    prof_range_pop();
    prof_range_pop();
}

/* epilogue: our GEMM computes a gate tile and an up tile side by side in registers and writes
 * only gelu(g) * u: gate and up never exist (gemm_geglu.h; --gemm picks the version). */
static void forward_epilogue(void *model)
{
    fused_mlp *md = model;
    mlp_t *m = &md->mlp;
    prof_range_push("mlp_fwd");
    prof_range_push("gate_up_geglu");
    launch_gemm_geglu(md->gemm_version, m->dtype, m->x, m->wg, m->wu, m->prod, m->tokens, m->dim, m->hidden,
                      m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_push("down_proj");
    mlp_run_op(m, MLP_DOWN);
    prof_range_pop();
    prof_range_pop();
}

/* Captures a rung's forward once. One plain run goes first, so that everything done only on a
 * first call (cuBLAS's handle and plans, module loading, our launchers' attribute calls) stays
 * out of the capture: a capture records stream work, and a call that synchronises the device
 * would invalidate it. The ranges pushed during capture appear once, in the first step. */
static void capture(fused_mlp *md, void (*rung_forward)(void *), cudaGraphExec_t *exec)
{
    cudaStream_t s = md->mlp.stream;
    rung_forward(md);
    CUDA_CHECK(cudaStreamSynchronize(s));
    cudaGraph_t g;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    rung_forward(md);
    CUDA_CHECK(cudaStreamEndCapture(s, &g));
    CUDA_CHECK(cudaGraphInstantiate(exec, g, 0));
    CUDA_CHECK(cudaGraphDestroy(g));
}

static void launch_graph(fused_mlp *md, cudaGraphExec_t exec)
{
    prof_range_push("mlp_fwd");
    prof_range_push("graph_launch");
    CUDA_CHECK(cudaGraphLaunch(exec, md->mlp.stream));
    prof_range_pop();
    prof_range_pop();
}

/* graph: the fastest rung above (--graph-of; fused_prepare measures them), replayed: the CPU
 * issues one launch per forward instead of one per kernel. */
static void forward_graph(void *model)
{
    fused_mlp *md = model;
    if (!md->graph) capture(md, fused_rungs[md->graph_of].forward, &md->graph);
    launch_graph(md, md->graph);
}

/* decode: at a few tokens the forward is reading the weights; two kernels stream them through
 * the tensor cores, the second a programmatic dependent launch that starts its loads while the
 * first finishes (kernels.cu), in a graph. */
static void decode_kernels(void *model)
{
    mlp_t *m = &((fused_mlp *)model)->mlp;
    prof_range_push("decode_gate_up");
    launch_decode_gate_up(m->dtype, m->x, m->wg, m->wu, m->prod, m->tokens, m->dim, m->hidden, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_push("decode_down");
    launch_decode_down(m->dtype, m->prod, m->wd, m->y, m->tokens, m->hidden, m->dim, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
}

static void forward_decode(void *model)
{
    fused_mlp *md = model;
    if (!md->decode_graph) capture(md, decode_kernels, &md->decode_graph);
    launch_graph(md, md->decode_graph);
}

/* ---- the table of rungs ---------------------------------------------------------------------
 * Kernels per forward, and napkin HBM bytes (fused_rung_bytes), for the report and the ladder. */
const stage_variant fused_rungs[N_RUNGS] = {
    [EAGER] = {"eager", "03_simple_mlp's forward: 3 cuBLAS GEMMs, GELU, multiply (5 kernels)",
               "cublasLtMatmul x 3 (2 plans) -> gate, up and down GEMM kernels; launch_gelu_tanh -> gelu_tanh; "
               "launch_mul -> mul", 5, forward_eager},
    [FUSED_GEGLU] = {"fused_geglu", "gate and up GEMMs, one fused GeGLU kernel, down GEMM (4 kernels; act never exists)",
                     "cublasLtMatmul x 2 -> gate and up GEMM kernels; launch_geglu -> geglu (gate and up in, prod "
                     "out); cublasLtMatmul -> down GEMM kernel", 4, forward_fused_geglu},
    [MERGED] = {"merged", "one GEMM against [Wg; Wu], the fused GeGLU on its two halves, down GEMM (3 kernels)",
                "cublasLtMatmul (N = 2 x hidden) -> one GEMM kernel for [gate | up]; launch_geglu -> geglu on the "
                "two halves; cublasLtMatmul -> down GEMM kernel", 3, forward_merged},
    [EPILOGUE] = {"epilogue", "our GEMM with the GeGLU in its epilogue, then the down GEMM (2 kernels; gate and "
                  "up never exist)", "launch_gemm_geglu -> our GEMM with the GeGLU epilogue (--gemm N); "
                  "cublasLtMatmul -> down GEMM kernel", 2, forward_epilogue},
    [GRAPH] = {"graph", "the fastest rung above captured once in a CUDA graph and replayed (no launch cost per "
               "kernel)", "cudaGraphLaunch -> the kernels of the rung --graph-of names, captured by the first "
               "forward", 2, forward_graph},
    [DECODE] = {"decode", "tensor-core weight-streaming kernels for 1..16 tokens, in a CUDA graph (2 kernels)",
                "cudaGraphLaunch -> decode_gate_up, decode_down (a programmatic dependent launch on sm_90; "
                "captured by the first forward)", 2, forward_decode},
};

/* ---- the rungs handed to the driver ------------------------------------------------------- */

const stage_def stage_04 = { /* not static: the GPU tests link this file without its main */
    .name = "04_fused_mlp",
    .summary = "the GeGLU MLP of 03_simple_mlp, fused rung by rung: y = (gelu(x Wg^T) * x Wu^T) Wd^T",
    .variants = fused_rungs, .n_variants = N_RUNGS, .all_name = "ladder", .all_is_default = 1,
    .opts = fused_opts, .n_opts = 6, .opt_for = fused_opt_for, .validate = fused_validate,
    .setup = fused_setup, .teardown = fused_free, .runs = fused_runs, .prepare = fused_prepare,
    .check = fused_check, .tolerance = mlp_tolerance, .flops = fused_flops, .min_bytes = fused_min_bytes,
    .variant_bytes = fused_rung_bytes, .variant_kernels = fused_rung_kernels, .tag = fused_tag,
    .compare_tag = fused_ladder_tag, .stream = fused_stream, .arrays = fused_arrays,
    .describe = fused_describe, .report = fused_report, .kernel_table = 1, .sweep_label = "tokens",
    .sweep_first = 1, .sweep_last = 32768, .sweep_plot = "tokens_sweep.gp",
    .sweep_names = fused_sweep_names, .sweep_together_plot = "ladder_sweep.gp",
};

STAGE_MAIN(stage_04)
