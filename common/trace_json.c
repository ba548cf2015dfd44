/* trace_json.c: the trace model, its PyTorch-schema JSON timeline and its key_averages() table.
 *
 * No CUDA here: trace_cupti.c feeds it from CUPTI, tests/test_trace.c from synthetic records.
 */
#include "trace_model.h"

#include "out.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* From libstdc++ (the programs link -lstdc++): turns "_Z3addPfi" into "add(float*, int)". */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *length, int *status);

/* The steps' ranges, "ProfilerStep#2", as torch.profiler names them. */
#define STEP_RANGE_PREFIX "ProfilerStep#"

typedef enum { CPU_RANGE, CPU_RUNTIME, CPU_DRIVER } cpu_kind;

/* A range of ours or an API call: both are slices on a CPU thread and nest there. */
typedef struct {
    cpu_kind kind;
    char *name;
    uint32_t tid, cbid, correlation;
    uint64_t start_ns, end_ns;
    /* set by build */
    ptrdiff_t parent;    /* the CPU event enclosing this one on its thread, -1 at top level */
    ptrdiff_t op;        /* the innermost range that is or encloses this event, -1 if none */
    int external_id;     /* ranges: 1, 2, ... in time order, PyTorch's "External id" */
    uint64_t children_ns;
    uint64_t self_cuda_ns, cuda_total_ns;
    bool launched_gpu_work;
} cpu_event;

typedef struct {
    trace_gpu_activity rec; /* rec.name is `name` */
    char *name;
    ptrdiff_t launch; /* the API call with the same correlation id, -1 if not recorded */
} gpu_event;

typedef struct {
    char *name;
    uint64_t start_ns, end_ns;
} overhead_event;

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
    size_t lost_records;

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
};

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
    m->cpu[m->n_cpu++] = (cpu_event){
        .kind = kind, .name = copy, .tid = tid, .start_ns = start_ns,
        .end_ns = end_ns < start_ns ? start_ns : end_ns, .parent = -1, .op = -1};
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
 * the longer first, and a range before an API call). */
static int compare_cpu_events(const void *pa, const void *pb)
{
    const cpu_event *a = pa, *b = pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    if (a->end_ns != b->end_ns)
        return a->end_ns > b->end_ns ? -1 : 1;
    return (a->kind != CPU_RANGE) - (b->kind != CPU_RANGE);
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

/* The range enclosing range `op`, -1 at the top. */
static ptrdiff_t parent_op(const trace_model *m, ptrdiff_t op)
{
    ptrdiff_t parent = m->cpu[op].parent;
    return parent >= 0 ? m->cpu[parent].op : -1;
}

/* Links each GPU activity to its launch call; GPU work whose launch was not recorded is kept
 * only if it ran inside the window. Then the launch's ranges get its GPU time: the innermost as
 * self CUDA, every enclosing one as CUDA total (PyTorch attributes kernels to the op, not to
 * the cudaLaunchKernel row, which shows no CUDA time). */
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
        for (ptrdiff_t op = launch->op; op >= 0; op = parent_op(m, op))
            m->cpu[op].cuda_total_ns += dur;
    }
    return 0;
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

