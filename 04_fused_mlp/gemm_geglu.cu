// gemm_geglu.cu (04_fused_mlp): a tensor-core GEMM whose epilogue is GeGLU,
//   m[M, hidden] = gelu_tanh(x Wg^T) * (x Wu^T),
// so gate and up live only in registers: the kernel reads x, Wg, Wu and writes m, nothing else.
//
// One CTA owns a 128 x 128 tile of m. To produce it, it computes the 128 x 128 gate tile and the
// 128 x 128 up tile that sit at the same place: the same 128 rows of x against 128 rows of Wg and
// the same 128 rows of Wu. So each step of K loads one x tile and two weight tiles, and the x
// fragments feed both products: effectively a 128 x 256 GEMM tile whose two halves meet only in
// the epilogue.
//
//   grid   (ceil(hidden / 128), ceil(M / 128)); 256 threads = 8 warps as 2 (M) x 4 (hidden)
//   warp   64 rows x 32 hidden columns, of gate and of up: 4 x 4 x 2 = 32 mma per 16 of K
//   K      32 per step, in a 4-stage cp.async ring of shared memory: 3 tiles (x, Wg, Wu) of
//          128 x 32 per stage = 24 KB, 96 KB in all (fits A100's 164 KB and H100's 227 KB)
//   mma    mma.sync.aligned.m16n8k16 bf16/fp16 -> fp32, operands loaded with ldmatrix
//
// Shared memory rows are 32 elements = 64 bytes = four 16-byte chunks. ldmatrix reads one chunk
// from each of 8 consecutive rows; plain row-major, rows r and r + 2 share the same banks (64 B
// apart twice is 128 B, the bank period), a 4-way conflict. Storing chunk c of row r at chunk
// c ^ ((r >> 1) & 3) sends those 8 reads to 8 different 16-byte bank groups.
//
// Two engines compute that tile: mma.sync fed by cp.async (below, any GPU from sm_80 on) and,
// when this file is built for sm_90a with -DGEMM_GEGLU_SM90A, Hopper's wgmma fed by TMA from a
// producer warp (further down); the launcher picks one at run time by the device's compute
// capability.
//
// Tails: rows of x past M and rows of Wg/Wu past hidden are loaded as zeros (cp.async with a
// source size of 0, or the TMA engine's fill past a tensor's bounds), and so are K chunks past
// dim; since dim is a multiple of 8, a 16-byte chunk is either wholly inside a row or wholly
// past its end. Stores are predicated on row < M and column < hidden.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include <cuda.h>        // CUtensorMap and its enums (types only; no -lcuda)
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled

#include "dtype.h"
#include "../03_simple_mlp/gelu.cuh" // the GELU every MLP kernel uses, in fp32
#include "check.h"
#include "gpu.h"
#include "gemm_geglu.h"

