/* trace_model.h: the in-memory trace behind trace.h, with no CUDA in it.
 *
 * trace_cupti.c fills a model from CUPTI activity records and from our CPU ranges; the tests
 * fill one by hand with synthetic records. Then:
 *   trace_model_build()    keeps what lies in the recording window, nests the CPU events per
 *                          thread and layers the ranges (steps, the program's ranges, ops),
 *                          links each GPU activity to the API call that launched it (by
 *                          correlation id) and to the range around that call, puts GPU work
 *                          that overlaps earlier work of its stream on a lane of its own, and
 *                          computes the table and the per-kernel rows;
 *   trace_model_write()    writes <base>.json (PyTorch profiler schema) and <base>.txt (the
 *                          key_averages() table), each under a temporary name, then renamed.
 *
 * trace_model.c builds it, trace_json.c writes the timeline and the files, trace_table.c prints
 * the table.
 *
 * All times are nanoseconds on one clock (CUPTI's); the JSON shows microseconds relative to
 * baseTimeNanoseconds, which is the start of the recording window.
 */
#ifndef TRACE_MODEL_H
#define TRACE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

typedef struct trace_model trace_model;

typedef enum { TRACE_API_RUNTIME, TRACE_API_DRIVER } trace_api_domain;

/* One CUDA runtime or driver API call, as CUPTI reports it. Strings are copied. */
typedef struct {
    trace_api_domain domain;
    const char *name; /* "cudaLaunchKernel", without CUPTI's "_v7000" suffix */
    uint32_t cbid, tid, correlation;
    uint64_t start_ns, end_ns;
} trace_api_call;

typedef enum { TRACE_GPU_KERNEL, TRACE_GPU_MEMCPY, TRACE_GPU_MEMSET } trace_gpu_kind;

/* One piece of GPU work. Kernel names that are mangled C++ are demangled when added. */
typedef struct {
    trace_gpu_kind kind;
    const char *name; /* kernel name, or "Memcpy HtoD (Pageable -> Device)", "Memset (Device)" */
    uint64_t start_ns, end_ns;
    uint32_t device, context, stream, correlation;
    int grid[3], block[3];            /* kernels only */
    int registers_per_thread;         /* kernels only */
    int static_shared, dynamic_shared; /* bytes, kernels only */
    /* kernels only: blocks of this kernel one SM can hold, from CUDA's occupancy calculator fed
     * as Kineto feeds it (-1 when it failed); and CUPTI's queued timestamp (0 unless CUPTI
     * collected it) */
    int occupancy_blocks_per_sm;
    uint64_t queued_ns;
    uint64_t bytes;                   /* memcpy and memset only */
} trace_gpu_activity;

/* The fields of cudaDeviceProp that PyTorch writes as "deviceProperties", plus the block limit
 * per SM that the occupancy estimate needs. */
typedef struct {
    int id;
    char name[256];
    uint64_t total_global_mem;
    int compute_major, compute_minor;
    int max_threads_per_block, max_threads_per_sm, max_blocks_per_sm;
    int regs_per_block, regs_per_sm, warp_size, num_sms;
    int shared_mem_per_block, shared_mem_per_block_optin, shared_mem_per_sm;
} trace_device_props;

/* One row of the key_averages() table; times in microseconds. */
typedef struct {
    const char *name; /* owned by the model */
    bool is_gpu;      /* a kernel, memcpy or memset rather than a CPU range or API call */
    int calls;
    double self_cpu_us, cpu_total_us, self_cuda_us, cuda_total_us;
} trace_table_row;

trace_model *trace_model_new(const char *process_name, int pid);
void trace_model_free(trace_model *m);

/* Records outside [begin_ns, end_ns] are dropped by build; without a window all are kept. */
void trace_model_set_window(trace_model *m, uint64_t begin_ns, uint64_t end_ns);
void trace_model_set_versions(trace_model *m, int cupti, int cuda_driver, int cuda_runtime);

/* Each returns 0, or -1 when out of memory (the record is lost, and build says so). */
int trace_model_add_device(trace_model *m, const trace_device_props *props);
int trace_model_add_range(trace_model *m, const char *name, uint32_t tid, uint64_t start_ns,
                          uint64_t end_ns);
int trace_model_add_api(trace_model *m, const trace_api_call *call);
int trace_model_add_gpu(trace_model *m, const trace_gpu_activity *activity);
int trace_model_add_overhead(trace_model *m, const char *name, uint64_t start_ns,
                             uint64_t end_ns);
/* API calls thread `tid` started in [start_ns, end_ns] are dropped by build, with the GPU work
 * they launched: the step timer's own calls. */
int trace_model_add_hidden_span(trace_model *m, uint32_t tid, uint64_t start_ns, uint64_t end_ns);

/* By default build keeps API calls that torch.profiler records too (runtime launches, graph
 * launches, copies, memsets, synchronisations, allocations, event records and waits; driver
 * launches and virtual-memory calls) and any call that launched GPU work; `all` keeps every
 * call. */
void trace_model_set_api_filter(trace_model *m, bool all);
/* Whether build keeps the call `name` by default. */
bool trace_api_kept_by_default(trace_api_domain domain, const char *name);

/* Returns 0, or -1 with a message on stderr. Call once, after the last add. */
int trace_model_build(trace_model *m);

/* <base>.json and <base>.txt, each complete or absent (out.h); the directory must exist.
 * Prints the first `top_rows` table rows to stdout. Returns 0 or -1 with a message. */
int trace_model_write(const trace_model *m, const char *base, int top_rows);
/* The table alone, `max_rows` rows (all when negative), with header and footer. */
void trace_model_print_table(const trace_model *m, FILE *out, int max_rows);

/* The table rows sorted by CUDA total (equal totals in the order first seen, as PyTorch keeps
 * them), and the two footer totals in microseconds. */
const trace_table_row *trace_model_table(const trace_model *m, size_t *count);
void trace_model_totals(const trace_model *m, double *self_cpu_us, double *self_cuda_us);

/* As trace_kernel_rows, trace_kernel_ops and trace_gpu_ops_in_range of trace.h (the last
 * returns the kernels). */
int trace_model_kernel_rows(const trace_model *m, trace_kernel_row *rows, int max);
int trace_model_kernel_ops(const trace_model *m, trace_op_kernel *rows, int max);
int trace_model_gpu_ops_in_range(const trace_model *m, const char *name, int *kernels,
                                 int *memcpys, int *memsets);

/* PyTorch's time format: "812.000us", "1.234ms", "2.000s". */
void trace_format_time(double us, char *buf, size_t size);

#endif
