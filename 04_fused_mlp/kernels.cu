// kernels.cu (04_fused_mlp): our kernels of the fusion ladder, besides the custom GEMM.
//
//   geglu_bf16 / _fp16 / _fp32              m = gelu(gate) * up in one pass (rungs fused_geglu,
//                                           merged): reads gate and up once, writes m once
//   decode_gate_up_bf16 / _fp16 / _fp32     m[t, j] = gelu(x_t . Wg_j) * (x_t . Wu_j)  (decode)
//   decode_down_bf16 / _fp16 / _fp32        y[t, d] = m_t . Wd_d                        (decode)
//
// The GELU is 03_simple_mlp's gelu.cuh, so every rung computes the same function. Arithmetic is
// fp32; each output is rounded once to the storage type.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "dtype.h"
}
#include "../03_simple_mlp/gelu.cuh"
#include "check.h"
#include "elementwise.cuh"
#include "kernels.h"

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }
static size_t vec_width(dtype_t t) { return t == DTYPE_FP32 ? 4 : 8; }
static size_t elem_size(dtype_t t) { return t == DTYPE_FP32 ? 4 : 2; }

// ---- the fused GeGLU ----------------------------------------------------------------------
//
// Eager runs gelu (read gate, write h) then mul (read h and up, write m): 5 passes of M x hidden
// through HBM. This kernel makes 3: read gate, read up, write m. Each thread owns one 16-byte
// chunk of a row (8 bf16 values), loads the gate chunk and the up chunk with one instruction
// each, and stores 8 results with one. A row's last chunk may be partial (cols not a multiple of
// 8): it goes element by element. When the rows do not start on 16-byte boundaries (merged form
// with hidden not a multiple of 8), every chunk goes element by element.
//
// Grid: x covers the chunks of one row, y the rows (looping past the 65535 limit of y). No
// division or modulo per thread: the row is blockIdx.y, the column follows from blockIdx.x.
template <typename T>
__device__ __forceinline__ void geglu_body(const T *gate, const T *up, size_t ld, T *m, size_t rows,
                                           size_t cols, bool vec)
{
    constexpr int V = vec16<T>::n;
    const size_t c = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c >= cols) return;
    for (size_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const T *g = gate + r * ld + c;
        const T *u = up + r * ld + c;
        T *o = m + r * cols + c;
        if (vec && c + V <= cols) {
            vec16<T> gv = *reinterpret_cast<const vec16<T> *>(g);
            const vec16<T> uv = *reinterpret_cast<const vec16<T> *>(u);
#pragma unroll
            for (int e = 0; e < V; e++) gv.v[e] = from_float<T>(gelu_tanh(to_float(gv.v[e])) * to_float(uv.v[e]));
            *reinterpret_cast<vec16<T> *>(o) = gv;
        } else {
            const size_t n = cols - c < (size_t)V ? cols - c : (size_t)V;
            for (size_t e = 0; e < n; e++) o[e] = from_float<T>(gelu_tanh(to_float(g[e])) * to_float(u[e]));
        }
    }
}

extern "C" __global__ void geglu_bf16(const __nv_bfloat16 *gate, const __nv_bfloat16 *up, size_t ld,
                                      __nv_bfloat16 *m, size_t rows, size_t cols, bool vec)
{
    geglu_body(gate, up, ld, m, rows, cols, vec);
}
extern "C" __global__ void geglu_fp16(const __half *gate, const __half *up, size_t ld, __half *m,
                                      size_t rows, size_t cols, bool vec)
{
    geglu_body(gate, up, ld, m, rows, cols, vec);
}
extern "C" __global__ void geglu_fp32(const float *gate, const float *up, size_t ld, float *m,
                                      size_t rows, size_t cols, bool vec)
{
    geglu_body(gate, up, ld, m, rows, cols, vec);
}