namespace {

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 4;
constexpr int WARPS_M = 2, WARPS_N = 4, THREADS = 32 * WARPS_M * WARPS_N;
constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; // 64 x 32 per warp
constexpr int MT = WM / 16, NT = WN / 8;            // m16 tiles and n8 tiles per warp
constexpr int CHUNKS = BK / 8;                      // 16-byte chunks per shared-memory row
constexpr int TILE_BYTES = BM * BK * 2;             // one 128 x 32 tile of 16-bit elements
constexpr int STAGE_BYTES = 3 * TILE_BYTES;         // x, Wg, Wu
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES;
static_assert(BM == BN, "x and weight tiles share one loader and one size");
static_assert((BM * CHUNKS) % THREADS == 0, "each thread copies whole chunks");

// Byte offset of chunk c of row r inside a tile, swizzled (see the header comment).
__device__ __forceinline__ uint32_t swizzle(int r, int c)
{
    return (uint32_t)(r * BK * 2 + ((c ^ ((r >> 1) & 3)) * 16));
}

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

// Columns col and col + 1 of a row of m: one 4-byte store when the pair is whole and 4-byte
// aligned (pairs: N even), else what lies inside N, one element at a time.
template <typename T> __device__ __forceinline__ void store_pair(T *out, int col, int N, bool pairs, float v0, float v1)
{
    if (pairs && col + 1 < N) {
        *(uint32_t *)out = pack_pair<T>(v0, v1);
    } else {
        if (col < N) out[0] = T(v0);
        if (col + 1 < N) out[1] = T(v1);
    }
}

// 16-byte global -> shared copy that bypasses L1; src_bytes = 0 writes 16 zero bytes instead.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
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

// c += a (16x16, row-major) * b (16x8, given as 8 rows of K), fp32 accumulation.
template <typename T> __device__ __forceinline__ void mma16816(float c[4], const uint32_t a[4], const uint32_t b[2])
{
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

// Copies rows [row0, row0 + 128) x columns [k0, k0 + 32) of a row-major [rows, K] matrix into a
// swizzled tile, zero-filling whatever lies past `rows` or past K.
__device__ __forceinline__ void load_tile(uint32_t tile, const uint16_t *g, int row0, int rows,
                                          int k0, int K, int tid)
{
#pragma unroll
    for (int i = 0; i < BM * CHUNKS / THREADS; i++) {
        const int idx = tid + i * THREADS, r = idx / CHUNKS, c = idx % CHUNKS;
        const int grow = row0 + r, gk = k0 + c * 8;
        const bool inside = grow < rows && gk < K;
        const uint16_t *src = inside ? g + (size_t)grow * K + gk : g;
        cp_async16(tile + swizzle(r, c), src, inside ? 16 : 0);
    }
}

template <typename T>
__device__ __forceinline__ void gemm_geglu_mma(const T *x, const T *wg, const T *wu, T *m, int M,
                                               int K, int N)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t smem0 = (uint32_t)__cvta_generic_to_shared(smem);
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int ktiles = (K + BK - 1) / BK;

    auto load_stage = [&](int stage, int kt) {
        const uint32_t s = smem0 + stage * STAGE_BYTES;
        load_tile(s, (const uint16_t *)x, m0, M, kt * BK, K, tid);
        load_tile(s + TILE_BYTES, (const uint16_t *)wg, n0, N, kt * BK, K, tid);
        load_tile(s + 2 * TILE_BYTES, (const uint16_t *)wu, n0, N, kt * BK, K, tid);
    };

    float acc_g[MT][NT][4] = {}, acc_u[MT][NT][4] = {};

    // Prologue: STAGES - 1 tiles in flight. A group is committed even when empty, so that
    // "wait until at most STAGES - 2 groups are pending" always means "tile kt has landed".
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ktiles) load_stage(s, s);
        cp_async_commit();
    }

    // Lane roles in ldmatrix: for x, lanes 0-15 address rows 0-15 at the low 8 of K and lanes
    // 16-31 the same rows at the high 8 (a0..a3 of the mma); for a weight tile, lanes address
    // n-rows 0-7 (low K, high K) then n-rows 8-15 (low K, high K): b0 b1 of two n8 tiles.
    const int a_row = warp_m * WM + lane % 16, a_chunk = lane / 16;
    const int b_row = warp_n * WN + lane % 8 + (lane / 16) * 8, b_chunk = (lane / 8) % 2;

    for (int kt = 0; kt < ktiles; kt++) {
        cp_async_wait<STAGES - 2>();
        // Tile kt is visible to all, and every warp is done with tile kt - 1, whose stage the
        // load below overwrites.
        __syncthreads();
        const int next = kt + STAGES - 1;
        if (next < ktiles) load_stage(next % STAGES, next);
        cp_async_commit();

        const uint32_t sx = smem0 + (kt % STAGES) * STAGE_BYTES;
        const uint32_t sg = sx + TILE_BYTES, su = sx + 2 * TILE_BYTES;
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            uint32_t a[MT][4], bg[NT][2], bu[NT][2];
#pragma unroll
            for (int mi = 0; mi < MT; mi++)
                ldmatrix_x4(a[mi], sx + swizzle(a_row + mi * 16, kk * 2 + a_chunk));
#pragma unroll
            for (int nj = 0; nj < NT / 2; nj++) {
                uint32_t t[4];
                ldmatrix_x4(t, sg + swizzle(b_row + nj * 16, kk * 2 + b_chunk));
                bg[2 * nj][0] = t[0], bg[2 * nj][1] = t[1], bg[2 * nj + 1][0] = t[2], bg[2 * nj + 1][1] = t[3];
                ldmatrix_x4(t, su + swizzle(b_row + nj * 16, kk * 2 + b_chunk));
                bu[2 * nj][0] = t[0], bu[2 * nj][1] = t[1], bu[2 * nj + 1][0] = t[2], bu[2 * nj + 1][1] = t[3];
            }
#pragma unroll
            for (int mi = 0; mi < MT; mi++)
#pragma unroll
                for (int ni = 0; ni < NT; ni++) {
                    mma16816<T>(acc_g[mi][ni], a[mi], bg[ni]);
                    mma16816<T>(acc_u[mi][ni], a[mi], bu[ni]);
                }
        }
    }
    cp_async_wait<0>(); // only empty groups remain; leave none outstanding at exit

    // Epilogue. Accumulator element e of tile (mi, ni) sits at row lane / 4 (+ 8 for e >= 2) and
    // column 2 * (lane % 4) + e % 2: gate and up share the layout, so gelu(g) * u is elementwise
    // on registers. Pairs of columns go out as one 4-byte store when hidden is even.
    const bool pairs = N % 2 == 0;
