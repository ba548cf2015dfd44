/* test_trace.c: the trace writer and table on synthetic records (no GPU needed).
 *
 * The synthetic step, times in microseconds after T0 (all on thread 100, GPU work on stream 7):
 *
 *   ProfilerStep#2  [0, 100]
 *     matmul_add   [5, 90]
 *       gemm       [10, 50]   cudaMemsetAsync [12, 15] -> memset [16, 17]
 *                             cuLaunchKernelEx [20, 25] -> mangled gemm kernel [30, 70]
 *       add        [55, 80]   cudaLaunchKernel [60, 65] -> kernel with a hostile name [70, 80]
 *       cudaMemcpyAsync [85, 88] -> DtoD copy [89, 95]
 *   cudaDeviceSynchronize [100, 150], launching nothing
 *   before the window: a warm-up cudaLaunchKernel [-50, -45] and its kernel, to be dropped
 *
 * With TEST_TRACE_KEEP_DIR=<dir> in the environment it also leaves the synthetic step in that
 * directory as synthetic_step.json and .txt, and the step of edge_cases() below as
 * edge_cases.json and .txt, for readers of PyTorch traces to load (tests/test_hta.py,
 * tests/test_trace_schema.py).
 */
#include "harness.h"
#include "trace_rows.h"
#include "prof.h"
#include "profiler/trace.h"
#include "profiler/trace_model.h"

#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>

#define T0 1000000000ull
#define AT_US(us) ((uint64_t)((int64_t)T0 + (int64_t)((us) * 1000)))

static const char hostile_name[] = "add<\"quoted\", back\\slash, new\nline, tab\t, ctrl\x01>";
static const char mangled_name[] = "_Z11gemm_kernelPKfS0_Pfi";
static const char demangled_name[] = "gemm_kernel(float const*, float const*, float*, int)";

enum { TID = 100, STREAM = 7 };

static void add_range(trace_model *m, const char *name, double start_us, double end_us)
{
    trace_model_add_range(m, name, TID, AT_US(start_us), AT_US(end_us));
}

static void add_call(trace_model *m, trace_api_domain domain, const char *name,
                     uint32_t correlation, double start_us, double end_us)
{
    trace_api_call call = {domain, name, 0, TID, correlation, AT_US(start_us), AT_US(end_us)};
    trace_model_add_api(m, &call);
}

static void add_kernel(trace_model *m, const char *name, uint32_t correlation, double start_us,
                       double end_us)
{
    trace_gpu_activity k = {.kind = TRACE_GPU_KERNEL, .name = name,
                            .start_ns = AT_US(start_us), .end_ns = AT_US(end_us),
                            .stream = STREAM, .context = 1, .correlation = correlation,
                            .grid = {264, 1, 1}, .block = {256, 1, 1},
                            .registers_per_thread = 32, .static_shared = 1024,
                            .dynamic_shared = 4096};
    trace_model_add_gpu(m, &k);
}

static void add_transfer(trace_model *m, trace_gpu_kind kind, const char *name,
                         uint32_t correlation, uint64_t bytes, double start_us, double end_us)
{
    trace_gpu_activity t = {.kind = kind, .name = name, .start_ns = AT_US(start_us),
                            .end_ns = AT_US(end_us), .stream = STREAM, .context = 1,
                            .correlation = correlation, .bytes = bytes};
    trace_model_add_gpu(m, &t);
}