extern "C" void launch_geglu(dtype_t t, const void *gate, const void *up, size_t ld, void *m,
                             size_t rows, size_t cols, cudaStream_t stream)
{
    if (rows == 0 || cols == 0) return;
    const size_t V = vec_width(t), threads = 128;
    // 16-byte chunks need every chunk start aligned: the bases, and with several rows the row
    // strides of the inputs (ld) and of the output (cols) in whole chunks.
    const bool vec = aligned16(gate) && aligned16(up) && aligned16(m) &&
                     (rows == 1 || (ld % V == 0 && cols % V == 0));
    const size_t chunks = (cols + V - 1) / V;
    const size_t bx = (chunks + threads - 1) / threads;
    if (bx > 0x7fffffff) {
        fprintf(stderr, "error: launch_geglu: %zu columns are more than one grid row holds\n", cols);
        exit(EXIT_BAD_INPUT);
    }
    const dim3 grid((unsigned)bx, (unsigned)(rows < 65535 ? rows : 65535));
    switch (t) {
    case DTYPE_BF16:
        geglu_bf16<<<grid, (unsigned)threads, 0, stream>>>((const __nv_bfloat16 *)gate, (const __nv_bfloat16 *)up,
                                                           ld, (__nv_bfloat16 *)m, rows, cols, vec);
        break;
    case DTYPE_FP16:
        geglu_fp16<<<grid, (unsigned)threads, 0, stream>>>((const __half *)gate, (const __half *)up, ld,
                                                           (__half *)m, rows, cols, vec);
        break;
    case DTYPE_FP32:
        geglu_fp32<<<grid, (unsigned)threads, 0, stream>>>((const float *)gate, (const float *)up, ld,
                                                           (float *)m, rows, cols, vec);
        break;
    }
}

// ---- decode: weight streaming for a few tokens ---------------------------------------------
//
// At 8 tokens the MLP does 0.11 GFLOP and reads 14 MB of weights: a GEMM library tiles for
// arithmetic that is not there. Here the weights are read exactly once, at full width, and the
// few tokens ride along:
//   - each block first copies all of x (tokens x K, K = dim or hidden) into shared memory;
//   - each warp then streams one row j of the weight(s) with 16-byte loads (32 lanes x 16 B =
//     512 contiguous bytes per instruction), and for every token multiplies that chunk with the
//     token's chunk from shared memory, accumulating in fp32 registers (one per token);
//   - a warp-shuffle reduction sums the 32 lanes' partial dot products; the epilogue writes
//     gelu(g) * u (gate_up) or the plain sum (down).
// Kernel 1 streams Wg and Wu side by side, so gate and up of one row meet in registers and only m
// is written (the GeGLU fused in, as in the epilogue rung). When a matrix has fewer rows than the
// GPU holds warps (Wd at the decode shape: 768 rows), each row is split over `split` warps of the
// block, whose partial sums meet in shared memory: otherwise most SMs would idle.
#define DECODE_WARPS 8
#define DECODE_THREADS (32 * DECODE_WARPS)
#define DECODE_UNROLL 4 // 16-byte loads in flight per lane and weight
#define DECODE_BATCH 8  // 16-byte loads in flight per thread while staging x

