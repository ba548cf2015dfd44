#include "fused_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decode.h"
#include "gemm_geglu.h"
#include "gemm_tuning.h"
#include "size.h"

/* ---- the flags ---------------------------------------------------------------------------- */

int fused_gemm_flag(const fused_flags *f)
{
    if (!f->gemm || strcmp(f->gemm, "auto") == 0) return GEMM_AUTO;
    if (strcmp(f->gemm, "all") == 0) return GEMM_ALL;
    char *end;
    const long v = strtol(f->gemm, &end, 10);
    return *end == '\0' && f->gemm[0] >= '1' && f->gemm[0] <= '9' && v <= gemm_geglu_n_versions() ? (int)v : GEMM_NONE;
}

int fused_validate(const fused_flags *f, const common_args *a, char *why, size_t len)
{
    if (mlp_shape_validate(&f->shape, a, why, len) != 0) return 1;
    if (fused_gemm_flag(f) == GEMM_NONE) {
        snprintf(why, len, "--gemm: '%.40s' is not a version (1..%d, auto or all)", f->gemm, gemm_geglu_n_versions());
        return 1;
    }
    return 0;
}

/* ---- the model ------------------------------------------------------------------------------ */

fused_mlp *fused_setup(const common_args *a, fused_flags *f, size_t tokens)
{
    fused_mlp *md = calloc(1, sizeof *md);
    if (!md) exit(EXIT_BAD_INPUT);
    mlp_setup_shape(&md->mlp, a, &f->shape, tokens);
    md->flags = f;
    md->graph_of = -1;
    return md;
}