#pragma unroll
    for (int mi = 0; mi < MT; mi++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int row = m0 + warp_m * WM + mi * 16 + lane / 4 + half * 8;
            if (row >= M) continue;
#pragma unroll
            for (int ni = 0; ni < NT; ni++) {
                const int col = n0 + warp_n * WN + ni * 8 + 2 * (lane % 4);
                const float v0 = gelu_tanh(acc_g[mi][ni][2 * half]) * acc_u[mi][ni][2 * half];
                const float v1 = gelu_tanh(acc_g[mi][ni][2 * half + 1]) * acc_u[mi][ni][2 * half + 1];
                store_pair<T>(m + (size_t)row * N + col, col, N, pairs, v0, v1);
            }
        }
}

} // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_geglu_mma_bf16(const __nv_bfloat16 *x, const __nv_bfloat16 *wg, const __nv_bfloat16 *wu,
                        __nv_bfloat16 *m, int M, int dim, int hidden)
{
    gemm_geglu_mma<__nv_bfloat16>(x, wg, wu, m, M, dim, hidden);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_geglu_mma_fp16(const __half *x, const __half *wg, const __half *wu, __half *m, int M,
                        int dim, int hidden)
{
    gemm_geglu_mma<__half>(x, wg, wu, m, M, dim, hidden);
}

// ---- Hopper path: TMA, a producer warp and wgmma (sm_90a) ------------------------------------
// Built only when the Makefile compiles this file for sm_90a and defines GEMM_GEGLU_SM90A.
//
// Same output tile (128 x 128 of m), different engine. Two warpgroups (4 warps each) own 64 rows
// apiece; each issues one wgmma m64n256k16 per 16 of K whose 256 "columns" are the 128 rows of
// the Wg tile followed by the 128 rows of the Wu tile, stacked in shared memory: one instruction
// computes the gate and the up tile together, 128 fp32 accumulators per thread. Operands come
// straight from shared memory (no ldmatrix, no register fragments), laid out the way wgmma reads
// them: rows of 64 elements = 128 bytes, 16-byte chunk c of row r stored at chunk c ^ (r % 8)
// (the 128-byte swizzle), tiles 1024-byte aligned.
//
// The first version of this path loaded with cp.async from the same 256 threads that ran the
// wgmmas, and synchronised the block at every step of K; one tile per block, so a block's
// epilogue and its successor's first loads never overlapped. Nsight Compute saw the tensor pipe
// busy 44% of cycles (418 TFLOP/s at the article's shape, against cuBLAS's 713). This one
// divides the work the way Hopper is built for:
//   loads    TMA (the tensor memory accelerator): one thread hands the copy engine a 2D box
//            (64 of K x 128 rows) per operand and per stage; the engine writes it into shared
//            memory already in the 128-byte swizzle, zero-fills what lies past the matrix (the
//            tails), and counts the bytes on the stage's "full" mbarrier
//   roles    384 threads: warpgroup 0 is the producer (one thread issues every TMA), warpgroups
//            1 and 2 the consumers (wgmma and the epilogue); they meet only at mbarriers: a
//            consumer waits on full[s], and when its wgmmas reading stage s have retired it
//            arrives on empty[s], which the producer waits on before refilling s
//   ring     4 stages of 48 KB (x 16 KB + Wg|Wu 32 KB), 192 KB; the producer runs up to 4 steps
//            of K ahead, across tile boundaries
//   tiles    persistent: one block per SM, looping over output tiles; while the consumers run
//            one tile's epilogue the producer already loads the next tile's first stages (with
//            dim 768 a tile is only 12 steps of K, so the overlap matters)
//   order    tiles go down a band of 8 tile rows before moving right (tile_origin): the 132
//            tiles in flight then share a few MB of x and of Wg|Wu in L2. Row by row, at the
//            LLaMA-sized shape (Wg|Wu 180 MB, past the 50 MB of L2) they would stream all of
//            the weights from HBM again for every 1.5 rows of tiles.
//   stores   each consumer writes its 64 x 128 of m into shared memory and the TMA engine
//            stores it (wgmma_epilogue_tma): straight from the accumulators a warp's store
//            used half of every 32-byte sector, and cost 21 of the kernel's 131.5 us.
// On the H200 at the article's shape: 116.8 us, 662 TFLOP/s (cuBLAS's merged GEMM: 109.6 us),
// the tensor pipe busy 70% of cycles; what is left, and what was tried, is in
// docs/04_fused_mlp.md.
#if defined(GEMM_GEGLU_SM90A)
namespace {

constexpr int H_BK = 64, H_STAGES = 4, H_THREADS = 384, H_CONSUMER_WARPS = 8;
constexpr int H_X_BYTES = BM * H_BK * 2, H_W_BYTES = 2 * BN * H_BK * 2;
constexpr int H_STAGE_BYTES = H_X_BYTES + H_W_BYTES;
// The epilogue's staging area: per consumer, its 64 x 128 piece of m as two boxes of 64 x 64
// (128-byte rows, the widest box the 128-byte swizzle allows).
constexpr int H_OUT_BOX = 64, H_OUT_BOX_BYTES = H_OUT_BOX * H_OUT_BOX * 2;
constexpr int H_OUT_BYTES = 2 * (BN / H_OUT_BOX) * H_OUT_BOX_BYTES;
constexpr int H_SMEM_BYTES = H_STAGES * H_STAGE_BYTES + H_OUT_BYTES + 1024; // + room to align to 1024 B
static_assert(H_SMEM_BYTES <= 227 * 1024, "the ring and the staging area fit an sm_90 block's shared memory");
static_assert(H_THREADS == 128 + 32 * H_CONSUMER_WARPS, "one producer warpgroup, the rest consumers");

// Shared-memory matrix descriptor for a K-major tile with the 128-byte swizzle: start address,
// leading-dimension offset (unused with this swizzle: 1), stride between 8-row groups (1024 B),
// swizzle mode 1 in bits 62-63.
[[maybe_unused]] __device__ __forceinline__ uint64_t smem_desc(uint32_t addr)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

// The compiler must neither read nor move the accumulators while wgmma owns them.
[[maybe_unused]] __device__ __forceinline__ void fence_acc(float (&d)[128])
{
#pragma unroll
    for (int i = 0; i < 128; i++) asm volatile("" : "+f"(d[i])::"memory");
}

#define WGMMA_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), \
                    "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define WGMMA_D128 WGMMA_D8(0), WGMMA_D8(8), WGMMA_D8(16), WGMMA_D8(24), WGMMA_D8(32), WGMMA_D8(40), \
                   WGMMA_D8(48), WGMMA_D8(56), WGMMA_D8(64), WGMMA_D8(72), WGMMA_D8(80), WGMMA_D8(88), \
                   WGMMA_D8(96), WGMMA_D8(104), WGMMA_D8(112), WGMMA_D8(120)
#define WGMMA_REGS                                                                                \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "  \
    "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "  \
    "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "  \
    "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "  \
    "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, "    \
    "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "  \
    "%123, %124, %125, %126, %127}, "

// d[64 x 256] += A[64 x 16] * B[256 x 16]^T, both K-major in shared memory (descriptors).
template <typename T> __device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t a, uint64_t b)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " WGMMA_REGS
                     "%128, %129, p, 1, 1, 0, 0;\n}\n"
                     : WGMMA_D128
                     : "l"(a), "l"(b), "r"(1));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " WGMMA_REGS
                     "%128, %129, p, 1, 1, 0, 0;\n}\n"
                     : WGMMA_D128
                     : "l"(a), "l"(b), "r"(1));
