// decode.cu (04_fused_mlp): the decode rung's kernels, weight streaming for a few tokens.
//
//   decode_gate_up_bf16 / _fp16     m[t, j] = gelu(x_t . Wg_j) * (x_t . Wu_j)
//   decode_down_bf16 / _fp16        y[t, d] = m_t . Wd_d
//
// The GELU is 03_simple_mlp's gelu.cuh, so every rung computes the same function. Arithmetic is
// fp32; each output is rounded once to the storage type.
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
#include "decode.h"
#include "elementwise.cuh"
#include "gemm/ptx.cuh"
#include "gpu.h"

// At 8 tokens the MLP does 0.11 GFLOP and reads 14 MB of weights, so the kernel's one job is to
// keep HBM busy. Scalar FMAs (one per weight, per token) cannot: with each bf16 value widened
// to fp32 first they take about 30 instructions per 16 bytes of weights, so such a kernel is
// bound by issuing instructions, and the bytes wait. Here the tensor
// cores do the arithmetic: one mma.sync m16n8k16 multiplies 16 tokens (padded with zeros) by 8
// weight rows over 16 of K, 2048 multiply-adds in one instruction, operands straight from
// registers as loaded, no conversion.
//
// The loads are the whole trick. mma wants lane (g = lane / 4, c = lane % 4) to hold, for
// token row g (and g + 8), the K pairs {2c, 2c+1} and {2c+8, 2c+9}, and for weight row g the
// same K pairs. A dot product does not care in which order K is summed, so we choose the order:
// the lane loads 16 contiguous bytes (8 values) of token row g and of weight row g at the same
// K offset, and hands values 0-3 to one mma and 4-7 to the next as if they were its {2c, 2c+1,
// 2c+8, 2c+9}. x and W go through the same relabelling, so every product pairs the right
// values, and every load is one 16-byte instruction, the four lanes of a row covering 64
// contiguous bytes.
//
//   unit   8 or 16 weight rows (one or two mma N tiles) over all of K, for all tokens; the
//          blocks of a cluster split K (split, 1, 2 or 4 blocks: rank r's share is every
//          split-th step from step r * warps on), and a block's warps split its share: warp w
//          takes 64-value steps w, w + warps, ... of it. Their fp32 partial sums meet in shared
//          memory, ranks 1.. add theirs into rank 0's shared memory, and rank 0's threads, one
//          output each, apply the epilogue: gelu(g) * u (gate_up, Wg and Wu side by side: only m
//          is written) or the plain sum (down). With 16 rows, each x fragment loaded serves both
//          tiles. decode_plan_for picks the unit and the split for each kernel
//   grid   persistent: about 16 warps per SM, each cluster walking units clusterIdx, +
//          clusters, ...; every cluster gets the same number of units (the grid is sized so), so
//          no SM waits on a last, lone wave of units. A block's sums of one unit go to one of
//          two shared buffers, so the next unit's loads are issued while they are reduced
//   loads  each lane loads decode_unroll steps of all its operands before the first mma, so a
//          warp has up to 3 x 4 x 16 bytes of weights in flight per lane (8-row units), 2 x 8 x 16
//          (16-row units)
//   launch the down kernel is a programmatic dependent launch (sm_90): it is scheduled while
//          gate_up runs, loads its first weights, and only then waits for m (see
//          grid_dependency_wait)
// Rows of x, W past the matrix and K past its end load as zeros; K not a multiple of 8 or
// unaligned bases take an element-by-element load into the same registers.
constexpr int DECODE_MAX_WARPS = 8; // warps per block (fewer when K has few steps)
constexpr int DECODE_MAX_SPLIT = 4; // blocks of a cluster that share a unit's K
constexpr int DECODE_WARPS_PER_SM = 16;
// 64-value steps of K per warp per round: what fits the registers with one tile of 8 weight rows
// per unit, or two
__host__ __device__ constexpr int decode_unroll(int tiles) { return tiles == 1 ? 3 : 2; }
// The rows of x (of m, for the down kernel) that a kernel reads: up to 8 tokens, only the
// tokens' own (the lanes of the others load nothing, and at a few tokens fewer loads win); from
// 9, the whole tile of 16, so that the lanes of a warp load alike (at 13 tokens rows 13-15 too).
__host__ __device__ constexpr int decode_x_rows(int tokens) { return tokens <= 8 ? tokens : 16; }

