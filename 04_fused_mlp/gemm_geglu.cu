// gemm_geglu.cu (04_fused_mlp): the GEMM with the GeGLU epilogue, m = gelu_tanh(x Wg^T) * (x Wu^T),
// in numbered versions, one idea each; this file only names, describes and launches them.
// A version is one file, gemm/N_<name>.cuh, that ends by registering its kernels and its row
// (gemm/version.cuh), and one line below that includes it:
//
#include "gemm/1_mma_sync.cuh"     // mma.sync tiles fed by a cp.async ring (sm_80 and newer)
#include "gemm/2_wgmma.cuh"        // Hopper's wgmma, operands from shared memory (sm_90a from here on)
#include "gemm/3_tma_producer.cuh" // a producer warp loads by TMA into an mbarrier ring
#include "gemm/4_persistent.cuh"   // persistent blocks; tiles in bands that keep panels in L2
#include "gemm/5_tma_store.cuh"    // the epilogue staged in shared memory and stored by TMA
#include "gemm/6_pingpong.cuh"     // two consumers on tiles of their own, taking turns (ping-pong)
#include "gemm/7_stream_k.cuh"     // the last waves split along K between all the SMs (stream-K)
#include "gemm/8_multicast.cuh"    // clusters of two blocks that share each Wg|Wu tile (TMA multicast)
#include "gemm/9_wave_tiles.cuh"   // the tile's width picked per shape, so that the tiles fill the waves
//
// gemm/ptx.cuh wraps the instructions they use, once. The Makefile builds this file for sm_80,
// sm_90 and sm_90a; the Hopper versions' device code exists only in the sm_90a pass, and the
// program picks at run time, so the same binary runs version 1 on an A100.
#include <cuda_runtime.h>
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <array>
#include <utility>

#include "check.h"
#include "dtype.h"
#include "gpu.h"

namespace {

// The rows the version files registered, 1, 2, ... up to the first number none registered.
template <int N> constexpr int count_versions()
{
    if constexpr (gemm_geglu_row<N + 1>::defined) return count_versions<N + 1>();
    else return N;
}
constexpr int N_VERSIONS = count_versions<0>();
template <int... I> std::array<gemm_geglu_row_data, sizeof...(I)> rows_of(std::integer_sequence<int, I...>)
{
    return {gemm_geglu_row<I + 1>::get()...};
}
const std::array<gemm_geglu_row_data, N_VERSIONS> versions = rows_of(std::make_integer_sequence<int, N_VERSIONS>{});

// The tile and kernels a version runs for an M x hidden m: its one, or the width its rule picks
// for this GPU's SMs.
struct tile_choice {
    const gemm_geglu_layout *layout;
    const void *const *kernel; // bf16, fp16
};
tile_choice tile_for(const gemm_geglu_row_data &v, size_t M, size_t hidden)
{
    if (!v.n_widths) return {&v.layout, v.kernel};
    const gemm_geglu_width &w = v.widths[v.pick_width(v.widths, v.n_widths, M, hidden, gpu_multiprocessors())];
    return {&w.layout, w.kernel};
}

} // namespace

extern "C" int gemm_geglu_n_versions(void) { return N_VERSIONS; }

extern "C" void gemm_geglu_tile(int version, size_t M, size_t hidden, int *rows, int *cols)
{
    const gemm_geglu_layout *l = version >= 1 && version <= N_VERSIONS ? tile_for(versions[version - 1], M, hidden).layout
                                                                        : NULL;
    *rows = l ? l->tile_m : 0;
    *cols = l ? l->tile_n : 0;
}

extern "C" const char *gemm_geglu_build_stamp(void) { return __DATE__ " " __TIME__; }

extern "C" const gemm_geglu_version *gemm_geglu_version_info(int number)
{
    return number >= 1 && number <= N_VERSIONS ? &versions[number - 1].info : NULL;
}

// sm_80 code runs on every GPU from sm_80 on; sm_90a code on compute capability 9.0 only.
extern "C" int gemm_geglu_runs_here(int version)
{
    if (version < 1 || version > N_VERSIONS) return 0;
    const int cc = gpu_compute_capability(), need = versions[version - 1].info.min_cc;
    return need >= 90 ? cc == 90 : cc >= need;
}

// The default: the newest version that runs here (each version is the one before with one more idea).
extern "C" int gemm_geglu_default_version(void)
{
    for (int v = N_VERSIONS; v >= 1; v--)
        if (gemm_geglu_runs_here(v)) return v;
    return 0;
}

