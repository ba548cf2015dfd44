#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

stats_t stats_of(const double *x, size_t n)
{
    stats_t s = {0};
    if (n == 0) return s;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted) abort();
    memcpy(sorted, x, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    s.n = n;
    s.min = sorted[0];
    s.max = sorted[n - 1];
    s.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += sorted[i];
    s.mean = sum / (double)n;
    double sq = 0.0;
    for (size_t i = 0; i < n; i++) sq += (sorted[i] - s.mean) * (sorted[i] - s.mean);
    s.stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
    free(sorted);
    return s;
}

double stats_median_sampled(const double *x, size_t n)
{
    if (n == 0) return NAN;
    double *v = malloc(n * sizeof *v);
    if (!v) abort();
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i])) v[k++] = x[i];
    const double median = k ? stats_of(v, k).median : NAN;
    free(v);
    return median;
}
