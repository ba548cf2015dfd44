// 7_stream_k.cuh: the last waves of tiles split along K between all the SMs (stream-K), so that
// no SM idles while a few finish the last tiles. sm_90a.
//
// What step 6 lacks: the block of SM b takes tiles b, b + 132, b + 264, ... With 688 tiles (512
// tokens, hidden 11008) that is 5.2 tiles an SM: 28 SMs run a sixth tile while 104 wait, and the
// GEMM takes 6 tiles' time for 5.2 tiles' work. With 56 tiles (128 tokens, hidden 3584), 76 of
// the 132 SMs never get one. A tile is 128 x 64 of m whatever the problem, so the waste comes and
// goes with the shape: wave quantization.
//
// The idea (Osama et al., "Stream-K", 2023; CUTLASS's sm90 stream-K scheduler does the same):
//   split    tiles in whole waves but the last go to the blocks as in step 6 (data-parallel);
//            the rest, the last partial wave and one full wave before it, are work counted in
//            steps of K: those tiles' steps, tile after tile, cut into one equal range per block.
//            Every block then has the same number of steps to do, give or take one.
//   parts    a range starts and ends anywhere in a tile, so a tile's K can be split between a
//            few consecutive blocks. Only a block's first piece of work can start inside a tile:
//            that piece (k0 > 0) writes its fp32 accumulators to the block's slot of a scratch
//            buffer and raises the block's flag. The piece that holds the tile's first step
//            (k0 = 0) is its owner: it waits for the flags of the blocks after it that hold the
//            rest of the tile, adds their slots in block order (the same sum on every run),
//            lowers their flags for the next launch and runs the epilogue as step 6 does.
//   waits    the owner's piece is the last of its block's range and the other pieces are the
//            first of theirs, so the owner rarely waits. The grid is at most one block per SM,
//            every block resident at once, so a wait always ends.
// The pieces of a block alternate between the two consumers as step 6's tiles do; a piece is a
// tile with its own range of K, and the ring positions and phases follow from the pieces'
// lengths.
//
// Scratch: per block, a slot of 128 x 128 fp32 accumulators (64 KB) and a flag; the dispatcher
// allocates it zeroed once, and every flag raised in a launch is lowered in it.
//
// What this still lacks: the scratch round trip costs a few microseconds at small shapes, where
// step 6's waves may already be whole; the dispatcher measures which wins at each shape.
#pragma once

#include "6_pingpong.cuh"

