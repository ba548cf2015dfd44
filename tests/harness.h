/* harness.h: the smallest test harness that does the job.
 *
 * Each test is a function returning 0 (pass) or non-zero (fail); TEST_RUN prints one line per
 * test, "PASS name", "FAIL name: why" or "SKIP name: why", and tests/run_tests.sh counts them.
 * A test binary exits non-zero when any of its tests failed, so a crash also counts as failure.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

static int harness_failed;
static const char *harness_skip_reason;

/* Inside a test: fail with a message naming the file and line. */
#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            printf("  %s:%d: expected %s: ", __FILE__, __LINE__, #cond);           \
            printf(__VA_ARGS__);                                                   \
            printf("\n");                                                          \
            return 1;                                                              \
        }                                                                          \
    } while (0)

/* Inside a test: report SKIP with a reason (e.g. no GPU) instead of PASS. */
#define SKIP(reason)                                                               \
    do {                                                                           \
        harness_skip_reason = (reason);                                            \
        return 0;                                                                  \
    } while (0)

#define TEST_RUN(fn)                                                               \
    do {                                                                           \
        harness_skip_reason = NULL;                                                \
        fflush(stdout);                                                            \
        int rc_ = fn();                                                            \
        if (rc_ != 0) {                                                            \
            printf("FAIL %s\n", #fn);                                              \
            harness_failed = 1;                                                    \
        } else if (harness_skip_reason) {                                          \
            printf("SKIP %s: %s\n", #fn, harness_skip_reason);                     \
        } else {                                                                   \
            printf("PASS %s\n", #fn);                                              \
        }                                                                          \
        fflush(stdout);                                                            \
    } while (0)

#define TEST_EXIT() return harness_failed ? 1 : 0

/* A GPU test's reason to SKIP, or NULL when a CUDA GPU is usable here. The reason says what was
 * found, not what the runtime's error string guesses: without libcuda the runtime reports
 * cudaErrorInsufficientDriver ("CUDA driver version is insufficient"), which is not true of a
 * machine that has no driver at all. So: no CUDA driver when libcuda.so.1 cannot be loaded or the
 * runtime finds no driver version; no GPU when the driver reports no device; a driver older than
 * this build when it reports an older CUDA version; else the runtime's own error. */
static inline const char *harness_no_gpu(void)
{
    static int known;
    static char reason[224];
    if (known) return reason[0] ? reason : NULL;
    known = 1;
    int count = 0, driver = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count > 0) return NULL;
    void *libcuda = dlopen("libcuda.so.1", RTLD_LAZY);
    if (libcuda) dlclose(libcuda);
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (!libcuda)
        snprintf(reason, sizeof reason, "no CUDA driver (libcuda.so.1 cannot be loaded)");
    else if (driver == 0)
        snprintf(reason, sizeof reason, "no CUDA driver (libcuda.so.1 loads, but reports no CUDA version)");
    else if (err == cudaSuccess || err == cudaErrorNoDevice)
        snprintf(reason, sizeof reason, "no GPU (the CUDA driver, for CUDA %d.%d, reports no device)", driver / 1000,
                 driver % 1000 / 10);
    else if (err == cudaErrorInsufficientDriver)
        snprintf(reason, sizeof reason, "the CUDA driver supports CUDA %d.%d, this build needs CUDA %d.%d", driver / 1000,
                 driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    else
        snprintf(reason, sizeof reason, "no usable GPU: %s (%s)", cudaGetErrorName(err), cudaGetErrorString(err));
    return reason;
}

#endif
