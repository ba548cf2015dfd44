/* trace_model.c: the trace model: records in, then the window, the nesting of CPU events, the
 * links from GPU work to its launch and its ranges, the table and the per-kernel rows.
 *
 * No CUDA here: trace_cupti.c feeds it from CUPTI, tests/test_trace.c from synthetic records.
 */
#include "trace_model_data.h"

#include <stdlib.h>
#include <string.h>

/* From libstdc++ (the programs link -lstdc++): turns "_Z3addPfi" into "add(float*, int)". */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *length, int *status);

/* ---- adding records ------------------------------------------------------------------- */

/* Makes room for one more item; false when out of memory. */
static bool reserve_one(void **items, size_t *capacity, size_t count, size_t item_size)
{
    if (count < *capacity)
        return true;
    size_t grown = *capacity ? 2 * *capacity : 256;
    void *bigger = realloc(*items, grown * item_size);
    if (!bigger)
        return false;
    *items = bigger;
    *capacity = grown;
    return true;
}

#define RESERVE_ONE(m, array, n, cap) \
    reserve_one((void **)&(m)->array, &(m)->cap, (m)->n, sizeof *(m)->array)

static char *demangled_copy(const char *name)
{
    if (strncmp(name, "_Z", 2) == 0) {
        int status = -1;
        char *readable = __cxa_demangle(name, NULL, NULL, &status);
        if (status == 0 && readable)
            return readable;
        free(readable);
    }
    return strdup(name);
}

trace_model *trace_model_new(const char *process_name, int pid)
{
    trace_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->process_name = strdup(process_name ? process_name : "program");
    if (!m->process_name) {
        free(m);
        return NULL;
    }
    m->pid = pid;
    return m;
}

void trace_model_free(trace_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_cpu; i++)
        free(m->cpu[i].name);
    for (size_t i = 0; i < m->n_gpu; i++)
        free(m->gpu[i].name);
    for (size_t i = 0; i < m->n_overhead; i++)
        free(m->overhead[i].name);
    free(m->cpu);
    free(m->gpu);
    free(m->overhead);
    free(m->hidden);
    free(m->ranges_on_streams);
    free(m->devices);
    free(m->table);
    free(m->kernels);
    free(m->kernel_ops);
    free(m->process_name);
    free(m);
}

void trace_model_set_window(trace_model *m, uint64_t begin_ns, uint64_t end_ns)
{
    m->has_window = true;
    m->window_begin_ns = begin_ns;
    m->window_end_ns = end_ns;
}

void trace_model_set_versions(trace_model *m, int cupti, int cuda_driver, int cuda_runtime)
{
    m->cupti_version = cupti;
    m->driver_version = cuda_driver;
    m->runtime_version = cuda_runtime;
}

static int lost(trace_model *m)
{
    m->lost_records++;
    return -1;
}

int trace_model_add_device(trace_model *m, const trace_device_props *props)
{
    if (!RESERVE_ONE(m, devices, n_devices, cap_devices))
        return lost(m);
    m->devices[m->n_devices++] = *props;
    return 0;
}

static int add_cpu_event(trace_model *m, cpu_kind kind, const char *name, uint32_t tid,
                         uint64_t start_ns, uint64_t end_ns)
{
    if (!RESERVE_ONE(m, cpu, n_cpu, cap_cpu))
        return lost(m);
    char *copy = strdup(name);
    if (!copy)
        return lost(m);
    /* A clock hiccup must not become a negative duration in the JSON. */
    m->cpu[m->n_cpu] = (cpu_event){
        .kind = kind, .name = copy, .tid = tid, .start_ns = start_ns,
        .end_ns = end_ns < start_ns ? start_ns : end_ns, .seq = m->n_cpu, .parent = -1,
        .op = -1};
    m->n_cpu++;
    return 0;
}

int trace_model_add_range(trace_model *m, const char *name, uint32_t tid, uint64_t start_ns,
                          uint64_t end_ns)
{
    return add_cpu_event(m, CPU_RANGE, name, tid, start_ns, end_ns);
}

