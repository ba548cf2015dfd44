/* trace_cupti.c: trace.h on top of CUPTI's Activity API.
 *
 * CUPTI hands us buffers of activity records (kernels, copies, memsets, runtime and driver API
 * calls, its own overhead) on a thread of its own; we keep the buffers and read them on the
 * caller's thread at trace_record_end, into the model of trace_model.c. Our CPU ranges are
 * timed with cuptiGetTimestamp, so they share one clock with the records.
 */
#define _GNU_SOURCE /* syscall(SYS_gettid), program_invocation_short_name, dl_iterate_phdr */

#include "trace.h"
#include "trace_model.h"
#include "trace_occupancy.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum {
    BUFFER_BYTES = 8 << 20, /* one activity buffer; CUPTI asks for more as it fills them */
    BUFFER_ALIGN = 8,       /* CUPTI's requirement for activity buffers */
    MAX_RANGE_DEPTH = 64,
    RANGE_NAME_BYTES = 128,
};

/* What the timeline and the table show. SYNCHRONIZATION is left out: the cudaDeviceSynchronize
 * calls already appear as runtime API slices. */
static const CUpti_ActivityKind traced_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_OVERHEAD,
};
enum { N_TRACED_KINDS = sizeof traced_kinds / sizeof traced_kinds[0] };

/* The newest record version of each kind that the toolkit's CUPTI writes, which is the one it
 * hands us. Every field read below exists in each of them. */
#if CUDA_VERSION >= 13000
typedef CUpti_ActivityKernel10 kernel_record;
#else
typedef CUpti_ActivityKernel9 kernel_record; /* CUDA 12.0 to 12.9 */
#endif
#if CUDA_VERSION >= 12080
typedef CUpti_ActivityMemcpy6 memcpy_record;
#else
typedef CUpti_ActivityMemcpy5 memcpy_record; /* CUDA 12.0 to 12.7 */
#endif
typedef CUpti_ActivityMemset4 memset_record; /* CUDA 12.0 on */
/* overheadKind, start and end sit at the same offsets in every version of the overhead record,
 * and the first version exists in every toolkit. */
typedef CUpti_ActivityOverhead overhead_record;

typedef struct completed_buffer {
    struct completed_buffer *next;
    uint8_t *data;
    size_t valid_bytes;
} completed_buffer;

typedef struct {
    char name[RANGE_NAME_BYTES];
    uint64_t start_ns;
    bool recorded; /* pushed while recording; ranges pushed before still need their pop */
} open_range;

static struct {
    bool open, active, recording, recorded, built; /* active: CUPTI collecting; built: a trace */
    CUpti_SubscriberHandle subscriber;
    trace_model *model;
    uint32_t tid;
    uint64_t begin_ns;
    open_range ranges[MAX_RANGE_DEPTH];
    int depth;
    bool all_api_calls;
    uint64_t hidden_since_ns;
    int hidden_depth;
    /* Written by CUPTI's thread in buffer_completed, read by ours. */
    pthread_mutex_t lock;
    completed_buffer *completed;
    size_t dropped;
} tracer = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The CUPTI_CHECK of this file: a failed call costs the trace, never the run. One line says
 * which call failed and what follows from it. */
static bool cupti_ok(CUptiResult result, const char *function, const char *consequence)
{
    if (result == CUPTI_SUCCESS)
        return true;
    const char *why = NULL;
    if (cuptiGetResultString(result, &why) != CUPTI_SUCCESS || !why)
        why = "unknown CUPTI error";
    const char *what = result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                           ? "CUPTI is in use by another tool"
                           : "CUPTI failed";
    printf("trace: %s (%s: %s); %s\n", what, function, why, consequence);
    return false;
}

