// kernels.cu (02_linear): the kernels nn.Linear does NOT need, written so we can see what they
// would cost: a real transpose of W, a separate bias add, and the bias broadcast of addmm.
//
//   transpose_<dtype>       dst[c][r] = src[r][c]: W [out_dim, in_dim] -> W^T [in_dim, out_dim]
//   bias_add_<dtype>        y[i][j] += b[j]        (after a GEMM that wrote y = x W^T)
//   bias_broadcast_<dtype>  y[i][j]  = b[j]        (before a GEMM with beta = 1: addmm)
//
// The transpose is the classic tiled one: a 64 x 64 tile is read row by row (consecutive
// threads read consecutive addresses: coalesced), parked in shared memory, and written row by
// row of the *output* (coalesced again); each thread moves 8 elements, so that many loads are
// in flight at once. Reading the tile back column-wise without padding would send a warp's 32
// threads to one shared-memory bank: a row of 64 elements is 128 or 256 bytes, a multiple of
// the 32 four-byte banks, so a whole column sits in one bank. One padding element per row
// shifts each row along the banks: conflict-free for 4-byte elements, at most 2-way for 2-byte
// ones. It moves 2 x out_dim x in_dim x dtype-size bytes and does no arithmetic, so its
// ceiling is the device's copy bandwidth.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "dtype.h"
#include "elementwise.cuh"

namespace {

constexpr int TILE = 64;       // a tile is TILE x TILE elements
constexpr int TILE_ROWS = 8;   // a block is TILE x TILE_ROWS threads: each moves TILE / TILE_ROWS

// Types are moved as raw bits: a transpose never converts.
template <typename T>
__device__ void transpose_tile(const T *__restrict__ src, T *__restrict__ dst, size_t rows,
                               size_t cols)
{
    __shared__ T tile[TILE][TILE + 1]; // + 1: a column spread over the banks (see the top)
    size_t r0 = (size_t)blockIdx.y * TILE, c0 = (size_t)blockIdx.x * TILE;
    for (int i = threadIdx.y; i < TILE; i += TILE_ROWS) {
        size_t r = r0 + i, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * cols + c];
    }
    __syncthreads();
    // Output row = input column c0 + i; consecutive threads write consecutive output columns.
    for (int i = threadIdx.y; i < TILE; i += TILE_ROWS) {
        size_t c = c0 + i, r = r0 + threadIdx.x;
        if (c < cols && r < rows) dst[c * rows + r] = tile[threadIdx.x][i];
    }
}

// Each thread owns V consecutive columns j .. j + V - 1 (one vec16): it loads their b once and
// walks down the rows. When every row starts on a 16-byte boundary (aligned bases, a row length
// that is a whole number of vec16), every access is one 16-byte load or store (a warp moves 512
// contiguous bytes per instruction, enough bytes in flight to approach the copy ceiling);
// otherwise (vec false) each thread owns one column and the accesses are single elements.
// accumulate: y += b (add in fp32, round once), else y = b.
template <typename T, bool accumulate>
__device__ void bias_rows(T *__restrict__ y, const T *__restrict__ b, size_t rows, size_t cols, bool vec)
{
    constexpr int V = vec16<T>::n;
    const size_t row0 = (size_t)blockIdx.y * blockDim.y + threadIdx.y, row_step = (size_t)gridDim.y * blockDim.y;
    if (!vec) { // the launcher sized the grid for single elements
        size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (j >= cols) return;
        for (size_t i = row0; i < rows; i += row_step)
            y[i * cols + j] = accumulate ? from_float<T>(to_float(y[i * cols + j]) + to_float(b[j])) : b[j];
        return;
    }
    size_t j = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (j >= cols) return;
    const vec16<T> bv = *reinterpret_cast<const vec16<T> *>(b + j);
    for (size_t i = row0; i < rows; i += row_step) {
        vec16<T> *p = reinterpret_cast<vec16<T> *>(y + i * cols + j);
        if (accumulate) {
            vec16<T> v = *p;
#pragma unroll
            for (int k = 0; k < V; k++) v.v[k] = from_float<T>(to_float(v.v[k]) + to_float(bv.v[k]));
            *p = v;
        } else {
            *p = bv;
        }
    }
}

} // namespace

