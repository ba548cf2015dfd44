// 3_tma_producer.cuh: the loads leave the threads that multiply. A producer warp hands the copy
// engine (TMA) whole tiles, and the two consumer warpgroups meet it only at mbarriers. sm_90a.
//
// What step 2 lacks: its 256 threads both copy (thousands of 16-byte cp.async per stage, with
// their address arithmetic and tail predicates) and multiply, and the whole block meets at
// __syncthreads every step of K. A warpgroup that is done with its wgmmas waits for the slowest
// copy of the slowest thread before it may issue the next ones.
//
// The idea: divide the block the way Hopper is built for.
//   loads    TMA (the tensor memory accelerator): one thread hands the copy engine a 2D box
//            (64 of K x 128 rows) per operand and per stage; the engine writes it into shared
//            memory already in the 128-byte swizzle that wgmma reads, zero-fills what lies past
//            the matrix (the tails), and counts the bytes on the stage's "full" mbarrier
//   roles    384 threads: warpgroup 0 is the producer (one thread issues every TMA; the rest of
//            it idles), warpgroups 1 and 2 the consumers (wgmma and the epilogue, 64 rows of the
//            tile each, as in step 2)
//   ring     4 stages of 48 KB (x 16 KB + Wg|Wu 32 KB), 192 KB. Two mbarriers per stage:
//            full[s] completes when the producer has announced the stage's bytes and the engine
//            has written them; empty[s] when all 8 consumer warps have retired the wgmmas that
//            read it. The producer waits on empty[s] before refilling s, a consumer on full[s]
//            before reading it. No block-wide barrier after the start.
//   parity   each pass through the ring is one phase of every barrier; producer and consumers
//            each keep (stage, phase) and flip the phase when the stage wraps to 0. The
//            producer waits on empty with the opposite parity, so its first pass goes through at
//            once (see mbar_wait).
// A consumer keeps one group of wgmmas in flight (wait_group 1), so it hands a stage back one
// step after it issued the wgmmas reading it.
//
//   grid   (ceil(hidden / 128), ceil(M / 128)): one tile per block, as in step 2
//
// What this still lacks: each block does one tile, so while its consumers run the epilogue the
// producer has nothing to load and the tensor cores idle (step 4).
#pragma once

#include "2_wgmma.cuh"

namespace gemm3 {

using gemm2::BM, gemm2::BN, gemm2::BK, gemm2::STAGES, gemm2::X_BYTES, gemm2::W_BYTES, gemm2::STAGE_BYTES;
constexpr int CONSUMER_WARPS = 8, THREADS = 128 + 32 * CONSUMER_WARPS;
constexpr int SMEM_BYTES = gemm2::SMEM_BYTES;

// The ring as one thread sees it: where its stages and barriers are, and which stage and pass
// (phase parity) this thread is at.
struct Ring {
    uint32_t stages, full0, empty0; // shared addresses of stage 0, full[0], empty[0]
    int stage;
    uint32_t phase;
    __device__ __forceinline__ uint32_t stage_addr() const { return stages + stage * STAGE_BYTES; }
    __device__ __forceinline__ uint32_t full() const { return full0 + 8 * stage; }
    __device__ __forceinline__ uint32_t empty() const { return empty0 + 8 * stage; }
    __device__ __forceinline__ void advance()
    {
        if (++stage == STAGES) stage = 0, phase ^= 1;
    }
};

// Thread 0 initialises the barriers; then the whole block meets, once. empty[s] completes on
// `releases` arrivals: one per consumer warp that reads the stage.
__device__ __forceinline__ Ring ring_init(int releases = CONSUMER_WARPS)
{
    __shared__ __align__(8) uint64_t bars[2 * STAGES];
    Ring r;
    r.stages = gemm2::smem_base_1024();
    r.full0 = (uint32_t)__cvta_generic_to_shared(bars);
    r.empty0 = r.full0 + 8 * STAGES;
    r.stage = 0;
    r.phase = 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            mbar_init(r.full0 + 8 * s, 1);                  // the producer's arrival (+ the bytes)
            mbar_init(r.empty0 + 8 * s, releases);
        }
        fence_mbarrier_init(); // visible to the async proxy
    }
    __syncthreads();
    return r;
}