#define RUN_WITHOUT_TRACE "running without our trace"
#define CUPTI_OK(function, ...) \
    cupti_ok(function(__VA_ARGS__), #function, RUN_WITHOUT_TRACE)

static uint64_t now_ns(void)
{
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
}

/* ---- CUPTI's buffer callbacks (on CUPTI's thread) --------------------------------------- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    /* Without a buffer CUPTI drops records and counts them; we report the count. */
    *buffer = aligned_alloc(BUFFER_ALIGN, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid_bytes)
{
    (void)size;
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
    completed_buffer *node = valid_bytes ? malloc(sizeof *node) : NULL;
    pthread_mutex_lock(&tracer.lock);
    tracer.dropped += dropped;
    if (node) {
        *node = (completed_buffer){tracer.completed, buffer, valid_bytes};
        tracer.completed = node;
    }
    pthread_mutex_unlock(&tracer.lock);
    if (!node)
        free(buffer);
}

/* Subscribing is how CUPTI tells us whether another tool holds it; we need no callbacks. */
static void CUPTIAPI ignore_callback(void *userdata, CUpti_CallbackDomain domain,
                                     CUpti_CallbackId cbid, const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

/* ---- records into the model --------------------------------------------------------------- */

static const char *memory_kind_name(unsigned kind)
{
    static const char *const names[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                        "Array",   "Managed",  "Device Static", "Managed Static"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "Unknown";
}

static const char *copy_kind_name(unsigned kind)
{
    static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "Unknown";
}

static const char *overhead_name(CUpti_ActivityOverheadKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "Driver Compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "Buffer Flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "Instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "Resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
        return "Runtime Triggered Module Loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "Lazy Function Loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "Command Buffer Full";
#if CUDA_VERSION >= 12060
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "Activity Buffer Request";
#endif
#if CUDA_VERSION >= 12080
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "UVM Activity Init";
#endif
    default: return "Unknown";
    }
}

/* CUPTI names API calls with their version, "cudaLaunchKernel_v7000"; PyTorch shows them
 * without it, and so do we. */
static void api_name(CUpti_CallbackDomain domain, uint32_t cbid, char *buf, size_t size)
{
    const char *name = NULL;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) {
        snprintf(buf, size, "%s %u", domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver call"
                                                                            : "runtime call",
                 cbid);
        return;
    }
    snprintf(buf, size, "%s", name);
    char *suffix = strrchr(buf, '_');
    if (suffix && suffix[1] == 'v' && suffix[2] && strspn(suffix + 2, "0123456789") ==
                                                       strlen(suffix + 2))
        *suffix = '\0';
}

static void add_api_record(const CUpti_ActivityAPI *r)
{
    bool driver = r->kind == CUPTI_ACTIVITY_KIND_DRIVER;
    char name[128];
    api_name(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, r->cbid, name,
             sizeof name);
    trace_api_call call = {driver ? TRACE_API_DRIVER : TRACE_API_RUNTIME,
                           name, r->cbid, r->threadId, r->correlationId, r->start, r->end};
    trace_model_add_api(tracer.model, &call);
}

static void add_kernel_record(const kernel_record *r)
{
    int threads = (int)(r->blockX * r->blockY * r->blockZ);
    trace_gpu_activity kernel = {
        .kind = TRACE_GPU_KERNEL, .name = r->name ? r->name : "unnamed kernel",
        .start_ns = r->start, .end_ns = r->end, .device = r->deviceId,
        .context = r->contextId, .stream = r->streamId, .correlation = r->correlationId,
        .grid = {r->gridX, r->gridY, r->gridZ}, .block = {r->blockX, r->blockY, r->blockZ},
        .registers_per_thread = r->registersPerThread,
        .static_shared = r->staticSharedMemory, .dynamic_shared = r->dynamicSharedMemory,
        .occupancy_blocks_per_sm = trace_occupancy_blocks_per_sm(
            (int)r->deviceId, r->registersPerThread, r->staticSharedMemory,
            r->dynamicSharedMemory, threads),
        .queued_ns = r->queued == CUPTI_TIMESTAMP_UNKNOWN ? 0 : r->queued};
    trace_model_add_gpu(tracer.model, &kernel);
}

static void add_memcpy_record(const memcpy_record *r)
{
    char name[96];
    snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", copy_kind_name(r->copyKind),
             memory_kind_name(r->srcKind), memory_kind_name(r->dstKind));
    trace_gpu_activity copy = {
        .kind = TRACE_GPU_MEMCPY, .name = name, .start_ns = r->start, .end_ns = r->end,
        .device = r->deviceId, .context = r->contextId, .stream = r->streamId,
        .correlation = r->correlationId, .bytes = r->bytes};
    trace_model_add_gpu(tracer.model, &copy);
}

