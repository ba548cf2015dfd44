/* check.h: error checks that name the failing call, its file and line, then exit.
 *
 *   CUDA_CHECK(cudaMalloc(&p, bytes));
 *   CUBLAS_CHECK(cublasGemmEx(...));
 *   CUPTI_CHECK(cuptiActivityFlushAll(0));
 *   LAUNCH_CHECK();                       after a kernel launch: catches bad launch configs
 *
 * Exit codes used by every program here: 0 ok, 1 bad input or failed check, 2 waived (no usable
 * GPU, or a tool we need is missing), 3 a CUDA / library error at run time.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "program.h"

enum { EXIT_BAD_INPUT = 1, EXIT_WAIVED = 2, EXIT_CUDA_ERROR = 3 };

#define CUDA_CHECK(call)                                                                  \
    do {                                                                                  \
        cudaError_t err_ = (call);                                                        \
        if (err_ != cudaSuccess) {                                                        \
            program_error("%s failed at %s:%d: %s (%s)", #call, __FILE__, __LINE__,         \
                          cudaGetErrorString(err_), cudaGetErrorName(err_));              \
            exit(err_ == cudaErrorMemoryAllocation ? EXIT_BAD_INPUT : EXIT_CUDA_ERROR);   \
        }                                                                                 \
    } while (0)

#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

#define CUBLAS_CHECK(call)                                                                \
    do {                                                                                  \
        cublasStatus_t st_ = (call);                                                      \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                               \
            program_error("%s failed at %s:%d: %s", #call, __FILE__, __LINE__,              \
                          cublasGetStatusString(st_));                                    \
            exit(EXIT_CUDA_ERROR);                                                        \
        }                                                                                 \
    } while (0)

/* cuBLASLt returns the same cublasStatus_t as cuBLAS. */
#define CUBLASLT_CHECK(call) CUBLAS_CHECK(call)

#endif
