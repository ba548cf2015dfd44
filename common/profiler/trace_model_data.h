/* trace_model_data.h: the layout of the trace model, shared by the files that build it
 * (trace_model.c) and write it (trace_json.c). Everything else goes through trace_model.h.
 */
#ifndef TRACE_MODEL_DATA_H
#define TRACE_MODEL_DATA_H

#include "trace_model.h"

/* The steps' ranges, "ProfilerStep#2", as torch.profiler names them; the table groups them in
 * one row, as key_averages() does. */
#define STEP_RANGE_PREFIX "ProfilerStep#"
#define STEP_TABLE_ROW "ProfilerStep*"

typedef enum { CPU_RANGE, CPU_RUNTIME, CPU_DRIVER } cpu_kind;

/* How a range is written, as PyTorch layers its profiler trace: the steps (ProfilerStep#N) and
 * the ranges directly inside a step (or outside any step), a program's record_function, are
 * user_annotation; ranges nested deeper are the ops, cpu_op. Only a user_annotation other than a
 * step gets a gpu_user_annotation mirror. */
typedef enum { RANGE_STEP, RANGE_USER, RANGE_OP } range_kind;

/* A range of ours or an API call: both are slices on a CPU thread and nest there. */
typedef struct {
    cpu_kind kind;
    char *name;
    uint32_t tid, cbid, correlation;
    uint64_t start_ns, end_ns;
    size_t seq;          /* order of adding: a range is added when it ends, so inner first */
    /* set by build */
    range_kind layer;    /* ranges only */
    ptrdiff_t parent;    /* the CPU event enclosing this one on its thread, -1 at top level */
    ptrdiff_t op;        /* the innermost range that is or encloses this event, -1 if none */
    int external_id;     /* ranges: 1, 2, ... in time order, PyTorch's "External id" */
    uint64_t children_ns;
    uint64_t self_cuda_ns, cuda_total_ns;
    bool launched_gpu_work;
} cpu_event;

/* The thread id of overlap lane k of stream s in the JSON: s + k * OVERLAP_LANE_TID_STEP.
 * Perfetto reads a thread id as a 32-bit integer, so the id stays below 2^31 (k up to 2146);
 * CUPTI numbers streams from a handful up, one per stream created, so no real stream id reaches
 * a million and no overlap lane takes a stream's id. In decimal, 1000007 reads "stream 7,
 * overlap lane 1". */
#define OVERLAP_LANE_TID_STEP 1000000LL

/* Correlation ids as written: CUPTI's, plus CORRELATION_ID_FLOOR when every id in the trace is
 * below it. HolisticTraceAnalysis narrows its correlation column to the smallest integer type
 * that holds the values, then stores row numbers in a column made from it: with every id below
 * 128 (or 32768), a trace of more rows than that does not load under pandas 3. Ids of 32768 or
 * more make the column 32 bits wide. The rule leaves a trace written under it as it is when it
 * is written again (tests/trace_replay.py), and tools/trace_upgrade.py applies it to a trace
 * written before it. */
#define CORRELATION_ID_FLOOR 32768u

typedef struct {
    trace_gpu_activity rec; /* rec.name is `name` */
    char *name;
    ptrdiff_t launch; /* the API call with the same correlation id, -1 if not recorded */
    /* set by build: 0, or 1, 2, ... for work that starts before earlier work on its stream ends
     * (a programmatic dependent launch): a lane of its own, so that no two slices of one lane
     * overlap without nesting */
    int lane;
} gpu_event;

typedef struct {
    char *name;
    uint64_t start_ns, end_ns;
} overhead_event;

/* Where a thread ran calls that must not appear (the step timer's own). */
typedef struct {
    uint32_t tid;
    uint64_t start_ns, end_ns;
} hidden_span;

/* A user_annotation's mirror on one GPU stream: from the first to the last GPU work launched
 * inside the range on that stream, as Kineto's gpu_user_annotation. */
typedef struct {
    ptrdiff_t range; /* index of the range in cpu */
    uint32_t device, stream;
    uint64_t start_ns, end_ns;
} range_on_stream;

struct trace_model {
    char *process_name;
    int pid;
    bool has_window;
    uint64_t window_begin_ns, window_end_ns;
    int cupti_version, driver_version, runtime_version;

    trace_device_props *devices;
    size_t n_devices, cap_devices;
    cpu_event *cpu;
    size_t n_cpu, cap_cpu;
    gpu_event *gpu;
    size_t n_gpu, cap_gpu;
    overhead_event *overhead;
    size_t n_overhead, cap_overhead;
    hidden_span *hidden;
    size_t n_hidden, cap_hidden;
    size_t lost_records;
    bool all_api_calls;

    /* set by build */
    bool built;
    uint64_t base_ns;
    trace_table_row *table;
    size_t n_table;
    double self_cpu_total_us, self_cuda_total_us;
    trace_kernel_row *kernels;
    size_t n_kernels;
    trace_op_kernel *kernel_ops;
    size_t n_kernel_ops;
    range_on_stream *ranges_on_streams;
    size_t n_ranges_on_streams, cap_ranges_on_streams;
};

bool trace_is_step_range(const char *name);

#endif
