/* trace_json.c: the trace model as a Chrome/Perfetto timeline in the schema of PyTorch's
 * profiler traces, and the pair of files a traced run leaves (<base>.json and <base>.txt).
 */
#include "trace_model_data.h"

#include "out.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON --------------------------------------------------------------------------------- */

/* JSON string with quotes, backslashes and control characters escaped; other bytes (UTF-8,
 * '<', ',') pass through as they are valid JSON. */
static void write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Microseconds with nanosecond digits, computed in integers so that no rounding makes an
 * event end before it starts. */
static void write_us(FILE *f, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t magnitude = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
    fprintf(f, "%s%llu.%03llu", sign, (unsigned long long)(magnitude / 1000),
            (unsigned long long)(magnitude % 1000));
}

typedef struct {
    FILE *f;
    uint64_t base_ns;
    bool first;
    uint32_t correlation_shift; /* added to every correlation id (CORRELATION_ID_FLOOR) */
} event_writer;

/* CORRELATION_ID_FLOOR when every correlation id the trace holds is below it, else 0. */
static uint32_t correlation_shift(const trace_model *m)
{
    for (size_t i = 0; i < m->n_cpu; i++)
        if (m->cpu[i].kind != CPU_RANGE && m->cpu[i].correlation >= CORRELATION_ID_FLOOR)
            return 0;
    for (size_t i = 0; i < m->n_gpu; i++)
        if (m->gpu[i].rec.correlation >= CORRELATION_ID_FLOOR)
            return 0;
    return CORRELATION_ID_FLOOR;
}

/* A correlation id as written: see CORRELATION_ID_FLOOR. */
static unsigned long long written_correlation(const event_writer *w, uint32_t correlation)
{
    return (unsigned long long)correlation + w->correlation_shift;
}

/* Starts one event object: separator, then `{"ph": "X", "cat": ..., "name": ...`. */
static void begin_event(event_writer *w, const char *ph, const char *cat, const char *name)
{
    fputs(w->first ? "\n  {" : ",\n  {", w->f);
    w->first = false;
    fprintf(w->f, "\"ph\": \"%s\"", ph);
    if (cat)
        fprintf(w->f, ", \"cat\": \"%s\"", cat);
    fputs(", \"name\": ", w->f);
    write_string(w->f, name);
}

static void write_lane(event_writer *w, long long pid, long long tid)
{
    fprintf(w->f, ", \"pid\": %lld, \"tid\": %lld", pid, tid);
}

static void write_span(event_writer *w, uint64_t start_ns, uint64_t end_ns)
{
    fputs(", \"ts\": ", w->f);
    write_us(w->f, (int64_t)(start_ns - w->base_ns));
    fputs(", \"dur\": ", w->f);
    write_us(w->f, (int64_t)(end_ns - start_ns));
}

/* The steps and a program's own ranges are user_annotation, the ranges inside those are the
 * ops, cpu_op, with the input keys PyTorch writes under record_shapes. They are empty: a range
 * of ours names a stretch of C code, not a call on tensors. */
static void write_cpu_events(event_writer *w, const trace_model *m)
{
    int event_index = 0;
    for (size_t i = 0; i < m->n_cpu; i++) {
        const cpu_event *e = &m->cpu[i];
        if (e->kind != CPU_RANGE)
            continue;
        bool op = e->layer == RANGE_OP;
        begin_event(w, "X", op ? "cpu_op" : "user_annotation", e->name);
        write_lane(w, m->pid, e->tid);
        write_span(w, e->start_ns, e->end_ns);
        fprintf(w->f, ", \"args\": {\"External id\": %d, \"Record function id\": 0, ",
                e->external_id);
        if (op)
            fputs("\"Concrete Inputs\": [], \"Input type\": [], \"Input Strides\": [], "
                  "\"Input Dims\": [], ", w->f);
        fprintf(w->f, "\"Ev Idx\": %d}}", event_index++);
    }
    for (size_t i = 0; i < m->n_cpu; i++) {
        const cpu_event *e = &m->cpu[i];
        if (e->kind == CPU_RANGE)
            continue;
        begin_event(w, "X", e->kind == CPU_DRIVER ? "cuda_driver" : "cuda_runtime", e->name);
        write_lane(w, m->pid, e->tid);
        write_span(w, e->start_ns, e->end_ns);
        fputs(", \"args\": {", w->f);
        if (e->op >= 0)
            fprintf(w->f, "\"External id\": %d, ", m->cpu[e->op].external_id);
        fprintf(w->f, "\"cbid\": %u, \"correlation\": %llu}}", e->cbid,
                written_correlation(w, e->correlation));
        if (e->launched_gpu_work) {
            begin_event(w, "s", "ac2g", "ac2g");
            fprintf(w->f, ", \"id\": %llu", written_correlation(w, e->correlation));
            write_lane(w, m->pid, e->tid);
            fputs(", \"ts\": ", w->f);
            write_us(w->f, (int64_t)(e->start_ns - w->base_ns));
            fputs("}", w->f);
        }
    }
}

