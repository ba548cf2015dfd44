/* trace_table.c: the trace model's key_averages() table, laid out as PyTorch prints it. */
#include "trace_model.h"

#include <stdio.h>
#include <string.h>

/* ---- the table ------------------------------------------------------------------------------ */

void trace_format_time(double us, char *buf, size_t size)
{
    if (us >= 1e6)
        snprintf(buf, size, "%.3fs", us / 1e6);
    else if (us >= 1e3)
        snprintf(buf, size, "%.3fms", us / 1e3);
    else
        snprintf(buf, size, "%.3fus", us);
}

static void format_share(double us, double total_us, char *buf, size_t size)
{
    if (total_us == 0)
        snprintf(buf, size, "NaN");
    else
        snprintf(buf, size, "%.2f%%", us * 100.0 / total_us);
}

enum { NAME_WIDTH_MAX = 55, COLUMN_WIDTH = 12, N_COLUMNS = 11 };

static void print_separator(FILE *out, int name_width)
{
    for (int c = 0; c < N_COLUMNS; c++)
        fprintf(out, "%.*s  ", c == 0 ? name_width : COLUMN_WIDTH,
                "------------------------------------------------------------------");
    fputc('\n', out);
}

/* Cells right-aligned, two spaces apart, as PyTorch's _build_table lays them out. */
static void print_cells(FILE *out, int name_width, const char *const cells[N_COLUMNS])
{
    for (int c = 0; c < N_COLUMNS; c++)
        fprintf(out, "%*s  ", c == 0 ? name_width : COLUMN_WIDTH, cells[c]);
    fputc('\n', out);
}

static void print_row(FILE *out, int name_width, const trace_table_row *r, double cpu_total,
                      double cuda_total)
{
    char name[NAME_WIDTH_MAX + 1], text[10][32];
    if (strlen(r->name) >= NAME_WIDTH_MAX - 3)
        snprintf(name, sizeof name, "%.*s...", NAME_WIDTH_MAX - 3, r->name);
    else
        snprintf(name, sizeof name, "%s", r->name);
    format_share(r->self_cpu_us, cpu_total, text[0], sizeof text[0]);
    trace_format_time(r->self_cpu_us, text[1], sizeof text[1]);
    format_share(r->cpu_total_us, cpu_total, text[2], sizeof text[2]);
    trace_format_time(r->cpu_total_us, text[3], sizeof text[3]);
    trace_format_time(r->cpu_total_us / r->calls, text[4], sizeof text[4]);
    trace_format_time(r->self_cuda_us, text[5], sizeof text[5]);
    format_share(r->self_cuda_us, cuda_total, text[6], sizeof text[6]);
    trace_format_time(r->cuda_total_us, text[7], sizeof text[7]);
    trace_format_time(r->cuda_total_us / r->calls, text[8], sizeof text[8]);
    snprintf(text[9], sizeof text[9], "%d", r->calls);
    const char *const cells[N_COLUMNS] = {name,    text[0], text[1], text[2], text[3], text[4],
                                          text[5], text[6], text[7], text[8], text[9]};
    print_cells(out, name_width, cells);
}

void trace_model_print_table(const trace_model *m, FILE *out, int max_rows)
{
    size_t n_table = 0;
    const trace_table_row *table = trace_model_table(m, &n_table);
    double self_cpu_total_us = 0, self_cuda_total_us = 0;
    trace_model_totals(m, &self_cpu_total_us, &self_cuda_total_us);
    size_t n = max_rows < 0 || (size_t)max_rows > n_table ? n_table : (size_t)max_rows;
    int name_width = 4;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(table[i].name) + 4;
        if ((int)len > name_width)
            name_width = len > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (int)len;
    }
    static const char *const headers[N_COLUMNS] = {
        "Name",      "Self CPU %",  "Self CPU",   "CPU total %",   "CPU total", "CPU time avg",
        "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg", "# of Calls"};
    print_separator(out, name_width);
    print_cells(out, name_width, headers);
    print_separator(out, name_width);
    for (size_t i = 0; i < n; i++)
        print_row(out, name_width, &table[i], self_cpu_total_us, self_cuda_total_us);
    print_separator(out, name_width);
    char total[32];
    trace_format_time(self_cpu_total_us, total, sizeof total);
    fprintf(out, "Self CPU time total: %s\n", total);
    trace_format_time(self_cuda_total_us, total, sizeof total);
    fprintf(out, "Self CUDA time total: %s\n", total);
}
