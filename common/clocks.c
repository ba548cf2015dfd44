/* clocks.c: NVML sampled from a background thread (see clocks.h).
 *
 * NVML's few entry points used here are declared by hand, with the types and constants of
 * nvml.h, so that this file builds where the header is not installed; they are looked up with
 * dlsym in the library the driver installs. */
#include "clocks.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "out.h"
#include "program.h"
#include "stats.h"

typedef int nvml_return;               /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t */
enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1, NVML_TEMPERATURE_GPU = 0 };

typedef nvml_return (*nvml_init_fn)(void);
typedef nvml_return (*nvml_by_bus_id_fn)(const char *bus_id, nvml_device *dev);
typedef nvml_return (*nvml_clock_fn)(nvml_device dev, int type, unsigned *mhz);
typedef nvml_return (*nvml_power_fn)(nvml_device dev, unsigned *milliwatts);
typedef nvml_return (*nvml_temp_fn)(nvml_device dev, int sensor, unsigned *celsius);
typedef nvml_return (*nvml_reasons_fn)(nvml_device dev, unsigned long long *reasons);

static struct {
    int tried, ok;
    char why[96];
    nvml_device dev;
    nvml_clock_fn clock;
    nvml_power_fn power;
    nvml_temp_fn temp;
    nvml_reasons_fn reasons; /* NULL where the library lacks it: reasons stay 0 */

    int running;
    pthread_t thread;
    atomic_int stop;
    struct timespec t0;
    clocks_series_t taken;
    clocks_series_t *keep;
    int lost; /* a sample did not fit in memory */
} g;

static int fail(const char *why)
{
    snprintf(g.why, sizeof g.why, "%s", why);
    return -1;
}

static int open_nvml(const char *library)
{
    void *lib = dlopen(library ? library : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return fail("no NVML");
    nvml_init_fn init = (nvml_init_fn)dlsym(lib, "nvmlInit_v2");
    nvml_by_bus_id_fn by_bus_id = (nvml_by_bus_id_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    g.clock = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetClockInfo");
    g.power = (nvml_power_fn)dlsym(lib, "nvmlDeviceGetPowerUsage");
    g.temp = (nvml_temp_fn)dlsym(lib, "nvmlDeviceGetTemperature");
    g.reasons = (nvml_reasons_fn)dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!init || !by_bus_id || !g.clock || !g.power || !g.temp) {
        dlclose(lib);
        return fail("NVML without the functions needed");
    }
    if (init() != NVML_SUCCESS) {
        dlclose(lib);
        return fail("NVML did not initialize");
    }
    /* The library stays loaded (NVML initialized) for the life of the process. */
    int device;
    char bus_id[32];
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess)
        return fail("no CUDA device");
    if (by_bus_id(bus_id, &g.dev) != NVML_SUCCESS) return fail("NVML does not list the CUDA device");
    return 0;
}

int clocks_init(const char *library)
{
    if (!g.tried) {
        g.tried = 1;
        g.ok = open_nvml(library) == 0;
    }
    return g.ok ? 0 : -1;
}

const char *clocks_why(void) { return g.ok ? "" : g.why; }

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) * 1e-6;
}

/* One sample; a reading NVML refuses is NaN (and left out of the summary). */
static void take_sample(void)
{
    clocks_sample_t s = {.t_ms = ms_since(&g.t0), .sm_mhz = NAN, .power_w = NAN, .temp_c = NAN};
    unsigned v;
    if (g.clock(g.dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS) s.sm_mhz = v;
    if (g.power(g.dev, &v) == NVML_SUCCESS) s.power_w = v * 1e-3;
    if (g.temp(g.dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS) s.temp_c = v;
    unsigned long long r;
    if (g.reasons && g.reasons(g.dev, &r) == NVML_SUCCESS) s.reasons = r;
    if (clocks_series_push(&g.taken, &s) != 0) g.lost = 1;
}

static void *sampler(void *arg)
{
    (void)arg;
    const struct timespec period = {0, CLOCKS_PERIOD_MS * 1000000L};
    while (!atomic_load(&g.stop)) {
        nanosleep(&period, NULL);
        take_sample();
    }
    return NULL;
}

int clocks_start(clocks_series_t *keep)
{
    if (clocks_init(NULL) != 0) return -1;
    if (g.running) {
        program_error("clocks_start: already started");
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &g.t0);
    g.keep = keep;
    g.lost = 0;
    atomic_store(&g.stop, 0);
    take_sample();
    if (pthread_create(&g.thread, NULL, sampler, NULL) != 0) {
        clocks_series_free(&g.taken);
        program_error("clocks_start: cannot start the sampling thread");
        return -1;
    }
    g.running = 1;
    return 0;
}

void clocks_stop(clocks_summary_t *out)
{
    if (!g.running) {
        clocks_summarize(NULL, 0, out);
        snprintf(out->why, sizeof out->why, "%s", g.ok ? "not started" : g.why);
        return;
    }
    atomic_store(&g.stop, 1);
    pthread_join(g.thread, NULL);
    g.running = 0;
    take_sample();
    clocks_summarize(g.taken.v, g.taken.n, out);
    if (g.lost) {
        out->samples = 0;
        snprintf(out->why, sizeof out->why, "out of memory");
    }
    for (size_t i = 0; g.keep && i < g.taken.n; i++)
        if (clocks_series_push(g.keep, &g.taken.v[i]) != 0) break;
    clocks_series_free(&g.taken);
}

/* Statistics of one field over the samples where it is a number; n == 0 when none is. */
static stats_t field_stats(const clocks_sample_t *s, size_t n, size_t offset, double *scratch)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double v;
        memcpy(&v, (const char *)&s[i] + offset, sizeof v);
        if (!isnan(v)) scratch[k++] = v;
    }
    stats_t st = stats_of(scratch, k);
    if (k == 0) st.min = st.median = st.max = NAN;
    return st;
}

