#include "program.h"
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ceilings.h"
#include "check.h"

void gpu_require(gpu_info *g, const char *program)
{
    memset(g, 0, sizeof *g);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        cudaDriverGetVersion(&g->driver_version);
        cudaRuntimeGetVersion(&g->runtime_version);
        if (g->driver_version != 0 && err == cudaErrorInsufficientDriver) {
            /* The driver is older than the toolkit this program was compiled with. A CUDA 12
             * driver runs the build of any CUDA 12 toolkit (minor version compatibility), and 12.4
             * is the oldest this code builds with; an older driver can only be updated. */
            const int have = g->driver_version, need = CUDART_VERSION;
            const int major = have / 1000, minor = major == 12 && have % 1000 < 40 ? 4 : have % 1000 / 10;
            char rebuild[96] = "";
            if (major >= 12)
                snprintf(rebuild, sizeof rebuild, ", or rebuild: make clean && make CUDA_HOME=/usr/local/cuda-%d.%d",
                         major, minor);
            printf("%s: waived: the driver supports CUDA %d.%d, this build needs CUDA %d.%d; update the driver%s\n",
                   program, major, have % 1000 / 10, need / 1000, need % 1000 / 10, rebuild);
            exit(EXIT_WAIVED);
        }
        char found[160];
        if (g->driver_version == 0)
            snprintf(found, sizeof found, "no NVIDIA driver");
        else
            snprintf(found, sizeof found, "%s", err != cudaSuccess ? cudaGetErrorString(err) : "no device");
        printf("%s: waived: a CUDA GPU is required; found %s\n", program, found);
        exit(EXIT_WAIVED);
    }
    CUDA_CHECK(cudaGetDevice(&g->device));
    CUDA_CHECK(cudaGetDeviceProperties(&g->prop, g->device));
    CUDA_CHECK(cudaDriverGetVersion(&g->driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&g->runtime_version));
    ceilings_t c;
    ceilings_for(&c, g->prop.name, g->driver_version);
    g->gemm_tflops_16bit = c.gemm_tflops_16bit;
    g->copy_gbps = c.copy_gbps;
    snprintf(g->ceilings_source, sizeof g->ceilings_source, "%s", c.source);
    g->ceilings_measured = c.measured;
}

void gpu_print(const gpu_info *g)
{
    printf("device: %s (sm_%d%d, %d SMs, %.0f GB), driver %d.%d, runtime %d.%d\n", g->prop.name,
           g->prop.major, g->prop.minor, g->prop.multiProcessorCount,
           (double)g->prop.totalGlobalMem / 1e9, g->driver_version / 1000,
           (g->driver_version % 1000) / 10, g->runtime_version / 1000,
           (g->runtime_version % 1000) / 10);
    if (g->gemm_tflops_16bit > 0)
        printf("ceilings: %.0f TFLOP/s dense 16-bit GEMM, %.0f GB/s device copy: %s\n", g->gemm_tflops_16bit,
               g->copy_gbps, g->ceilings_source);
    else
        printf("ceilings: %s; no percentages of ceiling in this report\n", g->ceilings_source);
}

void gpu_require_fits(size_t bytes, const char *what)
{
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    /* keep a margin for cuBLAS workspaces and the CUDA context's own allocations */
    if (bytes > free_b / 100 * 95) {
        program_error("%s needs %.2f GB of device memory, %.2f GB free of %.2f GB",
                what, (double)bytes / 1e9, (double)free_b / 1e9, (double)total_b / 1e9);
        exit(EXIT_BAD_INPUT);
    }
}

double gpu_gemm_ceiling(const gpu_info *g, dtype_t t)
{
    return t == DTYPE_FP32 ? 0.0 : g->gemm_tflops_16bit;
}

int gpu_compute_capability(void)
{
    /* Asked by launchers on every call; our programs use one device, so ask the driver once. */
    static int known = -1;
    if (known >= 0) return known;
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        return 0;
    known = major * 10 + minor;
    return known;
}

int gpu_multiprocessors(void)
{
    static int known = -1;
    if (known >= 0) return known;
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return 1;
    known = sms;
    return known;
}
