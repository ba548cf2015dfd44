/* CPU tests of the numerics every check relies on: dtype rounding, the reference GEMM, GELU,
 * the error metric, the statistics. */
#include <stdint.h>
#include <stdlib.h>

#include "dtype.h"
#include "harness.h"
#include "ref.h"
#include "stats.h"

static int test_bf16_rounding(void)
{
    EXPECT(float_to_bf16(1.0f) == 0x3F80, "1.0 -> %04x", float_to_bf16(1.0f));
    EXPECT(float_to_bf16(-2.0f) == 0xC000, "-2.0");
    /* 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0) */
    EXPECT(float_to_bf16(1.00390625f) == 0x3F80, "tie to even down: %04x", float_to_bf16(1.00390625f));
    /* 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even (up) */
    EXPECT(float_to_bf16(1.01171875f) == 0x3F82, "tie to even up: %04x", float_to_bf16(1.01171875f));
    EXPECT(float_to_bf16(1.0f + 0.00390625f + 1e-6f) == 0x3F81, "above the tie rounds up");
    EXPECT(isnan(bf16_to_float(float_to_bf16(NAN))), "NaN stays NaN");
    EXPECT(isnan(bf16_to_float(0xFFFF)), "poison pattern 0xFFFF is NaN");
    EXPECT(bf16_to_float(float_to_bf16(3.0e38f)) > 3.0e38f, "large values stay finite");
    rng_t r = rng_seed(1);
    for (int i = 0; i < 10000; i++) {
        float f = rng_uniform(&r, -100.0f, 100.0f);
        float g = bf16_to_float(float_to_bf16(f));
        EXPECT(fabsf(g - f) <= fabsf(f) * (1.0f / 256.0f), "%g -> %g", f, g);
        EXPECT(bf16_to_float(float_to_bf16(g)) == g, "idempotent on %g", g);
    }
    return 0;
}

static int test_fp16_rounding(void)
{
    EXPECT(float_to_fp16(1.0f) == 0x3C00, "1.0 -> %04x", float_to_fp16(1.0f));
    EXPECT(float_to_fp16(-2.0f) == 0xC000, "-2.0");
    EXPECT(float_to_fp16(65504.0f) == 0x7BFF, "max");
    EXPECT(float_to_fp16(65520.0f) == 0x7C00, "rounds to infinity");
    EXPECT(float_to_fp16(5.9604645e-8f) == 0x0001, "smallest subnormal: %04x", float_to_fp16(5.9604645e-8f));
    EXPECT(float_to_fp16(6.1035156e-5f) == 0x0400, "smallest normal");
    EXPECT(float_to_fp16(1.0f + 1.0f / 2048.0f) == 0x3C00, "tie to even down");
    EXPECT(float_to_fp16(1.0f + 3.0f / 2048.0f) == 0x3C02, "tie to even up");
    EXPECT(isnan(fp16_to_float(0xFFFF)), "poison pattern 0xFFFF is NaN");
    for (uint32_t h = 0; h < 0x7C00; h++) { /* every finite positive half survives a round trip */
        EXPECT(float_to_fp16(fp16_to_float((uint16_t)h)) == h, "round trip %04x", h);
    }
    return 0;
}

static int test_pack_unpack(void)
{
    float v[5] = {0.1f, -1.5f, 3.14159f, 1000.5f, -0.0001f}, back[5];
    uint16_t bits[5];
    float keep[5];
    memcpy(keep, v, sizeof v);
    dtype_round_and_pack(DTYPE_BF16, v, bits, 5);
    dtype_unpack(DTYPE_BF16, bits, back, 5);
    for (int i = 0; i < 5; i++) {
        EXPECT(back[i] == v[i], "host copy holds the rounded value");
        EXPECT(fabsf(v[i] - keep[i]) <= fabsf(keep[i]) / 256.0f, "rounding error bound");
    }
    EXPECT(dtype_size(DTYPE_FP32) == 4 && dtype_size(DTYPE_BF16) == 2, "sizes");
    dtype_t t;
    EXPECT(dtype_parse("fp16", &t) == 0 && t == DTYPE_FP16 && dtype_parse("half", &t) == -1, "parse");
    return 0;
}

static int test_reference_gemm(void)
{
    /* [[1,2],[3,4]] @ [[5,6],[7,8]] = [[19,22],[43,50]] */
    const float A[] = {1, 2, 3, 4}, B[] = {5, 6, 7, 8}, Bt[] = {5, 7, 6, 8};
    double C[4];
    ref_gemm_rows(A, B, C, 0, 2, 2, 2, 0);
    EXPECT(C[0] == 19 && C[1] == 22 && C[2] == 43 && C[3] == 50, "%g %g %g %g", C[0], C[1], C[2], C[3]);
    ref_gemm_rows(A, Bt, C, 0, 2, 2, 2, 1); /* the same product with B stored transposed */
    EXPECT(C[0] == 19 && C[1] == 22 && C[2] == 43 && C[3] == 50, "transposed: %g %g %g %g", C[0], C[1], C[2], C[3]);
    ref_gemm_rows(A, B, C, 1, 1, 2, 2, 0); /* one row from the middle */
    EXPECT(C[0] == 43 && C[1] == 50, "row 1: %g %g", C[0], C[1]);
    /* 3 x 5 @ 5 x 4 against a plain triple loop on random data */
    rng_t r = rng_seed(7);
    float X[15], W[20];
    fill_uniform(&r, X, 15, -1, 1);
    fill_uniform(&r, W, 20, -1, 1);
    double Y[12];
    ref_gemm_rows(X, W, Y, 0, 3, 5, 4, 0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            double acc = 0;
            for (int k = 0; k < 5; k++) acc += (double)X[i * 5 + k] * W[k * 4 + j];
            EXPECT(fabs(acc - Y[i * 4 + j]) < 1e-12, "(%d,%d)", i, j);
        }
    return 0;
}