extern "C" int gemm_geglu_accepts(int version, dtype_t t, size_t M, size_t dim, size_t hidden, char *why, size_t len)
{
    const size_t int_max = 0x7fffffff;
    const gemm_geglu_version *v = gemm_geglu_version_info(version);
    if (!len) why = NULL;
    if (!v) {
        if (why) snprintf(why, len, "no version %d (there are 1..%d)", version, N_VERSIONS);
        return 0;
    }
    const gemm_geglu_row_data &row = versions[version - 1];
    const gemm_geglu_layout &l = row.n_widths ? row.widths[0].layout : row.layout; // the narrowest: the most tiles
    const size_t tiles_m = (M + l.tile_m - 1) / l.tile_m, tiles_n = (hidden + l.tile_n - 1) / l.tile_n;
    if (t != DTYPE_BF16 && t != DTYPE_FP16) {
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

// The maps of a version's last call, reused while the pointers and sizes stay (a model calls this
// with the same buffers every forward): x, Wg, Wu in the version's boxes (one stage of its ring),
// and m in square boxes (the epilogue's stores) when a TMA can write m's rows: a tensor map needs
// its base 16-byte aligned and its row pitch a multiple of 16 bytes.
struct tensor_maps {
    const void *x, *wg, *wu, *m;
    size_t M, dim, hidden;
    dtype_t t;
    int store_by_tma;
    CUtensorMap tx, tg, tu, tm;
};

static tensor_maps *tensor_maps_for(int version, const gemm_geglu_layout &l, dtype_t t, const void *x,
                                    const void *wg, const void *wu, void *m, size_t M, size_t dim, size_t hidden)
{
    static tensor_maps cache[N_VERSIONS];
    tensor_maps &maps = cache[version - 1]; // the same shape gives the same layout
    if (maps.x != x || maps.wg != wg || maps.wu != wu || maps.m != m || maps.M != M || maps.dim != dim ||
        maps.hidden != hidden || maps.t != t) {
        encode_tensor_map(&maps.tx, x, M, dim, l.box_k, l.box_x, t);
        encode_tensor_map(&maps.tg, wg, hidden, dim, l.box_k, l.box_w, t);
        encode_tensor_map(&maps.tu, wu, hidden, dim, l.box_k, l.box_w, t);
        maps.store_by_tma = l.box_m && hidden % 8 == 0 && (uintptr_t)m % 16 == 0;
        if (maps.store_by_tma) encode_tensor_map(&maps.tm, m, M, hidden, l.box_m, l.box_m, t);
        else memset(&maps.tm, 0, sizeof maps.tm);
        maps.x = x, maps.wg = wg, maps.wu = wu, maps.m = m, maps.M = M, maps.dim = dim, maps.hidden = hidden;
        maps.t = t;
    }
    return &maps;
}

// The scratch buffer of the versions that take one: grown (zeroed) when a launch needs more,
// kept for the program's life. The first launch at a shape is never inside a graph capture (the
// stages run a forward before they capture it), so the allocation is not either.
static void *scratch_for(size_t bytes)
{
    static void *buf;
    static size_t size;
    if (bytes > size) {
        CUDA_CHECK(cudaDeviceSynchronize()); // a kernel in flight may still use the old one
        CUDA_CHECK(cudaFree(buf));
        CUDA_CHECK(cudaMalloc(&buf, bytes));
        CUDA_CHECK(cudaMemset(buf, 0, bytes));
        size = bytes;
    }
    return buf;
}

// The launch of a kernel in clusters of two blocks (PAIRS_OF_SMS); `cluster` holds the attribute.
static cudaLaunchConfig_t pairs_config(dim3 grid, const gemm_geglu_layout &l, cudaStream_t stream,
                                       cudaLaunchAttribute *cluster)
{
    *cluster = {};
    cluster->id = cudaLaunchAttributeClusterDimension;
    cluster->val.clusterDim.x = 2, cluster->val.clusterDim.y = 1, cluster->val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3((unsigned)l.threads);
    cfg.dynamicSmemBytes = (size_t)l.smem_bytes;
    cfg.stream = stream;
    cfg.attrs = cluster;
    cfg.numAttrs = 1;
    return cfg;
}

// How many clusters of two of this kernel the GPU runs at once (SMs pair up within a GPC only,
// so this can be fewer than half the SMs), asked once per kernel.
static int clusters_that_fit(const void *kernel, const gemm_geglu_layout &l, int version, int fp16)
{
    static int fit[N_VERSIONS][2];
    int &n = fit[version - 1][fp16];
    if (!n) {
        cudaLaunchAttribute cluster;
        const cudaLaunchConfig_t cfg = pairs_config(dim3(2), l, 0, &cluster);
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel, &cfg));
        if (n < 1) {
            program_error("gemm_geglu version %d: no cluster of two blocks of %d bytes of shared memory fits", version,
                          l.smem_bytes);
            exit(EXIT_CUDA_ERROR);
        }
    }
    return n;
}

