#include "program.h"

#include <stdarg.h>
#include <stdio.h>

static const char *name = "program";

void program_set_name(const char *n) { name = n; }

const char *program_name(void) { return name; }

void program_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