template <typename T, bool GATED>
__device__ __forceinline__ void decode_body(const T *x, const T *wa, const T *wb, T *out, int tokens,
                                            size_t K, size_t rows, int split, bool vec)
{
    constexpr int V = vec16<T>::n;
    extern __shared__ uint4 x_smem[]; // tokens x K, uint4 for 16-byte alignment
    __shared__ float partial[DECODE_WARPS][DECODE_MAX_TOKENS][2];
    T *xs = reinterpret_cast<T *>(x_smem);

    // Stage x: DECODE_BATCH loads per thread are issued before any is stored, so the copy
    // costs a few round trips to L2, not one per 4 KB.
    const size_t n = (size_t)tokens * K;
    size_t staged = 0;
    if (vec) {
        const size_t nv = n / V;
        const vec16<T> *src = reinterpret_cast<const vec16<T> *>(x);
        vec16<T> *dst = reinterpret_cast<vec16<T> *>(xs);
        for (size_t i0 = threadIdx.x; i0 < nv; i0 += DECODE_BATCH * blockDim.x) {
            vec16<T> r[DECODE_BATCH];
#pragma unroll
            for (int u = 0; u < DECODE_BATCH; u++)
                if (i0 + u * blockDim.x < nv) r[u] = src[i0 + u * blockDim.x];
#pragma unroll
            for (int u = 0; u < DECODE_BATCH; u++)
                if (i0 + u * blockDim.x < nv) dst[i0 + u * blockDim.x] = r[u];
        }
        staged = nv * V;
    }
    for (size_t i = staged + threadIdx.x; i < n; i += blockDim.x) xs[i] = x[i];
    __syncthreads();

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int sub = warp % split;                 // which part of the row this warp sums
    const size_t rows_per_block = DECODE_WARPS / split;
    // The loop bound is the same for every thread of the block: all reach each __syncthreads.
    for (size_t base = blockIdx.x * rows_per_block; base < rows; base += gridDim.x * rows_per_block) {
        const size_t j = base + warp / split;
        float acc_a[DECODE_MAX_TOKENS], acc_b[DECODE_MAX_TOKENS];
#pragma unroll
        for (int t = 0; t < DECODE_MAX_TOKENS; t++) acc_a[t] = acc_b[t] = 0.0f;

        if (j < rows) {
            const T *ra = wa + j * K;
            const T *rb = GATED ? wb + j * K : nullptr;
            if (vec) {
                // DECODE_UNROLL chunks of each weight row are loaded before any is used: the
                // loads of one warp overlap, which is what keeps HBM busy with few warps.
                const size_t step = (size_t)split * 32 * V;
                for (size_t c0 = ((size_t)sub * 32 + lane) * V; c0 < K; c0 += DECODE_UNROLL * step) {
                    vec16<T> a[DECODE_UNROLL], b[DECODE_UNROLL];
#pragma unroll
                    for (int u = 0; u < DECODE_UNROLL; u++) {
                        const size_t c = c0 + u * step;
                        if (c < K) {
                            a[u] = *reinterpret_cast<const vec16<T> *>(ra + c);
                            if (GATED) b[u] = *reinterpret_cast<const vec16<T> *>(rb + c);
                        }
                    }
#pragma unroll
                    for (int u = 0; u < DECODE_UNROLL; u++) {
                        const size_t c = c0 + u * step;
                        if (c >= K) break;
#pragma unroll
                        for (int t = 0; t < DECODE_MAX_TOKENS; t++) {
                            if (t < tokens) {
                                const vec16<T> xv = *reinterpret_cast<const vec16<T> *>(xs + t * K + c);
#pragma unroll
                                for (int e = 0; e < V; e++) {
                                    const float xe = to_float(xv.v[e]);
                                    acc_a[t] = fmaf(xe, to_float(a[u].v[e]), acc_a[t]);
                                    if (GATED) acc_b[t] = fmaf(xe, to_float(b[u].v[e]), acc_b[t]);
                                }
                            }
                        }
                    }
                }
            } else { // rows not 16-byte aligned (K not a multiple of V): element by element
                for (size_t c = (size_t)sub * 32 + lane; c < K; c += (size_t)split * 32) {
                    const float a = to_float(ra[c]);
                    const float b = GATED ? to_float(rb[c]) : 0.0f;
#pragma unroll
                    for (int t = 0; t < DECODE_MAX_TOKENS; t++) {
                        if (t < tokens) {
                            const float xe = to_float(xs[t * K + c]);
                            acc_a[t] = fmaf(xe, a, acc_a[t]);
                            if (GATED) acc_b[t] = fmaf(xe, b, acc_b[t]);
                        }
                    }
                }
            }
        }

#pragma unroll
        for (int t = 0; t < DECODE_MAX_TOKENS; t++) {
            if (t < tokens) {
                for (int off = 16; off > 0; off /= 2) {
                    acc_a[t] += __shfl_xor_sync(0xffffffffu, acc_a[t], off);
                    if (GATED) acc_b[t] += __shfl_xor_sync(0xffffffffu, acc_b[t], off);
                }
                if (lane == 0) {
                    partial[warp][t][0] = acc_a[t];
                    partial[warp][t][1] = acc_b[t];
                }
            }
        }
        __syncthreads();
        if (sub == 0 && lane < tokens && j < rows) { // lane t finishes token t of row j
            float a = 0.0f, b = 0.0f;
            for (int s = 0; s < split; s++) {
                a += partial[warp + s][lane][0];
                b += partial[warp + s][lane][1];
            }
            out[(size_t)lane * rows + j] = from_float<T>(GATED ? gelu_tanh(a) * b : a);
        }
        __syncthreads(); // partial is reused by the next rows
    }
}

