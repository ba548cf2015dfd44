/* GPU test of common/dump.h: a device array comes back from its .npy file bit for bit, for each
 * dtype, after work queued on a non-blocking stream (which dump must wait for); bad input gives
 * -1 and one line. SKIP without a GPU. */
#include <stdint.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "dump.h"
#include "files.h"
#include "harness.h"
#include "npy.h"

static char dir[] = "/tmp/gpu_dump_XXXXXX";

static int test_round_trip(void)
{
    const dtype_t types[3] = {DTYPE_BF16, DTYPE_FP16, DTYPE_FP32};
    const size_t shape[2] = {33, 65};
    for (int t = 0; t < 3; t++) {
        size_t bytes;
        EXPECT(npy_nbytes(types[t], shape, 2, &bytes) == 0, "nbytes");
        unsigned char *host = malloc(bytes);
        EXPECT(host != NULL, "alloc");
        for (size_t i = 0; i < bytes; i++) host[i] = (unsigned char)(i * 131u + 7u);
        void *dev;
        cudaStream_t s;
        EXPECT(cudaMalloc(&dev, bytes) == cudaSuccess, "cudaMalloc");
        EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "stream");
        EXPECT(cudaMemsetAsync(dev, 0, bytes, s) == cudaSuccess, "memset");
        /* Queued last on the non-blocking stream: only a dump that waits for it sees these bits. */
        EXPECT(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s) == cudaSuccess, "copy");
        int rc = dump_device_array(dir, "y", types[t], shape, 2, dev);
        char path[128], descr[16];
        snprintf(path, sizeof path, "%s/y.npy", dir);
        size_t got_shape[NPY_MAX_NDIM], got_bytes = 0;
        int ndim = 0;
        void *got = NULL;
        if (rc == 0) rc = npy_read(path, descr, sizeof descr, got_shape, &ndim, &got, &got_bytes);
        int same = rc == 0 && got_bytes == bytes && memcmp(got, host, bytes) == 0;
        free(got);
        free(host);
        cudaFree(dev);
        cudaStreamDestroy(s);
        EXPECT(rc == 0, "%s: dump then read", dtype_name(types[t]));
        EXPECT(strcmp(descr, npy_descr(types[t])) == 0, "descr %s", descr);
        EXPECT(ndim == 2 && got_shape[0] == 33 && got_shape[1] == 65, "shape");
        EXPECT(same, "%s: the device's bits, after the stream's work", dtype_name(types[t]));
    }
    return 0;
}

static int test_bad_input(void)
{
    void *dev;
    EXPECT(cudaMalloc(&dev, 64) == cudaSuccess, "cudaMalloc");
    char file[128], below[160];
    snprintf(file, sizeof file, "%s/a_file", dir);
    FILE *f = fopen(file, "w");
    EXPECT(f != NULL && fclose(f) == 0, "setup");
    snprintf(below, sizeof below, "%s/sub", file);
    const size_t shape[1] = {16};
    int rc = dump_device_array(below, "x", DTYPE_FP32, shape, 1, dev); /* its parent is a file */
    const size_t huge[2] = {SIZE_MAX / 2, 4};
    int rc2 = dump_device_array(dir, "x", DTYPE_FP32, huge, 2, dev);
    cudaFree(dev);
    EXPECT(rc == -1, "a directory that cannot be made: -1");
    EXPECT(rc2 == -1, "an overflowing shape: -1");
    return 0;
}

int main(void)
{
    if (harness_no_gpu()) {
        printf("SKIP gpu_dump: %s\n", harness_no_gpu());
        return 0;
    }
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    TEST_RUN(test_round_trip);
    TEST_RUN(test_bad_input);
    if (remove_tree(dir) != 0) printf("note: could not remove %s\n", dir);
    TEST_EXIT();
}
