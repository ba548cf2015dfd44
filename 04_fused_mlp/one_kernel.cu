// one_kernel.cu (04_fused_mlp): the one-kernel rung, the whole GeGLU MLP forward in one launch.
//
//   one_kernel_mlp_bf16 / _fp16     y = (gelu(x Wg^T) * (x Wu^T)) Wd^T     for 1..16 tokens
//
// At 8 tokens of the article's model the forward reads 14 MB of weights, which HBM delivers in
// about 3.3 us; the decode rung's two kernels take 8.5. What they lose is time with nothing to
// stream: the launch of the second kernel, the wait for the first to finish, the start of each.
// Here one launch does it all, and each block asks for every byte it will read in its first
// instructions, so that all the weights are in flight at once:
//
//   1. copy      every thread starts its share of 16-byte copies into shared memory (cp.async)
//                of x and of the block's slice of hidden: `slice` rows of Wg, of Wu and of Wd^T
//                (Wd transposed once, so that the slice is contiguous), in two groups: x, Wg
//                and Wu, then Wd^T, each waited for when it is needed.
//   2. gate, up  when the first lands: [16 tokens] x [slice] of x.Wg and of x.Wu on tensor cores
//                (mma.sync m16n8k16), K split between the 16 warps, the warps' sums added in
//                shared memory; then m = gelu(gate) * up, rounded to the storage type.
//   3. down      when Wd^T lands: the block's partial y = m_slice . Wd^T_slice, [tokens, dim] in
//                fp32, into shared memory (over Wg and Wu, read by then).
//   4. sum       the blocks of a cluster meet at the cluster barrier; rank r adds the partials of
//                every block of its cluster for its share of y's columns (other blocks' shared
//                memory), and adds that into an fp32 accumulator in global memory (atomic adds
//                of four floats at a time, done in L2).
//   5. round     the last cluster to add into a share of columns (a counter per share) rounds it
//                into y and zeroes it for the next launch.
//
// The GELU is 03_simple_mlp's gelu.cuh, so every rung computes the same function.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

extern "C" {
#include "dtype.h"
}
#include "../03_simple_mlp/gelu.cuh"
#include "check.h"
#include "elementwise.cuh"
#include "gemm/ptx.cuh"
#include "gpu.h"
#include "one_kernel.h"

enum { OK_WARPS = 16, OK_THREADS = 32 * OK_WARPS, OK_ROWS = 16, OK_MAX_SLICE = 48, OK_MAX_CLUSTER = 8 };
static const size_t OK_MAX_SMEM = 226 * 1024; // shared memory a block may have on sm_90 (227 KB), less the few static bytes

// Where things lie in a block's shared memory. The rows of x, Wg, Wu and Wd^T are `pitch` bytes
// apart: K (dim rounded up to 16) values and 16 bytes more, so that the 8 rows a warp's lanes
// read at once fall in different banks.
struct ok_layout {
    uint32_t pitch, ypitch, hpitch;      // bytes between rows of x and the weights, of y's partial, of m
    uint32_t xs, wg, wu, wdt, ms, y, part; // offsets
    uint32_t end, total;
};

__host__ __device__ inline uint32_t ok_round_up(uint32_t v, uint32_t to) { return (v + to - 1) / to * to; }

__host__ __device__ inline ok_layout ok_layout_for(uint32_t dim, uint32_t slice)
{
    ok_layout L;
    const uint32_t k = ok_round_up(dim, 16), spad = ok_round_up(slice, 16);
    L.pitch = 2 * k + 16;
    L.ypitch = 4 * dim + 32;
    L.hpitch = 2 * spad + 16;
    L.xs = 0;
    L.wg = L.xs + OK_ROWS * L.pitch;
    L.wu = L.wg + slice * L.pitch;
    L.wdt = L.wu + slice * L.pitch;
    L.ms = L.wdt + spad * L.pitch; // [16][spad] m
    L.end = ok_round_up(L.ms + OK_ROWS * L.hpitch, 16);
    // Once Wg and Wu are read, their space holds (in turn) the warps' sums of gate and up,
    // [warps][16][2 slice] fp32, then y's partial [16][dim] fp32, each where it fits, else after
    // the rest
    const uint32_t ybytes = OK_ROWS * L.ypitch, partbytes = OK_WARPS * OK_ROWS * 2 * slice * 4;
    const uint32_t spare = 2 * slice * L.pitch;
    L.y = ybytes <= spare ? L.wg : L.end;
    const uint32_t after = L.y == L.wg ? L.end : L.y + ybytes;
    L.part = partbytes <= spare ? L.wg : after;
    L.total = L.part == L.wg ? after : L.part + partbytes;
    return L;
}

