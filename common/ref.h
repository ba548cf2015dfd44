/* ref.h: the CPU reference every GPU result is checked against.
 *
 * Everything here accumulates in double over the same dtype-rounded inputs the GPU sees, so a
 * GPU result differs from the reference only by its own rounding. Matrices are row-major, as
 * PyTorch stores them.
 */
#ifndef REF_H
#define REF_H

#include <stddef.h>
#include <stdint.h>

/* Seeded generator (splitmix64): the same --seed gives the same inputs on every machine. */
typedef struct { uint64_t state; } rng_t;
rng_t rng_seed(uint64_t seed);
uint64_t rng_next(rng_t *r);
/* Uniform in [lo, hi). */
float rng_uniform(rng_t *r, float lo, float hi);
void fill_uniform(rng_t *r, float *x, size_t n, float lo, float hi);

/* C[i][j] = sum_k A[i][k] * B(k, j) for rows i in [row0, row0 + rows), where B(k, j) is
 * B[k * ldb + j] (B is K x N), or B[j * ldb + k] when b_transposed (B stored N x K, read as its
 * transpose: what y = x W^T does with PyTorch's weight layout). C holds `rows` rows of N. */
void ref_gemm_rows(const float *A, const float *B, double *C, size_t row0, size_t rows, size_t K,
                   size_t N, int b_transposed);

/* GELU, tanh approximation, as PyTorch's gelu(approximate="tanh"). */
double ref_gelu_tanh(double x);

/* ||got - ref||_F / ||ref||_F; NaN or infinity anywhere in `got` gives +infinity, so an
 * unwritten (poisoned) element always fails. */
double rel_fro_error(const float *got, const double *ref, size_t n);

#endif
