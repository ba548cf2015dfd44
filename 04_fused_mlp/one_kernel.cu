// one_kernel.cu (04_fused_mlp): the rung past decode, the whole MLP forward in one kernel.
//
//   mlp_one_kernel_bf16 / _fp16      y[t, d] = sum_j gelu(x_t . Wg_j) * (x_t . Wu_j) * Wd[d, j]
//     (and _slice64_, _tokens128_ variants; mlp_one_kernel_barrier_*: the same forward with the
//     other hand-off, see the end of this comment)
//
// The GELU is 03_simple_mlp's gelu.cuh, so every rung computes the same function. Arithmetic is
// fp32; the product m is rounded once to the storage type (as every other rung stores it) and
// each output once more.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include "dtype.h"
}
#include "../03_simple_mlp/gelu.cuh"
#include "check.h"
#include "elementwise.cuh"
#include "gemm/ptx.cuh"
#include "gpu.h"
#include "one_kernel.h"

// The decode rung's forward at 8 tokens on the article's 768 -> 3072 takes 8.65 us on an H200
// while its 14.2 MB of weights stream in 3.3 us: two kernels, the wait between them and a graph
// replay cost more than the bytes. This rung does the whole forward in one launch, and m (the
// gated product, [tokens, hidden]) never goes to memory at all (hand-off ONE_KERNEL_ADD).
//
// A unit of work is a slice of hidden: `slice` rows (32 or 64) of Wg and Wu, and the same
// columns of Wd. Everything a slice contributes to y can be computed from that slice alone:
//
//   phase 1  m[:, slice] = gelu(x Wg[slice]^T) * (x Wu[slice]^T), all tokens, into shared memory.
//            The loads and the tensor-core multiply are decode.cu's (read its comment): lane
//            (g, c) loads 16 contiguous bytes of token row g and of weight row g at the same K
//            offset, and hands values 0-3 to one mma.sync m16n8k16 and 4-7 to the next. The
//            block's 8 warps split K (64-value steps) and, from 17 tokens on, the tiles of 16
//            tokens: warp w takes token tiles of group w % G and steps w / G, + 8 / G, ...; their
//            fp32 partial sums meet in shared memory in warp order (the same sum on every run),
//            and the block's threads apply gelu(g) * u and round m to the storage type.
//   phase 2  y += m[:, slice] Wd[:, slice]^T. Wd is [dim, hidden], so a slice's columns are dim
//            short rows of slice values, 64 or 128 contiguous bytes: one or two 16-byte loads per
//            lane per 8 rows of Wd, the lane's chunk covering K 32 of the slice for two mmas, m's
//            fragments read from shared memory in the same order. Warps take 8-row tiles of y's
//            columns in turn, loading the next batch of Wd while multiplying the current one (with
//            slices of 32 the first batch is issued before phase 1, so it arrives while phase 1
//            runs), and add
//            their fp32 partial y into an accumulator in global memory (red.global.add, two
//            values at once on sm_90).
//   finish   every tile of 8 columns of y has a counter; once a warp's additions are done (one
//            fence) it counts itself into each of its tiles, and the warp that brings a tile's
//            count to the number of slices rounds that tile into y, puts zeros back into its
//            accumulator and its counter to 0. So each launch leaves the workspace as it found
//            it, zeroed, and the next launch or graph replay needs no reset.
//
// No block waits for another (only the last adder of a tile reads what the others added, after
// they are done), so the grid needs no co-residency: it is sized to what the GPU holds at once
// (one_kernel_blocks) and walks the slices unit blockIdx.x, + gridDim.x, ... Tokens are padded to
// tiles of 16 in registers and shared memory only: x is read over its first `tokens` rows, y
// written over its first `tokens` rows.
//
// The cost of doing without m in memory: the fp32 additions into y, tokens x dim per slice, i.e.
// tokens / (3 slice) of them per weight value streamed. At 16 tokens and slices of 32 that is
// one 4-byte addition per 6 weight values (12 bytes); at 128 tokens it exceeds the weights' own
// bytes, which is what slices of 64 halve. The additions arrive in no fixed order, so y may
// differ in its last bit from run to run (m does not: its sums are in warp order).
//
// The other hand-off (ONE_KERNEL_BARRIER, mlp_one_kernel_barrier_*, further down): phase 1 writes
// m to global memory, every block meets at one grid-wide barrier, and the down product runs as
// decode_down lays it out (8 rows of Wd per unit, y written directly). It trades the fp32
// additions for the barrier and for phase 2 starting nowhere before phase 1 ends everywhere;
// both are here to be timed side by side.
//
// Rows of x, W past the matrix and K past its end load as zeros; K not a multiple of 8 or
// unaligned bases take an element-by-element load into the same registers.
constexpr int OK_WARPS = 8;         // warps per block
constexpr int OK_SUB = 32;          // rows of hidden phase 1 computes at a time (4 mma tiles of 8)
constexpr int OK_MAX_TILES = ONE_KERNEL_MAX_TOKENS / 16; // tiles of 16 tokens

