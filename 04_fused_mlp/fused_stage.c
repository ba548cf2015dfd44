#include "fused_stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gemm_geglu.h"
#include "kernels.h"
#include "out.h"
#include "prof.h"
#include "size.h"
#include "stats.h"

/* ---- the flags ---------------------------------------------------------------------------- */

static const char *gemm_word, *graph_of_word; /* NULL: the default version; fastest */
enum { OPT_GEMM = 4, OPT_GRAPH_OF = 5, GEMM_ALL = -1 };
stage_opt fused_opts[6] = {
    {"batch", &mlp_batch, 1, 1 << 20, "sequences per forward (tokens = batch x seq)", FLAG_WHOLE, NULL, 1},
    {"seq", &mlp_seq, 1, 1 << 20, "tokens per sequence (x has batch x seq rows)", FLAG_WHOLE, NULL, 1},
    {"dim", &mlp_dim, 1, 1 << 20, "model width: x and y are [tokens, dim]"},
    {"hidden", &mlp_hidden, 1, 1 << 20, "MLP width: Wg and Wu are [hidden, dim], Wd is [dim, hidden]"},
    {"gemm", NULL, 0, 0, "N | all: the epilogue rung's GEMM version (default: the fastest that runs here); all: "
                         "every version timed against cuBLAS, one table", FLAG_WORD, &gemm_word},
    {"graph-of", NULL, 0, 0, "RUNG | fastest: what the graph rung captures (eager, fused_geglu, merged, epilogue; "
                             "default fastest: each rung's graph timed in alternating rounds)", FLAG_WORD, &graph_of_word},
};

int fused_opt_for(int opt, int rung)
{
    if (opt == OPT_GEMM) return rung == EPILOGUE || rung == GRAPH;
    if (opt == OPT_GRAPH_OF) return rung == GRAPH;
    return 1;
}

/* --gemm: 0 (the default version), GEMM_ALL, or 1..n; -1 with why when it is none of them. */
static int gemm_flag(int *version, char *why, size_t len)
{
    *version = 0;
    if (!gemm_word) return 0;
    if (strcmp(gemm_word, "all") == 0) {
        *version = GEMM_ALL;
        return 0;
    }
    const int n = gemm_geglu_n_versions();
    char *end;
    long v = strtol(gemm_word, &end, 10);
    if (*end != '\0' || gemm_word[0] < '1' || gemm_word[0] > '9' || v > n) {
        snprintf(why, len, "--gemm: '%.40s' is not a version (1..%d, or all)", gemm_word, n);
        return -1;
    }
    *version = (int)v;
    return 0;
}

/* --graph-of: the rung it names, -1 for fastest, -2 when it names none. */
static int graph_of_flag(void)
{
    if (!graph_of_word || strcmp(graph_of_word, "fastest") == 0) return -1;
    for (int r = EAGER; r <= EPILOGUE; r++)
        if (strcmp(fused_rungs[r].name, graph_of_word) == 0) return r;
    return -2;
}

/* ---- which rung takes which problem: dtype and shape, then the device ------------------------ */

static int epilogue_accepts(int version, dtype_t t, size_t tokens, char *why, size_t len)
{
    if (version > 0) return gemm_geglu_accepts(version, t, tokens, (size_t)mlp_dim, (size_t)mlp_hidden, why, len);
    for (int v = 1; v <= gemm_geglu_n_versions(); v++) /* the default is chosen on the GPU: any will do */
        if (gemm_geglu_accepts(v, t, tokens, (size_t)mlp_dim, (size_t)mlp_hidden, why, len)) return 1;
    return 0;
}

int fused_validate(const common_args *a, int rung, char *why, size_t len)
{
    int rc = mlp_stage_validate(a, rung, why, len), version;
    if (rc != 0) return rc;
    if (gemm_flag(&version, why, len) != 0) return 1;
    const int graph_of = graph_of_flag();
    if (graph_of == -2) {
        snprintf(why, len, "--graph-of: '%.40s' is not a rung (eager, fused_geglu, merged, epilogue or fastest)",
                 graph_of_word);
        return 1;
    }
    /* --sweep sets the tokens itself: fused_runs checks each count */
    const size_t tokens = a->sweep ? 1 : (size_t)mlp_batch * (size_t)mlp_seq;
    if (rung == EPILOGUE || (rung == GRAPH && graph_of == EPILOGUE))
        return epilogue_accepts(version > 0 ? version : 0, a->dtype, tokens, why, len) ? 0 : -1;
    if (rung == DECODE)
        return decode_supported(a->dtype, tokens, (size_t)mlp_dim, (size_t)mlp_hidden, why, len) ? 0 : -1;
    return 0;
}

