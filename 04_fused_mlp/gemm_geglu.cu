// gemm_geglu.cu (04_fused_mlp): the GEMM with the GeGLU epilogue, m = gelu_tanh(x Wg^T) * (x Wu^T),
// in numbered versions, one idea each; this file only names, describes and launches them.
//
//   gemm/1_mma_sync.cuh      mma.sync tiles fed by a cp.async ring (sm_80 and newer)
//   gemm/2_wgmma.cuh         Hopper's wgmma, operands from shared memory (sm_90a from here on)
//   gemm/3_tma_producer.cuh  a producer warp loads by TMA into an mbarrier ring
//   gemm/4_persistent.cuh    persistent blocks; tiles in bands that keep panels in L2
//   gemm/5_tma_store.cuh     the epilogue staged in shared memory and stored by TMA
//   gemm/6_pingpong.cuh      two consumers on tiles of their own, taking turns (ping-pong)
//   gemm/ptx.cuh             the instructions they use, wrapped once
//
// Versions 2 and on are compiled only where the Makefile builds this file for sm_90a and defines
// GEMM_GEGLU_SM90A; their device code exists only in the sm_90a pass. The program picks at run
// time, so the same binary runs version 1 on an A100.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "check.h"
#include "gpu.h"
#include "gemm_geglu.h"

#include "gemm/1_mma_sync.cuh"
#if defined(GEMM_GEGLU_SM90A)
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled
#include "gemm/2_wgmma.cuh"
#include "gemm/3_tma_producer.cuh"
#include "gemm/4_persistent.cuh"
#include "gemm/5_tma_store.cuh"
#include "gemm/6_pingpong.cuh"
#endif

// A version's two kernels, gemm_geglu_<number>_<name>_bf16 and _fp16: C linkage, so that traces
// show these names as they are; each runs gemm<number>::gemm_geglu<T> in blocks of
// gemm<number>::THREADS. `operands` is one of the three macros below: the kernel's parameters,
// as the launch passes them (see operand_kind).
#define GEMM_GEGLU_KERNELS(number, name, operands)   \
    operands(number, name, bf16, __nv_bfloat16)      \
    operands(number, name, fp16, __half)
