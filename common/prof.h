/* prof.h: the articles' step schedule, NVTX ranges, and per-step timing.
 *
 * A stage runs its forward inside this loop (prof_run_schedule, which run_steps in run.h calls,
 * after the --warmup untimed forwards):
 *
 *   prof_run run;
 *   prof_init(&run, &args.sched, stream);
 *   for (int s = 0; s < run.n_steps; s++) {
 *       prof_step_begin(&run, s);   NVTX "ProfilerStep#s"; host clock and CUDA event start
 *       forward(&model);            the lesson; it names its ranges with prof_range_push/pop
 *       prof_step_end(&run, s);     host clock stops: CPU dispatch time; the step's range
 *                                   ends; then its event: GPU time
 *   }
 *
 * Two numbers per step:
 *   cpu_us  host time to issue the step's work (the calls return before the GPU finishes);
 *   gpu_us  device time from the step's first to last operation. In timed passes the GPU is
 *           held back by a gate kernel until the whole step is issued, so gpu_us measures the
 *           work alone, not the gaps left by a slow CPU. The first step is never gated: lazy
 *           module loading inside it may need the GPU idle; its gpu_us includes those gaps.
 *
 * Two passes per run: this process times the schedule without any tracing; then
 * prof_spawn_trace_pass() runs the same program again in a fresh process (cold as well) with
 * our CUPTI trace on, so tracing never distorts the figures the report quotes.
 */
#ifndef PROF_H
#define PROF_H

#include <cuda_runtime.h>

#include "clocks.h"
#include "schedule.h"
#include "stats.h"

typedef enum { PHASE_WAIT, PHASE_WARMUP, PHASE_ACTIVE } phase_t;

typedef struct {
    schedule_t sched;
    int n_steps;
    int traced; /* this process is the trace pass */
    cudaStream_t stream;
    double *cpu_us, *gpu_us;
    int *gated; /* 1 when gpu_us excludes CPU gaps (see above) */
    cudaEvent_t *ev_start, *ev_stop;
    volatile int *gate_release; /* host-mapped: the CPU opens the gate */
    int *gate_timed_out;        /* host-mapped: the gate gave up waiting */
    double host_t0;
} prof_run;

void prof_init(prof_run *r, const schedule_t *sched, cudaStream_t stream);
void prof_free(prof_run *r);
/* The loop above for a forward fn(ctx): sched->warmup untimed calls, prof_init, then each step
 * around one call. The caller reads the run, then prof_free()s it. */
void prof_run_schedule(prof_run *r, const schedule_t *sched, cudaStream_t stream, void (*fn)(void *), void *ctx);
phase_t prof_phase(const prof_run *r, int step);
const char *prof_phase_name(phase_t p);
void prof_step_begin(prof_run *r, int step);
void prof_step_end(prof_run *r, int step);

/* Named range: an NVTX range for Nsight Systems and a range in our own trace. There its depth
 * says what it is, as in PyTorch's traces: a range directly inside a step (the forward, as a
 * record_function around a model's body) is a user_annotation, mirrored on the GPU lane; a range
 * inside that one is an op, a cpu_op. */
void prof_range_push(const char *name);
void prof_range_pop(void);

/* Statistics over the active steps: which = 0 for cpu_us, 1 for gpu_us. */
stats_t prof_active_stats(const prof_run *r, int which);

/* Writes one row per step: step,phase,cpu_us,gpu_us,gated. Returns 0 or -1. */
int prof_write_csv(const prof_run *r, const char *path);

/* Device time per call of fn when `n` calls are issued back to back without waiting, as a
 * training or inference loop issues them: whichever of CPU issue rate and GPU work is slower
 * sets it. Median of `repeats` such batches. */
double prof_back_to_back_us(void (*fn)(void *), void *ctx, cudaStream_t stream, int n, int repeats);
/* The same, with the SM clock and board power sampled while it runs (common/clocks.h): their
 * summary goes to *clk (clk->samples 0 without NVML). */
double prof_back_to_back_clocked_us(void (*fn)(void *), void *ctx, cudaStream_t stream, int n, int repeats,
                                    clocks_summary_t *clk);

/* fn's launches captured once into a CUDA graph (fn must only enqueue work on `stream`: no
 * synchronisation, no allocation), instantiated and replayed three times; prof_graph_replay
 * launches it once more (a fn for prof_back_to_back_us). */
typedef struct {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStream_t stream;
} prof_graph;
void prof_graph_capture(prof_graph *g, void (*fn)(void *), void *ctx, cudaStream_t stream);
void prof_graph_replay(void *g);
void prof_graph_free(prof_graph *g);

/* prof_back_to_back_us of fn captured as a graph and replayed: what is left of a forward once
 * the CPU's per-launch work is done once, at capture. */
double prof_graph_back_to_back_us(void (*fn)(void *), void *ctx, cudaStream_t stream, int n, int repeats);

/* True under a tool that owns CUPTI (compute-sanitizer, Nsight Compute), where each launch costs
 * milliseconds: timing loops then run one call (prof_back_to_back_us does so itself). Says so
 * once, on stdout. */
int prof_under_tool(void);

/* Host wall clock in microseconds (CLOCK_MONOTONIC). */
double prof_now_us(void);

/* --- the trace pass ----------------------------------------------------------------- */
/* The process started by prof_spawn_trace_pass finds its marker as its first argument: main
 * hands its arguments to prof_take_trace_pass_flag() before parsing them, which takes the marker
 * away. Then prof_is_trace_pass() is true in that process only (no environment variable can make
 * it so). run_open (run.h) calls prof_trace_pass_open() before the first CUDA call: in the trace pass
 * it turns CUPTI on, and returns 0 when CUPTI is unavailable (the caller then exits quietly). */
void prof_take_trace_pass_flag(int *argc, char **argv);
int prof_is_trace_pass(void);
int prof_trace_pass_open(void);
/* Runs this program again with the NULL-terminated argv (argv[0] included) and the trace pass's
 * marker, in a fresh process with tracing on, and waits for it. Skips (with one line) when
 * another tool owns CUPTI. */
void prof_spawn_trace_pass(char *const *argv);

#endif
