// kernels.cu (04_fused_mlp): our kernels of the fusion ladder, besides the custom GEMM.
//
//   geglu_bf16 / _fp16 / _fp32              m = gelu(gate) * up in one pass (rungs fused_geglu,
//                                           merged): reads gate and up once, writes m once
//   decode_gate_up_bf16 / _fp16             m[t, j] = gelu(x_t . Wg_j) * (x_t . Wu_j)  (decode)
//   decode_down_staged_bf16 / _fp16         y[t, d] = m_t . Wd_d, hidden <= 3072, sm_90 (decode)
//   decode_down_bf16 / _fp16                the same, any hidden                       (decode)
//
// The GELU is 03_simple_mlp's gelu.cuh, so every rung computes the same function. Arithmetic is
// fp32; each output is rounded once to the storage type.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

extern "C" {
#include "dtype.h"
}
#include "../03_simple_mlp/gelu.cuh"
#include "check.h"
#include "gpu.h"
#include "elementwise.cuh"
#include "async_copy.cuh"
#include "kernels.h"

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }
static size_t vec_width(dtype_t t) { return t == DTYPE_FP32 ? 4 : 8; }

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

// ---- decode: weight streaming on tensor cores, for a few tokens ------------------------------
//
// At 8 tokens the MLP does 0.11 GFLOP and reads 14 MB of weights, so the kernel's one job is to
// keep HBM busy. A first version did the dot products with scalar FMAs (one per weight, per
// token): with each bf16 value widened to fp32 first, that was about 30 instructions per 16
// bytes of weights, and it issued instructions, not bytes, for 14 us per kernel. Here the tensor
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
//   block  8 weight rows (one mma N), all tokens; its warps split K: warp w takes 64-value
//          steps w, w + warps, ...; their fp32 partial sums meet in shared memory and warp 0
//          applies the epilogue: gelu(g) * u (gate_up, Wg and Wu side by side: only m is
//          written) or the plain sum (down)
//   loads  each lane loads DECODE_UNROLL steps of all its operands before the first mma, so a
//          warp has up to 3 x 4 x 16 bytes of weights in flight per lane
//   launch the down kernel is a programmatic dependent launch (sm_90): it is scheduled while
//          gate_up runs, loads its first weights, and only then waits for m (see
//          grid_dependency_wait)
//   staged at the article's widths the down kernel's blocks of 16 warps at about 100 registers
//          fit on an SM only once gate_up's blocks have left it, so its weights start streaming
//          late (3 us into gate_up's 3.5, block by block in globaltimer stamps). On sm_90, for
//          hidden up to DECODE_DOWN_SLICE, decode_down_staged takes its place: 8 warps at 64
//          registers, which fit beside three gate_up blocks from the start. One thread hands
//          the copy engine the block's 8 weight rows (bulk copies into shared memory, counted
//          on an mbarrier, no registers held), then waits for gate_up, then hands it m's rows
//          the same way; the warps multiply from shared memory.
// Rows of x, W past the matrix and K past its end load as zeros; K not a multiple of 8 or
// unaligned bases take an element-by-element load into the same registers.
#define DECODE_MAX_WARPS 16
#define DECODE_UNROLL 3        // 64-value steps of K per warp per round
#define DECODE_DOWN_WARPS 8    // decode_down_staged
#define DECODE_DOWN_SLICE 3072 // decode_down_staged: the longest hidden it stages whole