#else
    (void)d, (void)a, (void)b;
#endif
}

template <typename T>
[[maybe_unused]] __device__ __forceinline__ void wgmma_epilogue(const float (&d)[128], T *m, int M, int N, int m0, int n0,
                                         int group, int warp, int lane)
{
    // Accumulator layout of wgmma m64nN: warp w of the group holds rows 16w..16w+15; register
    // 4j + e sits at row lane / 4 (+ 8 for e >= 2), column 8j + 2 (lane % 4) + e % 2. Columns
    // 0-127 are gate, 128-255 up: gate register i pairs with up register i + 64.
    const bool pairs = N % 2 == 0;
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = m0 + group * 64 + (warp % 4) * 16 + lane / 4 + half * 8;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const int col = n0 + j * 8 + 2 * (lane % 4), i = 4 * j + 2 * half;
            const float v0 = gelu_tanh(d[i]) * d[i + 64], v1 = gelu_tanh(d[i + 1]) * d[i + 65];
            store_pair<T>(m + (size_t)row * N + col, col, N, pairs, v0, v1);
        }
    }
}

// The store half of TMA: the box of `map` at (col, row) from shared memory at src, in this thread's
// bulk-async group.
[[maybe_unused]] __device__ __forceinline__ void tma_store(const CUtensorMap *map, uint32_t src, int col, int row)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"((uint64_t)map), "r"(col), "r"(row), "r"(src)
                 : "memory");
}

