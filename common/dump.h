/* dump.h: a device array written as a NumPy .npy file (common/npy.h), for --dump DIR.
 *
 *   size_t shape[2] = {n, n};
 *   if (dump_device_array(args.dump_dir, "y", DTYPE_BF16, shape, 2, m->y) != 0) exit(1);
 *
 * writes DIR/y.npy (bf16 as raw bits with the code '<u2': see npy.h for how NumPy and PyTorch
 * read it back). The compare scripts (compare/, with --load DIR) feed the same tensors to PyTorch.
 */
#ifndef DUMP_H
#define DUMP_H

#include <stddef.h>

#include "dtype.h"

/* Creates dir if needed, waits for all work on the device (stages issue on non-blocking
 * streams, which a plain cudaMemcpy does not wait for), copies prod(shape) elements of type t
 * from the device pointer `dev` and writes them to dir/<name>.npy, where name has no extension.
 * Returns 0, or -1 after printing one line naming the array and the reason. */
int dump_device_array(const char *dir, const char *name, dtype_t t, const size_t *shape, int ndim,
                      const void *dev);

/* An array --dump writes as <dir>/<name>.npy: a stage lists its inputs, weights and output. */
typedef struct {
    char name[32];
    const void *dev;
    int ndim;
    size_t shape[3];
} dump_array;

#endif
