// ptx.cuh (04_fused_mlp/gemm): the GPU instructions the GEMM steps and the decode kernels use,
// each wrapped once, with what it does and what it requires.
//
//   sm_80   cp.async (16-byte copies into shared memory), ldmatrix, mma.sync m16n8k16
//   sm_90   mbarrier waits by parity, TMA (cp.async.bulk.tensor) loads and stores, proxy fences,
//           clusters (ranks, barriers, other blocks' shared memory and mbarriers, multicast
//           loads)
//   sm_90a  wgmma (warpgroup MMA from shared memory); only in code built for sm_90a
//
// Plus what every epilogue needs: two fp32 values rounded and packed into one 32-bit word, a
// pair of columns stored with the tails handled, and the shared-memory swizzles.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda.h> // CUtensorMap (a type only: the program does not link the driver API)

#include <stdint.h>

#include <type_traits>

// ---- pairs of results ----------------------------------------------------------------------

// Two fp32 values rounded to T and packed into one 32-bit word, the first in the low half.
template <typename T> __device__ __forceinline__ uint32_t pack_pair(float v0, float v1)
{
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        const __nv_bfloat162 p = __floats2bfloat162_rn(v0, v1);
        return *(const uint32_t *)&p;
    } else {
        const __half2 p = __floats2half2_rn(v0, v1);
        return *(const uint32_t *)&p;
    }
}

// Columns col and col + 1 of a row of an [., N] matrix: one 4-byte store when the pair is whole
// and 4-byte aligned (pairs: N even), else what lies inside N, one element at a time.
template <typename T> __device__ __forceinline__ void store_pair(T *out, int col, int N, bool pairs, float v0, float v1)
{
    if (pairs && col + 1 < N) {
        *(uint32_t *)out = pack_pair<T>(v0, v1);
    } else {
        if (col < N) out[0] = T(v0);
        if (col + 1 < N) out[1] = T(v1);
    }
}

// ---- shared-memory swizzles ----------------------------------------------------------------
// A tile row is a few 16-byte chunks; the tensor cores' loads read one chunk from each of 8
// consecutive rows. Stored plainly, those 8 chunks fall into the same banks; stored at chunk
// c ^ f(r) they land in 8 different 16-byte bank groups.

// Rows of 64 bytes (32 elements, 4 chunks): rows r and r + 2 are 128 bytes apart, one bank period,
// so the chunk moves by (r / 2) % 4.
__device__ __forceinline__ uint32_t swizzle_64B(int r, int c)
{
    return (uint32_t)(r * 64 + ((c ^ ((r >> 1) & 3)) * 16));
}

// Rows of 128 bytes (64 elements, 8 chunks): the chunk moves by r % 8. This is the layout TMA
// writes with CU_TENSOR_MAP_SWIZZLE_128B and that wgmma reads with swizzle mode 1, in tiles
// aligned to 1024 bytes.
__device__ __forceinline__ uint32_t swizzle_128B(int r, int c)
{
    return (uint32_t)(r * 128 + ((c ^ (r % 8)) * 16));
}

// ---- sm_80: cp.async, ldmatrix, mma.sync ---------------------------------------------------

// 16-byte global -> shared copy that bypasses L1; src_bytes = 0 writes 16 zero bytes instead.
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

// Four 8x8 matrices of 16-bit elements; lane i gives the address of row i % 8 of matrix i / 8.
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// c += a (16 x 16, row-major) * b (16 x 8, given as 8 rows of K: b0 the low 8 of K, b1 the
// high 8), fp32 accumulation.
template <typename T> __device__ __forceinline__ void mma_16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- fences and barriers -------------------------------------------------------------------

