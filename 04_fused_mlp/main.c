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
 * Wd [dim, hidden]: 03_simple_mlp's model, inputs and check.
 *
 * Read it from the rungs' forwards just below, then main() at the bottom: the flags and their
 * checks, then for each rung one run (set up, prepare, time, report, check, trace), then the
 * ladder's comparison. The model, its napkin math and what the epilogue and decode rungs take:
 * fused_model.c; our GEMM with the GeGLU epilogue: gemm_geglu.cu and gemm/; the decode kernels:
 * decode.cu; the graph rung's choice: graph_choice.c; --gemm all: gemm_table.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compare.h"
#include "decode.h"
#include "fused_model.h"
#include "geglu.h"
#include "gemm_geglu.h"
#include "gemm_table.h"
#include "graph_choice.h"
#include "out.h"
#include "plot.h"
#include "prof.h"
#include "program.h"
#include "report.h"
#include "run.h"

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

static void report_epilogue(fused_mlp *md, const gpu_info *g, const common_args *a)
{
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
 * first finishes (decode.cu), in a graph. */
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
static const int candidates[] = {EAGER, FUSED_GEGLU, MERGED, EPILOGUE, DECODE};
static const run_forward candidate_launches[] = {forward_eager, forward_fused_geglu, forward_merged,
                                                 forward_epilogue, decode_kernels};
enum { N_CANDIDATES = sizeof candidates / sizeof candidates[0] };

static void forward_graph(void *model)
{
    fused_mlp *md = model;
    if (!md->graph) capture(md, candidate_launches[md->graph_of], &md->graph);
    launch_graph(md, md->graph);
}

/* ---- the rungs' names and what they launch -------------------------------------------------- */

static const char *const names[N_RUNGS + 1] = {"eager", "fused_geglu", "merged", "epilogue", "graph", "decode", NULL};
static const char *const helps[N_RUNGS] = {
    [EAGER] = "03_simple_mlp's forward: 3 cuBLAS GEMMs, GELU, multiply (5 kernels)",
    [FUSED_GEGLU] = "gate and up GEMMs, one fused GeGLU kernel, down GEMM (4 kernels; act never exists)",
    [MERGED] = "one GEMM against [Wg; Wu], the fused GeGLU on its two halves, down GEMM (3 kernels)",
    [EPILOGUE] = "our GEMM with the GeGLU in its epilogue, then the down GEMM (2 kernels; gate and up never exist)",
    [GRAPH] = "the fastest rung above captured once in a CUDA graph and replayed (no launch cost per kernel)",
    [DECODE] = "tensor-core weight-streaming kernels for 1..16 tokens, in a CUDA graph (2 kernels)",
};
static const char *const launches[N_RUNGS] = {
    [EAGER] = "cublasLtMatmul x 3 (2 plans) -> gate, up and down GEMM kernels; launch_gelu_tanh -> gelu_tanh; "
              "launch_mul -> mul",
    [FUSED_GEGLU] = "cublasLtMatmul x 2 -> gate and up GEMM kernels; launch_geglu -> geglu (gate and up in, prod "
                    "out); cublasLtMatmul -> down GEMM kernel",
    [MERGED] = "cublasLtMatmul (N = 2 x hidden) -> one GEMM kernel for [gate | up]; launch_geglu -> geglu on the "
               "two halves; cublasLtMatmul -> down GEMM kernel",
    [EPILOGUE] = "launch_gemm_geglu -> our GEMM with the GeGLU epilogue (--gemm N); cublasLtMatmul -> down GEMM "
                 "kernel",
    [GRAPH] = "cudaGraphLaunch -> the kernels of the rung --graph-of names, captured by the first forward",
    [DECODE] = "cudaGraphLaunch -> decode_gate_up, decode_down (a programmatic dependent launch on sm_90; captured "
               "by the first forward)",
};
static const run_forward forwards[N_RUNGS] = {forward_eager, forward_fused_geglu, forward_merged, forward_epilogue,
                                              forward_graph, forward_decode};

/* ---- the flags ----------------------------------------------------------------------------- */

static const fused_flags defaults = {.shape = {.batch = 64, .seq = 128, .dim = 768, .hidden = 3072}};
enum { OPT_GEMM = MLP_N_SHAPE_OPTS, OPT_GRAPH_OF, N_OPTS };
static const stage_opt opts[N_OPTS] = {
    MLP_SHAPE_OPTS(fused_flags, shape.),
    {"gemm", offsetof(fused_flags, gemm), 0, 0, "auto | N | all: the epilogue rung's GEMM version (default auto: "
     "the fastest at this shape, measured once per GPU and shape); all: every version timed against cuBLAS, one "
     "table", FLAG_WORD},
    {"graph-of", offsetof(fused_flags, graph_of), 0, 0, "RUNG | fastest: what the graph rung captures (eager, "
     "fused_geglu, merged, epilogue, decode; default fastest: each rung's graph timed in alternating rounds)",
     FLAG_WORD},
};
static const stage_spec spec = {"04_fused_mlp", "the GeGLU MLP of 03_simple_mlp, fused rung by rung: y = (gelu(x Wg^T) "
                                "* x Wu^T) Wd^T", names, helps, opts, N_OPTS, "ladder", 0, 1};

/* The flags a rung's trace pass hands on: the shape; --gemm to the epilogue and graph rungs;
 * --graph-of to the graph rung. */
static unsigned flags_of(int v)
{
    const unsigned shape = (1u << MLP_N_SHAPE_OPTS) - 1;
    return shape | (unsigned)(v == EPILOGUE || v == GRAPH) << OPT_GEMM | (unsigned)(v == GRAPH) << OPT_GRAPH_OF;
}

/* The candidate --graph-of names: its index, -1 for fastest, -2 for a name that is none. */
static int graph_of_flag(const fused_flags *f)
{
    if (!f->graph_of || strcmp(f->graph_of, "fastest") == 0) return -1;
    for (int i = 0; i < N_CANDIDATES; i++)
        if (strcmp(names[candidates[i]], f->graph_of) == 0) return i;
    return -2;
}

/* ---- what each rung takes, needs and moves ------------------------------------------------- */

/* Whether rung v takes the problem at `tokens` (0: not checked against decode's token range):
 * 1, or 0 with one line in why. Our GEMM and the decode kernels need tensor-core dtypes; the
 * graph rung takes what the rung it captures takes. */
static int rung_takes(int v, const fused_flags *f, dtype_t t, size_t tokens, char *why, size_t len)
{
    switch (v) {
    case EPILOGUE:
    case DECODE:
        if (t == DTYPE_FP32) {
            snprintf(why, len, "%s: %s takes bf16 or fp16", dtype_name(t), names[v]);
            return 0;
        }
        if (v == EPILOGUE) return fused_epilogue_accepts(f, t, tokens, why, len);
        if (tokens > DECODE_MAX_TOKENS) {
            snprintf(why, len, "%zu tokens: decode takes 1..%d tokens", tokens, DECODE_MAX_TOKENS);
            return 0;
        }
        return fused_decode_accepts(f, t, tokens, why, len);
    case GRAPH: {
        const int i = graph_of_flag(f);
        return i < 0 || rung_takes(candidates[i], f, t, tokens, why, len);
    }
    default: return 1;
    }
}

/* After setup, with the GPU known: 1 when rung v runs this model here, else 0 and why. */
static int rung_runs(int v, const fused_mlp *md, char *why, size_t len)
{
    const int i = graph_of_flag(md->flags);
    switch (v) {
    case EPILOGUE: return fused_epilogue_runs(md, why, len);
    case DECODE: return fused_decode_runs(why, len);
    case GRAPH: return i < 0 || rung_runs(candidates[i], md, why, len);
    default: return 1;
    }
}

static void prepare_graph(fused_mlp *md);

/* What rung v needs before its first forward: a weight stored another way, a choice measured once. */
static void rung_prepare(int v, fused_mlp *md)
{
    if (v == MERGED) fused_make_merged_weight(md);
    if (v == EPILOGUE) fused_epilogue_prepare(md);
    if (v == GRAPH) prepare_graph(md);
}

/* Rung v's napkin HBM traffic, kernel by kernel: fills t, returns its kernels per forward. */
static int rung_traffic(int v, const fused_mlp *md, run_traffic *t)
{
    switch (v) {
    case EAGER: return fused_traffic_eager(md, t);
    case FUSED_GEGLU: return fused_traffic_fused_geglu(md, t);
    case MERGED: return fused_traffic_merged(md, t);
    case EPILOGUE: return fused_traffic_epilogue(md, t);
    case GRAPH: return md->graph_of >= 0 ? rung_traffic(candidates[md->graph_of], md, t) : 0;
    default: return fused_traffic_decode(md, t);
    }
}

/* The graph rung's prepare: the rung --graph-of names, or the one whose graph replays fastest,
 * measured once at the flags' shape, then held in the flags (later models of the run and the
 * trace pass capture the same rung). */
static void prepare_graph(fused_mlp *md)
{
    fused_flags *f = md->flags;
    if (md->graph_of >= 0) return;
    md->graph_of = graph_of_flag(f);
    if (md->graph_of < 0) {
        graph_candidate c[N_CANDIDATES];
        char why[256];
        for (int i = 0; i < N_CANDIDATES; i++) {
            const int v = candidates[i];
            c[i] = (graph_candidate){names[v], candidate_launches[i],
                                     rung_takes(v, f, md->mlp.dtype, md->mlp.tokens, why, sizeof why) &&
                                         rung_runs(v, md, why, sizeof why)};
            if (c[i].runs) rung_prepare(v, md);
        }
        md->graph_of = graph_fastest(md, c, N_CANDIDATES, md->graph_choice, sizeof md->graph_choice);
        if (md->mlp.batch) f->graph_of = names[candidates[md->graph_of]], f->graph_of_measured = 1;
    } else {
        snprintf(md->graph_choice, sizeof md->graph_choice, "graph: captures %s (--graph-of %s)", f->graph_of,
                 f->graph_of_measured ? "fastest, measured once" : f->graph_of);
    }
    rung_prepare(candidates[md->graph_of], md);
}

/* ---- the checks before the GPU ------------------------------------------------------------- */

static int check_flags(const common_args *a, const fused_flags *f, int first, int last)
{
    char why[512];
    if (run_check_outputs(a) != 0) return -1;
    if (run_check_applies(a, &spec, OPT_GEMM, last >= EPILOGUE && first <= GRAPH, "epilogue, graph") != 0 ||
        run_check_applies(a, &spec, OPT_GRAPH_OF, first <= GRAPH && last >= GRAPH, "graph") != 0)
        return -1;
    if (fused_validate(f, a, why, sizeof why) != 0) {
        program_error("%s", why);
        return -1;
    }
    if (graph_of_flag(f) == -2) {
        program_error("--graph-of: '%.40s' is not a rung (eager, fused_geglu, merged, epilogue, decode or fastest)",
                      f->graph_of);
        return -1;
    }
    if (fused_gemm_flag(f) == GEMM_ALL && strcmp(a->variant, names[GRAPH]) == 0) {
        program_error("--gemm all times every version in the epilogue rung's report: run --variant epilogue or the "
                      "ladder");
        return -1;
    }
    if (a->sweep) return run_check_sweep(a, &spec, "tokens");
    int any = 0;
    for (int v = first; v <= last; v++) {
        if (rung_takes(v, f, a->dtype, mlp_shape_tokens(&f->shape), why, sizeof why)) any = 1;
        else if (first == last) {
            program_error("--variant %s is not available here: %s", names[v], why);
            return -1;
        }
    }
    if (!any) program_error("no variant takes this problem (%s)", why);
    return any ? 0 : -1;
}

/* ---- one rung: set up, prepare, time, report, check, trace ----------------------------------- */

static run_result run_rung(int v, const common_args *a, const gpu_info *g, fused_flags *f, char *skipped,
                           size_t len, char *argv0)
{
    run_result r = {0};
    fused_mlp *md = fused_setup(a, f, mlp_shape_tokens(&f->shape));
    mlp_t *m = &md->mlp;
    if (!rung_runs(v, md, skipped, len)) {
        fused_free(md);
        return r;
    }
    rung_prepare(v, md);
    char tag[200];
    mlp_tag(m, a, tag, sizeof tag);
    snprintf(tag + strlen(tag), sizeof tag - strlen(tag), "_%s", names[v]);

    prof_run steps; /* the schedule: --wait, --warmup-steps, --active steps around one forward each */
    const run_kernel_table table = {NULL, 0, a->dtype};
    if (run_steps(&steps, a, g, tag, forwards[v], md, m->stream, &table)) { /* the trace pass records only */
        fused_free(md);
        return r;
    }
    run_traffic traffic[RUN_MAX_TRAFFIC];
    printf("\n== %s: %s\n", tag, helps[v]);
    mlp_describe(m);
    printf("launches per forward: %s\n", launches[v]);
    run_report_traffic(traffic, rung_traffic(v, md, traffic), mlp_min_bytes(m));
    run_time(&r, &steps, forwards[v], md, m->stream, 0, 0);
    report_verdict(r.cpu_us, r.step_us);
    report_throughput(g, a->dtype, mlp_flops(m), r.step_us);
    run_report_floor(run_floor_us(g, a->dtype, mlp_flops(m), mlp_min_bytes(m)), mlp_flops(m), mlp_min_bytes(m), &r);
    if (v == GRAPH) printf("%s\n", md->graph_choice);
    if (v == EPILOGUE || (v == GRAPH && candidates[md->graph_of] == EPILOGUE)) report_epilogue(md, g, a);
    if (a->check) {
        r.err = fused_check(md, forwards[v]);
        report_check(r.err, mlp_tolerance(a->dtype));
    }
    dump_array arrays[5];
    run_finish(&steps, a, tag, forwards[v], md, m->stream, &r, arrays, mlp_arrays(m, arrays), names[v]);
    fused_free(md);
    run_trace_pass(a, &spec, f, flags_of(v), names[v], argv0);
    return r;
}

/* ---- the ladder: every rung in one table, measured in alternating rounds -------------------- */

static void compare(const common_args *a, const gpu_info *g, fused_flags *f, const run_result *r,
                    char (*skipped)[256])
{
    fused_mlp *md = fused_setup(a, f, mlp_shape_tokens(&f->shape));
    compare_row rows[N_RUNGS];
    char why[N_RUNGS][512];
    for (int v = 0; v < N_RUNGS; v++) {
        const int takes = rung_takes(v, f, a->dtype, 0, why[v], sizeof why[v]);
        const char *reason = r[v].ran && takes ? NULL : skipped[v][0] ? skipped[v] : !takes ? why[v] : "did not run";
        rows[v] = (compare_row){names[v], forwards[v], reason, -1, NAN, r[v].step_us, r[v].err};
        if (!reason) rung_prepare(v, md);
    }
    for (int v = 0; v < N_RUNGS; v++) { /* after every prepare: the graph rung's traffic is its rung's */
        run_traffic traffic[RUN_MAX_TRAFFIC];
        rows[v].kernels = rung_traffic(v, md, traffic);
        rows[v].bytes = 0;
        for (int k = 0; k < rows[v].kernels; k++) rows[v].bytes += traffic[k].bytes;
    }
    char stem[200];
    fused_ladder_tag(md, a, stem, sizeof stem);
    const compare_spec c = {spec.stage, "ladder", stem, mlp_flops(&md->mlp),
                            run_floor_us(g, a->dtype, mlp_flops(&md->mlp), mlp_min_bytes(&md->mlp))};
    compare_rounds(rows, N_RUNGS, md, md->mlp.stream, &c, a, g);
    fused_free(md);
}

/* ---- --sweep: 1..32768 tokens; one rung alone, or every rung in one table ------------------- */

static int sweep_rung(int v, const common_args *a, const gpu_info *g, fused_flags *f)
{
    char stem[200], title[200], why[512];
    const mlp_shape *s = &f->shape;
    snprintf(stem, sizeof stem, "sweep_%lldx%lld_%s_%s", s->dim, s->hidden, dtype_name(a->dtype), names[v]);
    snprintf(title, sizeof title, "GeGLU MLP %lld -> %lld, %s, %s", s->dim, s->hidden, names[v], dtype_name(a->dtype));
    sweep_table t;
    if (sweep_open(&t, a, g, stem, title, "tokens", mlp_tolerance(a->dtype)) != 0) return 1;
    for (size_t tokens = 1; tokens <= 32768; tokens *= 2) {
        if (!rung_takes(v, f, a->dtype, tokens, why, sizeof why)) {
            sweep_skip(tokens, why);
            continue;
        }
        fused_mlp *md = fused_setup(a, f, tokens);
        if (!rung_runs(v, md, why, sizeof why)) {
            sweep_skip(tokens, why);
            fused_free(md);
            continue;
        }
        rung_prepare(v, md);
        const sweep_point p = sweep_measure(a, forwards[v], md, md->mlp.stream);
        sweep_row(&t, tokens, &p, mlp_flops(&md->mlp), a->check ? fused_check(md, forwards[v]) : 0.0);
        fused_free(md);
    }
    return sweep_close(&t, a->plot, "tokens_sweep.gp");
}

/* Which rung was fastest at which token counts, one line per rung. */
static void print_wins(const int *winner, const size_t *sizes, int n)
{
    printf("fastest variant by tokens:\n");
    for (int v = 0; v < N_RUNGS; v++) {
        printf("  %-14s", names[v]);
        int any = 0;
        for (int i = 0; i < n; i++) {
            if (winner[i] != v) continue;
            int j = i;
            while (j + 1 < n && winner[j + 1] == v) j++;
            if (j > i) printf("%s%zu..%zu", any ? ", " : " ", sizes[i], sizes[j]);
            else printf("%s%zu", any ? ", " : " ", sizes[i]);
            any = 1;
            i = j;
        }
        printf("%s\n", any ? "" : " never");
    }
}

/* Every rung at every token count, back to back, each checked: who wins where. */
static int sweep_ladder(const common_args *a, const gpu_info *g, fused_flags *f)
{
    const mlp_shape *s = &f->shape;
    char csv[1200], png[1200], title[400], tmp[1300], why[512];
    snprintf(csv, sizeof csv, "%s/sweep_%lldx%lld_%s.csv", a->out_dir, s->dim, s->hidden, dtype_name(a->dtype));
    snprintf(png, sizeof png, "%.*s.png", (int)(strlen(csv) - 4), csv);
    snprintf(title, sizeof title, "GeGLU MLP %lld -> %lld, %s: time per forward, back to back, %.150s", s->dim,
             s->hidden, dtype_name(a->dtype), g->prop.name);
    FILE *out = out_open(csv, tmp, sizeof tmp);
    if (!out) return 1;
    fprintf(out, "tokens");
    printf("us per forward, back to back (median of 3 batches), each checked:\n%7s", "tokens");
    for (int v = 0; v < N_RUNGS; v++) {
        fprintf(out, ",%s", names[v]);
        printf(" %12.12s", names[v]);
    }
    fprintf(out, ",floor\n");
    printf(" %10s  %s\n", "floor", "fastest");
    enum { MAX_SIZES = 64 };
    size_t sizes[MAX_SIZES];
    int winner[MAX_SIZES], n = 0, failed = 0;
    for (size_t tokens = 1; tokens <= 32768 && n < MAX_SIZES; tokens *= 2, n++) {
        sizes[n] = tokens;
        winner[n] = -1;
        fused_mlp *md = fused_setup(a, f, tokens);
        double best = INFINITY;
        fprintf(out, "%zu", tokens);
        printf("%7zu", tokens);
        for (int v = 0; v < N_RUNGS; v++) {
            if (!rung_takes(v, f, a->dtype, tokens, why, sizeof why) || !rung_runs(v, md, why, sizeof why)) {
                fprintf(out, ",NaN");
                printf(" %12s", "-");
                continue;
            }
            rung_prepare(v, md);
            for (int w = 0; w < 3; w++) forwards[v](md); /* module loading, handles, graph capture */
            const double once = prof_back_to_back_us(forwards[v], md, md->mlp.stream, 3, 1);
            const double us = prof_back_to_back_us(forwards[v], md, md->mlp.stream, run_batch_for(once), 3);
            if (a->check && !(fused_check(md, forwards[v]) <= mlp_tolerance(a->dtype))) {
                printf("\ncheck: %s FAILED at %zu tokens\n", names[v], tokens);
                failed = 1;
            }
            fprintf(out, ",%.3f", us);
            printf(" %12.2f", us);
            if (us < best) best = us, winner[n] = v;
        }
        const double fl = run_floor_us(g, a->dtype, mlp_flops(&md->mlp), mlp_min_bytes(&md->mlp));
        fprintf(out, fl > 0 ? ",%.3f\n" : ",NaN\n", fl);
        printf(" %10.2f  %s\n", fl, winner[n] >= 0 ? names[winner[n]] : "-");
        fused_free(md);
    }
    if (out_commit(out, tmp, csv) != 0) return 1;
    printf("wrote %s\n", csv);
    print_wins(winner, sizes, n);
    if (a->plot && plot_run("ladder_sweep.gp", csv, png, title) == 0) printf("wrote %s\n", png);
    if (failed) printf("check: FAILED at one or more sizes (tolerance %.1e)\n", mlp_tolerance(a->dtype));
    return failed;
}

/* ---- main: the program, in the order it runs -------------------------------------------- */

int main(int argc, char **argv)
{
    /* The flags: the shared ones (common/cli.h), the shape and the ladder's own two. Every check
     * that needs no GPU comes first, --help's too: a bad line is refused before anything is made. */
    fused_flags f = defaults;
    common_args a;
    const int help = run_parse(argc, argv, &spec, &a, &f);
    int first, last;
    run_chosen(&a, &spec, &first, &last);
    if (check_flags(&a, &f, first, last) != 0) return EXIT_BAD_INPUT;
    if (help) return run_help(&spec, &defaults);

    gpu_info g;
    run_open(&a, &g, spec.stage);
    if (a.sweep) return (last > first ? sweep_ladder(&a, &g, &f) : sweep_rung(first, &a, &g, &f)) ? EXIT_BAD_INPUT : 0;

    /* Each rung asked for, in ladder order: a run of its own, on a model of its own. */
    const int traced = prof_is_trace_pass();
    run_result r[N_RUNGS] = {{0}};
    char skipped[N_RUNGS][256] = {{0}};
    int failed = 0;
    for (int v = 0; v < N_RUNGS; v++) {
        if (v < first || v > last) continue;
        if (!rung_takes(v, &f, a.dtype, mlp_shape_tokens(&f.shape), skipped[v], sizeof skipped[v])) {
            if (!traced) printf("\n== %s: skipped: %s\n", names[v], skipped[v]);
            skipped[v][0] = '\0';
            continue;
        }
        r[v] = run_rung(v, &a, &g, &f, skipped[v], sizeof skipped[v], argv[0]);
        if (!r[v].ran && skipped[v][0] && !traced) {
            if (first == last) {
                program_error("--variant %s is not available here: %s", names[v], skipped[v]);
                return EXIT_BAD_INPUT;
            }
            printf("\n== %s: skipped: %s\n", names[v], skipped[v]);
        }
        failed |= a.check && r[v].ran && !(r[v].err <= mlp_tolerance(a.dtype));
    }
    if (traced) return 0;
    if (last > first) compare(&a, &g, &f, r, skipped);
    printf("\noutputs: %s/\n", a.out_dir);
    return failed ? EXIT_BAD_INPUT : 0;
}
