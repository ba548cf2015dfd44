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
} event_writer;

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

static void write_cpu_events(event_writer *w, const trace_model *m)
{
    int event_index = 0;
    for (size_t i = 0; i < m->n_cpu; i++) {
        const cpu_event *e = &m->cpu[i];
        if (e->kind != CPU_RANGE)
            continue;
        begin_event(w, "X", "cpu_op", e->name);
        write_lane(w, m->pid, e->tid);
        write_span(w, e->start_ns, e->end_ns);
        fprintf(w->f, ", \"args\": {\"External id\": %d, \"Ev Idx\": %d}}", e->external_id,
                event_index++);
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
        fprintf(w->f, "\"cbid\": %u, \"correlation\": %u}}", e->cbid, e->correlation);
        if (e->launched_gpu_work) {
            begin_event(w, "s", "ac2g", "ac2g");
            fprintf(w->f, ", \"id\": %u", e->correlation);
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

static int min_int(int a, int b) { return a < b ? a : b; }

/* Theoretical blocks per SM from the block size, registers and shared memory (the limits the
 * CUDA occupancy calculator applies: registers allocated per warp in units of 256, 1 KB of
 * shared memory reserved per block since sm_80), capped by the blocks the grid gives each SM.
 * An estimate, as PyTorch's "est. achieved occupancy %" is. */
static int estimated_occupancy_pct(const trace_gpu_activity *k, const trace_device_props *d)
{
    long long threads = (long long)k->block[0] * k->block[1] * k->block[2];
    if (threads <= 0 || d->warp_size <= 0 || d->num_sms <= 0 || d->max_threads_per_sm <= 0)
        return 0;
    int warps_per_block = (int)((threads + d->warp_size - 1) / d->warp_size);
    int max_warps = d->max_threads_per_sm / d->warp_size;
    int blocks = min_int(d->max_blocks_per_sm > 0 ? d->max_blocks_per_sm : 32,
                         max_warps / warps_per_block);
    if (k->registers_per_thread > 0) {
        int regs_per_warp = (k->registers_per_thread * d->warp_size + 255) / 256 * 256;
        blocks = min_int(blocks, d->regs_per_sm / regs_per_warp / warps_per_block);
    }
    int shared = k->static_shared + k->dynamic_shared;
    if (shared > 0)
        blocks = min_int(blocks, d->shared_mem_per_sm / (shared + 1024));
    double grid_blocks_per_sm =
        (double)k->grid[0] * k->grid[1] * k->grid[2] / d->num_sms;
    double resident = grid_blocks_per_sm < blocks ? grid_blocks_per_sm : blocks;
    return (int)(100.0 * resident * warps_per_block / max_warps + 0.5);
}

static void write_kernel_args(event_writer *w, const trace_model *m, const gpu_event *e)
{
    const trace_gpu_activity *k = &e->rec;
    fprintf(w->f,
            ", \"registers per thread\": %d, \"shared memory\": %d, \"grid\": [%d, %d, %d], "
            "\"block\": [%d, %d, %d]",
            k->registers_per_thread, k->static_shared + k->dynamic_shared, k->grid[0],
            k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2]);
    const trace_device_props *d = device_props(m, k->device);
    if (!d || d->num_sms <= 0 || d->warp_size <= 0)
        return;
    double blocks = (double)k->grid[0] * k->grid[1] * k->grid[2];
    /* warps per block round up: a partial warp occupies a whole one */
    int whole_warps = (k->block[0] * k->block[1] * k->block[2] + d->warp_size - 1) / d->warp_size;
    double warps_per_block = whole_warps;
    fprintf(w->f,
            ", \"blocks per SM\": %.6g, \"warps per SM\": %.6g, "
            "\"est. achieved occupancy %%\": %d",
            blocks / d->num_sms, blocks * warps_per_block / d->num_sms,
            estimated_occupancy_pct(k, d));
}

static const char *gpu_category(trace_gpu_kind kind)
{
    switch (kind) {
    case TRACE_GPU_MEMCPY: return "gpu_memcpy";
    case TRACE_GPU_MEMSET: return "gpu_memset";
    default: return "kernel";
    }
}

static void write_gpu_events(event_writer *w, const trace_model *m)
{
    for (size_t i = 0; i < m->n_gpu; i++) {
        const gpu_event *e = &m->gpu[i];
        const trace_gpu_activity *a = &e->rec;
        const cpu_event *launch = e->launch >= 0 ? &m->cpu[e->launch] : NULL;
        begin_event(w, "X", gpu_category(a->kind), e->name);
        write_lane(w, a->device, a->stream);
        write_span(w, a->start_ns, a->end_ns);
        fputs(", \"args\": {", w->f);
        if (launch && launch->op >= 0)
            fprintf(w->f, "\"External id\": %d, ", m->cpu[launch->op].external_id);
        fprintf(w->f, "\"device\": %u, \"context\": %u, \"stream\": %u, \"correlation\": %u",
                a->device, a->context, a->stream, a->correlation);
        if (a->kind == TRACE_GPU_KERNEL) {
            write_kernel_args(w, m, e);
        } else {
            uint64_t dur_ns = a->end_ns - a->start_ns;
            /* bytes per nanosecond is GB/s */
            fprintf(w->f, ", \"bytes\": %llu, \"memory bandwidth (GB/s)\": %.6g",
                    (unsigned long long)a->bytes, dur_ns ? (double)a->bytes / dur_ns : 0.0);
        }
        fputs("}}", w->f);
        if (launch) {
            begin_event(w, "f", "ac2g", "ac2g");
            fprintf(w->f, ", \"id\": %u", a->correlation);
            write_lane(w, a->device, a->stream);
            fputs(", \"ts\": ", w->f);
            write_us(w->f, (int64_t)(a->start_ns - w->base_ns));
            fputs(", \"bp\": \"e\"}", w->f);
        }
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
            (!stream_too || m->gpu[j].rec.stream == m->gpu[i].rec.stream))
            return true;
    return false;
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
    for (size_t i = 0; i < m->n_gpu; i++) {
        uint32_t device = m->gpu[i].rec.device, stream = m->gpu[i].rec.stream;
        if (!seen_before_gpu_lane(m, i, false)) {
            snprintf(label, sizeof label, "GPU %u", device);
            write_metadata(w, "process_name", device, 0, "name", m->process_name, 0);
            write_metadata(w, "process_labels", device, 0, "labels", label, 0);
            write_metadata(w, "process_sort_index", device, 0, "sort_index", NULL,
                           5000000LL + device);
        }
        if (!seen_before_gpu_lane(m, i, true)) {
            snprintf(label, sizeof label, "stream %u", stream);
            write_metadata(w, "thread_name", device, stream, "name", label, 0);
            write_metadata(w, "thread_sort_index", device, stream, "sort_index", NULL, stream);
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

static void write_json(FILE *f, const trace_model *m, const char *path)
{
    fputs("{\n  \"schemaVersion\": 1,\n", f);
    write_device_properties(f, m);
    fprintf(f,
            "  \"cupti_version\": %d,\n  \"cuda_driver_version\": %d,\n"
            "  \"cuda_runtime_version\": %d,\n  \"displayTimeUnit\": \"ms\",\n"
            "  \"baseTimeNanoseconds\": %llu,\n  \"traceEvents\": [",
            m->cupti_version, m->driver_version, m->runtime_version,
            (unsigned long long)m->base_ns);
    event_writer w = {f, m->base_ns, true};
    write_cpu_events(&w, m);
    write_gpu_events(&w, m);
    write_overhead_events(&w, m);
    write_lane_metadata(&w, m);
    fputs("\n  ],\n  \"traceName\": ", f);
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
