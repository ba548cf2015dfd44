// 4_persistent.cuh: persistent blocks, one per SM, each walking many tiles, in an order that
// keeps the tiles in flight on the same panels of x and [Wg; Wu] in L2. sm_90a.
//
// What step 3 lacks: one tile per block. With dim 768 a tile is only 12 steps of K; then the
// consumers run the epilogue (GELU, multiply, stores) while the producer has nothing left to
// load, and the next block on that SM starts with an empty ring. A grid of thousands of blocks
// also starts them in row-major tile order, so the blocks in flight at once read whole rows of
// tiles' worth of weights.
//
// The idea, in two parts:
//   tiles    the grid is min(tiles, SMs) blocks; block b takes tiles b, b + grid, b + 2 grid, ...
//            The producer runs up to 4 steps of K ahead across tile boundaries: while the
//            consumers run one tile's epilogue, it already loads the next tile's first stages.
//            The ring's (stage, phase) simply carry on from tile to tile, in producer and
//            consumers alike, since both walk the same tiles and the same K steps.
//   order    tiles are numbered down bands of 8 tile rows before moving right (tile_origin):
//            the ~132 tiles in flight at once cover 8 rows of tiles of x and ~16 tile columns of
//            [Wg; Wu], a few MB that stay in L2. Row by row, at a LLaMA-sized shape (Wg|Wu
//            180 MB, past the 50 MB of L2) the blocks would stream all of the weights from HBM
//            again for every 1.5 rows of tiles.
//
// The loop is written once for this step and the next: it takes the epilogue as a function of
// the finished accumulators; here it is step 2's, stored straight from the registers.
//
// What this still lacks: a warp's stores from the accumulator layout touch 8 rows, 16 bytes in
// each, half of every 32-byte sector; and the warps store instead of multiplying (step 5).
#pragma once

#include "3_tma_producer.cuh"

namespace gemm4 {

using gemm3::BM, gemm3::BN, gemm3::BK, gemm3::THREADS;
constexpr int SMEM_BYTES = gemm3::SMEM_BYTES;
constexpr int BAND = 8; // tile rows per band

// Row and column (in elements) of tile `tile` of bm x bn, numbered down bands of BAND tile rows;
// the last band may have fewer rows.
__device__ __forceinline__ void tile_origin(int tile, int tiles_m, int tiles_n, int bm, int bn, int *m0, int *n0)
{
    const int band = tile / (BAND * tiles_n), first = band * BAND;
    const int rows = min(BAND, tiles_m - first), in_band = tile - band * BAND * tiles_n;
    *m0 = (first + in_band % rows) * bm;
    *n0 = in_band / rows * bn;
}

// Every tile of this block: the producer thread loads, the consumer warpgroups multiply and call
// epilogue(d, m0, n0, rows, warp, lane) with their 64 rows of each tile's accumulators.
template <typename T, typename Epilogue>
__device__ __forceinline__ void for_each_tile(const CUtensorMap *tx, const CUtensorMap *tg, const CUtensorMap *tu,
                                              int M, int K, int N, Epilogue &&epilogue)
{
    gemm3::Ring ring = gemm3::ring_init();
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, group = warp / 4;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, tiles = tiles_m * tiles_n;
    const int ktiles = (K + BK - 1) / BK;

    if (group == 0) { // the producer: one thread issues every load; the rest of its warpgroup idles
        if (tid != 0) return;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int m0, n0;
            tile_origin(tile, tiles_m, tiles_n, BM, BN, &m0, &n0);
            gemm3::produce_tile(ring, tx, tg, tu, m0, n0, ktiles);
        }
        return;
    }

    const int rows = group - 1; // this consumer's 64 rows of each tile: 0 or 1
    float d[128];
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int m0, n0;
        tile_origin(tile, tiles_m, tiles_n, BM, BN, &m0, &n0);
        gemm3::consume_tile<T>(ring, d, rows, ktiles, lane);
        if (m0 + rows * 64 >= M) continue; // the last tile row has 64 rows or fewer: nothing to store
        epilogue(d, m0, n0, rows, warp, lane);
    }
}

template <typename T>
__device__ __forceinline__ void gemm_geglu(const CUtensorMap *tx, const CUtensorMap *tg, const CUtensorMap *tu, T *m,
                                           int M, int K, int N)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    for_each_tile<T>(tx, tg, tu, M, K, N, [&](const float (&d)[128], int m0, int n0, int rows, int warp, int lane) {
        gemm2::store_tile(d, m, M, N, m0, n0, rows, warp, lane);
    });
#else
    (void)tx, (void)tg, (void)tu, (void)m, (void)M, (void)K, (void)N;
#endif
}

// The tile and boxes the dispatcher launches with (version.cuh).
constexpr gemm_geglu_layout LAYOUT = {BM, BN, BK, BM, BN, 0, THREADS, SMEM_BYTES, 0};

} // namespace gemm4

GEMM_GEGLU_VERSION(4, persistent, TENSOR_MAPS, ONE_BLOCK_PER_SM, 90,
                   "persistent blocks; tiles in bands that keep x and [Wg; Wu] panels in L2")