int trace_model_add_api(trace_model *m, const trace_api_call *call)
{
    cpu_kind kind = call->domain == TRACE_API_DRIVER ? CPU_DRIVER : CPU_RUNTIME;
    if (add_cpu_event(m, kind, call->name, call->tid, call->start_ns, call->end_ns) != 0)
        return -1;
    m->cpu[m->n_cpu - 1].cbid = call->cbid;
    m->cpu[m->n_cpu - 1].correlation = call->correlation;
    return 0;
}

int trace_model_add_gpu(trace_model *m, const trace_gpu_activity *activity)
{
    if (!RESERVE_ONE(m, gpu, n_gpu, cap_gpu))
        return lost(m);
    char *name = activity->kind == TRACE_GPU_KERNEL ? demangled_copy(activity->name)
                                                     : strdup(activity->name);
    if (!name)
        return lost(m);
    gpu_event *e = &m->gpu[m->n_gpu++];
    *e = (gpu_event){.rec = *activity, .name = name, .launch = -1};
    e->rec.name = name;
    if (e->rec.end_ns < e->rec.start_ns)
        e->rec.end_ns = e->rec.start_ns;
    return 0;
}

int trace_model_add_hidden_span(trace_model *m, uint32_t tid, uint64_t start_ns, uint64_t end_ns)
{
    if (!RESERVE_ONE(m, hidden, n_hidden, cap_hidden))
        return lost(m);
    m->hidden[m->n_hidden++] = (hidden_span){tid, start_ns, end_ns};
    return 0;
}

void trace_model_set_api_filter(trace_model *m, bool all)
{
    m->all_api_calls = all;
}

/* A subset of what torch.profiler's Kineto records, chosen so that our trace of a program holds
 * no call PyTorch's trace of the same program lacks. On the runtime side: kernel and graph
 * launches, copies and memsets, synchronisations and stream waits (the calls Kineto draws an
 * arrow from), event records and waits, allocations. On the driver side Kineto keeps only
 * launches and the virtual-memory calls; the rest (cuBLASLt's cuKernelGetAttribute queries, ...)
 * appears with --trace-api all. A name ending in '*' is a prefix. */
static const char *const runtime_calls_kept[] = {
    "cudaLaunch*", "cudaGraphLaunch", "cudaMemcpy*", "cudaMemset*", "cudaMalloc*", "cudaFree*",
    "cudaHostAlloc", "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaStreamWaitEvent",
    "cudaEventRecord*", "cudaEventSynchronize", NULL};
static const char *const driver_calls_kept[] = {
    "cuLaunchKernel", "cuLaunchKernelEx", "cuMemCreate", "cuMemMap", "cuMemUnmap", "cuMemRelease",
    "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle", NULL};

bool trace_api_kept_by_default(trace_api_domain domain, const char *name)
{
    const char *const *kept = domain == TRACE_API_DRIVER ? driver_calls_kept : runtime_calls_kept;
    for (; *kept; kept++) {
        size_t len = strlen(*kept);
        bool prefix = (*kept)[len - 1] == '*';
        if (prefix ? strncmp(name, *kept, len - 1) == 0 : strcmp(name, *kept) == 0)
            return true;
    }
    return false;
}

int trace_model_add_overhead(trace_model *m, const char *name, uint64_t start_ns,
                             uint64_t end_ns)
{
    if (!RESERVE_ONE(m, overhead, n_overhead, cap_overhead))
        return lost(m);
    char *copy = strdup(name);
    if (!copy)
        return lost(m);
    overhead_event *o = &m->overhead[m->n_overhead++];
    o->name = copy;
    o->start_ns = start_ns;
    o->end_ns = end_ns < start_ns ? start_ns : end_ns;
    return 0;
}

/* ---- build: window, nesting, launch links, table ----------------------------------------- */

static bool in_window(const trace_model *m, uint64_t t)
{
    return !m->has_window || (t >= m->window_begin_ns && t <= m->window_end_ns);
}

/* Per thread in time order; an enclosing event sorts before what it encloses (same start:
 * the longer first, and a range before an API call; two ranges of the same start and end: the
 * one added last, which ended last, so the outer one). */
static int compare_cpu_events(const void *pa, const void *pb)
{
    const cpu_event *a = pa, *b = pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    if (a->end_ns != b->end_ns)
        return a->end_ns > b->end_ns ? -1 : 1;
    if (a->kind != b->kind)
        return (a->kind != CPU_RANGE) - (b->kind != CPU_RANGE);
    return (a->seq < b->seq) - (a->seq > b->seq);
}