static void add_memset_record(const memset_record *r)
{
    char name[64];
    snprintf(name, sizeof name, "Memset (%s)", memory_kind_name(r->memoryKind));
    trace_gpu_activity set = {
        .kind = TRACE_GPU_MEMSET, .name = name, .start_ns = r->start, .end_ns = r->end,
        .device = r->deviceId, .context = r->contextId, .stream = r->streamId,
        .correlation = r->correlationId, .bytes = r->bytes};
    trace_model_add_gpu(tracer.model, &set);
}

static void add_record(const CUpti_Activity *record)
{
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        add_kernel_record((const kernel_record *)record);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        add_memcpy_record((const memcpy_record *)record);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        add_memset_record((const memset_record *)record);
        break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        add_api_record((const CUpti_ActivityAPI *)record);
        break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const overhead_record *r = (const overhead_record *)record;
        trace_model_add_overhead(tracer.model, overhead_name(r->overheadKind), r->start, r->end);
        break;
    }
    default:
        break;
    }
}

/* Takes the buffers CUPTI completed, adds their records to the model and frees them. */
static void read_completed_buffers(void)
{
    pthread_mutex_lock(&tracer.lock);
    completed_buffer *list = tracer.completed;
    tracer.completed = NULL;
    pthread_mutex_unlock(&tracer.lock);
    while (list) {
        CUpti_Activity *record = NULL;
        CUptiResult result;
        while ((result = cuptiActivityGetNextRecord(list->data, list->valid_bytes, &record)) ==
               CUPTI_SUCCESS)
            add_record(record);
        if (result != CUPTI_ERROR_MAX_LIMIT_REACHED)
            cupti_ok(result, "cuptiActivityGetNextRecord", "the trace is incomplete");
        completed_buffer *next = list->next;
        free(list->data);
        free(list);
        list = next;
    }
}

static void add_devices(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess)
        return;
    for (int id = 0; id < count; id++) {
        struct cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, id) != cudaSuccess)
            continue;
        trace_device_props props = {
            .id = id, .total_global_mem = p.totalGlobalMem, .compute_major = p.major,
            .compute_minor = p.minor, .max_threads_per_block = p.maxThreadsPerBlock,
            .max_threads_per_sm = p.maxThreadsPerMultiProcessor,
            .max_blocks_per_sm = p.maxBlocksPerMultiProcessor, .regs_per_block = p.regsPerBlock,
            .regs_per_sm = p.regsPerMultiprocessor, .warp_size = p.warpSize,
            .num_sms = p.multiProcessorCount, .shared_mem_per_block = (int)p.sharedMemPerBlock,
            .shared_mem_per_block_optin = (int)p.sharedMemPerBlockOptin,
            .shared_mem_per_sm = (int)p.sharedMemPerMultiprocessor};
        snprintf(props.name, sizeof props.name, "%s", p.name);
        trace_model_add_device(tracer.model, &props);
    }
}

static void set_versions(void)
{
    uint32_t cupti = 0;
    int driver = 0, runtime = 0;
    cuptiGetVersion(&cupti);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    trace_model_set_versions(tracer.model, (int)cupti, driver, runtime);
}

static void disable_kinds(size_t count)
{
    for (size_t i = 0; i < count; i++)
        cuptiActivityDisable(traced_kinds[i]);
}