// The same epilogue, stored through shared memory: each consumer writes its 64 x 128 piece of m
// into two 64 x 64 boxes in the 128-byte swizzle, and one thread hands them to the TMA engine.
// Written straight from the accumulators, every store instruction of a warp touched 8 rows, 16
// bytes in each: half of every 32-byte sector. Here a warp's 4-byte shared stores of one column
// group land on 32 different banks (the swizzle moves row r's chunk by r % 8 = lane / 4), the
// engine writes whole 128-byte rows, clips what lies past M or hidden, and the warps go back to
// their wgmmas while it does. Before writing into its boxes again, the consumer waits until the
// engine has read the previous tile's out of them (long done by then: a whole tile of K ago).
template <typename T>
[[maybe_unused]] __device__ __forceinline__ void wgmma_epilogue_tma(const float (&d)[128], const CUtensorMap *tm,
                                                                    uint32_t out, int m0, int n0, int group,
                                                                    int warp, int lane)
{
    const bool issuer = warp % 4 == 0 && lane == 0;
    if (issuer) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + group) : "memory"); // this consumer's 4 warps
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int r = (warp % 4) * 16 + lane / 4 + half * 8; // row in the 64-row piece; r % 8 = lane / 4
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const int i = 4 * j + 2 * half;
            const float v0 = gelu_tanh(d[i]) * d[i + 64], v1 = gelu_tanh(d[i + 1]) * d[i + 65];
            const uint32_t bits = pack_pair<T>(v0, v1);
            const uint32_t box = out + (j / 8) * H_OUT_BOX_BYTES, chunk = (uint32_t)((j % 8) ^ (r % 8));
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(box + r * 128 + chunk * 16 + 4 * (lane % 4)), "r"(bits)
                         : "memory");
        }
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // the TMA engine must see them
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + group) : "memory");
    if (issuer) {
        for (int b = 0; b < BN / H_OUT_BOX; b++)
            tma_store(tm, out + b * H_OUT_BOX_BYTES, n0 + b * H_OUT_BOX, m0 + group * 64);
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
    }
}

// mbarriers in shared memory (addresses in the shared window). full[s]: one arrival (the
// producer's, with the bytes to expect) plus the TMA's byte count; empty[s]: one arrival per
// consumer warp.
[[maybe_unused]] __device__ __forceinline__ void mbar_init(uint32_t bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
[[maybe_unused]] __device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, int bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
[[maybe_unused]] __device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase with this parity has completed. A fresh barrier is in phase 0, and the
// phase "before" it (parity 1) counts as completed: the producer's first wait on each empty[s]
// passes at once.
[[maybe_unused]] __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
}
// The box of `map` at (k, row) into shared memory at dst; completion counted on bar.
[[maybe_unused]] __device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap *map, int k, int row, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(dst), "l"((uint64_t)map), "r"(k), "r"(row), "r"(bar)
                 : "memory");
}

// Row and column (in elements) of tile `tile`, numbered down bands of H_BAND tile rows.
constexpr int H_BAND = 8;
[[maybe_unused]] __device__ __forceinline__ void tile_origin(int tile, int tiles_m, int tiles_n, int *m0, int *n0)
{
    const int band = tile / (H_BAND * tiles_n), first = band * H_BAND;
    const int rows = min(H_BAND, tiles_m - first), in_band = tile - band * H_BAND * tiles_n;
    *m0 = (first + in_band % rows) * BM;
    *n0 = in_band / rows * BN;
}