// Values k .. k + 7 of row `row` of a row-major [n_rows, K] matrix; zeros past its rows or K.
// vec: K is a multiple of 8 and the base 16-byte aligned, so a chunk is wholly inside or past K.
// (The same load as decode.cu's load8, which lives in that file only.)
// CG: load through L2 only (ld.global.cg), for what other blocks wrote during this launch, which
// this SM's L1 does not see.
template <typename T, bool CG = false>
__device__ __forceinline__ uint4 ok_load8(const T *mat, size_t row, size_t n_rows, size_t k, size_t K, bool vec)
{
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row >= n_rows || k >= K) return v;
    const T *p = mat + row * K + k;
    if (vec) return CG ? __ldcg(reinterpret_cast<const uint4 *>(p)) : *reinterpret_cast<const uint4 *>(p);
    T e[8];
#pragma unroll
    for (int i = 0; i < 8; i++) e[i] = k + i < K ? (CG ? __ldcg(p + i) : p[i]) : from_float<T>(0.0f);
    memcpy(&v, e, sizeof v);
    return v;
}

// acc[d] += a, acc[d + 1] += b (d even, the pair inside a row of dim values): one vector
// reduction on sm_90 when dim is even (the pair is then whole and 8-byte aligned), else one or two
// scalar ones. The results are not read: red.global, no round trip.
__device__ __forceinline__ void ok_add_pair(float *acc, size_t d, size_t dim, float a, float b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (dim % 2 == 0) {
        if (d < dim) atomicAdd(reinterpret_cast<float2 *>(acc), make_float2(a, b));
        return;
    }
#endif
    if (d < dim) atomicAdd(acc, a);
    if (d + 1 < dim) atomicAdd(acc + 1, b);
}

// 16 bytes of shared memory, read where it stands in the code: phase 2's m fragments do not
// change while the slice is multiplied, and the compiler would otherwise keep every one of them
// in registers for the whole phase (fine for one part of 32 rows, spills for two).
__device__ __forceinline__ uint4 ok_lds16(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"((uint32_t)__cvta_generic_to_shared(p))
                 : "memory"); // after the barrier that published m
    return v;
}

// Phase 2's loads of one batch: for U tiles of 8 rows of Wd (tiles n0, n0 + OK_WARPS, ...), the
// lane's chunk of each 32-wide part of the slice. Rows past dim load nothing (zeros).
template <typename T, int U, int SUBS>
__device__ __forceinline__ void ok_load_down(uint4 (&w)[U][SUBS], const T *wd, size_t n0, size_t dim, size_t hidden,
                                             size_t j0, bool vec)
{
    const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int s = 0; s < SUBS; s++)
            w[u][s] = ok_load8(wd, (n0 + (size_t)u * OK_WARPS) * 8 + g, dim, j0 + (size_t)s * OK_SUB + c * 8, hidden, vec);
}

