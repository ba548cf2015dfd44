/* ceilings: the numbers every report compares against, measured on this GPU.
 *
 *   make ceilings && bin/ceilings
 *
 * 1. Dense GEMM: an 8192 x 8192 x 8192 product through cuBLAS (bf16 and fp16 operands, fp32
 *    accumulation; fp32 without TF32), random data (zeros run faster and would flatter us).
 *    2 * 8192^3 = 1.1 TFLOP per product.
 * 2. Device copy: cudaMemcpyAsync device to device of 4 GB, counting bytes read plus written.
 * Each is the median of 20 timed repetitions after 5 warm-ups, timed with CUDA events.
 * 3. The launch floor: what one launch of an empty kernel costs, issued back to back (the CPU's
 *    cost per launch, since the GPU finishes an empty kernel sooner), the host clock around the
 *    launch call alone, and the same kernel replayed from a CUDA graph. Below this no forward of
 *    k kernels issued one by one can go: k times the floor. Medians of 21 rounds of 1000.
 * The GEMM rate (bf16) and the copy bandwidth are stored for this GPU and driver
 * (common/ceilings.h): every stage's report divides by them from then on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "blas.h"
#include "ceilings.h"
#include "check.h"
#include "cli.h"
#include "gpu.h"
#include "ref.h"
#include "stats.h"

enum { WARMUP = 5, REPS = 20, LAUNCH_ROUNDS = 21, LAUNCHES = 1000 };

void launch_empty_kernel(cudaStream_t stream);

static void fill_random(void *dev, dtype_t t, size_t n, uint64_t seed)
{
    rng_t r = rng_seed(seed);
    float *v = malloc(n * sizeof *v);
    void *bits = malloc(n * dtype_size(t));
    if (!v || !bits) {
        program_error("out of host memory");
        exit(EXIT_BAD_INPUT);
    }
    fill_uniform(&r, v, n, -1.0f, 1.0f);
    dtype_round_and_pack(t, v, bits, n);
    CUDA_CHECK(cudaMemcpy(dev, bits, n * dtype_size(t), cudaMemcpyHostToDevice));
    free(v);
    free(bits);
}

static double median_us(void (*fn)(void *), void *ctx)
{
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    for (int i = 0; i < WARMUP; i++) fn(ctx);
    double us[REPS];
    for (int i = 0; i < REPS; i++) {
        CUDA_CHECK(cudaEventRecord(a, 0));
        fn(ctx);
        CUDA_CHECK(cudaEventRecord(b, 0));
        CUDA_CHECK(cudaEventSynchronize(b));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        us[i] = (double)ms * 1e3;
    }
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    return stats_of(us, REPS).median;
}

typedef struct {
    cublasHandle_t h;
    dtype_t t;
    size_t n;
    void *a, *b, *c;
} gemm_ctx;

static void run_gemm(void *p)
{
    gemm_ctx *g = p;
    blas_gemm(g->h, g->t, 1, g->n, g->n, g->n, 1.0f, g->a, g->b, 0.0f, g->c, 1);
}

typedef struct {
    void *src, *dst;
    size_t bytes;
} copy_ctx;

static void run_copy(void *p)
{
    copy_ctx *c = p;
    CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, 0));
}

static double host_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Per launch, medians over rounds: back to back (events around LAUNCHES launches), the host
 * clock around the launch calls alone, and one graph of the kernel replayed LAUNCHES times. */
