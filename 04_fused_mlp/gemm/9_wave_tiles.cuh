// 9_wave_tiles.cuh: the tile's width chosen per shape, so that the tiles fill the SMs' waves.
// sm_90a.
//
// What step 6 lacks: its tile is 128 x 64 of m at every shape, so the number of tiles, and with
// it how full the last wave is, comes with the shape. 128 tokens of hidden 3584: 56 tiles, and
// 76 of the 132 SMs have nothing to do. 512 tokens of hidden 3072: 192 tiles, a full wave and a
// second with 60 tiles, 72 SMs idle. Step 7 splits the last waves along K, but pays a round
// trip through a scratch buffer for it.
//
// The idea (DeepGEMM picks its tile's N the same way, from a model of how full the waves are):
//   widths   the tile stays 128 rows; its width is any of 32, 40, ..., 96 columns of m (the
//            wgmma is m64nNk16 with N = 2 x width: gate and up side by side). Narrow tiles make
//            more tiles for few tokens; wide ones make fewer, and each reads x once for more
//            columns of the weights.
//   pick     for each width: tiles = ceil(M / 128) x ceil(hidden / width), waves =
//            ceil(tiles / SMs), and the time is waves x (width + 32): a tile's K loop takes time
//            in proportion to its width, plus about what loading x's 128 rows costs, the same at
//            every width (x is 16 KB a step, a width's weights 256 bytes a column). The width
//            with the least time wins; between equals, the wider.
//   ring     as many stages as fit (at most 8): 8 for 32-wide tiles, 5 for 96.
//   loop     step 6's ping-pong, the same code with the width as a template parameter. The
//            epilogue stores from the registers (a TMA store box is 64 columns); wide tiles'
//            accumulators (2 x width registers a thread) need more registers than an even share
//            gives, so the producer warpgroup keeps 40 a thread and each consumer takes 232.
//
// What this still lacks: the model is a model. Its constant and its ties are estimates, and
// where two widths come out close, the one it prefers may be the slower; `--gemm auto` measures
// this version against the others at the shape.
#pragma once

#include "6_pingpong.cuh"

namespace gemm9 {

using gemm6::BM, gemm6::BK, gemm6::THREADS;
constexpr int MAX_STAGES = 8, CONSUMER_REGS = 232;
constexpr int SMEM_LIMIT = 227 * 1024 - 1024; // an sm_90 block's shared memory, less room to align to 1024 B

__host__ __device__ constexpr int stages_for(int width)
{
    return SMEM_LIMIT / gemm6::stage_bytes(width) < MAX_STAGES ? SMEM_LIMIT / gemm6::stage_bytes(width) : MAX_STAGES;
}

template <typename T, int WIDTH>
__device__ __forceinline__ void gemm_geglu_at_width(const CUtensorMap *tx, const CUtensorMap *tg, const CUtensorMap *tu,
                                                 T *m, int M, int K, int N)
{
    gemm6::gemm_geglu<T, WIDTH, stages_for(WIDTH), CONSUMER_REGS>(tx, tg, tu, nullptr, m, M, K, N);
}

// A width's tile and boxes (version.cuh): x in boxes of 128 rows, Wg and Wu of `width` rows; no
// TMA stores.
constexpr gemm_geglu_layout layout_of(int width)
{
    return {BM, width, BK, BM, width, 0, THREADS, stages_for(width) * gemm6::stage_bytes(width) + 1024, 0};
}

// What loading x's 128 rows costs a tile, in columns of weights: see "pick" above.
constexpr int X_COST = 32;

inline int pick_width(const gemm_geglu_width *widths, int n, size_t M, size_t hidden, int sms)
{
    int best = 0;
    size_t best_time = 0;
    for (int i = 0; i < n; i++) {
        const size_t w = (size_t)widths[i].layout.tile_n;
        const size_t tiles = (M + BM - 1) / BM * ((hidden + w - 1) / w), waves = (tiles + sms - 1) / sms;
        const size_t time = waves * (w + X_COST);
        if (i == 0 || time <= best_time) best = i, best_time = time; // widths ascend: ties go to the wider
    }
    return best;
}

} // namespace gemm9

GEMM_GEGLU_WIDTH_KERNELS(9, wave_tiles, 32)
GEMM_GEGLU_WIDTH_KERNELS(9, wave_tiles, 40)
GEMM_GEGLU_WIDTH_KERNELS(9, wave_tiles, 48)
GEMM_GEGLU_WIDTH_KERNELS(9, wave_tiles, 56)
GEMM_GEGLU_WIDTH_KERNELS(9, wave_tiles, 64)
GEMM_GEGLU_WIDTH_KERNELS(9, wave_tiles, 72)
GEMM_GEGLU_WIDTH_KERNELS(9, wave_tiles, 80)
GEMM_GEGLU_WIDTH_KERNELS(9, wave_tiles, 88)
GEMM_GEGLU_WIDTH_KERNELS(9, wave_tiles, 96)

namespace gemm9 {
const gemm_geglu_width WIDTHS[] = {
    GEMM_GEGLU_WIDTH(9, wave_tiles, 32), GEMM_GEGLU_WIDTH(9, wave_tiles, 40), GEMM_GEGLU_WIDTH(9, wave_tiles, 48),
    GEMM_GEGLU_WIDTH(9, wave_tiles, 56), GEMM_GEGLU_WIDTH(9, wave_tiles, 64), GEMM_GEGLU_WIDTH(9, wave_tiles, 72),
    GEMM_GEGLU_WIDTH(9, wave_tiles, 80), GEMM_GEGLU_WIDTH(9, wave_tiles, 88), GEMM_GEGLU_WIDTH(9, wave_tiles, 96)};
constexpr int N_WIDTHS = sizeof WIDTHS / sizeof WIDTHS[0];
} // namespace gemm9

GEMM_GEGLU_VERSION_BY_WIDTH(9, wave_tiles, TENSOR_MAPS, ONE_BLOCK_PER_SM, 90,
                            "the tile's width (32 to 96 columns) picked per shape so that the tiles fill the waves")