static void drop_api_calls_outside_window(trace_model *m)
{
    size_t kept = 0;
    for (size_t i = 0; i < m->n_cpu; i++) {
        if (m->cpu[i].kind == CPU_RANGE || in_window(m, m->cpu[i].start_ns))
            m->cpu[kept++] = m->cpu[i];
        else
            free(m->cpu[i].name);
    }
    m->n_cpu = kept;
}

static bool encloses(const cpu_event *outer, const cpu_event *inner)
{
    return outer->start_ns <= inner->start_ns && inner->end_ns <= outer->end_ns;
}

/* The range enclosing range `op`, -1 at the top. */
static ptrdiff_t parent_op(const trace_model *m, ptrdiff_t op)
{
    ptrdiff_t parent = m->cpu[op].parent;
    return parent >= 0 ? m->cpu[parent].op : -1;
}

/* The layer of range `i`, its parent already set: a step; a range with no enclosing range but
 * steps (a program's own record_function); or an op, nested deeper. */
static range_kind range_layer(const trace_model *m, ptrdiff_t i)
{
    if (trace_is_step_range(m->cpu[i].name))
        return RANGE_STEP;
    for (ptrdiff_t up = parent_op(m, i); up >= 0; up = parent_op(m, up))
        if (m->cpu[up].layer != RANGE_STEP)
            return RANGE_OP;
    return RANGE_USER;
}

/* One pass with a stack per thread: the parent of an event is the innermost open event that
 * still encloses it. */
static int nest_cpu_events(trace_model *m)
{
    qsort(m->cpu, m->n_cpu, sizeof *m->cpu, compare_cpu_events);
    ptrdiff_t *stack = malloc((m->n_cpu + 1) * sizeof *stack);
    if (!stack)
        return -1;
    size_t depth = 0;
    int next_external_id = 1;
    for (size_t i = 0; i < m->n_cpu; i++) {
        cpu_event *e = &m->cpu[i];
        if (i > 0 && m->cpu[i - 1].tid != e->tid)
            depth = 0;
        while (depth > 0 && !encloses(&m->cpu[stack[depth - 1]], e))
            depth--;
        e->parent = depth > 0 ? stack[depth - 1] : -1;
        if (e->kind == CPU_RANGE) {
            e->op = (ptrdiff_t)i;
            e->external_id = next_external_id++;
            e->layer = range_layer(m, (ptrdiff_t)i);
        } else {
            e->op = e->parent >= 0 ? m->cpu[e->parent].op : -1;
        }
        if (e->parent >= 0)
            m->cpu[e->parent].children_ns += e->end_ns - e->start_ns;
        stack[depth++] = (ptrdiff_t)i;
    }
    free(stack);
    return 0;
}

typedef struct {
    uint32_t correlation;
    ptrdiff_t index;
} correlation_entry;

static int compare_correlation(const void *pa, const void *pb)
{
    const correlation_entry *a = pa, *b = pb;
    return (a->correlation > b->correlation) - (a->correlation < b->correlation);
}

static int compare_gpu_start(const void *pa, const void *pb)
{
    const gpu_event *a = pa, *b = pb;
    return (a->rec.start_ns > b->rec.start_ns) - (a->rec.start_ns < b->rec.start_ns);
}

/* Links each GPU activity to its launch call; GPU work whose launch was not recorded is kept
 * only if it ran inside the window. Then the launch's ranges get its GPU time: the innermost as
 * self CUDA, every enclosing one as CUDA total (PyTorch attributes kernels to the op, not to
 * the cudaLaunchKernel row, which shows no CUDA time). */
static int compare_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

static bool contains_u32(const uint32_t *sorted, size_t n, uint32_t value)
{
    return bsearch(&value, sorted, n, sizeof value, compare_u32) != NULL;
}

static bool in_hidden_span(const trace_model *m, const cpu_event *e)
{
    for (size_t i = 0; i < m->n_hidden; i++)
        if (m->hidden[i].tid == e->tid && m->hidden[i].start_ns <= e->start_ns &&
            e->start_ns <= m->hidden[i].end_ns)
            return true;
    return false;
}