#define GEMM_GEGLU_KERNEL(number, name, type) \
    extern "C" __global__ void __launch_bounds__(gemm##number::THREADS, 1) gemm_geglu_##number##_##name##_##type
// x, Wg, Wu as pointers.
#define POINTERS_KERNEL(number, name, type, T)                                                        \
    GEMM_GEGLU_KERNEL(number, name, type)(const T *x, const T *wg, const T *wu, T *m, int M, int dim, int hidden) \
    {                                                                                                   \
        gemm##number::gemm_geglu<T>(x, wg, wu, m, M, dim, hidden);                                      \
    }
// x, Wg, Wu as tensor maps, in the kernel's parameter space (__grid_constant__: TMA reads them there).
#define TENSOR_MAPS_KERNEL(number, name, type, T)                                                       \
    GEMM_GEGLU_KERNEL(number, name, type)(const __grid_constant__ CUtensorMap tx,                        \
                                          const __grid_constant__ CUtensorMap tg,                        \
                                          const __grid_constant__ CUtensorMap tu, T *m, int M, int dim, int hidden) \
    {                                                                                                     \
        gemm##number::gemm_geglu<T>(&tx, &tg, &tu, m, M, dim, hidden);                                    \
    }
// And m's tensor map, used when store_by_tma (else the kernel stores through the pointer m).
#define TENSOR_MAPS_AND_M_KERNEL(number, name, type, T)                                                  \
    GEMM_GEGLU_KERNEL(number, name, type)(const __grid_constant__ CUtensorMap tx,                         \
                                          const __grid_constant__ CUtensorMap tg,                         \
                                          const __grid_constant__ CUtensorMap tu,                         \
                                          const __grid_constant__ CUtensorMap tm, int store_by_tma, T *m, \
                                          int M, int dim, int hidden)                                     \
    {                                                                                                      \
        gemm##number::gemm_geglu<T>(&tx, &tg, &tu, store_by_tma ? &tm : nullptr, m, M, dim, hidden);      \
    }

GEMM_GEGLU_KERNELS(1, mma_sync, POINTERS_KERNEL)
#if defined(GEMM_GEGLU_SM90A)
GEMM_GEGLU_KERNELS(2, wgmma, POINTERS_KERNEL)
GEMM_GEGLU_KERNELS(3, tma_producer, TENSOR_MAPS_KERNEL)
GEMM_GEGLU_KERNELS(4, persistent, TENSOR_MAPS_KERNEL)
GEMM_GEGLU_KERNELS(5, tma_store, TENSOR_MAPS_AND_M_KERNEL)
GEMM_GEGLU_KERNELS(6, pingpong, TENSOR_MAPS_AND_M_KERNEL)
#endif

namespace {

constexpr int TILE_M = 128, TILE_N_MIN = 64; // every version's tiles have 128 rows of m, 64 or 128 columns

enum grid_kind { ONE_BLOCK_PER_TILE, ONE_BLOCK_PER_SM };
// What the kernel takes for x, Wg, Wu (and m): pointers, or tensor maps (weight boxes of 128 or 64 rows).
enum operand_kind { POINTERS, TENSOR_MAPS, TENSOR_MAPS_AND_M, TENSOR_MAPS_64_AND_M };

struct version_row {
    gemm_geglu_version info;
    grid_kind grid;
    operand_kind operands;
    int tile_n; // columns of m per tile
};

const version_row versions[] = {
    {{1, "mma_sync", "mma.sync tiles (sm_80) fed by a 4-stage cp.async ring", 80}, ONE_BLOCK_PER_TILE, POINTERS,
     128},
    {{2, "wgmma", "wgmma m64n256 from shared memory; the same threads load with cp.async", 90},
     ONE_BLOCK_PER_TILE, POINTERS, 128},
    {{3, "tma_producer", "a producer warp loads by TMA into an mbarrier ring; the consumers only multiply", 90},
     ONE_BLOCK_PER_TILE, TENSOR_MAPS, 128},
    {{4, "persistent", "persistent blocks; tiles in bands that keep x and [Wg; Wu] panels in L2", 90},
     ONE_BLOCK_PER_SM, TENSOR_MAPS, 128},
    {{5, "tma_store", "the epilogue staged in shared memory and stored by TMA", 90}, ONE_BLOCK_PER_SM,
     TENSOR_MAPS_AND_M, 128},
    {{6, "pingpong", "two consumers on 128 x 64 tiles of their own take turns: one's epilogue under the other's MMAs",
      90},
     ONE_BLOCK_PER_SM, TENSOR_MAPS_64_AND_M, 64},
};
constexpr int N_VERSIONS = (int)(sizeof versions / sizeof versions[0]);

// The code this build holds: kernels (bf16, fp16), block size, dynamic shared memory.
struct kernel_row {
    const void *kernel[2];
    int threads, smem_bytes;
};
const kernel_row kernels[] = {
    {{(const void *)gemm_geglu_1_mma_sync_bf16, (const void *)gemm_geglu_1_mma_sync_fp16}, gemm1::THREADS,
     gemm1::SMEM_BYTES},
#if defined(GEMM_GEGLU_SM90A)
    {{(const void *)gemm_geglu_2_wgmma_bf16, (const void *)gemm_geglu_2_wgmma_fp16}, gemm2::THREADS,
     gemm2::SMEM_BYTES},
    {{(const void *)gemm_geglu_3_tma_producer_bf16, (const void *)gemm_geglu_3_tma_producer_fp16}, gemm3::THREADS,
     gemm3::SMEM_BYTES},
    {{(const void *)gemm_geglu_4_persistent_bf16, (const void *)gemm_geglu_4_persistent_fp16}, gemm4::THREADS,
     gemm4::SMEM_BYTES},
    {{(const void *)gemm_geglu_5_tma_store_bf16, (const void *)gemm_geglu_5_tma_store_fp16}, gemm5::THREADS,
     gemm5::SMEM_BYTES},
    {{(const void *)gemm_geglu_6_pingpong_bf16, (const void *)gemm_geglu_6_pingpong_fp16}, gemm6::THREADS,
     gemm6::SMEM_BYTES},
#endif
};
constexpr int N_BUILT = (int)(sizeof kernels / sizeof kernels[0]);
static_assert(N_BUILT <= N_VERSIONS, "a kernel row per version, in order");

} // namespace

extern "C" int gemm_geglu_n_versions(void) { return N_VERSIONS; }

extern "C" const gemm_geglu_version *gemm_geglu_version_info(int number)
{
    return number >= 1 && number <= N_VERSIONS ? &versions[number - 1].info : NULL;
}

// sm_80 code runs on every GPU from sm_80 on; sm_90a code on compute capability 9.0 only.
extern "C" int gemm_geglu_runs_here(int version)
{
    if (version < 1 || version > N_BUILT) return 0;
    const int cc = gpu_compute_capability(), need = versions[version - 1].info.min_cc;
    return need >= 90 ? cc == 90 : cc >= need;
}

// The default: the first of these that runs here, ranked by speed on an H200 at the article's shape.
extern "C" int gemm_geglu_default_version(void)
{
    static const int fastest_first[] = {6, 5, 4, 3, 2, 1};
    static_assert(sizeof fastest_first / sizeof fastest_first[0] == N_VERSIONS, "every version ranked");
    for (int v : fastest_first)
        if (gemm_geglu_runs_here(v)) return v;
    return 0;
}

extern "C" int gemm_geglu_accepts(int version, dtype_t t, size_t M, size_t dim, size_t hidden, char *why, size_t len)
{
    const size_t int_max = 0x7fffffff;
    const gemm_geglu_version *v = gemm_geglu_version_info(version);
    const size_t tiles_m = (M + TILE_M - 1) / TILE_M, tiles_n = (hidden + TILE_N_MIN - 1) / TILE_N_MIN;
    if (!len) why = NULL;
    if (!v) {
        if (why) snprintf(why, len, "no version %d (there are 1..%d)", version, N_VERSIONS);
    } else if (t != DTYPE_BF16 && t != DTYPE_FP16) {
        if (why) snprintf(why, len, "%s: the tensor cores take bf16 or fp16 operands", dtype_name(t));
    } else if (M == 0 || dim == 0 || hidden == 0 || M > int_max || dim > int_max || hidden > int_max) {
        if (why) snprintf(why, len, "M %zu, dim %zu, hidden %zu: each must be 1 .. 2^31 - 1", M, dim, hidden);
    } else if (dim % 8 != 0) {
        if (why) snprintf(why, len, "dim %zu: rows are read in 16-byte pieces, so dim must be a multiple of 8", dim);
    } else if (versions[version - 1].grid == ONE_BLOCK_PER_TILE && tiles_m > 65535) {
        if (why) snprintf(why, len, "M %zu: one block per tile, and %zu rows of tiles exceed the grid's 65535", M, tiles_m);
    } else if (tiles_m * tiles_n > ((size_t)1 << 30)) {
        if (why) snprintf(why, len, "M %zu, hidden %zu: more than 2^30 tiles", M, hidden);
    } else {
        return 1;
    }
    return 0;
}

#if defined(GEMM_GEGLU_SM90A)
// The host side of TMA: a tensor map describes one matrix (base, sizes, row pitch) and the box a
// copy moves. cuTensorMapEncodeTiled is a driver API function; we reach it through the runtime,
// so the program needs no -lcuda.
static void encode_tensor_map(CUtensorMap *map, const void *base, size_t rows, size_t cols, unsigned box_cols,
                              unsigned box_rows, dtype_t t)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode;
    if (!encode) {
        cudaDriverEntryPointQueryResult found;
#if CUDART_VERSION >= 12050
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000,
                                                    cudaEnableDefault, &found));
