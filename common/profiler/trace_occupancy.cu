// trace_occupancy.cu: the blocks of one kernel an SM can hold, from CUDA's occupancy calculator
// (cuda_occupancy.h, host code only), for the trace's "est. achieved occupancy %".
//
// Fed as torch.profiler's Kineto feeds it, so that our estimate equals PyTorch's for the same
// kernel: the kernel's registers and static shared memory, its dynamic shared memory as the
// launch's, the default shared-memory limit (no opt-in: a kernel that opted in to more than
// 48 KB per block gets 0 blocks, hence the 0 % PyTorch shows for cuBLAS's nvjet kernels), and
// the device's default state.
#include <cuda_occupancy.h>
#include <cuda_runtime.h>

#include <climits>

#include "trace_occupancy.h"

enum { MAX_DEVICES = 64 };

extern "C" int trace_occupancy_blocks_per_sm(int device, int registers_per_thread,
                                             int static_shared, int dynamic_shared,
                                             int block_threads)
{
    // Called on one thread, at the end of the recording window.
    static cudaOccDeviceProp props[MAX_DEVICES];
    static bool known[MAX_DEVICES];
    if (device < 0 || device >= MAX_DEVICES)
        return -1;
    if (!known[device]) {
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, device) != cudaSuccess)
            return -1;
        props[device] = p;
        known[device] = true;
    }
    cudaOccFuncAttributes attributes;
    attributes.maxThreadsPerBlock = INT_MAX;
    attributes.numRegs = registers_per_thread;
    attributes.sharedSizeBytes = (size_t)static_shared;
    attributes.partitionedGCConfig = PARTITIONED_GC_OFF;
    attributes.shmemLimitConfig = FUNC_SHMEM_LIMIT_DEFAULT;
    attributes.maxDynamicSharedSizeBytes = 0;
    const cudaOccDeviceState state;
    cudaOccResult result;
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &props[device], &attributes, &state,
                                                block_threads, (size_t)dynamic_shared) !=
        CUDA_OCC_SUCCESS)
        return -1;
    return result.activeBlocksPerMultiprocessor;
}
