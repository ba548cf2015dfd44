#include "program.h"
#include "prof.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#include "check.h"
#include "out.h"
#include "profiler/trace.h"

extern char **environ;
void launch_step_gate(const volatile int *release, int *timed_out, cudaStream_t stream);

/* The trace pass is told what it is by its first argument, --trace-pass-of=<pid of the
 * process that started it>: a flag that only its parent can give it. An environment variable
 * would pass on to every program the user starts from that shell, and an accidental copy of the
 * flag names a process that is not the caller's parent, so the flag parser rejects it. */
#define TRACE_PASS_FLAG "--trace-pass-of="

static int is_trace_pass;

double prof_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        program_error("out of host memory");
        exit(EXIT_BAD_INPUT);
    }
    return p;
}

void prof_init(prof_run *r, const schedule_t *sched, cudaStream_t stream)
{
    memset(r, 0, sizeof *r);
    r->sched = *sched;
    r->n_steps = sched->wait + sched->warmup_steps + sched->active;
    r->traced = prof_is_trace_pass();
    r->stream = stream;
    r->cpu_us = xcalloc((size_t)r->n_steps, sizeof *r->cpu_us);
    r->gpu_us = xcalloc((size_t)r->n_steps, sizeof *r->gpu_us);
    r->gated = xcalloc((size_t)r->n_steps, sizeof *r->gated);
    r->ev_start = xcalloc((size_t)r->n_steps, sizeof(cudaEvent_t));
    r->ev_stop = xcalloc((size_t)r->n_steps, sizeof(cudaEvent_t));
    for (int s = 0; s < r->n_steps; s++) {
        CUDA_CHECK(cudaEventCreate(&r->ev_start[s]));
        CUDA_CHECK(cudaEventCreate(&r->ev_stop[s]));
    }
    CUDA_CHECK(cudaHostAlloc((void **)&r->gate_release, sizeof(int), cudaHostAllocMapped));
    CUDA_CHECK(cudaHostAlloc((void **)&r->gate_timed_out, sizeof(int), cudaHostAllocMapped));
}

void prof_free(prof_run *r)
{
    for (int s = 0; s < r->n_steps; s++) {
        CUDA_CHECK(cudaEventDestroy(r->ev_start[s]));
        CUDA_CHECK(cudaEventDestroy(r->ev_stop[s]));
    }
    CUDA_CHECK(cudaFreeHost((void *)r->gate_release));
    CUDA_CHECK(cudaFreeHost(r->gate_timed_out));
    free(r->cpu_us);
    free(r->gpu_us);
    free(r->gated);
    free(r->ev_start);
    free(r->ev_stop);
}

void prof_run_schedule(prof_run *r, const schedule_t *sched, cudaStream_t stream, void (*fn)(void *), void *ctx)
{
    for (int i = 0; i < sched->warmup; i++) fn(ctx);
    prof_init(r, sched, stream);
    for (int s = 0; s < r->n_steps; s++) {
        prof_step_begin(r, s);
        fn(ctx);
        prof_step_end(r, s);
    }
}

phase_t prof_phase(const prof_run *r, int step)
{
    if (step < r->sched.wait) return PHASE_WAIT;
    if (step < r->sched.wait + r->sched.warmup_steps) return PHASE_WARMUP;
    return PHASE_ACTIVE;
}

const char *prof_phase_name(phase_t p)
{
    return p == PHASE_WAIT ? "wait" : p == PHASE_WARMUP ? "warmup" : "active";
}

void prof_range_push(const char *name)
{
    nvtxRangePushA(name);
    trace_range_push(name);
}

void prof_range_pop(void)
{
    trace_range_pop();
    nvtxRangePop();
}

