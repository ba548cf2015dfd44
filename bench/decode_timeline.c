/* decode_timeline: where the decode rung's time goes, block by block.
 *
 *   make bin/decode_timeline && bin/decode_timeline [--tokens 8] [--dim 768] [--hidden 3072] [--dtype bf16]
 *       [--unit-rows 8|16] [--split 1|2|4] [--cold-l2] [--csv FILE]
 *
 * A trace gives one duration per kernel, and at 8 tokens those durations overlap (the down
 * kernel is a programmatic dependent launch) and hide what each block waits for. This program
 * runs 04_fused_mlp's two decode kernels with a buffer for their timeline stamps (decode.h lists
 * the events): thread 0 of every block writes the GPU's
 * global nanosecond clock when the block starts, when its first weight loads are issued, when
 * its wait for the kernel before returns, when warp 0 is through its loads and mma, and at its
 * end, plus the SM it ran on.
 *
 * The forward is captured in a CUDA graph and replayed 200 times back to back, as the decode
 * rung runs it; the stamps are those of the last forward. For each event the report gives the
 * spread over the blocks (min, 10th percentile, median, 90th, max) in microseconds from the
 * first gate_up block's start, then how many gate_up blocks shared an SM. Three repetitions,
 * so that a reader sees how much the numbers move. The inputs are 03's model as the stages set
 * it up (random, nn.Linear's init, seed 1234); the kernels' results are checked by
 * tests/gpu_04_kernels, not here.
 *
 * Replayed back to back, one MLP's weights (14.2 MB at the article's sizes) stay in the H200's
 * 50 MB L2 from one forward to the next, so the kernels read them mostly from L2, not HBM. In a
 * model the other layers' weights pass through L2 in between. --cold-l2 writes a buffer of twice
 * the L2's size before every forward (outside the stamps), so that the stamped forward reads its
 * weights from HBM.
 *
 * --csv FILE writes the last repeat's stamps, one row per block (kernel, block, SM, then each
 * event in us) after one comment line (# date, GPU, shape), for common/plots/decode_timeline.gp
 * to draw block by block.
 *
 * Its own flags, not the stages' (which would accept --steps, --sweep and others that mean
 * nothing here), through the parser every program uses (common/cli.h): --tokens 1..16, --dim
 * and --hidden 1..1048576, --dtype bf16 | fp16, --unit-rows 8 | 16, --split 1 | 2 | 4, --cold-l2,
 * --csv FILE.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../03_simple_mlp/mlp.h"
#include "../04_fused_mlp/decode.h"
#include "check.h"
#include "cli.h"
#include "gpu.h"
#include "out.h"
#include "program.h"
#include "size.h"

enum { FORWARDS = 200, REPEATS = 3 };

static const char *const event_name[] = {"start", "weights issued", "wait returned", "loads+mma done", "end"};
static const char *const kernel_name[] = {"gate_up", "down"};

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One line: min, p10, median, p90, max of v[0..n), n > 0; v is sorted in place. */
static void spread(const char *kernel, const char *event, double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    printf("  %-8s %-15s %7.2f %7.2f %7.2f %7.2f %7.2f\n", kernel, event, v[0], v[n / 10], v[n / 2], v[n * 9 / 10],
           v[n - 1]);
}

/* The stamps of one forward, one row per block: kernel, block, SM, then each event in us from t0;
 * after a first comment line naming the run (what the figure's title takes its date from). */
static int write_csv(const char *path, const char *about, const unsigned long long *st, const size_t stamped[2],
                     unsigned long long t0)
{
    char tmp[4200], dir[4096];
    if (out_parent_dir(path, dir, sizeof dir) != 0 || out_mkdirs(dir) != 0) return -1;
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f) return -1;
    fprintf(f, "# %s\n", about);
    fprintf(f, "kernel,block,sm,start_us,issued_us,waited_us,computed_us,end_us\n");
    for (int k = 0; k < 2; k++)
        for (size_t b = 0; b < stamped[k]; b++) {
            const unsigned long long *row = st + ((size_t)k * DECODE_STAMP_BLOCKS + b) * DECODE_STAMP_SLOTS;
            fprintf(f, "%s,%zu,%llu", kernel_name[k], b, row[DECODE_STAMP_SM]);
            for (int ev = DECODE_STAMP_START; ev <= DECODE_STAMP_END; ev++)
                fprintf(f, ",%.3f", (double)(row[ev] - t0) * 1e-3);
            fprintf(f, "\n");
        }
    return out_commit(f, tmp, path);
}

