/* clocks.h: the SM clock, board power and temperature of the GPU while something runs.
 *
 * The same kernel runs at different speeds: a GPU boosts its SM clock when cool and idle, and
 * lowers it when the board reaches its power limit or heats up. One step measured alone runs at
 * the boost clock; a thousand steps back to back may not. A time printed without the clock it
 * ran at cannot say which of the two it measured.
 *
 * The numbers come from NVML, the driver's management library (what nvidia-smi reads). It is
 * opened at run time with dlopen, not linked: a machine without the driver still runs every
 * program, which then reports "clocks: not available (no NVML)". A background thread samples
 * the GPU of the current CUDA device (matched by PCI bus id) every CLOCKS_PERIOD_MS between
 * clocks_start and clocks_stop; one sample is also taken at each end, so even a short interval
 * has two. The thread sleeps between samples and runs on another core: the GPU work measured is
 * not slowed by it.
 *
 * Usage, around a back-to-back timing loop:
 *
 *     clocks_series_t series = {0};             // or pass NULL: summary only
 *     clocks_start(&series);                    // -1 without NVML: clocks_stop then says so
 *     for (int i = 0; i < n; i++) forward(ctx);
 *     cudaDeviceSynchronize();
 *     clocks_summary_t clk;
 *     clocks_stop(&clk);
 *     char line[160];
 *     clocks_format(&clk, line, sizeof line);   // "clocks: SM 1980 MHz median (1755-1980), ..."
 *     printf("%s\n", line);
 *     clocks_write_csv(&series, "out/clocks.csv"); // t_ms,sm_mhz,power_w,temp_c: plots/clocks.gp
 *     clocks_series_free(&series);
 *
 * Board power as NVML reports it is averaged by the board over a short window (tens of ms on
 * recent GPUs, about a second on older ones): a median over a long run is meaningful, a single
 * sample of a microsecond-long kernel is not.
 */
#ifndef CLOCKS_H
#define CLOCKS_H

#include <stddef.h>

#define CLOCKS_PERIOD_MS 2

/* Why the clock was lowered, as NVML's "clocks event reasons" (bit values from nvml.h). */
#define CLOCKS_REASON_SW_POWER_CAP 0x4ull  /* board power at its limit: the driver lowers clocks */
#define CLOCKS_REASON_HW_SLOWDOWN 0x8ull   /* hardware slowdown (power brake or temperature) */
#define CLOCKS_REASON_SW_THERMAL 0x20ull   /* the driver lowers clocks to cool the GPU */
#define CLOCKS_REASON_HW_THERMAL 0x40ull   /* the hardware lowers clocks to cool the GPU */
#define CLOCKS_REASON_HW_POWER_BRAKE 0x80ull /* an external power brake signal */

typedef struct {
    double t_ms;    /* since clocks_start */
    double sm_mhz;  /* SM clock */
    double power_w; /* board power */
    double temp_c;  /* GPU temperature */
    unsigned long long reasons; /* CLOCKS_REASON_* bits set at that moment */
} clocks_sample_t;

/* A growing array of samples; {0} is an empty series. */
typedef struct {
    clocks_sample_t *v;
    size_t n, cap;
} clocks_series_t;

typedef struct {
    size_t samples; /* 0: nothing was sampled (no NVML, or clocks_start failed) */
    double sm_mhz_median, sm_mhz_min, sm_mhz_max;
    double power_w_median, power_w_max;
    double temp_c_max;
    double span_ms;               /* first to last sample */
    unsigned long long reasons;   /* CLOCKS_REASON_* bits seen in any sample */
    char why[96];                 /* when samples == 0: why ("no NVML", ...) */
} clocks_summary_t;

/* Opens NVML from `library` (NULL: the driver's libnvidia-ml.so.1) and finds the current CUDA
 * device in it. Called by clocks_start on first use; call it yourself only to pick another
 * library. The outcome is kept: later calls return it. Returns 0, or -1 with the reason in
 * clocks_why(). */
int clocks_init(const char *library);
/* Why clocks are not available ("no NVML", ...), or "" when they are. */
const char *clocks_why(void);

/* Starts sampling in a background thread. keep: where clocks_stop hands the samples over
 * (appended), or NULL for the summary only. Returns 0, or -1 (no NVML, or already started). */
int clocks_start(clocks_series_t *keep);
/* Stops sampling and summarizes the samples since clocks_start. Without a successful start the
 * summary has samples == 0 and why says why. */
void clocks_stop(clocks_summary_t *out);

/* The summary of n samples (what clocks_stop computes). */
void clocks_summarize(const clocks_sample_t *s, size_t n, clocks_summary_t *out);
/* One line for a report:
 *   "clocks: SM 1980 MHz median (1755-1980), 612 W median (690 max), 71 C max, 512 samples
 *    over 1.02 s; lowered by: power cap"
 * or "clocks: not available (no NVML)". Returns what snprintf returns. */
int clocks_format(const clocks_summary_t *s, char *buf, size_t len);
/* Names of the CLOCKS_REASON_* bits in `reasons`, comma-separated ("none" for 0). */
int clocks_reasons_format(unsigned long long reasons, char *buf, size_t len);

/* Appends one sample; returns 0, or -1 when out of memory. */
int clocks_series_push(clocks_series_t *s, const clocks_sample_t *sample);
void clocks_series_free(clocks_series_t *s);
/* CSV with the header t_ms,sm_mhz,power_w,temp_c (one row a sample) for plots/clocks.gp;
 * written complete or not at all (out.h). Returns 0, or -1 after printing why. */
int clocks_write_csv(const clocks_series_t *s, const char *path);

#endif
