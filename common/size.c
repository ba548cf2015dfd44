#include "size.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "program.h"

int size_mul_ok(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return -1;
    *out = a * b;
    return 0;
}

int size_device_check(double bytes, const char *what, char *why, size_t len)
{
    if (bytes <= SIZE_DEVICE_MAX) return 0;
    snprintf(why, len, "%s need %.2f GB of device memory, more than any GPU holds (refused above %.0f GB, before "
             "the GPU is asked)", what, bytes / 1e9, SIZE_DEVICE_MAX / 1e9);
    return 1;
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