// The dot products of one warp: acc_a[i][t] (and acc_b[i][t], GATED) += token tile group * MTW + i
// of `a` (its first `tokens` rows, K values each) against rows r0 + 8 t .. r0 + 8 t + 7 of wa (and
// wb), over the warp's 64-value steps of K: share, share + k_shares, ... Instruction h of step s
// reads values s * 64 + h * 32 + [0, 32) of each row: the four lanes of a row cover 64
// contiguous bytes. CG: `a` was written during this launch (read it from L2).
template <typename T, bool GATED, int NT, int MTW, bool CG>
__device__ __forceinline__ void ok_tile_dots(const T *a, int tokens, const T *wa, const T *wb, size_t r0, size_t n_rows,
                                             size_t K, bool vec, int mt, int group, int share, int k_shares,
                                             float (&acc_a)[MTW][NT][4], float (&acc_b)[MTW][NT][4])
{
    const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
#pragma unroll
    for (int i = 0; i < MTW; i++)
#pragma unroll
        for (int t = 0; t < NT; t++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc_a[i][t][e] = acc_b[i][t][e] = 0.0f;
    if (group * MTW >= mt) return;
    const size_t steps = (K + 63) / 64;
    for (size_t s = share; s < steps; s += k_shares) {
        uint4 wa_f[2][NT], wb_f[2][NT];
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int t = 0; t < NT; t++) {
                const size_t row = r0 + 8 * t + g, k = s * 64 + h * 32 + c * 8;
                wa_f[h][t] = ok_load8(wa, row, n_rows, k, K, vec);
                wb_f[h][t] = GATED ? ok_load8(wb, row, n_rows, k, K, vec) : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
        for (int i = 0; i < MTW; i++) {
            const int m = group * MTW + i;
            if (m >= mt) break;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const size_t k = s * 64 + h * 32 + c * 8;
                const uint4 lo = ok_load8<T, CG>(a, (size_t)(m * 16 + g), (size_t)tokens, k, K, vec);
                const uint4 hi = ok_load8<T, CG>(a, (size_t)(m * 16 + g + 8), (size_t)tokens, k, K, vec);
                const uint32_t a0[4] = {lo.x, hi.x, lo.y, hi.y};
                const uint32_t a1[4] = {lo.z, hi.z, lo.w, hi.w};
#pragma unroll
                for (int t = 0; t < NT; t++) {
                    mma_16816<T>(acc_a[i][t], a0, wa_f[h][t].x, wa_f[h][t].y);
                    mma_16816<T>(acc_a[i][t], a1, wa_f[h][t].z, wa_f[h][t].w);
                    if (GATED) {
                        mma_16816<T>(acc_b[i][t], a0, wb_f[h][t].x, wb_f[h][t].y);
                        mma_16816<T>(acc_b[i][t], a1, wb_f[h][t].z, wb_f[h][t].w);
                    }
                }
            }
        }
    }
}

// The K shares of the block's warps meet in shared memory, in share order (the same sum on every
// run), in the accumulators' order: sum_a[m][t][register][lane]. The first round's stores come
// after the barrier that closed the previous epilogue (which read the sums); every thread leaves
// through at least one barrier.
template <bool GATED, int NT, int MTW, int TILES>
__device__ __forceinline__ void ok_meet(float (&sum_a)[TILES][4][4][32], float (&sum_b)[TILES][4][4][32],
                                        const float (&acc_a)[MTW][NT][4], const float (&acc_b)[MTW][NT][4], int mt,
                                        int group, int share, int k_shares)
{
    const int lane = threadIdx.x % 32;
    for (int r = 0; r < k_shares; r++) {
        if (share == r)
#pragma unroll
            for (int i = 0; i < MTW; i++) {
                const int m = group * MTW + i;
                if (m >= mt) break;
#pragma unroll
                for (int t = 0; t < NT; t++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        sum_a[m][t][e][lane] = (r == 0 ? 0.0f : sum_a[m][t][e][lane]) + acc_a[i][t][e];
                        if (GATED) sum_b[m][t][e][lane] = (r == 0 ? 0.0f : sum_b[m][t][e][lane]) + acc_b[i][t][e];
                    }
            }
        __syncthreads();
    }
}