#define DECODE_KERNELS(suffix, T)                                                                        \
    extern "C" __global__ void __launch_bounds__(DECODE_THREADS)                                         \
        decode_gate_up_##suffix(const T *x, const T *wg, const T *wu, T *m, int tokens, size_t dim,     \
                                size_t hidden, int split, bool vec)                                      \
    {                                                                                                    \
        decode_body<T, true>(x, wg, wu, m, tokens, dim, hidden, split, vec);                            \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(DECODE_THREADS)                                         \
        decode_down_##suffix(const T *m, const T *wd, T *y, int tokens, size_t hidden, size_t dim,       \
                             int split, bool vec)                                                        \
    {                                                                                                    \
        decode_body<T, false>(m, wd, nullptr, y, tokens, hidden, dim, split, vec);                      \
    }
DECODE_KERNELS(bf16, __nv_bfloat16)
DECODE_KERNELS(fp16, __half)
DECODE_KERNELS(fp32, float)

static const size_t decode_static_smem = sizeof(float) * DECODE_WARPS * DECODE_MAX_TOKENS * 2;

static int device_attr(cudaDeviceAttr attr)
{
    int dev = 0, v = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, dev));
    return v;
}

// The most dynamic shared memory one block may use: the device's opt-in limit (227 KB on
// H100/H200, 163 KB on A100) less the kernel's own partial sums.
static size_t decode_smem_limit(void)
{
    return (size_t)device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin) - decode_static_smem;
}

extern "C" int decode_supported(dtype_t t, size_t tokens, size_t dim, size_t hidden, char *why, size_t why_len)
{
    if (tokens < 1 || tokens > DECODE_MAX_TOKENS) {
        snprintf(why, why_len, "%zu tokens; the decode kernels keep one accumulator per token in registers, "
                 "for 1..%d tokens", tokens, DECODE_MAX_TOKENS);
        return 0;
    }
    const size_t widest = dim > hidden ? dim : hidden, limit = decode_smem_limit();
    if (tokens * widest * elem_size(t) > limit) {
        snprintf(why, why_len, "%zu tokens x %zu %s values (%zu KB) do not fit in one block's shared memory "
                 "(%zu KB)", tokens, widest, dtype_name(t), tokens * widest * elem_size(t) / 1024, limit / 1024);
        return 0;
    }
    return 1;
}

// Shared memory, split and grid for one decode kernel (see decode_body).
static void decode_plan(const void *fn, dtype_t t, size_t tokens, size_t K, size_t rows, unsigned *grid,
                        int *split, size_t *smem)
{
    *smem = (tokens * K * elem_size(t) + 15) / 16 * 16;
    static const void *opted_in[6];
    int known = 0;
    for (int i = 0; i < 6 && opted_in[i]; i++) known |= opted_in[i] == fn;
    if (!known) { // above 48 KB a kernel must ask for its shared memory, once
        cudaFuncAttributes fa;
        CUDA_CHECK(cudaFuncGetAttributes(&fa, fn));
        const int optin = device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
        CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - (int)fa.sharedSizeBytes));
        for (int i = 0; i < 6; i++)
            if (!opted_in[i]) { opted_in[i] = fn; break; }
    }
    const size_t sms = (size_t)device_attr(cudaDevAttrMultiProcessorCount);
    int occ = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, DECODE_THREADS, *smem));
    // Every resident block copies all of x from L2 into its shared memory: keep that copy under
    // 128 KB per SM, or the copies would cost more than the weights they serve.
    size_t per_sm = (128u << 10) / *smem;
    if (per_sm > (size_t)occ) per_sm = (size_t)occ;
    if (per_sm < 1) per_sm = 1;
    const size_t resident_warps = sms * per_sm * DECODE_WARPS;
    // Split rows over warps while there are fewer rows than warps, but never below one 16-byte
    // chunk per lane.
    const size_t chunks = (K + 32 * vec_width(t) - 1) / (32 * vec_width(t));
    int s = 1;
    while (s < DECODE_WARPS && rows * s < resident_warps && (size_t)s * 2 <= chunks) s *= 2;
    const size_t rows_per_block = DECODE_WARPS / s;
    const size_t need = (rows + rows_per_block - 1) / rows_per_block;
    *split = s;
    *grid = (unsigned)(need < sms * per_sm ? need : sms * per_sm);
}