static const trace_device_props *device_props(const trace_model *m, uint32_t device)
{
    for (size_t i = 0; i < m->n_devices; i++)
        if (m->devices[i].id == (int)device)
            return &m->devices[i];
    return NULL;
}

/* A float as Kineto prints one: the digits a float holds, and a decimal point even when whole
 * ("1.0", "186.181824"), so that readers type the value as a float. */
static void write_float(FILE *f, float value)
{
    char text[32];
    snprintf(text, sizeof text, "%.9g", (double)value);
    fputs(text, f);
    if (!strpbrk(text, ".en"))
        fputs(".0", f);
}

/* Kineto's estimate: the blocks each SM gets from the grid, capped by the blocks the occupancy
 * calculator says fit on one SM, times the threads per block, over the SM's thread limit; in
 * single precision, and -1 (written as -99 %) when the calculator failed. */
static float estimated_occupancy(const trace_gpu_activity *k, const trace_device_props *d,
                                 float blocks_per_sm)
{
    if (k->occupancy_blocks_per_sm < 0 || d->max_threads_per_sm <= 0)
        return -1.0f;
    if ((float)k->occupancy_blocks_per_sm < blocks_per_sm)
        blocks_per_sm = (float)k->occupancy_blocks_per_sm;
    float threads = (float)k->block[0] * (float)k->block[1] * (float)k->block[2];
    return blocks_per_sm * threads / (float)d->max_threads_per_sm;
}

/* The args Kineto writes for a kernel, in its order and with its types. */
static void write_kernel_args(event_writer *w, const trace_model *m, const gpu_event *e)
{
    const trace_gpu_activity *k = &e->rec;
    fprintf(w->f,
            "\"queued\": %llu, \"device\": %u, \"context\": %u, \"stream\": %u, "
            "\"correlation\": %llu, \"registers per thread\": %d, \"shared memory\": %d",
            (unsigned long long)(k->queued_ns / 1000), k->device, k->context, k->stream,
            written_correlation(w, k->correlation), k->registers_per_thread,
            k->static_shared + k->dynamic_shared);
    const trace_device_props *d = device_props(m, k->device);
    float blocks_per_sm = 0.0f, occupancy = -1.0f;
    if (d && d->num_sms > 0) {
        blocks_per_sm = (float)k->grid[0] * (float)k->grid[1] * (float)k->grid[2] / (float)d->num_sms;
        occupancy = estimated_occupancy(k, d, blocks_per_sm);
    }
    float threads = (float)k->block[0] * (float)k->block[1] * (float)k->block[2];
    fputs(", \"blocks per SM\": ", w->f);
    write_float(w->f, blocks_per_sm);
    fputs(", \"warps per SM\": ", w->f);
    write_float(w->f, blocks_per_sm * threads / 32.0f);
    fprintf(w->f,
            ", \"grid\": [%d, %d, %d], \"block\": [%d, %d, %d], "
            "\"est. achieved occupancy %%\": %d",
            k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
            (int)(0.5f + occupancy * 100.0f));
}

static const char *gpu_category(trace_gpu_kind kind)
{
    switch (kind) {
    case TRACE_GPU_MEMCPY: return "gpu_memcpy";
    case TRACE_GPU_MEMSET: return "gpu_memset";
    default: return "kernel";
    }
}

/* The lane (thread) of GPU work: its stream, or for work on an overlap lane (see gpu_event) a
 * thread of its own, named after the stream. */
static long long gpu_lane_tid(uint32_t stream, int lane)
{
    return (long long)stream + (long long)lane * OVERLAP_LANE_TID_STEP;
}