// Shared memory written by ordinary stores (or cp.async) becomes visible to the async proxy:
// the tensor cores' wgmma reads and the TMA engine's stores. Each writing thread, before the
// barrier that hands the data over.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// A barrier among `threads` threads of the block (a multiple of 32) on hardware barrier `id`
// (1..15; __syncthreads uses 0): lets one warpgroup synchronise without the others.
__device__ __forceinline__ void named_barrier_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// ---- sm_90: mbarriers ----------------------------------------------------------------------
// An mbarrier (8 bytes of shared memory) completes a phase when `count` arrivals and every byte
// announced by expect_tx have come in, then starts the next phase; a waiter names the phase by
// its parity.

__device__ __forceinline__ void mbar_init(uint32_t bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// After the initialising thread's inits: makes them visible to the async proxy (the TMA engine).
__device__ __forceinline__ void fence_mbarrier_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival, and `bytes` more for the current phase to wait for (a TMA's transfer count).
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, int bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase with this parity has completed. A fresh barrier is in phase 0, and the
// phase "before" it (parity 1) counts as completed: a producer's first wait on an empty slot
// passes at once.
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

// ---- sm_90: TMA (the tensor memory accelerator) --------------------------------------------

// The box of `map` at (k, row) into shared memory at dst; completion counted in bytes on bar.
// Parts of the box past the matrix arrive as zeros and still count.
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap *map, int k, int row, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(dst), "l"((uint64_t)map), "r"(k), "r"(row), "r"(bar)
                 : "memory");
}
// The box of `map` at (col, row) from shared memory at src, in this thread's bulk-async group;
// the engine clips what lies past the matrix.
__device__ __forceinline__ void tma_store(const CUtensorMap *map, uint32_t src, int col, int row)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"((uint64_t)map), "r"(col), "r"(row), "r"(src)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Until this thread's stores have read their shared memory (it may be written again).
__device__ __forceinline__ void bulk_wait_read_all() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// Until this thread's stores are complete (before the block exits).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

// ---- sm_90: thread block clusters ----------------------------------------------------------
// A cluster is a few blocks that the GPU starts together on SMs of one GPC (a launch attribute
// sets its size); they can write into each other's shared memory (TMA multicast) and arrive on
// each other's mbarriers. A block's cluster and its rank in it, as the hardware numbers them:
__device__ __forceinline__ uint32_t cluster_rank()
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ uint32_t cluster_index()
{
    uint32_t c;
    asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(c));
    return c;
}
__device__ __forceinline__ uint32_t cluster_count()
{
    uint32_t n;
    asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(n));
    return n;
}
// How many blocks the cluster has (1 when the launch asked for no clusters).
__device__ __forceinline__ uint32_t cluster_size()
{
    uint32_t n;
    asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
    return n;
}
// The cluster barrier in its two halves. Every thread of every block arrives, and a thread's
// wait returns once all have arrived; what a thread wrote before its arrival (into another
// block's shared memory too) is visible to every thread whose wait has returned. A thread
// alternates: arrive, wait, arrive, wait. Between the two it may work on.
__device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
// An arrival that orders nothing: enough to say that this block has started.
__device__ __forceinline__ void cluster_arrive_relaxed()
{
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// Every thread of every block of the cluster meets here; what they wrote before (barrier inits
// included) is visible to all of them after.
__device__ __forceinline__ void cluster_sync()
{
    cluster_arrive();
    cluster_wait();
}
// The address of the same shared-memory location in block `rank` of this cluster.
__device__ __forceinline__ uint32_t peer_shared(uint32_t addr, uint32_t rank)
{
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
// A 32-bit store into another block's shared memory (an address from peer_shared).
__device__ __forceinline__ void store_peer(uint32_t addr, float v)
{
    asm volatile("st.shared::cluster.f32 [%0], %1;\n" ::"r"(addr), "f"(v) : "memory");
}
// One arrival on another block's mbarrier (an address from peer_shared). It orders nothing but
// this thread's own earlier work (as mbar_arrive does): enough to hand back a stage whose
// wgmmas have retired. A .cluster-scoped release would add a GPU-wide fence to every arrival.
__device__ __forceinline__ void mbar_arrive_peer(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// tma_load into every block of `blocks` (a bit per rank): the box lands at the same offset dst
// of each one's shared memory, and each one's mbarrier at offset bar counts its bytes. One read
// of L2, as many copies as bits.
__device__ __forceinline__ void tma_load_multicast(uint32_t dst, const CUtensorMap *map, int k, int row, uint32_t bar,
                                                   uint16_t blocks)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n"
                 ::"r"(dst), "l"((uint64_t)map), "r"(k), "r"(row), "r"(bar), "h"(blocks)
                 : "memory");
}

// ---- sm_90a: wgmma -------------------------------------------------------------------------

// Shared-memory matrix descriptor for a K-major tile with the 128-byte swizzle: start address,
// leading-dimension offset (unused with this swizzle: 1), stride between 8-row groups (1024 B),
// swizzle mode 1 in bits 62-63. Adding 2 advances the start by 32 bytes: 16 elements of K.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

// The compiler must neither read nor move the accumulators while wgmma owns them.
template <int R> __device__ __forceinline__ void fence_acc(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i])::"memory");
}

