#include "mlp_shape.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "size.h"

const mlp_shape mlp_default_shape = {.batch = 64, .seq = 128, .dim = 768, .hidden = 3072};

int mlp_shape_validate(const mlp_shape *s, const common_args *a, char *why, size_t len)
{
    size_t tokens, bytes;
    if (size_mul_ok((size_t)s->batch, (size_t)s->seq, &tokens) || tokens > INT_MAX) {
        snprintf(why, len, "batch %lld x seq %lld tokens: cuBLAS takes at most %d rows", s->batch, s->seq, INT_MAX);
        return 1;
    }
    if (size_mul_ok(tokens, (size_t)s->hidden, &bytes) || size_mul_ok(bytes, 4 * sizeof(float), &bytes)) {
        snprintf(why, len, "tokens %zu x hidden %lld: the intermediates overflow", tokens, s->hidden);
        return 1;
    }
    /* --sweep's token counts are checked with the GPU, size by size: here only its smallest */
    const size_t shape_tokens = a->sweep ? 1 : tokens;
    return size_device_check(mlp_device_bytes(a->dtype, shape_tokens, (size_t)s->dim, (size_t)s->hidden),
                             mlp_device_buffers, why, len);
}

size_t mlp_shape_tokens(const mlp_shape *s) { return (size_t)s->batch * (size_t)s->seq; }

void mlp_setup_shape(mlp_t *m, const common_args *a, const mlp_shape *s, size_t tokens)
{
    mlp_setup(m, a->dtype, tokens, (size_t)s->dim, (size_t)s->hidden, a->seed);
    if (tokens == mlp_shape_tokens(s)) m->batch = (size_t)s->batch, m->seq = (size_t)s->seq;
}

void mlp_tag(const mlp_t *m, const common_args *a, char *buf, size_t len)
{
    if (m->batch)
        snprintf(buf, len, "%zux%zu_%zux%zu_%s_%s", m->batch, m->seq, m->dim, m->hidden, dtype_name(m->dtype),
                 a->sched.warmup > 0 ? "warm" : "cold");
    else
        snprintf(buf, len, "%zu_%zux%zu_%s", m->tokens, m->dim, m->hidden, dtype_name(m->dtype));
}

int mlp_arrays(const mlp_t *m, dump_array *out)
{
    const dump_array all[] = {
        {"x", m->x, 2, {m->tokens, m->dim}},   {"wg", m->wg, 2, {m->hidden, m->dim}},
        {"wu", m->wu, 2, {m->hidden, m->dim}}, {"wd", m->wd, 2, {m->dim, m->hidden}},
        {"y", m->y, 2, {m->tokens, m->dim}},
    };
    for (int i = 0; i < 5; i++) out[i] = all[i];
    return 5;
}

void mlp_describe(const mlp_t *m)
{
    printf("shapes: x [%zu, %zu]; Wg, Wu [%zu, %zu]; Wd [%zu, %zu]; intermediates [%zu, %zu]; y [%zu, %zu]\n",
           m->tokens, m->dim, m->hidden, m->dim, m->dim, m->hidden, m->tokens, m->hidden, m->tokens, m->dim);
}
