/* npy.h: arrays as NumPy .npy files, so that NumPy and PyTorch load what a stage computed.
 *
 *   size_t shape[2] = {rows, cols};
 *   npy_write("traces/01_matmul_add/dump/y.npy", DTYPE_BF16, shape, 2, host_bits);
 *
 * The file is format version 1.0: the magic "\x93NUMPY", the version bytes 1 0, a little-endian
 * uint16 header length, then an ASCII Python dict followed by spaces and one '\n', sized so that
 * the data starts at a multiple of 64 bytes; then the data, row-major (C order):
 *
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (64, 64), }
 *
 * dtype codes: fp32 '<f4' and fp16 '<f2' are NumPy's own. NumPy has no bfloat16, so bf16 is
 * stored as its raw 16 bits with the code '<u2' (unsigned 16-bit): the bits are exact, and
 * PyTorch gets the values back with
 *
 *   torch.from_numpy(numpy.load("y.npy")).view(torch.bfloat16)
 *
 * (in NumPy alone: (a.astype(numpy.uint32) << 16).view(numpy.float32)). The data is written in
 * the host's byte order, which is little-endian on every machine CUDA runs on.
 *
 * Pure C11, no CUDA: the CPU tests link it. common/dump.h copies device arrays into it.
 */
#ifndef NPY_H
#define NPY_H

#include <stddef.h>

#include "dtype.h"

/* The most dimensions npy_write takes and npy_read returns. */
#define NPY_MAX_NDIM 8

/* The descr code of a storage type: "<u2" (bf16 bits), "<f2" or "<f4". */
const char *npy_descr(dtype_t t);

/* Bytes of an array of `ndim` dimensions (0 <= ndim <= NPY_MAX_NDIM; ndim 0 is one element).
 * Returns 0, or -1 when ndim is out of range or the product overflows size_t. */
int npy_nbytes(dtype_t t, const size_t *shape, int ndim, size_t *bytes);

/* Writes data (the storage bits of prod(shape) elements of type t, row-major) to path, under a
 * temporary name renamed into place when complete (common/out.h). The directory must exist.
 * Returns 0, or -1 after printing one line naming the file and the reason. */
int npy_write(const char *path, dtype_t t, const size_t *shape, int ndim, const void *data);

/* Reads a version 1.0 or 2.0 .npy file in C order with a little-endian (or byte-sized) dtype.
 * descr receives the dtype code (e.g. "<u2"), shape (NPY_MAX_NDIM entries) and ndim the shape,
 * *data a malloc'ed copy of the data (free it) and *bytes its size. Returns 0, or -1 after
 * printing one line naming the file and what is wrong with it. */
int npy_read(const char *path, char *descr, size_t descr_len, size_t *shape, int *ndim, void **data,
             size_t *bytes);

#endif
