/* trace.h: our own profiler, built on CUPTI.
 *
 * A traced run writes two artifacts, like torch.profiler in the articles:
 *   <base>.json  a Chrome/Perfetto timeline laid out as PyTorch's profiler traces: the steps
 *                (ProfilerStep#N) and the program's own range inside each step as
 *                user_annotation, that range mirrored once on each stream it launched work on
 *                (gpu_user_annotation), the ranges nested deeper as ops (cpu_op);
 *                cuda_runtime / cuda_driver calls, kernel / gpu_memcpy / gpu_memset activity,
 *                ac2g flows from each launch to its GPU work, process/thread metadata,
 *                deviceProperties, baseTimeNanoseconds, trace_id, the profiler's Trace span;
 *   <base>.txt   the key_averages() table, sorted by CUDA total (the steps in one
 *                ProfilerStep* row), with the footer lines
 *                "Self CPU time total" and "Self CUDA time total".
 *
 * Lifecycle (prof.c drives it; a stage only names its ranges through prof_range_push):
 *   trace_open()          before the program's first CUDA call; false when CUPTI is owned by
 *                         another tool (nsys, ncu, compute-sanitizer) or unavailable, after
 *                         printing one line that says so: the run goes on untraced.
 *   trace_activate()      at the start of the first warm-up step: CUPTI starts collecting and
 *                         pays its buffer allocation there, outside the recorded window.
 *   trace_record_begin()  at the start of the first active step: the window opens.
 *   trace_range_push/pop  CPU ranges (ProfilerStep#N, the forward, per-op ranges), recorded on
 *                         CUPTI's clock while recording; no-ops otherwise.
 *   trace_hide_begin/end  around the step timer's own calls (its CUDA events, the gate), which
 *                         then never appear in the trace, nor the GPU work they launch.
 *   trace_record_end()    after the last active step, once the device is synchronised.
 *   trace_write(base)     writes <base>.json and <base>.txt (temporary name, then rename).
 *   trace_close()         frees everything.
 */
#ifndef TRACE_H
#define TRACE_H

#include <stdbool.h>
#include <stddef.h>

bool trace_open(void);
/* The tool that owns CUPTI in this process, or NULL when CUPTI is ours: CUDA_INJECTION64_PATH
 * (how nsys injects itself), else the path of a loaded library of compute-sanitizer or Nsight
 * Compute. */
const char *trace_cupti_owner(void);
void trace_activate(void);
void trace_record_begin(void);
void trace_range_push(const char *name);
void trace_range_pop(void);
/* Nest; calls between the outermost pair on this thread are left out of the trace. */
void trace_hide_begin(void);
void trace_hide_end(void);
/* 0 (the default): only API calls torch.profiler records as well (trace_model.c lists them);
 * 1: every runtime and driver call. Before trace_record_end. */
void trace_set_api_filter(int all);
void trace_record_end(void);
/* Prints the table's first `top_rows` rows to stdout; returns 0, or -1 with a message. */
int trace_write(const char *base, int top_rows);
void trace_close(void);

/* What the trace saw per kernel name, for stage reports and GPU tests. */
typedef struct {
    char name[256];
    int calls;
    double total_us, median_us, min_us, max_us;
} trace_kernel_row;

/* Fills up to `max` rows sorted by total time; returns the number of distinct kernels. */
int trace_kernel_rows(trace_kernel_row *rows, int max);
/* What the trace saw per kernel name under each range: the range is the innermost user range
 * around the kernel's launch that is not a ProfilerStep#N step ("" when the step is the only
 * one), so 03's "gate_proj" row holds the GEMM that gate_proj launched. */
typedef struct {
    char range[64];
    char kernel[256];
    int calls;
    double total_us, median_us;
} trace_op_kernel;

/* Fills up to `max` (range, kernel) rows sorted by total time; returns the number of pairs. */
int trace_kernel_ops(trace_op_kernel *rows, int max);
/* Kernels (plus memcpy and memset operations) recorded inside the range named `name`
 * (e.g. "ProfilerStep#2"); -1 if no such range was recorded. */
int trace_gpu_ops_in_range(const char *name, int *kernels, int *memcpys, int *memsets);
/* Records CUPTI reported as dropped (buffers full), shown in the report. */
size_t trace_dropped_records(void);

#endif
