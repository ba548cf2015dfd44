/* 04_fused_mlp: the GeGLU MLP of 03_simple_mlp, fused rung by rung down to the hardware's floor.
 *
 *   make 04_fused_mlp && ./run                        the whole ladder at the article's shape:
 *                                                     every rung, one table, one bar chart
 *   ./run 04_fused_mlp --variant merged               one rung
 *   ./run 04_fused_mlp --batch 1 --seq 8              decode shape: 8 tokens, the weights dominate
 *   ./run 04_fused_mlp --batch 64 --seq 512 --dim 4096 --hidden 11008     LLaMA-7B-sized MLP
 *   ./run 04_fused_mlp --sweep                        every rung over 1..32768 tokens: who wins where
 *
 * y = (gelu_tanh(x Wg^T) * (x Wu^T)) Wd^T with x [batch * seq, dim], Wg and Wu [hidden, dim],
 * Wd [dim, hidden]: 03_simple_mlp's model, inputs and check. The rungs (variants):
 *   eager        03's forward itself: gate GEMM, up GEMM, GELU, multiply, down GEMM (5 kernels)
 *   fused_geglu  GELU and multiply as one kernel, as torch.compile and Liger do (4 kernels)
 *   merged       Wg and Wu stored as one [2 * hidden, dim] weight: one GEMM for both (3 kernels)
 *   epilogue     our GEMM computes gate and up tiles and writes only gelu(g) * u (2 kernels)
 *   graph        the best of the above, captured once in a CUDA graph, replayed per forward
 *   decode       for <= 16 tokens: two tensor-core weight-streaming kernels, in a CUDA graph
 * `ladder` (the default) runs them all in this order and ends with the comparison table.
 *
 * The program: the rungs' bookkeeping (what each launches and moves), the forwards, setup of
 * each rung, one timed run per rung, the ladder table, --sweep, main.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../03_simple_mlp/mlp.h"
#include "blas.h"
#include "check.h"
#include "size.h"
#include "cli.h"
#include "dump.h"
#include "gemm_geglu.h"
#include "gpu.h"
#include "kernels.h"
#include "out.h"
#include "plot.h"
#include "prof.h"
#include "report.h"
#include "trace.h"

enum { LADDER, EAGER, FUSED_GEGLU, MERGED, EPILOGUE, GRAPH, DECODE, N_VARIANTS };
static const char *const variants[] = {"ladder", "eager", "fused_geglu", "merged", "epilogue", "graph", "decode", NULL};
static const char *const variant_help[] = {
    "every rung below, in order, then one table and a bar chart",
    "03_simple_mlp's forward: 3 cuBLAS GEMMs, GELU, multiply (5 kernels)",
    "gate and up GEMMs, one fused GeGLU kernel, down GEMM (4 kernels; h never exists)",
    "one GEMM against [Wg; Wu], the fused GeGLU on its two halves, down GEMM (3 kernels)",
    "our GEMM with the GeGLU in its epilogue, then the down GEMM (2 kernels; gate and up never exist)",
    "the best rung above captured once in a CUDA graph and replayed (no launch cost per kernel)",
    "tensor-core weight-streaming kernels for 1..16 tokens, in a CUDA graph (2 kernels)",
};

typedef struct model_t model_t;
struct model_t {
    mlp_t mlp; /* 03's model: x, the weights, the intermediates, y, the stream, the cuBLAS handle */
    int rung;
    /* merged: [Wg; Wu] as one [2 * hidden, dim] weight, and its GEMM's output [M, 2 * hidden] */
    void *wgu, *gu;
    /* graph and decode: the rung whose forward the graph holds, and the graph, made by the first
     * forward */
    int captured_rung;
    cudaGraphExec_t graph;
};

/* ---- what each rung launches and moves ------------------------------------------------------
 * Napkin math for HBM traffic: every operand of every kernel read or written once (a GEMM
 * re-reads its tiles from L2, not HBM, when the operands fit there or the tiling is good). */

typedef struct {
    const char *kernel, *moves;
    double bytes;
} traffic_row;