static trace_model *synthetic_step(void)
{
    trace_model *m = trace_model_new("test_trace", 4242);
    if (!m)
        return NULL;
    trace_model_set_window(m, AT_US(0), AT_US(150));
    trace_model_set_versions(m, 130001, 13000, 13000);
    trace_device_props h200 = {.id = 0, .name = "NVIDIA H200", .total_global_mem = 150109880320ull,
                               .compute_major = 9, .max_threads_per_block = 1024,
                               .max_threads_per_sm = 2048, .max_blocks_per_sm = 32,
                               .regs_per_block = 65536, .regs_per_sm = 65536, .warp_size = 32,
                               .num_sms = 132, .shared_mem_per_block = 49152,
                               .shared_mem_per_block_optin = 232448,
                               .shared_mem_per_sm = 233472};
    trace_model_add_device(m, &h200);

    /* Added out of order on purpose: build sorts. */
    add_range(m, "add", 55, 80);
    add_range(m, "ProfilerStep#2", 0, 100);
    add_range(m, "gemm", 10, 50);
    add_range(m, "matmul_add", 5, 90);

    add_call(m, TRACE_API_RUNTIME, "cudaMemsetAsync", 13, 12, 15);
    add_call(m, TRACE_API_DRIVER, "cuLaunchKernelEx", 10, 20, 25);
    add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernel", 11, 60, 65);
    add_call(m, TRACE_API_RUNTIME, "cudaMemcpyAsync", 12, 85, 88);
    add_call(m, TRACE_API_RUNTIME, "cudaDeviceSynchronize", 14, 100, 150);
    add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernel", 5, -50, -45);

    add_transfer(m, TRACE_GPU_MEMSET, "Memset (Device)", 13, 4, 16, 17);
    add_kernel(m, mangled_name, 10, 30, 70);
    add_kernel(m, hostile_name, 11, 70, 80);
    add_transfer(m, TRACE_GPU_MEMCPY, "Memcpy DtoD (Device -> Device)", 12, 1 << 20, 89, 95);
    add_kernel(m, "warmup_kernel", 5, -44, -40);

    trace_model_add_overhead(m, "Activity Buffer Request", AT_US(-2), AT_US(3));
    if (trace_model_build(m) != 0) {
        trace_model_free(m);
        return NULL;
    }
    return m;
}

static bool near(double a, double b) { return fabs(a - b) < 1e-6; }

/* Reads a whole small file into buf; false if it cannot be read. */
static bool read_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return true;
}