namespace gemm7 {

using gemm6::BM, gemm6::BN, gemm6::BK, gemm6::STAGES, gemm6::CONSUMERS, gemm6::THREADS, gemm6::STAGE_BYTES;
using gemm6::X_BYTES, gemm6::OUT_BYTES, gemm6::OUT_BOX, gemm6::SMEM_BYTES;
constexpr int SLOT_FLOATS = BM * 2 * BN; // a consumer's accumulators: 128 rows x (64 gate + 64 up)
constexpr int SCRATCH_PER_BLOCK = SLOT_FLOATS * 4 + 16; // the slot, then the flag (16-byte steps)
// The producer issues copies and needs few registers; the consumers hold 128 accumulators each
// and the pieces' bookkeeping: 40 + 2 x 232 per thread of the three warpgroups fits the 64 K.
using gemm6::PRODUCER_REGS;
constexpr int CONSUMER_REGS = 232;

// Which tiles are data-parallel and which are split, for this grid.
struct split {
    int tiles, ktiles, dp_tiles; // tiles [0, dp_tiles) whole, round robin; the rest split along K
    long long sk_steps;          // steps of K in the split tiles
};

__device__ __forceinline__ split split_of(int tiles, int ktiles, int grid)
{
    const int waves = tiles / grid, rest = tiles % grid;
    // whole waves stay whole; the partial one and one before it are split (nothing when the waves
    // are whole)
    const int dp = rest == 0 ? tiles : waves >= 1 ? (waves - 1) * grid : 0;
    return {tiles, ktiles, dp, (long long)(tiles - dp) * ktiles};
}

// Piece j of block b's work: a tile and its steps [k0, k1); false past the last. Pieces 0 ..
// dp_tiles / grid - 1 are whole tiles; then the block's range of the split steps, cut at tiles.
struct piece {
    int tile, k0, k1;
};

__device__ __forceinline__ long long range_start(const split &s, int b, int grid)
{
    return s.sk_steps * b / grid;
}

// Walks block b's pieces in order: fn(j, piece) for each.
template <typename Fn> __device__ __forceinline__ void for_each_piece(const split &s, int b, int grid, Fn &&fn)
{
    int j = 0;
    for (int tile = b; tile < s.dp_tiles; tile += grid) fn(j++, piece{tile, 0, s.ktiles});
    const long long lo = range_start(s, b, grid), hi = range_start(s, b + 1, grid);
    for (long long it = lo; it < hi;) {
        const int t = (int)(it / s.ktiles), k0 = (int)(it - (long long)t * s.ktiles);
        const int k1 = (int)min((long long)s.ktiles, k0 + (hi - it));
        fn(j++, piece{s.dp_tiles + t, k0, k1});
        it += k1 - k0;
    }
}

// The slot and flag of block b in the scratch buffer.
__device__ __forceinline__ float *slot_of(void *scratch, int b)
{
    return (float *)((char *)scratch + (size_t)b * SCRATCH_PER_BLOCK);
}
__device__ __forceinline__ int *flag_of(void *scratch, int b)
{
    return (int *)((char *)scratch + (size_t)b * SCRATCH_PER_BLOCK + SLOT_FLOATS * 4);
}

// Accumulator i of half h of consumer thread t (0..127) lives at float (h * 16 + i / 4) * 512 +
// 4 t + i % 4 of a slot: each warp's 16-byte stores and loads cover 512 contiguous bytes.
__device__ __forceinline__ size_t slot_index(int t, int h, int i)
{
    return (size_t)(h * 16 + i / 4) * 512 + 4 * t + i % 4;
}

__device__ __forceinline__ void save_partial(const float (&d)[2][64], float *slot, int t, int consumer)
{
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int i = 0; i < 64; i += 4)
            __stcg(reinterpret_cast<float4 *>(slot + slot_index(t, h, i)),
                   make_float4(d[h][i], d[h][i + 1], d[h][i + 2], d[h][i + 3]));
    __threadfence(); // the slot is written before the flag is seen
    named_barrier_sync(1 + consumer, 128);
}

__device__ __forceinline__ void add_partial(float (&d)[2][64], const float *slot, int t)
{
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int i = 0; i < 64; i += 4) {
            const float4 p = __ldcg(reinterpret_cast<const float4 *>(slot + slot_index(t, h, i)));
            d[h][i] += p.x, d[h][i + 1] += p.y, d[h][i + 2] += p.z, d[h][i + 3] += p.w;
        }
}

__device__ __forceinline__ void raise_flag(int *flag)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(1) : "memory");
}
__device__ __forceinline__ void wait_flag(const int *flag)
{
    int v = 0;
    do asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
    while (v == 0);
}