/* One table entry per event before grouping by name, as key_averages() does. */
static int compare_rows_by_name(const void *pa, const void *pb)
{
    const trace_table_row *a = pa, *b = pb;
    if (a->is_gpu != b->is_gpu)
        return a->is_gpu ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int compare_rows_by_cuda_total(const void *pa, const void *pb)
{
    const trace_table_row *a = pa, *b = pb;
    if (a->cuda_total_us != b->cuda_total_us)
        return a->cuda_total_us < b->cuda_total_us ? 1 : -1;
    if (a->cpu_total_us != b->cpu_total_us)
        return a->cpu_total_us < b->cpu_total_us ? 1 : -1;
    return compare_rows_by_name(a, b);
}

static int build_table(trace_model *m)
{
    size_t n = m->n_cpu + m->n_gpu;
    trace_table_row *rows = malloc((n + 1) * sizeof *rows);
    if (!rows)
        return -1;
    m->self_cpu_total_us = m->self_cuda_total_us = 0;
    for (size_t i = 0; i < m->n_cpu; i++) {
        const cpu_event *e = &m->cpu[i];
        double dur_us = (double)(e->end_ns - e->start_ns) / 1e3;
        double self_us = (double)(e->end_ns - e->start_ns - e->children_ns) / 1e3;
        rows[i] = (trace_table_row){e->name, false, 1, self_us, dur_us,
                                    (double)e->self_cuda_ns / 1e3,
                                    (double)e->cuda_total_ns / 1e3};
        m->self_cpu_total_us += self_us;
    }
    for (size_t i = 0; i < m->n_gpu; i++) {
        const gpu_event *e = &m->gpu[i];
        double dur_us = (double)(e->rec.end_ns - e->rec.start_ns) / 1e3;
        rows[m->n_cpu + i] = (trace_table_row){e->name, true, 1, 0, 0, dur_us, dur_us};
        m->self_cuda_total_us += dur_us;
    }
    qsort(rows, n, sizeof *rows, compare_rows_by_name);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++) {
        if (groups > 0 && compare_rows_by_name(&rows[groups - 1], &rows[i]) == 0) {
            trace_table_row *g = &rows[groups - 1];
            g->calls++;
            g->self_cpu_us += rows[i].self_cpu_us;
            g->cpu_total_us += rows[i].cpu_total_us;
            g->self_cuda_us += rows[i].self_cuda_us;
            g->cuda_total_us += rows[i].cuda_total_us;
        } else {
            rows[groups++] = rows[i];
        }
    }
    qsort(rows, groups, sizeof *rows, compare_rows_by_cuda_total);
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

static bool is_step_range(const char *name)
{
    return strncmp(name, STEP_RANGE_PREFIX, strlen(STEP_RANGE_PREFIX)) == 0;
}

/* The innermost range around launch call `launch` that is not a step, -1 if none. */
static ptrdiff_t user_op_of_launch(const trace_model *m, ptrdiff_t launch)
{
    ptrdiff_t op = launch >= 0 ? m->cpu[launch].op : -1;
    while (op >= 0 && is_step_range(m->cpu[op].name))
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

/* ---- the table ------------------------------------------------------------------------------ */

void trace_format_time(double us, char *buf, size_t size)
{
    if (us >= 1e6)
        snprintf(buf, size, "%.3fs", us / 1e6);
    else if (us >= 1e3)
        snprintf(buf, size, "%.3fms", us / 1e3);
    else
        snprintf(buf, size, "%.3fus", us);
}

static void format_share(double us, double total_us, char *buf, size_t size)
{
    if (total_us == 0)
        snprintf(buf, size, "NaN");
    else
        snprintf(buf, size, "%.2f%%", us * 100.0 / total_us);
}

enum { NAME_WIDTH_MAX = 55, COLUMN_WIDTH = 12, N_COLUMNS = 11 };

static void print_separator(FILE *out, int name_width)
{
    for (int c = 0; c < N_COLUMNS; c++)
        fprintf(out, "%.*s  ", c == 0 ? name_width : COLUMN_WIDTH,
                "------------------------------------------------------------------");
    fputc('\n', out);
}

/* Cells right-aligned, two spaces apart, as PyTorch's _build_table lays them out. */
static void print_cells(FILE *out, int name_width, const char *const cells[N_COLUMNS])
{
    for (int c = 0; c < N_COLUMNS; c++)
        fprintf(out, "%*s  ", c == 0 ? name_width : COLUMN_WIDTH, cells[c]);
    fputc('\n', out);
}

static void print_row(FILE *out, int name_width, const trace_table_row *r, double cpu_total,
                      double cuda_total)
{
    char name[NAME_WIDTH_MAX + 1], text[10][32];
    if (strlen(r->name) >= NAME_WIDTH_MAX - 3)
        snprintf(name, sizeof name, "%.*s...", NAME_WIDTH_MAX - 3, r->name);
    else
        snprintf(name, sizeof name, "%s", r->name);
    format_share(r->self_cpu_us, cpu_total, text[0], sizeof text[0]);
    trace_format_time(r->self_cpu_us, text[1], sizeof text[1]);
    format_share(r->cpu_total_us, cpu_total, text[2], sizeof text[2]);
    trace_format_time(r->cpu_total_us, text[3], sizeof text[3]);
    trace_format_time(r->cpu_total_us / r->calls, text[4], sizeof text[4]);
    trace_format_time(r->self_cuda_us, text[5], sizeof text[5]);
    format_share(r->self_cuda_us, cuda_total, text[6], sizeof text[6]);
    trace_format_time(r->cuda_total_us, text[7], sizeof text[7]);
    trace_format_time(r->cuda_total_us / r->calls, text[8], sizeof text[8]);
    snprintf(text[9], sizeof text[9], "%d", r->calls);
    const char *const cells[N_COLUMNS] = {name,    text[0], text[1], text[2], text[3], text[4],
                                          text[5], text[6], text[7], text[8], text[9]};
    print_cells(out, name_width, cells);
}

void trace_model_print_table(const trace_model *m, FILE *out, int max_rows)
{
    size_t n = max_rows < 0 || (size_t)max_rows > m->n_table ? m->n_table : (size_t)max_rows;
    int name_width = 4;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(m->table[i].name) + 4;
        if ((int)len > name_width)
            name_width = len > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (int)len;
    }
    static const char *const headers[N_COLUMNS] = {
        "Name",      "Self CPU %",  "Self CPU",   "CPU total %",   "CPU total", "CPU time avg",
        "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg", "# of Calls"};
    print_separator(out, name_width);
    print_cells(out, name_width, headers);
    print_separator(out, name_width);
    for (size_t i = 0; i < n; i++)
        print_row(out, name_width, &m->table[i], m->self_cpu_total_us, m->self_cuda_total_us);
    print_separator(out, name_width);
    char total[32];
    trace_format_time(m->self_cpu_total_us, total, sizeof total);
    fprintf(out, "Self CPU time total: %s\n", total);
    trace_format_time(m->self_cuda_total_us, total, sizeof total);
    fprintf(out, "Self CUDA time total: %s\n", total);
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
