/* CPU tests of the GeGLU MLP's reference (common/ref_mlp.c, behind 03_simple_mlp's
 * mlp_reference_rows and mlp_check) on cases small enough to work out by hand, and of the
 * napkin math in 03_simple_mlp/mlp.h. */
#include <stdlib.h>

#include "../03_simple_mlp/mlp.h"
#include "harness.h"
#include "ref_mlp.h"

/* gelu_tanh(1) and gelu_tanh(-1), from the formula 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
#define GELU_1 0.8411919906082768
#define GELU_M1 (-0.15880800939172324)

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12 * (1.0 + fabs(b)); }

/* M = 1, dim = 2, hidden = 1: x = [1, 2], Wg = [[0.5, 0.25]] -> gate = 1, Wu = [[1, -1]] -> up = -1,
 * m = gelu(1) * -1, Wd = [[2], [-3]] -> y = [2m, -3m]. */
static int test_one_token_by_hand(void)
{
    const float x[] = {1, 2}, wg[] = {0.5f, 0.25f}, wu[] = {1, -1}, wd[] = {2, -3};
    double y[2], scale[2];
    EXPECT(ref_geglu_mlp_rows(x, wg, wu, wd, 2, 1, 0, 1, y, scale, 0.0) == 0, "allocation");
    EXPECT(close_to(y[0], -2.0 * GELU_1), "y[0] = %.17g", y[0]);
    EXPECT(close_to(y[1], 3.0 * GELU_1), "y[1] = %.17g", y[1]);
    /* one term per output: the rounding scale is the output's own size */
    EXPECT(close_to(scale[0], 2.0 * GELU_1) && close_to(scale[1], 3.0 * GELU_1), "scale %g %g", scale[0], scale[1]);
    return 0;
}

/* M = 2, dim = 2, hidden = 2, asking for row 1 only: x[1] = [0, 2];
 * Wg = [[1, 0], [0, 0.5]] -> gate = [0, 1]; Wu = [[3, 0], [0, 2]] -> up = [0, 4];
 * m = [gelu(0) * 0, gelu(1) * 4]; Wd = [[1, 2], [3, 4]] (row j = weights of output j)
 * -> y = [2 m1, 4 m1]. A transposed Wd would give [3 m1, 4 m1]. */
static int test_row_offset_and_layouts(void)
{
    const float x[] = {1, 0, 0, 2}, wg[] = {1, 0, 0, 0.5f}, wu[] = {3, 0, 0, 2}, wd[] = {1, 2, 3, 4};
    double y[2];
    EXPECT(ref_geglu_mlp_rows(x, wg, wu, wd, 2, 2, 1, 1, y, NULL, 0.0) == 0, "allocation");
    EXPECT(close_to(y[0], 8.0 * GELU_1), "y[0] = %.17g", y[0]);
    EXPECT(close_to(y[1], 16.0 * GELU_1), "y[1] = %.17g", y[1]);
    /* both rows at once: row 0 is x = [1, 0] -> gate = [1, 0], up = [3, 0], m = [3 gelu(1), 0] */
    double both[4];
    EXPECT(ref_geglu_mlp_rows(x, wg, wu, wd, 2, 2, 0, 2, both, NULL, 0.0) == 0, "allocation");
    EXPECT(close_to(both[0], 3.0 * GELU_1) && close_to(both[1], 9.0 * GELU_1), "row 0: %g %g", both[0], both[1]);
    EXPECT(both[2] == y[0] && both[3] == y[1], "row 1 the same whichever rows are asked for");
    return 0;
}

/* A negative gate: x = [-2], Wg = [[0.5]] -> gate = -1; Wu = [[0.25]] -> up = -0.5; Wd = [[4]]. */
static int test_negative_gate(void)
{
    const float x[] = {-2}, wg[] = {0.5f}, wu[] = {0.25f}, wd[] = {4};
    double y;
    EXPECT(ref_geglu_mlp_rows(x, wg, wu, wd, 1, 1, 0, 1, &y, NULL, 0.0) == 0, "allocation");
    EXPECT(close_to(y, GELU_M1 * -0.5 * 4.0), "y = %.17g", y);
    return 0;
}

/* Where the sum cancels, the error is measured against the size of its terms; where it does
 * not, it is the plain relative Frobenius error; NaN always fails. */
static int test_error_metric(void)
{
    /* terms +1 and -1 (scale sqrt(2)) summing to 0: a GPU result of 1e-3 is a rounding, not a bug */
    const float x[] = {1, 1}, wg[] = {2, 0, 2, 0}, wu[] = {1, 0, 1, 0}, wd[] = {1, -1, 0, 0};
    double y[2], scale[2];
    EXPECT(ref_geglu_mlp_rows(x, wg, wu, wd, 2, 2, 0, 1, y, scale, 0.0) == 0, "allocation");
    EXPECT(y[0] == 0.0 && y[1] == 0.0, "cancels: %g %g", y[0], y[1]);
    double g2 = 0.5 * 2.0 * (1.0 + tanh(0.7978845608028654 * (2.0 + 0.044715 * 8.0))); /* gelu(2) */
    EXPECT(close_to(scale[0], sqrt(2.0) * g2), "scale %.17g", scale[0]);
    float got[2] = {1e-3f, 0.0f};
    double e = ref_mlp_error(got, y, scale, 2);
    EXPECT(fabs(e - 1e-3 / (sqrt(2.0) * g2)) < 1e-9, "error against the scale: %g", e);

    const double ref[2] = {3.0, 4.0}, small[2] = {0.1, 0.1};
    const float off[2] = {3.0f, 4.5f};
    EXPECT(fabs(ref_mlp_error(off, ref, small, 2) - 0.1) < 1e-12, "plain relative error when nothing cancels");
    const float bad[2] = {3.0f, NAN};
    EXPECT(isinf(ref_mlp_error(bad, ref, small, 2)), "NaN fails");
    /* the floor: an output that underflows carries an absolute error, measured against it */
    const float w1[] = {1};
    double t, ts;
    EXPECT(ref_geglu_mlp_rows(w1, w1, w1, w1, 1, 1, 0, 1, &t, &ts, 0.5) == 0, "allocation");
    EXPECT(close_to(ts, sqrt(0.25 + GELU_1 * GELU_1)), "floor in quadrature: %.17g", ts);
    return 0;
}

