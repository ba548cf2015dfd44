/* trace_rows.h: the profiler table's row of a name, for the tests of the trace model. */
#ifndef TRACE_ROWS_H
#define TRACE_ROWS_H

#include <string.h>

#include "profiler/trace_model.h"

/* The row named `name`, or NULL when the table has none. */
static inline const trace_table_row *row_named(const trace_model *m, const char *name)
{
    size_t n = 0;
    const trace_table_row *rows = trace_model_table(m, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0) return &rows[i];
    return NULL;
}

#endif
