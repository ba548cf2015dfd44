#include "ref_mlp.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "ref.h"

int ref_geglu_mlp_rows(const float *x, const float *wg, const float *wu, const float *wd,
                       size_t dim, size_t hidden, size_t row0, size_t rows, double *y,
                       double *scale, double tiny)
{
    double *m = malloc(hidden * sizeof *m);
    if (!m) return -1;
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + (row0 + r) * dim;
        for (size_t k = 0; k < hidden; k++) { /* row k of Wg and Wu: contiguous dot products */
            const float *g = wg + k * dim, *u = wu + k * dim;
            double gate = 0.0, up = 0.0;
            for (size_t d = 0; d < dim; d++) {
                gate += (double)xr[d] * (double)g[d];
                up += (double)xr[d] * (double)u[d];
            }
            m[k] = ref_gelu_tanh(gate) * up;
        }
        for (size_t j = 0; j < dim; j++) { /* row j of Wd holds the weights of output j */
            const float *w = wd + j * hidden;
            double acc = 0.0, sq = tiny * tiny; /* y's own rounding if it underflows */
            for (size_t k = 0; k < hidden; k++) {
                acc += m[k] * (double)w[k];
                double mk = fabs(m[k]) > tiny ? m[k] : tiny;
                sq += mk * mk * (double)w[k] * (double)w[k];
            }
            y[r * dim + j] = acc;
            if (scale) scale[r * dim + j] = sqrt(sq);
        }
    }
    free(m);
    return 0;
}

typedef struct {
    const float *x, *wg, *wu, *wd;
    size_t dim, hidden, n, first, step;
    const size_t *row_of;
    double *y, *scale, tiny;
    int failed;
} rows_job;

/* Outputs first, first + step, ... of a job: one row of the reference each. */
static void *run_rows(void *arg)
{
    rows_job *j = arg;
    for (size_t r = j->first; r < j->n; r += j->step)
        if (ref_geglu_mlp_rows(j->x, j->wg, j->wu, j->wd, j->dim, j->hidden, j->row_of[r], 1, j->y + r * j->dim,
                               j->scale ? j->scale + r * j->dim : NULL, j->tiny) != 0)
            j->failed = 1;
    return NULL;
}

int ref_geglu_mlp_rows_at(const float *x, const float *wg, const float *wu, const float *wd, size_t dim,
                          size_t hidden, const size_t *row_of, size_t n, double *y, double *scale, double tiny)
{
    enum { MAX_THREADS = 64 };
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = cpus > 0 ? (size_t)cpus : 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (threads > n) threads = n ? n : 1;
    rows_job jobs[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (size_t t = 0; t < threads; t++) {
        jobs[t] = (rows_job){x, wg, wu, wd, dim, hidden, n, t, threads, row_of, y, scale, tiny, 0};
        /* the first share runs here; a thread that cannot be started runs its share here too */
        started[t] = t > 0 && pthread_create(&tid[t], NULL, run_rows, &jobs[t]) == 0;
    }
    int failed = 0;
    for (size_t t = 0; t < threads; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else run_rows(&jobs[t]);
        failed |= jobs[t].failed;
    }
    return failed ? -1 : 0;
}

double ref_mlp_error(const float *got, const double *ref, const double *scale, size_t n)
{
    double diff = 0.0, norm = 0.0, scale_norm = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(got[i])) return INFINITY;
        double d = (double)got[i] - ref[i];
        diff += d * d;
        norm += ref[i] * ref[i];
        scale_norm += scale[i] * scale[i];
    }
    double denom = norm > scale_norm ? norm : scale_norm;
    if (denom == 0.0) return diff == 0.0 ? 0.0 : INFINITY;
    return sqrt(diff / denom);
}
