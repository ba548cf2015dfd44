/* harness.h: the smallest test harness that does the job.
 *
 * Each test is a function returning 0 (pass) or non-zero (fail); TEST_RUN prints one line per
 * test, "PASS name", "FAIL name: why" or "SKIP name: why", and tests/run_tests.sh counts them.
 * A test binary exits non-zero when any of its tests failed, so a crash also counts as failure.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int harness_failed;
static const char *harness_skip_reason;

/* Inside a test: fail with a message naming the file and line. */
#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            printf("  %s:%d: expected %s: ", __FILE__, __LINE__, #cond);           \
            printf(__VA_ARGS__);                                                   \
            printf("\n");                                                          \
            return 1;                                                              \
        }                                                                          \
    } while (0)

/* Inside a test: report SKIP with a reason (e.g. no GPU) instead of PASS. */
#define SKIP(reason)                                                               \
    do {                                                                           \
        harness_skip_reason = (reason);                                            \
        return 0;                                                                  \
    } while (0)

#define TEST_RUN(fn)                                                               \
    do {                                                                           \
        harness_skip_reason = NULL;                                                \
        fflush(stdout);                                                            \
        int rc_ = fn();                                                            \
        if (rc_ != 0) {                                                            \
            printf("FAIL %s\n", #fn);                                              \
            harness_failed = 1;                                                    \
        } else if (harness_skip_reason) {                                          \
            printf("SKIP %s: %s\n", #fn, harness_skip_reason);                     \
        } else {                                                                   \
            printf("PASS %s\n", #fn);                                              \
        }                                                                          \
        fflush(stdout);                                                            \
    } while (0)

#define TEST_EXIT() return harness_failed ? 1 : 0

#endif
