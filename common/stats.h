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

/* The median of the values of x[0..n) that are not NaN (a round where nothing was sampled, such
 * as a clock without NVML); NaN when all are. */
double stats_median_sampled(const double *x, size_t n);

/* Which of n rows runs j-th in round k of a comparison: every other round runs them backwards,
 * so that a row follows one neighbour in one round and the other in the next. The clock and the
 * board's power carry over from one row to the next; a fixed order would charge a row the heat
 * of the same row before it in every round. */
static inline int stats_round_row(int k, int j, int n)
{
    return n <= 0 ? 0 : k % 2 == 0 ? j : n - 1 - j;
}

#endif