/* Drops the API calls of hidden spans and the GPU work they launched, then, unless every call
 * is wanted, the calls that are neither kept by default nor launched GPU work. */
static int filter_api_calls(trace_model *m)
{
    uint32_t *launched = malloc((m->n_gpu + 1) * sizeof *launched);
    uint32_t *hidden = malloc((m->n_cpu + 1) * sizeof *hidden);
    if (!launched || !hidden) {
        free(launched);
        free(hidden);
        return -1;
    }
    size_t n_hidden = 0, kept = 0;
    for (size_t i = 0; i < m->n_cpu; i++) {
        cpu_event e = m->cpu[i];
        if (e.kind != CPU_RANGE && in_hidden_span(m, &e)) {
            hidden[n_hidden++] = e.correlation;
            free(e.name);
        } else {
            m->cpu[kept++] = e;
        }
    }
    m->n_cpu = kept;
    qsort(hidden, n_hidden, sizeof *hidden, compare_u32);
    size_t n_launched = 0;
    kept = 0;
    for (size_t i = 0; i < m->n_gpu; i++) {
        gpu_event g = m->gpu[i];
        if (contains_u32(hidden, n_hidden, g.rec.correlation)) {
            free(g.name);
            continue;
        }
        launched[n_launched++] = g.rec.correlation;
        g.rec.name = g.name;
        m->gpu[kept++] = g;
    }
    m->n_gpu = kept;
    qsort(launched, n_launched, sizeof *launched, compare_u32);
    kept = 0;
    for (size_t i = 0; i < m->n_cpu; i++) {
        cpu_event e = m->cpu[i];
        trace_api_domain domain = e.kind == CPU_DRIVER ? TRACE_API_DRIVER : TRACE_API_RUNTIME;
        if (e.kind == CPU_RANGE || m->all_api_calls || trace_api_kept_by_default(domain, e.name) ||
            contains_u32(launched, n_launched, e.correlation))
            m->cpu[kept++] = e;
        else
            free(e.name);
    }
    m->n_cpu = kept;
    free(launched);
    free(hidden);
    return 0;
}

/* Extends the mirror of range `range` on the stream of `e` to cover e; false when out of
 * memory. */
static bool extend_range_on_stream(trace_model *m, ptrdiff_t range, const gpu_event *e)
{
    for (size_t i = 0; i < m->n_ranges_on_streams; i++) {
        range_on_stream *r = &m->ranges_on_streams[i];
        if (r->range == range && r->device == e->rec.device && r->stream == e->rec.stream) {
            r->start_ns = e->rec.start_ns < r->start_ns ? e->rec.start_ns : r->start_ns;
            r->end_ns = e->rec.end_ns > r->end_ns ? e->rec.end_ns : r->end_ns;
            return true;
        }
    }
    if (!RESERVE_ONE(m, ranges_on_streams, n_ranges_on_streams, cap_ranges_on_streams))
        return false;
    m->ranges_on_streams[m->n_ranges_on_streams++] =
        (range_on_stream){range, e->rec.device, e->rec.stream, e->rec.start_ns, e->rec.end_ns};
    return true;
}

/* GPU work in start order: each piece on the first lane of its stream that is free by its
 * start. Work on one stream runs one piece after another, except a programmatic dependent
 * launch, which starts while its predecessor still runs: it moves to a lane of its own. */
static int assign_lanes(trace_model *m)
{
    typedef struct {
        uint32_t device, stream;
        int lane;
        uint64_t end_ns;
    } lane_end;
    lane_end *ends = malloc((m->n_gpu + 1) * sizeof *ends);
    if (!ends)
        return -1;
    size_t n_ends = 0;
    for (size_t i = 0; i < m->n_gpu; i++) {
        gpu_event *e = &m->gpu[i];
        lane_end *free_lane = NULL;
        int lanes = 0;
        for (size_t j = 0; j < n_ends; j++) {
            if (ends[j].device != e->rec.device || ends[j].stream != e->rec.stream)
                continue;
            lanes++;
            if (ends[j].end_ns <= e->rec.start_ns && (!free_lane || ends[j].lane < free_lane->lane))
                free_lane = &ends[j];
        }
        if (!free_lane) {
            free_lane = &ends[n_ends++];
            *free_lane = (lane_end){e->rec.device, e->rec.stream, lanes, 0};
        }
        e->lane = free_lane->lane;
        free_lane->end_ns = e->rec.end_ns;
    }
    free(ends);
    return 0;
}

