// 6_pingpong.cuh: ping-pong consumers. Each consumer warpgroup owns whole tiles, and the two take
// turns at the tensor cores, so that one's epilogue runs while the other multiplies. sm_90a.
//
// What step 5 lacks: both consumers work on the same tile, so they finish its K loop together
// and then both run the epilogue (GELU, multiply, shared-memory stores) while no wgmma is
// issued: with dim 768 a tile's K loop is short, and the tensor cores idle for a sizeable part of
// every tile. The producer runs ahead, but nobody consumes.
//
// The idea (the schedule CUTLASS 3 calls ping-pong):
//   tiles    128 rows x 64 columns of m: a consumer's accumulators are 128 x 128 = 64 gate and
//            64 up columns, as two wgmma m64n128k16 per 16 of K (rows 0-63 and 64-127), the same
//            128 registers a thread as before. The block's tiles alternate between the consumers:
//            tile j of the block's list (tile blockIdx.x + j * gridDim.x) goes to consumer j % 2.
//   ring     6 stages of 32 KB (x 128 x 64, Wg 64 x 64, Wu 64 x 64) filled in tile order by the
//            producer; tile j holds ring positions j * ktiles .. (j + 1) * ktiles - 1, and a
//            consumer starting tile j computes its stage and phase parity from that position.
//            Each stage is read by one consumer: empty[s] waits for that warpgroup's 4 warps.
//   turns    consumer c starts the K loop of tile j only when the other consumer has finished
//            the K loop of tile j - 1 (turn[other], one phase per tile of the other). That
//            ordering is what keeps the parity waits exact: an mbarrier wait by parity cannot
//            tell the phase it wants from the one two passes earlier, so a consumer must never
//            wait on a stage more than one pass ahead of the ring. With the turns, every ring
//            position before tile j has been waited on, by one consumer or the other, before
//            anyone waits on tile j's; and no stage is refilled before its reader released it.
//   overlap  after its last wait on the ring a consumer hands the turn over, drains its wgmmas
//            and runs the epilogue (step 5's TMA stores, from its own 32 KB of boxes) while the
//            other consumer's wgmmas run.
//   order    persistent blocks walking tiles down bands of 8 tile rows, as in step 4.
// Shared memory: the ring (192 KB) and the boxes (2 x 16 KB).
//
// The loop is written for any tile width: version 9 runs it with the width its shape wants
// (gemm_geglu's TBN; its accumulators are float[2][TBN], its ring's stages hold TBN rows of Wg and
// of Wu), stores from the registers, and gives the consumers the producer's registers.
#pragma once

#include "4_persistent.cuh"

namespace gemm6 {

constexpr int BM = 128, BN = 64, BK = 64, STAGES = 6, CONSUMERS = 2, THREADS = 128 * (1 + CONSUMERS);
constexpr int X_BYTES = BM * BK * 2, W_BYTES = 2 * BN * BK * 2; // x; Wg and Wu stacked (128 rows)
// A stage of the ring for tiles bn columns wide: x, then bn rows of Wg and bn rows of Wu.
__host__ __device__ constexpr int stage_bytes(int bn) { return X_BYTES + 2 * bn * BK * 2; }
constexpr int STAGE_BYTES = stage_bytes(BN);
constexpr int OUT_BOX = 64, OUT_BOX_BYTES = OUT_BOX * OUT_BOX * 2; // one 64 x 64 box of m
constexpr int OUT_BYTES = CONSUMERS * (BM / OUT_BOX) * OUT_BOX_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + OUT_BYTES + 1024; // + room to align to 1024 B
static_assert(SMEM_BYTES <= 227 * 1024, "the ring and the boxes fit an sm_90 block's shared memory");
static_assert(BN == OUT_BOX, "a tile is two boxes of m, one above the other");
constexpr int PRODUCER_REGS = 40; // the producer's registers when the consumers take the rest

// One step of K for a consumer: d[h] += x rows [64 h, + 64) of the stage at sx times the stacked
// Wg|Wu tile at sw (2 R rows: 128 for 64-wide tiles), as 8 wgmmas (two halves x 4 of 16 K) in one
// committed group.
template <typename T, int R> __device__ __forceinline__ void mma_step(float (&d)[2][R], uint32_t sx, uint32_t sw)
{
    const uint64_t da0 = smem_desc(sx), da1 = smem_desc(sx + 64 * 128), db = smem_desc(sw);
    fence_acc(d[0]);
    fence_acc(d[1]);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < BK / 16; k++) {
        wgmma_m64k16<T>(d[0], da0 + 2 * k, db + 2 * k);
        wgmma_m64k16<T>(d[1], da1 + 2 * k, db + 2 * k);
    }
    wgmma_commit();
}