// Values k .. k + 7 of row `row` of a row-major [n_rows, K] matrix; zeros past its rows or K.
// vec: K is a multiple of 8 and the base 16-byte aligned, so a chunk is wholly inside or past K.
template <typename T>
__device__ __forceinline__ uint4 load8(const T *mat, size_t row, size_t n_rows, size_t k, size_t K, bool vec)
{
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row >= n_rows || k >= K) return v;
    const T *p = mat + row * K + k;
    if (vec) return *reinterpret_cast<const uint4 *>(p);
    T e[8];
#pragma unroll
    for (int i = 0; i < 8; i++) e[i] = k + i < K ? p[i] : from_float<T>(0.0f);
    memcpy(&v, e, sizeof v);
    return v;
}

// Programmatic dependent launch (sm_90): the kernel after us may start now; and: wait here until
// the kernel before us has completed. Both are no-ops without a programmatic launch.
__device__ __forceinline__ void grid_dependents_launch(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_dependency_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Timeline stamps, for bench/decode_timeline. A profiler shows one duration per kernel; to see
// inside the decode forward, thread 0 of each of the first DECODE_STAMP_BLOCKS blocks writes the
// GPU's nanosecond clock (%globaltimer: one clock for all SMs) at each event of decode.h's
// DECODE_STAMP_* list, and its SM's number, into `stamps` when the launcher was given a buffer
// (the stages give none: then this is one test of a null pointer).
__device__ __forceinline__ void decode_stamp(unsigned long long *stamps, int event)
{
    if (!stamps || threadIdx.x != 0 || blockIdx.x >= DECODE_STAMP_BLOCKS) return;
    unsigned long long now;
    unsigned sm;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    stamps[(size_t)blockIdx.x * DECODE_STAMP_SLOTS + event] = now;
    stamps[(size_t)blockIdx.x * DECODE_STAMP_SLOTS + DECODE_STAMP_SM] = sm;
}

// One round of a warp: the steps s0, s0 + stride, ... (decode_unroll(TILES) of them) of the unit
// whose first weight row is n0, its TILES tiles of 8 rows each.
template <typename T, bool GATED, int TILES>
__device__ __forceinline__ void decode_round(const T *x, const T *wa, const T *wb, int x_rows, size_t K, size_t rows,
                                             bool vec, size_t n0, size_t s0, size_t stride, float (&acc_a)[TILES][4],
                                             float (&acc_b)[TILES][4], bool &waited, unsigned long long *stamps)
{
    constexpr int U = decode_unroll(TILES);
    const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const size_t t_lo = g, t_hi = g + 8; // the two token rows of this lane's mma fragments
    uint4 w_a[U][2][TILES], w_b[U][2][TILES], x_lo[U][2], x_hi[U][2];
    // Instruction h of step s reads values s * 64 + h * 32 + [0, 32) of each row: the four
    // lanes of a row cover 64 contiguous bytes, two whole 32-byte sectors.
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int t = 0; t < TILES; t++) {
                const size_t row = n0 + 8 * t + g, k = (s0 + (size_t)u * stride) * 64 + h * 32 + c * 8; // past K: zeros
                w_a[u][h][t] = load8(wa, row, rows, k, K, vec);
                w_b[u][h][t] = GATED ? load8(wb, row, rows, k, K, vec) : make_uint4(0, 0, 0, 0);
            }
    // The weights do not depend on the kernel before us; x may (the down kernel's x is the
    // gate_up kernel's m). Launched as a programmatic dependent, this kernel starts while that
    // one finishes, its first weights already on the way; here it waits for the kernel before
    // to complete and its writes to be visible (a no-op otherwise).
    if (!waited) {
        decode_stamp(stamps, DECODE_STAMP_ISSUED);
        grid_dependency_wait();
        decode_stamp(stamps, DECODE_STAMP_WAITED);
        waited = true;
    }
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const size_t k = (s0 + (size_t)u * stride) * 64 + h * 32 + c * 8;
            x_lo[u][h] = load8(x, t_lo, (size_t)x_rows, k, K, vec);
            x_hi[u][h] = load8(x, t_hi, (size_t)x_rows, k, K, vec);
        }
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const uint32_t a0[4] = {x_lo[u][h].x, x_hi[u][h].x, x_lo[u][h].y, x_hi[u][h].y};
            const uint32_t a1[4] = {x_lo[u][h].z, x_hi[u][h].z, x_lo[u][h].w, x_hi[u][h].w};
