/* test_trace_replay.c: a trace's records read back from text into the trace model, and written
 * again by the current writer (no GPU needed).
 *
 * tests/trace_replay.py turns a trace we recorded (its .json) back into the records CUPTI gave:
 * one record per line, fields separated by tabs, a tab, newline or backslash inside a field
 * written as \t, \n or \\:
 *
 *   P  process_name pid
 *   V  cupti_version driver_version runtime_version
 *   W  window_begin_ns window_end_ns
 *   D  id name total_global_mem major minor max_threads_per_block max_threads_per_sm
 *      max_blocks_per_sm regs_per_block regs_per_sm warp_size num_sms shared_mem_per_block
 *      shared_mem_per_block_optin shared_mem_per_sm
 *   R  name tid start_ns end_ns                                         a range
 *   A  r|d name cbid tid correlation start_ns end_ns                    a runtime or driver call
 *   G  k|c|s name start_ns end_ns device context stream correlation grid_x grid_y grid_z
 *      block_x block_y block_z registers static_shared dynamic_shared occupancy_blocks_per_sm
 *      queued_ns bytes                                                  a kernel, copy or memset
 *   O  name start_ns end_ns                                             CUPTI's overhead
 *
 * With TRACE_REPLAY_IN=<records> and TRACE_REPLAY_OUT=<base> it writes <base>.json and
 * <base>.txt from those records, as a trace pass would have with the current writer, which is
 * how tests/test_hta.py and tests/test_h200_traces.py read the H200's committed records in the
 * current layout. Without them it checks the reader on records of its own.
 */
#include "harness.h"
#include "trace_rows.h"
#include "profiler/trace_model.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

enum { MAX_FIELDS = 24 };

/* Splits `line` at tabs into at most MAX_FIELDS fields, unescaping each in place. */
static int split_fields(char *line, char **fields)
{
    int n = 0;
    char *p = line;
    while (n < MAX_FIELDS) {
        fields[n++] = p;
        char *out = p;
        for (; *p && *p != '\t' && *p != '\n'; p++) {
            if (*p == '\\' && p[1]) {
                p++;
                *out++ = *p == 't' ? '\t' : *p == 'n' ? '\n' : *p;
            } else {
                *out++ = *p;
            }
        }
        char end = *p;
        *out = '\0';
        if (end != '\t')
            break;
        p++;
    }
    return n;
}

static uint64_t u64(const char *s) { return strtoull(s, NULL, 10); }
static int i32(const char *s) { return (int)strtol(s, NULL, 10); }

static trace_gpu_kind gpu_kind(const char *s)
{
    return *s == 'c' ? TRACE_GPU_MEMCPY : *s == 's' ? TRACE_GPU_MEMSET : TRACE_GPU_KERNEL;
}

/* One record into the model; false when the line is not one. */
static bool add_record(trace_model **m, char **f, int n)
{
    switch (f[0][0]) {
    case 'P':
        if (n != 3 || *m)
            return false;
        *m = trace_model_new(f[1], i32(f[2]));
        return *m != NULL;
    case 'V':
        if (n != 4 || !*m)
            return false;
        trace_model_set_versions(*m, i32(f[1]), i32(f[2]), i32(f[3]));
        return true;
    case 'W':
        if (n != 3 || !*m)
            return false;
        trace_model_set_window(*m, u64(f[1]), u64(f[2]));
        return true;
    case 'D': {
        if (n != 16 || !*m)
            return false;
        trace_device_props d = {
            .id = i32(f[1]), .total_global_mem = u64(f[3]), .compute_major = i32(f[4]),
            .compute_minor = i32(f[5]), .max_threads_per_block = i32(f[6]),
            .max_threads_per_sm = i32(f[7]), .max_blocks_per_sm = i32(f[8]),
            .regs_per_block = i32(f[9]), .regs_per_sm = i32(f[10]), .warp_size = i32(f[11]),
            .num_sms = i32(f[12]), .shared_mem_per_block = i32(f[13]),
            .shared_mem_per_block_optin = i32(f[14]), .shared_mem_per_sm = i32(f[15])};
        snprintf(d.name, sizeof d.name, "%s", f[2]);
        return trace_model_add_device(*m, &d) == 0;
    }
    case 'R':
        return n == 5 && *m &&
               trace_model_add_range(*m, f[1], (uint32_t)u64(f[2]), u64(f[3]), u64(f[4])) == 0;
    case 'A': {
        if (n != 8 || !*m)
            return false;
        trace_api_call call = {f[1][0] == 'd' ? TRACE_API_DRIVER : TRACE_API_RUNTIME, f[2],
                               (uint32_t)u64(f[3]), (uint32_t)u64(f[4]), (uint32_t)u64(f[5]),
                               u64(f[6]), u64(f[7])};
        return trace_model_add_api(*m, &call) == 0;
    }
    case 'G': {
        if (n != 21 || !*m)
            return false;
        trace_gpu_activity g = {
            .kind = gpu_kind(f[1]), .name = f[2], .start_ns = u64(f[3]), .end_ns = u64(f[4]),
            .device = (uint32_t)u64(f[5]), .context = (uint32_t)u64(f[6]),
            .stream = (uint32_t)u64(f[7]), .correlation = (uint32_t)u64(f[8]),
            .grid = {i32(f[9]), i32(f[10]), i32(f[11])},
            .block = {i32(f[12]), i32(f[13]), i32(f[14])}, .registers_per_thread = i32(f[15]),
            .static_shared = i32(f[16]), .dynamic_shared = i32(f[17]),
            .occupancy_blocks_per_sm = i32(f[18]), .queued_ns = u64(f[19]), .bytes = u64(f[20])};
        return trace_model_add_gpu(*m, &g) == 0;
    }
    case 'O':
        return n == 4 && *m && trace_model_add_overhead(*m, f[1], u64(f[2]), u64(f[3])) == 0;
    default:
        return false;
    }
}