static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (const struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int test_format_time(void)
{
    char buf[32];
    trace_format_time(56.789, buf, sizeof buf);
    EXPECT(strcmp(buf, "56.789us") == 0, "got %s", buf);
    trace_format_time(1234.0, buf, sizeof buf);
    EXPECT(strcmp(buf, "1.234ms") == 0, "got %s", buf);
    trace_format_time(2.5e6, buf, sizeof buf);
    EXPECT(strcmp(buf, "2.500s") == 0, "got %s", buf);
    trace_format_time(0, buf, sizeof buf);
    EXPECT(strcmp(buf, "0.000us") == 0, "got %s", buf);
    return 0;
}

static int test_table_sums(void)
{
    trace_model *m = synthetic_step();
    EXPECT(m, "synthetic model built");
    struct {
        const char *name;
        int calls;
        double self_cpu, cpu_total, self_cuda, cuda_total;
    } expected[] = {
        {"ProfilerStep*", 1, 15, 100, 0, 57},
        {"matmul_add", 1, 85 - 40 - 25 - 3, 85, 6, 57},
        {"gemm", 1, 40 - 3 - 5, 40, 41, 41},
        {"add", 1, 25 - 5, 25, 10, 10},
        {"cudaLaunchKernel", 1, 5, 5, 0, 0}, /* the warm-up launch is outside the window */
        {"cudaDeviceSynchronize", 1, 50, 50, 0, 0},
        {demangled_name, 1, 0, 0, 40, 40},
        {hostile_name, 1, 0, 0, 10, 10},
        {"Memcpy DtoD (Device -> Device)", 1, 0, 0, 6, 6},
        {"Memset (Device)", 1, 0, 0, 1, 1},
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const trace_table_row *r = row_named(m, expected[i].name);
        EXPECT(r, "a row for %s", expected[i].name);
        EXPECT(r->calls == expected[i].calls, "%s: %d calls", r->name, r->calls);
        EXPECT(near(r->self_cpu_us, expected[i].self_cpu), "%s: self CPU %.3f", r->name,
               r->self_cpu_us);
        EXPECT(near(r->cpu_total_us, expected[i].cpu_total), "%s: CPU total %.3f", r->name,
               r->cpu_total_us);
        EXPECT(near(r->self_cuda_us, expected[i].self_cuda), "%s: self CUDA %.3f", r->name,
               r->self_cuda_us);
        EXPECT(near(r->cuda_total_us, expected[i].cuda_total), "%s: CUDA total %.3f", r->name,
               r->cuda_total_us);
    }
    EXPECT(!row_named(m, "warmup_kernel"), "work launched before the window is dropped");

    double self_cpu = 0, self_cuda = 0;
    trace_model_totals(m, &self_cpu, &self_cuda);
    EXPECT(near(self_cpu, 150), "self CPU total = the top-level slices, got %.3f", self_cpu);
    EXPECT(near(self_cuda, 57), "self CUDA total = all GPU work, got %.3f", self_cuda);

    size_t n = 0;
    const trace_table_row *rows = trace_model_table(m, &n);
    for (size_t i = 1; i < n; i++)
        EXPECT(rows[i - 1].cuda_total_us >= rows[i].cuda_total_us, "sorted by CUDA total at %zu",
               i);
    EXPECT(n > 1 && strcmp(rows[0].name, "ProfilerStep*") == 0, "first row %s", rows[0].name);
    trace_model_free(m);
    return 0;
}

/* Rows of equal CUDA total keep the order in which they were first seen, as key_averages()
 * keeps them (a stable sort by CUDA total), not an order by CPU total or name: the API calls,
 * none with CUDA time, in the order they started. */
static int test_table_ties_first_seen(void)
{
    trace_model *m = synthetic_step();
    EXPECT(m, "synthetic model built");
    const char *want[] = {"cudaMemsetAsync", "cuLaunchKernelEx", "cudaLaunchKernel",
                          "cudaMemcpyAsync", "cudaDeviceSynchronize"};
    size_t n = 0, k = 0;
    const trace_table_row *rows = trace_model_table(m, &n);
    char got[512] = "";
    for (size_t i = 0; i < n; i++) {
        if (rows[i].is_gpu || rows[i].cuda_total_us != 0)
            continue;
        snprintf(got + strlen(got), sizeof got - strlen(got), " %s", rows[i].name);
        EXPECT(k < 5 && strcmp(rows[i].name, want[k]) == 0, "rows without CUDA time:%s", got);
        k++;
    }
    EXPECT(k == 5, "five rows without CUDA time:%s", got);
    trace_model_free(m);
    return 0;
}

static int test_table_text(void)
{
    trace_model *m = synthetic_step();
    EXPECT(m, "synthetic model built");
    FILE *f = tmpfile();
    EXPECT(f, "tmpfile");
    trace_model_print_table(m, f, 3);
    rewind(f);
    char text[8192];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    fclose(f);
    trace_model_free(m);

    EXPECT(strstr(text, "Self CPU time total: 150.000us\n"), "footer CPU in:\n%s", text);
    EXPECT(strstr(text, "Self CUDA time total: 57.000us\n"), "footer CUDA in:\n%s", text);
    const char *header = strstr(text, "Name    Self CPU %      Self CPU   CPU total %");
    EXPECT(header, "PyTorch's header in:\n%s", text);
    EXPECT(strstr(header, "CUDA time avg    # of Calls"), "all columns in:\n%s", text);
    EXPECT(strstr(text, "ProfilerStep*") && strstr(text, "matmul_add") && strstr(text, "gemm"),
           "the top three rows in:\n%s", text);
    EXPECT(!strstr(text, "cudaDeviceSynchronize"), "only 3 rows printed:\n%s", text);
    /* 57 of 57 us: the step's CUDA total is 100% and its self CPU 15 of 150 us is 10%. */
    EXPECT(strstr(text, "10.00%"), "self CPU share in:\n%s", text);
    return 0;
}

static int test_kernel_rows_and_ranges(void)
{
    trace_model *m = trace_model_new("test_trace", 1);
    EXPECT(m, "model");
    add_range(m, "ProfilerStep#1", 0, 100);
    add_range(m, "fwd", 1, 90);
    const double durations[] = {1, 5, 3};
    for (int i = 0; i < 3; i++) {
        add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernel", 20 + i, 2 + 10 * i, 4 + 10 * i);
        add_kernel(m, "k", 20 + i, 40 + 10 * i, 40 + 10 * i + durations[i]);
    }
    add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernel", 30, 95, 97);
    add_kernel(m, "j", 30, 98, 108);
    add_call(m, TRACE_API_RUNTIME, "cudaMemcpyAsync", 31, 80, 85);
    add_transfer(m, TRACE_GPU_MEMCPY, "Memcpy HtoD (Pinned -> Device)", 31, 256, 86, 87);
    EXPECT(trace_model_build(m) == 0, "build");

    trace_kernel_row rows[4];
    int n = trace_model_kernel_rows(m, rows, 4);
    EXPECT(n == 2, "two kernel names, got %d", n);
    EXPECT(strcmp(rows[0].name, "j") == 0 && near(rows[0].total_us, 10), "j first: %s %.3f",
           rows[0].name, rows[0].total_us);
    EXPECT(strcmp(rows[1].name, "k") == 0 && rows[1].calls == 3, "k: %s x%d", rows[1].name,
           rows[1].calls);
    EXPECT(near(rows[1].total_us, 9) && near(rows[1].median_us, 3) && near(rows[1].min_us, 1) &&
               near(rows[1].max_us, 5),
           "k: total %.3f median %.3f min %.3f max %.3f", rows[1].total_us, rows[1].median_us,
           rows[1].min_us, rows[1].max_us);

    int kernels = -1, copies = -1, sets = -1;
    EXPECT(trace_model_gpu_ops_in_range(m, "ProfilerStep#1", &kernels, &copies, &sets) == 4,
           "kernels in the step");
    EXPECT(kernels == 4 && copies == 1 && sets == 0, "step: %d %d %d", kernels, copies, sets);
    trace_model_gpu_ops_in_range(m, "fwd", &kernels, &copies, &sets);
    EXPECT(kernels == 3 && copies == 1, "fwd: %d kernels %d copies (j launched after it)",
           kernels, copies);
    EXPECT(trace_model_gpu_ops_in_range(m, "ProfilerStep#9", &kernels, &copies, &sets) == -1,
           "-1 for a range never recorded");
    trace_model_free(m);
    return 0;
}

/* Two steps: in each, gate launches k twice (1 and 3 us), up launches k once (5 us) and the
 * forward itself launches j; after the forward the step launches s. */
static int test_kernel_ops(void)
{
    trace_model *m = trace_model_new("test_trace", 1);
    EXPECT(m, "model");
    for (int step = 0; step < 2; step++) {
        double t = 200.0 * step;
        uint32_t c = 10u * (uint32_t)step;
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", step);
        add_range(m, name, t, t + 190);
        add_range(m, "fwd", t + 1, t + 100);
        add_range(m, "gate", t + 2, t + 30);
        add_range(m, "up", t + 40, t + 60);
        const double starts[] = {3, 10, 45, 70, 150}, durations[] = {1, 3, 5, 2, 4};
        const char *const kernels[] = {"k", "k", "k", "j", "s"};
        for (int i = 0; i < 5; i++) {
            add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernel", c + (uint32_t)i + 1,
                     t + starts[i], t + starts[i] + 1);
            add_kernel(m, kernels[i], c + (uint32_t)i + 1, t + 110 + 10 * i,
                       t + 110 + 10 * i + durations[i]);
        }
    }
    EXPECT(trace_model_build(m) == 0, "build");
    trace_op_kernel rows[8];
    int n = trace_model_kernel_ops(m, rows, 8);
    EXPECT(n == 4, "four (range, kernel) pairs, got %d", n);
    static const struct {
        const char *range, *kernel;
        int calls;
        double total, median;
    } want[] = {{"up", "k", 2, 10, 5}, {"", "s", 2, 8, 4}, {"gate", "k", 4, 8, 2},
                {"fwd", "j", 2, 4, 2}};
    for (int i = 0; i < 4; i++)
        EXPECT(strcmp(rows[i].range, want[i].range) == 0 &&
                   strcmp(rows[i].kernel, want[i].kernel) == 0 && rows[i].calls == want[i].calls &&
                   near(rows[i].total_us, want[i].total) && near(rows[i].median_us, want[i].median),
               "row %d: [%s] %s x%d total %.3f median %.3f", i, rows[i].range, rows[i].kernel,
               rows[i].calls, rows[i].total_us, rows[i].median_us);
    EXPECT(trace_model_kernel_ops(m, rows, 1) == 4, "the count even when fewer rows fit");
    trace_model_free(m);
    return 0;
}