static void write_gpu_events(event_writer *w, const trace_model *m)
{
    for (size_t i = 0; i < m->n_gpu; i++) {
        const gpu_event *e = &m->gpu[i];
        const trace_gpu_activity *a = &e->rec;
        const cpu_event *launch = e->launch >= 0 ? &m->cpu[e->launch] : NULL;
        begin_event(w, "X", gpu_category(a->kind), e->name);
        write_lane(w, a->device, gpu_lane_tid(a->stream, e->lane));
        write_span(w, a->start_ns, a->end_ns);
        fputs(", \"args\": {", w->f);
        if (launch && launch->op >= 0)
            fprintf(w->f, "\"External id\": %d, ", m->cpu[launch->op].external_id);
        if (a->kind == TRACE_GPU_KERNEL) {
            write_kernel_args(w, m, e);
        } else {
            fprintf(w->f,
                    "\"device\": %u, \"context\": %u, \"stream\": %u, \"correlation\": %llu",
                    a->device, a->context, a->stream, written_correlation(w, a->correlation));
            uint64_t dur_ns = a->end_ns - a->start_ns;
            /* bytes per nanosecond is GB/s */
            fprintf(w->f, ", \"bytes\": %llu, \"memory bandwidth (GB/s)\": %.6g",
                    (unsigned long long)a->bytes, dur_ns ? (double)a->bytes / dur_ns : 0.0);
        }
        fputs("}}", w->f);
        if (launch) {
            begin_event(w, "f", "ac2g", "ac2g");
            fprintf(w->f, ", \"id\": %llu", written_correlation(w, a->correlation));
            write_lane(w, a->device, gpu_lane_tid(a->stream, e->lane));
            fputs(", \"ts\": ", w->f);
            write_us(w->f, (int64_t)(a->start_ns - w->base_ns));
            fputs(", \"bp\": \"e\"}", w->f);
        }
    }
}

/* Kineto starts each one a nanosecond before its first GPU work and ends it a nanosecond after
 * its last, so that viewers draw it around the kernels rather than beside them. */
static void write_gpu_user_annotations(event_writer *w, const trace_model *m)
{
    for (size_t i = 0; i < m->n_ranges_on_streams; i++) {
        const range_on_stream *r = &m->ranges_on_streams[i];
        const cpu_event *range = &m->cpu[r->range];
        begin_event(w, "X", "gpu_user_annotation", range->name);
        write_lane(w, r->device, r->stream);
        write_span(w, r->start_ns - 1, r->end_ns + 1);
        fprintf(w->f, ", \"args\": {\"External id\": %d}}", range->external_id);
    }
}

static void write_overhead_events(event_writer *w, const trace_model *m)
{
    for (size_t i = 0; i < m->n_overhead; i++) {
        begin_event(w, "X", "overhead", m->overhead[i].name);
        write_lane(w, -1, 0);
        write_span(w, m->overhead[i].start_ns, m->overhead[i].end_ns);
        fputs("}", w->f);
    }
}

/* One "M" event: {"name": what, "ph": "M", "ts": 0, "pid": .., "tid": .., "args": {key: value}}
 * with either a string or a number as value. */
static void write_metadata(event_writer *w, const char *what, long long pid, long long tid,
                           const char *key, const char *text, long long number)
{
    begin_event(w, "M", NULL, what);
    fputs(", \"ts\": 0.000", w->f);
    write_lane(w, pid, tid);
    fprintf(w->f, ", \"args\": {\"%s\": ", key);
    if (text)
        write_string(w->f, text);
    else
        fprintf(w->f, "%lld", number);
    fputs("}}", w->f);
}

static bool seen_before_cpu_tid(const trace_model *m, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (m->cpu[j].tid == m->cpu[i].tid)
            return true;
    return false;
}

static bool seen_before_gpu_lane(const trace_model *m, size_t i, bool stream_too)
{
    for (size_t j = 0; j < i; j++)
        if (m->gpu[j].rec.device == m->gpu[i].rec.device &&
            (!stream_too || (m->gpu[j].rec.stream == m->gpu[i].rec.stream &&
                             m->gpu[j].lane == m->gpu[i].lane)))
            return true;
    return false;
}

/* One process per GPU (pid = device), named after the program as Kineto names them. */
static void write_gpu_process(event_writer *w, const trace_model *m, uint32_t device)
{
    char label[32];
    snprintf(label, sizeof label, "GPU %u", device);
    write_metadata(w, "process_name", device, 0, "name", m->process_name, 0);
    write_metadata(w, "process_labels", device, 0, "labels", label, 0);
    write_metadata(w, "process_sort_index", device, 0, "sort_index", NULL, 5000000LL + device);
}

