// 1_mma_sync.cuh: the GEMM with the GeGLU epilogue on sm_80 tensor cores (mma.sync), fed by a
// ring of cp.async copies. Runs on any GPU from sm_80 on, Hopper included.
//
//   m[M, hidden] = gelu_tanh(x Wg^T) * (x Wu^T)
//
// The idea: gate and up need never exist in memory. A block owns a 128 x 128 tile of m; to
// produce it, it computes the 128 x 128 gate tile and the 128 x 128 up tile that sit at the same
// place: the same 128 rows of x against 128 rows of Wg and the same 128 rows of Wu. So each step
// of K loads one x tile and two weight tiles, and the x fragments feed both products: in effect
// a 128 x 256 GEMM tile whose two halves meet only in the epilogue, gelu(g) * u on registers,
// rounded once to the storage type. The kernel reads x, Wg, Wu and writes m, nothing else.
//
//   grid   (ceil(hidden / 128), ceil(M / 128)); 256 threads = 8 warps as 2 (M) x 4 (hidden)
//   warp   64 rows x 32 hidden columns, of gate and of up: 4 x 4 x 2 = 32 mma per 16 of K
//   K      32 per step, in a 4-stage cp.async ring of shared memory: 3 tiles (x, Wg, Wu) of
//          128 x 32 per stage = 24 KB, 96 KB in all (fits A100's 164 KB and H100's 227 KB); the
//          loads of step kt + 3 are in flight while the tensor cores work on step kt
//   mma    mma.sync.aligned.m16n8k16 bf16/fp16 -> fp32, operands loaded with ldmatrix
//
// Shared memory rows are 32 elements = 64 bytes, swizzled (swizzle_64B) so that ldmatrix's
// reads of 8 consecutive rows hit 8 different bank groups.
//
// Tails: rows of x past M and rows of Wg/Wu past hidden are loaded as zeros (cp.async with a
// source size of 0), and so are K chunks past dim; since dim is a multiple of 8, a 16-byte chunk
// is either wholly inside a row or wholly past its end. Stores are predicated on row < M and
// column < hidden.
#pragma once

#include "ptx.cuh"
#include "version.cuh"
#include "../../03_simple_mlp/gelu.cuh"

namespace gemm1 {

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
static_assert(BK * 2 == 64, "rows of 64 bytes: swizzle_64B");

// Copies rows [row0, row0 + 128) x columns [k0, k0 + 32) of a row-major [rows, K] matrix into a
// swizzled tile, zero-filling whatever lies past `rows` or past K.
__device__ __forceinline__ void load_tile(uint32_t tile, const uint16_t *g, int row0, int rows, int k0, int K, int tid)
{
#pragma unroll
    for (int i = 0; i < BM * CHUNKS / THREADS; i++) {
        const int idx = tid + i * THREADS, r = idx / CHUNKS, c = idx % CHUNKS;
        const int grow = row0 + r, gk = k0 + c * 8;
        const bool inside = grow < rows && gk < K;
        const uint16_t *src = inside ? g + (size_t)grow * K + gk : g;
        cp_async16(tile + swizzle_64B(r, c), src, inside ? 16 : 0);
    }
}

template <typename T>
__device__ __forceinline__ void gemm_geglu(const T *x, const T *wg, const T *wu, T *m, int M, int K, int N)
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
            for (int mi = 0; mi < MT; mi++) ldmatrix_x4(a[mi], sx + swizzle_64B(a_row + mi * 16, kk * 2 + a_chunk));
#pragma unroll
            for (int nj = 0; nj < NT / 2; nj++) {
                uint32_t t[4];
                ldmatrix_x4(t, sg + swizzle_64B(b_row + nj * 16, kk * 2 + b_chunk));
                bg[2 * nj][0] = t[0], bg[2 * nj][1] = t[1], bg[2 * nj + 1][0] = t[2], bg[2 * nj + 1][1] = t[3];
                ldmatrix_x4(t, su + swizzle_64B(b_row + nj * 16, kk * 2 + b_chunk));
                bu[2 * nj][0] = t[0], bu[2 * nj][1] = t[1], bu[2 * nj + 1][0] = t[2], bu[2 * nj + 1][1] = t[3];
            }
#pragma unroll
            for (int mi = 0; mi < MT; mi++)
#pragma unroll
                for (int ni = 0; ni < NT; ni++) {
                    mma_16816<T>(acc_g[mi][ni], a[mi], bg[ni][0], bg[ni][1]);
                    mma_16816<T>(acc_u[mi][ni], a[mi], bu[ni][0], bu[ni][1]);
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

// The tile and boxes the dispatcher launches with (version.cuh).
constexpr gemm_geglu_layout LAYOUT = {BM, BN, 0, 0, 0, 0, THREADS, SMEM_BYTES, 0};

} // namespace gemm1

GEMM_GEGLU_VERSION(1, mma_sync, POINTERS, ONE_BLOCK_PER_TILE, 80,
                   "mma.sync tiles (sm_80) fed by a 4-stage cp.async ring")