// tm: m's tensor map, for the epilogue's TMA stores; null when m's rows cannot take them (a row
// pitch not a multiple of 16 bytes), and the epilogue stores from the registers instead.
template <typename T>
__device__ __forceinline__ void gemm_geglu_tma(const CUtensorMap *tx, const CUtensorMap *tg, const CUtensorMap *tu,
                                               const CUtensorMap *tm, T *m, int M, int K, int N)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) uint64_t bars[2 * H_STAGES];
    const uint32_t smem0 = ((uint32_t)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    const uint32_t full0 = (uint32_t)__cvta_generic_to_shared(bars), empty0 = full0 + 8 * H_STAGES;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, group = warp / 4;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, tiles = tiles_m * tiles_n;
    const int ktiles = (K + H_BK - 1) / H_BK;

    if (tid == 0) {
        for (int s = 0; s < H_STAGES; s++) {
            mbar_init(full0 + 8 * s, 1);
            mbar_init(empty0 + 8 * s, H_CONSUMER_WARPS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); // visible to the async proxy
    }
    __syncthreads();

    int stage = 0;
    uint32_t phase = 0; // parity of the ring's current pass
    if (group == 0) {   // the producer: one thread issues every load; the rest of its warpgroup idles
        if (tid != 0) return;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int m0, n0;
            tile_origin(tile, tiles_m, tiles_n, &m0, &n0);
            for (int kt = 0; kt < ktiles; kt++) {
                mbar_wait(empty0 + 8 * stage, phase ^ 1); // the consumers are done with this stage
                const uint32_t sx = smem0 + stage * H_STAGE_BYTES, sw = sx + H_X_BYTES, full = full0 + 8 * stage;
                mbar_arrive_expect_tx(full, H_STAGE_BYTES); // boxes past the matrix still count in full
                tma_load(sx, tx, kt * H_BK, m0, full);
                tma_load(sw, tg, kt * H_BK, n0, full);
                tma_load(sw + H_W_BYTES / 2, tu, kt * H_BK, n0, full);
                if (++stage == H_STAGES) stage = 0, phase ^= 1;
            }
        }
        return;
    }

    const int rows = group - 1; // this consumer's 64 rows of the tile: 0 or 1
    const uint32_t out = smem0 + H_STAGES * H_STAGE_BYTES + rows * (H_OUT_BYTES / 2);
    float d[128];
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int m0, n0;
        tile_origin(tile, tiles_m, tiles_n, &m0, &n0);
#pragma unroll
        for (int i = 0; i < 128; i++) d[i] = 0.0f;
        int prev = -1;
        for (int kt = 0; kt < ktiles; kt++) {
            mbar_wait(full0 + 8 * stage, phase);
            const uint32_t sx = smem0 + stage * H_STAGE_BYTES, sw = sx + H_X_BYTES;
            const uint64_t da = smem_desc(sx + rows * 64 * 128), db = smem_desc(sw);
            fence_acc(d);
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int k = 0; k < H_BK / 16; k++) // 16 elements of K = 32 bytes = 2 descriptor units
                wgmma_m64n256k16<T>(d, da + 2 * k, db + 2 * k);
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
            // Keep this step's wgmmas in flight; the previous step's have retired, so its stage
            // goes back to the producer.
            asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
            fence_acc(d);
            if (prev >= 0 && lane == 0) mbar_arrive(empty0 + 8 * prev);
            prev = stage;
            if (++stage == H_STAGES) stage = 0, phase ^= 1;
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        fence_acc(d);
        if (prev >= 0 && lane == 0) mbar_arrive(empty0 + 8 * prev);
        if (m0 + rows * 64 >= M) continue; // the last tile row has 64 rows or fewer: nothing to store
        if (tm) wgmma_epilogue_tma<T>(d, tm, out, m0, n0, rows, warp, lane);
        else wgmma_epilogue(d, m, M, N, m0, n0, rows, warp, lane);
    }
    if (tm && warp % 4 == 0 && lane == 0) // the last stores out of shared memory finish before the block does
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#else
    (void)tx, (void)tg, (void)tu, (void)tm, (void)m, (void)M, (void)K, (void)N;
#endif
}

} // namespace