void prof_step_begin(prof_run *r, int step)
{
    int first_active = r->sched.wait + r->sched.warmup_steps;
    if (r->traced && step == r->sched.wait) trace_activate(); /* warm-up steps absorb its cost */
    if (step == first_active) {
        /* nsys --capture-range=cudaProfilerApi records from here */
        CUDA_CHECK(cudaProfilerStart());
        if (r->traced) trace_record_begin();
    }
    char label[32];
    snprintf(label, sizeof label, "ProfilerStep#%d", step);
    prof_range_push(label);

    /* Under a tool launches are serialised: the gate would wait out its timeout every step. */
    r->gated[step] = !r->traced && step > 0 && !prof_under_tool();
    trace_hide_begin(); /* the step timer's own calls stay out of the trace */
    if (r->gated[step]) {
        *r->gate_release = 0;
        *r->gate_timed_out = 0;
        int *release_dev, *timed_out_dev;
        CUDA_CHECK(cudaHostGetDevicePointer((void **)&release_dev, (void *)r->gate_release, 0));
        CUDA_CHECK(cudaHostGetDevicePointer((void **)&timed_out_dev, r->gate_timed_out, 0));
        launch_step_gate(release_dev, timed_out_dev, r->stream);
        LAUNCH_CHECK();
    }
    CUDA_CHECK(cudaEventRecord(r->ev_start[step], r->stream));
    trace_hide_end();
    r->host_t0 = prof_now_us();
}

void prof_step_end(prof_run *r, int step)
{
    r->cpu_us[step] = prof_now_us() - r->host_t0;
    /* The step ends with its CPU work, as a step of torch.profiler does: the timer's wait for the
     * GPU comes after it, between the steps, where it is no step's self CPU time. */
    prof_range_pop();
    trace_hide_begin();
    CUDA_CHECK(cudaEventRecord(r->ev_stop[step], r->stream));
    if (r->gated[step]) {
        __atomic_store_n(r->gate_release, 1, __ATOMIC_SEQ_CST);
    }
    CUDA_CHECK(cudaEventSynchronize(r->ev_stop[step]));
    if (r->gated[step] && *r->gate_timed_out) r->gated[step] = 0;
    trace_hide_end();

    if (step == r->n_steps - 1) {
        CUDA_CHECK(cudaDeviceSynchronize());
        if (r->traced) trace_record_end();
        CUDA_CHECK(cudaProfilerStop());
        /* Every step's GPU time is read only now, past the profiler's capture range: a capture by
         * Nsight Systems then holds no cudaEventElapsedTime, whose CUDA 12.8 entry point an
         * importer older than that toolkit cannot read (it drops everything after it). */
        for (int s = 0; s < r->n_steps; s++) {
            float ms = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, r->ev_start[s], r->ev_stop[s]));
            r->gpu_us[s] = (double)ms * 1e3;
        }
    }
}

stats_t prof_active_stats(const prof_run *r, int which)
{
    int first = r->sched.wait + r->sched.warmup_steps;
    const double *x = which == 0 ? r->cpu_us : r->gpu_us;
    return stats_of(x + first, (size_t)(r->n_steps - first));
}

int prof_write_csv(const prof_run *r, const char *path)
{
    char tmp[1100];
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f) return -1;
    fprintf(f, "step,phase,cpu_us,gpu_us,gated\n");
    for (int s = 0; s < r->n_steps; s++)
        fprintf(f, "%d,%s,%.3f,%.3f,%d\n", s, prof_phase_name(prof_phase(r, s)), r->cpu_us[s],
                r->gpu_us[s], r->gated[s]);
    return out_commit(f, tmp, path);
}

/* Under a tool that owns CUPTI (compute-sanitizer, Nsight Compute) every launch is intercepted
 * and costs milliseconds; timing loops of hundreds of calls would take minutes and time nothing
 * real. There they run one call, once, and say so (once). */
int prof_under_tool(void)
{
    static int noted;
    const char *owner = trace_cupti_owner();
    if (owner && !noted) {
        printf("note: running under a tool (%s): timing loops cut to one call; "
               "the times printed are not measurements\n", owner);
        noted = 1;
    }
    return owner != NULL;
}

