#include "mlp_stage.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "size.h"

const mlp_shape mlp_default_shape = {.batch = 64, .seq = 128, .dim = 768, .hidden = 3072};
const stage_opt mlp_opts[MLP_N_SHAPE_OPTS] = {MLP_SHAPE_OPTS(mlp_shape, )};

int mlp_stage_validate(const void *flags, const common_args *a, char *why, size_t len)
{
    const mlp_shape *f = flags;
    size_t tokens, bytes;
    if (size_mul_ok((size_t)f->batch, (size_t)f->seq, &tokens) || tokens > INT_MAX) {
        snprintf(why, len, "batch %lld x seq %lld tokens: cuBLAS takes at most %d rows", f->batch, f->seq, INT_MAX);
        return 1;
    }
    if (size_mul_ok(tokens, (size_t)f->hidden, &bytes) || size_mul_ok(bytes, 4 * sizeof(float), &bytes)) {
        snprintf(why, len, "tokens %zu x hidden %lld: the intermediates overflow", tokens, f->hidden);
        return 1;
    }
    /* --sweep's token counts are checked with the GPU, size by size: here only its smallest */
    const size_t shape_tokens = a->sweep ? 1 : tokens;
    return size_device_check(mlp_device_bytes(a->dtype, shape_tokens, (size_t)f->dim, (size_t)f->hidden),
                             mlp_device_buffers, why, len);
}

size_t mlp_stage_size(const void *flags)
{
    const mlp_shape *f = flags;
    return (size_t)f->batch * (size_t)f->seq;
}

void mlp_stage_fill(mlp_t *m, const common_args *a, const void *flags, size_t tokens)
{
    const mlp_shape *f = flags;
    mlp_setup(m, a->dtype, tokens, (size_t)f->dim, (size_t)f->hidden, a->seed);
    if (tokens == mlp_stage_size(flags)) m->batch = (size_t)f->batch, m->seq = (size_t)f->seq;
}

void *mlp_stage_setup(const common_args *a, void *flags, size_t tokens)
{
    mlp_t *m = malloc(sizeof *m);
    if (!m) exit(EXIT_BAD_INPUT);
    mlp_stage_fill(m, a, flags, tokens);
    return m;
}

void mlp_stage_free(void *model)
{
    mlp_free(model);
    free(model);
}

double mlp_stage_check(void *model, void (*forward)(void *model)) { return mlp_check(model, forward, model); }
double mlp_stage_flops(const void *model) { return mlp_flops(model); }
double mlp_stage_min_bytes(const void *model) { return mlp_min_bytes(model); }
cudaStream_t mlp_stage_stream(const void *model) { return ((const mlp_t *)model)->stream; }

void mlp_stage_tag(const void *model, const common_args *a, char *buf, size_t len)
{
    const mlp_t *m = model;
    if (m->batch)
        snprintf(buf, len, "%zux%zu_%zux%zu_%s_%s", m->batch, m->seq, m->dim, m->hidden, dtype_name(m->dtype),
                 a->sched.warmup > 0 ? "warm" : "cold");
    else
        snprintf(buf, len, "%zu_%zux%zu_%s", m->tokens, m->dim, m->hidden, dtype_name(m->dtype));
}

int mlp_stage_arrays(const void *model, stage_array *out, int max)
{
    const mlp_t *m = model;
    const stage_array all[] = {
        {"x", m->x, 2, {m->tokens, m->dim}},   {"wg", m->wg, 2, {m->hidden, m->dim}},
        {"wu", m->wu, 2, {m->hidden, m->dim}}, {"wd", m->wd, 2, {m->dim, m->hidden}},
        {"y", m->y, 2, {m->tokens, m->dim}},
    };
    for (int i = 0; i < 5 && i < max; i++) out[i] = all[i];
    return 5;
}

void mlp_stage_describe(const void *model)
{
    const mlp_t *m = model;
    printf("shapes: x [%zu, %zu]; Wg, Wu [%zu, %zu]; Wd [%zu, %zu]; intermediates [%zu, %zu]; y [%zu, %zu]\n",
           m->tokens, m->dim, m->hidden, m->dim, m->dim, m->hidden, m->tokens, m->hidden, m->tokens, m->dim);
}

void mlp_stage_sweep_names(const void *flags, const common_args *a, const char *variant, char *stem, char *title,
                           size_t len)
{
    const mlp_shape *f = flags;
    snprintf(stem, len, "sweep_%lldx%lld_%s_%s", f->dim, f->hidden, dtype_name(a->dtype), variant);
    snprintf(title, len, "GeGLU MLP %lld -> %lld, %s, %s", f->dim, f->hidden, variant, dtype_name(a->dtype));
}

double mlp_stage_op_flops(const void *model, int op) { return mlp_op_flops(model, (mlp_op)op); }
double mlp_stage_op_bytes(const void *model, int op) { return mlp_op_bytes(model, (mlp_op)op); }

/* "8192.768.3072" (M.K.N) for a GEMM, "100.7 MB" moved for an elementwise kernel. */
void mlp_stage_op_problem(const void *model, int op, char *buf, size_t len)
{
    const mlp_t *m = model;
    if (op == MLP_GELU || op == MLP_MUL) snprintf(buf, len, "%.1f MB", mlp_op_bytes(m, (mlp_op)op) / 1e6);
    else if (op == MLP_DOWN) snprintf(buf, len, "%zu.%zu.%zu", m->tokens, m->hidden, m->dim);
    else snprintf(buf, len, "%zu.%zu.%zu", m->tokens, m->dim, m->hidden);
}

void mlp_report_intermediates(void *model, int variant, const stage_result *r, const gpu_info *g,
                              const common_args *a)
{
    (void)variant, (void)a;
    const mlp_t *m = model;
    if (g->copy_gbps <= 0) return;
    double one = 2.0 * mlp_elem_bytes(m) * (double)m->tokens * (double)m->hidden; /* write + read */
    static const char *const trips[4][2] = {{"gate", "gate_proj -> gelu"}, {"up", "up_proj -> mul"},
                                            {"act", "gelu -> mul"}, {"prod", "mul -> down_proj"}};
    printf("intermediates [%zu, %zu] %s, %.1f MB each, written once and read back once:\n", m->tokens,
           m->hidden, dtype_name(m->dtype), one / 2e6);
    for (int i = 0; i < 4; i++)
        printf("  %-4s %-18s %7.1f MB  %7.2f us at the copy ceiling\n", trips[i][0], trips[i][1], one / 1e6,
               one / (g->copy_gbps * 1e9) * 1e6);
    printf("  all four: %.1f MB, %.2f us at the copy ceiling (%.0f%% of the eager forward); the GELU and"
           " multiply kernels move %.1f MB of it with no arithmetic to hide behind\n",
           4.0 * one / 1e6, 4.0 * one / (g->copy_gbps * 1e9) * 1e6,
           100.0 * 4.0 * one / (g->copy_gbps * 1e9) * 1e6 / r->step_us,
           (mlp_op_bytes(m, MLP_GELU) + mlp_op_bytes(m, MLP_MUL)) / 1e6);
}
