/* ref_mlp.h: the GeGLU MLP in double, the reference the MLP stages check against.
 *
 *   y = (gelu_tanh(x Wg^T) * (x Wu^T)) Wd^T
 *
 * x is [M, dim], Wg and Wu are [hidden, dim], Wd is [dim, hidden] (nn.Linear's layout), all
 * row-major floats holding dtype-rounded values. Nothing is rounded in between: the GPU's
 * intermediate roundings (which differ between the eager and the fused forwards) are covered
 * by the tolerance, so one reference serves every variant.
 */
#ifndef REF_MLP_H
#define REF_MLP_H

#include <stddef.h>

/* y rows [row0, row0 + rows) into y (rows x dim). When `scale` is not NULL it receives, per
 * output y[i][j], sqrt(tiny^2 + sum_k (m_k Wd[j][k])^2) with m = gelu(gate) * up and |m_k|
 * raised to at least tiny: the size of the rounding errors a correct result carries, which
 * cancellation in the sum does not shrink. tiny, the storage type's smallest normal value,
 * stands for values that underflow, whose rounding error is absolute. Returns 0, or -1 when the
 * hidden-wide scratch cannot be allocated. */
int ref_geglu_mlp_rows(const float *x, const float *wg, const float *wu, const float *wd,
                       size_t dim, size_t hidden, size_t row0, size_t rows, double *y,
                       double *scale, double tiny);

/* The same for the rows row_of[0..n) of x, output r into y + r * dim (and scale + r * dim): the
 * rows are independent, so they are shared among the machine's cores, each row computed exactly
 * as above whichever thread takes it. Returns 0, or -1 when a thread's scratch cannot be
 * allocated. */
int ref_geglu_mlp_rows_at(const float *x, const float *wg, const float *wu, const float *wd, size_t dim,
                          size_t hidden, const size_t *row_of, size_t n, double *y, double *scale, double tiny);

/* ||got - ref||_F / max(||ref||_F, ||scale||_F): the relative Frobenius error, measured against
 * the rounding scale where the sum cancels (a one-column y at dim = 1, say). At realistic shapes
 * the two norms agree, and this is the plain relative error. NaN or infinity in got: +infinity. */
double ref_mlp_error(const float *got, const double *ref, const double *scale, size_t n);

#endif