// gelu(gate) * up of accumulator pair i of half h: d[h]'s R registers hold R / 2 of gate, then R / 2 of up.
template <int R> __device__ __forceinline__ float geglu_at(const float (&d)[2][R], int h, int i)
{
    return gelu_tanh(d[h][i]) * d[h][i + R / 2];
}

// The epilogue from the registers, for an m whose rows a TMA cannot write.
template <typename T, int R>
__device__ __forceinline__ void store_tile(const float (&d)[2][R], T *m, int M, int N, int m0, int n0, int warp, int lane)
{
    const bool pairs = N % 2 == 0;
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int row = m0 + h * 64 + (warp % 4) * 16 + lane / 4 + half * 8;
            if (row >= M) continue;
#pragma unroll
            for (int j = 0; j < R / 8; j++) {
                const int col = n0 + j * 8 + 2 * (lane % 4), i = 4 * j + 2 * half;
                store_pair<T>(m + (size_t)row * N + col, col, N, pairs, geglu_at(d, h, i), geglu_at(d, h, i + 1));
            }
        }
}

// The epilogue through shared memory, as in step 5: the tile's two 64 x 64 boxes (rows 0-63 and
// 64-127) at out, then TMA stores; a box wholly past M is not stored.
template <typename T>
__device__ __forceinline__ void store_tile_tma(const float (&d)[2][64], const CUtensorMap *tm, uint32_t out, int M,
                                               int m0, int n0, int consumer, int warp, int lane)
{
    const bool issuer = warp % 4 == 0 && lane == 0;
    if (issuer) bulk_wait_read_all(); // this consumer's previous stores have read the boxes
    named_barrier_sync(1 + consumer, 128);
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int r = (warp % 4) * 16 + lane / 4 + half * 8; // row in box h; r % 8 = lane / 4
#pragma unroll
            for (int j = 0; j < 8; j++) { // columns 8j .. 8j + 7: chunk j of the row
                const int i = 4 * j + 2 * half;
                const uint32_t bits = pack_pair<T>(geglu_at(d, h, i), geglu_at(d, h, i + 1));
                asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(out + h * OUT_BOX_BYTES + swizzle_128B(r, j) +
                                                              4 * (lane % 4)),
                             "r"(bits)
                             : "memory");
            }
        }
    fence_proxy_async(); // the TMA engine must see them
    named_barrier_sync(1 + consumer, 128);
    if (issuer) {
        tma_store(tm, out, n0, m0);
        if (m0 + 64 < M) tma_store(tm, out + OUT_BOX_BYTES, n0, m0 + 64);
        bulk_commit();
    }
}

// A consumer's K loop: d = the sums of steps [k0, k1) of a tile whose step k0 sits at ring
// position pos (stage pos % STAGES, pass pos / STAGES). After its last wait on the ring it hands
// the turn to the other consumer (one arrival on turn_mine), then drains its wgmmas; every stage
// it read goes back to the producer. A ring of NSTAGES stages for tiles R columns wide.
template <typename T, int R, int NSTAGES = STAGES>
__device__ __forceinline__ void consume_steps(float (&d)[2][R], long long pos, int k0, int k1, uint32_t smem0,
                                              uint32_t full0, uint32_t empty0, uint32_t turn_mine, int lane)
{
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int i = 0; i < R; i++) d[h][i] = 0.0f;
    int stage = (int)(pos % NSTAGES), prev = -1;
    uint32_t phase = (uint32_t)(pos / NSTAGES) & 1;
    for (int kt = k0; kt < k1; kt++) {
        mbar_wait(full0 + 8 * stage, phase);
        const uint32_t sx = smem0 + stage * stage_bytes(R);
        mma_step<T>(d, sx, sx + X_BYTES);
        // Keep this step's wgmmas in flight; the previous step's have retired, so its stage goes
        // back to the producer.
        wgmma_wait<1>();
        fence_acc(d[0]);
        fence_acc(d[1]);
        if (prev >= 0 && lane == 0) mbar_arrive(empty0 + 8 * prev);
        prev = stage;
        if (++stage == NSTAGES) stage = 0, phase ^= 1;
    }
    if (lane == 0) mbar_arrive(turn_mine); // the other consumer's turn at the ring
    wgmma_wait<0>();
    fence_acc(d[0]);
    fence_acc(d[1]);
    if (prev >= 0 && lane == 0) mbar_arrive(empty0 + 8 * prev);
}