#else
        CUDA_CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void **)&encode, cudaEnableDefault, &found));
#endif
        if (found != cudaDriverEntryPointSuccess || !encode) {
            program_error("gemm_geglu: the driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12)");
            exit(EXIT_CUDA_ERROR);
        }
    }
    const cuuint64_t dims[2] = {cols, rows}, pitch[1] = {cols * 2};
    const cuuint32_t box[2] = {box_cols, box_rows}, step[2] = {1, 1};
    const CUresult r = encode(map, t == DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                              2, (void *)base, dims, pitch, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        program_error("gemm_geglu: cuTensorMapEncodeTiled failed (CUresult %d) for a [%zu, %zu] matrix",
                (int)r, rows, cols);
        exit(EXIT_CUDA_ERROR);
    }
}

// The maps of the last call, reused while the pointers and sizes stay (a model calls this with
// the same buffers every forward): x, Wg, Wu in boxes of 64 of K x 128 rows (one stage of the
// ring), Wg and Wu also in boxes of 64 rows (the ping-pong tiles), and m in boxes of 64 x 64 (the
// epilogue's stores) when a TMA can write m's rows: a tensor map needs its base 16-byte aligned
// and its row pitch a multiple of 16 bytes.
struct tensor_maps {
    const void *x, *wg, *wu, *m;
    size_t M, dim, hidden;
    dtype_t t;
    int store_by_tma;
    CUtensorMap tx, tg, tu, tg64, tu64, tm;
};