static void launch_floor(void)
{
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    launch_empty_kernel(s);
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    double b2b[LAUNCH_ROUNDS], host[LAUNCH_ROUNDS], replay[LAUNCH_ROUNDS];
    for (int r = -1; r < LAUNCH_ROUNDS; r++) { /* round -1 warms up */
        float ms;
        CUDA_CHECK(cudaEventRecord(a, s));
        const double t0 = host_now_us();
        for (int i = 0; i < LAUNCHES; i++) launch_empty_kernel(s);
        const double t1 = host_now_us();
        LAUNCH_CHECK();
        CUDA_CHECK(cudaEventRecord(b, s));
        CUDA_CHECK(cudaEventSynchronize(b));
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 0) b2b[r] = (double)ms * 1e3 / LAUNCHES, host[r] = (t1 - t0) / LAUNCHES;
        CUDA_CHECK(cudaEventRecord(a, s));
        for (int i = 0; i < LAUNCHES; i++) CUDA_CHECK(cudaGraphLaunch(exec, s));
        CUDA_CHECK(cudaEventRecord(b, s));
        CUDA_CHECK(cudaEventSynchronize(b));
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 0) replay[r] = (double)ms * 1e3 / LAUNCHES;
    }
    printf("launch floor: empty kernel %.2f us per launch back to back (host clock around the launch "
           "call: %.2f us); as a one-kernel CUDA graph %.2f us per replay\n",
           stats_of(b2b, LAUNCH_ROUNDS).median, stats_of(host, LAUNCH_ROUNDS).median,
           stats_of(replay, LAUNCH_ROUNDS).median);
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    CUDA_CHECK(cudaStreamDestroy(s));
}

int main(int argc, char **argv)
{
    const stage_spec spec = {"ceilings", "the GEMM and copy ceilings and the launch floor of this GPU, measured and "
                             "stored for every report (see the header of bench/ceilings.c); no flags", NULL, NULL,
                             NULL, 0, NULL, 1, 0};
    common_args args;
    if (cli_parse(argc, argv, &spec, &args, NULL) == CLI_HELP) {
        cli_print_help(&spec, NULL);
        return 0;
    }
    gpu_info g;
    gpu_require(&g, "ceilings");
    gpu_print(&g);

    const size_t n = 8192, copy_bytes = (size_t)4 << 30;
    gpu_require_fits(3 * n * n * 4 + 2 * copy_bytes, "the GEMM and copy buffers");
    gemm_ctx gc = {.n = n};
    CUBLAS_CHECK(cublasCreate(&gc.h));
    CUDA_CHECK(cudaMalloc(&gc.a, n * n * 4));
    CUDA_CHECK(cudaMalloc(&gc.b, n * n * 4));
    CUDA_CHECK(cudaMalloc(&gc.c, n * n * 4));
    const dtype_t types[] = {DTYPE_BF16, DTYPE_FP16, DTYPE_FP32};
    ceilings_t measured = {0};
    for (int i = 0; i < 3; i++) {
        gc.t = types[i];
        fill_random(gc.a, gc.t, n * n, 1);
        fill_random(gc.b, gc.t, n * n, 2);
        double us = median_us(run_gemm, &gc);
        double tflops = 2.0 * (double)n * n * n / (us * 1e-6) / 1e12;
        printf("gemm %s %zu^3: %.1f us, %.1f TFLOP/s\n", dtype_name(gc.t), n, us, tflops);
        if (gc.t == DTYPE_BF16) measured.gemm_tflops_16bit = tflops;
    }
    CUDA_CHECK(cudaFree(gc.a));
    CUDA_CHECK(cudaFree(gc.b));
    CUDA_CHECK(cudaFree(gc.c));
    CUBLAS_CHECK(cublasDestroy(gc.h));

    copy_ctx cc = {.bytes = copy_bytes};
    CUDA_CHECK(cudaMalloc(&cc.src, copy_bytes));
    CUDA_CHECK(cudaMalloc(&cc.dst, copy_bytes));
    CUDA_CHECK(cudaMemset(cc.src, 0x5A, copy_bytes)); /* contents do not change a copy's speed */
    double us = median_us(run_copy, &cc);
    measured.copy_gbps = 2.0 * (double)copy_bytes / (us * 1e-6) / 1e9;
    printf("copy device to device %.1f GB: %.1f us, %.0f GB/s (read + written)\n", (double)copy_bytes / 1e9, us,
           measured.copy_gbps);
    CUDA_CHECK(cudaFree(cc.src));
    CUDA_CHECK(cudaFree(cc.dst));
    launch_floor();
    return ceilings_save(&measured, g.prop.name, g.driver_version) == 0 ? 0 : EXIT_BAD_INPUT;
}