typedef struct {
    long long tokens, dim, hidden, unit_rows, split, cold_l2;
    const char *dtype, *csv;
} timeline_flags;
static const stage_opt opts[] = {
    {"tokens", offsetof(timeline_flags, tokens), 1, DECODE_MAX_TOKENS, "tokens per forward"},
    {"dim", offsetof(timeline_flags, dim), 1, 1048576, "model width: x and y are [tokens, dim]"},
    {"hidden", offsetof(timeline_flags, hidden), 1, 1048576, "MLP width: Wg and Wu are [hidden, dim], Wd is [dim, hidden]"},
    {"dtype", offsetof(timeline_flags, dtype), 0, 0, "bf16 | fp16: the decode kernels' operands (default bf16)", FLAG_WORD},
    {"unit-rows", offsetof(timeline_flags, unit_rows), 8, 16,
     "8 | 16: weight rows per unit, both kernels (default: what the stage picks, decode_plan_for)"},
    {"split", offsetof(timeline_flags, split), 1, 4,
     "1 | 2 | 4: blocks of a cluster that share a unit's K, both kernels (default: what the stage picks)"},
    {"cold-l2", offsetof(timeline_flags, cold_l2), 0, 1, "overwrite the L2 before every forward: weights read from HBM",
     FLAG_SWITCH},
    {"csv", offsetof(timeline_flags, csv), 0, 0, "FILE: the last repeat's stamps, one row per block", FLAG_WORD},
};