// Before a warpgroup's first wgmma that reads registers written since (the accumulators).
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Closes the group of wgmmas issued since the last commit.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Until at most N committed groups of this warpgroup are still running.
template <int N> __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// wgmma's accumulators are R = N / 2 fp32 registers a thread, the asm's operands 0 .. R - 1 (read
// and written); the descriptors of A and B are operands R and R + 1, and operand R + 2 sets
// scale-d (1: d += A B). The operand lists, 8 accumulators at a time:
#define WGMMA_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), \
                    "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define WGMMA_D16(i) WGMMA_D8(i), WGMMA_D8(i + 8)
#define WGMMA_D32(i) WGMMA_D16(i), WGMMA_D16(i + 16)
#define WGMMA_D64(i) WGMMA_D32(i), WGMMA_D32(i + 32)
// and their references in the instruction, "{%0, %1, ..., %<R - 1>}, ": ten at a time (t: the
// tens; R10 ends in a comma, the others end the list), then the last two to ten.
#define WGMMA_R2(t) "%" #t "0, %" #t "1"
#define WGMMA_R4(t) WGMMA_R2(t) ", %" #t "2, %" #t "3"
#define WGMMA_R6(t) WGMMA_R4(t) ", %" #t "4, %" #t "5"
#define WGMMA_R8(t) WGMMA_R6(t) ", %" #t "6, %" #t "7"
#define WGMMA_R10_END(t) WGMMA_R8(t) ", %" #t "8, %" #t "9"
#define WGMMA_R10(t) WGMMA_R10_END(t) ", "
#define WGMMA_R30 WGMMA_R10() WGMMA_R10(1) WGMMA_R10(2)
#define WGMMA_R60 WGMMA_R30 WGMMA_R10(3) WGMMA_R10(4) WGMMA_R10(5)
#define WGMMA_R90 WGMMA_R60 WGMMA_R10(6) WGMMA_R10(7) WGMMA_R10(8)
// One wgmma.mma_async m64<n>k16 with fp32 accumulators and <ab> operands (bf16 or f16); the
// accumulators' operand list last.
#define WGMMA_MMA_ASYNC(n, ab, regs, desc_a, desc_b, scale_d, ...)                          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #scale_d ", 0;\n"                     \
                 "wgmma.mma_async.sync.aligned.m64" #n "k16.f32." #ab "." #ab " {" regs "}, " \
                 "%" #desc_a ", %" #desc_b ", p, 1, 1, 0, 0;\n}\n"                           \
                 : __VA_ARGS__                                                              \
                 : "l"(a), "l"(b), "r"(1))
// Both operand types of one shape: R accumulators, n = 2 R, descriptors at operands R, R + 1.
#define WGMMA_SHAPE(n, regs, desc_a, desc_b, scale_d, ...)                                    \
    if constexpr (bf16) WGMMA_MMA_ASYNC(n, bf16, regs, desc_a, desc_b, scale_d, __VA_ARGS__); \
    else WGMMA_MMA_ASYNC(n, f16, regs, desc_a, desc_b, scale_d, __VA_ARGS__)