// c += a (16 x 16) * b (16 x 8), fp32 accumulation.
template <typename T> __device__ __forceinline__ void mma_16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One k step of 16 values for the relabelled operands of one lane: x_lo, x_hi (token rows g,
// g + 8) and w (weight row g), 8 values each at the same K offset; two mma.
template <typename T> __device__ __forceinline__ void mma_relabelled(float acc[4], uint4 x_lo, uint4 x_hi, uint4 w)
{
    const uint32_t a0[4] = {x_lo.x, x_hi.x, x_lo.y, x_hi.y};
    const uint32_t a1[4] = {x_lo.z, x_hi.z, x_lo.w, x_hi.w};
    mma_16816<T>(acc, a0, w.x, w.y);
    mma_16816<T>(acc, a1, w.z, w.w);
}

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

template <typename T, bool GATED>
__device__ __forceinline__ void decode_body(const T *x, const T *wa, const T *wb, T *out, int tokens,
                                            size_t K, size_t rows, bool vec)
{
    __shared__ float partial[DECODE_MAX_WARPS][2][4][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    const int g = lane / 4, c = lane % 4;
    const size_t n0 = (size_t)blockIdx.x * 8, steps = (K + 63) / 64;
    const size_t t_lo = g, t_hi = g + 8; // the two token rows of this lane's mma fragments
    if (GATED) grid_dependents_launch(); // the down kernel may start streaming its weights
    float acc_a[4] = {0.0f, 0.0f, 0.0f, 0.0f}, acc_b[4] = {0.0f, 0.0f, 0.0f, 0.0f};

    for (size_t s0 = warp; s0 < steps; s0 += (size_t)DECODE_UNROLL * warps) {
        uint4 w_a[DECODE_UNROLL][2], w_b[DECODE_UNROLL][2], x_lo[DECODE_UNROLL][2], x_hi[DECODE_UNROLL][2];
        // Instruction h of step s reads values s * 64 + h * 32 + [0, 32) of each row: the four
        // lanes of a row cover 64 contiguous bytes, two whole 32-byte sectors.
#pragma unroll
        for (int u = 0; u < DECODE_UNROLL; u++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const size_t k = (s0 + (size_t)u * warps) * 64 + h * 32 + c * 8; // past K: zeros
                w_a[u][h] = load8(wa, n0 + g, rows, k, K, vec);
                w_b[u][h] = GATED ? load8(wb, n0 + g, rows, k, K, vec) : make_uint4(0, 0, 0, 0);
            }
        // The weights do not depend on the kernel before us; x may (the down kernel's x is the
        // gate_up kernel's m). Launched as a programmatic dependent, this kernel starts while
        // that one finishes, its first weights already on the way; here it waits for the
        // kernel before to complete and its writes to be visible (a no-op otherwise).
        if (s0 == (size_t)warp) grid_dependency_wait();
#pragma unroll
        for (int u = 0; u < DECODE_UNROLL; u++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const size_t k = (s0 + (size_t)u * warps) * 64 + h * 32 + c * 8;
                x_lo[u][h] = load8(x, t_lo, (size_t)tokens, k, K, vec);
                x_hi[u][h] = load8(x, t_hi, (size_t)tokens, k, K, vec);
            }
#pragma unroll
        for (int u = 0; u < DECODE_UNROLL; u++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                mma_relabelled<T>(acc_a, x_lo[u][h], x_hi[u][h], w_a[u][h]);
                if (GATED) mma_relabelled<T>(acc_b, x_lo[u][h], x_hi[u][h], w_b[u][h]);
            }
    }

#pragma unroll
    for (int r = 0; r < 4; r++) {
        partial[warp][0][r][lane] = acc_a[r];
        partial[warp][1][r][lane] = acc_b[r];
    }
    __syncthreads();
    if (warp != 0) return;
    // Accumulator r of lane (g, c): token g (r < 2) or g + 8 (r >= 2), weight row 2c + r % 2.
#pragma unroll
    for (int r = 0; r < 4; r++) {
        float a = 0.0f, b = 0.0f;
        for (int w = 0; w < warps; w++) { // in warp order: the same sum on every run
            a += partial[w][0][r][lane];
            b += partial[w][1][r][lane];
        }
        const size_t t = r < 2 ? t_lo : t_hi, j = n0 + 2 * c + r % 2;
        if (t < (size_t)tokens && j < rows) out[t * rows + j] = from_float<T>(GATED ? gelu_tanh(a) * b : a);
    }
}

// decode_down_staged: one block per 8 rows of Wd, the whole of K (hidden) staged in shared
// memory: 8 weight rows, then `tokens` rows of m, each row 32 values longer than K rounded up to
// 64, so that the 8 lanes of one shared-memory phase (two rows, four 16-byte chunks each) fall
// on 8 different 16-byte bank groups. Values [K, len) of each row are zeros.
template <typename T>
__device__ __forceinline__ void decode_down_staged_body(const T *m, const T *wd, T *y, int tokens, size_t K,
                                                        size_t rows)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(16) unsigned char staged[];
    __shared__ __align__(8) uint64_t bars[2]; // weights, m
    __shared__ float partial[DECODE_DOWN_WARPS][2][4][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const size_t n0 = (size_t)blockIdx.x * 8;
    const int len = (int)((K + 63) / 64 * 64), stride = len + 32, w_rows = (int)min((size_t)8, rows - n0);
    T *w_s = reinterpret_cast<T *>(staged), *x_s = w_s + 8 * stride;
    const uint32_t bar_w = (uint32_t)__cvta_generic_to_shared(&bars[0]), bar_x = bar_w + 8;
    const uint32_t row_bytes = (uint32_t)(K * sizeof(T));
    if (threadIdx.x == 0) { // the weights depend on nothing: on their way at once
        mbar_init(bar_w, 1);
        mbar_init(bar_x, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); // visible to the copy engine
        mbar_arrive_expect_tx(bar_w, w_rows * (int)row_bytes);
        for (int r = 0; r < w_rows; r++)
            bulk_copy((uint32_t)__cvta_generic_to_shared(w_s + r * stride), wd + (n0 + r) * K, row_bytes, bar_w);
    }
    const int tail = len - (int)K; // zeros past K, where the copies do not write
    for (int i = threadIdx.x; i < (8 + tokens) * tail; i += blockDim.x)
        w_s[i / tail * stride + (int)K + i % tail] = from_float<T>(0.0f);
    grid_dependency_wait(); // m is the output of the kernel before us
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(bar_x, tokens * (int)row_bytes);
        for (int t = 0; t < tokens; t++)
            bulk_copy((uint32_t)__cvta_generic_to_shared(x_s + t * stride), m + t * K, row_bytes, bar_x);
    }
    __syncthreads(); // the barriers initialised and the tails zeroed, for every thread
    mbar_wait(bar_w, 0);
    mbar_wait(bar_x, 0);

    // Two accumulators, one per half of each 64-value step: two chains of dependent mma, not one.
    float acc[2][4] = {};
    const uint4 zero = make_uint4(0, 0, 0, 0);
    const bool has_w = g < w_rows, has_lo = g < tokens, has_hi = g + 8 < tokens;
    const T *w_row = w_s + g * stride + c * 8, *lo_row = x_s + g * stride + c * 8;
    const T *hi_row = x_s + (g + 8) * stride + c * 8;
    for (int s = warp; s < len / 64; s += DECODE_DOWN_WARPS)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int k = s * 64 + h * 32;
            const uint4 w = has_w ? *reinterpret_cast<const uint4 *>(w_row + k) : zero;
            const uint4 x_lo = has_lo ? *reinterpret_cast<const uint4 *>(lo_row + k) : zero;
            const uint4 x_hi = has_hi ? *reinterpret_cast<const uint4 *>(hi_row + k) : zero;
            mma_relabelled<T>(acc[h], x_lo, x_hi, w);
        }

#pragma unroll
    for (int r = 0; r < 4; r++) {
        partial[warp][0][r][lane] = acc[0][r];
        partial[warp][1][r][lane] = acc[1][r];
    }
    __syncthreads();
    if (warp != 0) return;
    // Accumulator r of lane (g, c): token g (r < 2) or g + 8 (r >= 2), weight row 2c + r % 2.
#pragma unroll
    for (int r = 0; r < 4; r++) {
        float sum = 0.0f;
        for (int w = 0; w < DECODE_DOWN_WARPS; w++) sum += partial[w][0][r][lane] + partial[w][1][r][lane];
        const size_t t = r < 2 ? g : g + 8, j = n0 + 2 * c + r % 2;
        if (t < (size_t)tokens && j < rows) y[t * rows + j] = from_float<T>(sum);
    }
#else
    (void)m, (void)wd, (void)y, (void)tokens, (void)K, (void)rows; // launched on sm_90 only
#endif
}

