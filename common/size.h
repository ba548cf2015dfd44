/* size.h: allocation-size arithmetic that refuses to wrap around.
 *
 *   size_t bytes = size_mul(size_mul(rows, cols, "rows x cols"), dtype_size(t), "the matrix");
 */
#ifndef SIZE_H
#define SIZE_H

#include <stddef.h>

/* a * b, or exit 1 with "<program>: error: <what> overflows (a x b)" when it does not fit. */
size_t size_mul(size_t a, size_t b, const char *what);
/* a * b into *out and 0, or -1 when the product does not fit (for checks that report it). */
int size_mul_ok(size_t a, size_t b, size_t *out);

#endif