// tg, tu: maps of Wg and Wu in boxes of TBN rows; tm: m's map, or null (then the direct stores;
// always for tiles other than 64 wide). CONSUMER_REGS > 0: the producer warpgroup keeps
// PRODUCER_REGS registers a thread and each consumer's takes CONSUMER_REGS (wide tiles' accumulators).
template <typename T, int TBN = BN, int NSTAGES = STAGES, int CONSUMER_REGS = 0>
__device__ __forceinline__ void gemm_geglu(const CUtensorMap *tx, const CUtensorMap *tg, const CUtensorMap *tu,
                                           const CUtensorMap *tm, T *m, int M, int K, int N)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int STAGE = stage_bytes(TBN);
    __shared__ __align__(8) uint64_t bars[2 * NSTAGES + CONSUMERS];
    const uint32_t smem0 = gemm2::smem_base_1024();
    const uint32_t full0 = (uint32_t)__cvta_generic_to_shared(bars), empty0 = full0 + 8 * NSTAGES;
    const uint32_t turn0 = empty0 + 8 * NSTAGES; // turn[c]: consumer c finished the K loop of a tile
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, group = warp / 4;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + TBN - 1) / TBN, tiles = tiles_m * tiles_n;
    const int ktiles = (K + BK - 1) / BK;
    if (tid == 0) {
        for (int s = 0; s < NSTAGES; s++) {
            mbar_init(full0 + 8 * s, 1);  // the producer's arrival (+ the bytes)
            mbar_init(empty0 + 8 * s, 4); // the 4 warps of the consumer that read the stage
        }
        for (int c = 0; c < CONSUMERS; c++) mbar_init(turn0 + 8 * c, 4);
        fence_mbarrier_init();
    }
    __syncthreads();

    if (group == 0) { // the producer: every tile of the block, in order, through the ring
        if constexpr (CONSUMER_REGS > 0) regs_release<PRODUCER_REGS>();
        if (tid != 0) return;
        int stage = 0;
        uint32_t phase = 0;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int m0, n0;
            gemm4::tile_origin(tile, tiles_m, tiles_n, BM, TBN, &m0, &n0);
            for (int kt = 0; kt < ktiles; kt++) {
                mbar_wait(empty0 + 8 * stage, phase ^ 1); // its reader is done with this stage
                const uint32_t sx = smem0 + stage * STAGE, sw = sx + X_BYTES, full = full0 + 8 * stage;
                mbar_arrive_expect_tx(full, STAGE); // boxes past the matrix still count in full
                tma_load(sx, tx, kt * BK, m0, full);
                tma_load(sw, tg, kt * BK, n0, full);
                tma_load(sw + TBN * BK * 2, tu, kt * BK, n0, full);
                if (++stage == NSTAGES) stage = 0, phase ^= 1;
            }
        }
        return;
    }

    if constexpr (CONSUMER_REGS > 0) regs_claim<CONSUMER_REGS>();
    const int consumer = group - 1, other = 1 - consumer;
    const uint32_t out = smem0 + NSTAGES * STAGE + consumer * (OUT_BYTES / CONSUMERS); // 64-wide tiles' boxes
    float d[2][TBN];
    // The block's tiles j = consumer, consumer + 2, ...; k counts this consumer's tiles.
    for (int j = consumer, k = 0; (long long)blockIdx.x + (long long)j * gridDim.x < tiles; j += 2, k++) {
        int m0, n0;
        gemm4::tile_origin(blockIdx.x + j * gridDim.x, tiles_m, tiles_n, BM, TBN, &m0, &n0);
        // Tile j - 1 was the other consumer's (its tile number k - 1 + consumer): wait until its
        // K loop is through.
        if (j > 0) mbar_wait(turn0 + 8 * other, (uint32_t)(k - 1 + consumer) & 1);
        // tile j's first step is ring position j * ktiles
        consume_steps<T, TBN, NSTAGES>(d, (long long)j * ktiles, 0, ktiles, smem0, full0, empty0, turn0 + 8 * consumer,
                                       lane);
        if constexpr (TBN == OUT_BOX) {
            if (tm) store_tile_tma<T>(d, tm, out, M, m0, n0, consumer, warp, lane);
            else store_tile(d, m, M, N, m0, n0, warp, lane);
        } else {
            store_tile(d, m, M, N, m0, n0, warp, lane);
        }
    }
    if (tm && tid % 128 == 0) bulk_wait_all(); // the last stores finish before the block does
#else
    (void)tx, (void)tg, (void)tu, (void)tm, (void)m, (void)M, (void)K, (void)N;
#endif
}

// The tile and boxes the dispatcher launches with (version.cuh).
constexpr gemm_geglu_layout LAYOUT = {BM, BN, BK, BM, BN, OUT_BOX, THREADS, SMEM_BYTES, 0};

} // namespace gemm6

GEMM_GEGLU_VERSION(6, pingpong, TENSOR_MAPS_AND_M, ONE_BLOCK_PER_SM, 90,
                   "two consumers on 128 x 64 tiles of their own take turns: one's epilogue under the other's MMAs")
