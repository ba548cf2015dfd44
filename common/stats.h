/* stats.h: summary statistics over per-step times. Look at the spread, not only the mean. */
#ifndef STATS_H
#define STATS_H

#include <stddef.h>

typedef struct {
    size_t n;
    double min, median, mean, max, stddev;
} stats_t;

/* Statistics of x[0..n); x is left unchanged. n == 0 gives all zeros. stddev is the sample
 * standard deviation (n - 1), 0 for a single value. */
stats_t stats_of(const double *x, size_t n);

#endif
