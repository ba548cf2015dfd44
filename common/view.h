/* view.h: a strided view of an array, the metadata PyTorch keeps next to every tensor's data.
 *
 * A view is a data pointer plus, per dimension, a size (shape) and a stride: how many elements
 * to step in memory to move one index along that dimension. Element (i0, i1, ...) lives at
 *     data + i0 * strides[0] + i1 * strides[1] + ...
 * Transposing swaps two dimensions' sizes and strides; the data stays where it is. That is all
 * aten::t does, and why it launches no kernel. A GEMM library can then read the transposed
 * matrix directly: its "transpose" flag and leading dimension are the same information as the
 * view's strides (view_gemm_operand below).
 *
 *   int m[6] = {0, 1, 2, 3, 4, 5};
 *   view_t M = view_contiguous(m, 2, (size_t[]){3, 2});   shape [3, 2], strides [2, 1]
 *   view_t T = view_transpose(M, 0, 1);                  shape [2, 3], strides [1, 2]
 *   view_is_contiguous(&T) == 0: flattening T reads offsets 0 2 4 1 3 5, so a flatten must copy.
 */
#ifndef VIEW_H
#define VIEW_H

#include <stddef.h>

#define VIEW_MAX_DIMS 4

typedef struct {
    void *data;                        /* never dereferenced here: host or device memory */
    int ndim;                          /* 1..VIEW_MAX_DIMS */
    size_t shape[VIEW_MAX_DIMS];
    ptrdiff_t strides[VIEW_MAX_DIMS];  /* in elements, not bytes */
} view_t;

/* The row-major view of `data` with this shape: the last dimension has stride 1, each earlier
 * one the product of the sizes after it (what a freshly allocated tensor has). */
view_t view_contiguous(void *data, int ndim, const size_t *shape);

/* The same data with dimensions d0 and d1 swapped: their sizes and strides exchange, nothing
 * moves. d0 and d1 must be below v.ndim. */
view_t view_transpose(view_t v, int d0, int d1);

size_t view_numel(const view_t *v);

/* 1 when reading the view in row-major index order walks memory 0, 1, 2, ... (its strides are
 * those of view_contiguous; a dimension of size 1 may have any stride, as in PyTorch). */
int view_is_contiguous(const view_t *v);

/* Fills offsets[0 .. view_numel(v)) with the memory offsets (in elements from data) in the
 * order flatten() / reshape(-1) reads the elements: row-major over the view's shape. A
 * contiguous view gives 0, 1, 2, ...: the flatten is another view. Anything else means the
 * flatten must gather, i.e. copy. */
void view_flatten_order(const view_t *v, ptrdiff_t *offsets);

/* How cuBLAS reads a 2-D view B[K, N] as the right operand of the row-major y = x B.
 *
 * cuBLAS is column-major, so the stage computes y^T = B^T x^T and hands B to cuBLAS as its
 * first operand (see blas.h). From B's strides:
 *   rows contiguous    (strides [ld, 1], e.g. a [K, N] array): read column-major, memory holds
 *                      B^T as an N x K matrix with leading dimension ld: op N;
 *   columns contiguous (strides [1, ld], e.g. W^T for nn.Linear's W stored [N, K]): memory
 *                      holds B column-major as K x N with leading dimension ld: op T.
 * Returns 0 and fills *out, or -1 when neither holds (the data must be copied first). When a
 * dimension has size 1 its stride is irrelevant, and the leading dimension is the smallest one
 * cuBLAS accepts. */
typedef struct {
    int transposed; /* 1: CUBLAS_OP_T, 0: CUBLAS_OP_N */
    size_t ld;      /* leading dimension, in elements */
} view_gemm_layout;
int view_gemm_operand(const view_t *b, view_gemm_layout *out);

/* "shape [3, 2], strides [2, 1]" into buf (truncated to len). */
void view_describe(const view_t *v, char *buf, size_t len);

#endif
