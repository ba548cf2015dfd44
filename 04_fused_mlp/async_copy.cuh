// async_copy.cuh (04_fused_mlp): copies from global to shared memory that hold no registers on
// the way, and the barriers that count them.
//   cp.async (sm_80): a thread issues 16-byte copies, goes on, and waits for them by group; the
//     mma.sync GEMM's ring (gemm_geglu.cu)
//   bulk copies and mbarriers (sm_90): one thread hands the copy engine a whole run of bytes,
//     whose arrival is counted on an mbarrier in shared memory that any thread can wait on; the
//     wgmma GEMM's TMA ring (gemm_geglu.cu) and the decode down kernel's staging (kernels.cu)
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

// mbarriers (addresses in the shared window; sm_90 for the byte counts and try_wait).
__device__ __forceinline__ void mbar_init(uint32_t bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, int bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase with this parity has completed. A fresh barrier is in phase 0, and the
// phase "before" it (parity 1) counts as completed: a first wait for parity 1 passes at once.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
}
// bytes (a multiple of 16, both addresses 16-byte aligned) from src into shared memory at dst,
// counted on bar.
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
#endif

#endif
