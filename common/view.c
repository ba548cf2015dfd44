#include "view.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>

view_t view_contiguous(void *data, int ndim, const size_t *shape)
{
    assert(ndim >= 1 && ndim <= VIEW_MAX_DIMS);
    view_t v = {.data = data, .ndim = ndim};
    ptrdiff_t stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        v.shape[d] = shape[d];
        v.strides[d] = stride;
        stride *= (ptrdiff_t)shape[d];
    }
    return v;
}

view_t view_transpose(view_t v, int d0, int d1)
{
    assert(d0 >= 0 && d0 < v.ndim && d1 >= 0 && d1 < v.ndim);
    size_t size = v.shape[d0];
    v.shape[d0] = v.shape[d1];
    v.shape[d1] = size;
    ptrdiff_t stride = v.strides[d0];
    v.strides[d0] = v.strides[d1];
    v.strides[d1] = stride;
    return v;
}

size_t view_numel(const view_t *v)
{
    size_t n = 1;
    for (int d = 0; d < v->ndim; d++) n *= v->shape[d];
    return n;
}

int view_is_contiguous(const view_t *v)
{
    ptrdiff_t expected = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->shape[d] == 1) continue; /* never stepped along: its stride says nothing */
        if (v->strides[d] != expected) return 0;
        expected *= (ptrdiff_t)v->shape[d];
    }
    return 1;
}

void view_flatten_order(const view_t *v, ptrdiff_t *offsets)
{
    size_t n = view_numel(v), index[VIEW_MAX_DIMS] = {0};
    ptrdiff_t offset = 0;
    for (size_t i = 0; i < n; i++) {
        offsets[i] = offset;
        /* the next index in row-major order: an odometer, last dimension fastest */
        for (int d = v->ndim - 1; d >= 0; d--) {
            offset += v->strides[d];
            if (++index[d] < v->shape[d]) break;
            offset -= v->strides[d] * (ptrdiff_t)v->shape[d];
            index[d] = 0;
        }
    }
}

int view_gemm_operand(const view_t *b, view_gemm_layout *out)
{
    if (b->ndim != 2 || b->shape[0] == 0 || b->shape[1] == 0) return -1;
    size_t k = b->shape[0], n = b->shape[1];
    ptrdiff_t s0 = b->strides[0], s1 = b->strides[1];
    /* rows contiguous: B^T is an N x K column-major matrix with leading dimension s0 >= N */
    if ((n == 1 || s1 == 1) && (k == 1 || s0 >= (ptrdiff_t)n)) {
        *out = (view_gemm_layout){.transposed = 0, .ld = k == 1 ? n : (size_t)s0};
        return 0;
    }
    /* columns contiguous: B itself is a K x N column-major matrix with leading dimension s1 >= K */
    if ((k == 1 || s0 == 1) && (n == 1 || s1 >= (ptrdiff_t)k)) {
        *out = (view_gemm_layout){.transposed = 1, .ld = n == 1 ? k : (size_t)s1};
        return 0;
    }
    return -1;
}

/* Appends to buf at *at, never past len (the text is truncated instead). */
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (w > 0) *at += (size_t)w;
}

void view_describe(const view_t *v, char *buf, size_t len)
{
    size_t at = 0;
    if (len) buf[0] = '\0';
    append(buf, len, &at, "shape [");
    for (int d = 0; d < v->ndim; d++) append(buf, len, &at, "%s%zu", d ? ", " : "", v->shape[d]);
    append(buf, len, &at, "], strides [");
    for (int d = 0; d < v->ndim; d++) append(buf, len, &at, "%s%td", d ? ", " : "", v->strides[d]);
    append(buf, len, &at, "]");
}