static tensor_maps *tensor_maps_for(dtype_t t, const void *x, const void *wg, const void *wu, void *m, size_t M,
                                    size_t dim, size_t hidden)
{
    static tensor_maps maps;
    if (maps.x != x || maps.wg != wg || maps.wu != wu || maps.m != m || maps.M != M || maps.dim != dim ||
        maps.hidden != hidden || maps.t != t) {
        encode_tensor_map(&maps.tx, x, M, dim, gemm2::BK, gemm2::BM, t);
        encode_tensor_map(&maps.tg, wg, hidden, dim, gemm2::BK, gemm2::BN, t);
        encode_tensor_map(&maps.tu, wu, hidden, dim, gemm2::BK, gemm2::BN, t);
        encode_tensor_map(&maps.tg64, wg, hidden, dim, gemm6::BK, gemm6::BN, t);
        encode_tensor_map(&maps.tu64, wu, hidden, dim, gemm6::BK, gemm6::BN, t);
        maps.store_by_tma = hidden % 8 == 0 && (uintptr_t)m % 16 == 0;
        if (maps.store_by_tma) encode_tensor_map(&maps.tm, m, M, hidden, gemm5::OUT_BOX, gemm5::OUT_BOX, t);
        else memset(&maps.tm, 0, sizeof maps.tm);
        maps.x = x, maps.wg = wg, maps.wu = wu, maps.m = m, maps.M = M, maps.dim = dim, maps.hidden = hidden;
        maps.t = t;
    }
    return &maps;
}
#endif

static unsigned multiprocessors(void)
{
    static int sms;
    if (!sms) {
        int dev;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    return (unsigned)sms;
}

extern "C" void launch_gemm_geglu(int version, dtype_t t, const void *x, const void *wg, const void *wu, void *m,
                                  size_t M, size_t dim, size_t hidden, cudaStream_t stream)
{
    char why[256];
    if (!gemm_geglu_accepts(version, t, M, dim, hidden, why, sizeof why)) {
        program_error("gemm_geglu version %d: %s", version, why);
        exit(EXIT_BAD_INPUT);
    }
    const version_row &v = versions[version - 1];
    if (!gemm_geglu_runs_here(version)) {
        program_error("gemm_geglu version %d (%s) does not run here: it needs %s", version, v.info.name,
                v.info.min_cc >= 90 ? "an sm_90 GPU and this file built for sm_90a" : "an sm_80 or newer GPU");
        exit(EXIT_BAD_INPUT);
    }
    if ((uintptr_t)x % 16 || (uintptr_t)wg % 16 || (uintptr_t)wu % 16 || (uintptr_t)m % 4) {
        program_error("gemm_geglu needs x, Wg, Wu 16-byte aligned and m 4-byte aligned");
        exit(EXIT_BAD_INPUT);
    }
    const kernel_row &k = kernels[version - 1];
    const int fp16 = t == DTYPE_FP16;
    const void *kernel = k.kernel[fp16];
    static bool opted_in[N_VERSIONS][2];
    if (!opted_in[version - 1][fp16]) { // over 48 KB of dynamic shared memory needs an opt-in, once per kernel
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, k.smem_bytes));
        opted_in[version - 1][fp16] = true;
    }

    const size_t tiles_m = (M + TILE_M - 1) / TILE_M, tiles_n = (hidden + v.tile_n - 1) / v.tile_n;
    const size_t tiles = tiles_m * tiles_n;
    const dim3 grid = v.grid == ONE_BLOCK_PER_TILE ? dim3((unsigned)tiles_n, (unsigned)tiles_m)
                                                   : dim3((unsigned)(tiles < multiprocessors() ? tiles : multiprocessors()));
    int Mi = (int)M, dim_i = (int)dim, hidden_i = (int)hidden;
    if (v.operands == POINTERS) {
        void *args[] = {&x, &wg, &wu, &m, &Mi, &dim_i, &hidden_i};
        CUDA_CHECK(cudaLaunchKernel(kernel, grid, k.threads, args, k.smem_bytes, stream));
        return;
    }
#if defined(GEMM_GEGLU_SM90A)
    tensor_maps *maps = tensor_maps_for(t, x, wg, wu, m, M, dim, hidden);
    if (v.operands == TENSOR_MAPS) {
        void *args[] = {&maps->tx, &maps->tg, &maps->tu, &m, &Mi, &dim_i, &hidden_i};
        CUDA_CHECK(cudaLaunchKernel(kernel, grid, k.threads, args, k.smem_bytes, stream));
    } else {
        const int half_rows = v.operands == TENSOR_MAPS_64_AND_M;
        void *args[] = {&maps->tx, half_rows ? &maps->tg64 : &maps->tg, half_rows ? &maps->tu64 : &maps->tu,
                        &maps->tm, &maps->store_by_tma, &m, &Mi, &dim_i, &hidden_i};
        CUDA_CHECK(cudaLaunchKernel(kernel, grid, k.threads, args, k.smem_bytes, stream));
    }
#endif
}