/* ---- trace.h -------------------------------------------------------------------------------- */
/* Called from the program's main thread only: ranges carry that thread's id, and the state
 * below is shared with CUPTI's thread only through `lock`. */

/* compute-sanitizer 2025.3 and Nsight Compute do not leave CUDA_INJECTION64_PATH in the program's
 * environment: they load their libraries into it. A loaded object whose path names one of them
 * gives them away. */
static const char *const tool_library_marks[] = {"sanitizer", "nsight-compute", "TargetInjection", NULL};

static int find_tool_library(struct dl_phdr_info *info, size_t size, void *found)
{
    (void)size;
    for (int i = 0; info->dlpi_name && tool_library_marks[i]; i++)
        if (strstr(info->dlpi_name, tool_library_marks[i])) {
            *(const char **)found = info->dlpi_name;
            return 1;
        }
    return 0;
}

const char *trace_cupti_owner(void)
{
    const char *injection = getenv("CUDA_INJECTION64_PATH");
    if (injection && *injection) return injection;
    const char *library = NULL;
    dl_iterate_phdr(find_tool_library, &library);
    return library;
}

bool trace_open(void)
{
    if (tracer.open)
        return true;
    const char *injection = trace_cupti_owner();
    if (injection) {
        printf("trace: CUPTI is in use by another tool (%s); "
               RUN_WITHOUT_TRACE "\n", injection);
        return false;
    }
    if (!CUPTI_OK(cuptiSubscribe, &tracer.subscriber, ignore_callback, NULL))
        return false;
    /* SYSTEM thread ids are gettid(), the ids our ranges carry: API calls and ranges then
     * share a lane. */
    if (!CUPTI_OK(cuptiSetThreadIdType, CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) ||
        !CUPTI_OK(cuptiActivityRegisterCallbacks, buffer_requested, buffer_completed)) {
        cuptiUnsubscribe(tracer.subscriber);
        return false;
    }
    tracer.model = trace_model_new(program_invocation_short_name, (int)getpid());
    if (!tracer.model) {
        printf("trace: out of memory; " RUN_WITHOUT_TRACE "\n");
        cuptiUnsubscribe(tracer.subscriber);
        return false;
    }
    tracer.tid = (uint32_t)syscall(SYS_gettid);
    tracer.open = true;
    return true;
}

/* Turns CUPTI's activity collection on. Its first records make CUPTI allocate buffers (PyTorch's
 * traces show an "Activity Buffer Request" record; ours, even with --warmup-steps 0, hold none):
 * the window opens after the schedule's warm-up step, as torch.profiler's does. */
void trace_activate(void)
{
    if (!tracer.open || tracer.active || tracer.recorded)
        return;
    size_t enabled = 0;
    while (enabled < N_TRACED_KINDS && CUPTI_OK(cuptiActivityEnable, traced_kinds[enabled]))
        enabled++;
    if (enabled < N_TRACED_KINDS) {
        disable_kinds(enabled);
        tracer.recorded = true; /* nothing to write; trace_write says so */
        return;
    }
    tracer.active = true;
}

/* One window per run: a second begin after an end is ignored. */
void trace_record_begin(void)
{
    if (!tracer.open || tracer.recording || tracer.recorded)
        return;
    trace_activate();
    if (!tracer.active)
        return;
    tracer.begin_ns = now_ns();
    tracer.recording = true;
}

void trace_range_push(const char *name)
{
    if (!tracer.open)
        return;
    if (tracer.depth < MAX_RANGE_DEPTH) {
        open_range *r = &tracer.ranges[tracer.depth];
        r->recorded = tracer.recording;
        if (r->recorded) {
            snprintf(r->name, sizeof r->name, "%s", name);
            r->start_ns = now_ns();
        }
    }
    tracer.depth++;
}

void trace_range_pop(void)
{
    if (!tracer.open || tracer.depth == 0)
        return;
    tracer.depth--;
    if (tracer.depth >= MAX_RANGE_DEPTH)
        return;
    open_range *r = &tracer.ranges[tracer.depth];
    if (r->recorded)
        trace_model_add_range(tracer.model, r->name, tracer.tid, r->start_ns, now_ns());
    r->recorded = false;
}