#pragma unroll
            for (int t = 0; t < TILES; t++) {
                mma_16816<T>(acc_a[t], a0, w_a[u][h][t].x, w_a[u][h][t].y);
                mma_16816<T>(acc_a[t], a1, w_a[u][h][t].z, w_a[u][h][t].w);
                if (GATED) {
                    mma_16816<T>(acc_b[t], a0, w_b[u][h][t].x, w_b[u][h][t].y);
                    mma_16816<T>(acc_b[t], a1, w_b[u][h][t].z, w_b[u][h][t].w);
                }
            }
        }
}

// The cluster this block belongs to: its rank, its size (the blocks that split each unit's K),
// which cluster it is and how many there are. Kernels built without SPLIT, or for sm_80, make
// every block a cluster of one, known at compile time.
struct decode_cluster {
    int rank, size;
    unsigned index, count;
};
template <bool SPLIT> __device__ __forceinline__ decode_cluster decode_cluster_here(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (SPLIT) return {(int)cluster_rank(), (int)cluster_size(), cluster_index(), cluster_count()};
#endif
    return {0, 1, blockIdx.x, gridDim.x};
}

// A unit is TILES tiles of 8 weight rows over all of K, for all tokens. With SPLIT the blocks of
// a cluster split its K, and each block's warps split the block's share: warp w of rank r takes
// the steps r * warps + w, + size * warps, ... Each block's warps meet in shared memory; ranks
// 1.. then write their block's sums into rank 0's shared memory, and rank 0's threads, one
// output each, add them in rank order (the same sum on every run) and apply the epilogue.
template <typename T, bool GATED, int TILES, bool SPLIT>
__device__ __forceinline__ void decode_body(const T *x, const T *wa, const T *wb, T *out, int tokens,
                                            size_t K, size_t rows, bool vec, unsigned long long *stamps)
{
    __shared__ float partial[2][DECODE_MAX_WARPS][TILES][2][4][32]; // by unit parity
    // in rank 0: the other ranks' block sums, by unit parity, in the accumulators' order
    __shared__ float peer_sums[SPLIT ? 2 : 1][SPLIT ? DECODE_MAX_SPLIT - 1 : 1][TILES][2][128];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    const decode_cluster cl = decode_cluster_here<SPLIT>();
    const size_t steps = (K + 63) / 64, units = (rows + 8 * TILES - 1) / (8 * TILES);
    const size_t stride = (size_t)cl.size * warps;
    decode_stamp(stamps, DECODE_STAMP_START);
    if (GATED) grid_dependents_launch(); // the down kernel may start streaming its weights
    // The cluster barrier's first phase: every block of the cluster has started before any
    // writes into another's shared memory. A thread then alternates wait and arrival.
    [[maybe_unused]] bool arrived = false;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (SPLIT) cluster_arrive_relaxed(), arrived = true;
#endif
    const int x_rows = decode_x_rows(tokens);
    bool waited = false;
    int parity = 0;
    for (size_t unit = cl.index; unit < units; unit += cl.count, parity ^= 1) {
        const size_t n0 = unit * 8 * TILES;
        float acc_a[TILES][4] = {}, acc_b[TILES][4] = {};
        for (size_t s0 = (size_t)cl.rank * warps + warp; s0 < steps; s0 += (size_t)decode_unroll(TILES) * stride)
            decode_round<T, GATED, TILES>(x, wa, wb, x_rows, K, rows, vec, n0, s0, stride, acc_a, acc_b, waited, stamps);
        decode_stamp(stamps, DECODE_STAMP_COMPUTED);
#pragma unroll
        for (int t = 0; t < TILES; t++)
#pragma unroll
            for (int r = 0; r < 4; r++) {
                partial[parity][warp][t][0][r][lane] = acc_a[t][r];
                partial[parity][warp][t][1][r][lane] = acc_b[t][r];
            }
        // The other buffer was last read two units ago, before the barrier of the unit between.
        __syncthreads();
        // 128 sums per tile, one per thread of the block (in turn, in a smaller block):
        // accumulator r of lane l is token l / 4 (+ 8 for r >= 2), row 2 (l % 4) + r % 2.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if constexpr (SPLIT) {
            // ranks 1..: every block has started (the first unit), and rank 0 has read this
            // parity's sums of two units ago (it arrived after that unit's epilogue); rank 0, the
            // first unit: every block has started
            if (arrived) cluster_wait();
            if (cl.rank > 0)
                for (int o = threadIdx.x; o < 128 * TILES; o += blockDim.x) {
                    const int t = o / 128, r = o % 128 / 32, l = o % 32;
                    float a = 0.0f, b = 0.0f;
                    for (int w = 0; w < warps; w++) {
                        a += partial[parity][w][t][0][r][l];
                        b += partial[parity][w][t][1][r][l];
                    }
                    const uint32_t at = (uint32_t)__cvta_generic_to_shared(&peer_sums[parity][cl.rank - 1][t][0][o % 128]);
                    store_peer(peer_shared(at, 0), a);
                    store_peer(peer_shared(at + 128 * sizeof(float), 0), b); // [t][1][o % 128]
                }
            cluster_arrive(); // ranks 1..: our sums are in rank 0
            arrived = cl.rank > 0;
            if (arrived) continue;
            cluster_wait(); // every rank's sums of this unit are here
        }
#endif
        for (int o = threadIdx.x; o < 128 * TILES; o += blockDim.x) {
            const int t = o / 128, r = o % 128 / 32, l = o % 32;
            float a = 0.0f, b = 0.0f;
            for (int w = 0; w < warps; w++) { // in warp order, then rank order: the same sum on every run
                a += partial[parity][w][t][0][r][l];
                b += partial[parity][w][t][1][r][l];
            }
            if constexpr (SPLIT)
                for (int p = 0; p < cl.size - 1; p++) {
                    a += peer_sums[parity][p][t][0][o % 128];
                    b += peer_sums[parity][p][t][1][o % 128];
                }
            const size_t tok = (size_t)(l / 4 + (r >= 2 ? 8 : 0)), j = n0 + 8 * t + 2 * (l % 4) + r % 2;
            if (tok < (size_t)tokens && j < rows) out[tok * rows + j] = from_float<T>(GATED ? gelu_tanh(a) * b : a);
        }
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // our last arrival's phase: rank 0 reads our sums (and its blocks stay) until it completes
    if (arrived) cluster_wait();
#endif
    decode_stamp(stamps, DECODE_STAMP_END);
}