// The kernel. MTW: token tiles a warp carries through phase 1 (1, or 2 from 17 tokens on);
// TILES: the most token tiles (16 tokens each) the kernel takes; SUBS: 32-row parts of a slice.
template <typename T, int MTW, int TILES, int SUBS>
__device__ __forceinline__ void one_kernel_body(const T *x, const T *wg, const T *wu, const T *wd, T *y, float *acc_y,
                                                unsigned *counters, int tokens, size_t dim, size_t hidden, bool vec_in,
                                                bool vec_down)
{
    constexpr int SLICE = OK_SUB * SUBS;
    constexpr int U = SUBS == 1 ? 8 : 2; // tiles of Wd rows per batch of phase 2's loads
    // phase 1's sums in the accumulators' order: [token tile][weight tile][register][lane]
    __shared__ float gate_sum[TILES][4][4][32], up_sum[TILES][4][4][32];
    // m of the slice, rounded: [part][token][32 values] (16-byte chunks: 4 per row)
    __shared__ uint4 m_s[SUBS][TILES * 16][4];

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int mt = (tokens + 15) / 16; // token tiles in use
    int groups = 1;                    // token-tile groups: a power of two that covers mt
    while (groups * MTW < mt) groups *= 2;
    const int k_shares = OK_WARPS / groups, group = warp % groups, share = warp / groups;
    const size_t units = (hidden + SLICE - 1) / SLICE, y_tiles = (dim + 7) / 8;
    const size_t batch_stride = (size_t)OK_WARPS * U;

    for (size_t unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const size_t j0 = unit * SLICE;
        // Phase 2's first batch of Wd, on its way while phase 1 runs (with slices of 64, once
        // phase 1 is done: held through phase 1 it costs more registers than there are).
        uint4 wcur[U][SUBS];
        if (SUBS == 1) ok_load_down<T, U, SUBS>(wcur, wd, (size_t)warp, dim, hidden, j0, vec_down);

        // ---- phase 1: m[:, j0 .. j0 + SLICE) into m_s ----
#pragma unroll 1
        for (int sub = 0; sub < SUBS; sub++) {
            const size_t r0 = j0 + (size_t)sub * OK_SUB; // first row of Wg, Wu
            float ga[MTW][4][4], ua[MTW][4][4];
            ok_tile_dots<T, true, 4, MTW, false>(x, tokens, wg, wu, r0, hidden, dim, vec_in, mt, group, share, k_shares,
                                                 ga, ua);
            ok_meet<true, 4, MTW, TILES>(gate_sum, up_sum, ga, ua, mt, group, share, k_shares);
            // The epilogue: m = gelu(g) * u, rounded, at (token, row of the part). Rows past the
            // tokens are zeros (their x rows loaded as zeros already).
            for (int o = threadIdx.x; o < mt * 512; o += blockDim.x) {
                const int m = o / 512, t = o / 128 % 4, e = o / 32 % 4, l = o % 32;
                const int tok = m * 16 + l / 4 + (e >= 2 ? 8 : 0), col = t * 8 + 2 * (l % 4) + e % 2;
                const float v = tok < tokens ? gelu_tanh(gate_sum[m][t][e][l]) * up_sum[m][t][e][l] : 0.0f;
                reinterpret_cast<T *>(&m_s[sub][tok][0])[col] = from_float<T>(v);
            }
            __syncthreads();
        }

        if (SUBS > 1) ok_load_down<T, U, SUBS>(wcur, wd, (size_t)warp, dim, hidden, j0, vec_down);
        // ---- phase 2: acc_y += m[:, slice] Wd[:, slice]^T, warp w on tiles w, w + 8, ... ----
        for (size_t nb = warp; nb < y_tiles; nb += batch_stride) {
            uint4 wnext[U][SUBS];
            ok_load_down<T, U, SUBS>(wnext, wd, nb + batch_stride, dim, hidden, j0, vec_down);
#pragma unroll
            for (int u = 0; u < U; u++) {
                const size_t n = nb + (size_t)u * OK_WARPS;
                if (n >= y_tiles) break;
                const size_t d = n * 8 + 2 * c; // this lane's pair of columns of y
#pragma unroll
                for (int m = 0; m < TILES; m++) {
                    if (m >= mt) break;
                    float a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                    for (int s = 0; s < SUBS; s++) {
                        const uint4 lo = SUBS == 1 ? m_s[s][m * 16 + g][c] : ok_lds16(&m_s[s][m * 16 + g][c]);
                        const uint4 hi = SUBS == 1 ? m_s[s][m * 16 + g + 8][c] : ok_lds16(&m_s[s][m * 16 + g + 8][c]);
                        const uint32_t a0[4] = {lo.x, hi.x, lo.y, hi.y};
                        const uint32_t a1[4] = {lo.z, hi.z, lo.w, hi.w};
                        mma_16816<T>(a, a0, wcur[u][s].x, wcur[u][s].y);
                        mma_16816<T>(a, a1, wcur[u][s].z, wcur[u][s].w);
                    }
                    const size_t t_lo = (size_t)(m * 16 + g), t_hi = t_lo + 8;
                    if (t_lo < (size_t)tokens) ok_add_pair(acc_y + t_lo * dim + d, d, dim, a[0], a[1]);
                    if (t_hi < (size_t)tokens) ok_add_pair(acc_y + t_hi * dim + d, d, dim, a[2], a[3]);
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int s = 0; s < SUBS; s++) wcur[u][s] = wnext[u][s];
        }

        // ---- finish: count this slice into the warp's tiles of y; the last one rounds it ----
        // Each lane's additions are ordered before the count by its fence, and every lane's
        // before any lane's count by the warp barrier.
        __threadfence();
        __syncwarp();
        for (size_t base = 0; warp + base * OK_WARPS < y_tiles; base += 32) {
            const size_t n = warp + (base + lane) * OK_WARPS;
            bool last = false;
            if (n < y_tiles) last = atomicAdd(&counters[n], 1u) == (unsigned)(units - 1);
            unsigned lasts = __ballot_sync(0xffffffffu, last);
            if (lasts) __threadfence(); // every other slice's additions are in: read them after
            __syncwarp();
            while (lasts) {
                const int l = __ffs((int)lasts) - 1;
                lasts &= lasts - 1;
                const size_t tile = warp + (base + (size_t)l) * OK_WARPS;
                for (int e = lane; e < tokens * 8; e += 32) {
                    const size_t t = (size_t)(e / 8), d = tile * 8 + (size_t)(e % 8);
                    if (d >= dim) continue;
                    float *p = acc_y + t * dim + d;
                    y[t * dim + d] = from_float<T>(__ldcg(p)); // from L2, where the additions happened
                    __stcg(p, 0.0f);
                }
                if (lane == 0) counters[tile] = 0u;
            }
        }
    }
}

// ---- the other hand-off: m through global memory and one grid-wide barrier ----------------
//
// one_kernel_barrier_body: phase 1 as above, slices of 32, but m goes to global memory (L2, at a
// few tokens); then every block meets at one barrier; then the down product as decode_down lays
// it out: units of 8 rows of Wd over all of hidden, the warps splitting K, y written directly.
// No fp32 additions into y, no counters per tile; instead the barrier, and phase 2 cannot start
// anywhere before phase 1 is done everywhere. The grid is at most what the GPU holds at once
// (one_kernel_blocks), so every block is resident and the barrier cannot wait for a block that
// never starts.
//
// The barrier: bar[0] counts arrivals, bar[1] departures; the last block to depart puts both
// back to 0, so every launch finds them zero. Thread 0 of each block arrives after a fence (the
// block's m stores, ordered before it by __syncthreads, are visible GPU-wide before its count),
// and reads the count with volatile loads, which go to L2.
__device__ __forceinline__ void ok_grid_barrier(unsigned *bar)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(&bar[0], 1u);
        while (*(volatile unsigned *)&bar[0] < gridDim.x) __nanosleep(32);
        __threadfence();
        if (atomicAdd(&bar[1], 1u) == gridDim.x - 1) { // every block is past the wait: reset
            atomicExch(&bar[0], 0u);
            atomicExch(&bar[1], 0u);
        }
    }
    __syncthreads();
}