void trace_set_api_filter(int all)
{
    tracer.all_api_calls = all != 0;
}

void trace_hide_begin(void)
{
    if (tracer.open && tracer.recording && tracer.hidden_depth++ == 0)
        tracer.hidden_since_ns = now_ns();
}

void trace_hide_end(void)
{
    if (!tracer.open || !tracer.recording || tracer.hidden_depth == 0)
        return;
    if (--tracer.hidden_depth == 0)
        trace_model_add_hidden_span(tracer.model, tracer.tid, tracer.hidden_since_ns, now_ns());
}

/* The caller has synchronised the device, so every activity of the window is complete. */
void trace_record_end(void)
{
    if (!tracer.recording)
        return;
    uint64_t end_ns = now_ns();
    /* Ranges still open end with the window, so the timeline stays nested. */
    for (int d = 0; d < tracer.depth && d < MAX_RANGE_DEPTH; d++) {
        open_range *r = &tracer.ranges[d];
        if (r->recorded)
            trace_model_add_range(tracer.model, r->name, tracer.tid, r->start_ns, end_ns);
        r->recorded = false;
    }
    tracer.recording = false;
    tracer.recorded = true;
    /* Disable first, so that nothing new lands in the buffers while they are flushed. */
    disable_kinds(N_TRACED_KINDS);
    tracer.active = false;
    cupti_ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll",
             "the trace is incomplete");
    read_completed_buffers();
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS)
        tracer.dropped += dropped;
    if (tracer.dropped)
        printf("trace: CUPTI dropped %zu records (activity buffers full); the trace is "
               "incomplete\n", tracer.dropped);
    if (tracer.hidden_depth > 0)
        trace_model_add_hidden_span(tracer.model, tracer.tid, tracer.hidden_since_ns, end_ns);
    tracer.hidden_depth = 0;
    trace_model_set_window(tracer.model, tracer.begin_ns, end_ns);
    trace_model_set_api_filter(tracer.model, tracer.all_api_calls);
    add_devices();
    set_versions();
    tracer.built = trace_model_build(tracer.model) == 0;
}

int trace_write(const char *base, int top_rows)
{
    if (!tracer.built) {
        fprintf(stderr, "trace: nothing recorded, no trace written for %s\n", base);
        return -1;
    }
    return trace_model_write(tracer.model, base, top_rows);
}

void trace_close(void)
{
    if (!tracer.open)
        return;
    if (tracer.active) {
        disable_kinds(N_TRACED_KINDS);
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    pthread_mutex_lock(&tracer.lock);
    completed_buffer *list = tracer.completed;
    tracer.completed = NULL;
    pthread_mutex_unlock(&tracer.lock);
    while (list) {
        completed_buffer *next = list->next;
        free(list->data);
        free(list);
        list = next;
    }
    cuptiUnsubscribe(tracer.subscriber);
    trace_model_free(tracer.model);
    tracer.model = NULL;
    tracer.open = tracer.recording = tracer.recorded = tracer.built = false;
    tracer.depth = tracer.hidden_depth = 0;
    tracer.dropped = 0;
}

int trace_kernel_rows(trace_kernel_row *rows, int max)
{
    return tracer.built ? trace_model_kernel_rows(tracer.model, rows, max) : 0;
}

int trace_kernel_ops(trace_op_kernel *rows, int max)
{
    return tracer.built ? trace_model_kernel_ops(tracer.model, rows, max) : 0;
}

int trace_gpu_ops_in_range(const char *name, int *kernels, int *memcpys, int *memsets)
{
    if (!tracer.built)
        return -1;
    return trace_model_gpu_ops_in_range(tracer.model, name, kernels, memcpys, memsets);
}

size_t trace_dropped_records(void)
{
    return tracer.dropped;
}