template <typename T>
__device__ __forceinline__ void one_kernel_body(const T *x, const T *wg, const T *wu, const T *wdt, T *y, float *yacc,
                                                unsigned *counts, int tokens, int dim, int hidden, int slice)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) unsigned char smem[];
    const ok_layout L = ok_layout_for((uint32_t)dim, (uint32_t)slice);
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, c = lane % 4;
    const int h0 = blockIdx.x * slice;
    const int rows = max(0, min(slice, hidden - h0)); // this block's rows of hidden
    const int k16 = (dim + 15) / 16, spad = (slice + 15) / 16 * 16;
    const uint32_t rowbytes = 2u * (uint32_t)dim;

    // 1. copy: every byte this block reads, asked for at once, 16 bytes a copy: warp w takes
    // rows w, w + 16, ... of x, Wg and Wu (one group), then of Wd^T (a second group)
    for (int r = warp; r < tokens + 2 * rows; r += OK_WARPS) {
        const T *src = r < tokens ? x + (size_t)r * dim
                       : r < tokens + rows ? wg + (size_t)(h0 + r - tokens) * dim
                                           : wu + (size_t)(h0 + r - tokens - rows) * dim;
        const uint32_t dst = base + (r < tokens ? L.xs + r * L.pitch
                                     : r < tokens + rows ? L.wg + (r - tokens) * L.pitch
                                                         : L.wu + (r - tokens - rows) * L.pitch);
        for (int k = 8 * lane; k < dim; k += 256) cp_async16(dst + 2 * k, src + k, 16);
    }
    cp_async_commit();
    for (int r = warp; r < rows; r += OK_WARPS) {
        const T *src = wdt + (size_t)(h0 + r) * dim;
        const uint32_t dst = base + L.wdt + r * L.pitch;
        for (int k = 8 * lane; k < dim; k += 256) cp_async16(dst + 2 * k, src + k, 16);
    }
    cp_async_commit();
    // meanwhile, zeros where no copy lands: x's rows past the tokens, weight rows past hidden,
    // the columns from dim up to K (16 bytes a store)
    {
        const uint32_t kbytes = 32u * (uint32_t)k16;
        for (int r = warp; r < OK_ROWS + 2 * slice + spad; r += OK_WARPS) {
            uint32_t row, from, to = kbytes;
            if (r < OK_ROWS) {
                row = L.xs + r * L.pitch, from = r < tokens ? rowbytes : 0u;
            } else if (r < OK_ROWS + 2 * slice) {
                const int i = (r - OK_ROWS) % slice;
                row = L.wg + (r - OK_ROWS) * L.pitch, from = i < rows ? rowbytes : 0u;
            } else {
                const int i = r - OK_ROWS - 2 * slice; // Wd^T: dim columns
                row = L.wdt + i * L.pitch, from = i < rows ? rowbytes : 0u, to = rowbytes;
            }
            for (uint32_t b = from + 16u * (uint32_t)lane; b < to; b += 512u)
                *(uint4 *)(smem + row + b) = make_uint4(0u, 0u, 0u, 0u);
        }
    }

    // 2. gate and up: warp w takes K's steps w, w + 16, ...
    cp_async_wait<1>(); // this thread's x, Wg and Wu; the barrier: every thread's
    __syncthreads();
    {
        const int tiles = slice / 8;
        float gate[OK_MAX_SLICE / 8][4] = {}, up[OK_MAX_SLICE / 8][4] = {};
        for (int s = warp; s < k16; s += OK_WARPS) {
            const unsigned char *xr = smem + L.xs + 32 * s + 4 * c;
            uint32_t a[4];
            a[0] = *(const uint32_t *)(xr + g * L.pitch);
            a[1] = *(const uint32_t *)(xr + (g + 8) * L.pitch);
            a[2] = *(const uint32_t *)(xr + g * L.pitch + 16);
            a[3] = *(const uint32_t *)(xr + (g + 8) * L.pitch + 16);
#pragma unroll
            for (int j = 0; j < OK_MAX_SLICE / 8; j++)
                if (j < tiles) {
                    const unsigned char *gr = smem + L.wg + (8 * j + g) * L.pitch + 32 * s + 4 * c;
                    const unsigned char *ur = smem + L.wu + (8 * j + g) * L.pitch + 32 * s + 4 * c;
                    mma_16816<T>(gate[j], a, *(const uint32_t *)gr, *(const uint32_t *)(gr + 16));
                    mma_16816<T>(up[j], a, *(const uint32_t *)ur, *(const uint32_t *)(ur + 16));
                }
        }
        // every warp is through Wg and Wu: its sums go over them, its tokens' rows only
        __syncthreads();
        float *part = (float *)(smem + L.part) + warp * OK_ROWS * 2 * slice;
#pragma unroll
        for (int j = 0; j < OK_MAX_SLICE / 8; j++)
            if (j < tiles)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int row = g + 8 * h, col = 8 * j + 2 * c;
                    if (row < tokens) {
                        *(float2 *)&part[row * 2 * slice + col] = make_float2(gate[j][2 * h], gate[j][2 * h + 1]);
                        *(float2 *)&part[row * 2 * slice + slice + col] = make_float2(up[j][2 * h], up[j][2 * h + 1]);
                    }
                }
    }
    __syncthreads();
    // m = gelu(gate) * up, the warps' sums added in warp order (the same sum on every run),
    // rounded as the other rungs round m; zeros past the tokens and hidden
    {
        const float *part = (const float *)(smem + L.part);
        for (int i = tid; i < OK_ROWS * spad; i += OK_THREADS) {
            const int row = i / spad, col = i % spad;
            float v = 0.0f;
            if (row < tokens && col < rows) {
                float a = 0.0f, b = 0.0f;
                for (int w = 0; w < OK_WARPS; w++) {
                    a += part[(w * OK_ROWS + row) * 2 * slice + col];
                    b += part[(w * OK_ROWS + row) * 2 * slice + slice + col];
                }
                v = gelu_tanh(a) * b;
            }
            *(T *)(smem + L.ms + row * L.hpitch + 2 * col) = from_float<T>(v);
        }
    }
    __syncthreads();

    // 3. down: warp w takes y's 8-column tiles w, w + 16, ...
    cp_async_wait<0>();
    __syncthreads();
    {
        const int ksteps = spad / 16;
        uint32_t a[OK_MAX_SLICE / 16][4];
#pragma unroll
        for (int s = 0; s < OK_MAX_SLICE / 16; s++)
            if (s < ksteps) {
                const unsigned char *mr = smem + L.ms + 32 * s + 4 * c;
                a[s][0] = *(const uint32_t *)(mr + g * L.hpitch);
                a[s][1] = *(const uint32_t *)(mr + (g + 8) * L.hpitch);
                a[s][2] = *(const uint32_t *)(mr + g * L.hpitch + 16);
                a[s][3] = *(const uint32_t *)(mr + (g + 8) * L.hpitch + 16);
            }
        for (int n = warp; n < dim / 8; n += OK_WARPS) {
            float d[4] = {};
#pragma unroll
            for (int s = 0; s < OK_MAX_SLICE / 16; s++)
                if (s < ksteps) {
                    uint32_t b0, b1;
                    ldmatrix_x2_trans(b0, b1, base + L.wdt + (16 * s + lane % 16) * L.pitch + 16 * n);
                    mma_16816<T>(d, a[s], b0, b1);
                }
            float *yr = (float *)(smem + L.y);
            if (g < tokens) *(float2 *)((unsigned char *)yr + g * L.ypitch + 4 * (8 * n + 2 * c)) = make_float2(d[0], d[1]);
            if (g + 8 < tokens)
                *(float2 *)((unsigned char *)yr + (g + 8) * L.ypitch + 4 * (8 * n + 2 * c)) = make_float2(d[2], d[3]);
        }
    }

    // 4. sum: rank r of the cluster adds every block's partial for its share of the columns
    cluster_sync();
    const int csize = (int)cluster_size(), rank = (int)cluster_rank();
    const int share = (dim / 4 + csize - 1) / csize * 4, c0 = rank * share, c1 = min(dim, c0 + share);
    const int quads = c1 > c0 ? (c1 - c0) / 4 : 0;
    for (int i = tid; i < tokens * quads; i += OK_THREADS) {
        const int row = i / quads, col = c0 + 4 * (i % quads);
        const uint32_t at = base + L.y + row * L.ypitch + 4 * col;
        float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int p = 0; p < csize; p++) {
            const float4 v = load_peer4(peer_shared(at, (uint32_t)p));
            s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
        }
        red_add4(yacc + (size_t)row * dim + col, s);
    }
    cluster_arrive(); // this block is done reading the others' partials

    // 5. round: the last cluster into this share of columns writes it to y and zeroes it
    __threadfence();
    __syncthreads();
    __shared__ int last;
    if (tid == 0) last = atomicAdd(&counts[rank], 1u) == cluster_count() - 1;
    __syncthreads();
    if (last) {
        __threadfence();
        for (int i = tid; i < tokens * quads; i += OK_THREADS) {
            const int row = i / quads, col = c0 + 4 * (i % quads);
            float4 *p = (float4 *)(yacc + (size_t)row * dim + col);
            const float4 v = __ldcg(p);
            __stcg(p, make_float4(0.0f, 0.0f, 0.0f, 0.0f));
            uint2 out;
            out.x = pack_pair<T>(v.x, v.y);
            out.y = pack_pair<T>(v.z, v.w);
            *(uint2 *)(y + (size_t)row * dim + col) = out;
        }
        if (tid == 0) counts[rank] = 0u;
    }
    cluster_wait(); // the others are done reading this block's partial: it may exit
