#include "model.h"

#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "gpu.h"
#include "program.h"
#include "ref.h"
#include "size.h"

/* What matmul_add_setup asks the GPU for: five buffers and 32 MB for cuBLAS. */
static const char buffers[] = "x, w, b, y and the temporary";

int matmul_add_validate(size_t n, size_t batch, dtype_t t, char *why, size_t len)
{
    size_t e, bytes;
    if (size_mul_ok(n, n, &e) || size_mul_ok(e, batch, &e) || size_mul_ok(e, 5 * sizeof(float), &bytes)) {
        snprintf(why, len, "batch %zu x size %zu x size %zu: the buffers overflow", batch, n, n);
        return 1;
    }
    return size_device_check(5.0 * (double)e * (double)dtype_size(t) + (32u << 20), buffers, why, len);
}

matmul_add *matmul_add_setup(dtype_t t, size_t n, int batch, uint64_t seed)
{
    matmul_add *m = calloc(1, sizeof *m);
    if (!m) exit(EXIT_BAD_INPUT);
    *m = (matmul_add){.dtype = t, .n = n, .batch = batch};
    size_t count = matmul_add_elems(m), bytes = size_mul(count, dtype_size(t), "a buffer");
    gpu_require_fits(size_mul(bytes, 5, buffers) + (32u << 20), buffers);
    CUDA_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    void **bufs[] = {&m->x, &m->w, &m->b, &m->y, &m->tmp};
    for (int i = 0; i < 5; i++) CUDA_CHECK(cudaMalloc(bufs[i], bytes));

    rng_t rng = rng_seed(seed);
    float **host[] = {&m->hx, &m->hw, &m->hb};
    void *dev[] = {m->x, m->w, m->b};
    void *staging = malloc(bytes);
    for (int i = 0; i < 3; i++) {
        *host[i] = malloc(count * sizeof(float));
        if (!*host[i] || !staging) {
            program_error("out of host memory for %zu elements", count);
            exit(EXIT_BAD_INPUT);
        }
        fill_uniform(&rng, *host[i], count, -1.0f, 1.0f);
        dtype_round_and_pack(t, *host[i], staging, count);
        CUDA_CHECK(cudaMemcpy(dev[i], staging, bytes, cudaMemcpyHostToDevice));
    }
    free(staging);
    return m;
}

void matmul_add_free(matmul_add *m)
{
    CUDA_CHECK(cudaStreamSynchronize(m->stream));
    void *bufs[] = {m->x, m->w, m->b, m->y, m->tmp};
    for (int i = 0; i < 5; i++) CUDA_CHECK(cudaFree(bufs[i]));
    if (m->planned) {
        lt_plan_free(&m->plan);
        CUBLASLT_CHECK(cublasLtDestroy(m->lt));
    }
    if (m->blas) CUBLAS_CHECK(cublasDestroy(m->blas));
    CUDA_CHECK(cudaStreamDestroy(m->stream));
    free(m->hx);
    free(m->hw);
    free(m->hb);
    free(m);
}

double matmul_add_check(matmul_add *m, run_forward forward)
{
    size_t n = m->n, es = dtype_size(m->dtype), bytes = matmul_add_elems(m) * es;
    CUDA_CHECK(cudaMemsetAsync(m->y, 0xFF, bytes, m->stream)); /* all-ones bits: NaN in every dtype */
    CUDA_CHECK(cudaMemsetAsync(m->tmp, 0xFF, bytes, m->stream));
    forward(m);
    CUDA_CHECK(cudaStreamSynchronize(m->stream));

    size_t rows = n <= 1024 ? n : 16;
    int probs[2] = {0, m->batch - 1};
    int n_probs = m->batch > 1 ? 2 : 1;
    size_t count = (size_t)n_probs * rows * n;
    float *got = malloc(count * sizeof *got);
    double *want = malloc(count * sizeof *want);
    void *row_bits = malloc(n * es);
    if (!got || !want || !row_bits) {
        program_error("out of host memory for the check");
        exit(EXIT_BAD_INPUT);
    }
    size_t at = 0;
    for (int p = 0; p < n_probs; p++) {
        size_t base = (size_t)probs[p] * n * n;
        for (size_t r = 0; r < rows; r++, at += n) {
            size_t row = rows == n ? r : r * (n - 1) / (rows - 1);
            CUDA_CHECK(cudaMemcpy(row_bits, (char *)m->y + (base + row * n) * es, n * es, cudaMemcpyDeviceToHost));
            dtype_unpack(m->dtype, row_bits, got + at, n);
            ref_gemm_rows(m->hx + base, m->hw + base, want + at, row, 1, n, n, 0);
            for (size_t j = 0; j < n; j++) want[at + j] += m->hb[base + row * n + j];
        }
    }
    double err = rel_fro_error(got, want, count);
    free(got);
    free(want);
    free(row_bits);
    return err;
}

int matmul_add_arrays(const matmul_add *m, dump_array *out)
{
    const char *names[] = {"x", "w", "b", "y"};
    const void *dev[] = {m->x, m->w, m->b, m->y};
    int batched = m->batch > 1;
    for (int i = 0; i < 4; i++) {
        out[i] = (dump_array){.dev = dev[i], .ndim = batched ? 3 : 2};
        snprintf(out[i].name, sizeof out[i].name, "%s", names[i]);
        if (batched) {
            out[i].shape[0] = (size_t)m->batch;
            out[i].shape[1] = out[i].shape[2] = m->n;
        } else {
            out[i].shape[0] = out[i].shape[1] = m->n;
        }
    }
    return 4;
}

double matmul_add_flops(const matmul_add *m)
{
    return 2.0 * (double)m->n * (double)m->n * (double)m->n * m->batch;
}

void matmul_add_tag(const matmul_add *m, const common_args *a, char *buf, size_t len)
{
    char b[32] = "";
    if (m->batch > 1) snprintf(b, sizeof b, "b%d_", m->batch);
    snprintf(buf, len, "%s%zu_%s_%s", b, m->n, dtype_name(m->dtype), a->sched.warmup > 0 ? "warm" : "cold");
}