// d[64 x N] += A[64 x 16] * B[N x 16]^T for N = 2R (64 to 192 in steps of 16, and 256), both
// K-major in shared memory (descriptors). Accumulator layout: warp w of the warpgroup holds rows
// 16w .. 16w + 15; register 4j + e sits at row lane / 4 (+ 8 for e >= 2), column 8j + 2 (lane % 4)
// + e % 2, j = 0 .. N / 8 - 1.
template <typename T, int R> __device__ __forceinline__ void wgmma_m64k16(float (&d)[R], uint64_t a, uint64_t b)
{
    static_assert(R == 128 || (R >= 32 && R <= 96 && R % 8 == 0), "wgmma m64n256k16, or m64nNk16, N = 64 .. 192");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
    if constexpr (R == 32) {
        WGMMA_SHAPE(n64, WGMMA_R30 WGMMA_R2(3), 32, 33, 34, WGMMA_D32(0));
    } else if constexpr (R == 40) {
        WGMMA_SHAPE(n80, WGMMA_R30 WGMMA_R10_END(3), 40, 41, 42, WGMMA_D32(0), WGMMA_D8(32));
    } else if constexpr (R == 48) {
        WGMMA_SHAPE(n96, WGMMA_R30 WGMMA_R10(3) WGMMA_R8(4), 48, 49, 50, WGMMA_D32(0), WGMMA_D16(32));
    } else if constexpr (R == 56) {
        WGMMA_SHAPE(n112, WGMMA_R30 WGMMA_R10(3) WGMMA_R10(4) WGMMA_R6(5), 56, 57, 58, WGMMA_D32(0), WGMMA_D16(32),
                    WGMMA_D8(48));
    } else if constexpr (R == 64) {
        WGMMA_SHAPE(n128, WGMMA_R60 WGMMA_R4(6), 64, 65, 66, WGMMA_D64(0));
    } else if constexpr (R == 72) {
        WGMMA_SHAPE(n144, WGMMA_R60 WGMMA_R10(6) WGMMA_R2(7), 72, 73, 74, WGMMA_D64(0), WGMMA_D8(64));
    } else if constexpr (R == 80) {
        WGMMA_SHAPE(n160, WGMMA_R60 WGMMA_R10(6) WGMMA_R10_END(7), 80, 81, 82, WGMMA_D64(0), WGMMA_D16(64));
    } else if constexpr (R == 88) {
        WGMMA_SHAPE(n176, WGMMA_R60 WGMMA_R10(6) WGMMA_R10(7) WGMMA_R8(8), 88, 89, 90, WGMMA_D64(0), WGMMA_D16(64),
                    WGMMA_D8(80));
    } else if constexpr (R == 96) {
        WGMMA_SHAPE(n192, WGMMA_R90 WGMMA_R6(9), 96, 97, 98, WGMMA_D64(0), WGMMA_D32(64));
    } else {
        WGMMA_SHAPE(n256, WGMMA_R90 WGMMA_R10(9) WGMMA_R10(10) WGMMA_R10(11) WGMMA_R8(12), 128, 129, 130,
                    WGMMA_D64(0), WGMMA_D64(64));
    }
#else
    (void)d, (void)a, (void)b;
#endif
}
template <typename T> __device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t a, uint64_t b)
{
    wgmma_m64k16<T>(d, a, b);
}

// ---- sm_90a: register budgets per warpgroup ------------------------------------------------
// setmaxnreg: a warpgroup gives registers back to the block's pool (dec) or takes them from it
// (inc), so that a producer that only issues copies can leave its share to the consumers. Every
// warp of the warpgroup executes it; the kernel needs a register cap at entry
// (__launch_bounds__(threads, 1)).
template <int N> __device__ __forceinline__ void regs_release()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N> __device__ __forceinline__ void regs_claim()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