template <typename T, int MTW, int TILES>
__device__ __forceinline__ void one_kernel_barrier_body(const T *x, const T *wg, const T *wu, const T *wd, T *y, T *m,
                                                        unsigned *bar, int tokens, size_t dim, size_t hidden,
                                                        bool vec_in, bool vec_m)
{
    __shared__ float sum_a[TILES][4][4][32], sum_b[TILES][4][4][32];
    const int warp = threadIdx.x / 32;
    const int mt = (tokens + 15) / 16;
    int groups = 1;
    while (groups * MTW < mt) groups *= 2;
    const int k_shares = OK_WARPS / groups, group = warp % groups, share = warp / groups;
    const size_t up_units = (hidden + OK_SUB - 1) / OK_SUB, y_tiles = (dim + 7) / 8;

    // phase 1: m[:, j0 .. j0 + 32) = gelu(x Wg^T) * (x Wu^T), to global memory
    for (size_t unit = blockIdx.x; unit < up_units; unit += gridDim.x) {
        const size_t j0 = unit * OK_SUB;
        float ga[MTW][4][4], ua[MTW][4][4];
        ok_tile_dots<T, true, 4, MTW, false>(x, tokens, wg, wu, j0, hidden, dim, vec_in, mt, group, share, k_shares, ga,
                                             ua);
        ok_meet<true, 4, MTW, TILES>(sum_a, sum_b, ga, ua, mt, group, share, k_shares);
        for (int o = threadIdx.x; o < mt * 512; o += blockDim.x) {
            const int tm = o / 512, t = o / 128 % 4, e = o / 32 % 4, l = o % 32;
            const size_t tok = (size_t)(tm * 16 + l / 4 + (e >= 2 ? 8 : 0)), j = j0 + t * 8 + 2 * (l % 4) + e % 2;
            if (tok < (size_t)tokens && j < hidden)
                m[tok * hidden + j] = from_float<T>(gelu_tanh(sum_a[tm][t][e][l]) * sum_b[tm][t][e][l]);
        }
        __syncthreads();
    }

    ok_grid_barrier(bar);

    // phase 2: y[:, n0 .. n0 + 8) = m Wd[n0 .. n0 + 8)^T
    for (size_t unit = blockIdx.x; unit < y_tiles; unit += gridDim.x) {
        const size_t n0 = unit * 8;
        float ya[MTW][1][4], unused[MTW][1][4];
        ok_tile_dots<T, false, 1, MTW, true>(m, tokens, wd, nullptr, n0, dim, hidden, vec_m, mt, group, share, k_shares,
                                             ya, unused);
        ok_meet<false, 1, MTW, TILES>(sum_a, sum_b, ya, unused, mt, group, share, k_shares);
        for (int o = threadIdx.x; o < mt * 128; o += blockDim.x) {
            const int tm = o / 128, e = o / 32 % 4, l = o % 32;
            const size_t tok = (size_t)(tm * 16 + l / 4 + (e >= 2 ? 8 : 0)), d = n0 + 2 * (l % 4) + e % 2;
            if (tok < (size_t)tokens && d < dim) y[tok * dim + d] = from_float<T>(sum_a[tm][0][e][l]);
        }
        __syncthreads();
    }
}

