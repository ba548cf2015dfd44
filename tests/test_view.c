/* CPU tests of the strided view (common/view.h): a transpose swaps shape and strides and moves
 * nothing, twice is the identity, contiguity and flatten order follow the strides, and the
 * cuBLAS op flag and leading dimension read off a view are the ones blas.h passes. */
#include <stddef.h>

#include "harness.h"
#include "view.h"

static int test_transpose_swaps_metadata(void)
{
    int m[6] = {0, 1, 2, 3, 4, 5};
    view_t M = view_contiguous(m, 2, (size_t[]){3, 2});
    EXPECT(M.shape[0] == 3 && M.shape[1] == 2, "M shape [%zu, %zu]", M.shape[0], M.shape[1]);
    EXPECT(M.strides[0] == 2 && M.strides[1] == 1, "M strides [%td, %td]", M.strides[0], M.strides[1]);
    view_t T = view_transpose(M, 0, 1);
    EXPECT(T.shape[0] == 2 && T.shape[1] == 3, "M^T shape [%zu, %zu]", T.shape[0], T.shape[1]);
    EXPECT(T.strides[0] == 1 && T.strides[1] == 2, "M^T strides [%td, %td]", T.strides[0], T.strides[1]);
    EXPECT(T.data == M.data, "the transpose points at the same data");
    for (int i = 0; i < 6; i++) EXPECT(m[i] == i, "memory unchanged at %d", i);
    /* element (i, j) of M^T is element (j, i) of M */
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++) {
            int t = m[(ptrdiff_t)i * T.strides[0] + (ptrdiff_t)j * T.strides[1]];
            int o = m[(ptrdiff_t)j * M.strides[0] + (ptrdiff_t)i * M.strides[1]];
            EXPECT(t == o, "M^T(%zu,%zu) = %d, M(%zu,%zu) = %d", i, j, t, j, i, o);
        }
    char d[64];
    view_describe(&T, d, sizeof d);
    EXPECT(strcmp(d, "shape [2, 3], strides [1, 2]") == 0, "describe: '%s'", d);
    view_describe(&T, d, 10); /* truncates, never overflows */
    EXPECT(strlen(d) == 9, "truncated to '%s'", d);
    return 0;
}

static int test_double_transpose_is_identity(void)
{
    view_t v = view_contiguous(NULL, 4, (size_t[]){2, 3, 5, 7});
    view_t w = view_transpose(view_transpose(v, 1, 3), 1, 3);
    EXPECT(memcmp(&v, &w, sizeof v) == 0, "t(t(v)) == v");
    view_t u = view_transpose(v, 2, 2);
    EXPECT(memcmp(&v, &u, sizeof v) == 0, "swapping a dimension with itself changes nothing");
    view_t t = view_transpose(v, 0, 3);
    EXPECT(t.shape[0] == 7 && t.shape[3] == 2 && t.strides[0] == 1 && t.strides[3] == 105,
           "4-D: shape [%zu .. %zu], strides [%td .. %td]", t.shape[0], t.shape[3], t.strides[0], t.strides[3]);
    return 0;
}

static int test_contiguity(void)
{
    view_t M = view_contiguous(NULL, 2, (size_t[]){3, 2});
    EXPECT(view_is_contiguous(&M), "a fresh view is contiguous");
    view_t T = view_transpose(M, 0, 1);
    EXPECT(!view_is_contiguous(&T), "its transpose is not");
    /* a dimension of size 1 never moves, so its stride is irrelevant (PyTorch agrees) */
    view_t row = view_transpose(view_contiguous(NULL, 2, (size_t[]){5, 1}), 0, 1);
    EXPECT(view_is_contiguous(&row), "transpose of a [5, 1] column: shape [1, 5], strides [1, 1]");
    view_t one = view_transpose(view_contiguous(NULL, 2, (size_t[]){1, 1}), 0, 1);
    EXPECT(view_is_contiguous(&one), "[1, 1]");
    view_t v3 = view_contiguous(NULL, 3, (size_t[]){2, 3, 4});
    EXPECT(view_is_contiguous(&v3), "3-D contiguous");
    EXPECT(view_numel(&v3) == 24, "numel %zu", view_numel(&v3));
    view_t v3t = view_transpose(v3, 0, 1);
    EXPECT(!view_is_contiguous(&v3t), "3-D with two leading dims swapped");
    return 0;
}

