/* gpu.h: finding the GPU, saying what it is, and refusing work it cannot hold. */
#ifndef GPU_H
#define GPU_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int device;
    struct cudaDeviceProp prop;
    int driver_version, runtime_version;
    /* Ceilings of this GPU (common/ceilings.h; 0 when none is known):
     * dense GEMM TFLOP/s for bf16/fp16 operands, and device-to-device copy GB/s counting bytes
     * read plus written. */
    double gemm_tflops_16bit, copy_gbps;
    char ceilings_source[160]; /* where they come from (common/ceilings.h) */
    int ceilings_measured;     /* 1: measured on this machine; 0: reference figures of its model */
} gpu_info;

/* Exits 2 ("waived") with one line naming what was found when no usable CUDA GPU exists. */
void gpu_require(gpu_info *g, const char *program);
/* "device: NVIDIA H200 (sm_90, 132 SMs, 141 GB), driver 13.0, runtime 13.0" */
void gpu_print(const gpu_info *g);
/* Exits 1 with the bytes needed and free when `bytes` of new allocations cannot fit. */
void gpu_require_fits(size_t bytes, const char *what);
/* Dense GEMM ceiling for this dtype in TFLOP/s, or 0 when not measured. */
double gpu_gemm_ceiling(const gpu_info *g, dtype_t t);
/* The device's compute capability as 10 * major + minor (90 for an H100/H200), 0 when there is
 * no usable device: what a launcher asks before picking a code path. Read once per process. */
int gpu_compute_capability(void);
/* The device's multiprocessors (132 on an H200), for launchers that size persistent grids; 1
 * when there is no usable device. Read once per process. */
int gpu_multiprocessors(void);

#ifdef __cplusplus
}
#endif

#endif
