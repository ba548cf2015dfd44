// 8_multicast.cuh: blocks in clusters of two that share each stage's Wg|Wu tile: one read of
// L2 fills the shared memory of both SMs (TMA multicast). sm_90a.
//
// What steps 4-7 lack: every block fetches every byte of its stages from L2 itself. Two blocks
// working on tiles one above the other need the same 256 rows of [Wg; Wu] at every step of K,
// and each pulls its own copy through the crossbar: a stage is x 16 KB + Wg|Wu 32 KB, so two
// thirds of what crosses is weights that the SM next door fetches too. At LLaMA widths, run back
// to back, the H200 sits at its power cap, where moving fewer bytes might buy clock; cuBLAS's
// kernel for these shapes runs in clusters of two (its name says 1x2).
//
// The idea (CUTLASS calls it multicast TMA over a cluster):
//   pairs    the launch groups the blocks in clusters of 2, one block per SM; cluster c takes
//            pairs of tiles c, c + clusters, ...: 256 rows x 128 columns of m, rank r the 128
//            rows at 128 r, both ranks the same columns, in step 4's bands (of tile pairs).
//   loads    at every step of K each block's producer loads its own 128 rows of x, and half of
//            the shared stage: rank 0 the Wg box, rank 1 the Wu box, each multicast into the
//            same offset of both blocks' shared memory. Each block's full[s] waits for 48 KB: its
//            x, its own half, and the half the other block sends. Per block, 32 KB cross from L2
//            instead of 48.
//   release  a stage may be refilled only when the consumers of both blocks have read it, since
//            either producer writes into both: each consumer warp arrives on empty[s] of its own
//            block and of the other (16 arrivals a phase).
//   start    both blocks initialise their barriers, then the cluster meets once, so that no
//            multicast or arrival lands on a barrier not yet initialised.
//   end      a block must not exit while the other may still arrive on its barriers: after its
//            last load the producer waits until every stage has been handed back once more, by
//            both blocks' consumers; then nothing from the other block can come.
// The consumers, the epilogue (step 5's TMA stores) and the tails are step 5's; past M, the
// last pair's second tile reads zeros and stores nothing. Shared memory: as step 5. Registers:
// as step 7 shares them out.
//
// What this still lacks: the consumers share a tile, so the tensor cores idle during its
// epilogue (step 6's turns); and with 128 tokens or fewer, the second block of every pair has
// no rows. Halving the weights' traffic buys little at the cap (chapter 06 has the figures):
// the dispatcher measures which version wins at each shape.
#pragma once

#include "5_tma_store.cuh"

namespace gemm8 {

using gemm2::STAGES, gemm2::STAGE_BYTES, gemm2::X_BYTES, gemm2::W_BYTES, gemm4::BM, gemm4::BN, gemm4::BK;
constexpr int CLUSTER = 2, THREADS = gemm4::THREADS, SMEM_BYTES = gemm5::SMEM_BYTES;
constexpr uint16_t BOTH = 0b11; // the multicast's blocks: ranks 0 and 1
// Registers as step 7 divides them: the cluster's ranks and pair bookkeeping would not fit the
// consumers' even share (168) beside 128 accumulators.
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;

// The producer thread of block `rank`: the K steps of its tile at (m0, n0), its x and its half
// of Wg|Wu (multicast) into the ring, each stage once both blocks' consumers handed it back.
__device__ __forceinline__ void produce_tile(gemm3::Ring &r, const CUtensorMap *tx, const CUtensorMap *tg,
                                             const CUtensorMap *tu, int m0, int n0, int ktiles, uint32_t rank)
{
    const CUtensorMap *tw = rank == 0 ? tg : tu;
    for (int kt = 0; kt < ktiles; kt++) {
        mbar_wait(r.empty(), r.phase ^ 1);
        const uint32_t sx = r.stage_addr(), full = r.full();
        mbar_arrive_expect_tx(full, STAGE_BYTES); // x, and both halves: this block's and the other's
        tma_load(sx, tx, kt * BK, m0, full);
        tma_load_multicast(sx + X_BYTES + rank * (W_BYTES / 2), tw, kt * BK, n0, full, BOTH);
        r.advance();
    }
}

// tm: m's tensor map, or null when m's rows cannot take TMA stores (then the direct stores).
template <typename T>
__device__ __forceinline__ void gemm_geglu(const CUtensorMap *tx, const CUtensorMap *tg, const CUtensorMap *tu,
                                           const CUtensorMap *tm, T *m, int M, int K, int N)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    gemm3::Ring ring = gemm3::ring_init(CLUSTER * gemm3::CONSUMER_WARPS);
    cluster_sync(); // both blocks' barriers exist before anything lands on them
    const uint32_t rank = cluster_rank(), other = rank ^ 1;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, group = warp / 4;
    const int tiles_m = (M + BM - 1) / BM, pairs_m = (tiles_m + 1) / 2, tiles_n = (N + BN - 1) / BN;
    const int pairs = pairs_m * tiles_n, ktiles = (K + BK - 1) / BK;
    const int first = (int)cluster_index(), step = (int)cluster_count();

    if (group == 0) { // the producer: one thread issues every load; the rest of its warpgroup idles
        regs_release<PRODUCER_REGS>();
        if (tid != 0) return;
        for (int p = first; p < pairs; p += step) {
            int m0, n0;
            gemm4::tile_origin(p, pairs_m, tiles_n, CLUSTER * BM, BN, &m0, &n0);
            produce_tile(ring, tx, tg, tu, m0 + (int)rank * BM, n0, ktiles, rank);
        }
        for (int s = 0; s < STAGES; s++) { // every stage handed back: no arrival can follow
            mbar_wait(ring.empty(), ring.phase ^ 1);
            ring.advance();
        }
        return;
    }

    regs_claim<CONSUMER_REGS>();
    const int rows = group - 1; // this consumer's 64 rows of each tile: 0 or 1
    const uint32_t boxes = gemm2::smem_base_1024() + STAGES * STAGE_BYTES + rows * (gemm5::OUT_BYTES / 2);
    const auto release_both = [other](const gemm3::Ring &r, int s) {
        const uint32_t empty = r.empty0 + 8 * s;
        mbar_arrive(empty);
        mbar_arrive_peer(peer_shared(empty, other));
    };
    float d[128];
    for (int p = first; p < pairs; p += step) {
        int m0, n0;
        gemm4::tile_origin(p, pairs_m, tiles_n, CLUSTER * BM, BN, &m0, &n0);
        m0 += (int)rank * BM;
        gemm3::consume_tile<T>(ring, d, rows, ktiles, lane, release_both);
        if (m0 + rows * 64 >= M) continue; // past M: nothing to store
        if (tm) gemm5::store_tile<T>(d, tm, boxes, m0, n0, rows, warp, lane);
        else gemm2::store_tile(d, m, M, N, m0, n0, rows, warp, lane);
    }
    // The last stores out of shared memory finish before the block does.
    if (tm && tid % 128 == 0) bulk_wait_all();
#else
    (void)tx, (void)tg, (void)tu, (void)tm, (void)m, (void)M, (void)K, (void)N;
#endif
}

// The tile and boxes the dispatcher launches with (version.cuh).
constexpr gemm_geglu_layout LAYOUT = {BM, BN, BK, BM, BN, gemm5::OUT_BOX, THREADS, SMEM_BYTES, 0};

} // namespace gemm8

GEMM_GEGLU_VERSION(8, multicast, TENSOR_MAPS_AND_M, PAIRS_OF_SMS, 90,
                   "clusters of two blocks; each stage's Wg|Wu tile read once from L2 for both (TMA multicast)")