int main(int argc, char **argv)
{
    const timeline_flags defaults = {.tokens = 8, .dim = 768, .hidden = 3072, .dtype = "bf16"};
    timeline_flags f = defaults;
    const stage_spec spec = {"decode_timeline", "where the decode rung's time goes, block by block (see the header "
                             "of bench/decode_timeline.c)", NULL, NULL, opts, 8, NULL, 1, 0};
    common_args args;
    const int help = cli_parse(argc, argv, &spec, &args, &f) == CLI_HELP; /* printed once the line is checked */
    const long long tokens = f.tokens, dim = f.dim, hidden = f.hidden, cold_l2 = f.cold_l2;
    if (f.unit_rows && f.unit_rows != 8 && f.unit_rows != 16) {
        program_error("--unit-rows: units of 8 or of 16 weight rows, not %lld", f.unit_rows);
        return EXIT_BAD_INPUT;
    }
    if (f.split == 3) {
        program_error("--split: a unit's K goes to 1, 2 or 4 blocks, not 3");
        return EXIT_BAD_INPUT;
    }
    const char *dtype_word = f.dtype, *csv = f.csv;
    dtype_t t;
    if (dtype_parse(dtype_word, &t) != 0 || t == DTYPE_FP32) {
        program_error("--dtype: the decode kernels take bf16 or fp16 operands, got '%.40s'", dtype_word);
        return EXIT_BAD_INPUT;
    }
    char why[256];
    if (!decode_supported(t, (size_t)tokens, (size_t)dim, (size_t)hidden, why, sizeof why)) {
        program_error("decode kernels: %s", why);
        return EXIT_BAD_INPUT;
    }
    if (size_device_check(mlp_device_bytes(t, (size_t)tokens, (size_t)dim, (size_t)hidden), mlp_device_buffers, why,
                          sizeof why)) {
        program_error("%s", why);
        return EXIT_BAD_INPUT;
    }
    if (csv && out_file_check("--csv", csv) != 0) return EXIT_BAD_INPUT; /* refused now, not after the run */
    if (help) {
        cli_print_help(&spec, &defaults);
        return 0;
    }
    gpu_info g;
    gpu_require(&g, "decode_timeline");
    if (!decode_runs_here()) {
        program_error("decode kernels: mma.sync with bf16 or fp16 operands needs an sm_80 or newer GPU");
        return EXIT_BAD_INPUT;
    }
    if (f.split > 1 && gpu_compute_capability() < 90) {
        program_error("--split %lld: a K split between blocks needs clusters (sm_90 or newer)", f.split);
        return EXIT_BAD_INPUT;
    }
    const size_t T = (size_t)tokens, D = (size_t)dim, H = (size_t)hidden;
    /* 03's model, set up as 04's decode rung runs it: x, the weights (nn.Linear's init, the
     * stages' default seed), m, y and a stream; its size checked against the free memory. */
    mlp_t mlp;
    mlp_setup(&mlp, t, T, D, H, 1234);
    const void *x = mlp.x, *wg = mlp.wg, *wu = mlp.wu, *wd = mlp.wd;
    void *m = mlp.prod, *y = mlp.y;
    cudaStream_t s = mlp.stream;
    /* default: as the stage runs it */
    decode_plan plan[2] = {decode_plan_for(T, D, H), decode_plan_for(T, H, D)};
    for (int k = 0; k < 2; k++) {
        if (f.unit_rows) plan[k].unit_rows = (int)f.unit_rows;
        if (f.split) plan[k].split = (int)f.split;
    }
    /* The stamps: one buffer per kernel, gate_up's then down's. */
    const size_t n_stamps = 2 * (size_t)DECODE_STAMP_BLOCKS * DECODE_STAMP_SLOTS;
    unsigned long long *dev_stamps;
    gpu_require_fits(n_stamps * sizeof *dev_stamps, "the timeline stamps");
    CUDA_CHECK(cudaMalloc((void **)&dev_stamps, n_stamps * sizeof *dev_stamps));
    unsigned long long *stamps_up = dev_stamps, *stamps_down = dev_stamps + n_stamps / 2;
    /* One plain forward first: module loading stays out of the capture. */
    launch_decode_gate_up(t, x, wg, wu, m, T, D, H, plan[0], s, stamps_up);
    launch_decode_down(t, m, wd, y, T, H, D, plan[1], s, stamps_down);
    CUDA_CHECK(cudaStreamSynchronize(s));
    cudaGraph_t graph;
    cudaGraphExec_t forward;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    launch_decode_gate_up(t, x, wg, wu, m, T, D, H, plan[0], s, stamps_up);
    launch_decode_down(t, m, wd, y, T, H, D, plan[1], s, stamps_down);
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&forward, graph, 0));

    /* --cold-l2: twice the L2 written before each forward evicts whatever the last one left. */
    void *evict = NULL;
    size_t evict_bytes = 0;
    if (cold_l2) {
        int l2 = 0, dev;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        evict_bytes = 2 * (size_t)l2;
        gpu_require_fits(evict_bytes, "the buffer that evicts L2 (--cold-l2)");
        CUDA_CHECK(cudaMalloc(&evict, evict_bytes));
    }

    const size_t blocks[2] = {decode_blocks(D, H, plan[0]), decode_blocks(H, D, plan[1])};
    const size_t stamped[2] = {blocks[0] < DECODE_STAMP_BLOCKS ? blocks[0] : DECODE_STAMP_BLOCKS,
                               blocks[1] < DECODE_STAMP_BLOCKS ? blocks[1] : DECODE_STAMP_BLOCKS};
    unsigned long long *st = malloc(n_stamps * sizeof *st);
    double *v = malloc((stamped[0] > stamped[1] ? stamped[0] : stamped[1]) * sizeof *v);
    if (!st || !v) {
        program_error("out of host memory");
        free(st);
        free(v);
        return EXIT_BAD_INPUT;
    }
    gpu_print(&g);
    printf("decode forward: %lld tokens, %lld -> %lld, %s; gate_up %zu blocks (units of %d weight rows, K split %d "
           "ways), down %zu blocks (%d rows, %d ways)%s\n", tokens, dim, hidden, dtype_name(t), blocks[0],
           plan[0].unit_rows, plan[0].split, blocks[1], plan[1].unit_rows, plan[1].split,
           blocks[0] > stamped[0] || blocks[1] > stamped[1] ? " (the first 16384 of each stamped)" : "");
    if (cold_l2) printf("cold L2: %.1f MB written before every forward\n", evict_bytes / 1e6);
    for (int rep = 0; rep < REPEATS; rep++) {
        for (int i = 0; i < FORWARDS; i++) {
            if (cold_l2) CUDA_CHECK(cudaMemsetAsync(evict, i & 0xff, evict_bytes, s));
            CUDA_CHECK(cudaGraphLaunch(forward, s));
        }
        CUDA_CHECK(cudaStreamSynchronize(s));
        CUDA_CHECK(cudaMemcpy(st, dev_stamps, n_stamps * sizeof *st, cudaMemcpyDeviceToHost));
#define STAMP(kernel, block, slot) \
    st[((size_t)(kernel) * DECODE_STAMP_BLOCKS + (block)) * DECODE_STAMP_SLOTS + (slot)]
        unsigned long long t0 = ~0ull;
        for (size_t b = 0; b < stamped[0]; b++)
            if (STAMP(0, b, DECODE_STAMP_START) < t0) t0 = STAMP(0, b, DECODE_STAMP_START);
        printf("\nrepeat %d: the last of %d forwards replayed back to back%s; us from the first gate_up block's start\n",
               rep + 1, FORWARDS, cold_l2 ? ", each after the L2 was overwritten" : "");
        printf("  %-8s %-15s %7s %7s %7s %7s %7s\n", "kernel", "event", "min", "p10", "median", "p90", "max");
        for (int k = 0; k < 2; k++)
            for (int ev = DECODE_STAMP_START; ev <= DECODE_STAMP_END; ev++) {
                for (size_t b = 0; b < stamped[k]; b++) v[b] = (double)(STAMP(k, b, ev) - t0) * 1e-3;
                spread(kernel_name[k], event_name[ev], v, stamped[k]);
            }
        /* How the block scheduler placed gate_up: blocks per SM, over the SMs it used. */
        int per_sm[1024] = {0}, most = 0;
        for (size_t b = 0; b < stamped[0]; b++) {
            const unsigned sm = (unsigned)STAMP(0, b, DECODE_STAMP_SM) % 1024;
            if (++per_sm[sm] > most) most = per_sm[sm];
        }
        printf("  gate_up blocks per SM:");
        for (int k = 1; k <= most; k++) {
            int sms = 0;
            for (int i = 0; i < 1024; i++) sms += per_sm[i] == k;
            printf("%s %d SMs with %d", k > 1 ? "," : "", sms, k);
        }
        printf("\n");
#undef STAMP
        if (csv && rep == REPEATS - 1) {
            char about[512], day[32];
            const time_t now = time(NULL);
            strftime(day, sizeof day, "%Y-%m-%d %H:%M UTC", gmtime(&now));
            snprintf(about, sizeof about, "date: %s; %s; %lld tokens, %lld -> %lld, %s%s", day, g.prop.name, tokens, dim,
                     hidden, dtype_name(t), cold_l2 ? "; cold L2" : "");
            if (write_csv(csv, about, st, stamped, t0) != 0) {
                free(st);
                free(v);
                return EXIT_BAD_INPUT;
            }
            printf("wrote %s (repeat %d, one row per block)\n", csv, rep + 1);
        }
    }
    free(st);
    free(v);
    if (evict) CUDA_CHECK(cudaFree(evict));
    CUDA_CHECK(cudaFree(dev_stamps));
    CUDA_CHECK(cudaGraphExecDestroy(forward));
    CUDA_CHECK(cudaGraphDestroy(graph));
    mlp_free(&mlp);
    return 0;
}
