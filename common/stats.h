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

/* Which of n rows runs j-th in round k of a comparison. The clock and the board's power carry
 * over from one row to the next, so a row is charged some of the heat of the row before it.
 * Every other round runs backwards, and each round starts the rows 0, 1, n-1, 2, n-2, ... from
 * a place one further on: over 7 rounds no row follows itself, and from 5 rows on none follows
 * the same row in more than 3 of them, so a median over the rounds is not decided by one
 * neighbour (a fixed order, or only forwards and backwards, would put the same row before a
 * row in every round, or in every other). */
static inline int stats_round_row(int k, int j, int n)
{
    if (n <= 0) return 0;
    const int i = k % 2 == 0 ? j : n - 1 - j;
    const int s = i % 2 == 1 ? (i + 1) / 2 : (n - i / 2) % n;
    return (s + k) % n;
}

#endif