/* One step: the step timer's cudaEventRecord and a kernel it launches inside a hidden span, a
 * cudaGetDevice, a cudaStreamIsCapturing and a cuKernelGetAttribute (none of them in PyTorch's
 * traces) and a launch. Two steps' rows become one ProfilerStep* row. */
static trace_model *filtered_steps(bool all_calls)
{
    trace_model *m = trace_model_new("test_trace", 1);
    if (!m)
        return NULL;
    trace_model_set_api_filter(m, all_calls);
    for (int step = 0; step < 2; step++) {
        double t = 100.0 * step;
        uint32_t c = 10u * (uint32_t)step;
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", step);
        add_range(m, name, t, t + 90);
        trace_model_add_hidden_span(m, TID, AT_US(t + 1), AT_US(t + 5));
        add_call(m, TRACE_API_RUNTIME, "cudaEventRecord", c + 1, t + 2, t + 3);
        add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernel", c + 2, t + 3.5, t + 4.5);
        add_kernel(m, "step_gate_wait", c + 2, t + 10, t + 80);
        add_call(m, TRACE_API_RUNTIME, "cudaGetDevice", c + 3, t + 6, t + 7);
        add_call(m, TRACE_API_RUNTIME, "cudaStreamIsCapturing", c + 4, t + 7, t + 8);
        add_call(m, TRACE_API_DRIVER, "cuKernelGetAttribute", c + 5, t + 8, t + 9);
        add_call(m, TRACE_API_DRIVER, "cuLaunchKernelEx", c + 6, t + 10, t + 12);
        add_kernel(m, "gemm", c + 6, t + 20, t + 30);
    }
    if (trace_model_build(m) != 0) {
        trace_model_free(m);
        return NULL;
    }
    return m;
}

