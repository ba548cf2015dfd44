// version.cuh: what a numbered version of the GEMM with the GeGLU epilogue tells the dispatcher
// (gemm_geglu.cu), in one place: each gemm/N_<name>.cuh ends with
//
//   GEMM_GEGLU_VERSION(N, name, operands, grid, min_cc, "the idea, one line")
//
// which defines its two kernels, gemm_geglu_<N>_<name>_bf16 and _fp16 (C linkage, so that traces
// show these names as they are; each runs gemmN::gemm_geglu<T> in blocks of gemmN::LAYOUT.threads),
// and its row, gemm_geglu_row<N>. The dispatcher includes the version files and walks the rows.
//
// A version whose tile width depends on the shape ends instead with
//
//   GEMM_GEGLU_WIDTH_KERNELS(N, name, width) ...      one pair of kernels per width
//   GEMM_GEGLU_VERSION_BY_WIDTH(N, name, operands, grid, min_cc, "idea")
//
// and defines gemmN::WIDTHS (its widths, each with its layout and kernels) and gemmN::pick_width
// (the rule that picks one for a shape). Its kernels are named gemm_geglu_<N>_<name>_w<width>_bf16.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda.h> // CUtensorMap (a type only: the program does not link the driver API)

#include "../gemm_geglu.h"

// How the grid covers the tiles: one block per tile; one block per SM walking its tiles (as many
// as there are tiles, when fewer); one block on every SM that has a step of K to do (work split
// along K as well); or clusters of two blocks, one block per SM, walking pairs of tiles one above
// the other (as many clusters as fit at once, or as there are pairs).
enum gemm_geglu_grid { ONE_BLOCK_PER_TILE, ONE_BLOCK_PER_SM, EVERY_SM, PAIRS_OF_SMS };
// What the kernel takes for x, Wg, Wu (and m): pointers, or TMA tensor maps (and m's map, used
// when m's rows can take TMA stores, else the kernel stores through the pointer; and a scratch
// buffer of layout.scratch_per_block bytes per block, zeroed once, that the kernel leaves as it
// found it).
enum gemm_geglu_operands { POINTERS, TENSOR_MAPS, TENSOR_MAPS_AND_M, TENSOR_MAPS_M_AND_SCRATCH };

// A version's tile of m and the boxes its TMA copies move (0 where it makes none).
struct gemm_geglu_layout {
    int tile_m, tile_n;    // rows and columns of m per tile
    int box_k;             // columns of K per box of x, Wg, Wu
    int box_x, box_w;      // rows of x and of Wg (and of Wu) per box
    int box_m;             // the side of a square box of m (its stores)
    int threads, smem_bytes;
    int scratch_per_block; // bytes of scratch buffer per block (TENSOR_MAPS_M_AND_SCRATCH)
};

// One tile width of such a version: its layout and its kernels (bf16, fp16).
struct gemm_geglu_width {
    gemm_geglu_layout layout;
    const void *kernel[2];
};
// Which of n widths to use for an M x hidden m on sms SMs.
typedef int (*gemm_geglu_width_rule)(const gemm_geglu_width *widths, int n, size_t M, size_t hidden, int sms);

struct gemm_geglu_row_data {
    gemm_geglu_version info;
    gemm_geglu_grid grid;
    gemm_geglu_operands operands;
    gemm_geglu_layout layout;  // of the one width; the widest, for a version with several
    const void *kernel[2];     // bf16, fp16 (of that width)
    const gemm_geglu_width *widths; // a version with several widths: them, and its rule; else null
    int n_widths;
    gemm_geglu_width_rule pick_width;
};

// The registry: gemm_geglu_row<N>::defined once a version file has registered version N.
template <int N> struct gemm_geglu_row {
    static constexpr bool defined = false;
};