static int test_napkin_math(void)
{
    mlp_t m = {.dtype = DTYPE_BF16, .tokens = 8192, .dim = 768, .hidden = 3072};
    /* the article's shape: 3 GEMMs of 2 * 8192 * 768 * 3072 = 38.65 GFLOP */
    EXPECT(mlp_op_flops(&m, MLP_GATE) == 38654705664.0, "gate %.0f", mlp_op_flops(&m, MLP_GATE));
    EXPECT(mlp_op_flops(&m, MLP_DOWN) == mlp_op_flops(&m, MLP_GATE), "down: the same FLOPs");
    EXPECT(mlp_op_flops(&m, MLP_GELU) == 0.0 && mlp_op_flops(&m, MLP_MUL) == 0.0, "elementwise: no GEMM FLOPs");
    EXPECT(mlp_flops(&m) == 115964116992.0, "forward %.0f", mlp_flops(&m));
    /* x and y 8192 x 768, three 768 x 3072 weights, 2 bytes each: 39.3 MB */
    EXPECT(mlp_min_bytes(&m) == 39321600.0, "min bytes %.0f", mlp_min_bytes(&m));
    /* h is 8192 x 3072 bf16 = 50.3 MB: GELU reads gate and writes h, mul reads h and up, writes m */
    EXPECT(mlp_op_bytes(&m, MLP_GELU) == 2.0 * 50331648.0, "gelu %.0f", mlp_op_bytes(&m, MLP_GELU));
    EXPECT(mlp_op_bytes(&m, MLP_MUL) == 3.0 * 50331648.0, "mul %.0f", mlp_op_bytes(&m, MLP_MUL));
    EXPECT(mlp_op_bytes(&m, MLP_GATE) == 2.0 * (8192.0 * 768 + 3072.0 * 768 + 8192.0 * 3072), "gate bytes");
    EXPECT(mlp_op_bytes(&m, MLP_DOWN) == mlp_op_bytes(&m, MLP_GATE), "down moves the same operands, transposed roles");

    mlp_t tiny = {.dtype = DTYPE_FP32, .tokens = 1, .dim = 2, .hidden = 1};
    EXPECT(mlp_flops(&tiny) == 12.0, "tiny flops %.0f", mlp_flops(&tiny));
    EXPECT(mlp_min_bytes(&tiny) == 4.0 * (2 * 2 + 3 * 2), "tiny bytes %.0f", mlp_min_bytes(&tiny));
    return 0;
}

/* The rows shared among threads give, row for row, the bits of the one-thread reference, for
 * rows in any order, repeated, and more rows than cores. */
static int test_rows_on_every_core(void)
{
    enum { M = 40, DIM = 24, HIDDEN = 36, N = 37 };
    static float x[M * DIM], wg[HIDDEN * DIM], wu[HIDDEN * DIM], wd[DIM * HIDDEN];
    static double y[N * DIM], scale[N * DIM], want[DIM], want_scale[DIM];
    size_t row_of[N];
    unsigned s = 12345;
    float *all[] = {x, wg, wu, wd};
    const size_t len[] = {M * DIM, HIDDEN * DIM, HIDDEN * DIM, DIM * HIDDEN};
    for (int a = 0; a < 4; a++)
        for (size_t i = 0; i < len[a]; i++) {
            s = s * 1103515245u + 12345u;
            all[a][i] = (float)((s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
        }
    for (size_t r = 0; r < N; r++) row_of[r] = (r * 7 + 3) % M;
    EXPECT(ref_geglu_mlp_rows_at(x, wg, wu, wd, DIM, HIDDEN, row_of, N, y, scale, 1e-30) == 0, "allocation");
    for (size_t r = 0; r < N; r++) {
        EXPECT(ref_geglu_mlp_rows(x, wg, wu, wd, DIM, HIDDEN, row_of[r], 1, want, want_scale, 1e-30) == 0, "alloc");
        for (size_t j = 0; j < DIM; j++)
            EXPECT(y[r * DIM + j] == want[j] && scale[r * DIM + j] == want_scale[j], "output %zu (row %zu), column %zu",
                   r, row_of[r], j);
    }
    return 0;
}

int main(void)
{
    TEST_RUN(test_one_token_by_hand);
    TEST_RUN(test_row_offset_and_layouts);
    TEST_RUN(test_negative_gate);
    TEST_RUN(test_error_metric);
    TEST_RUN(test_napkin_math);
    TEST_RUN(test_rows_on_every_core);
    TEST_EXIT();
}