static int test_gelu(void)
{
    /* values of PyTorch's gelu(approximate="tanh") */
    EXPECT(ref_gelu_tanh(0.0) == 0.0, "0");
    EXPECT(fabs(ref_gelu_tanh(1.0) - 0.8411919906082768) < 1e-12, "%.16f", ref_gelu_tanh(1.0));
    EXPECT(fabs(ref_gelu_tanh(-1.0) - (-0.15880800939172324)) < 1e-12, "%.16f", ref_gelu_tanh(-1.0));
    EXPECT(fabs(ref_gelu_tanh(3.0) - 2.996362607918227) < 1e-12, "%.16f", ref_gelu_tanh(3.0));
    EXPECT(fabs(ref_gelu_tanh(-10.0)) < 1e-12, "large negative -> 0");
    return 0;
}

static int test_error_metric(void)
{
    const double ref[] = {3, 4};
    const float same[] = {3, 4}, off[] = {3, 4.5f}, bad[] = {3, NAN}, inf[] = {INFINITY, 4};
    EXPECT(rel_fro_error(same, ref, 2) == 0.0, "equal");
    EXPECT(fabs(rel_fro_error(off, ref, 2) - 0.1) < 1e-12, "0.5 / 5 = %g", rel_fro_error(off, ref, 2));
    EXPECT(isinf(rel_fro_error(bad, ref, 2)), "NaN fails");
    EXPECT(isinf(rel_fro_error(inf, ref, 2)), "inf fails");
    EXPECT(!(rel_fro_error(bad, ref, 2) <= 1e-2), "a NaN error never passes a tolerance");
    return 0;
}

static int test_rng(void)
{
    rng_t a = rng_seed(42), b = rng_seed(42), c = rng_seed(43);
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        float x = rng_uniform(&a, -1, 1), y = rng_uniform(&b, -1, 1), z = rng_uniform(&c, -1, 1);
        EXPECT(x == y, "same seed, same stream");
        EXPECT(x >= -1 && x < 1, "in range: %g", x);
        differ |= x != z;
    }
    EXPECT(differ, "different seeds differ");
    return 0;
}

static int test_stats(void)
{
    const double x[] = {5, 1, 4, 2, 3};
    stats_t s = stats_of(x, 5);
    EXPECT(s.n == 5 && s.min == 1 && s.max == 5 && s.median == 3 && s.mean == 3, "basic");
    EXPECT(fabs(s.stddev - sqrt(2.5)) < 1e-12, "sample stddev %g", s.stddev);
    const double y[] = {10, 1, 2, 3};
    s = stats_of(y, 4);
    EXPECT(s.median == 2.5 && s.mean == 4, "even count: median %g", s.median);
    EXPECT(x[0] == 5, "input unchanged");
    s = stats_of(x, 1);
    EXPECT(s.median == 5 && s.stddev == 0, "one value");
    s = stats_of(x, 0);
    EXPECT(s.n == 0, "no values");
    return 0;
}

/* Every round runs each row once; within the first two rounds no row follows the same row
 * twice; over 7 rounds, the boundaries between rounds included, no row follows itself, and from
 * 5 rows on none follows the same row in more than 3 of them. */
static int test_round_order(void)
{
    enum { ROUNDS = 7, MAX = 9 };
    for (int n = 1; n <= MAX; n++) {
        int follows[MAX][MAX] = {{0}}, within[MAX][MAX] = {{0}}, prev = -1;
        for (int k = 0; k < ROUNDS; k++) {
            int seen[MAX] = {0};
            for (int j = 0; j < n; j++) {
                const int i = stats_round_row(k, j, n);
                EXPECT(i >= 0 && i < n && !seen[i], "%d rows: round %d runs row %d twice or out of range", n, k, i);
                seen[i] = 1;
                if (prev >= 0) follows[i][prev]++;
                if (j > 0 && k < 2) within[i][prev]++;
                prev = i;
            }
        }
        for (int i = 0; i < n; i++) {
            EXPECT(n == 1 || follows[i][i] == 0, "%d rows: row %d ran right after itself", n, i);
            for (int p = 0; p < n; p++) {
                EXPECT(n < 3 || within[i][p] <= 1, "%d rows: row %d ran after row %d in both of the first rounds", n, i,
                       p);
                EXPECT(n < 5 || follows[i][p] <= 3, "%d rows: row %d ran after row %d in %d of %d rounds", n, i, p,
                       follows[i][p], ROUNDS);
            }
        }
    }
    EXPECT(stats_round_row(3, 0, 0) == 0, "no rows");
    return 0;
}

int main(void)
{
    TEST_RUN(test_bf16_rounding);
    TEST_RUN(test_fp16_rounding);
    TEST_RUN(test_pack_unpack);
    TEST_RUN(test_reference_gemm);
    TEST_RUN(test_gelu);
    TEST_RUN(test_error_metric);
    TEST_RUN(test_rng);
    TEST_RUN(test_stats);
    TEST_RUN(test_round_order);
    TEST_EXIT();
}