static int test_api_filter(void)
{
    static const char *const dropped[] = {"cudaEventRecord", "step_gate_wait", "cudaGetDevice",
                                          "cudaStreamIsCapturing", "cuKernelGetAttribute"};
    trace_model *m = filtered_steps(false);
    EXPECT(m, "model");
    for (int i = 0; i < 5; i++)
        EXPECT(!row_named(m, dropped[i]), "%s dropped by default", dropped[i]);
    const trace_table_row *r = row_named(m, "ProfilerStep*");
    EXPECT(r && r->calls == 2 && near(r->cuda_total_us, 20), "one ProfilerStep* row of 2 calls");
    EXPECT(!row_named(m, "ProfilerStep#0"), "no row per step");
    int kernels = -1, copies = -1, sets = -1;
    EXPECT(trace_model_gpu_ops_in_range(m, "ProfilerStep#1", &kernels, &copies, &sets) == 1,
           "the step's one kernel, not the timer's: %d", kernels);
    trace_model_free(m);

    m = filtered_steps(true);
    EXPECT(m, "model");
    EXPECT(row_named(m, "cudaGetDevice") && row_named(m, "cudaStreamIsCapturing") &&
               row_named(m, "cuKernelGetAttribute"),
           "every call kept with the filter off");
    EXPECT(!row_named(m, "cudaEventRecord") && !row_named(m, "step_gate_wait"),
           "the step timer's calls and work stay hidden with the filter off");
    trace_model_free(m);

    EXPECT(trace_api_kept_by_default(TRACE_API_RUNTIME, "cudaLaunchKernelExC") &&
               trace_api_kept_by_default(TRACE_API_RUNTIME, "cudaMemcpy2DAsync") &&
               trace_api_kept_by_default(TRACE_API_RUNTIME, "cudaGraphLaunch") &&
               trace_api_kept_by_default(TRACE_API_DRIVER, "cuLaunchKernel") &&
               trace_api_kept_by_default(TRACE_API_DRIVER, "cuLaunchKernelEx") &&
               !trace_api_kept_by_default(TRACE_API_RUNTIME, "cudaGetLastError") &&
               !trace_api_kept_by_default(TRACE_API_DRIVER, "cuKernelGetAttribute") &&
               !trace_api_kept_by_default(TRACE_API_DRIVER, "cuKernelGetName") &&
               !trace_api_kept_by_default(TRACE_API_DRIVER, "cuLaunchKernelExtra"),
           "the allow-list by name");
    return 0;
}

/* Where layering and lanes are easy to get wrong, in one step (thread 100, stream 7):
 *
 *   ProfilerStep#5 [0, 60] and decode [0, 60]: the same start and end (added inner first, as
 *                  ranges end); decode is the program's own range, so the only one mirrored
 *     gate [1, 20]  cudaLaunchKernel [2, 3]        -> decode_gate_up [10, 30]
 *     down [21, 40] cudaLaunchKernelExC [22, 23]   -> decode_down [28, 45], launched early
 *                                                     (programmatic dependent launch): it
 *                                                     overlaps decode_gate_up
 *   after the forward, in the step only: cudaLaunchKernel [61, 62] -> tail [70, 71], under no
 *   range but the step, so mirrored nowhere
 */
