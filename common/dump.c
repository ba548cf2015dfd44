#include "program.h"
#include "dump.h"

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "npy.h"
#include "out.h"

int dump_device_array(const char *dir, const char *name, dtype_t t, const size_t *shape, int ndim,
                      const void *dev)
{
    char path[1024];
    size_t bytes;
    if (snprintf(path, sizeof path, "%s/%s.npy", dir, name) >= (int)sizeof path) {
        program_error("dump of %s: path too long", name);
        return -1;
    }
    if (npy_nbytes(t, shape, ndim, &bytes) != 0) {
        program_error("dump of %s: %d dimensions or their product is out of range", name, ndim);
        return -1;
    }
    if (out_mkdirs(dir) != 0) return -1;
    void *host = malloc(bytes ? bytes : 1);
    if (!host) {
        program_error("dump of %s: out of host memory for %zu bytes", name, bytes);
        return -1;
    }
    cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaSuccess && bytes) err = cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) {
        program_error("dump of %s: copying %zu bytes from the device failed: %s", name, bytes,
                cudaGetErrorString(err));
        free(host);
        return -1;
    }
    int rc = npy_write(path, t, shape, ndim, host);
    free(host);
    return rc;
}