// The kernels' parameters, as the launch passes them, one macro per gemm_geglu_operands.
#define GEMM_GEGLU_KERNEL(number, name, type, T) \
    extern "C" __global__ void __launch_bounds__(gemm##number::LAYOUT.threads, 1) gemm_geglu_##number##_##name##_##type
#define GEMM_GEGLU_POINTERS(number, name, type, T)                                                              \
    GEMM_GEGLU_KERNEL(number, name, type, T)(const T *x, const T *wg, const T *wu, T *m, int M, int dim, int hidden) \
    {                                                                                                            \
        gemm##number::gemm_geglu<T>(x, wg, wu, m, M, dim, hidden);                                               \
    }
#define GEMM_GEGLU_TENSOR_MAPS(number, name, type, T)                                                           \
    GEMM_GEGLU_KERNEL(number, name, type, T)(const __grid_constant__ CUtensorMap tx,                            \
                                             const __grid_constant__ CUtensorMap tg,                            \
                                             const __grid_constant__ CUtensorMap tu, T *m, int M, int dim,      \
                                             int hidden)                                                        \
    {                                                                                                            \
        gemm##number::gemm_geglu<T>(&tx, &tg, &tu, m, M, dim, hidden);                                           \
    }
#define GEMM_GEGLU_TENSOR_MAPS_AND_M(number, name, type, T)                                                     \
    GEMM_GEGLU_KERNEL(number, name, type, T)(const __grid_constant__ CUtensorMap tx,                            \
                                             const __grid_constant__ CUtensorMap tg,                            \
                                             const __grid_constant__ CUtensorMap tu,                            \
                                             const __grid_constant__ CUtensorMap tm, int store_by_tma, T *m,    \
                                             int M, int dim, int hidden)                                        \
    {                                                                                                            \
        gemm##number::gemm_geglu<T>(&tx, &tg, &tu, store_by_tma ? &tm : nullptr, m, M, dim, hidden);             \
    }

#define GEMM_GEGLU_TENSOR_MAPS_M_AND_SCRATCH(number, name, type, T)                                            \
    GEMM_GEGLU_KERNEL(number, name, type, T)(const __grid_constant__ CUtensorMap tx,                            \
                                             const __grid_constant__ CUtensorMap tg,                            \
                                             const __grid_constant__ CUtensorMap tu,                            \
                                             const __grid_constant__ CUtensorMap tm, int store_by_tma, T *m,    \
                                             int M, int dim, int hidden, void *scratch)                         \
    {                                                                                                            \
        gemm##number::gemm_geglu<T>(&tx, &tg, &tu, store_by_tma ? &tm : nullptr, m, M, dim, hidden, scratch);    \
    }

#define GEMM_GEGLU_VERSION(number, name, operands, grid, min_cc, idea)                                          \
    GEMM_GEGLU_##operands(number, name, bf16, __nv_bfloat16)                                                    \
    GEMM_GEGLU_##operands(number, name, fp16, __half)                                                           \
    template <> struct gemm_geglu_row<number> {                                                                 \
        static constexpr bool defined = true;                                                                   \
        static gemm_geglu_row_data get()                                                                        \
        {                                                                                                        \
            return {{number, #name, idea, min_cc}, grid, operands, gemm##number::LAYOUT,                         \
                    {(const void *)gemm_geglu_##number##_##name##_bf16,                                          \
                     (const void *)gemm_geglu_##number##_##name##_fp16}, nullptr, 0, nullptr};                   \
        }                                                                                                        \
    };

// The two kernels of one width: gemmN::gemm_geglu_at_width<T, width>, with tensor maps and m.
#define GEMM_GEGLU_WIDTH_KERNEL(number, name, width, type, T)                                                   \
    extern "C" __global__ void __launch_bounds__(gemm##number::THREADS, 1)                                     \
        gemm_geglu_##number##_##name##_w##width##_##type(const __grid_constant__ CUtensorMap tx,               \
                                                          const __grid_constant__ CUtensorMap tg,               \
                                                          const __grid_constant__ CUtensorMap tu, T *m, int M,  \
                                                          int dim, int hidden)                                  \
    {                                                                                                            \
        gemm##number::gemm_geglu_at_width<T, width>(&tx, &tg, &tu, m, M, dim, hidden);                              \
    }
#define GEMM_GEGLU_WIDTH_KERNELS(number, name, width)                                                          \
    GEMM_GEGLU_WIDTH_KERNEL(number, name, width, bf16, __nv_bfloat16)                                          \
    GEMM_GEGLU_WIDTH_KERNEL(number, name, width, fp16, __half)
// A width's entry of gemmN::WIDTHS.
#define GEMM_GEGLU_WIDTH(number, name, width)                                                                   \
    gemm_geglu_width                                                                                             \
    {                                                                                                            \
        gemm##number::layout_of(width), {(const void *)gemm_geglu_##number##_##name##_w##width##_bf16,             \
                                         (const void *)gemm_geglu_##number##_##name##_w##width##_fp16}            \
    }

#define GEMM_GEGLU_VERSION_BY_WIDTH(number, name, operands, grid, min_cc, idea)                                 \
    template <> struct gemm_geglu_row<number> {                                                                 \
        static constexpr bool defined = true;                                                                   \
        static gemm_geglu_row_data get()                                                                        \
        {                                                                                                        \
            const gemm_geglu_width &widest = gemm##number::WIDTHS[gemm##number::N_WIDTHS - 1];                  \
            return {{number, #name, idea, min_cc}, grid, operands, widest.layout,                                \
                    {widest.kernel[0], widest.kernel[1]}, gemm##number::WIDTHS, gemm##number::N_WIDTHS,           \
                    gemm##number::pick_width};                                                                   \
        }                                                                                                        \
    };