static int rung_traffic(const model_t *md, int rung, traffic_row *t)
{
    const mlp_t *m = &md->mlp;
    double e = (double)dtype_size(m->dtype), M = (double)m->tokens, D = (double)m->dim, H = (double)m->hidden;
    const traffic_row down = {"down_proj", "m, Wd in; y out", mlp_op_bytes(m, MLP_DOWN)};
    const traffic_row geglu = {"geglu", "gate, up in; m out", e * 3 * M * H};
    const traffic_row fused = {"gate_up_geglu", "x, Wg, Wu in; m out", e * (M * D + 2 * H * D + M * H)};
    int n = 0;
    switch (rung) {
    case EAGER:
        t[n++] = (traffic_row){"gate_proj", "x, Wg in; gate out", mlp_op_bytes(m, MLP_GATE)};
        t[n++] = (traffic_row){"up_proj", "x, Wu in; up out", mlp_op_bytes(m, MLP_UP)};
        t[n++] = (traffic_row){"gelu", "gate in; h out", mlp_op_bytes(m, MLP_GELU)};
        t[n++] = (traffic_row){"mul", "h, up in; m out", mlp_op_bytes(m, MLP_MUL)};
        t[n++] = down;
        break;
    case FUSED_GEGLU:
        t[n++] = (traffic_row){"gate_proj", "x, Wg in; gate out", mlp_op_bytes(m, MLP_GATE)};
        t[n++] = (traffic_row){"up_proj", "x, Wu in; up out", mlp_op_bytes(m, MLP_UP)};
        t[n++] = geglu;
        t[n++] = down;
        break;
    case MERGED:
        t[n++] = (traffic_row){"gate_up_proj", "x, [Wg; Wu] in; [gate | up] out", e * (M * D + 2 * H * D + 2 * M * H)};
        t[n++] = geglu;
        t[n++] = down;
        break;
    case EPILOGUE:
        t[n++] = fused;
        t[n++] = down;
        break;
    case GRAPH: return rung_traffic(md, md->captured_rung, t);
    default: /* DECODE */
        t[n++] = (traffic_row){"decode_gate_up", "x, Wg, Wu in; m out", fused.bytes};
        t[n++] = (traffic_row){"decode_down", "m, Wd in; y out", down.bytes};
        break;
    }
    return n;
}

static double rung_bytes(const model_t *md, int rung)
{
    traffic_row t[8];
    int n = rung_traffic(md, rung, t);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += t[i].bytes;
    return sum;
}

static void print_launches(const model_t *md, int rung)
{
    const char *dt = dtype_name(md->mlp.dtype);
    switch (rung) {
    case EAGER:
        printf("launches per forward: cublasGemmEx x 3 -> gate, up and down GEMM kernels; launch_gelu_tanh "
               "-> gelu_tanh_%s; launch_mul -> mul_%s\n", dt, dt);
        break;
    case FUSED_GEGLU:
        printf("launches per forward: cublasGemmEx x 2 -> gate and up GEMM kernels; launch_geglu -> geglu_%s "
               "(gate and up in, m out); cublasGemmEx -> down GEMM kernel\n", dt);
        break;
    case MERGED:
        printf("launches per forward: cublasGemmEx -> one GEMM kernel for [gate | up] (N = 2 x hidden); "
               "launch_geglu -> geglu_%s on the two halves; cublasGemmEx -> down GEMM kernel\n", dt);
        break;
    case EPILOGUE:
        printf("launches per forward: launch_gemm_geglu -> our GEMM with the GeGLU epilogue (version %d, %s); "
               "cublasGemmEx -> down GEMM kernel\n", gemm_geglu_default_version(),
               gemm_geglu_default_version() ? gemm_geglu_version_info(gemm_geglu_default_version())->name : "none");
        break;
    case GRAPH:
        printf("launches per forward: cudaGraphLaunch -> the %d kernels of `%s`, captured once by the first "
               "forward\n", rung_traffic(md, rung, (traffic_row[8]){0}), variants[md->captured_rung]);
        break;
    default:
        printf("launches per forward: cudaGraphLaunch -> decode_gate_up_%s, decode_down_%s (a programmatic "
               "dependent launch on sm_90; captured once by the first forward)\n", dt, dt);
        break;
    }
}

static void print_traffic(const model_t *md, int rung)
{
    traffic_row t[8];
    int n = rung_traffic(md, rung, t);
    double sum = 0;
    printf("HBM traffic per forward (napkin math: each operand read or written once):\n");
    for (int i = 0; i < n; i++) {
        printf("  %-15s %-34s %10.1f MB\n", t[i].kernel, t[i].moves, t[i].bytes / 1e6);
        sum += t[i].bytes;
    }
    printf("  %-15s %-34s %10.1f MB  (the least any forward moves: x, weights, y: %.1f MB)\n", "total", "",
           sum / 1e6, mlp_min_bytes(&md->mlp) / 1e6);
}