static int test_flatten_order(void)
{
    ptrdiff_t off[24];
    view_t M = view_contiguous(NULL, 2, (size_t[]){3, 2});
    view_flatten_order(&M, off);
    for (int i = 0; i < 6; i++) EXPECT(off[i] == i, "M: offset %d is %td", i, off[i]);
    view_t T = view_transpose(M, 0, 1);
    view_flatten_order(&T, off);
    const ptrdiff_t want[6] = {0, 2, 4, 1, 3, 5}; /* the article's example: the flatten must copy */
    for (int i = 0; i < 6; i++) EXPECT(off[i] == want[i], "M^T: offset %d is %td, want %td", i, off[i], want[i]);
    /* 3-D, middle and last swapped: element (a, b, c) of the view is at a*12 + c*4 + b */
    view_t v = view_transpose(view_contiguous(NULL, 3, (size_t[]){2, 3, 4}), 1, 2);
    view_flatten_order(&v, off);
    int i = 0;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 3; c++, i++)
                EXPECT(off[i] == a * 12 + c * 4 + b, "3-D: offset %d is %td", i, off[i]);
    return 0;
}

/* The view's op flag and leading dimension are what blas.h passes for the same operand:
 * w_kn = 1 (W stored [K, N]): op N, ld N; w_kn = 0 (W stored [N, K], used as W^T): op T, ld K. */
static int test_gemm_operand(void)
{
    const size_t sizes[][2] = {{32, 64}, {4096, 4096}, {33, 3}, {3, 33}, {1, 64}, {64, 1}, {1, 1}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t K = sizes[s][0], N = sizes[s][1];
        view_gemm_layout l;
        /* nn.Linear's W [N, K], transposed: the view variant */
        view_t wt = view_transpose(view_contiguous(NULL, 2, (size_t[]){N, K}), 0, 1);
        EXPECT(view_gemm_operand(&wt, &l) == 0, "W^T view, K=%zu N=%zu", K, N);
        if (K > 1 && N > 1) EXPECT(l.transposed == 1 && l.ld == K, "W^T view: op T, ld K (got %d, %zu)", l.transposed, l.ld);
        /* with a dimension of 1 both readings are the same bytes; the one chosen must be valid */
        EXPECT(l.ld == (l.transposed ? K : N), "ld %zu matches blas.h for op %c", l.ld, l.transposed ? 'T' : 'N');
        EXPECT(l.ld >= 1 && l.ld >= (l.transposed ? K : N), "cuBLAS's minimum leading dimension");
        /* a contiguous W^T [K, N]: the transpose_copy variant */
        view_t copy = view_contiguous(NULL, 2, (size_t[]){K, N});
        EXPECT(view_gemm_operand(&copy, &l) == 0 && l.transposed == 0 && l.ld == N,
               "contiguous [K, N]: op N, ld N (got %d, %zu)", l.transposed, l.ld);
    }
    /* a wider row pitch (a column slice of a bigger matrix) keeps its leading dimension */
    view_t slice = {.ndim = 2, .shape = {8, 16}, .strides = {40, 1}};
    view_gemm_layout l;
    EXPECT(view_gemm_operand(&slice, &l) == 0 && !l.transposed && l.ld == 40, "row pitch 40: ld %zu", l.ld);
    view_t slice_t = view_transpose(slice, 0, 1);
    EXPECT(view_gemm_operand(&slice_t, &l) == 0 && l.transposed && l.ld == 40, "its transpose: op T, ld %zu", l.ld);
    /* neither rows nor columns contiguous: no cuBLAS layout, the data must be copied */
    view_t strided = {.ndim = 2, .shape = {4, 4}, .strides = {8, 2}};
    EXPECT(view_gemm_operand(&strided, &l) == -1, "every other column");
    view_t overlapping = {.ndim = 2, .shape = {4, 4}, .strides = {2, 1}};
    EXPECT(view_gemm_operand(&overlapping, &l) == -1, "rows overlapping: ld below the row length");
    view_t v3 = view_contiguous(NULL, 3, (size_t[]){2, 3, 4});
    EXPECT(view_gemm_operand(&v3, &l) == -1, "3-D is not a GEMM operand");
    return 0;
}

int main(void)
{
    TEST_RUN(test_transpose_swaps_metadata);
    TEST_RUN(test_double_transpose_is_identity);
    TEST_RUN(test_contiguity);
    TEST_RUN(test_flatten_order);
    TEST_RUN(test_gemm_operand);
    TEST_EXIT();
}
