#include "size.h"

#include <stdint.h>
#include <stdlib.h>

#include "program.h"

int size_mul_ok(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return -1;
    *out = a * b;
    return 0;
}

size_t size_mul(size_t a, size_t b, const char *what)
{
    size_t p;
    if (size_mul_ok(a, b, &p) != 0) {
        program_error("%s overflows (%zu x %zu)", what, a, b);
        exit(1);
    }
    return p;
}
