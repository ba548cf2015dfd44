// async_copy.cuh (04_fused_mlp): cp.async, the sm_80 copy from global to shared memory that
// needs no registers on the way: a thread issues its 16-byte copies, goes on, and waits for them
// by group. Used by the mma.sync GEMM's ring (gemm_geglu.cu) and the decode down kernel's
// staging (kernels.cu).
#ifndef ASYNC_COPY_CUH
#define ASYNC_COPY_CUH

#include <stdint.h>

// 16 bytes global -> shared (address in the shared window), bypassing L1; src_bytes = 0 writes
// 16 zero bytes instead.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

#endif
