#include "ref.h"

#include <math.h>

rng_t rng_seed(uint64_t seed) { return (rng_t){seed}; }

uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float rng_uniform(rng_t *r, float lo, float hi)
{
    /* the top 24 bits: every value exactly representable as a float */
    float u = (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}

void fill_uniform(rng_t *r, float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) x[i] = rng_uniform(r, lo, hi);
}

void ref_gemm_rows(const float *A, const float *B, double *C, size_t row0, size_t rows, size_t K,
                   size_t N, int b_transposed)
{
    for (size_t i = 0; i < rows; i++) {
        const float *a = A + (row0 + i) * K;
        double *c = C + i * N;
        if (b_transposed) { /* B is N x K: each output is a dot product of two rows */
            for (size_t j = 0; j < N; j++) {
                const float *b = B + j * K;
                double acc = 0.0;
                for (size_t k = 0; k < K; k++) acc += (double)a[k] * (double)b[k];
                c[j] = acc;
            }
        } else { /* B is K x N: accumulate rows of B, the cache-friendly order */
            for (size_t j = 0; j < N; j++) c[j] = 0.0;
            for (size_t k = 0; k < K; k++) {
                double av = a[k];
                const float *b = B + k * N;
                for (size_t j = 0; j < N; j++) c[j] += av * (double)b[j];
            }
        }
    }
}

double ref_gelu_tanh(double x)
{
    const double k = 0.7978845608028654; /* sqrt(2 / pi) */
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

double rel_fro_error(const float *got, const double *ref, size_t n)
{
    double diff = 0.0, norm = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(got[i])) return INFINITY;
        double d = (double)got[i] - ref[i];
        diff += d * d;
        norm += ref[i] * ref[i];
    }
    if (norm == 0.0) return diff == 0.0 ? 0.0 : INFINITY;
    return sqrt(diff / norm);
}