// tg, tu: maps of Wg and Wu in boxes of 64 rows; tm: m's map, or null (then the direct stores).
template <typename T>
__device__ __forceinline__ void gemm_geglu(const CUtensorMap *tx, const CUtensorMap *tg, const CUtensorMap *tu,
                                           const CUtensorMap *tm, T *m, int M, int K, int N, void *scratch)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(8) uint64_t bars[2 * STAGES + CONSUMERS];
    const uint32_t smem0 = gemm2::smem_base_1024();
    const uint32_t full0 = (uint32_t)__cvta_generic_to_shared(bars), empty0 = full0 + 8 * STAGES;
    const uint32_t turn0 = empty0 + 8 * STAGES; // turn[c]: consumer c finished the K loop of a piece
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, group = warp / 4;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const split s = split_of(tiles_m * tiles_n, (K + BK - 1) / BK, (int)gridDim.x);
    const int b = (int)blockIdx.x, grid = (int)gridDim.x;
    if (tid == 0) {
        for (int st = 0; st < STAGES; st++) {
            mbar_init(full0 + 8 * st, 1);  // the producer's arrival (+ the bytes)
            mbar_init(empty0 + 8 * st, 4); // the 4 warps of the consumer that read the stage
        }
        for (int c = 0; c < CONSUMERS; c++) mbar_init(turn0 + 8 * c, 4);
        fence_mbarrier_init();
    }
    __syncthreads();

    if (group == 0) { // the producer: every piece of the block, in order, through the ring
        regs_release<PRODUCER_REGS>();
        if (tid != 0) return;
        int stage = 0;
        uint32_t phase = 0;
        for_each_piece(s, b, grid, [&](int, piece p) {
            int m0, n0;
            gemm4::tile_origin(p.tile, tiles_m, tiles_n, BM, BN, &m0, &n0);
            for (int kt = p.k0; kt < p.k1; kt++) {
                mbar_wait(empty0 + 8 * stage, phase ^ 1); // its reader is done with this stage
                const uint32_t sx = smem0 + stage * STAGE_BYTES, sw = sx + X_BYTES, full = full0 + 8 * stage;
                mbar_arrive_expect_tx(full, STAGE_BYTES); // boxes past the matrix still count in full
                tma_load(sx, tx, kt * BK, m0, full);
                tma_load(sw, tg, kt * BK, n0, full);
                tma_load(sw + gemm6::W_BYTES / 2, tu, kt * BK, n0, full);
                if (++stage == STAGES) stage = 0, phase ^= 1;
            }
        });
    } else { // the consumers
    regs_claim<CONSUMER_REGS>();
    const int consumer = group - 1, other = 1 - consumer, t = tid - 128 * group;
    const uint32_t out = smem0 + STAGES * STAGE_BYTES + consumer * (OUT_BYTES / CONSUMERS);
    float d[2][64];
    long long first = 0; // ring position of the piece's first step
    int mine = 0;        // pieces of this consumer so far
    for_each_piece(s, b, grid, [&](int j, piece p) {
        const long long pos = first;
        first += p.k1 - p.k0;
        if (j % 2 != consumer) return;
        int m0, n0;
        gemm4::tile_origin(p.tile, tiles_m, tiles_n, BM, BN, &m0, &n0);
        // Piece j - 1 was the other consumer's (its piece number mine - 1 + consumer): wait until
        // its K loop is through.
        if (j > 0) mbar_wait(turn0 + 8 * other, (uint32_t)(mine - 1 + consumer) & 1);
        mine++;
        gemm6::consume_steps<T>(d, pos, p.k0, p.k1, smem0, full0, empty0, turn0 + 8 * consumer, lane);
        if (p.k0 > 0) { // a later part of a tile: hand the sums to its owner
            save_partial(d, slot_of(scratch, b), t, consumer);
            if (t == 0) raise_flag(flag_of(scratch, b));
            return;
        }
        // The owner: the blocks after this one whose ranges start inside the tile hold its rest.
        const long long tile_end = (long long)(p.tile - s.dp_tiles + 1) * s.ktiles;
        for (int nb = b + 1; p.k1 < s.ktiles && nb < grid && range_start(s, nb, grid) < tile_end; nb++) {
            if (t == 0) wait_flag(flag_of(scratch, nb));
            named_barrier_sync(1 + consumer, 128);
            add_partial(d, slot_of(scratch, nb), t);
            named_barrier_sync(1 + consumer, 128);
            if (t == 0) *flag_of(scratch, nb) = 0; // for the next launch
        }
        if (tm) gemm6::store_tile_tma<T>(d, tm, out, M, m0, n0, consumer, warp, lane);
        else gemm6::store_tile(d, m, M, N, m0, n0, warp, lane);
    });
    if (tm && tid % 128 == 0) bulk_wait_all(); // the last stores finish before the block does
    }
#else
    (void)tx, (void)tg, (void)tu, (void)tm, (void)m, (void)M, (void)K, (void)N, (void)scratch;
#endif
}

// The tile and boxes the dispatcher launches with (version.cuh).
constexpr gemm_geglu_layout LAYOUT = {BM, BN, BK, BM, BN, OUT_BOX, THREADS, SMEM_BYTES, SCRATCH_PER_BLOCK};

} // namespace gemm7

GEMM_GEGLU_VERSION(7, stream_k, TENSOR_MAPS_M_AND_SCRATCH, EVERY_SM, 90,
                   "the last waves split along K between all the SMs (stream-K), partial sums through a scratch buffer")