// The kernels by dtype, unit and split: decode_gate_up_bf16 (8 weight rows per unit),
// decode_gate_up_rows16_bf16 (16), decode_gate_up_split_bf16 (8, K split within a cluster), and
// so on.
#define DECODE_KERNEL_PAIR(name, T, TILES, SPLIT)                                                       \
    extern "C" __global__ void __launch_bounds__(32 * DECODE_MAX_WARPS, DECODE_WARPS_PER_SM / DECODE_MAX_WARPS) \
        decode_gate_up_##name(const T *x, const T *wg, const T *wu, T *m, int tokens, size_t dim,       \
                              size_t hidden, bool vec, unsigned long long *stamps)                       \
    {                                                                                                    \
        decode_body<T, true, TILES, SPLIT>(x, wg, wu, m, tokens, dim, hidden, vec, stamps);             \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(32 * DECODE_MAX_WARPS, DECODE_WARPS_PER_SM / DECODE_MAX_WARPS) \
        decode_down_##name(const T *m, const T *wd, T *y, int tokens, size_t hidden, size_t dim, bool vec, \
                           unsigned long long *stamps)                                                   \
    {                                                                                                    \
        decode_body<T, false, TILES, SPLIT>(m, wd, nullptr, y, tokens, hidden, dim, vec, stamps);       \
    }