// The kernels by dtype, token count and slice: mlp_one_kernel_bf16 (1..16 tokens, slices of 32
// rows of hidden), mlp_one_kernel_slice64_bf16 (slices of 64), mlp_one_kernel_tokens128_bf16
// (17..128 tokens), mlp_one_kernel_tokens128_slice64_bf16, and the same in fp16.
#define ONE_KERNEL(name, T, MTW, TILES, SUBS)                                                              \
    extern "C" __global__ void __launch_bounds__(32 * OK_WARPS, 1)                                          \
        mlp_one_kernel_##name(const T *x, const T *wg, const T *wu, const T *wd, T *y, float *acc_y,        \
                              unsigned *counters, int tokens, size_t dim, size_t hidden, bool vec_in,        \
                              bool vec_down)                                                                 \
    {                                                                                                        \
        one_kernel_body<T, MTW, TILES, SUBS>(x, wg, wu, wd, y, acc_y, counters, tokens, dim, hidden, vec_in, \
                                             vec_down);                                                      \
    }
#define ONE_KERNELS(name, T)                                  \
    ONE_KERNEL(name, T, 1, 1, 1)                              \
    ONE_KERNEL(slice64_##name, T, 1, 1, 2)                    \
    ONE_KERNEL(tokens128_##name, T, 2, OK_MAX_TILES, 1)       \
    ONE_KERNEL(tokens128_slice64_##name, T, 2, OK_MAX_TILES, 2)
ONE_KERNELS(bf16, __nv_bfloat16)
ONE_KERNELS(fp16, __half)

// mlp_one_kernel_barrier_bf16 (1..16 tokens), mlp_one_kernel_barrier_tokens128_bf16 (17..128),
// and in fp16.
#define ONE_KERNEL_BARRIER(name, T, MTW, TILES)                                                            \
    extern "C" __global__ void __launch_bounds__(32 * OK_WARPS, 1)                                          \
        mlp_one_kernel_barrier_##name(const T *x, const T *wg, const T *wu, const T *wd, T *y, T *m,        \
                                      unsigned *bar, int tokens, size_t dim, size_t hidden, bool vec_in,     \
                                      bool vec_m)                                                            \
    {                                                                                                        \
        one_kernel_barrier_body<T, MTW, TILES>(x, wg, wu, wd, y, m, bar, tokens, dim, hidden, vec_in, vec_m); \
    }
ONE_KERNEL_BARRIER(bf16, __nv_bfloat16, 1, 1)
ONE_KERNEL_BARRIER(tokens128_bf16, __nv_bfloat16, 2, OK_MAX_TILES)
ONE_KERNEL_BARRIER(fp16, __half, 1, 1)
ONE_KERNEL_BARRIER(tokens128_fp16, __half, 2, OK_MAX_TILES)

extern "C" int one_kernel_supported(dtype_t t, size_t tokens, size_t dim, size_t hidden, char *why, size_t why_len)
{
    if (tokens < 1 || tokens > ONE_KERNEL_MAX_TOKENS) {
        snprintf(why, why_len, "%zu tokens; the one-kernel forward keeps up to %d tokens (8 tensor-core tiles "
                 "of 16) in registers and shared memory", tokens, ONE_KERNEL_MAX_TOKENS);
        return 0;
    }
    if (t != DTYPE_BF16 && t != DTYPE_FP16) {
        snprintf(why, why_len, "%s; the one-kernel forward multiplies on tensor cores (bf16 or fp16 operands)",
                 dtype_name(t));
        return 0;
    }
    if (dim == 0 || hidden == 0 || dim > 0x7fffffff || hidden > 0x7fffffff) {
        snprintf(why, why_len, "dim %zu, hidden %zu: each must be 1 .. 2^31 - 1", dim, hidden);
        return 0;
    }
    return 1;
}

extern "C" int one_kernel_runs_here(void) { return gpu_compute_capability() >= 80; }

// The barrier's two counters (padded to 256 bytes), the counters of the tiles of y (one per 8
// columns, padded to 256 bytes), then the fp32 accumulator of y, [tokens, dim]. All zeros between
// launches, so a workspace sized for more tokens or a larger dim serves smaller problems too.
enum { OK_BARRIER_BYTES = 256 };
static size_t counter_bytes(size_t dim) { return ((dim + 7) / 8 * sizeof(unsigned) + 255) / 256 * 256; }

extern "C" size_t one_kernel_workspace_bytes(size_t tokens, size_t dim)
{
    return OK_BARRIER_BYTES + counter_bytes(dim) + tokens * dim * sizeof(float);
}

// Slices of 64 halve the fp32 additions into y; slices of 32 make twice the units, which a
// small hidden needs to give every SM work. 64 where there are tokens enough for the additions to
// weigh (more than 16) and slices enough for two per SM.
extern "C" int one_kernel_slice_rows(size_t tokens, size_t dim, size_t hidden)
{
    (void)dim;
    return tokens > 16 && (hidden + 63) / 64 >= 2 * (size_t)gpu_multiprocessors() ? 64 : 32;
}

// [barrier][tokens > 16][slice 64][fp16]; the barrier kernels take slices of 32 only
static const void *one_kernel_fn(dtype_t t, size_t tokens, int slice_rows, one_kernel_handoff handoff)
{
    static const void *const kernels[2][2][2][2] = {
        {{{(const void *)mlp_one_kernel_bf16, (const void *)mlp_one_kernel_fp16},
          {(const void *)mlp_one_kernel_slice64_bf16, (const void *)mlp_one_kernel_slice64_fp16}},
         {{(const void *)mlp_one_kernel_tokens128_bf16, (const void *)mlp_one_kernel_tokens128_fp16},
          {(const void *)mlp_one_kernel_tokens128_slice64_bf16, (const void *)mlp_one_kernel_tokens128_slice64_fp16}}},
        {{{(const void *)mlp_one_kernel_barrier_bf16, (const void *)mlp_one_kernel_barrier_fp16},
          {(const void *)mlp_one_kernel_barrier_bf16, (const void *)mlp_one_kernel_barrier_fp16}},
         {{(const void *)mlp_one_kernel_barrier_tokens128_bf16, (const void *)mlp_one_kernel_barrier_tokens128_fp16},
          {(const void *)mlp_one_kernel_barrier_tokens128_bf16, (const void *)mlp_one_kernel_barrier_tokens128_fp16}}}};
    return kernels[handoff == ONE_KERNEL_BARRIER][tokens > 16][slice_rows == 64][t == DTYPE_FP16];
}

// The blocks the GPU holds at once of this kernel, asked once per kernel (the device is fixed
// for the process).
static size_t blocks_at_once(dtype_t t, size_t tokens, int slice_rows, one_kernel_handoff handoff)
{
    static int known[2][2][2][2]; // 0: not asked yet
    int *n = &known[handoff == ONE_KERNEL_BARRIER][tokens > 16][slice_rows == 64][t == DTYPE_FP16];
    if (*n == 0) {
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, one_kernel_fn(t, tokens, slice_rows, handoff),
                                                                 32 * OK_WARPS, 0));
        if (*n < 1) *n = 1;
    }
    return (size_t)*n * (size_t)gpu_multiprocessors();
}