static int link_gpu_work(trace_model *m)
{
    correlation_entry *by_correlation = malloc((m->n_cpu + 1) * sizeof *by_correlation);
    if (!by_correlation)
        return -1;
    size_t n_calls = 0;
    for (size_t i = 0; i < m->n_cpu; i++)
        if (m->cpu[i].kind != CPU_RANGE)
            by_correlation[n_calls++] = (correlation_entry){m->cpu[i].correlation, (ptrdiff_t)i};
    qsort(by_correlation, n_calls, sizeof *by_correlation, compare_correlation);

    size_t kept = 0;
    for (size_t i = 0; i < m->n_gpu; i++) {
        gpu_event e = m->gpu[i];
        correlation_entry key = {e.rec.correlation, -1};
        const correlation_entry *found =
            bsearch(&key, by_correlation, n_calls, sizeof key, compare_correlation);
        e.launch = found ? found->index : -1;
        if (!found && !in_window(m, e.rec.start_ns)) {
            free(e.name);
            continue;
        }
        m->gpu[kept++] = e;
    }
    m->n_gpu = kept;
    free(by_correlation);
    qsort(m->gpu, m->n_gpu, sizeof *m->gpu, compare_gpu_start);

    for (size_t i = 0; i < m->n_gpu; i++) {
        /* qsort moved the events: the name pointer inside rec must follow its owner. */
        m->gpu[i].rec.name = m->gpu[i].name;
        if (m->gpu[i].launch < 0)
            continue;
        cpu_event *launch = &m->cpu[m->gpu[i].launch];
        uint64_t dur = m->gpu[i].rec.end_ns - m->gpu[i].rec.start_ns;
        launch->launched_gpu_work = true;
        if (launch->op >= 0)
            m->cpu[launch->op].self_cuda_ns += dur;
        bool mirrored = false;
        for (ptrdiff_t op = launch->op; op >= 0; op = parent_op(m, op)) {
            m->cpu[op].cuda_total_ns += dur;
            /* Kineto mirrors the innermost user_annotation around the launch, and no step. */
            if (!mirrored && m->cpu[op].layer == RANGE_USER) {
                mirrored = true;
                if (!extend_range_on_stream(m, op, &m->gpu[i]))
                    return -1;
            }
        }
    }
    return assign_lanes(m);
}

/* Overhead records (CUPTI's buffer requests, ...) are clipped to the window. */
static void clip_overhead(trace_model *m)
{
    size_t kept = 0;
    for (size_t i = 0; i < m->n_overhead; i++) {
        overhead_event o = m->overhead[i];
        if (m->has_window) {
            if (o.end_ns < m->window_begin_ns || o.start_ns > m->window_end_ns) {
                free(o.name);
                continue;
            }
            if (o.start_ns < m->window_begin_ns)
                o.start_ns = m->window_begin_ns;
            if (o.end_ns > m->window_end_ns)
                o.end_ns = m->window_end_ns;
        }
        m->overhead[kept++] = o;
    }
    m->n_overhead = kept;
}

static uint64_t earliest_start(const trace_model *m)
{
    if (m->has_window)
        return m->window_begin_ns;
    uint64_t t = UINT64_MAX;
    for (size_t i = 0; i < m->n_cpu; i++)
        t = m->cpu[i].start_ns < t ? m->cpu[i].start_ns : t;
    for (size_t i = 0; i < m->n_gpu; i++)
        t = m->gpu[i].rec.start_ns < t ? m->gpu[i].rec.start_ns : t;
    for (size_t i = 0; i < m->n_overhead; i++)
        t = m->overhead[i].start_ns < t ? m->overhead[i].start_ns : t;
    return t == UINT64_MAX ? 0 : t;
}

/* One table entry per event before grouping by name, as key_averages() does, with what the
 * order of the table needs: the CUDA total in integer nanoseconds (so that equal totals compare
 * equal however they were summed) and where the entry was first seen. */
typedef struct {
    trace_table_row row;
    uint64_t cuda_total_ns;
    uint64_t first_start_ns, first_end_ns; /* the group's first event, by start */
    size_t first_index;                    /* its index among the events, for equal spans */
} table_entry;