#else
    (void)x, (void)wg, (void)wu, (void)wdt, (void)y, (void)yacc, (void)counts, (void)tokens, (void)dim, (void)hidden,
        (void)slice;
    __trap();
#endif
}

#define ONE_KERNEL(name, T)                                                                                    \
    extern "C" __global__ void __launch_bounds__(OK_THREADS, 1)                                                \
        one_kernel_mlp_##name(const T *x, const T *wg, const T *wu, const T *wdt, T *y, float *yacc,           \
                              unsigned *counts, int tokens, int dim, int hidden, int slice)                    \
    {                                                                                                          \
        one_kernel_body<T>(x, wg, wu, wdt, y, yacc, counts, tokens, dim, hidden, slice);                       \
    }
ONE_KERNEL(bf16, __nv_bfloat16)
ONE_KERNEL(fp16, __half)

// A 32 x 32 tile through shared memory: reads and writes both along rows.
extern "C" __global__ void one_kernel_transpose_2byte(const uint16_t *src, uint16_t *dst, size_t rows, size_t cols)
{
    __shared__ uint16_t tile[32][33];
    const size_t r0 = (size_t)blockIdx.y * 32, c0 = (size_t)blockIdx.x * 32;
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
        const size_t r = r0 + i, cc = c0 + threadIdx.x;
        if (r < rows && cc < cols) tile[i][threadIdx.x] = src[r * cols + cc];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
        const size_t cc = c0 + i, r = r0 + threadIdx.x;
        if (r < rows && cc < cols) dst[cc * rows + r] = tile[threadIdx.x][i];
    }
}