#define DECODE_KERNELS(suffix, T)                                                                        \
    extern "C" __global__ void __launch_bounds__(32 * DECODE_MAX_WARPS)                                  \
        decode_gate_up_##suffix(const T *x, const T *wg, const T *wu, T *m, int tokens, size_t dim,     \
                                size_t hidden, bool vec)                                                 \
    {                                                                                                    \
        decode_body<T, true>(x, wg, wu, m, tokens, dim, hidden, vec);                                   \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(32 * DECODE_MAX_WARPS)                                  \
        decode_down_##suffix(const T *m, const T *wd, T *y, int tokens, size_t hidden, size_t dim,       \
                             bool vec)                                                                   \
    {                                                                                                    \
        decode_body<T, false>(m, wd, nullptr, y, tokens, hidden, dim, vec);                             \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(32 * DECODE_DOWN_WARPS, 4)                              \
        decode_down_staged_##suffix(const T *m, const T *wd, T *y, int tokens, size_t hidden, size_t dim) \
    {                                                                                                    \
        decode_down_staged_body<T>(m, wd, y, tokens, hidden, dim);                                      \
    }
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
    if (gpu_compute_capability() < 80) {
        snprintf(why, why_len, "mma.sync with bf16 or fp16 operands needs an sm_80 or newer GPU");
        return 0;
    }
    return 1;
}

static void decode_require(dtype_t t, size_t tokens, size_t dim, size_t hidden)
{
    char why[256];
    if (!decode_supported(t, tokens, dim, hidden, why, sizeof why)) {
        fprintf(stderr, "error: decode kernels: %s\n", why);
        exit(EXIT_BAD_INPUT);
    }
}

// One block per 8 weight rows; enough warps that each does at most DECODE_UNROLL steps of K
// (all its loads in one round) up to DECODE_MAX_WARPS.
static void decode_shape(size_t K, size_t rows, dim3 *grid, dim3 *block)
{
    const size_t steps = (K + 63) / 64;
    size_t warps = (steps + DECODE_UNROLL - 1) / DECODE_UNROLL;
    if (warps > DECODE_MAX_WARPS) warps = DECODE_MAX_WARPS;
    *grid = dim3((unsigned)((rows + 7) / 8));
    *block = dim3((unsigned)(32 * warps));
}