static int compare_rows_by_name(const trace_table_row *a, const trace_table_row *b)
{
    if (a->is_gpu != b->is_gpu)
        return a->is_gpu ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int compare_entries_by_name(const void *pa, const void *pb)
{
    const table_entry *a = pa, *b = pb;
    int by_name = compare_rows_by_name(&a->row, &b->row);
    if (by_name)
        return by_name;
    return (a->first_index > b->first_index) - (a->first_index < b->first_index);
}

/* Whether entry a was seen before entry b: PyTorch walks the events by start time, the longer
 * first where two start together. */
static int compare_first_seen(const table_entry *a, const table_entry *b)
{
    if (a->first_start_ns != b->first_start_ns)
        return a->first_start_ns < b->first_start_ns ? -1 : 1;
    if (a->first_end_ns != b->first_end_ns)
        return a->first_end_ns > b->first_end_ns ? -1 : 1;
    return (a->first_index > b->first_index) - (a->first_index < b->first_index);
}

/* By CUDA total, largest first; ties keep the order in which the rows were first seen, as
 * key_averages().table() does (a stable sort of rows kept in first-seen order). */
static int compare_entries_by_cuda_total(const void *pa, const void *pb)
{
    const table_entry *a = pa, *b = pb;
    if (a->cuda_total_ns != b->cuda_total_ns)
        return a->cuda_total_ns < b->cuda_total_ns ? 1 : -1;
    return compare_first_seen(a, b);
}

static int build_table(trace_model *m)
{
    size_t n = m->n_cpu + m->n_gpu;
    table_entry *entries = malloc((n + 1) * sizeof *entries);
    trace_table_row *rows = malloc((n + 1) * sizeof *rows);
    if (!entries || !rows) {
        free(entries);
        free(rows);
        return -1;
    }
    m->self_cpu_total_us = m->self_cuda_total_us = 0;
    for (size_t i = 0; i < m->n_cpu; i++) {
        const cpu_event *e = &m->cpu[i];
        double dur_us = (double)(e->end_ns - e->start_ns) / 1e3;
        double self_us = (double)(e->end_ns - e->start_ns - e->children_ns) / 1e3;
        const char *name = e->kind == CPU_RANGE && trace_is_step_range(e->name) ? STEP_TABLE_ROW
                                                                                : e->name;
        entries[i] = (table_entry){{name, false, 1, self_us, dur_us,
                                    (double)e->self_cuda_ns / 1e3,
                                    (double)e->cuda_total_ns / 1e3},
                                   e->cuda_total_ns, e->start_ns, e->end_ns, i};
        m->self_cpu_total_us += self_us;
    }
    for (size_t i = 0; i < m->n_gpu; i++) {
        const gpu_event *e = &m->gpu[i];
        uint64_t dur_ns = e->rec.end_ns - e->rec.start_ns;
        double dur_us = (double)dur_ns / 1e3;
        entries[m->n_cpu + i] = (table_entry){{e->name, true, 1, 0, 0, dur_us, dur_us}, dur_ns,
                                              e->rec.start_ns, e->rec.end_ns, m->n_cpu + i};
        m->self_cuda_total_us += dur_us;
    }
    qsort(entries, n, sizeof *entries, compare_entries_by_name);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++) {
        table_entry *g = groups > 0 ? &entries[groups - 1] : NULL;
        if (g && compare_rows_by_name(&g->row, &entries[i].row) == 0) {
            const table_entry *e = &entries[i];
            g->row.calls++;
            g->row.self_cpu_us += e->row.self_cpu_us;
            g->row.cpu_total_us += e->row.cpu_total_us;
            g->row.self_cuda_us += e->row.self_cuda_us;
            g->row.cuda_total_us += e->row.cuda_total_us;
            g->cuda_total_ns += e->cuda_total_ns;
            if (compare_first_seen(e, g) < 0) {
                g->first_start_ns = e->first_start_ns;
                g->first_end_ns = e->first_end_ns;
                g->first_index = e->first_index;
            }
        } else {
            entries[groups++] = entries[i];
        }
    }
    qsort(entries, groups, sizeof *entries, compare_entries_by_cuda_total);
    for (size_t i = 0; i < groups; i++)
        rows[i] = entries[i].row;
    free(entries);
    m->table = rows;
    m->n_table = groups;
    return 0;
}

