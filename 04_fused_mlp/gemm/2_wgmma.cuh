// 2_wgmma.cuh: the same tile on Hopper's warpgroup MMA (wgmma), operands read by the tensor
// cores straight from shared memory. sm_90a only.
//
// What step 1 lacks on Hopper: mma.sync is the Ampere instruction. Each warp loads its operands
// into registers with ldmatrix and issues small 16 x 8 x 16 products one after the other, and on
// an H100/H200 that path cannot keep the tensor cores fed; their full rate is reached only by
// wgmma, which a warpgroup (4 warps, 128 threads) issues as one large asynchronous product with
// both operands described in shared memory.
//
// The idea: two warpgroups own 64 rows of the 128 x 128 tile apiece; each issues one wgmma
// m64n256k16 per 16 of K whose 256 "columns" are the 128 rows of the Wg tile followed by the 128
// rows of the Wu tile, stacked in shared memory: one instruction computes the gate and the up
// tile together, 128 fp32 accumulators per thread, and gate register i pairs with up register
// i + 64 in the epilogue. No ldmatrix, no register fragments. Shared memory is laid out the way
// wgmma reads it: rows of 64 elements = 128 bytes in the 128-byte swizzle, tiles 1024-byte
// aligned.
//
//   grid   (ceil(hidden / 128), ceil(M / 128)); 256 threads = 2 warpgroups
//   K      64 per step, 4-stage cp.async ring: x 128 x 64 (16 KB) + Wg|Wu 256 x 64 (32 KB) per
//          stage, 192 KB in all (H100/H200 allow 227 KB per block)
//   order  wgmma is asynchronous: a stage may be refilled only once the wgmmas reading it have
//          retired. Each step waits for all but the newest group (wait_group 1), so the tile
//          loaded at step kt goes to the stage read at step kt - 2, and loads run 2 steps ahead.
//
// What this still lacks: the same 256 threads copy and multiply, and the whole block meets at a
// barrier every step of K, so a warpgroup waiting for a copy cannot multiply meanwhile (step 3).
// Tails as in step 1: zero-filled loads, stores predicated on row < M and column < hidden.
#pragma once

#include "ptx.cuh"
#include "version.cuh"
#include "../../03_simple_mlp/gelu.cuh"

namespace gemm2 {

constexpr int BM = 128, BN = 128, BK = 64, STAGES = 4, THREADS = 256;
constexpr int X_BYTES = BM * BK * 2, W_BYTES = 2 * BN * BK * 2; // x; Wg and Wu stacked
constexpr int STAGE_BYTES = X_BYTES + W_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024; // + room to align to 1024 B
static_assert(BK * 2 == 128, "rows of 128 bytes: the 128-byte swizzle");

// The dynamic shared memory, its start rounded up to 1024 bytes (the 128-byte swizzle's period).
__device__ __forceinline__ uint32_t smem_base_1024()
{
    extern __shared__ __align__(128) unsigned char smem[];
    return ((uint32_t)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
}

// One step of K for one warpgroup: d += x rows [64 * rows, + 64) of the stage at sx times the
// stacked Wg|Wu tile at sw, as 4 wgmmas (16 of K each) in one committed group.
template <typename T> __device__ __forceinline__ void mma_step(float (&d)[128], uint32_t sx, uint32_t sw, int rows)
{
    const uint64_t da = smem_desc(sx + rows * 64 * 128), db = smem_desc(sw);
    fence_acc(d);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < BK / 16; k++) // 16 elements of K = 32 bytes = 2 descriptor units
        wgmma_m64n256k16<T>(d, da + 2 * k, db + 2 * k);
    wgmma_commit();
}

// The epilogue straight from the accumulators: gelu(gate) * up for this warpgroup's 64 rows.
// Columns 0-127 of d are gate, 128-255 up: gate register i pairs with up register i + 64.
template <typename T>
__device__ __forceinline__ void store_tile(const float (&d)[128], T *m, int M, int N, int m0, int n0, int rows,
                                           int warp, int lane)
{
    const bool pairs = N % 2 == 0;
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = m0 + rows * 64 + (warp % 4) * 16 + lane / 4 + half * 8;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const int col = n0 + j * 8 + 2 * (lane % 4), i = 4 * j + 2 * half;
            const float v0 = gelu_tanh(d[i]) * d[i + 64], v1 = gelu_tanh(d[i + 1]) * d[i + 65];
            store_pair<T>(m + (size_t)row * N + col, col, N, pairs, v0, v1);
        }
    }
}

template <typename T>
__device__ __forceinline__ void gemm_geglu(const T *x, const T *wg, const T *wu, T *m, int M, int K, int N)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    const uint32_t smem0 = smem_base_1024();
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, group = warp / 4;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int ktiles = (K + BK - 1) / BK;

    auto load_stage = [&](int stage, int kt) {
        const uint32_t sx = smem0 + stage * STAGE_BYTES, sw = sx + X_BYTES;
        const int k0 = kt * BK;
#pragma unroll
        for (int i = 0; i < BM * 8 / THREADS; i++) {
            const int idx = tid + i * THREADS, r = idx / 8, c = idx % 8;
            const int grow = m0 + r, gk = k0 + c * 8;
            const bool inside = grow < M && gk < K;
            cp_async16(sx + swizzle_128B(r, c), inside ? x + (size_t)grow * K + gk : x, inside ? 16 : 0);
        }
#pragma unroll
        for (int i = 0; i < 2 * BN * 8 / THREADS; i++) {
            const int idx = tid + i * THREADS, r = idx / 8, c = idx % 8;
            const T *w = r < BN ? wg : wu;
            const int grow = n0 + r % BN, gk = k0 + c * 8;
            const bool inside = grow < N && gk < K;
            cp_async16(sw + swizzle_128B(r, c), inside ? w + (size_t)grow * K + gk : w, inside ? 16 : 0);
        }
    };

    float d[128];
#pragma unroll
    for (int i = 0; i < 128; i++) d[i] = 0.0f;

#pragma unroll
    for (int s = 0; s < STAGES - 2; s++) {
        if (s < ktiles) load_stage(s, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; kt++) {
        cp_async_wait<STAGES - 3>();
        // cp.async writes through the generic proxy, wgmma reads through the async proxy.
        fence_proxy_async();
        // Tile kt visible to all; every warpgroup has retired its wgmmas of tile kt - 2.
        __syncthreads();
        const int next = kt + STAGES - 2;
        if (next < ktiles) load_stage(next % STAGES, next);
        cp_async_commit();

        const uint32_t sx = smem0 + (kt % STAGES) * STAGE_BYTES;
        mma_step<T>(d, sx, sx + X_BYTES, group);
        wgmma_wait<1>();
        fence_acc(d);
    }
    wgmma_wait<0>();
    fence_acc(d);
    store_tile(d, m, M, N, m0, n0, group, warp, lane);
    cp_async_wait<0>();
#else
    (void)x, (void)wg, (void)wu, (void)m, (void)M, (void)K, (void)N;
#endif
}

// The tile and boxes the dispatcher launches with (version.cuh).
constexpr gemm_geglu_layout LAYOUT = {BM, BN, 0, 0, 0, 0, THREADS, SMEM_BYTES, 0};

} // namespace gemm2

GEMM_GEGLU_VERSION(2, wgmma, POINTERS, ONE_BLOCK_PER_TILE, 90,
                   "wgmma m64n256 from shared memory; the same threads load with cp.async")
