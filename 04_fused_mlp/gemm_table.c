#include "gemm_table.h"

#include <math.h>
#include <stdio.h>

#include "clocks.h"
#include "gemm_geglu.h"
#include "out.h"
#include "prof.h"
#include "stats.h"

typedef struct {
    fused_mlp *md;
    int version;                        /* 0: cuBLAS, the merged rung's GEMM without epilogue */
    void (*cublas_gemm)(fused_mlp *md); /* that GEMM */
} gemm_call;

static void run_gemm(void *ctx)
{
    const gemm_call *c = ctx;
    const mlp_t *m = &c->md->mlp;
    if (c->version == 0) c->cublas_gemm(c->md);
    else launch_gemm_geglu(c->version, m->dtype, m->x, m->wg, m->wu, m->prod, m->tokens, m->dim, m->hidden, m->stream);
}

void gemm_versions_table(fused_mlp *md, const gpu_info *g, const common_args *a, void (*cublas_gemm)(fused_mlp *md),
                         void (*epilogue_forward)(void *model))
{
    enum { ROUNDS = 7, MAX = 16 };
    const mlp_t *m = &md->mlp;
    const int n = gemm_geglu_n_versions() < MAX - 1 ? gemm_geglu_n_versions() : MAX - 1;
    const double flops = 2.0 * (double)m->tokens * (double)m->dim * 2.0 * (double)m->hidden;
    gemm_call calls[MAX];
    char why[MAX][256] = {{0}};
    double us[MAX][ROUNDS], mhz[MAX][ROUNDS], watts[MAX][ROUNDS], err[MAX];
    int runs[MAX];
    cudaStream_t s = m->stream;
    fused_make_merged_weight(md);
    for (int v = 0; v <= n; v++) {
        calls[v] = (gemm_call){md, v, cublas_gemm};
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
        for (int j = 0; j <= n; j++) {
            const int v = stats_round_row(k, j, n + 1);
            mhz[v][k] = watts[v][k] = NAN;
            if (!runs[v]) continue;
            clocks_summary_t clk = {0};
            us[v][k] = prof_back_to_back_clocked_us(run_gemm, &calls[v], s, forwards, 1, &clk);
            if (clk.samples) mhz[v][k] = clk.sm_mhz_median, watts[v][k] = clk.power_w_median;
        }
    const int chosen = md->gemm_version;
    for (int v = 1; v <= n; v++) { /* each version's whole epilogue rung against the CPU reference */
        md->gemm_version = v;
        err[v] = runs[v] && a->check ? fused_check(md, epilogue_forward) : NAN;
    }
    md->gemm_version = chosen;

    char stem[200], csv[1200], tmp[1300];
    fused_ladder_tag(md, a, stem, sizeof stem);
    snprintf(csv, sizeof csv, "%s/gemm_versions_%s.csv", a->out_dir, stem);
    const double blas_us = stats_of(us[0], ROUNDS).median, tol = mlp_tolerance(m->dtype);
    printf("\n== --gemm all: [gate | up] GEMM, M %zu, N 2 x %zu, K %zu, %s: %d calls back to back x %d rounds that "
           "alternate the rows, median (SM MHz, W: median clock and board power while the row ran); check: the epilogue rung with that version against the CPU reference\n",
           m->tokens, m->hidden, m->dim, g->prop.name, forwards, ROUNDS);
    printf("%-8s %-14s %10s %9s %10s %7s %5s %-16s %-8s %s\n", "version", "name", "us", "TFLOP/s", "% cuBLAS", "SM MHz",
           "W", "check", "tile", "idea");
    FILE *f = out_open(csv, tmp, sizeof tmp);
    if (f) fprintf(f, "version,name,us,tflops,pct_cublas,rel_err,sm_mhz,power_w\n");
    for (int v = 0; v <= n; v++) {
        const char *name = v ? gemm_geglu_version_info(v)->name : "cublasLt";
        const char *idea = v ? gemm_geglu_version_info(v)->idea : "cuBLASLt plan, no epilogue: gate and up written out";
        if (!runs[v]) {
            printf("%-8d %-14s cannot run here: %s\n", v, name, why[v]);
            if (f) fprintf(f, "%d,%s,NaN,NaN,NaN,NaN,NaN,NaN\n", v, name);
            continue;
        }
        double med = stats_of(us[v], ROUNDS).median, tflops = flops / (med * 1e-6) / 1e12;
        const double sm = stats_median_sampled(mhz[v], ROUNDS), w = stats_median_sampled(watts[v], ROUNDS);
        char check[32] = "-";
        if (v > 0 && a->check) snprintf(check, sizeof check, "%.2e %s", err[v], err[v] <= tol ? "PASS" : "FAIL");
        char tile[24] = "-";
        int rows, cols;
        gemm_geglu_tile(v, m->tokens, m->hidden, &rows, &cols);
        if (v > 0) snprintf(tile, sizeof tile, "%dx%d", rows, cols);
        printf("%-8d %-14s %10.2f %9.1f %9.1f%% %7.0f %5.0f %-16s %-8s %s\n", v, name, med, tflops, 100.0 * blas_us / med,
               sm, w, check, tile, idea);
        if (f)
            fprintf(f, "%d,%s,%.3f,%.2f,%.2f,%.3e,%.0f,%.1f\n", v, name, med, tflops, 100.0 * blas_us / med,
                    v ? err[v] : NAN, sm, w);
    }
    if (f && out_commit(f, tmp, csv) == 0) printf("wrote %s\n", csv);
}