// Readable names in traces: one extern "C" kernel per storage type.
extern "C" __global__ void transpose_bf16(const __nv_bfloat16 *src, __nv_bfloat16 *dst, size_t rows, size_t cols) { transpose_tile(src, dst, rows, cols); }
extern "C" __global__ void transpose_fp16(const __half *src, __half *dst, size_t rows, size_t cols) { transpose_tile(src, dst, rows, cols); }
extern "C" __global__ void transpose_fp32(const float *src, float *dst, size_t rows, size_t cols) { transpose_tile(src, dst, rows, cols); }

extern "C" __global__ void bias_add_bf16(__nv_bfloat16 *y, const __nv_bfloat16 *b, size_t rows, size_t cols, bool vec) { bias_rows<__nv_bfloat16, true>(y, b, rows, cols, vec); }
extern "C" __global__ void bias_add_fp16(__half *y, const __half *b, size_t rows, size_t cols, bool vec) { bias_rows<__half, true>(y, b, rows, cols, vec); }
extern "C" __global__ void bias_add_fp32(float *y, const float *b, size_t rows, size_t cols, bool vec) { bias_rows<float, true>(y, b, rows, cols, vec); }

extern "C" __global__ void bias_broadcast_bf16(__nv_bfloat16 *y, const __nv_bfloat16 *b, size_t rows, size_t cols, bool vec) { bias_rows<__nv_bfloat16, false>(y, b, rows, cols, vec); }
extern "C" __global__ void bias_broadcast_fp16(__half *y, const __half *b, size_t rows, size_t cols, bool vec) { bias_rows<__half, false>(y, b, rows, cols, vec); }
extern "C" __global__ void bias_broadcast_fp32(float *y, const float *b, size_t rows, size_t cols, bool vec) { bias_rows<float, false>(y, b, rows, cols, vec); }

// dst [cols, rows] = transpose of src [rows, cols], both row-major, on `stream`.
extern "C" void launch_transpose(dtype_t t, const void *src, void *dst, size_t rows, size_t cols,
                                 cudaStream_t stream)
{
    const dim3 block(TILE, TILE_ROWS);
    const dim3 grid((unsigned)((cols + TILE - 1) / TILE), (unsigned)((rows + TILE - 1) / TILE));
    LAUNCH_BY_DTYPE(t, transpose, grid, block, stream, (const T *)src, (T *)dst, rows, cols);
}

// Blocks of 32 x 8 threads: x over column groups (one vec16 per thread when every row starts on a
// 16-byte boundary, else one column), y over rows. The grid's y extent stays under the hardware's
// 65535 and each thread loops over the rows left. Returns whether the kernel moves vec16s.
static bool bias_grid(dtype_t t, const void *y, const void *b, size_t rows, size_t cols, dim3 *grid, dim3 *block)
{
    const bool vec = aligned16(y) && aligned16(b) && cols % vec_width(t) == 0;
    const size_t groups = vec ? cols / vec_width(t) : cols;
    *block = dim3(32, 8);
    const size_t row_blocks = (rows + 7) / 8;
    *grid = dim3((unsigned)((groups + 31) / 32), (unsigned)(row_blocks < 65535 ? row_blocks : 65535));
    return vec;
}

// accumulate: y [rows, cols] += b [cols] in every row (bias_add), else y = b (bias_broadcast).
static void launch_bias(bool accumulate, dtype_t t, void *y, const void *b, size_t rows, size_t cols,
                        cudaStream_t stream)
{
    if (rows == 0 || cols == 0) return;
    dim3 grid, block;
    const bool vec = bias_grid(t, y, b, rows, cols, &grid, &block);
    if (accumulate) LAUNCH_BY_DTYPE(t, bias_add, grid, block, stream, (T *)y, (const T *)b, rows, cols, vec);
    else LAUNCH_BY_DTYPE(t, bias_broadcast, grid, block, stream, (T *)y, (const T *)b, rows, cols, vec);
}

// y [rows, cols] += b [cols] broadcast over the rows: add in fp32, round once.
extern "C" void launch_bias_add(dtype_t t, void *y, const void *b, size_t rows, size_t cols, cudaStream_t stream)
{
    launch_bias(true, t, y, b, rows, cols, stream);
}

// y [rows, cols] = b [cols] in every row: the expanded copy addmm starts from.
extern "C" void launch_bias_broadcast(dtype_t t, void *y, const void *b, size_t rows, size_t cols, cudaStream_t stream)
{
    launch_bias(false, t, y, b, rows, cols, stream);
}
