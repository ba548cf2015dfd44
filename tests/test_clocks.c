/* CPU tests of common/clocks: the summary of a series (NaN readings left out), the report line,
 * the CSV, and a machine without NVML (a library name that does not exist): clocks_start
 * refuses, clocks_stop reports "not available (no NVML)", nothing crashes. Sampling a real GPU
 * needs the driver and is not tested here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clocks.h"
#include "harness.h"

static const clocks_sample_t series[] = {
    {.t_ms = 0.0, .sm_mhz = 1980, .power_w = 400.0, .temp_c = 40, .reasons = 0},
    {.t_ms = 2.0, .sm_mhz = 1755, .power_w = 700.0, .temp_c = 55, .reasons = CLOCKS_REASON_SW_POWER_CAP},
    {.t_ms = 4.0, .sm_mhz = 1800, .power_w = NAN, .temp_c = 61, .reasons = 0},
    {.t_ms = 6.5, .sm_mhz = NAN, .power_w = 650.0, .temp_c = NAN, .reasons = CLOCKS_REASON_SW_THERMAL},
    {.t_ms = 8.0, .sm_mhz = 1900, .power_w = 690.0, .temp_c = 58, .reasons = 0},
};
#define N_SERIES (sizeof series / sizeof series[0])

static int test_summary(void)
{
    clocks_summary_t s;
    clocks_summarize(series, N_SERIES, &s);
    EXPECT(s.samples == 5, "%zu samples", s.samples);
    /* SM: 1755 1800 1900 1980 (NaN left out): median 1850 */
    EXPECT(s.sm_mhz_median == 1850 && s.sm_mhz_min == 1755 && s.sm_mhz_max == 1980, "SM %g (%g-%g)",
           s.sm_mhz_median, s.sm_mhz_min, s.sm_mhz_max);
    /* power: 400 650 690 700: median 670 */
    EXPECT(fabs(s.power_w_median - 670.0) < 1e-9 && s.power_w_max == 700.0, "power %g max %g", s.power_w_median,
           s.power_w_max);
    EXPECT(s.temp_c_max == 61, "temperature %g", s.temp_c_max);
    EXPECT(s.span_ms == 8.0, "span %g", s.span_ms);
    EXPECT(s.reasons == (CLOCKS_REASON_SW_POWER_CAP | CLOCKS_REASON_SW_THERMAL), "reasons %llx", s.reasons);
    return 0;
}

static int test_summary_one_sample(void)
{
    clocks_summary_t s;
    clocks_summarize(series, 1, &s);
    EXPECT(s.samples == 1 && s.sm_mhz_median == 1980 && s.sm_mhz_min == 1980 && s.span_ms == 0.0, "one sample");
    clocks_summarize(series + 3, 1, &s); /* SM clock refused: NaN, not 0 */
    EXPECT(isnan(s.sm_mhz_median) && s.power_w_median == 650.0, "SM %g, power %g", s.sm_mhz_median,
           s.power_w_median);
    clocks_summarize(NULL, 0, &s);
    EXPECT(s.samples == 0, "no samples");
    return 0;
}

static int test_format(void)
{
    clocks_summary_t s;
    char line[256];
    clocks_summarize(series, N_SERIES, &s);
    clocks_format(&s, line, sizeof line);
    const char *want = "clocks: SM 1850 MHz median (1755-1980), 670 W median (700 max), 61 C max, 5 samples "
                       "over 0.01 s; lowered by: power cap, thermal (driver)";
    EXPECT(strcmp(line, want) == 0, "\"%s\"", line);
    char small[8];
    int w = clocks_format(&s, small, sizeof small); /* truncates, says how long it would be */
    EXPECT(w == (int)strlen(want) && strlen(small) == sizeof small - 1, "w = %d", w);
    char reasons[64];
    clocks_reasons_format(0, reasons, sizeof reasons);
    EXPECT(strcmp(reasons, "none") == 0, "\"%s\"", reasons);
    clocks_reasons_format(CLOCKS_REASON_HW_SLOWDOWN | CLOCKS_REASON_HW_POWER_BRAKE | 0x1ull, reasons,
                          sizeof reasons);
    EXPECT(strcmp(reasons, "hardware slowdown, power brake") == 0, "\"%s\"", reasons);
    clocks_reasons_format(~0ull, reasons, 12); /* truncated, terminated */
    EXPECT(strlen(reasons) == 11, "\"%s\"", reasons);
    return 0;
}

static int test_csv(void)
{
    clocks_series_t s = {0};
    for (int round = 0; round < 400; round++) /* past the first allocation */
        for (size_t i = 0; i < N_SERIES; i++) EXPECT(clocks_series_push(&s, &series[i]) == 0, "push");
    EXPECT(s.n == 400 * N_SERIES, "%zu samples", s.n);
    char dir[] = "/tmp/clocks_csv_XXXXXX", path[64], line[128];
    EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/clocks.csv", dir);
    int rc = clocks_write_csv(&s, path);
    clocks_series_free(&s);
    EXPECT(rc == 0 && s.v == NULL && s.n == 0, "written and freed");
    FILE *f = fopen(path, "r");
    EXPECT(f != NULL, "open %s", path);
    size_t rows = 0;
    int header = fgets(line, sizeof line, f) && strcmp(line, "t_ms,sm_mhz,power_w,temp_c\n") == 0;
    int first = fgets(line, sizeof line, f) && strcmp(line, "0.000,1980,400.000,40\n") == 0;
    for (rows = 1; fgets(line, sizeof line, f);) rows++;
    fclose(f);
    remove(path);
    rmdir(dir);
    EXPECT(header && first, "header and first row");
    EXPECT(rows == 400 * N_SERIES, "%zu rows", rows);
    return 0;
}

/* No NVML: every call answers, none samples; the report line says why. */
static int test_no_nvml(void)
{
    EXPECT(clocks_init("libnvidia-ml-absent.so.1") == -1, "init without the library");
    EXPECT(strcmp(clocks_why(), "no NVML") == 0, "why: %s", clocks_why());
    clocks_series_t kept = {0};
    EXPECT(clocks_start(&kept) == -1, "start without NVML");
    clocks_summary_t s;
    clocks_stop(&s);
    EXPECT(s.samples == 0 && kept.n == 0, "nothing sampled");
    char line[128];
    clocks_format(&s, line, sizeof line);
    EXPECT(strcmp(line, "clocks: not available (no NVML)") == 0, "\"%s\"", line);
    EXPECT(clocks_init(NULL) == -1, "the outcome is kept");
    return 0;
}

int main(void)
{
    TEST_RUN(test_summary);
    TEST_RUN(test_summary_one_sample);
    TEST_RUN(test_format);
    TEST_RUN(test_csv);
    TEST_RUN(test_no_nvml);
    TEST_EXIT();
}
