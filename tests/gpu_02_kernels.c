/* GPU tests of 02_linear's kernels against the CPU: bias_add (y += b), bias_broadcast (y = b)
 * and transpose, every dtype, row lengths around the 16-byte vector width, more rows than one
 * grid column of blocks covers, and y or b one element off 16-byte alignment. Outputs are
 * poisoned with NaN first; the elements around the output must stay untouched. Every result is
 * compared bit for bit: each is one fp32 operation rounded once, or a copy. Without a GPU every
 * test is a SKIP. */
#include <stdint.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "dtype.h"
#include "harness.h"
#include "ref.h"

/* 02_linear/kernels.cu (declared in 02_linear/model.h too, with the stage's model). */
void launch_transpose(dtype_t t, const void *src, void *dst, size_t rows, size_t cols, cudaStream_t stream);
void launch_bias_add(dtype_t t, void *y, const void *b, size_t rows, size_t cols, cudaStream_t stream);
void launch_bias_broadcast(dtype_t t, void *y, const void *b, size_t rows, size_t cols, cudaStream_t stream);

enum op { OP_BIAS_ADD, OP_BIAS_BROADCAST, OP_TRANSPOSE };

static int have_gpu;
static char why[256];

/* The expected output element i of op over a [rows, cols] (and b [cols]), as stored. */
static float expected(enum op op, dtype_t t, const float *a, const float *b, size_t rows, size_t cols, size_t i)
{
    if (op == OP_TRANSPOSE) return a[(i % rows) * cols + i / rows]; /* out [cols, rows] */
    if (op == OP_BIAS_BROADCAST) return b[i % cols];
    /* a sum of two floats is exact in double at these magnitudes: rounding it to fp32 gives the
     * kernel's fp32 sum, then one rounding to the storage type, the kernel's too */
    float sum = (float)((double)a[i] + (double)b[i % cols]);
    uint32_t bits;
    dtype_round_and_pack(t, &sum, &bits, 1);
    return sum;
}

/* One case; y (the output, also the input of bias_add) starts y_off elements and b b_off elements
 * past a 256-byte aligned allocation. Returns 0, or 1 with the first discrepancy in `why`. */
static int run_case(enum op op, dtype_t t, size_t rows, size_t cols, size_t y_off, size_t b_off)
{
    const size_t e = dtype_size(t), n = rows * cols, y_len = y_off + n + 1; /* a guard element after */
    float *a = malloc(n * sizeof *a), *b = malloc(cols * sizeof *b), *got = malloc(n * sizeof *got);
    unsigned char *bits = malloc(y_len * e);
    void *dy = NULL, *db = NULL, *dsrc = NULL;
    int bad = 0;
    if (!a || !b || !got || !bits) {
        snprintf(why, sizeof why, "out of host memory");
        bad = 1;
    }
    if (!bad && (cudaMalloc(&dy, y_len * e) != cudaSuccess || cudaMalloc(&db, (b_off + cols) * e) != cudaSuccess ||
                 cudaMalloc(&dsrc, n * e) != cudaSuccess)) {
        snprintf(why, sizeof why, "cudaMalloc failed");
        bad = 1;
    }
    if (!bad) {
        rng_t rng = rng_seed(2000 + rows * 7 + cols);
        fill_uniform(&rng, a, n, -4.0f, 4.0f);
        fill_uniform(&rng, b, cols, -4.0f, 4.0f);
        char *py = (char *)dy + y_off * e, *pb = (char *)db + b_off * e;
        cudaMemset(dy, 0xFF, y_len * e); /* NaN in every dtype */
        dtype_round_and_pack(t, a, bits, n);
        if (op == OP_BIAS_ADD) cudaMemcpy(py, bits, n * e, cudaMemcpyHostToDevice);
        else cudaMemcpy(dsrc, bits, n * e, cudaMemcpyHostToDevice);
        dtype_round_and_pack(t, b, bits, cols);
        cudaMemcpy(pb, bits, cols * e, cudaMemcpyHostToDevice);
        if (op == OP_BIAS_ADD) launch_bias_add(t, py, pb, rows, cols, 0);
        else if (op == OP_BIAS_BROADCAST) launch_bias_broadcast(t, py, pb, rows, cols, 0);
        else launch_transpose(t, dsrc, py, rows, cols, 0);
        cudaError_t err = cudaDeviceSynchronize();
        if (err == cudaSuccess) err = cudaGetLastError();
        if (err == cudaSuccess) err = cudaMemcpy(bits, dy, y_len * e, cudaMemcpyDeviceToHost);
        if (err != cudaSuccess) {
            snprintf(why, sizeof why, "CUDA error: %s", cudaGetErrorString(err));
            bad = 1;
        }
    }
    for (size_t i = 0; !bad && i < y_len; i++) {
        if (i >= y_off && i < y_off + n) continue;
        for (size_t k = 0; k < e; k++)
            if (bits[i * e + k] != 0xFF) {
                snprintf(why, sizeof why, "element %zu outside the output was written", i);
                bad = 1;
            }
    }
    if (!bad) dtype_unpack(t, bits + y_off * e, got, n);
    for (size_t i = 0; !bad && i < n; i++) {
        float want = expected(op, t, a, b, rows, cols, i);
        if (!(got[i] == want)) {
            snprintf(why, sizeof why, "element %zu = %.9g, want %.9g", i, got[i], want);
            bad = 1;
        }
    }
    if (bad) {
        size_t len = strlen(why);
        snprintf(why + len, sizeof why - len, " (%s, %zu x %zu, offsets %zu/%zu)", dtype_name(t), rows, cols, y_off,
                 b_off);
    }
    cudaFree(dy);
    cudaFree(db);
    cudaFree(dsrc);
    free(a);
    free(b);
    free(got);
    free(bits);
    return bad;
}