extern "C" void one_kernel_transpose(const void *src, void *dst, size_t rows, size_t cols, cudaStream_t stream)
{
    const dim3 grid((unsigned)((cols + 31) / 32), (unsigned)((rows + 31) / 32)), block(32, 8);
    one_kernel_transpose_2byte<<<grid, block, 0, stream>>>((const uint16_t *)src, (uint16_t *)dst, rows, cols);
    LAUNCH_CHECK();
}

// The slice nearest `want` rows (a multiple of 8, 8..48) whose layout fits a block's shared
// memory, the smaller of two as near; 0 when none does. (The partial y lies over Wg and Wu once
// they are big enough, so 16 rows may fit where 8 do not.)
static int ok_slice_near(uint32_t dim, int want)
{
    for (int d = 0; d <= OK_MAX_SLICE; d += 8)
        for (int s : {want - d, want + d})
            if (s >= 8 && s <= OK_MAX_SLICE && ok_layout_for(dim, (uint32_t)s).total <= OK_MAX_SMEM) return s;
    return 0;
}

extern "C" int one_kernel_supported(dtype_t t, size_t tokens, size_t dim, size_t hidden, char *why, size_t why_len)
{
    if (tokens < 1 || tokens > ONE_KERNEL_MAX_TOKENS) {
        snprintf(why, why_len, "%zu tokens; the one-kernel rung puts the tokens in the 16 rows of one tensor-core "
                 "tile, for 1..%d tokens", tokens, ONE_KERNEL_MAX_TOKENS);
        return 0;
    }
    if (t == DTYPE_FP32) {
        snprintf(why, why_len, "fp32; the one-kernel rung multiplies on tensor cores (bf16 or fp16 operands)");
        return 0;
    }
    if (dim == 0 || hidden == 0 || dim % 8 != 0 || dim > 65536 || hidden > 0x7fffffff) {
        snprintf(why, why_len, "dim %zu, hidden %zu: the one-kernel rung copies rows in 16-byte pieces (dim a "
                 "multiple of 8)", dim, hidden);
        return 0;
    }
    if (ok_slice_near((uint32_t)dim, 8) == 0) {
        snprintf(why, why_len, "dim %zu: a block holds x, its rows of every weight and its partial y in shared "
                 "memory, at most %zu bytes: the one-kernel rung takes dims up to 1728 (small models)", dim, OK_MAX_SMEM);
        return 0;
    }
    return 1;
}

