// geglu.cu (04_fused_mlp): the fused GeGLU, m = gelu(gate) * up in one pass (rungs fused_geglu and
// merged): reads gate and up once, writes m once.
//
//   geglu_bf16 / _fp16 / _fp32
//
// The GELU is 03_simple_mlp's gelu.cuh, so every rung computes the same function. Arithmetic is
// fp32; each output is rounded once to the storage type.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

extern "C" {
#include "dtype.h"
}
#include "../03_simple_mlp/gelu.cuh"
#include "check.h"
#include "elementwise.cuh"
#include "geglu.h"

// Eager runs gelu (read gate, write act) then mul (read act and up, write m): 5 passes of M x hidden
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
        program_error("launch_geglu: %zu columns are more than one grid row holds", cols);
        exit(EXIT_BAD_INPUT);
    }
    const dim3 grid((unsigned)bx, (unsigned)(rows < 65535 ? rows : 65535));
    LAUNCH_BY_DTYPE(t, geglu, grid, (unsigned)threads, stream, (const T *)gate, (const T *)up, ld, (T *)m, rows, cols,
                    vec);
}