/* rows x cols: one element, odd rows, a whole vector, several vectors, a tail, tall (the grid's
 * 65535 row blocks of 8 rows each do not cover 600000 rows: each thread loops) */
static const size_t shapes[][2] = {{1, 1}, {3, 7}, {5, 8}, {4, 24}, {17, 1001}, {600000, 8}};
static const size_t offsets[][2] = {{0, 0}, {1, 0}, {0, 1}}; /* y, b */

static int all_cases(enum op op, dtype_t t)
{
    if (!have_gpu) SKIP(why);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++)
            EXPECT(run_case(op, t, shapes[s][0], shapes[s][1], offsets[o][0], offsets[o][1]) == 0, "%s", why);
    return 0;
}

static int test_bias_add_bf16(void) { return all_cases(OP_BIAS_ADD, DTYPE_BF16); }
static int test_bias_add_fp16(void) { return all_cases(OP_BIAS_ADD, DTYPE_FP16); }
static int test_bias_add_fp32(void) { return all_cases(OP_BIAS_ADD, DTYPE_FP32); }
static int test_bias_broadcast_bf16(void) { return all_cases(OP_BIAS_BROADCAST, DTYPE_BF16); }
static int test_bias_broadcast_fp16(void) { return all_cases(OP_BIAS_BROADCAST, DTYPE_FP16); }
static int test_bias_broadcast_fp32(void) { return all_cases(OP_BIAS_BROADCAST, DTYPE_FP32); }
static int test_transpose_bf16(void) { return all_cases(OP_TRANSPOSE, DTYPE_BF16); }
static int test_transpose_fp16(void) { return all_cases(OP_TRANSPOSE, DTYPE_FP16); }
static int test_transpose_fp32(void) { return all_cases(OP_TRANSPOSE, DTYPE_FP32); }

int main(void)
{
    const char *no_gpu = harness_no_gpu();
    have_gpu = no_gpu == NULL;
    if (!have_gpu) snprintf(why, sizeof why, "%s", no_gpu);
    TEST_RUN(test_bias_add_bf16);
    TEST_RUN(test_bias_add_fp16);
    TEST_RUN(test_bias_add_fp32);
    TEST_RUN(test_bias_broadcast_bf16);
    TEST_RUN(test_bias_broadcast_fp16);
    TEST_RUN(test_bias_broadcast_fp32);
    TEST_RUN(test_transpose_bf16);
    TEST_RUN(test_transpose_fp16);
    TEST_RUN(test_transpose_fp32);
    TEST_EXIT();
}
