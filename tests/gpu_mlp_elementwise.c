/* GPU tests of the one-to-one elementwise kernels against the CPU: 03_simple_mlp's launch_gelu_tanh
 * and launch_mul, and 01_matmul_add's launch_add (the same vectorized body): every dtype, lengths around the 16-byte vector width (1, 7, 8, 9, 1023) and a large one
 * (2^24 + 3), pointers one element off 16-byte alignment, outputs poisoned with NaN first and
 * the elements around the output checked untouched. Without a GPU every test is a SKIP. */
#include <stdint.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "../03_simple_mlp/mlp.h"
#include "dtype.h"
#include "harness.h"
#include "ref.h"

/* 01_matmul_add/kernels.cu (its main.c declares it too: the stage has no header). */
void launch_add(dtype_t t, const void *a, const void *b, void *out, size_t n, cudaStream_t stream);

enum op { OP_GELU, OP_MUL, OP_ADD };

static int have_gpu;
static char why[256];

/* The unit roundoff of the storage type: the largest relative error of one rounding. */
static double unit_roundoff(dtype_t t)
{
    return t == DTYPE_BF16 ? 1.0 / 256 : t == DTYPE_FP16 ? 1.0 / 2048 : 1.0 / 16777216;
}

/* The kernel computes GELU in fp32 (gelu.cuh: a fast exponential and a fast division, a few ulp
 * each), then rounds once to the storage type. Against GELU in double: one rounding of the result
 * (u |gelu|), the fp32 evaluation (a few fp32 ulp of |gelu|, plus the rounding of exp's argument,
 * which grows with |x|), and for fp16 the absolute spacing of subnormals. */
static double gelu_tolerance(dtype_t t, double x, double exact)
{
    double f32 = 1.0 / 16777216;
    return 1.05 * unit_roundoff(t) * fabs(exact) + 16.0 * f32 * (fabs(x) + fabs(exact)) +
           (t == DTYPE_FP16 ? f32 : 0.0);
}

/* One case: out = gelu(a), a * b or a + b over n elements, inputs `in_off`
 * and the output `out_off` elements past a 256-byte aligned allocation. Returns 0, or 1 with
 * the first discrepancy in `why`. */
static int run_case(enum op op, dtype_t t, size_t n, size_t in_off, size_t out_off)
{
    size_t e = dtype_size(t), out_len = out_off + n + 1; /* one guard element after the output */
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *got = malloc(out_len * sizeof *got);
    void *bits = malloc((n > out_len ? n : out_len) * e);
    unsigned char *raw = malloc(out_len * e);
    void *da, *db, *dout;
    if (!a || !b || !got || !bits || !raw) {
        snprintf(why, sizeof why, "out of host memory");
        free(a), free(b), free(got), free(bits), free(raw);
        return 1;
    }
    rng_t rng = rng_seed(1000 + n);
    fill_uniform(&rng, a, n, -6.0f, 6.0f); /* past GELU's bend on both sides */
    fill_uniform(&rng, b, n, -4.0f, 4.0f);
    if (cudaMalloc(&da, (in_off + n) * e) != cudaSuccess || cudaMalloc(&db, (in_off + n) * e) != cudaSuccess ||
        cudaMalloc(&dout, out_len * e) != cudaSuccess) {
        snprintf(why, sizeof why, "cudaMalloc failed for n = %zu", n);
        free(a), free(b), free(got), free(bits), free(raw);
        return 1;
    }
    char *pa = (char *)da + in_off * e, *pb = (char *)db + in_off * e, *pout = (char *)dout + out_off * e;
    dtype_round_and_pack(t, a, bits, n);
    cudaMemcpy(pa, bits, n * e, cudaMemcpyHostToDevice);
    dtype_round_and_pack(t, b, bits, n);
    cudaMemcpy(pb, bits, n * e, cudaMemcpyHostToDevice);
    cudaMemset(dout, 0xFF, out_len * e); /* NaN in every dtype */

    if (op == OP_GELU) launch_gelu_tanh(t, pa, pout, n, 0);
    else if (op == OP_MUL) launch_mul(t, pa, pb, pout, n, 0);
    else launch_add(t, pa, pb, pout, n, 0);
    cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaSuccess) err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaMemcpy(raw, dout, out_len * e, cudaMemcpyDeviceToHost);
    int bad = 0;
    if (err != cudaSuccess) {
        snprintf(why, sizeof why, "CUDA error: %s", cudaGetErrorString(err));
        bad = 1;
    }
    for (size_t i = 0; !bad && i < out_len; i++) {
        if (i >= out_off && i < out_off + n) continue;
        for (size_t k = 0; k < e; k++)
            if (raw[i * e + k] != 0xFF) {
                snprintf(why, sizeof why, "element %zu outside the output was written", i);
                bad = 1;
            }
    }
    dtype_unpack(t, raw + out_off * e, got, n);
    for (size_t i = 0; !bad && i < n; i++) {
        if (op == OP_GELU) {
            double exact = ref_gelu_tanh(a[i]);
            if (!(fabs(got[i] - exact) <= gelu_tolerance(t, a[i], exact))) {
                snprintf(why, sizeof why, "gelu(%.9g)[%zu] = %.9g, want %.9g", a[i], i, got[i], exact);
                bad = 1;
            }
        } else {
            /* the product or sum of two floats is exact in double (these magnitudes: 53 bits hold
             * it), so rounding it to fp32 gives fp32's correctly rounded result, the kernel's; then
             * one rounding to the storage type, the kernel's too: bit for bit */
            double exact = op == OP_MUL ? (double)a[i] * (double)b[i] : (double)a[i] + (double)b[i];
            float want = (float)exact;
            uint32_t want_bits;
            dtype_round_and_pack(t, &want, &want_bits, 1);
            if (!(got[i] == want)) {
                snprintf(why, sizeof why, "%.9g %c %.9g [%zu] = %.9g, want %.9g", a[i], op == OP_MUL ? '*' : '+',
                         b[i], i, got[i], want);
                bad = 1;
            }
        }
    }
    if (bad) {
        size_t len = strlen(why);
        snprintf(why + len, sizeof why - len, " (%s, n = %zu, offsets %zu/%zu)", dtype_name(t), n, in_off, out_off);
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dout);
    free(a);
    free(b);
    free(got);
    free(bits);
    free(raw);
    return bad;
}