// A launch of a version's kernel, in clusters of two for PAIRS_OF_SMS.
static void launch(const void *kernel, dim3 grid, const gemm_geglu_layout &l, gemm_geglu_grid kind, void **args,
                   cudaStream_t stream)
{
    if (kind != PAIRS_OF_SMS) {
        CUDA_CHECK(cudaLaunchKernel(kernel, grid, l.threads, args, l.smem_bytes, stream));
        return;
    }
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t cfg = pairs_config(grid, l, stream, &cluster);
    CUDA_CHECK(cudaLaunchKernelExC(&cfg, kernel, args));
}

// Over 48 KB of dynamic shared memory needs an opt-in, once per kernel.
static void opt_in_shared_memory(const void *kernel, int bytes)
{
    enum { MAX_KERNELS = 64 }; // more than the versions have kernels
    static const void *done[MAX_KERNELS];
    static int count = 0;
    for (int i = 0; i < count; i++)
        if (done[i] == kernel) return;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    if (count < MAX_KERNELS) {
        done[count] = kernel;
        count++;
    }
}

extern "C" void launch_gemm_geglu(int version, dtype_t t, const void *x, const void *wg, const void *wu, void *m,
                                  size_t M, size_t dim, size_t hidden, cudaStream_t stream)
{
    char why[256];
    if (!gemm_geglu_accepts(version, t, M, dim, hidden, why, sizeof why)) {
        program_error("gemm_geglu version %d: %s", version, why);
        exit(EXIT_BAD_INPUT);
    }
    const gemm_geglu_row_data &v = versions[version - 1];
    if (!gemm_geglu_runs_here(version)) {
        program_error("gemm_geglu version %d (%s) does not run here: it needs %s", version, v.info.name,
                      v.info.min_cc >= 90 ? "an sm_90 GPU" : "an sm_80 or newer GPU");
        exit(EXIT_BAD_INPUT);
    }
    if ((uintptr_t)x % 16 || (uintptr_t)wg % 16 || (uintptr_t)wu % 16 || (uintptr_t)m % 4) {
        program_error("gemm_geglu needs x, Wg, Wu 16-byte aligned and m 4-byte aligned");
        exit(EXIT_BAD_INPUT);
    }
    const tile_choice tile = tile_for(v, M, hidden);
    const gemm_geglu_layout &l = *tile.layout;
    const int fp16 = t == DTYPE_FP16;
    const void *kernel = tile.kernel[fp16];
    opt_in_shared_memory(kernel, l.smem_bytes);

    const size_t tiles_m = (M + l.tile_m - 1) / l.tile_m, tiles_n = (hidden + l.tile_n - 1) / l.tile_n;
    const size_t tiles = tiles_m * tiles_n, sms = (size_t)gpu_multiprocessors();
    const size_t work = v.grid == EVERY_SM ? tiles * ((dim + l.box_k - 1) / l.box_k) : tiles; // blocks that have any
    dim3 grid = v.grid == ONE_BLOCK_PER_TILE ? dim3((unsigned)tiles_n, (unsigned)tiles_m)
                                             : dim3((unsigned)(work < sms ? work : sms));
    if (v.grid == PAIRS_OF_SMS) {
        const size_t pairs = (tiles_m + 1) / 2 * tiles_n, fit = (size_t)clusters_that_fit(kernel, l, version, fp16);
        grid = dim3((unsigned)(2 * (pairs < fit ? pairs : fit)));
    }
    int Mi = (int)M, dim_i = (int)dim, hidden_i = (int)hidden;
    if (v.operands == POINTERS) {
        void *args[] = {&x, &wg, &wu, &m, &Mi, &dim_i, &hidden_i};
        launch(kernel, grid, l, v.grid, args, stream);
        return;
    }
    tensor_maps *maps = tensor_maps_for(version, l, t, x, wg, wu, m, M, dim, hidden);
    if (v.operands == TENSOR_MAPS) {
        void *args[] = {&maps->tx, &maps->tg, &maps->tu, &m, &Mi, &dim_i, &hidden_i};
        launch(kernel, grid, l, v.grid, args, stream);
    } else if (v.operands == TENSOR_MAPS_AND_M) {
        void *args[] = {&maps->tx, &maps->tg, &maps->tu, &maps->tm, &maps->store_by_tma, &m, &Mi, &dim_i, &hidden_i};
        launch(kernel, grid, l, v.grid, args, stream);
    } else {
        void *scratch = scratch_for((size_t)l.scratch_per_block * grid.x);
        void *args[] = {&maps->tx,   &maps->tg, &maps->tu,    &maps->tm,   &maps->store_by_tma,
                        &m,          &Mi,       &dim_i,       &hidden_i,   &scratch};
        launch(kernel, grid, l, v.grid, args, stream);
    }
}
