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
 * Wd [dim, hidden]: 03_simple_mlp's model, inputs and check. The flags, the model and the napkin
 * math: fused_model.c; the graph rung's choice: graph_choice.c; --gemm all: gemm_table.c. The run,
 * the report and the trace: common/stage.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decode.h"
#include "fused_model.h"
#include "geglu.h"
#include "gemm_geglu.h"
#include "gemm_table.h"
#include "graph_choice.h"
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
static void gate_up_gemm(fused_mlp *md)
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

static void prepare_merged(void *model) { fused_make_merged_weight(model); }

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

static void report_epilogue(void *model, const stage_result *r, const gpu_info *g, const common_args *a)
{
    (void)r;
    fused_mlp *md = model;
    printf("our GEMM: version %d, %s (%s)\n", md->gemm_version, gemm_geglu_version_info(md->gemm_version)->name,
           md->gemm_choice);
    /* the table once, in the epilogue rung's own report (not again when the graph rung captures it) */
    if (fused_gemm_flag(md->flags) == GEMM_ALL && md->graph_of < 0)
        gemm_versions_table(md, g, a, gate_up_gemm, forward_epilogue);
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

/* decode: at a few tokens the forward is reading the weights; two kernels stream them through
 * the tensor cores, the second a programmatic dependent launch that starts its loads while the
 * first finishes (kernels.cu), in a graph. */
static void decode_kernels(void *model)
{
    mlp_t *m = &((fused_mlp *)model)->mlp;
    prof_range_push("decode_gate_up");
    launch_decode_gate_up(m->dtype, m->x, m->wg, m->wu, m->prod, m->tokens, m->dim, m->hidden,
                          decode_plan_for(m->tokens, m->dim, m->hidden), m->stream, NULL);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_push("decode_down");
    launch_decode_down(m->dtype, m->prod, m->wd, m->y, m->tokens, m->hidden, m->dim,
                       decode_plan_for(m->tokens, m->hidden, m->dim), m->stream, NULL);
    LAUNCH_CHECK();
    prof_range_pop();
}

static void forward_decode(void *model)
{
    fused_mlp *md = model;
    if (!md->decode_graph) capture(md, decode_kernels, &md->decode_graph);
    launch_graph(md, md->decode_graph);
}

/* graph: a rung above captured once and replayed (--graph-of names it; by default graph_choice.c
 * measures which replays fastest): the CPU issues one launch per forward instead of one per
 * kernel. Decode's forward is a graph already; the graph rung captures its kernels. */
enum { EAGER, FUSED_GEGLU, MERGED, EPILOGUE, GRAPH, DECODE, N_RUNGS };
static const stage_variant rungs[N_RUNGS];
static const graph_candidate graph_candidates[] = {
    {&rungs[EAGER], forward_eager},       {&rungs[FUSED_GEGLU], forward_fused_geglu},
    {&rungs[MERGED], forward_merged},     {&rungs[EPILOGUE], forward_epilogue},
    {&rungs[DECODE], decode_kernels},
};
enum { N_CANDIDATES = sizeof graph_candidates / sizeof graph_candidates[0] };

static void forward_graph(void *model)
{
    fused_mlp *md = model;
    if (!md->graph) capture(md, graph_candidates[md->graph_of].launches, &md->graph);
    launch_graph(md, md->graph);
}

/* The candidate --graph-of names: its index, -1 for fastest, -2 for a name that is none. */
static int graph_of_flag(const fused_flags *f)
{
    if (!f->graph_of || strcmp(f->graph_of, "fastest") == 0) return -1;
    for (int i = 0; i < N_CANDIDATES; i++)
        if (strcmp(graph_candidates[i].rung->name, f->graph_of) == 0) return i;
    return -2;
}

/* What the graph rung takes, where it runs, what it moves and reports: the captured rung's. */
static int graph_accepts(const void *flags, dtype_t t, size_t tokens, char *why, size_t len)
{
    const int i = graph_of_flag(flags);
    return i < 0 || stage_variant_takes(graph_candidates[i].rung, "tokens", flags, t, tokens, why, len);
}
static int graph_runs(const void *model, char *why, size_t len)
{
    const int i = graph_of_flag(((const fused_mlp *)model)->flags);
    return i < 0 || !graph_candidates[i].rung->runs || graph_candidates[i].rung->runs(model, why, len);
}
static void prepare_graph(void *model)
{
    fused_mlp *md = model;
    fused_flags *f = md->flags;
    if (md->graph_of >= 0) return;
    md->graph_of = graph_of_flag(f);
    if (md->graph_of < 0) { /* measured once at the flags' shape, then held in the flags */
        md->graph_of = graph_fastest(md, graph_candidates, N_CANDIDATES, md->graph_choice, sizeof md->graph_choice);
        if (md->mlp.batch) f->graph_of = graph_candidates[md->graph_of].rung->name, f->graph_of_measured = 1;
    } else {
        snprintf(md->graph_choice, sizeof md->graph_choice, "graph: captures %s (--graph-of %s)", f->graph_of,
                 f->graph_of_measured ? "fastest, measured once" : f->graph_of);
    }
    if (graph_candidates[md->graph_of].rung->prepare) graph_candidates[md->graph_of].rung->prepare(md);
}
static int graph_traffic(const void *model, stage_traffic *t)
{
    const fused_mlp *md = model;
    return md->graph_of >= 0 ? graph_candidates[md->graph_of].rung->traffic(model, t) : 0;
}
static void report_graph(void *model, const stage_result *r, const gpu_info *g, const common_args *a)
{
    fused_mlp *md = model;
    const stage_variant *captured = graph_candidates[md->graph_of].rung;
    printf("%s\n", md->graph_choice);
    if (captured->report) captured->report(model, r, g, a);
}

/* The stage's flags before the GPU: the shape and --gemm (fused_model.c), then --graph-of. */
static int validate_flags(const void *flags, const common_args *a, char *why, size_t len)
{
    const fused_flags *f = flags;
    if (fused_validate(flags, a, why, len) != 0) return 1;
    if (graph_of_flag(f) == -2) {
        snprintf(why, len, "--graph-of: '%.40s' is not a rung (eager, fused_geglu, merged, epilogue, decode or "
                 "fastest)", f->graph_of);
        return 1;
    }
    if (fused_gemm_flag(f) == GEMM_ALL && strcmp(a->variant, rungs[GRAPH].name) == 0) {
        snprintf(why, len, "--gemm all times every version in the epilogue rung's report: run --variant epilogue "
                 "or the ladder");
        return 1;
    }
    return 0;
}

/* ---- the table of rungs, in ladder order ---------------------------------------------------
 * Kernels per forward and napkin HBM bytes come from each rung's traffic rows (fused_model.c). */
#define TENSOR_CORES (STAGE_DTYPE(DTYPE_BF16) | STAGE_DTYPE(DTYPE_FP16))
static const stage_variant rungs[N_RUNGS] = {
    [EAGER] = {"eager", "03_simple_mlp's forward: 3 cuBLAS GEMMs, GELU, multiply (5 kernels)",
               "cublasLtMatmul x 3 (2 plans) -> gate, up and down GEMM kernels; launch_gelu_tanh -> gelu_tanh; "
               "launch_mul -> mul", 5, forward_eager, .traffic = fused_traffic_eager},
    [FUSED_GEGLU] = {"fused_geglu", "gate and up GEMMs, one fused GeGLU kernel, down GEMM (4 kernels; act never exists)",
                     "cublasLtMatmul x 2 -> gate and up GEMM kernels; launch_geglu -> geglu (gate and up in, prod "
                     "out); cublasLtMatmul -> down GEMM kernel", 4, forward_fused_geglu,
                     .traffic = fused_traffic_fused_geglu},
    [MERGED] = {"merged", "one GEMM against [Wg; Wu], the fused GeGLU on its two halves, down GEMM (3 kernels)",
                "cublasLtMatmul (N = 2 x hidden) -> one GEMM kernel for [gate | up]; launch_geglu -> geglu on the "
                "two halves; cublasLtMatmul -> down GEMM kernel", 3, forward_merged, .prepare = prepare_merged,
                .traffic = fused_traffic_merged},
    [EPILOGUE] = {"epilogue", "our GEMM with the GeGLU in its epilogue, then the down GEMM (2 kernels; gate and "
                  "up never exist)", "launch_gemm_geglu -> our GEMM with the GeGLU epilogue (--gemm N); "
                  "cublasLtMatmul -> down GEMM kernel", 2, forward_epilogue, .takes = "gemm", .dtypes = TENSOR_CORES,
                  .accepts = fused_epilogue_accepts, .runs = fused_epilogue_runs, .prepare = fused_epilogue_prepare,
                  .traffic = fused_traffic_epilogue, .report = report_epilogue},
    [GRAPH] = {"graph", "the fastest rung above captured once in a CUDA graph and replayed (no launch cost per "
               "kernel)", "cudaGraphLaunch -> the kernels of the rung --graph-of names, captured by the first "
               "forward", 2, forward_graph, .takes = "gemm graph-of", .accepts = graph_accepts, .runs = graph_runs,
               .prepare = prepare_graph, .traffic = graph_traffic, .report = report_graph},
    [DECODE] = {"decode", "tensor-core weight-streaming kernels for 1..16 tokens, in a CUDA graph (2 kernels)",
                "cudaGraphLaunch -> decode_gate_up, decode_down (a programmatic dependent launch on sm_90; "
                "captured by the first forward)", 2, forward_decode, .dtypes = TENSOR_CORES,
                .max_size = DECODE_MAX_TOKENS, .accepts = fused_decode_accepts, .runs = fused_decode_runs,
                .traffic = fused_traffic_decode},
};

static const stage_def stage_04 = {
    .name = "04_fused_mlp",
    .summary = "the GeGLU MLP of 03_simple_mlp, fused rung by rung: y = (gelu(x Wg^T) * x Wu^T) Wd^T",
    .variants = rungs, .n_variants = N_RUNGS, .all_name = "ladder", .all_is_default = 1,
    .flags = {fused_opts, MLP_N_SHAPE_OPTS + 2, sizeof(fused_flags), &fused_defaults},
    .model = {.validate = validate_flags, .size = mlp_stage_size, .setup = fused_setup, .teardown = fused_free,
              .check = fused_check, .tolerance = mlp_tolerance, .flops = fused_flops, .min_bytes = fused_min_bytes,
              .stream = fused_stream, .tag = fused_tag, .compare_tag = fused_ladder_tag, .arrays = fused_arrays,
              .describe = fused_describe},
    .kernel_table = 1,
    .sweep = {"tokens", 1, 32768, "tokens_sweep.gp", "ladder_sweep.gp", fused_sweep_names},
};

int main(int argc, char **argv) { return stage_main(argc, argv, &stage_04); }