static trace_model *edge_cases(void)
{
    trace_model *m = trace_model_new("test_trace", 4242);
    if (!m)
        return NULL;
    trace_model_set_window(m, AT_US(0), AT_US(80));
    add_range(m, "gate", 1, 20);
    add_range(m, "down", 21, 40);
    add_range(m, "decode", 0, 60);
    add_range(m, "ProfilerStep#5", 0, 60);
    add_range(m, "ProfilerStep#6", 60.5, 63);
    add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernel", 1, 2, 3);
    add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernelExC", 2, 22, 23);
    add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernel", 3, 61, 62);
    add_kernel(m, "decode_gate_up", 1, 10, 30);
    add_kernel(m, "decode_down", 2, 28, 45);
    add_kernel(m, "tail", 3, 70, 71);
    if (trace_model_build(m) != 0) {
        trace_model_free(m);
        return NULL;
    }
    return m;
}

static int test_edge_cases_table(void)
{
    trace_model *m = edge_cases();
    EXPECT(m, "edge-case model built");
    const trace_table_row *step = row_named(m, "ProfilerStep*"), *decode = row_named(m, "decode");
    EXPECT(step && step->calls == 2 && near(step->cpu_total_us, 62.5), "two steps, 62.5 us");
    /* decode encloses gate and down: the steps hold decode and the last launch */
    EXPECT(near(step->self_cpu_us, 62.5 - 60 - 1), "step self CPU %.3f", step->self_cpu_us);
    EXPECT(decode, "a row for decode");
    EXPECT(near(decode->self_cpu_us, 60 - 19 - 19) && near(decode->cuda_total_us, 37),
           "decode: self CPU %.3f, CUDA total %.3f", decode->self_cpu_us, decode->cuda_total_us);
    trace_model_free(m);
    return 0;
}

static bool have_python(void)
{
    return system("python3 -c 'import json' >/dev/null 2>&1") == 0;
}

/* Writes the synthetic step and lets Python's json module and tests/check_trace_json.py read
 * it field by field. */
static int test_json_checked_by_python(void)
{
    if (!have_python())
        SKIP("python3 not found");
    char dir[] = "/tmp/test_trace_XXXXXX";
    EXPECT(mkdtemp(dir), "mkdtemp");
    char base[64], json[80], txt[80], cmd[768];
    snprintf(base, sizeof base, "%s/64_bf16", dir);
    snprintf(json, sizeof json, "%s.json", base);
    snprintf(txt, sizeof txt, "%s.txt", base);

    trace_model *m = synthetic_step();
    EXPECT(m, "synthetic model built");
    int written = trace_model_write(m, base, 0);
    trace_model_free(m);
    EXPECT(written == 0, "trace_model_write returned %d", written);
    EXPECT(access(json, R_OK) == 0 && access(txt, R_OK) == 0, "both files in %s", dir);

    EXPECT(files_in(dir) == 2, "the two files and no temporary one left behind in %s", dir);

    /* The hostile name travels to Python as hex, untouched by any escaping of ours, and must
     * equal what Python's JSON parser reads back. */
    char hex[2 * sizeof hostile_name + 1];
    for (size_t i = 0; hostile_name[i]; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)hostile_name[i]);
    snprintf(cmd, sizeof cmd,
             "python3 tests/check_trace_json.py '%s' --expect-kernels-per-step 2 --layered "
             "--lanes-nest --require-categories user_annotation,gpu_user_annotation,cpu_op,"
             "cuda_runtime,cuda_driver,kernel,gpu_memcpy,gpu_memset,overhead,ac2g,Trace "
             "--expect-name ProfilerStep#2 --expect-name '%s' --expect-name-hex %s",
             json, demangled_name, hex);
    int rc = system(cmd);
    EXPECT(rc == 0, "check_trace_json.py failed (status %d): %s", rc, cmd);

    /* The ops' input keys are empty: the header must not claim that shapes were recorded. */
    static char whole[65536];
    EXPECT(read_file(json, whole, sizeof whole), "read %s", json);
    EXPECT(strstr(whole, "\n  \"record_shapes\": 0,\n") && !strstr(whole, "\"record_shapes\": 1"),
           "record_shapes: 0 in the header of %s", json);

    char text[8192];
    EXPECT(read_file(txt, text, sizeof text), "read %s", txt);
    EXPECT(strstr(text, "Self CUDA time total: 57.000us"), "table file footer:\n%s", text);

    unlink(json);
    unlink(txt);
    rmdir(dir);
    return 0;
}