void fused_free(fused_mlp *md)
{
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

void fused_make_merged_weight(fused_mlp *md)
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

/* mlp_check poisons 03's buffers; the merged output is ours to poison. */
double fused_check(fused_mlp *md, run_forward forward)
{
    if (md->gu)
        CUDA_CHECK(cudaMemsetAsync(md->gu, 0xFF, 2 * md->mlp.tokens * md->mlp.hidden * dtype_size(md->mlp.dtype),
                                   md->mlp.stream));
    return mlp_check(&md->mlp, forward, md);
}

void fused_ladder_tag(const fused_mlp *md, const common_args *a, char *buf, size_t len)
{
    const mlp_shape *s = &md->flags->shape;
    snprintf(buf, len, "%lldx%lld_%lldx%lld_%s", s->batch, s->seq, s->dim, s->hidden, dtype_name(a->dtype));
}

/* ---- what each rung moves ----------------------------------------------------------------------- */

static run_traffic gemm_row(const mlp_t *m, mlp_op op)
{
    static const char *const moves[MLP_N_OPS] = {"x, Wg in; gate out", "x, Wu in; up out", "", "",
                                                  "prod, Wd in; y out"};
    return (run_traffic){mlp_op_names[op], moves[op], mlp_op_bytes(m, op)};
}

static run_traffic geglu_row(const mlp_t *m)
{
    return (run_traffic){"geglu", "gate, up in; prod out", mlp_elem_bytes(m) * 3.0 * (double)m->tokens * (double)m->hidden};
}

/* x, Wg, Wu in; prod out: the fused GEMM's, and the decode gate_up kernel's */
static double gate_up_geglu_bytes(const mlp_t *m)
{
    const double M = (double)m->tokens, D = (double)m->dim, H = (double)m->hidden;
    return mlp_elem_bytes(m) * (M * D + 2 * H * D + M * H);
}

int fused_traffic_eager(const fused_mlp *md, run_traffic *t)
{
    const mlp_t *m = &md->mlp;
    t[0] = gemm_row(m, MLP_GATE);
    t[1] = gemm_row(m, MLP_UP);
    t[2] = (run_traffic){"gelu", "gate in; act out", mlp_op_bytes(m, MLP_GELU)};
    t[3] = (run_traffic){"mul", "act, up in; prod out", mlp_op_bytes(m, MLP_MUL)};
    t[4] = gemm_row(m, MLP_DOWN);
    return 5;
}

int fused_traffic_fused_geglu(const fused_mlp *md, run_traffic *t)
{
    const mlp_t *m = &md->mlp;
    t[0] = gemm_row(m, MLP_GATE);
    t[1] = gemm_row(m, MLP_UP);
    t[2] = geglu_row(m);
    t[3] = gemm_row(m, MLP_DOWN);
    return 4;
}

int fused_traffic_merged(const fused_mlp *md, run_traffic *t)
{
    const mlp_t *m = &md->mlp;
    const double M = (double)m->tokens, D = (double)m->dim, H = (double)m->hidden;
    t[0] = (run_traffic){"gate_up_proj", "x, [Wg; Wu] in; [gate | up] out", mlp_elem_bytes(m) * (M * D + 2 * H * D + 2 * M * H)};
    t[1] = geglu_row(m);
    t[2] = gemm_row(m, MLP_DOWN);
    return 3;
}

int fused_traffic_epilogue(const fused_mlp *md, run_traffic *t)
{
    const mlp_t *m = &md->mlp;
    t[0] = (run_traffic){"gate_up_geglu", "x, Wg, Wu in; prod out", gate_up_geglu_bytes(m)};
    t[1] = gemm_row(m, MLP_DOWN);
    return 2;
}

int fused_traffic_decode(const fused_mlp *md, run_traffic *t)
{
    const mlp_t *m = &md->mlp;
    t[0] = (run_traffic){"decode_gate_up", "x, Wg, Wu in; prod out", gate_up_geglu_bytes(m)};
    t[1] = (run_traffic){"decode_down", "prod, Wd in; y out", mlp_op_bytes(m, MLP_DOWN)};
    return 2;
}

/* ---- which problems the epilogue and decode rungs take ------------------------------------------ */

int fused_epilogue_accepts(const fused_flags *f, dtype_t t, size_t tokens, char *why, size_t len)
{
    const int version = fused_gemm_flag(f);
    const size_t dim = (size_t)f->shape.dim, hidden = (size_t)f->shape.hidden, M = tokens ? tokens : 1;
    if (version > 0) return gemm_geglu_accepts(version, t, M, dim, hidden, why, len);
    for (int v = 1; v <= gemm_geglu_n_versions(); v++) /* the version is chosen on the GPU: any will do */
        if (gemm_geglu_accepts(v, t, M, dim, hidden, why, len)) return 1;
    return 0;
}

int fused_epilogue_runs(const fused_mlp *md, char *why, size_t len)
{
    const int version = fused_gemm_flag(md->flags);
    if (version > 0) {
        if (!gemm_geglu_runs_here(version)) {
            snprintf(why, len, "GEMM version %d (%s) cannot run on this GPU", version,
                     gemm_geglu_version_info(version)->name);
            return 0;
        }
        return gemm_geglu_accepts(version, md->mlp.dtype, md->mlp.tokens, md->mlp.dim, md->mlp.hidden, why, len);
    }
    for (int v = 1; v <= gemm_geglu_n_versions(); v++) /* auto: one that takes it and runs here will do */
        if (gemm_geglu_runs_here(v) && gemm_geglu_accepts(v, md->mlp.dtype, md->mlp.tokens, md->mlp.dim, md->mlp.hidden,
                                                          why, len))
            return 1;
    if (!gemm_geglu_default_version()) snprintf(why, len, "our GeGLU GEMM needs an sm_80 or newer GPU");
    return 0;
}

void fused_epilogue_prepare(fused_mlp *md)
{
    const mlp_t *m = &md->mlp;
    const int version = fused_gemm_flag(md->flags);
    if (md->gemm_version) return;
    if (version > 0) {
        md->gemm_version = version;
        snprintf(md->gemm_choice, sizeof md->gemm_choice, "--gemm %d", version);
        return;
    }
    char why[sizeof md->gemm_choice - 32];
    md->gemm_version = gemm_tuned_version(m->dtype, m->x, m->wg, m->wu, m->prod, m->tokens, m->dim, m->hidden,
                                          m->stream, why, sizeof why);
    snprintf(md->gemm_choice, sizeof md->gemm_choice, "--gemm auto: %s", why);
}

/* The decode kernels read x and m over decode_padded_rows(tokens) rows, up to a whole tile of
 * DECODE_MAX_TOKENS: 03's buffers must hold that many. */
_Static_assert((int)MLP_MIN_ROWS >= (int)DECODE_MAX_TOKENS, "03's buffers hold the rows the decode kernels read");

int fused_decode_accepts(const fused_flags *f, dtype_t t, size_t tokens, char *why, size_t len)
{
    return decode_supported(t, tokens ? tokens : 1, (size_t)f->shape.dim, (size_t)f->shape.hidden, why, len);
}

int fused_decode_runs(char *why, size_t len)
{
    if (decode_runs_here()) return 1;
    snprintf(why, len, "the decode kernels need an sm_80 or newer GPU");
    return 0;
}