extern "C" int one_kernel_runs_here(void) { return gpu_compute_capability() >= 90; }

extern "C" size_t one_kernel_workspace_bytes(size_t dim) { return OK_ROWS * dim * sizeof(float) + 256; }

static const void *one_kernel_for(dtype_t t)
{
    return t == DTYPE_FP16 ? (const void *)one_kernel_mlp_fp16 : (const void *)one_kernel_mlp_bf16;
}

// The slice: hidden shared between the blocks the GPU holds at once (one per SM: a block's
// shared memory leaves room for no second), rounded up to 8 rows, at most 48 and no more than
// shared memory holds. The cluster: the largest whose clusters all fit on the GPU at once (a
// cluster's blocks start together on SMs of one GPC, so 8-block clusters may leave SMs idle);
// larger clusters add fewer partials into global memory.
extern "C" one_kernel_plan one_kernel_plan_for(dtype_t t, size_t dim, size_t hidden)
{
    const size_t sms = (size_t)gpu_multiprocessors();
    const void *kernel = one_kernel_for(t);
    one_kernel_plan best = {0, 0, 0, 0};
    for (int cluster = OK_MAX_CLUSTER; cluster >= 1; cluster /= 2) {
        const size_t want = ok_round_up((uint32_t)((hidden + sms - 1) / sms), 8);
        const int slice = ok_slice_near((uint32_t)dim, want > OK_MAX_SLICE ? OK_MAX_SLICE : (int)want);
        const size_t smem = ok_layout_for((uint32_t)dim, (uint32_t)slice).total;
        const size_t blocks = ((hidden + slice - 1) / slice + cluster - 1) / cluster * cluster;
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3((unsigned)blocks);
        cfg.blockDim = dim3(OK_THREADS);
        cfg.dynamicSmemBytes = smem;
        cudaLaunchAttribute attr = {};
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = (unsigned)cluster;
        attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        int at_once = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&at_once, kernel, &cfg));
        const one_kernel_plan p = {slice, cluster, blocks, smem};
        if (best.slice == 0) best = p;
        if ((size_t)at_once * cluster >= blocks) return p; // one wave
    }
    return best;
}

extern "C" void launch_one_kernel_mlp(dtype_t t, const void *x, const void *wg, const void *wu, const void *wdt,
                                      void *y, size_t tokens, size_t dim, size_t hidden, one_kernel_plan plan,
                                      void *workspace, cudaStream_t stream)
{
    char why[256];
    if (!one_kernel_supported(t, tokens, dim, hidden, why, sizeof why) || !one_kernel_runs_here() ||
        plan.slice < 8 || plan.slice > OK_MAX_SLICE || plan.slice % 8 || plan.cluster < 1 ||
        plan.cluster > OK_MAX_CLUSTER || plan.blocks % plan.cluster || plan.blocks * plan.slice < hidden ||
        !aligned16(x) || !aligned16(wg) || !aligned16(wu) || !aligned16(wdt) || !aligned16(y)) {
        program_error("one-kernel forward: cannot run this problem with this plan here (%s)",
                      one_kernel_supported(t, tokens, dim, hidden, why, sizeof why) ? "plan, GPU or alignment" : why);
        exit(EXIT_BAD_INPUT);
    }
    const void *kernel = one_kernel_for(t);
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)plan.smem));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)plan.blocks);
    cfg.blockDim = dim3(OK_THREADS);
    cfg.dynamicSmemBytes = plan.smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = (unsigned)plan.cluster;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    float *yacc = (float *)workspace;
    unsigned *counts = (unsigned *)((unsigned char *)workspace + OK_ROWS * dim * sizeof(float));
    int tok = (int)tokens, d = (int)dim, h = (int)hidden, slice = plan.slice;
    void *args[] = {(void *)&x, (void *)&wg, (void *)&wu, (void *)&wdt, (void *)&y, (void *)&yacc,
                    (void *)&counts, (void *)&tok, (void *)&d, (void *)&h, (void *)&slice};
    CUDA_CHECK(cudaLaunchKernelExC(&cfg, kernel, args));
}