extern "C" __global__ void __launch_bounds__(H_THREADS, 1)
    gemm_geglu_tma_bf16(const __grid_constant__ CUtensorMap tx, const __grid_constant__ CUtensorMap tg,
                        const __grid_constant__ CUtensorMap tu, const __grid_constant__ CUtensorMap tm,
                        int store_by_tma, __nv_bfloat16 *m, int M, int dim, int hidden)
{
    gemm_geglu_tma<__nv_bfloat16>(&tx, &tg, &tu, store_by_tma ? &tm : nullptr, m, M, dim, hidden);
}

extern "C" __global__ void __launch_bounds__(H_THREADS, 1)
    gemm_geglu_tma_fp16(const __grid_constant__ CUtensorMap tx, const __grid_constant__ CUtensorMap tg,
                        const __grid_constant__ CUtensorMap tu, const __grid_constant__ CUtensorMap tm,
                        int store_by_tma, __half *m, int M, int dim, int hidden)
{
    gemm_geglu_tma<__half>(&tx, &tg, &tu, store_by_tma ? &tm : nullptr, m, M, dim, hidden);
}

// The host side of TMA: a tensor map describes one matrix (base, sizes, row pitch) and the box
// a load copies. cuTensorMapEncodeTiled is a driver API function; we reach it through the
// runtime (cudaGetDriverEntryPointByVersion), so the program needs no -lcuda.
static void encode_tensor_map(CUtensorMap *map, const void *base, size_t rows, size_t K, unsigned box_k,
                              unsigned box_rows, dtype_t t)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode;
    if (!encode) {
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000,
                                                    cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !encode) {
            fprintf(stderr, "error: gemm_geglu: the driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12)\n");
            exit(EXIT_CUDA_ERROR);
        }
    }
    const cuuint64_t dims[2] = {K, rows}, pitch[1] = {K * 2};
    const cuuint32_t box[2] = {box_k, box_rows}, step[2] = {1, 1};
    const CUresult r = encode(map, t == DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                              2, (void *)base, dims, pitch, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "error: gemm_geglu: cuTensorMapEncodeTiled failed (CUresult %d) for a [%zu, %zu] matrix\n",
                (int)r, rows, K);
        exit(EXIT_CUDA_ERROR);
    }
}