/* The model the records in `path` describe, built; NULL (with a message) when a line is not a
 * record or building fails. */
static trace_model *read_records(const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        printf("  cannot read %s\n", path);
        return NULL;
    }
    trace_model *m = NULL;
    char *line = NULL, *fields[MAX_FIELDS];
    size_t cap = 0;
    int lineno = 0;
    bool ok = true;
    while (ok && getline(&line, &cap, in) > 0) {
        lineno++;
        int n = split_fields(line, fields);
        ok = add_record(&m, fields, n);
        if (!ok)
            printf("  %s:%d: not a record (%d fields)\n", path, lineno, n);
    }
    free(line);
    fclose(in);
    if (ok && m && trace_model_build(m) == 0)
        return m;
    trace_model_free(m);
    return NULL;
}

/* A step, a forward and an op around a launch, a kernel whose name holds a tab and a
 * backslash, and the same call repeated inside the op: the reader's fields and escapes. */
static int test_reads_records(void)
{
    char path[] = "/tmp/test_trace_replay_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp");
    FILE *f = fdopen(fd, "w");
    EXPECT(f, "fdopen");
    fputs("P\tprogram\t77\nV\t130001\t13000\t13000\nW\t1000\t9000\n"
          "D\t0\tNVIDIA H200\t150109880320\t9\t0\t1024\t2048\t32\t65536\t65536\t32\t132\t49152"
          "\t232448\t233472\n"
          "R\top\t5\t1200\t1800\nR\tfwd\t5\t1100\t1900\nR\tProfilerStep#2\t5\t1000\t2000\n"
          "A\tr\tcudaLaunchKernel\t211\t5\t3\t1300\t1400\n"
          "A\td\tcuKernelGetAttribute\t9\t5\t2\t1250\t1260\n"
          "G\tk\tk\\tab\\\\slash\t2100\t2600\t0\t1\t7\t3\t1\t1\t1\t32\t1\t1\t16\t0\t0\t-1\t0\t0\n"
          "O\tActivity Buffer Request\t900\t950\n", f);
    fclose(f);
    trace_model *m = read_records(path);
    unlink(path);
    EXPECT(m, "the records read and built");
    const trace_table_row *k = row_named(m, "k\tab\\slash");
    EXPECT(k && k->calls == 1 && fabs(k->self_cuda_us - 0.5) < 1e-9, "the kernel, unescaped");
    const trace_table_row *op = row_named(m, "op");
    EXPECT(op && fabs(op->self_cuda_us - 0.5) < 1e-9, "the kernel under op");
    EXPECT(!row_named(m, "cuKernelGetAttribute"), "the default API filter applies");
    trace_model_free(m);
    return 0;
}

int main(void)
{
    const char *in = getenv("TRACE_REPLAY_IN"), *out = getenv("TRACE_REPLAY_OUT");
    if (in && out) {
        trace_model *m = read_records(in);
        int written = m ? trace_model_write(m, out, 0) : -1;
        trace_model_free(m);
        printf("%s replay %s\n", written == 0 ? "PASS" : "FAIL", in);
        return written == 0 ? 0 : 1;
    }
    TEST_RUN(test_reads_records);
    TEST_EXIT();
}