static bool decode_vec(size_t K, const void *a, const void *b, const void *c)
{
    return K % 8 == 0 && aligned16(a) && aligned16(b) && (!c || aligned16(c));
}

// decode_down_staged's shared memory: 8 weight rows and `tokens` rows of m, K rounded up to 64
// plus 32 values each.
static int decode_down_staged_smem(size_t tokens, size_t hidden)
{
    return (int)((8 + tokens) * ((hidden + 63) / 64 * 64 + 32) * 2);
}

// Both down kernels and gate_up ask for the SM's largest shared-memory carveout: an SM holds
// blocks of gate_up and of the staged down kernel side by side only if it is configured for
// the larger, and it can change its configuration only when empty.
static void decode_attributes(void)
{
    static int done;
    if (done) return;
    const void *kernels[] = {(const void *)decode_gate_up_bf16, (const void *)decode_gate_up_fp16,
                             (const void *)decode_down_staged_bf16, (const void *)decode_down_staged_fp16};
    for (int i = 0; i < 4; i++)
        CUDA_CHECK(cudaFuncSetAttribute(kernels[i], cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
    for (int i = 2; i < 4; i++)
        CUDA_CHECK(cudaFuncSetAttribute(kernels[i], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        decode_down_staged_smem(DECODE_MAX_TOKENS, DECODE_DOWN_SLICE)));
    done = 1;
}

extern "C" void launch_decode_gate_up(dtype_t t, const void *x, const void *wg, const void *wu, void *m,
                                      size_t tokens, size_t dim, size_t hidden, cudaStream_t stream)
{
    decode_require(t, tokens, dim, hidden);
    if (gpu_compute_capability() >= 90) decode_attributes();
    const bool vec = decode_vec(dim, x, wg, wu);
    dim3 grid, block;
    decode_shape(dim, hidden, &grid, &block);
    if (t == DTYPE_BF16)
        decode_gate_up_bf16<<<grid, block, 0, stream>>>((const __nv_bfloat16 *)x, (const __nv_bfloat16 *)wg,
                                                        (const __nv_bfloat16 *)wu, (__nv_bfloat16 *)m,
                                                        (int)tokens, dim, hidden, vec);
    else
        decode_gate_up_fp16<<<grid, block, 0, stream>>>((const __half *)x, (const __half *)wg, (const __half *)wu,
                                                        (__half *)m, (int)tokens, dim, hidden, vec);
}

extern "C" void launch_decode_down(dtype_t t, const void *m, const void *wd, void *y, size_t tokens,
                                   size_t hidden, size_t dim, cudaStream_t stream)
{
    decode_require(t, tokens, dim, hidden);
    const bool vec = decode_vec(hidden, m, wd, NULL);
    // The bulk copies need 16-byte rows and bases (vec) and sm_90, the staging a short hidden.
    const bool staged = vec && hidden <= DECODE_DOWN_SLICE && gpu_compute_capability() >= 90;
    cudaLaunchConfig_t cfg = {};
    if (staged) {
        decode_attributes();
        cfg.gridDim = dim3((unsigned)((dim + 7) / 8));
        cfg.blockDim = dim3(32 * DECODE_DOWN_WARPS);
        cfg.dynamicSmemBytes = (size_t)decode_down_staged_smem(tokens, hidden);
    } else {
        decode_shape(hidden, dim, &cfg.gridDim, &cfg.blockDim);
    }
    cfg.stream = stream;
    cudaLaunchAttribute pdl = {};
    pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pdl.val.programmaticStreamSerializationAllowed = 1;
    if (gpu_compute_capability() >= 90) { // programmatic dependent launch exists from sm_90 on
        cfg.attrs = &pdl;
        cfg.numAttrs = 1;
    }
    const int tok = (int)tokens;
    if (t == DTYPE_BF16) {
        const __nv_bfloat16 *mm = (const __nv_bfloat16 *)m, *w = (const __nv_bfloat16 *)wd;
        if (staged) CUDA_CHECK(cudaLaunchKernelEx(&cfg, decode_down_staged_bf16, mm, w, (__nv_bfloat16 *)y, tok, hidden, dim));
        else CUDA_CHECK(cudaLaunchKernelEx(&cfg, decode_down_bf16, mm, w, (__nv_bfloat16 *)y, tok, hidden, dim, vec));
    } else {
        const __half *mm = (const __half *)m, *w = (const __half *)wd;
        if (staged) CUDA_CHECK(cudaLaunchKernelEx(&cfg, decode_down_staged_fp16, mm, w, (__half *)y, tok, hidden, dim));
        else CUDA_CHECK(cudaLaunchKernelEx(&cfg, decode_down_fp16, mm, w, (__half *)y, tok, hidden, dim, vec));
    }
}