#define DECODE_KERNELS(name, T)                                                                         \
    DECODE_KERNEL_PAIR(name, T, 1, false)                                                                \
    DECODE_KERNEL_PAIR(rows16_##name, T, 2, false)                                                       \
    DECODE_KERNEL_PAIR(split_##name, T, 1, true)                                                         \
    DECODE_KERNEL_PAIR(rows16_split_##name, T, 2, true)
DECODE_KERNELS(bf16, __nv_bfloat16)
DECODE_KERNELS(fp16, __half)

extern "C" int decode_supported(dtype_t t, size_t tokens, size_t dim, size_t hidden, char *why, size_t why_len)
{
    if (tokens < 1 || tokens > DECODE_MAX_TOKENS) {
        snprintf(why, why_len, "%zu tokens; the decode kernels put the tokens in the 16 rows of one "
                 "tensor-core tile, for 1..%d tokens", tokens, DECODE_MAX_TOKENS);
        return 0;
    }
    if (t == DTYPE_FP32) {
        snprintf(why, why_len, "fp32; the decode kernels multiply on tensor cores (bf16 or fp16 operands)");
        return 0;
    }
    if (dim == 0 || hidden == 0 || (dim + 7) / 8 > 0x7fffffff || (hidden + 7) / 8 > 0x7fffffff) {
        snprintf(why, why_len, "dim %zu, hidden %zu: one block per 8 rows must fit in a grid", dim, hidden);
        return 0;
    }
    return 1;
}

extern "C" int decode_runs_here(void) { return gpu_compute_capability() >= 80; }

extern "C" size_t decode_padded_rows(size_t tokens) { return (size_t)decode_x_rows((int)tokens); }

// How many clusters of plan.split blocks of `warps` warps the GPU holds at once: what the warps
// per SM allow, and for real clusters what the hardware says (a cluster's blocks must start
// together on SMs of one GPC, so fewer may fit; a grid of more would run a second wave). Asked of
// the gate_up kernel, the heavier of the two; once per plan and block size, the device being
// fixed for the process.
static size_t decode_clusters_at_once(decode_plan plan, unsigned warps)
{
    const size_t by_warps = (size_t)gpu_multiprocessors() * (DECODE_WARPS_PER_SM / warps) / (size_t)plan.split;
    if (plan.split == 1) return by_warps;
    static int known[2][DECODE_MAX_SPLIT + 1][DECODE_MAX_WARPS + 1]; // 0: not asked yet
    int *n = &known[plan.unit_rows / 16][plan.split][warps];
    if (*n == 0) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3((unsigned)plan.split);
        cfg.blockDim = dim3(32 * warps);
        cudaLaunchAttribute cluster = {};
        cluster.id = cudaLaunchAttributeClusterDimension;
        cluster.val.clusterDim.x = (unsigned)plan.split;
        cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
        cfg.attrs = &cluster;
        cfg.numAttrs = 1;
        const void *kernel = plan.unit_rows == 16 ? (const void *)decode_gate_up_rows16_split_bf16
                                                  : (const void *)decode_gate_up_split_bf16;
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(n, kernel, &cfg));
        if (*n < 1) *n = 1;
    }
    return (size_t)*n < by_warps ? (size_t)*n : by_warps;
}

// A launch's grid and block for `plan` over `rows` weight rows of K values: enough warps per
// block that each does at most one round of its rank's share of K (all its loads at once), up to
// DECODE_MAX_WARPS and a power of two, so that blocks fill an SM's DECODE_WARPS_PER_SM warps;
// and the fewest clusters, all resident at once, that give every cluster the same number of
// units. busiest: the units' worth of weights the busiest SM streams (NULL: not wanted).
static void decode_shape(size_t K, size_t rows, decode_plan plan, dim3 *grid, dim3 *block, double *busiest)
{
    const size_t unroll = (size_t)decode_unroll(plan.unit_rows / 8), split = (size_t)plan.split;
    const size_t steps = (K + 63) / 64, units = (rows + plan.unit_rows - 1) / plan.unit_rows;
    const size_t rank_steps = (steps + split - 1) / split;
    size_t warps = (rank_steps + unroll - 1) / unroll;
    if (warps > DECODE_MAX_WARPS) warps = DECODE_MAX_WARPS;
    while (warps & (warps - 1)) warps &= warps - 1; // the highest power of two in it
    const size_t sms = (size_t)gpu_multiprocessors(), at_once = decode_clusters_at_once(plan, (unsigned)warps);
    const size_t per_cluster = (units + at_once - 1) / at_once;
    *grid = dim3((unsigned)((units + per_cluster - 1) / per_cluster * split));
    *block = dim3((unsigned)(32 * warps));
    // the blocks spread over the SMs; each streams 1 / split of its clusters' units
    if (busiest) *busiest = (double)((grid->x + sms - 1) / sms) * (double)per_cluster / (double)split;
}

// 16-row units load each x fragment once for two weight tiles and keep a third more weight bytes
// in flight per warp (2 x 2 tiles of loads per round where 8-row units have 3 x 1), but make half
// as many units. They pay where the weights give every SM many units and x is loaded for several
// tokens; at 1 token and on small MLPs the 8-row units are as fast or faster.
//
// Splitting each unit's K between the 2 or 4 blocks of a cluster (sm_90) pays where a kernel has
// fewer units than the GPU has SMs: the article's down kernel has 96 units of 8 rows for 132 SMs,
// so without it 36 SMs stream nothing. Where every SM has units, the shares come out uneven too
// (at 4096 -> 11008, 12 units on some SMs for 10.4 on average), but there the split's barrier per
// unit, the sums through another block's shared memory and the shorter rounds of loads cost more
// than evener shares gain. Every rank needs at least 8 steps of K; among the splits the one
// whose busiest SM streams least, the smallest within 2% of it.
extern "C" decode_plan decode_plan_for(size_t tokens, size_t K, size_t rows)
{
    const int unit_rows = tokens >= 8 && 6.0 * (double)K * (double)rows >= 50e6 ? 16 : 8;
    const size_t steps = (K + 63) / 64, units = (rows + unit_rows - 1) / unit_rows;
    const int max_split = gpu_compute_capability() >= 90 && units < (size_t)gpu_multiprocessors() ? DECODE_MAX_SPLIT : 1;
    double load[DECODE_MAX_SPLIT + 1] = {0}, least = 0.0;
    for (int split = 1; split <= max_split && (split == 1 || steps >= 8 * (size_t)split); split *= 2) {
        dim3 grid, block;
        decode_shape(K, rows, {unit_rows, split}, &grid, &block, &load[split]);
        if (split == 1 || load[split] < least) least = load[split];
    }
    int split = 1;
    while (load[split] > 1.02 * least) split *= 2;
    return {unit_rows, split};
}

static void decode_require(dtype_t t, size_t tokens, size_t dim, size_t hidden, decode_plan plan)
{
    char why[256];
    if (!decode_supported(t, tokens, dim, hidden, why, sizeof why)) {
        program_error("decode kernels: %s", why);
        exit(EXIT_BAD_INPUT);
    }
    if (plan.unit_rows != 8 && plan.unit_rows != 16) {
        program_error("decode kernels: units of %d weight rows; there are units of 8 and of 16", plan.unit_rows);
        exit(EXIT_BAD_INPUT);
    }
    if (plan.split != 1 && plan.split != 2 && plan.split != 4) {
        program_error("decode kernels: K split %d ways; a unit's K goes to 1, 2 or 4 blocks", plan.split);
        exit(EXIT_BAD_INPUT);
    }
    if (!decode_runs_here()) {
        program_error("decode kernels: mma.sync with bf16 or fp16 operands needs an sm_80 or newer GPU");
        exit(EXIT_BAD_INPUT);
    }
    if (plan.split > 1 && gpu_compute_capability() < 90) {
        program_error("decode kernels: a K split between blocks needs clusters (sm_90 or newer)");
        exit(EXIT_BAD_INPUT);
    }
}

extern "C" size_t decode_blocks(size_t K, size_t rows, decode_plan plan)
{
    dim3 grid, block;
    decode_shape(K, rows, plan, &grid, &block, NULL);
    return grid.x;
}

static bool decode_vec(size_t K, const void *a, const void *b, const void *c)
{
    return K % 8 == 0 && aligned16(a) && aligned16(b) && (!c || aligned16(c));
}

// One launch: the plan's grid, clusters of plan.split blocks, and for the down kernel a
// programmatic dependent launch (sm_90).
static void decode_launch(const void *kernel, size_t K, size_t rows, decode_plan plan, bool dependent, void **args,
                          cudaStream_t stream)
{
    cudaLaunchConfig_t cfg = {};
    decode_shape(K, rows, plan, &cfg.gridDim, &cfg.blockDim, NULL);
    cfg.stream = stream;
    cudaLaunchAttribute attrs[2] = {};
    if (plan.split > 1) {
        attrs[cfg.numAttrs].id = cudaLaunchAttributeClusterDimension;
        attrs[cfg.numAttrs].val.clusterDim.x = (unsigned)plan.split;
        attrs[cfg.numAttrs].val.clusterDim.y = attrs[cfg.numAttrs].val.clusterDim.z = 1;
        cfg.numAttrs++;
    }
    if (dependent && gpu_compute_capability() >= 90) { // programmatic dependent launch exists from sm_90 on
        attrs[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attrs[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
        cfg.numAttrs++;
    }
    cfg.attrs = attrs;
    CUDA_CHECK(cudaLaunchKernelExC(&cfg, kernel, args));
}

extern "C" void launch_decode_gate_up(dtype_t t, const void *x, const void *wg, const void *wu, void *m,
                                      size_t tokens, size_t dim, size_t hidden, decode_plan plan,
                                      cudaStream_t stream, unsigned long long *stamps)
{
    decode_require(t, tokens, dim, hidden, plan);
    // [split][16-row units][fp16]
    const void *kernels[2][2][2] = {
        {{(const void *)decode_gate_up_bf16, (const void *)decode_gate_up_fp16},
         {(const void *)decode_gate_up_rows16_bf16, (const void *)decode_gate_up_rows16_fp16}},
        {{(const void *)decode_gate_up_split_bf16, (const void *)decode_gate_up_split_fp16},
         {(const void *)decode_gate_up_rows16_split_bf16, (const void *)decode_gate_up_rows16_split_fp16}}};
    bool vec = decode_vec(dim, x, wg, wu);
    int tok = (int)tokens;
    void *args[] = {&x, &wg, &wu, &m, &tok, &dim, &hidden, &vec, &stamps};
    decode_launch(kernels[plan.split > 1][plan.unit_rows / 16][t == DTYPE_FP16], dim, hidden, plan, false, args,
                  stream);
}

extern "C" void launch_decode_down(dtype_t t, const void *m, const void *wd, void *y, size_t tokens,
                                   size_t hidden, size_t dim, decode_plan plan, cudaStream_t stream,
                                   unsigned long long *stamps)
{
    decode_require(t, tokens, dim, hidden, plan);
    const void *kernels[2][2][2] = {
        {{(const void *)decode_down_bf16, (const void *)decode_down_fp16},
         {(const void *)decode_down_rows16_bf16, (const void *)decode_down_rows16_fp16}},
        {{(const void *)decode_down_split_bf16, (const void *)decode_down_split_fp16},
         {(const void *)decode_down_rows16_split_bf16, (const void *)decode_down_rows16_split_fp16}}};
    bool vec = decode_vec(hidden, m, wd, NULL);
    int tok = (int)tokens;
    void *args[] = {&m, &wd, &y, &tok, &hidden, &dim, &vec, &stamps};
    decode_launch(kernels[plan.split > 1][plan.unit_rows / 16][t == DTYPE_FP16], hidden, dim, plan, true, args,
                  stream);
}