/* Lane names and order as PyTorch writes them: the CPU process first, then one process per GPU
 * (pid = device) with one thread per stream (tid = stream). */
static void write_lane_metadata(event_writer *w, const trace_model *m)
{
    char label[64], thread[320];
    write_metadata(w, "process_name", m->pid, 0, "name", m->process_name, 0);
    write_metadata(w, "process_labels", m->pid, 0, "labels", "CPU", 0);
    write_metadata(w, "process_sort_index", m->pid, 0, "sort_index", NULL, m->pid);
    for (size_t i = 0; i < m->n_cpu; i++) {
        if (seen_before_cpu_tid(m, i))
            continue;
        snprintf(thread, sizeof thread, "thread %u (%s)", m->cpu[i].tid, m->process_name);
        write_metadata(w, "thread_name", m->pid, m->cpu[i].tid, "name", thread, 0);
        write_metadata(w, "thread_sort_index", m->pid, m->cpu[i].tid, "sort_index", NULL,
                       m->cpu[i].tid);
    }
    for (size_t i = 0; i < m->n_devices; i++)
        write_gpu_process(w, m, (uint32_t)m->devices[i].id);
    for (size_t i = 0; i < m->n_gpu; i++) {
        uint32_t device = m->gpu[i].rec.device, stream = m->gpu[i].rec.stream;
        if (!device_props(m, device) && !seen_before_gpu_lane(m, i, false))
            write_gpu_process(w, m, device);
        if (!seen_before_gpu_lane(m, i, true)) {
            /* Kineto's stream lanes are named "stream <id> <name>", with an empty name */
            int lane = m->gpu[i].lane;
            long long tid = gpu_lane_tid(stream, lane);
            if (lane == 0)
                snprintf(label, sizeof label, "stream %u ", stream);
            else
                snprintf(label, sizeof label, "stream %u (overlapping launches %d)", stream, lane);
            write_metadata(w, "thread_name", device, tid, "name", label, 0);
            write_metadata(w, "thread_sort_index", device, tid, "sort_index", NULL, tid);
        }
    }
}

static void write_device_properties(FILE *f, const trace_model *m)
{
    fputs("  \"deviceProperties\": [", f);
    for (size_t i = 0; i < m->n_devices; i++) {
        const trace_device_props *d = &m->devices[i];
        fprintf(f, "%s\n    {\"id\": %d, \"name\": ", i ? "," : "", d->id);
        write_string(f, d->name);
        fprintf(f,
                ", \"totalGlobalMem\": %llu, \"computeMajor\": %d, \"computeMinor\": %d, "
                "\"maxThreadsPerBlock\": %d, \"maxThreadsPerMultiprocessor\": %d, "
                "\"regsPerBlock\": %d, \"warpSize\": %d, \"sharedMemPerBlock\": %d, "
                "\"numSms\": %d, \"regsPerMultiprocessor\": %d, "
                "\"sharedMemPerBlockOptin\": %d, \"sharedMemPerMultiprocessor\": %d}",
                (unsigned long long)d->total_global_mem, d->compute_major, d->compute_minor,
                d->max_threads_per_block, d->max_threads_per_sm, d->regs_per_block,
                d->warp_size, d->shared_mem_per_block, d->num_sms, d->regs_per_sm,
                d->shared_mem_per_block_optin, d->shared_mem_per_sm);
    }
    fputs(m->n_devices ? "\n  ],\n" : "],\n", f);
}

static const char *file_name_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Kineto's trace_id: 32 hex digits naming one trace. Ours derive from the window's start and the
 * process id (splitmix64 mixing), so two runs differ while one trace's rewrite does not. */
static void write_trace_id(FILE *f, const trace_model *m)
{
    uint64_t x = m->base_ns ^ ((uint64_t)(uint32_t)m->pid << 32);
    fputs("  \"trace_id\": \"", f);
    for (int half = 0; half < 2; half++) {
        x += 0x9E3779B97F4A7C15ull;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        fprintf(f, "%016llX", (unsigned long long)(z ^ (z >> 31)));
    }
    fputs("\",\n", f);
}