static const size_t lengths[] = {1, 7, 8, 9, 1023, (1u << 24) + 3};
static const size_t offsets[][2] = {{1, 1}, {0, 1}, {1, 0}}; /* inputs, output: one element off */
static const size_t misaligned_lengths[] = {9, 1023, 4099};

static int all_cases(enum op op, dtype_t t)
{
    if (!have_gpu) SKIP(why);
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
        EXPECT(run_case(op, t, lengths[i], 0, 0) == 0, "%s", why);
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++)
        for (size_t i = 0; i < sizeof misaligned_lengths / sizeof misaligned_lengths[0]; i++)
            EXPECT(run_case(op, t, misaligned_lengths[i], offsets[o][0], offsets[o][1]) == 0, "%s", why);
    return 0;
}

static int test_gelu_bf16(void) { return all_cases(OP_GELU, DTYPE_BF16); }
static int test_gelu_fp16(void) { return all_cases(OP_GELU, DTYPE_FP16); }
static int test_gelu_fp32(void) { return all_cases(OP_GELU, DTYPE_FP32); }
static int test_mul_bf16(void) { return all_cases(OP_MUL, DTYPE_BF16); }
static int test_mul_fp16(void) { return all_cases(OP_MUL, DTYPE_FP16); }
static int test_mul_fp32(void) { return all_cases(OP_MUL, DTYPE_FP32); }
static int test_add_bf16(void) { return all_cases(OP_ADD, DTYPE_BF16); }
static int test_add_fp16(void) { return all_cases(OP_ADD, DTYPE_FP16); }
static int test_add_fp32(void) { return all_cases(OP_ADD, DTYPE_FP32); }

/* n = 0 launches nothing and raises no error. */
static int test_empty(void)
{
    if (!have_gpu) SKIP(why);
    launch_gelu_tanh(DTYPE_BF16, NULL, NULL, 0, 0);
    launch_mul(DTYPE_BF16, NULL, NULL, NULL, 0, 0);
    launch_add(DTYPE_BF16, NULL, NULL, NULL, 0, 0);
    EXPECT(cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess, "no error");
    return 0;
}

int main(void)
{
    const char *no_gpu = harness_no_gpu();
    have_gpu = no_gpu == NULL;
    if (!have_gpu) snprintf(why, sizeof why, "%s", no_gpu);
    TEST_RUN(test_gelu_bf16);
    TEST_RUN(test_gelu_fp16);
    TEST_RUN(test_gelu_fp32);
    TEST_RUN(test_mul_bf16);
    TEST_RUN(test_mul_fp16);
    TEST_RUN(test_mul_fp32);
    TEST_RUN(test_add_bf16);
    TEST_RUN(test_add_fp16);
    TEST_RUN(test_add_fp32);
    TEST_RUN(test_empty);
    TEST_EXIT();
}
