/* dtype.h: the three storage types every stage supports, and their host-side rounding.
 *
 * Inputs are drawn as floats, rounded to the storage type on the host, and the rounded values
 * feed both the GPU and the CPU reference: the reference then differs from the GPU only by
 * accumulation order and output rounding, which the per-dtype tolerance covers.
 */
#ifndef DTYPE_H
#define DTYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DTYPE_BF16, DTYPE_FP16, DTYPE_FP32 } dtype_t;

const char *dtype_name(dtype_t t);
/* Parses "bf16" | "fp16" | "fp32"; returns 0, or -1 for anything else. */
int dtype_parse(const char *s, dtype_t *out);
size_t dtype_size(dtype_t t);
/* Relative Frobenius error a correct result stays under (fp32 accumulation in all cases). */
double dtype_tolerance(dtype_t t);

/* Round-to-nearest-even conversions, the same rounding the GPU's conversions use. */
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t h);
uint16_t float_to_fp16(float f);
float fp16_to_float(uint16_t h);

/* Rounds n floats to type t in place (so the host copy holds exactly what the GPU sees) and
 * writes their storage bits to `dst` (n * dtype_size(t) bytes). */
void dtype_round_and_pack(dtype_t t, float *values, void *dst, size_t n);
/* Storage bits back to float, for reading GPU results. */
void dtype_unpack(dtype_t t, const void *src, float *dst, size_t n);

#ifdef __cplusplus
}
#endif

#endif