/* Writes `m` under dir and reads the JSON back into `text`; false when either fails. */
static bool written_json(trace_model *m, const char *dir, char *text, size_t size)
{
    char base[96], json[112];
    snprintf(base, sizeof base, "%s/ids", dir);
    snprintf(json, sizeof json, "%s.json", base);
    bool ok = trace_model_write(m, base, 0) == 0 && read_file(json, text, size);
    unlink(json);
    snprintf(json, sizeof json, "%s.txt", base);
    unlink(json);
    return ok;
}

/* Correlation ids all below 32768 are written plus 32768 (so that HolisticTraceAnalysis's
 * correlation column is 32 bits wide), on the calls, the GPU work and the flows alike; a trace
 * holding an id of 32768 or more keeps CUPTI's ids as they are. */
static int test_correlation_ids_written(void)
{
    char dir[] = "/tmp/test_trace_ids_XXXXXX";
    EXPECT(mkdtemp(dir), "mkdtemp");
    static char text[65536];
    trace_model *m = synthetic_step();
    EXPECT(m, "synthetic model built");
    bool ok = written_json(m, dir, text, sizeof text);
    trace_model_free(m);
    EXPECT(ok, "the synthetic step written and read back");
    /* cuLaunchKernelEx has correlation 10: 32778 on the call, the kernel and both flow ends */
    EXPECT(strstr(text, "\"cbid\": 0, \"correlation\": 32778}") &&
               strstr(text, "\"correlation\": 32778, \"registers per thread\"") &&
               strstr(text, "\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 32778,") &&
               strstr(text, "\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 32778,"),
           "correlation 10 written as 32778 on the call, the kernel and the flow");
    EXPECT(!strstr(text, "\"correlation\": 10,") && !strstr(text, "\"correlation\": 10}") &&
               !strstr(text, "\"id\": 10,"),
           "CUPTI's id 10 is not written as it is");

    m = trace_model_new("test_trace", 1);
    EXPECT(m, "model");
    add_range(m, "ProfilerStep#1", 0, 100);
    add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernel", 7, 2, 4);
    add_kernel(m, "k", 7, 10, 20);
    add_call(m, TRACE_API_RUNTIME, "cudaLaunchKernel", 40000, 30, 32);
    add_kernel(m, "j", 40000, 40, 50);
    EXPECT(trace_model_build(m) == 0, "build");
    ok = written_json(m, dir, text, sizeof text);
    trace_model_free(m);
    rmdir(dir);
    EXPECT(ok, "the second trace written and read back");
    EXPECT(strstr(text, "\"correlation\": 7}") && strstr(text, "\"correlation\": 40000}"),
           "ids of a trace that holds one of 32768 or more are CUPTI's");
    return 0;
}

/* The checker must fail a broken trace, or its passes above mean nothing: a kernel whose flow
 * has no start, and two ranges that overlap without nesting. */
static int test_checker_rejects_broken_trace(void)
{
    if (!have_python())
        SKIP("python3 not found");
    static const char broken[] =
        "{\"schemaVersion\": 1, \"deviceProperties\": [], \"baseTimeNanoseconds\": 0,"
        " \"traceName\": \"broken.json\", \"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1,"
        " \"ts\": 0, \"dur\": 10},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1,"
        " \"ts\": 5, \"dur\": 10},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7,"
        " \"ts\": 20, \"dur\": 1, \"args\": {\"device\": 0, \"context\": 1, \"stream\": 7,"
        " \"correlation\": 3, \"registers per thread\": 8, \"shared memory\": 0,"
        " \"grid\": [1, 1, 1], \"block\": [32, 1, 1]}},"
        "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 3, \"pid\": 0,"
        " \"tid\": 7, \"ts\": 20, \"bp\": \"e\"}]}";
    char path[] = "/tmp/test_trace_broken_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp");
    FILE *f = fdopen(fd, "w");
    EXPECT(f, "fdopen");
    fputs(broken, f);
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "python3 tests/check_trace_json.py '%s' >/dev/null", path);
    int rc = system(cmd);
    unlink(path);
    EXPECT(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "checker status %d on a broken trace", rc);
    return 0;
}

/* Runs trace_open with stdout, where it says why it steps aside, captured into `out`. */
static bool open_capturing_stdout(char *out, size_t size)
{
    FILE *capture = tmpfile();
    if (!capture)
        return false;
    fflush(stdout);
    int saved = dup(1);
    dup2(fileno(capture), 1);
    bool opened = trace_open();
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(capture);
    size_t n = fread(out, 1, size - 1, capture);
    out[n] = '\0';
    fclose(capture);
    return opened;
}