// The four maps of the last call, reused while the pointers and sizes stay (a model calls this
// with the same buffers every forward). m's map exists only when a TMA can write m's rows: a
// tensor map needs its base 16-byte aligned and its row pitch a multiple of 16 bytes.
static void launch_tma(dtype_t t, const void *x, const void *wg, const void *wu, void *m, size_t M, size_t dim,
                       size_t hidden, cudaStream_t stream)
{
    static struct {
        const void *x, *wg, *wu, *m;
        size_t M, dim, hidden;
        dtype_t t;
        int store_by_tma;
        CUtensorMap tx, tg, tu, tm;
    } maps;
    if (maps.x != x || maps.wg != wg || maps.wu != wu || maps.m != m || maps.M != M || maps.dim != dim ||
        maps.hidden != hidden || maps.t != t) {
        encode_tensor_map(&maps.tx, x, M, dim, H_BK, BM, t);
        encode_tensor_map(&maps.tg, wg, hidden, dim, H_BK, BN, t);
        encode_tensor_map(&maps.tu, wu, hidden, dim, H_BK, BN, t);
        maps.store_by_tma = hidden % 8 == 0 && (uintptr_t)m % 16 == 0;
        if (maps.store_by_tma) encode_tensor_map(&maps.tm, m, M, hidden, H_OUT_BOX, H_OUT_BOX, t);
        else memset(&maps.tm, 0, sizeof maps.tm);
        maps.x = x, maps.wg = wg, maps.wu = wu, maps.m = m, maps.M = M, maps.dim = dim, maps.hidden = hidden;
        maps.t = t;
    }
    static int sms, opted_in[2];
    if (!sms) {
        int dev;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    const size_t tiles = (hidden + BN - 1) / BN * ((M + BM - 1) / BM);
    const unsigned blocks = (unsigned)(tiles < (size_t)sms ? tiles : (size_t)sms);
    const int bf16 = t == DTYPE_BF16;
    if (!opted_in[bf16]) { // over 48 KB of dynamic shared memory needs an opt-in, once per kernel
        CUDA_CHECK(cudaFuncSetAttribute(bf16 ? (const void *)gemm_geglu_tma_bf16 : (const void *)gemm_geglu_tma_fp16,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, H_SMEM_BYTES));
        opted_in[bf16] = 1;
    }
    if (bf16)
        gemm_geglu_tma_bf16<<<blocks, H_THREADS, H_SMEM_BYTES, stream>>>(
            maps.tx, maps.tg, maps.tu, maps.tm, maps.store_by_tma, (__nv_bfloat16 *)m, (int)M, (int)dim, (int)hidden);
    else
        gemm_geglu_tma_fp16<<<blocks, H_THREADS, H_SMEM_BYTES, stream>>>(
            maps.tx, maps.tg, maps.tu, maps.tm, maps.store_by_tma, (__half *)m, (int)M, (int)dim, (int)hidden);
}
#endif

// wgmma runs on sm_90 only (sm_90a code runs on no other GPU), and only if this file was built
// for it; everything else from sm_80 on takes mma.sync.
static int use_wgmma(void)
{
#if defined(GEMM_GEGLU_SM90A)
    return gpu_compute_capability() == 90;
#else
    return 0;
#endif
}

extern "C" int gemm_geglu_supported(dtype_t t, size_t M, size_t dim, size_t hidden)
{
    const size_t int_max = 0x7fffffff;
    if (t != DTYPE_BF16 && t != DTYPE_FP16) return 0;
    if (M == 0 || dim == 0 || hidden == 0) return 0;
    if (M > int_max || dim > int_max || hidden > int_max) return 0;
    if (dim % 8 != 0) return 0;
    if ((M + BM - 1) / BM > 65535) return 0;
    return gpu_compute_capability() >= 80;
}

extern "C" const char *gemm_geglu_path(void)
{
    if (use_wgmma()) return "wgmma m64n256k16, TMA into a 4-stage ring, producer warp, persistent (sm_90a)";
    return gpu_compute_capability() >= 80 ? "mma.sync m16n8k16, 4-stage cp.async (sm_80+)"
                                     : "none (needs sm_80 or newer)";
}

template <typename T>
static void launch(void (*kernel)(const T *, const T *, const T *, T *, int, int, int), dim3 grid,
                   int smem_bytes, int *opted_in, const void *x, const void *wg, const void *wu,
                   void *m, size_t M, size_t dim, size_t hidden, cudaStream_t stream)
{
    // Over 48 KB of dynamic shared memory needs an opt-in, once per kernel.
    if (!*opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
        *opted_in = 1;
    }
    kernel<<<grid, THREADS, smem_bytes, stream>>>((const T *)x, (const T *)wg, (const T *)wu, (T *)m,
                                                  (int)M, (int)dim, (int)hidden);
}

extern "C" void launch_gemm_geglu(dtype_t t, const void *x, const void *wg, const void *wu, void *m,
                                  size_t M, size_t dim, size_t hidden, cudaStream_t stream)
{
    if (!gemm_geglu_supported(t, M, dim, hidden)) {
        fprintf(stderr,
                "error: gemm_geglu cannot run %s M=%zu dim=%zu hidden=%zu here (needs bf16 or fp16, "
                "sm_80+, dim a multiple of 8)\n",
                dtype_name(t), M, dim, hidden);
        exit(EXIT_BAD_INPUT);
    }
    if ((uintptr_t)x % 16 || (uintptr_t)wg % 16 || (uintptr_t)wu % 16 || (uintptr_t)m % 4) {
        fprintf(stderr, "error: gemm_geglu needs x, Wg, Wu 16-byte aligned and m 4-byte aligned\n");
        exit(EXIT_BAD_INPUT);
    }
    const int bf16 = t == DTYPE_BF16;
    const size_t tiles_n = (hidden + BN - 1) / BN, tiles_m = (M + BM - 1) / BM;
    const dim3 grid((unsigned)tiles_n, (unsigned)tiles_m);
#if defined(GEMM_GEGLU_SM90A)
    if (use_wgmma()) {
        launch_tma(t, x, wg, wu, m, M, dim, hidden, stream);
        return;
    }
#endif
    static int opted_in[2];
    if (bf16)
        launch(gemm_geglu_mma_bf16, grid, SMEM_BYTES, &opted_in[0], x, wg, wu, m, M, dim, hidden, stream);
    else
        launch(gemm_geglu_mma_fp16, grid, SMEM_BYTES, &opted_in[1], x, wg, wu, m, M, dim, hidden, stream);
}
