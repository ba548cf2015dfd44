// 5_tma_store.cuh: the epilogue writes m into shared memory and the copy engine (TMA) stores it.
// sm_90a.
//
// What step 4 lacks: stored straight from the wgmma accumulator layout, every store instruction
// of a warp covers 8 rows with 16 bytes in each (4 lanes x 4 bytes): half of every 32-byte
// sector, and twice the store instructions and memory transactions that whole rows would take,
// issued by the warps that should be back at their wgmmas.
//
// The idea: each consumer writes its 64 x 128 piece of m into two 64 x 64 boxes of shared memory
// (128-byte rows, the widest box the 128-byte swizzle allows), and one thread hands them to the
// TMA engine:
//   - the swizzle moves row r's 16-byte chunk by r % 8 = lane / 4, so a warp's 4-byte shared
//     stores of one column group land on 32 different banks;
//   - the engine writes whole 128-byte rows and clips what lies past M or hidden (the tails);
//   - the warps go back to their wgmmas while it does: the store completes in the background,
//     and only before writing into its boxes again does a consumer wait until the engine has
//     read the previous tile out of them (long done by then: a whole tile of K later).
// Ordering: the boxes are written by ordinary stores and read by the async proxy, so every
// writing thread fences (fence.proxy.async) before the warpgroup's barrier, after which one
// thread issues the stores.
//
// A tensor map needs m's base 16-byte aligned and its row pitch (hidden elements) a multiple of
// 16 bytes; when it is not, the launcher passes no map and the epilogue stores from the
// registers as in step 4. Shared memory: the ring (192 KB) plus 2 x 16 KB of boxes.
//
// What this still lacks: both consumers work on the same tile, finish its K loop together and
// then both run the epilogue while no wgmma is issued (step 6).
#pragma once

#include "4_persistent.cuh"

namespace gemm5 {

using gemm4::BN, gemm4::THREADS, gemm2::STAGES, gemm2::STAGE_BYTES;
constexpr int OUT_BOX = 64, OUT_BOX_BYTES = OUT_BOX * OUT_BOX * 2;      // one 64 x 64 box of m
constexpr int OUT_BYTES = 2 * (BN / OUT_BOX) * OUT_BOX_BYTES;           // two consumers, two boxes each
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + OUT_BYTES + 1024;     // + room to align to 1024 B
static_assert(SMEM_BYTES <= 227 * 1024, "the ring and the boxes fit an sm_90 block's shared memory");

// This consumer's 64 rows (rows = 0 or 1) of the tile at (m0, n0): gelu(gate) * up into the
// boxes at out, then two TMA stores.
template <typename T>
__device__ __forceinline__ void store_tile(const float (&d)[128], const CUtensorMap *tm, uint32_t out, int m0, int n0,
                                           int rows, int warp, int lane)
{
    const bool issuer = warp % 4 == 0 && lane == 0;
    if (issuer) bulk_wait_read_all(); // the previous tile's stores have read the boxes
    named_barrier_sync(1 + rows, 128); // this consumer's 4 warps
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int r = (warp % 4) * 16 + lane / 4 + half * 8; // row in the 64-row piece; r % 8 = lane / 4
#pragma unroll
        for (int j = 0; j < 16; j++) { // columns 8j .. 8j + 7: chunk j % 8 of box j / 8
            const int i = 4 * j + 2 * half;
            const float v0 = gelu_tanh(d[i]) * d[i + 64], v1 = gelu_tanh(d[i + 1]) * d[i + 65];
            const uint32_t box = out + (j / 8) * OUT_BOX_BYTES;
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(box + swizzle_128B(r, j % 8) + 4 * (lane % 4)),
                         "r"(pack_pair<T>(v0, v1))
                         : "memory");
        }
    }
    fence_proxy_async(); // the TMA engine must see them
    named_barrier_sync(1 + rows, 128);
    if (issuer) {
        for (int b = 0; b < BN / OUT_BOX; b++) tma_store(tm, out + b * OUT_BOX_BYTES, n0 + b * OUT_BOX, m0 + rows * 64);
        bulk_commit();
    }
}

// tm: m's tensor map, or null when m's rows cannot take TMA stores (then the direct stores).
template <typename T>
__device__ __forceinline__ void gemm_geglu(const CUtensorMap *tx, const CUtensorMap *tg, const CUtensorMap *tu,
                                           const CUtensorMap *tm, T *m, int M, int K, int N)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    const uint32_t boxes = gemm2::smem_base_1024() + STAGES * STAGE_BYTES; // past the ring
    gemm4::for_each_tile<T>(tx, tg, tu, M, K, N, [&](const float (&d)[128], int m0, int n0, int rows, int warp, int lane) {
        if (tm) store_tile<T>(d, tm, boxes + rows * (OUT_BYTES / 2), m0, n0, rows, warp, lane);
        else gemm2::store_tile(d, m, M, N, m0, n0, rows, warp, lane);
    });
    // The last stores out of shared memory finish before the block does.
    if (tm && threadIdx.x >= 128 && threadIdx.x % 128 == 0) bulk_wait_all();
#else
    (void)tx, (void)tg, (void)tu, (void)tm, (void)m, (void)M, (void)K, (void)N;
#endif
}

// The tile and boxes the dispatcher launches with (version.cuh).
constexpr gemm_geglu_layout LAYOUT = {gemm4::BM, BN, gemm4::BK, gemm4::BM, BN, OUT_BOX, THREADS, SMEM_BYTES, 0};

} // namespace gemm5

GEMM_GEGLU_VERSION(5, tma_store, TENSOR_MAPS_AND_M, ONE_BLOCK_PER_SM, 90,
                   "the epilogue staged in shared memory and stored by TMA")
