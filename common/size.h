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

/* The most device memory a program here asks for before the GPU is looked for: 4 TiB, far more
 * than any GPU holds (the largest hold under 300 GB). A shape beyond it is refused on the host,
 * with no GPU needed; below it, the GPU's own free memory decides (gpu_require_fits). */
#define SIZE_DEVICE_MAX ((double)((size_t)1 << 42))
/* 0 when `bytes` of device memory are at most SIZE_DEVICE_MAX; else 1, with "<what> need N GB of
 * device memory, more than any GPU holds" in why. bytes is a double, computed in double by the
 * caller, so that a shape whose size would overflow size_t gets the same line. */
int size_device_check(double bytes, const char *what, char *why, size_t len);

#endif