void clocks_summarize(const clocks_sample_t *s, size_t n, clocks_summary_t *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0) {
        snprintf(out->why, sizeof out->why, "no samples");
        return;
    }
    double *scratch = malloc(n * sizeof *scratch);
    if (!scratch) {
        snprintf(out->why, sizeof out->why, "out of memory");
        return;
    }
    stats_t sm = field_stats(s, n, offsetof(clocks_sample_t, sm_mhz), scratch);
    stats_t power = field_stats(s, n, offsetof(clocks_sample_t, power_w), scratch);
    stats_t temp = field_stats(s, n, offsetof(clocks_sample_t, temp_c), scratch);
    free(scratch);
    out->samples = n;
    out->sm_mhz_median = sm.median;
    out->sm_mhz_min = sm.min;
    out->sm_mhz_max = sm.max;
    out->power_w_median = power.median;
    out->power_w_max = power.max;
    out->temp_c_max = temp.max;
    out->span_ms = s[n - 1].t_ms - s[0].t_ms;
    for (size_t i = 0; i < n; i++) out->reasons |= s[i].reasons;
}

int clocks_reasons_format(unsigned long long reasons, char *buf, size_t len)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } names[] = {
        {CLOCKS_REASON_SW_POWER_CAP, "power cap"},       {CLOCKS_REASON_HW_SLOWDOWN, "hardware slowdown"},
        {CLOCKS_REASON_SW_THERMAL, "thermal (driver)"}, {CLOCKS_REASON_HW_THERMAL, "thermal (hardware)"},
        {CLOCKS_REASON_HW_POWER_BRAKE, "power brake"},
    };
    char all[128] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(reasons & names[i].bit)) continue;
        int w = snprintf(all + used, sizeof all - used, "%s%s", used ? ", " : "", names[i].name);
        if (w > 0) used += (size_t)w; /* all holds every name: no truncation */
    }
    return snprintf(buf, len, "%s", used ? all : "none");
}

int clocks_format(const clocks_summary_t *s, char *buf, size_t len)
{
    if (s->samples == 0) return snprintf(buf, len, "clocks: not available (%s)", s->why);
    char reasons[128];
    clocks_reasons_format(s->reasons, reasons, sizeof reasons);
    return snprintf(buf, len,
                    "clocks: SM %.0f MHz median (%.0f-%.0f), %.0f W median (%.0f max), %.0f C max, "
                    "%zu samples over %.2f s; lowered by: %s",
                    s->sm_mhz_median, s->sm_mhz_min, s->sm_mhz_max, s->power_w_median, s->power_w_max,
                    s->temp_c_max, s->samples, s->span_ms * 1e-3, reasons);
}

int clocks_series_push(clocks_series_t *s, const clocks_sample_t *sample)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        clocks_sample_t *v = realloc(s->v, cap * sizeof *v);
        if (!v) return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = *sample;
    return 0;
}

void clocks_series_free(clocks_series_t *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

int clocks_write_csv(const clocks_series_t *s, const char *path)
{
    char tmp[1100];
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f) return -1;
    fprintf(f, "t_ms,sm_mhz,power_w,temp_c\n");
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%.3f,%.0f,%.3f,%.0f\n", s->v[i].t_ms, s->v[i].sm_mhz, s->v[i].power_w, s->v[i].temp_c);
    return out_commit(f, tmp, path);
}