static void decode_require(dtype_t t, size_t tokens, size_t dim, size_t hidden)
{
    char why[256];
    if (!decode_supported(t, tokens, dim, hidden, why, sizeof why)) {
        fprintf(stderr, "error: decode kernels: %s\n", why);
        exit(EXIT_BAD_INPUT);
    }
}

extern "C" void launch_decode_gate_up(dtype_t t, const void *x, const void *wg, const void *wu, void *m,
                                      size_t tokens, size_t dim, size_t hidden, cudaStream_t stream)
{
    decode_require(t, tokens, dim, hidden);
    const bool vec = dim % vec_width(t) == 0 && aligned16(x) && aligned16(wg) && aligned16(wu);
    const void *fn = t == DTYPE_BF16   ? (const void *)decode_gate_up_bf16
                     : t == DTYPE_FP16 ? (const void *)decode_gate_up_fp16
                                       : (const void *)decode_gate_up_fp32;
    unsigned grid;
    int split;
    size_t smem;
    decode_plan(fn, t, tokens, dim, hidden, &grid, &split, &smem);
    switch (t) {
    case DTYPE_BF16:
        decode_gate_up_bf16<<<grid, DECODE_THREADS, smem, stream>>>(
            (const __nv_bfloat16 *)x, (const __nv_bfloat16 *)wg, (const __nv_bfloat16 *)wu,
            (__nv_bfloat16 *)m, (int)tokens, dim, hidden, split, vec);
        break;
    case DTYPE_FP16:
        decode_gate_up_fp16<<<grid, DECODE_THREADS, smem, stream>>>(
            (const __half *)x, (const __half *)wg, (const __half *)wu, (__half *)m, (int)tokens, dim,
            hidden, split, vec);
        break;
    case DTYPE_FP32:
        decode_gate_up_fp32<<<grid, DECODE_THREADS, smem, stream>>>(
            (const float *)x, (const float *)wg, (const float *)wu, (float *)m, (int)tokens, dim, hidden,
            split, vec);
        break;
    }
}

extern "C" void launch_decode_down(dtype_t t, const void *m, const void *wd, void *y, size_t tokens,
                                   size_t hidden, size_t dim, cudaStream_t stream)
{
    decode_require(t, tokens, dim, hidden);
    const bool vec = hidden % vec_width(t) == 0 && aligned16(m) && aligned16(wd);
    const void *fn = t == DTYPE_BF16   ? (const void *)decode_down_bf16
                     : t == DTYPE_FP16 ? (const void *)decode_down_fp16
                                       : (const void *)decode_down_fp32;
    unsigned grid;
    int split;
    size_t smem;
    decode_plan(fn, t, tokens, hidden, dim, &grid, &split, &smem);
    switch (t) {
    case DTYPE_BF16:
        decode_down_bf16<<<grid, DECODE_THREADS, smem, stream>>>((const __nv_bfloat16 *)m,
                                                                 (const __nv_bfloat16 *)wd,
                                                                 (__nv_bfloat16 *)y, (int)tokens, hidden,
                                                                 dim, split, vec);
        break;
    case DTYPE_FP16:
        decode_down_fp16<<<grid, DECODE_THREADS, smem, stream>>>((const __half *)m, (const __half *)wd,
                                                                 (__half *)y, (int)tokens, hidden, dim,
                                                                 split, vec);
        break;
    case DTYPE_FP32:
        decode_down_fp32<<<grid, DECODE_THREADS, smem, stream>>>((const float *)m, (const float *)wd,
                                                                 (float *)y, (int)tokens, hidden, dim, split,
                                                                 vec);
        break;
    }
}