int fused_runs(const void *model, int rung, char *why, size_t len)
{
    const fused_mlp *md = model;
    const mlp_t *m = &md->mlp;
    if (rung == EPILOGUE) {
        if (!md->gemm_version) {
            snprintf(why, len, "our GeGLU GEMM needs an sm_80 or newer GPU");
            return 0;
        }
        if (!gemm_geglu_runs_here(md->gemm_version)) {
            snprintf(why, len, "GEMM version %d (%s) cannot run on this GPU", md->gemm_version,
                     gemm_geglu_version_info(md->gemm_version)->name);
            return 0;
        }
        return gemm_geglu_accepts(md->gemm_version, m->dtype, m->tokens, m->dim, m->hidden, why, len);
    }
    if (rung == DECODE) {
        if (!decode_runs_here()) {
            snprintf(why, len, "the decode kernels need an sm_80 or newer GPU");
            return 0;
        }
        return decode_supported(m->dtype, m->tokens, m->dim, m->hidden, why, len);
    }
    if (rung == GRAPH && graph_of_flag() >= 0) return fused_runs(model, graph_of_flag(), why, len);
    return 1;
}

/* ---- the model ------------------------------------------------------------------------------ */

void *fused_setup(const common_args *a, size_t tokens)
{
    fused_mlp *md = calloc(1, sizeof *md);
    if (!md) exit(EXIT_BAD_INPUT);
    size_t t = tokens ? tokens : (size_t)mlp_batch * (size_t)mlp_seq;
    mlp_setup(&md->mlp, a->dtype, t, (size_t)mlp_dim, (size_t)mlp_hidden, a->seed);
    char why[256];
    gemm_flag(&md->gemm_version, why, sizeof why); /* validated before the GPU */
    if (md->gemm_version <= 0) md->gemm_version = gemm_geglu_default_version();
    md->graph_of = -1;
    return md;
}

void fused_free(void *model)
{
    fused_mlp *md = model;
    CUDA_CHECK(cudaStreamSynchronize(md->mlp.stream));
    if (md->graph) CUDA_CHECK(cudaGraphExecDestroy(md->graph));
    if (md->decode_graph) CUDA_CHECK(cudaGraphExecDestroy(md->decode_graph));
    if (md->lt) {
        lt_plan_free(&md->plan_gate_up);
        CUBLASLT_CHECK(cublasLtDestroy(md->lt));
    }
    CUDA_CHECK(cudaFree(md->wgu));
    CUDA_CHECK(cudaFree(md->gu));
    mlp_free(&md->mlp);
    free(md);
}