/* ---- the forwards ------------------------------------------------------------------------- */

/* The first GEMM creates the handle (03's mlp_run_op does the same), on the model's stream. */
static void ensure_blas(mlp_t *m)
{
    if (m->blas) return;
    CUBLAS_CHECK(cublasCreate(&m->blas));
    CUBLAS_CHECK(cublasSetStream(m->blas, m->stream));
}

static void fwd_eager(model_t *md) { mlp_forward_eager(&md->mlp); }

static void fwd_fused_geglu(model_t *md)
{
    mlp_t *m = &md->mlp;
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
}

/* With [Wg; Wu] concatenated, row r of gu = x . [Wg; Wu]^T holds gate in columns 0..hidden-1
 * and up in hidden..2*hidden-1: an ordinary row-major GEMM for cuBLAS, and two half-rows, each
 * contiguous, for the GeGLU kernel. */
static void fwd_merged(model_t *md)
{
    mlp_t *m = &md->mlp;
    size_t H = m->hidden, e = dtype_size(m->dtype);
    ensure_blas(m);
    prof_range_push("gate_up_proj");
    blas_gemm(m->blas, m->dtype, 0, m->tokens, 2 * H, m->dim, 1.0f, m->x, md->wgu, 0.0f, md->gu, 1);
    prof_range_pop();
    prof_range_push("geglu");
    launch_geglu(m->dtype, md->gu, (char *)md->gu + H * e, 2 * H, m->prod, m->tokens, H, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_push("down_proj");
    mlp_run_op(m, MLP_DOWN);
    prof_range_pop();
}

static void fwd_epilogue(model_t *md)
{
    mlp_t *m = &md->mlp;
    prof_range_push("gate_up_geglu");
    launch_gemm_geglu(gemm_geglu_default_version(), m->dtype, m->x, m->wg, m->wu, m->prod, m->tokens, m->dim,
                      m->hidden, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_push("down_proj");
    mlp_run_op(m, MLP_DOWN);
    prof_range_pop();
}

static void fwd_decode_kernels(model_t *md)
{
    mlp_t *m = &md->mlp;
    prof_range_push("decode_gate_up");
    launch_decode_gate_up(m->dtype, m->x, m->wg, m->wu, m->prod, m->tokens, m->dim, m->hidden, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
    prof_range_push("decode_down");
    launch_decode_down(m->dtype, m->prod, m->wd, m->y, m->tokens, m->hidden, m->dim, m->stream);
    LAUNCH_CHECK();
    prof_range_pop();
}

/* Each rung's own launches: run as they are, or captured into a graph (DECODE only that way). */
static void (*const rung_forward[N_VARIANTS])(model_t *) = {
    [EAGER] = fwd_eager, [FUSED_GEGLU] = fwd_fused_geglu, [MERGED] = fwd_merged, [EPILOGUE] = fwd_epilogue,
    [DECODE] = fwd_decode_kernels,
};

/* Captures the forward of rung md->captured_rung once. One plain run goes first, so that
 * everything done only on a first call (cuBLAS's handle and kernel choice, module loading, our
 * launchers' attribute calls) is done outside the capture: a capture records stream work, and
 * calls that synchronise the device would invalidate it. The ranges pushed during capture
 * appear once, in the first step. */
static void capture_graph(model_t *md)
{
    cudaStream_t s = md->mlp.stream;
    rung_forward[md->captured_rung](md);
    CUDA_CHECK(cudaStreamSynchronize(s));
    cudaGraph_t g;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    rung_forward[md->captured_rung](md);
    CUDA_CHECK(cudaStreamEndCapture(s, &g));
    CUDA_CHECK(cudaGraphInstantiate(&md->graph, g, 0));
    CUDA_CHECK(cudaGraphDestroy(g));
}

static void forward(void *ctx)
{
    model_t *md = ctx;
    if (md->rung == EAGER) { /* 03's forward, ranges and all */
        fwd_eager(md);
        return;
    }
    prof_range_push("mlp_fwd");
    if (md->rung == GRAPH || md->rung == DECODE) {
        if (!md->graph) capture_graph(md);
        prof_range_push("graph_launch");
        CUDA_CHECK(cudaGraphLaunch(md->graph, md->mlp.stream));
        prof_range_pop();
    } else {
        rung_forward[md->rung](md);
    }
    prof_range_pop();
}

/* ---- setup of each rung ------------------------------------------------------------------ */

/* 1 when the rung can run this problem here; else 0 with the reason in why. */
static int rung_available(const mlp_t *m, int rung, char *why, size_t len)
{
    if (rung == EPILOGUE) {
        const int v = gemm_geglu_default_version();
        if (!v) {
            snprintf(why, len, "our GeGLU GEMM needs an sm_80 or newer GPU");
            return 0;
        }
        return gemm_geglu_accepts(v, m->dtype, m->tokens, m->dim, m->hidden, why, len);
    }
    if (rung == DECODE) {
        if (!decode_runs_here()) {
            snprintf(why, len, "the decode kernels need an sm_80 or newer GPU");
            return 0;
        }
        return decode_supported(m->dtype, m->tokens, m->dim, m->hidden, why, len);
    }
    return 1;
}

static void rung_release(model_t *md)
{
    CUDA_CHECK(cudaStreamSynchronize(md->mlp.stream));
    if (md->graph) CUDA_CHECK(cudaGraphExecDestroy(md->graph));
    CUDA_CHECK(cudaFree(md->wgu));
    CUDA_CHECK(cudaFree(md->gu));
    md->graph = NULL;
    md->wgu = md->gu = NULL;
}

/* rung runs here; when it is GRAPH or DECODE, captured is the rung its graph holds. */
static void rung_prepare_capturing(model_t *md, int rung, int captured)
{
    mlp_t *m = &md->mlp;
    md->rung = rung;
    md->captured_rung = captured;
    if (rung == MERGED || (rung == GRAPH && captured == MERGED)) {
        /* [Wg; Wu]: Wg's rows, then Wu's; built once here, as a model would store it. */
        size_t e = dtype_size(m->dtype), w = m->hidden * m->dim * e, out = m->tokens * m->hidden * e;
        gpu_require_fits(size_mul(w + out, 2, "the merged weight and output"), "the merged [Wg; Wu] and its output");
        CUDA_CHECK(cudaMalloc(&md->wgu, 2 * w));
        CUDA_CHECK(cudaMalloc(&md->gu, 2 * out));
        CUDA_CHECK(cudaMemcpy(md->wgu, m->wg, w, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaMemcpy((char *)md->wgu + w, m->wu, w, cudaMemcpyDeviceToDevice));
    }
}

/* The rung the graph rung captures: of eager .. epilogue, those available here, the one whose
 * own graph replays fastest. A graph takes the CPU's launch cost away, so what decides is GPU
 * time, and that ranks the rungs differently from eager timing: at 8 tokens our GEMM beats
 * cuBLAS's launches but not its kernels. The trace pass is told the choice (GRAPH_OF_ENV) so it
 * records the graph that was timed. */
#define GRAPH_OF_ENV "FUSED_MLP_GRAPH_OF"
static int fastest_graphed_rung(model_t *md, int say)
{
    const char *told = getenv(GRAPH_OF_ENV);
    if (told && prof_is_trace_pass())
        for (int v = EAGER; v <= EPILOGUE; v++)
            if (strcmp(variants[v], told) == 0) return v;
    int best = -1;
    double best_us = INFINITY;
    char why[256];
    if (say) printf("graph: each rung's forward as a graph, replayed back to back:");
    for (int v = EAGER; v <= EPILOGUE; v++) {
        if (!rung_available(&md->mlp, v, why, sizeof why)) continue;
        rung_prepare_capturing(md, v, v);
        forward(md); /* first-call work (handles, module loading) stays out of the capture */
        double us = prof_graph_back_to_back_us(forward, md, md->mlp.stream, 20, 3);
        rung_release(md);
        if (say) printf("%s %s %.2f us", best < 0 ? "" : ",", variants[v], us);
        if (us < best_us) {
            best_us = us;
            best = v;
        }
    }
    if (say) printf(" -> captures %s\n", variants[best]);
    setenv(GRAPH_OF_ENV, variants[best], 1);
    return best;
}

/* say: print how the graph rung chose what it captures */
static void rung_prepare(model_t *md, int rung, int say)
{
    if (rung == GRAPH) rung_prepare_capturing(md, GRAPH, fastest_graphed_rung(md, say));
    else rung_prepare_capturing(md, rung, rung == DECODE ? DECODE : rung);
}

/* mlp_check poisons 03's buffers; the merged output is ours to poison. */
static double check_rung(model_t *md)
{
    if (md->gu)
        CUDA_CHECK(cudaMemsetAsync(md->gu, 0xFF, 2 * md->mlp.tokens * md->mlp.hidden * dtype_size(md->mlp.dtype),
                                   md->mlp.stream));
    return mlp_check(&md->mlp, forward, md);
}

/* --dump DIR: the inputs and this rung's output as .npy files, for the compare scripts:
 * x [M, dim], wg and wu [hidden, dim], wd [dim, hidden], y_<rung> [M, dim]. */
static void dump_arrays(const model_t *md, const char *dir)
{
    const mlp_t *m = &md->mlp;
    char y_name[64];
    snprintf(y_name, sizeof y_name, "y_%s", variants[md->rung]);
    struct {
        const char *name;
        size_t shape[2];
        const void *dev;
    } arrays[] = {
        {"x", {m->tokens, m->dim}, m->x},   {"wg", {m->hidden, m->dim}, m->wg}, {"wu", {m->hidden, m->dim}, m->wu},
        {"wd", {m->dim, m->hidden}, m->wd}, {y_name, {m->tokens, m->dim}, m->y},
    };
    for (int i = 0; i < 5; i++)
        if (dump_device_array(dir, arrays[i].name, m->dtype, arrays[i].shape, 2, arrays[i].dev) != 0)
            exit(EXIT_BAD_INPUT);
    printf("dump: wrote x, wg, wu, wd and %s as .npy files in %s/\n", y_name, dir);
}

/* The trace pass: this command line again, for one variant. */
static void spawn_trace(int argc, char **argv, const char *variant)
{
    char **child = calloc((size_t)argc + 3, sizeof *child);
    if (!child) exit(EXIT_BAD_INPUT);
    for (int i = 0; i < argc; i++) child[i] = argv[i];
    child[argc] = "--variant";
    child[argc + 1] = (char *)variant;
    prof_spawn_trace_pass(child);
    free(child);
}

/* ---- one timed run of one rung ---------------------------------------------------------- */

/* The floor: the slower of doing the GEMMs' FLOPs at the measured GEMM ceiling and moving the
 * least bytes (x, weights, y) at the measured copy ceiling; 0 without measured ceilings. */
static double floor_us(const gpu_info *g, const mlp_t *m)
{
    double tflops = gpu_gemm_ceiling(g, m->dtype);
    if (tflops <= 0 || g->copy_gbps <= 0) return 0;
    return fmax(mlp_flops(m) / (tflops * 1e12), mlp_min_bytes(m) / (g->copy_gbps * 1e9)) * 1e6;
}

typedef struct {
    int ran, kernels;
    double bytes, fwd_us, step_us, err;
} rung_result;

static void tag_of(char *tag, size_t len, const mlp_t *m, long long batch, long long seq, const common_args *a, int rung)
{
    snprintf(tag, len, "%lldx%lld_%zux%zu_%s_%s_%s", batch, seq, m->dim, m->hidden, dtype_name(m->dtype),
             a->sched.warmup > 0 ? "warm" : "cold", variants[rung]);
}

/* Enough forwards back to back for about 50 ms of GPU work, 10 to 200 of them. */
static int batch_for(double us)
{
    double n = 50000.0 / (us > 1 ? us : 1);
    return n < 10 ? 10 : n > 200 ? 200 : (int)n;
}

static rung_result run_rung(model_t *md, const common_args *a, const gpu_info *g, long long batch,
                            long long seq, int argc, char **argv)
{
    rung_result res = {0};
    char tag[160], base[700];
    tag_of(tag, sizeof tag, &md->mlp, batch, seq, a, md->rung);
    snprintf(base, sizeof base, "%s/%s", a->out_dir, tag);

    prof_run run;
    prof_run_schedule(&run, &a->sched, md->mlp.stream, forward, md);

    traffic_row t[8];
    res.kernels = rung_traffic(md, md->rung, t);
    if (run.traced) { /* the trace pass only records; the timed pass reports */
        if (trace_write(base, 12) == 0) printf("trace: wrote %s.json and %s.txt\n", base, base);
        char step[32];
        int kernels, memcpys, memsets;
        snprintf(step, sizeof step, "ProfileStep#%d", a->sched.wait + a->sched.warmup_steps);
        if (trace_gpu_ops_in_range(step, &kernels, &memcpys, &memsets) >= 0)
            printf("trace: %s ran %d kernels (we expected %d)\n", step, kernels, res.kernels);
        prof_free(&run);
        return res;
    }

    const mlp_t *m = &md->mlp;
    printf("\n== %s: %s\n", tag, variant_help[md->rung]);
    print_launches(md, md->rung);
    print_traffic(md, md->rung);
    report_steps(&run);
    res.ran = 1;
    res.bytes = rung_bytes(md, md->rung);
    res.step_us = prof_active_stats(&run, 1).median;
    res.fwd_us = prof_back_to_back_us(forward, md, m->stream, batch_for(res.step_us), 5);
    printf("back to back: %.2f us per forward (forwards issued without waiting, median of 5 batches)\n", res.fwd_us);
    report_verdict(prof_active_stats(&run, 0).median, res.step_us);
    report_throughput(g, m->dtype, mlp_flops(m), res.fwd_us);
    report_bandwidth(g, res.bytes, res.fwd_us);
    double fl = floor_us(g, m);
    if (fl > 0)
        printf("floor: %.2f us (max of %.1f GFLOP at the GEMM ceiling, %.1f MB at the copy ceiling): "
               "this rung runs at %.0f%% of it\n", fl, mlp_flops(m) / 1e9, mlp_min_bytes(m) / 1e6, 100.0 * fl / res.fwd_us);
    if (a->check) {
        res.err = check_rung(md);
        report_check(res.err, mlp_tolerance(m->dtype));
    }
    if (a->dump_dir[0]) dump_arrays(md, a->dump_dir);

    report_step_files(&run, base, tag, a->plot);
    prof_free(&run);
    if (a->trace) spawn_trace(argc, argv, variants[md->rung]);
    return res;
}

/* ---- the ladder table --------------------------------------------------------------------- */

static void ladder_table(const model_t *md, const rung_result *r, const char skipped[][256], int first,
                         int last, const common_args *a, const gpu_info *g, long long batch, long long seq)
{
    const mlp_t *m = &md->mlp;
    double fl = floor_us(g, m), eager = r[EAGER].ran ? r[EAGER].fwd_us : 0;
    printf("\n== the ladder: %zu tokens, %zu -> %zu -> %zu, %s, %s\n", m->tokens, m->dim, m->hidden, m->dim,
           dtype_name(m->dtype), g->prop.name);
    printf("fwd_us: per forward, forwards issued back to back; step_us: GPU time of one step, the CPU's issue\n"
           "time excluded (medians). TFLOP/s, %% of floor and speed-up use fwd_us.");
    if (fl > 0) printf(" Floor: %.2f us.", fl);
    printf("\n%-12s %7s %10s %10s %10s %8s %10s %8s %10s\n", "rung", "kernels", "HBM MB", "fwd_us", "step_us",
           "TFLOP/s", "% floor", "vs eager", "rel_err");
    char csv[600], png[600], title[400], tmp[700];
    snprintf(csv, sizeof csv, "%s/ladder_%lldx%lld_%zux%zu_%s.csv", a->out_dir, batch, seq, m->dim, m->hidden,
             dtype_name(m->dtype));
    snprintf(png, sizeof png, "%.*s.png", (int)(strlen(csv) - 4), csv);
    snprintf(title, sizeof title, "GeGLU MLP ladder, %zu tokens, %zu -> %zu, %s, %s", m->tokens, m->dim,
             m->hidden, dtype_name(m->dtype), g->prop.name);
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (f) fprintf(f, "rung,kernels,hbm_mb,fwd_us,step_us,tflops,pct_floor,speedup,floor_us\n");
    for (int v = first; v <= last; v++) {
        if (!r[v].ran) {
            printf("%-12s skipped: %s\n", variants[v], skipped[v]);
            continue;
        }
        double tflops = mlp_flops(m) / (r[v].fwd_us * 1e-6) / 1e12;
        double pct = fl > 0 ? 100.0 * fl / r[v].fwd_us : NAN, speedup = eager > 0 ? eager / r[v].fwd_us : NAN;
        char pct_s[16] = "-", speedup_s[16] = "-";
        if (fl > 0) snprintf(pct_s, sizeof pct_s, "%.0f%%", pct);
        if (eager > 0) snprintf(speedup_s, sizeof speedup_s, "%.2fx", speedup);
        char err_s[16] = "-";
        if (a->check) snprintf(err_s, sizeof err_s, "%.2e", r[v].err);
        printf("%-12s %7d %10.1f %10.2f %10.2f %8.1f %10s %8s %10s\n", variants[v], r[v].kernels,
               r[v].bytes / 1e6, r[v].fwd_us, r[v].step_us, tflops, pct_s, speedup_s, err_s);
        if (f)
            fprintf(f, "%s,%d,%.3f,%.3f,%.3f,%.2f,%.2f,%.3f,%.3f\n", variants[v], r[v].kernels, r[v].bytes / 1e6,
                    r[v].fwd_us, r[v].step_us, tflops, pct, speedup, fl > 0 ? fl : NAN);
    }
    if (f && out_commit(f, tmp, csv) == 0) {
        printf("wrote %s\n", csv);
        if (a->plot && plot_run("ladder.gp", csv, png, title) == 0) printf("wrote %s\n", png);
    }
}

/* ---- --sweep: tokens 1..32768, time per forward of every rung ------------------------------ */

static void print_wins(const int *winner, const size_t *tokens, int n, int first, int last)
{
    printf("fastest rung by token count:\n");
    for (int v = first; v <= last; v++) {
        printf("  %-12s", variants[v]);
        int any = 0;
        for (int i = 0; i < n; i++) {
            if (winner[i] != v) continue;
            int j = i;
            while (j + 1 < n && winner[j + 1] == v) j++;
            if (j > i) printf("%s%zu..%zu", any ? ", " : " ", tokens[i], tokens[j]);
            else printf("%s%zu", any ? ", " : " ", tokens[i]);
            any = 1;
            i = j;
        }
        printf("%s\n", any ? " tokens" : " never");
    }
}

static int run_sweep(const common_args *a, int first, int last, size_t dim, size_t hidden, const gpu_info *g)
{
    char csv[600], png[600], title[400], tmp[700];
    snprintf(csv, sizeof csv, "%s/sweep_%zux%zu_%s.csv", a->out_dir, dim, hidden, dtype_name(a->dtype));
    snprintf(png, sizeof png, "%s/sweep_%zux%zu_%s.png", a->out_dir, dim, hidden, dtype_name(a->dtype));
    snprintf(title, sizeof title, "GeGLU MLP %zu -> %zu, %s, %s: time per forward, back to back", dim, hidden,
             dtype_name(a->dtype), g->prop.name);
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (!f) return 1;
    fprintf(f, "tokens");
    printf("%7s", "tokens");
    for (int v = first; v <= last; v++) {
        fprintf(f, ",%s", variants[v]);
        printf(" %12s", variants[v]);
    }
    fprintf(f, ",floor\n");
    printf(" %10s  %s\n", "floor", "fastest");

    enum { N_TOKENS = 16 }; /* 1, 2, 4, ... 32768 */
    size_t tokens[N_TOKENS];
    int winner[N_TOKENS], failed = 0;
    for (int i = 0; i < N_TOKENS; i++) {
        tokens[i] = (size_t)1 << i;
        model_t md = {0};
        mlp_setup(&md.mlp, a->dtype, tokens[i], dim, hidden, a->seed);
        double best = INFINITY;
        winner[i] = -1;
        fprintf(f, "%zu", tokens[i]);
        printf("%7zu", tokens[i]);
        for (int v = first; v <= last; v++) {
            char why[256];
            if (!rung_available(&md.mlp, v, why, sizeof why)) {
                fprintf(f, ",NaN");
                printf(" %12s", "-");
                continue;
            }
            rung_prepare(&md, v, 0);
            for (int w = 0; w < 3; w++) forward(&md); /* module loading, handle, graph capture */
            double once = prof_back_to_back_us(forward, &md, md.mlp.stream, 3, 1);
            double us = prof_back_to_back_us(forward, &md, md.mlp.stream, batch_for(once), 3);
            if (a->check && !(check_rung(&md) <= mlp_tolerance(a->dtype))) {
                printf("\ncheck: %s FAILED at %zu tokens\n", variants[v], tokens[i]);
                failed = 1;
            }
            rung_release(&md);
            fprintf(f, ",%.3f", us);
            printf(" %12.2f", us);
            if (us < best) {
                best = us;
                winner[i] = v;
            }
        }
        double fl = floor_us(g, &md.mlp);
        fprintf(f, fl > 0 ? ",%.3f\n" : ",NaN\n", fl);
        printf(" %10.2f  %s\n", fl, winner[i] >= 0 ? variants[winner[i]] : "-");
        mlp_free(&md.mlp);
    }
    if (out_commit(f, tmp, csv) != 0) return 1;
    printf("wrote %s\n", csv);
    print_wins(winner, tokens, N_TOKENS, first, last);
    if (a->plot && plot_run("ladder_sweep.gp", csv, png, title) == 0) printf("wrote %s\n", png);
    if (failed) printf("check: FAILED at one or more token counts (tolerance %.1e)\n", mlp_tolerance(a->dtype));
    return failed;
}

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    long long batch = 64, seq = 128, dim = 768, hidden = 3072;
    const stage_opt opts[] = {
        {"batch", &batch, 1, 1 << 20, "sequences per step (tokens = batch x seq)"},
        {"seq", &seq, 1, 1 << 20, "tokens per sequence"},
        {"dim", &dim, 1, 1 << 20, "model width: x and y are [tokens, dim]"},
        {"hidden", &hidden, 1, 1 << 20, "MLP width: Wg and Wu are [hidden, dim], Wd is [dim, hidden]"},
    };
    const stage_spec spec = {"04_fused_mlp",
                             "the GeGLU MLP of 03_simple_mlp, fused rung by rung: y = (gelu(x Wg^T) * x Wu^T) Wd^T",
                             variants, variant_help, opts, 4};
    common_args a;
    cli_parse(argc, argv, &spec, &a);
    if (!prof_trace_pass_open()) return 0; /* trace pass, and CUPTI unavailable: said why */
    size_t tokens = size_mul((size_t)batch, (size_t)seq, "batch x seq");

    gpu_info g;
    if (out_mkdirs(a.out_dir) != 0) return EXIT_BAD_INPUT; /* every input checked before the GPU */
    gpu_require(&g, spec.stage);
    if (!prof_is_trace_pass()) gpu_print(&g);

    int first = EAGER, last = DECODE;
    if (strcmp(a.variant, "all") != 0 && strcmp(a.variant, "ladder") != 0) {
        for (first = EAGER; strcmp(variants[first], a.variant) != 0; first++) {}
        last = first;
    }
    if (a.sweep) return run_sweep(&a, first, last, (size_t)dim, (size_t)hidden, &g) ? EXIT_BAD_INPUT : 0;

    model_t md = {0};
    mlp_setup(&md.mlp, a.dtype, tokens, (size_t)dim, (size_t)hidden, a.seed);
    if (!prof_is_trace_pass())
        printf("shape: %zu tokens (batch %lld x seq %lld), dim %lld, hidden %lld, %s; %.1f GFLOP per forward\n",
               tokens, batch, seq, dim, hidden, dtype_name(a.dtype), mlp_flops(&md.mlp) / 1e9);

    rung_result results[N_VARIANTS] = {0};
    char skipped[N_VARIANTS][256] = {{0}};
    int failed = 0;
    for (int v = first; v <= last; v++) {
        if (!rung_available(&md.mlp, v, skipped[v], sizeof skipped[v])) {
            if (first == last) { /* asked for by name: bad input */
                fprintf(stderr, "error: --variant %s is not available here: %s\n", variants[v], skipped[v]);
                mlp_free(&md.mlp);
                return EXIT_BAD_INPUT;
            }
            if (!prof_is_trace_pass()) printf("\n== %s: skipped: %s\n", variants[v], skipped[v]);
            continue;
        }
        rung_prepare(&md, v, !prof_is_trace_pass());
        results[v] = run_rung(&md, &a, &g, batch, seq, argc, argv);
        failed |= a.check && results[v].ran && !(results[v].err <= mlp_tolerance(a.dtype));
        rung_release(&md);
    }
    if (!prof_is_trace_pass() && last > first) ladder_table(&md, results, skipped, first, last, &a, &g, batch, seq);
    mlp_free(&md.mlp);
    if (prof_is_trace_pass()) return 0;
    printf("\noutputs: %s/\n", a.out_dir);
    return failed ? EXIT_BAD_INPUT : 0;
}