// One block per unit of work up to what the GPU holds at once: the slices of hidden, and with the
// barrier also the tiles of 8 rows of Wd of the down product. The barrier kernels need the cap:
// every block must be resident to arrive.
extern "C" size_t one_kernel_blocks(dtype_t t, size_t tokens, size_t dim, size_t hidden, int slice_rows,
                                    one_kernel_handoff handoff)
{
    if (handoff == ONE_KERNEL_BARRIER) slice_rows = 32;
    if (slice_rows != 64) slice_rows = slice_rows == 0 ? one_kernel_slice_rows(tokens, dim, hidden) : 32;
    size_t units = (hidden + (size_t)slice_rows - 1) / (size_t)slice_rows;
    if (handoff == ONE_KERNEL_BARRIER && (dim + 7) / 8 > units) units = (dim + 7) / 8;
    const size_t at_once = blocks_at_once(t, tokens, slice_rows, handoff);
    return units < at_once ? units : at_once;
}

extern "C" void launch_one_kernel_mlp(dtype_t t, const void *x, const void *wg, const void *wu, const void *wd,
                                      void *y, size_t tokens, size_t dim, size_t hidden, one_kernel_handoff handoff,
                                      int slice_rows, void *workspace, void *m, cudaStream_t stream)
{
    char why[256];
    if (!one_kernel_supported(t, tokens, dim, hidden, why, sizeof why)) {
        program_error("one-kernel forward: %s", why);
        exit(EXIT_BAD_INPUT);
    }
    if (handoff != ONE_KERNEL_ADD && handoff != ONE_KERNEL_BARRIER) {
        program_error("one-kernel forward: hand-off %d; there are ONE_KERNEL_ADD and ONE_KERNEL_BARRIER", (int)handoff);
        exit(EXIT_BAD_INPUT);
    }
    if (handoff == ONE_KERNEL_BARRIER) slice_rows = 32;
    if (slice_rows == 0) slice_rows = one_kernel_slice_rows(tokens, dim, hidden);
    if (slice_rows != 32 && slice_rows != 64) {
        program_error("one-kernel forward: slices of %d rows of hidden; there are slices of 32 and of 64", slice_rows);
        exit(EXIT_BAD_INPUT);
    }
    if (!one_kernel_runs_here()) {
        program_error("one-kernel forward: mma.sync with bf16 or fp16 operands needs an sm_80 or newer GPU");
        exit(EXIT_BAD_INPUT);
    }
    if (!workspace || !aligned16(workspace)) {
        program_error("one-kernel forward: the workspace must be a 16-byte aligned device buffer");
        exit(EXIT_BAD_INPUT);
    }
    if (handoff == ONE_KERNEL_BARRIER && !m) {
        program_error("one-kernel forward: the barrier hand-off needs a buffer for m (tokens x hidden)");
        exit(EXIT_BAD_INPUT);
    }
    unsigned *bar = (unsigned *)workspace;
    unsigned *counters = (unsigned *)((char *)workspace + OK_BARRIER_BYTES);
    float *acc_y = (float *)((char *)workspace + OK_BARRIER_BYTES + counter_bytes(dim));
    bool vec_in = dim % 8 == 0 && aligned16(x) && aligned16(wg) && aligned16(wu);
    int tok = (int)tokens;
    const dim3 grid((unsigned)one_kernel_blocks(t, tokens, dim, hidden, slice_rows, handoff)), block(32 * OK_WARPS);
    const void *kernel = one_kernel_fn(t, tokens, slice_rows, handoff);
    if (handoff == ONE_KERNEL_BARRIER) {
        bool vec_m = hidden % 8 == 0 && aligned16(wd) && aligned16(m);
        void *args[] = {&x, &wg, &wu, &wd, &y, &m, &bar, &tok, &dim, &hidden, &vec_in, &vec_m};
        CUDA_CHECK(cudaLaunchKernel(kernel, grid, block, args, 0, stream));
    } else {
        bool vec_down = hidden % 8 == 0 && aligned16(wd);
        void *args[] = {&x, &wg, &wu, &wd, &y, &acc_y, &counters, &tok, &dim, &hidden, &vec_in, &vec_down};
        CUDA_CHECK(cudaLaunchKernel(kernel, grid, block, args, 0, stream));
    }
}