/* merged: [Wg; Wu], Wg's rows then Wu's, built once, as a model would store it. */
static void make_merged_weight(fused_mlp *md)
{
    const mlp_t *m = &md->mlp;
    if (md->wgu) return;
    size_t e = dtype_size(m->dtype), w = m->hidden * m->dim * e, out = m->tokens * m->hidden * e;
    gpu_require_fits(size_mul(w + out, 2, "the merged weight and output"), "the merged [Wg; Wu] and its output");
    CUDA_CHECK(cudaMalloc(&md->wgu, 2 * w));
    CUDA_CHECK(cudaMalloc(&md->gu, 2 * out));
    CUDA_CHECK(cudaMemcpy(md->wgu, m->wg, w, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy((char *)md->wgu + w, m->wu, w, cudaMemcpyDeviceToDevice));
}

/* How the graph rung chose what it captures, for its report. */
static char graph_choice[600];

/* The rung whose graph replays fastest, of those that run here. A graph takes the CPU's launch
 * cost away, so what decides is GPU time, and that ranks the rungs differently from eager
 * timing: at 8 tokens our GEMM beats cuBLAS's launches but not its kernels. Rungs a few percent
 * apart need many forwards and rounds that alternate them (the clocks drift under load). */
static int fastest_graphed_rung(fused_mlp *md)
{
    enum { ROUNDS = 7 };
    prof_graph graphs[EPILOGUE + 1];
    int runs[EPILOGUE + 1] = {0};
    double us[EPILOGUE + 1][ROUNDS], once = INFINITY;
    char why[256];
    cudaStream_t s = md->mlp.stream;
    for (int r = EAGER; r <= EPILOGUE; r++) {
        if (!(runs[r] = fused_runs(md, r, why, sizeof why))) continue;
        fused_prepare(md, r);
        fused_rungs[r].forward(md); /* first-call work (plans, module loading) stays out of the capture */
        CUDA_CHECK(cudaStreamSynchronize(s));
        prof_graph_capture(&graphs[r], fused_rungs[r].forward, md, s);
        double t = prof_back_to_back_us(prof_graph_replay, &graphs[r], s, 3, 1);
        once = t < once ? t : once;
    }
    double n = 20000.0 / (once > 1 ? once : 1); /* about 20 ms of the fastest per round */
    const int forwards = n < 10 ? 10 : n > 2000 ? 2000 : (int)n;
    for (int k = 0; k < ROUNDS; k++)
        for (int r = EAGER; r <= EPILOGUE; r++)
            if (runs[r]) us[r][k] = prof_back_to_back_us(prof_graph_replay, &graphs[r], s, forwards, 1);
    int best = EAGER;
    double best_us = INFINITY;
    snprintf(graph_choice, sizeof graph_choice, "graph: each rung's graph replayed, %d forwards x %d alternating "
             "rounds, median:", forwards, ROUNDS);
    for (int r = EAGER; r <= EPILOGUE; r++) {
        if (!runs[r]) continue;
        double med = stats_of(us[r], ROUNDS).median;
        snprintf(graph_choice + strlen(graph_choice), sizeof graph_choice - strlen(graph_choice), " %s %.2f us",
                 fused_rungs[r].name, med);
        if (med < best_us) best_us = med, best = r;
        prof_graph_free(&graphs[r]);
    }
    snprintf(graph_choice + strlen(graph_choice), sizeof graph_choice - strlen(graph_choice), " -> captures %s",
             fused_rungs[best].name);
    return best;
}

/* --graph-of fastest is measured once for the flags' shape and then held as --graph-of RUNG, so
 * that every later run of this shape in the program captures the same rung; every size of a
 * sweep measures its own. */
static const char *graph_of_measured;

void fused_prepare(void *model, int rung)
{
    fused_mlp *md = model;
    if (rung == MERGED) make_merged_weight(md);
    if (rung != GRAPH || md->graph_of >= 0) return;
    const int flags_shape = md->mlp.tokens == (size_t)mlp_batch * (size_t)mlp_seq;
    md->graph_of = graph_of_flag();
    if (md->graph_of >= 0 && (graph_of_word != graph_of_measured || flags_shape)) {
        snprintf(graph_choice, sizeof graph_choice, "graph: captures %s (--graph-of %s)", graph_of_word,
                 graph_of_word == graph_of_measured ? "fastest, measured once" : graph_of_word);
    } else {
        md->graph_of = fastest_graphed_rung(md);
        if (flags_shape) graph_of_word = graph_of_measured = fused_rungs[md->graph_of].name;
    }
    fused_prepare(md, md->graph_of);
}

/* mlp_check poisons 03's buffers; the merged output is ours to poison. */
double fused_check(void *model, void (*forward)(void *model))
{
    fused_mlp *md = model;
    if (md->gu)
        CUDA_CHECK(cudaMemsetAsync(md->gu, 0xFF, 2 * md->mlp.tokens * md->mlp.hidden * dtype_size(md->mlp.dtype),
                                   md->mlp.stream));
    return mlp_check(&md->mlp, forward, md);
}

double fused_flops(const void *model) { return mlp_flops(&((const fused_mlp *)model)->mlp); }
double fused_min_bytes(const void *model) { return mlp_min_bytes(&((const fused_mlp *)model)->mlp); }
cudaStream_t fused_stream(const void *model) { return ((const fused_mlp *)model)->mlp.stream; }
void fused_tag(const void *model, const common_args *a, char *buf, size_t len)
{
    mlp_stage_tag(&((const fused_mlp *)model)->mlp, a, buf, len);
}
/* ladder_<batch>x<seq>_<dim>x<hidden>_<dtype>.csv: the names the docs' figures are made from */
void fused_ladder_tag(const void *model, const common_args *a, char *buf, size_t len)
{
    (void)model;
    snprintf(buf, len, "%lldx%lld_%lldx%lld_%s", mlp_batch, mlp_seq, mlp_dim, mlp_hidden, dtype_name(a->dtype));
}
int fused_arrays(const void *model, stage_array *out, int max)
{
    return mlp_stage_arrays(&((const fused_mlp *)model)->mlp, out, max);
}
void fused_describe(const void *model) { mlp_stage_describe(&((const fused_mlp *)model)->mlp); }

void fused_sweep_names(const common_args *a, const char *rung, char *stem, char *title, size_t len)
{
    if (rung) {
        mlp_stage_sweep_names(a, rung, stem, title, len);
        return;
    }
    snprintf(stem, len, "sweep_%lldx%lld_%s", mlp_dim, mlp_hidden, dtype_name(a->dtype));
    snprintf(title, len, "GeGLU MLP %lld -> %lld, %s: time per forward, back to back", mlp_dim, mlp_hidden,
             dtype_name(a->dtype));
}

/* ---- what each rung launches and moves ---------------------------------------------------------
 * Napkin math for HBM traffic: every operand of every kernel read or written once (a GEMM
 * re-reads its tiles from L2, not HBM, when the operands fit there or the tiling is good). */

typedef struct {
    const char *kernel, *moves;
    double bytes;
} traffic_row;

static int rung_traffic(const fused_mlp *md, int rung, traffic_row *t)
{
    const mlp_t *m = &md->mlp;
    double e = mlp_elem_bytes(m), M = (double)m->tokens, D = (double)m->dim, H = (double)m->hidden;
    const traffic_row gate = {"gate_proj", "x, Wg in; gate out", mlp_op_bytes(m, MLP_GATE)};
    const traffic_row up = {"up_proj", "x, Wu in; up out", mlp_op_bytes(m, MLP_UP)};
    const traffic_row down = {"down_proj", "prod, Wd in; y out", mlp_op_bytes(m, MLP_DOWN)};
    const traffic_row geglu = {"geglu", "gate, up in; prod out", e * 3 * M * H};
    const double gate_up_geglu = e * (M * D + 2 * H * D + M * H); /* x, Wg, Wu in; prod out */
    int n = 0;
    switch (rung) {
    case EAGER:
        t[n++] = gate;
        t[n++] = up;
        t[n++] = (traffic_row){"gelu", "gate in; act out", mlp_op_bytes(m, MLP_GELU)};
        t[n++] = (traffic_row){"mul", "act, up in; prod out", mlp_op_bytes(m, MLP_MUL)};
        break;
    case FUSED_GEGLU:
        t[n++] = gate;
        t[n++] = up;
        t[n++] = geglu;
        break;
    case MERGED:
        t[n++] = (traffic_row){"gate_up_proj", "x, [Wg; Wu] in; [gate | up] out", e * (M * D + 2 * H * D + 2 * M * H)};
        t[n++] = geglu;
        break;
    case EPILOGUE: t[n++] = (traffic_row){"gate_up_geglu", "x, Wg, Wu in; prod out", gate_up_geglu}; break;
    case GRAPH: return md->graph_of >= 0 ? rung_traffic(md, md->graph_of, t) : 0;
    default: /* DECODE */
        t[n++] = (traffic_row){"decode_gate_up", "x, Wg, Wu in; prod out", gate_up_geglu};
        t[n++] = (traffic_row){"decode_down", "prod, Wd in; y out", down.bytes};
        return n;
    }
    t[n++] = down;
    return n;
}

double fused_rung_bytes(const void *model, int rung)
{
    traffic_row t[8];
    int n = rung_traffic(model, rung, t);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += t[i].bytes;
    return sum;
}

int fused_rung_kernels(const void *model, int rung)
{
    traffic_row t[8];
    return rung_traffic(model, rung, t);
}

/* ---- --gemm all: every version of our GEMM against cuBLAS on the same [Wg; Wu] GEMM ------------ */

typedef struct {
    fused_mlp *md;
    int version; /* 0: cuBLAS, the merged rung's GEMM without epilogue */
} gemm_call;

static void run_gemm(void *ctx)
{
    const gemm_call *c = ctx;
    const mlp_t *m = &c->md->mlp;
    if (c->version == 0) gate_up_gemm(c->md);
    else launch_gemm_geglu(c->version, m->dtype, m->x, m->wg, m->wu, m->prod, m->tokens, m->dim, m->hidden, m->stream);
}

static void gemm_versions_table(fused_mlp *md, const gpu_info *g, const common_args *a)
{
    enum { ROUNDS = 7, MAX = 16 };
    const mlp_t *m = &md->mlp;
    const int n = gemm_geglu_n_versions() < MAX - 1 ? gemm_geglu_n_versions() : MAX - 1;
    const double flops = 2.0 * (double)m->tokens * (double)m->dim * 2.0 * (double)m->hidden;
    gemm_call calls[MAX];
    char why[MAX][256] = {{0}};
    double us[MAX][ROUNDS], err[MAX];
    int runs[MAX];
    cudaStream_t s = m->stream;
    make_merged_weight(md);
    for (int v = 0; v <= n; v++) {
        calls[v] = (gemm_call){md, v};
        runs[v] = v == 0 || (gemm_geglu_accepts(v, m->dtype, m->tokens, m->dim, m->hidden, why[v], sizeof why[v]) &&
                             gemm_geglu_runs_here(v));
        if (v > 0 && !why[v][0] && !runs[v])
            snprintf(why[v], sizeof why[v], "needs compute capability %d.%d and code built for it",
                     gemm_geglu_version_info(v)->min_cc / 10, gemm_geglu_version_info(v)->min_cc % 10);
        for (int w = 0; runs[v] && w < 3; w++) run_gemm(&calls[v]); /* plans, module loading */
    }
    double once = prof_back_to_back_us(run_gemm, &calls[0], s, 3, 1), want = 20000.0 / (once > 1 ? once : 1);
    const int forwards = want < 10 ? 10 : want > 1000 ? 1000 : (int)want;
    for (int k = 0; k < ROUNDS; k++)
        for (int v = 0; v <= n; v++)
            if (runs[v]) us[v][k] = prof_back_to_back_us(run_gemm, &calls[v], s, forwards, 1);
    const int chosen = md->gemm_version;
    for (int v = 1; v <= n; v++) { /* each version's whole epilogue rung against the CPU reference */
        md->gemm_version = v;
        err[v] = runs[v] && a->check ? fused_check(md, fused_rungs[EPILOGUE].forward) : NAN;
    }
    md->gemm_version = chosen;

    char stem[200], csv[1200], tmp[1300];
    fused_ladder_tag(md, a, stem, sizeof stem);
    snprintf(csv, sizeof csv, "%s/gemm_versions_%s.csv", a->out_dir, stem);
    const double blas_us = stats_of(us[0], ROUNDS).median, tol = mlp_tolerance(m->dtype);
    printf("\n== --gemm all: [gate | up] GEMM, M %zu, N 2 x %zu, K %zu, %s: %d calls back to back x %d rounds that "
           "alternate the rows, median; check: the epilogue rung with that version against the CPU reference\n",
           m->tokens, m->hidden, m->dim, g->prop.name, forwards, ROUNDS);
    printf("%-8s %-14s %10s %9s %10s %-16s %s\n", "version", "name", "us", "TFLOP/s", "% cuBLAS", "check", "idea");
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (f) fprintf(f, "version,name,us,tflops,pct_cublas,rel_err\n");
    for (int v = 0; v <= n; v++) {
        const char *name = v ? gemm_geglu_version_info(v)->name : "cublasLt";
        const char *idea = v ? gemm_geglu_version_info(v)->idea : "cuBLASLt plan, no epilogue: gate and up written out";
        if (!runs[v]) {
            printf("%-8d %-14s cannot run here: %s\n", v, name, why[v]);
            if (f) fprintf(f, "%d,%s,NaN,NaN,NaN,NaN\n", v, name);
            continue;
        }
        double med = stats_of(us[v], ROUNDS).median, tflops = flops / (med * 1e-6) / 1e12;
        char check[32] = "-";
        if (v > 0 && a->check) snprintf(check, sizeof check, "%.2e %s", err[v], err[v] <= tol ? "PASS" : "FAIL");
        printf("%-8d %-14s %10.2f %9.1f %9.1f%% %-16s %s\n", v, name, med, tflops, 100.0 * blas_us / med, check, idea);
        if (f) fprintf(f, "%d,%s,%.3f,%.2f,%.2f,%.3e\n", v, name, med, tflops, 100.0 * blas_us / med, v ? err[v] : NAN);
    }
    if (f && out_commit(f, tmp, csv) == 0) printf("wrote %s\n", csv);
}

void fused_report(void *model, int rung, const stage_result *r, const gpu_info *g, const common_args *a)
{
    (void)r;
    fused_mlp *md = model;
    traffic_row t[8];
    int n = rung_traffic(md, rung, t);
    if (rung == GRAPH) printf("%s\n", graph_choice);
    if (rung == EPILOGUE || (rung == GRAPH && md->graph_of == EPILOGUE))
        printf("our GEMM: version %d, %s (--gemm N picks another; --gemm all times them all)\n", md->gemm_version,
               gemm_geglu_version_info(md->gemm_version)->name);
    printf("HBM traffic per forward, kernel by kernel (napkin math):\n");
    for (int i = 0; i < n; i++) printf("  %-15s %-34s %10.1f MB\n", t[i].kernel, t[i].moves, t[i].bytes / 1e6);
    int version;
    char why[256];
    if (gemm_flag(&version, why, sizeof why) == 0 && version == GEMM_ALL &&
        (rung == EPILOGUE || (rung == GRAPH && strcmp(a->variant, "graph") == 0)))
        gemm_versions_table(md, g, a);
}