// The producer thread: the K steps of the tile at (m0, n0) into the ring, each stage once the
// consumers have handed it back.
__device__ __forceinline__ void produce_tile(Ring &r, const CUtensorMap *tx, const CUtensorMap *tg,
                                             const CUtensorMap *tu, int m0, int n0, int ktiles)
{
    for (int kt = 0; kt < ktiles; kt++) {
        mbar_wait(r.empty(), r.phase ^ 1); // the consumers are done with this stage
        const uint32_t sx = r.stage_addr(), sw = sx + X_BYTES, full = r.full();
        mbar_arrive_expect_tx(full, STAGE_BYTES); // boxes past the matrix still count in full
        tma_load(sx, tx, kt * BK, m0, full);
        tma_load(sw, tg, kt * BK, n0, full);
        tma_load(sw + W_BYTES / 2, tu, kt * BK, n0, full);
        r.advance();
    }
}

// How a consumer warp hands stage s back: one arrival on this block's empty[s].
struct release_here {
    __device__ __forceinline__ void operator()(const Ring &r, int s) const { mbar_arrive(r.empty0 + 8 * s); }
};

// A consumer warpgroup: d = its 64 rows (rows = 0 or 1) of the tile's gate|up accumulators,
// over the K steps the producer puts into the ring; every stage it read is handed back.
template <typename T, typename Release = release_here>
__device__ __forceinline__ void consume_tile(Ring &r, float (&d)[128], int rows, int ktiles, int lane,
                                             Release release = {})
{
#pragma unroll
    for (int i = 0; i < 128; i++) d[i] = 0.0f;
    int prev = -1;
    for (int kt = 0; kt < ktiles; kt++) {
        mbar_wait(r.full(), r.phase);
        const uint32_t sx = r.stage_addr();
        gemm2::mma_step<T>(d, sx, sx + X_BYTES, rows);
        // Keep this step's wgmmas in flight; the previous step's have retired, so its stage goes
        // back to the producer.
        wgmma_wait<1>();
        fence_acc(d);
        if (prev >= 0 && lane == 0) release(r, prev);
        prev = r.stage;
        r.advance();
    }
    wgmma_wait<0>();
    fence_acc(d);
    if (prev >= 0 && lane == 0) release(r, prev);
}

template <typename T>
__device__ __forceinline__ void gemm_geglu(const CUtensorMap *tx, const CUtensorMap *tg, const CUtensorMap *tu, T *m,
                                           int M, int K, int N)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    Ring ring = ring_init();
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, group = warp / 4;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, ktiles = (K + BK - 1) / BK;
    if (group == 0) { // the producer
        if (tid == 0) produce_tile(ring, tx, tg, tu, m0, n0, ktiles);
        return;
    }
    const int rows = group - 1; // this consumer's 64 rows of the tile: 0 or 1
    float d[128];
    consume_tile<T>(ring, d, rows, ktiles, lane);
    gemm2::store_tile(d, m, M, N, m0, n0, rows, warp, lane);
#else
    (void)tx, (void)tg, (void)tu, (void)m, (void)M, (void)K, (void)N;
#endif
}

// The tile and boxes the dispatcher launches with (version.cuh).
constexpr gemm_geglu_layout LAYOUT = {BM, BN, BK, BM, BN, 0, THREADS, SMEM_BYTES, 0};

} // namespace gemm3

GEMM_GEGLU_VERSION(3, tma_producer, TENSOR_MAPS, ONE_BLOCK_PER_TILE, 90,
                   "a producer warp loads by TMA into an mbarrier ring; the consumers only multiply")