static bool one_trace_line(const char *text)
{
    const char *newline = strchr(text, '\n');
    return strncmp(text, "trace: ", 7) == 0 && newline && newline[1] == '\0';
}

static int test_open_under_another_tool(void)
{
    setenv("CUDA_INJECTION64_PATH", "libToolsInjection64.so", 1);
    char text[512];
    bool opened = open_capturing_stdout(text, sizeof text);
    unsetenv("CUDA_INJECTION64_PATH");
    if (opened)
        trace_close();
    EXPECT(!opened, "trace_open must step aside for the injected tool");
    EXPECT(one_trace_line(text), "one 'trace: ' line, got: %s", text);
    EXPECT(strstr(text, "in use by another tool"), "says why: %s", text);
    return 0;
}

static int test_open_without_gpu(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
        SKIP("a GPU is present; the GPU tests exercise trace_open");
    char text[512];
    bool opened = open_capturing_stdout(text, sizeof text);
    if (opened) {
        trace_close();
        SKIP("CUPTI initialises without a GPU here; trace_record_begin will report instead");
    }
    EXPECT(one_trace_line(text), "one 'trace: ' line, got: %s", text);
    EXPECT(trace_write("/nonexistent/x", 5) == -1, "nothing to write after a failed open");
    return 0;
}

/* The trace pass is what its parent's flag says, never what the environment says: a flag naming
 * another process is left for the flag parser to refuse, the parent's is taken away. */
static int test_trace_pass_flag(void)
{
    setenv("PROF_TRACE_PASS", "1", 1);
    EXPECT(!prof_is_trace_pass(), "PROF_TRACE_PASS=1 in the environment makes no trace pass");
    unsetenv("PROF_TRACE_PASS");
    char prog[] = "stage", other[64], flag[64], variant[] = "--variant=eager";
    snprintf(other, sizeof other, "--trace-pass-of=%ld", (long)getppid() + 1);
    char *argv[] = {prog, other, variant, NULL};
    int argc = 3;
    prof_take_trace_pass_flag(&argc, argv);
    EXPECT(argc == 3 && argv[1] == other && !prof_is_trace_pass(),
           "a flag naming another process is left in place");
    snprintf(flag, sizeof flag, "--trace-pass-of=%ld", (long)getppid());
    argv[1] = flag;
    prof_take_trace_pass_flag(&argc, argv);
    EXPECT(argc == 2 && argv[1] == variant && argv[2] == NULL && prof_is_trace_pass(),
           "the parent's flag taken away: argc %d, argv[1] %s", argc, argv[1]);
    return 0;
}

/* Only with TEST_TRACE_KEEP_DIR set: the synthetic step written there and left in place. */
static int test_keep_synthetic_trace(void)
{
    const char *dir = getenv("TEST_TRACE_KEEP_DIR");
    char base[PATH_MAX];
    EXPECT(snprintf(base, sizeof base, "%s/synthetic_step", dir) < (int)sizeof base,
           "directory name too long: %s", dir);
    trace_model *m = synthetic_step();
    EXPECT(m, "synthetic model built");
    int written = trace_model_write(m, base, 0);
    trace_model_free(m);
    EXPECT(written == 0, "trace_model_write(%s) returned %d", base, written);
    snprintf(base, sizeof base, "%s/edge_cases", dir);
    m = edge_cases();
    EXPECT(m, "edge-case model built");
    written = trace_model_write(m, base, 0);
    trace_model_free(m);
    EXPECT(written == 0, "trace_model_write(%s) returned %d", base, written);
    return 0;
}

int main(void)
{
    TEST_RUN(test_format_time);
    TEST_RUN(test_table_sums);
    TEST_RUN(test_table_ties_first_seen);
    TEST_RUN(test_table_text);
    TEST_RUN(test_kernel_rows_and_ranges);
    TEST_RUN(test_kernel_ops);
    TEST_RUN(test_api_filter);
    TEST_RUN(test_edge_cases_table);
    TEST_RUN(test_json_checked_by_python);
    TEST_RUN(test_correlation_ids_written);
    TEST_RUN(test_checker_rejects_broken_trace);
    TEST_RUN(test_open_under_another_tool);
    TEST_RUN(test_open_without_gpu);
    TEST_RUN(test_trace_pass_flag);
    if (getenv("TEST_TRACE_KEEP_DIR"))
        TEST_RUN(test_keep_synthetic_trace);
    TEST_EXIT();
}
