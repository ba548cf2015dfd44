#include "program.h"
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Measured on each GPU model (docs/01_matmul_add.md, "Ceilings"; bin/ceilings measures yours):
 * an 8192^3 bf16 GEMM through cuBLAS on random data, and a large device-to-device copy. */
static const struct {
    const char *name;
    double gemm_tflops_16bit, copy_gbps;
} measured[] = {
    {"NVIDIA H200", 798.0, 4250.0},
};

void gpu_require(gpu_info *g, const char *program)
{
    memset(g, 0, sizeof *g);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        cudaDriverGetVersion(&g->driver_version);
        cudaRuntimeGetVersion(&g->runtime_version);
        char found[160];
        if (g->driver_version == 0)
            snprintf(found, sizeof found, "no NVIDIA driver");
        else if (err == cudaErrorInsufficientDriver)
            snprintf(found, sizeof found, "a driver for CUDA %d.%d, older than this build's CUDA %d.%d",
                     g->driver_version / 1000, g->driver_version % 1000 / 10,
                     g->runtime_version / 1000, g->runtime_version % 1000 / 10);
        else
            snprintf(found, sizeof found, "%s", err != cudaSuccess ? cudaGetErrorString(err) : "no device");
        printf("%s: waived: a CUDA GPU is required; found %s\n", program, found);
        exit(EXIT_WAIVED);
    }
    CUDA_CHECK(cudaGetDevice(&g->device));
    CUDA_CHECK(cudaGetDeviceProperties(&g->prop, g->device));
    CUDA_CHECK(cudaDriverGetVersion(&g->driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&g->runtime_version));
    for (size_t i = 0; i < sizeof measured / sizeof measured[0]; i++) {
        if (strcmp(g->prop.name, measured[i].name) == 0) {
            g->gemm_tflops_16bit = measured[i].gemm_tflops_16bit;
            g->copy_gbps = measured[i].copy_gbps;
        }
    }
}

void gpu_print(const gpu_info *g)
{
    printf("device: %s (sm_%d%d, %d SMs, %.0f GB), driver %d.%d, runtime %d.%d\n", g->prop.name,
           g->prop.major, g->prop.minor, g->prop.multiProcessorCount,
           (double)g->prop.totalGlobalMem / 1e9, g->driver_version / 1000,
           (g->driver_version % 1000) / 10, g->runtime_version / 1000,
           (g->runtime_version % 1000) / 10);
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
