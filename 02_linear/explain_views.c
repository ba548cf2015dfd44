/* --explain-views: the article's 3x2 example on the CPU. A transpose swaps a view's shape and
 * strides and moves nothing; only a flatten of the transposed view has to copy. Then nn.Linear's
 * W and W^T at the stage's shape, each with the cuBLAS layout read off its strides. */
#include <stdio.h>

#include "model.h"

static void print_int_view(const char *name, const view_t *v)
{
    char d[128];
    view_describe(v, d, sizeof d);
    int contiguous = view_is_contiguous(v);
    printf("%-4s %s, contiguous: %s\n     as a matrix:", name, d, contiguous ? "yes" : "no");
    const int *data = v->data;
    for (size_t i = 0; i < v->shape[0]; i++) {
        printf(" [");
        for (size_t j = 0; j < v->shape[1]; j++)
            printf("%s%d", j ? " " : "", data[(ptrdiff_t)i * v->strides[0] + (ptrdiff_t)j * v->strides[1]]);
        printf("]");
    }
    ptrdiff_t offsets[6];
    view_flatten_order(v, offsets);
    printf("\n     flatten reads offsets");
    for (int i = 0; i < 6; i++) printf(" %td", offsets[i]);
    printf(" -> values");
    for (int i = 0; i < 6; i++) printf(" %d", data[offsets[i]]);
    printf(" (%s)\n", contiguous ? "in memory order: the flatten is a view too" : "out of memory order: the flatten must copy");
}

static void print_operand(const char *name, const view_t *v)
{
    char d[128];
    view_gemm_layout l;
    view_describe(v, d, sizeof d);
    if (view_gemm_operand(v, &l) == 0)
        printf("%-28s %s -> cuBLAS reads it with op %s, leading dimension %zu\n", name, d, l.transposed ? "T" : "N", l.ld);
    else
        printf("%-28s %s -> no cuBLAS layout: copy it first\n", name, d);
}

void linear_explain_views(size_t in_dim, size_t out_dim)
{
    int memory[6] = {0, 1, 2, 3, 4, 5};
    view_t M = view_contiguous(memory, 2, (size_t[]){3, 2});
    view_t T = view_transpose(M, 0, 1);
    printf("the article's 3x2 example (strides in elements)\nmemory: 0 1 2 3 4 5\n");
    print_int_view("M", &M);
    printf("M^T = view_transpose(M, 0, 1): no data moved\n");
    print_int_view("M^T", &T);
    printf("M^T points at the same data as M: %s; memory is still:", T.data == M.data ? "yes" : "no");
    for (int i = 0; i < 6; i++) printf(" %d", memory[i]);

    printf("\n\nnn.Linear at this stage's shape (in_dim %zu, out_dim %zu): the same trick\n", in_dim, out_dim);
    view_t W = view_contiguous(NULL, 2, (size_t[]){out_dim, in_dim});
    view_t Wt = view_transpose(W, 0, 1);
    view_t copy = view_contiguous(NULL, 2, Wt.shape);
    print_operand("W [out_dim, in_dim]", &W);
    print_operand("W^T, a view (view, epilogue)", &Wt);
    print_operand("W^T, a copy (transpose_copy)", &copy);
}