/* The end of the recording window, or of the last event without one. */
static uint64_t window_end(const trace_model *m)
{
    if (m->has_window)
        return m->window_end_ns;
    uint64_t t = m->base_ns;
    for (size_t i = 0; i < m->n_cpu; i++)
        t = m->cpu[i].end_ns > t ? m->cpu[i].end_ns : t;
    for (size_t i = 0; i < m->n_gpu; i++)
        t = m->gpu[i].rec.end_ns > t ? m->gpu[i].rec.end_ns : t;
    return t;
}

/* Kineto's span of the whole recording (pid "Spans") with its sort index, and the instant
 * that opens its iteration (pid "Traces"), under the name of the profiler: here the
 * program's. */
static void write_profiler_span(event_writer *w, const trace_model *m)
{
    char profiler[300], label[340];
    snprintf(profiler, sizeof profiler, "%s profiler", m->process_name);
    snprintf(label, sizeof label, "%s (0)", profiler);
    begin_event(w, "X", "Trace", label);
    write_span(w, m->base_ns, window_end(m));
    fputs(", \"pid\": \"Spans\", \"tid\": ", w->f);
    write_string(w->f, profiler);
    fputs(", \"args\": {\"Op count\": 0}}", w->f);
    begin_event(w, "M", NULL, "process_sort_index");
    fputs(", \"ts\": 0.000, \"pid\": \"Spans\", \"tid\": 0, "
          "\"args\": {\"sort_index\": 536870912}}", w->f);
    snprintf(label, sizeof label, "Iteration Start: %s", profiler);
    begin_event(w, "i", NULL, label);
    fputs(", \"s\": \"g\", \"pid\": \"Traces\", \"tid\": ", w->f);
    snprintf(label, sizeof label, "Trace %s", profiler);
    write_string(w->f, label);
    fputs(", \"ts\": 0.000}", w->f);
}

static void write_json(FILE *f, const trace_model *m, const char *path)
{
    fputs("{\n  \"schemaVersion\": 1,\n", f);
    write_device_properties(f, m);
    write_trace_id(f, m);
    /* PyTorch's key of a trace recorded with record_shapes, whose op input keys ours carry.
     * Ours stay empty, so 0: no shapes were recorded. (PyTorch leaves the key out then; writing
     * it keeps the top-level keys in PyTorch's order.) */
    fputs("  \"record_shapes\": 0,\n", f);
    fprintf(f,
            "  \"cuda_driver_version\": %d,\n  \"cuda_runtime_version\": %d,\n"
            "  \"cupti_version\": %d,\n  \"displayTimeUnit\": \"ms\",\n"
            "  \"baseTimeNanoseconds\": %llu,\n  \"traceEvents\": [",
            m->driver_version, m->runtime_version, m->cupti_version,
            (unsigned long long)m->base_ns);
    event_writer w = {f, m->base_ns, true, correlation_shift(m)};
    write_cpu_events(&w, m);
    write_gpu_events(&w, m);
    write_gpu_user_annotations(&w, m);
    write_overhead_events(&w, m);
    write_lane_metadata(&w, m);
    write_profiler_span(&w, m);
    fputs(",\n  {\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", "
          "\"tid\": \"\", \"ts\": ", f);
    write_us(f, (int64_t)(window_end(m) - m->base_ns));
    fputs("}\n  ],\n  \"traceName\": ", f);
    write_string(f, file_name_of(path));
    fputs("\n}\n", f);
}

/* ---- files ---------------------------------------------------------------------------------- */

typedef void (*file_writer)(FILE *f, const trace_model *m, const char *path);

static void write_table_file(FILE *f, const trace_model *m, const char *path)
{
    (void)path;
    trace_model_print_table(m, f, -1);
}

static int write_file(const char *path, const trace_model *m, file_writer writer)
{
    char tmp[PATH_MAX + 32];
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f)
        return -1;
    writer(f, m, path);
    return out_commit(f, tmp, path);
}

int trace_model_write(const trace_model *m, const char *base, int top_rows)
{
    if (!m->built) {
        fprintf(stderr, "trace: nothing recorded to write\n");
        return -1;
    }
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s.json", base) >= (int)sizeof path ||
        write_file(path, m, write_json) != 0)
        return -1;
    snprintf(path, sizeof path, "%s.txt", base);
    if (write_file(path, m, write_table_file) != 0)
        return -1;
    if (top_rows > 0)
        trace_model_print_table(m, stdout, top_rows);
    return 0;
}