static int compare_doubles(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static int compare_kernel_rows(const void *pa, const void *pb)
{
    const trace_kernel_row *a = pa, *b = pb;
    if (a->total_us != b->total_us)
        return a->total_us < b->total_us ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* Per kernel name: calls, total and the median/min/max of one call, from the table's grouping
 * plus each kernel's own durations for the median. */
static int build_kernel_rows(trace_model *m)
{
    size_t n_rows = 0;
    for (size_t r = 0; r < m->n_table; r++)
        n_rows += m->table[r].is_gpu;
    m->kernels = calloc(n_rows + 1, sizeof *m->kernels);
    double *durations = malloc((m->n_gpu + 1) * sizeof *durations);
    if (!m->kernels || !durations) {
        free(durations);
        return -1;
    }
    size_t k = 0;
    for (size_t r = 0; r < m->n_table; r++) {
        const trace_table_row *row = &m->table[r];
        if (!row->is_gpu)
            continue;
        size_t n = 0;
        for (size_t i = 0; i < m->n_gpu; i++)
            if (m->gpu[i].rec.kind == TRACE_GPU_KERNEL && strcmp(m->gpu[i].name, row->name) == 0)
                durations[n++] = (double)(m->gpu[i].rec.end_ns - m->gpu[i].rec.start_ns) / 1e3;
        if (n == 0)
            continue; /* a memcpy or memset row */
        qsort(durations, n, sizeof *durations, compare_doubles);
        trace_kernel_row *out = &m->kernels[k++];
        snprintf(out->name, sizeof out->name, "%s", row->name);
        out->calls = (int)n;
        out->total_us = row->cuda_total_us;
        out->median_us = n % 2 ? durations[n / 2] : (durations[n / 2 - 1] + durations[n / 2]) / 2;
        out->min_us = durations[0];
        out->max_us = durations[n - 1];
    }
    free(durations);
    m->n_kernels = k;
    qsort(m->kernels, k, sizeof *m->kernels, compare_kernel_rows);
    return 0;
}

bool trace_is_step_range(const char *name)
{
    return strncmp(name, STEP_RANGE_PREFIX, strlen(STEP_RANGE_PREFIX)) == 0;
}

/* The innermost range around launch call `launch` that is not a step, -1 if none. */
static ptrdiff_t user_op_of_launch(const trace_model *m, ptrdiff_t launch)
{
    ptrdiff_t op = launch >= 0 ? m->cpu[launch].op : -1;
    while (op >= 0 && trace_is_step_range(m->cpu[op].name))
        op = parent_op(m, op);
    return op;
}

typedef struct {
    const char *range, *kernel;
    double us;
} kernel_under_range;

static int compare_kernel_under_range(const void *pa, const void *pb)
{
    const kernel_under_range *a = pa, *b = pb;
    int by_range = strcmp(a->range, b->range);
    if (by_range != 0)
        return by_range;
    int by_kernel = strcmp(a->kernel, b->kernel);
    if (by_kernel != 0)
        return by_kernel;
    return (a->us > b->us) - (a->us < b->us);
}

static int compare_kernel_ops(const void *pa, const void *pb)
{
    const trace_op_kernel *a = pa, *b = pb;
    if (a->total_us != b->total_us)
        return a->total_us < b->total_us ? 1 : -1;
    int by_range = strcmp(a->range, b->range);
    return by_range ? by_range : strcmp(a->kernel, b->kernel);
}

/* Per (range, kernel) pair: calls, total and median. Sorting the kernels by range, name and
 * duration makes each pair one run of equal keys, its durations already in order. */
static int build_kernel_ops(trace_model *m)
{
    kernel_under_range *all = malloc((m->n_gpu + 1) * sizeof *all);
    m->kernel_ops = calloc(m->n_gpu + 1, sizeof *m->kernel_ops);
    if (!all || !m->kernel_ops) {
        free(all);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < m->n_gpu; i++) {
        const gpu_event *e = &m->gpu[i];
        if (e->rec.kind != TRACE_GPU_KERNEL)
            continue;
        ptrdiff_t op = user_op_of_launch(m, e->launch);
        all[n++] = (kernel_under_range){op >= 0 ? m->cpu[op].name : "", e->name,
                                        (double)(e->rec.end_ns - e->rec.start_ns) / 1e3};
    }
    qsort(all, n, sizeof *all, compare_kernel_under_range);
    size_t pairs = 0;
    for (size_t first = 0, last; first < n; first = last) {
        double total = 0;
        for (last = first; last < n && strcmp(all[last].range, all[first].range) == 0 &&
                           strcmp(all[last].kernel, all[first].kernel) == 0;
             last++)
            total += all[last].us;
        size_t calls = last - first;
        const kernel_under_range *mid = &all[first + calls / 2];
        trace_op_kernel *out = &m->kernel_ops[pairs++];
        snprintf(out->range, sizeof out->range, "%s", all[first].range);
        snprintf(out->kernel, sizeof out->kernel, "%s", all[first].kernel);
        out->calls = (int)calls;
        out->total_us = total;
        out->median_us = calls % 2 ? mid->us : (mid[-1].us + mid->us) / 2;
    }
    free(all);
    m->n_kernel_ops = pairs;
    qsort(m->kernel_ops, pairs, sizeof *m->kernel_ops, compare_kernel_ops);
    return 0;
}

int trace_model_build(trace_model *m)
{
    if (m->built)
        return 0;
    if (m->lost_records)
        fprintf(stderr, "trace: %zu records lost (out of memory); the trace is incomplete\n",
                m->lost_records);
    drop_api_calls_outside_window(m);
    if (filter_api_calls(m) != 0) {
        fprintf(stderr, "trace: out of memory while building the trace\n");
        return -1;
    }
    clip_overhead(m);
    if (nest_cpu_events(m) != 0 || link_gpu_work(m) != 0 || build_table(m) != 0 ||
        build_kernel_rows(m) != 0 || build_kernel_ops(m) != 0) {
        fprintf(stderr, "trace: out of memory while building the trace\n");
        return -1;
    }
    m->base_ns = earliest_start(m);
    m->built = true;
    return 0;
}

/* ---- queries ----------------------------------------------------------------------------- */

const trace_table_row *trace_model_table(const trace_model *m, size_t *count)
{
    *count = m->n_table;
    return m->table;
}

void trace_model_totals(const trace_model *m, double *self_cpu_us, double *self_cuda_us)
{
    *self_cpu_us = m->self_cpu_total_us;
    *self_cuda_us = m->self_cuda_total_us;
}

int trace_model_kernel_rows(const trace_model *m, trace_kernel_row *rows, int max)
{
    for (size_t i = 0; i < m->n_kernels && (int)i < max; i++)
        rows[i] = m->kernels[i];
    return (int)m->n_kernels;
}

int trace_model_kernel_ops(const trace_model *m, trace_op_kernel *rows, int max)
{
    for (size_t i = 0; i < m->n_kernel_ops && (int)i < max; i++)
        rows[i] = m->kernel_ops[i];
    return (int)m->n_kernel_ops;
}

static bool op_inside_range_named(const trace_model *m, ptrdiff_t op, const char *name)
{
    for (; op >= 0; op = parent_op(m, op))
        if (strcmp(m->cpu[op].name, name) == 0)
            return true;
    return false;
}

int trace_model_gpu_ops_in_range(const trace_model *m, const char *name, int *kernels,
                                 int *memcpys, int *memsets)
{
    bool range_seen = false;
    for (size_t i = 0; i < m->n_cpu && !range_seen; i++)
        range_seen = m->cpu[i].kind == CPU_RANGE && strcmp(m->cpu[i].name, name) == 0;
    if (!range_seen)
        return -1;
    int counts[3] = {0, 0, 0}; /* indexed by trace_gpu_kind */
    for (size_t i = 0; i < m->n_gpu; i++) {
        ptrdiff_t launch = m->gpu[i].launch;
        if (launch >= 0 && op_inside_range_named(m, m->cpu[launch].op, name))
            counts[m->gpu[i].rec.kind]++;
    }
    *kernels = counts[TRACE_GPU_KERNEL];
    *memcpys = counts[TRACE_GPU_MEMCPY];
    *memsets = counts[TRACE_GPU_MEMSET];
    return *kernels;
}