double prof_back_to_back_us(void (*fn)(void *), void *ctx, cudaStream_t stream, int n, int repeats)
{
    if (prof_under_tool()) n = repeats = 1;
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    double *per_call = xcalloc((size_t)repeats, sizeof *per_call);
    for (int rep = 0; rep < repeats; rep++) {
        CUDA_CHECK(cudaEventRecord(a, stream));
        for (int i = 0; i < n; i++) fn(ctx);
        CUDA_CHECK(cudaEventRecord(b, stream));
        CUDA_CHECK(cudaEventSynchronize(b));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        per_call[rep] = (double)ms * 1e3 / n;
    }
    double median = stats_of(per_call, (size_t)repeats).median;
    free(per_call);
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    return median;
}

double prof_back_to_back_clocked_us(void (*fn)(void *), void *ctx, cudaStream_t stream, int n, int repeats,
                                    clocks_summary_t *clk)
{
    clocks_start(NULL);
    const double us = prof_back_to_back_us(fn, ctx, stream, n, repeats);
    clocks_stop(clk);
    return us;
}

void prof_graph_capture(prof_graph *g, void (*fn)(void *), void *ctx, cudaStream_t stream)
{
    g->stream = stream;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    fn(ctx);
    CUDA_CHECK(cudaStreamEndCapture(stream, &g->graph));
    CUDA_CHECK(cudaGraphInstantiate(&g->exec, g->graph, 0));
    for (int i = 0; i < 3; i++) prof_graph_replay(g); /* the first replay uploads the graph */
}

void prof_graph_replay(void *graph)
{
    prof_graph *g = graph;
    CUDA_CHECK(cudaGraphLaunch(g->exec, g->stream));
}

void prof_graph_free(prof_graph *g)
{
    CUDA_CHECK(cudaGraphExecDestroy(g->exec));
    CUDA_CHECK(cudaGraphDestroy(g->graph));
}

double prof_graph_back_to_back_us(void (*fn)(void *), void *ctx, cudaStream_t stream, int n, int repeats)
{
    prof_graph g;
    prof_graph_capture(&g, fn, ctx, stream);
    double us = prof_back_to_back_us(prof_graph_replay, &g, stream, n, repeats);
    prof_graph_free(&g);
    return us;
}

void prof_take_trace_pass_flag(int *argc, char **argv)
{
    if (*argc < 2 || strncmp(argv[1], TRACE_PASS_FLAG, strlen(TRACE_PASS_FLAG)) != 0) return;
    char *end = NULL;
    long parent = strtol(argv[1] + strlen(TRACE_PASS_FLAG), &end, 10);
    if (!end || *end != '\0' || parent != (long)getppid()) return; /* left for the flag parser */
    is_trace_pass = 1;
    for (int i = 1; i < *argc; i++) argv[i] = argv[i + 1]; /* argv[argc] is NULL */
    (*argc)--;
}

int prof_is_trace_pass(void)
{
    return is_trace_pass;
}

int prof_trace_pass_open(void)
{
    if (!prof_is_trace_pass()) return 1;
    return trace_open();
}

void prof_spawn_trace_pass(char *const *argv)
{
    const char *owner = trace_cupti_owner(); /* a second process would only be traced by it again */
    if (owner) {
        printf("trace: CUPTI is in use by another tool (%s); no trace pass\n", owner);
        return;
    }
    int n = 0;
    while (argv[n]) n++;
    char **child = xcalloc((size_t)n + 2, sizeof *child);
    char flag[64];
    snprintf(flag, sizeof flag, TRACE_PASS_FLAG "%ld", (long)getpid());
    child[0] = argv[0];
    child[1] = flag;
    for (int i = 1; i < n; i++) child[i + 1] = argv[i];
    fflush(stdout);
    fflush(stderr);
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child, environ);
    free(child);
    if (rc != 0) {
        printf("trace: could not start the trace pass: %s\n", strerror(rc));
        return;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        printf("trace: the trace pass failed (%s %d); the timed results above stand\n",
               WIFEXITED(status) ? "exit" : "signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}
