#include "program.h"
#include "npy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

/* The data starts at a multiple of this (NumPy's ARRAY_ALIGN), so it can be mapped and read
 * with aligned vector loads. */
#define NPY_ALIGN 64
#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6

const char *npy_descr(dtype_t t)
{
    switch (t) {
    case DTYPE_BF16: return "<u2";
    case DTYPE_FP16: return "<f2";
    default: return "<f4";
    }
}

static int count_elements(const size_t *shape, int ndim, size_t *count)
{
    if (ndim < 0 || ndim > NPY_MAX_NDIM) return -1;
    size_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] != 0 && n > SIZE_MAX / shape[i]) return -1;
        n *= shape[i];
    }
    *count = n;
    return 0;
}

int npy_nbytes(dtype_t t, const size_t *shape, int ndim, size_t *bytes)
{
    size_t n;
    if (count_elements(shape, ndim, &n) != 0 || n > SIZE_MAX / dtype_size(t)) return -1;
    *bytes = n * dtype_size(t);
    return 0;
}

int npy_write(const char *path, dtype_t t, const size_t *shape, int ndim, const void *data)
{
    size_t bytes;
    if (npy_nbytes(t, shape, ndim, &bytes) != 0) {
        program_error("%s: %d dimensions or their product is out of range", path, ndim);
        return -1;
    }

    /* Python's repr of the shape tuple: (), (n,), (a, b), ... */
    char dict[64 + NPY_MAX_NDIM * 24];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr(t));
    for (int i = 0; i < ndim; i++)
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%zu%s", shape[i],
                        ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
    len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");

    /* magic (6) + version (2) + header length (2) + dict + spaces + '\n' = a multiple of 64 */
    size_t used = NPY_MAGIC_LEN + 4 + (size_t)len + 1;
    size_t pad = (NPY_ALIGN - used % NPY_ALIGN) % NPY_ALIGN;
    size_t header_len = (size_t)len + pad + 1;
    unsigned char prefix[NPY_MAGIC_LEN + 4];
    memcpy(prefix, NPY_MAGIC, NPY_MAGIC_LEN);
    prefix[6] = 1; /* version 1.0 */
    prefix[7] = 0;
    prefix[8] = (unsigned char)(header_len & 0xFF);
    prefix[9] = (unsigned char)(header_len >> 8);

    char tmp[1100];
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f) return -1;
    fwrite(prefix, 1, sizeof prefix, f);
    fwrite(dict, 1, (size_t)len, f);
    for (size_t i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    if (bytes) fwrite(data, 1, bytes, f);
    return out_commit(f, tmp, path);
}

/* ---- reading ----------------------------------------------------------------------------- */

/* The value after the key 'name' (or "name") and its colon, or NULL. */
static const char *find_value(const char *header, const char *name)
{
    char key[32];
    const char *quotes = "'\"";
    for (int q = 0; q < 2; q++) {
        snprintf(key, sizeof key, "%c%s%c", quotes[q], name, quotes[q]);
        const char *p = strstr(header, key);
        if (!p) continue;
        p += strlen(key);
        while (*p == ' ') p++;
        if (*p != ':') return NULL;
        p++;
        while (*p == ' ') p++;
        return p;
    }
    return NULL;
}

static int parse_header(const char *h, char *descr, size_t descr_len, size_t *shape, int *ndim,
                        const char **why)
{
    const char *p = find_value(h, "descr");
    if (!p || (*p != '\'' && *p != '"')) {
        *why = p && *p == '[' ? "structured dtypes are not supported" : "no 'descr' in the header";
        return -1;
    }
    char quote = *p++;
    const char *end = strchr(p, quote);
    if (!end || (size_t)(end - p) >= descr_len || end == p) {
        *why = "bad 'descr' in the header";
        return -1;
    }
    memcpy(descr, p, (size_t)(end - p));
    descr[end - p] = '\0';

    p = find_value(h, "fortran_order");
    if (!p || strncmp(p, "False", 5) != 0) {
        *why = p && strncmp(p, "True", 4) == 0 ? "Fortran-order arrays are not supported"
                                                 : "no 'fortran_order' in the header";
        return -1;
    }

    p = find_value(h, "shape");
    if (!p || *p != '(') {
        *why = "no 'shape' tuple in the header";
        return -1;
    }
    p++;
    int n = 0;
    for (;;) {
        while (*p == ' ') p++;
        if (*p == ')') break;
        if (*p < '0' || *p > '9' || n == NPY_MAX_NDIM) {
            *why = n == NPY_MAX_NDIM ? "more dimensions than npy_read takes" : "bad 'shape' in the header";
            return -1;
        }
        errno = 0;
        char *after;
        unsigned long long v = strtoull(p, &after, 10);
        if (errno == ERANGE || v > SIZE_MAX) {
            *why = "a dimension in 'shape' is too large";
            return -1;
        }
        shape[n++] = (size_t)v;
        p = after;
        while (*p == ' ') p++;
        if (*p == ',') p++;
        else if (*p != ')') {
            *why = "bad 'shape' in the header";
            return -1;
        }
    }
    *ndim = n;
    return 0;
}

/* Element size from a descr such as "<f4" or "|u1"; 0 for codes we do not take. */
static size_t item_size(const char *descr, const char **why)
{
    if (descr[0] == '>') {
        *why = "big-endian data is not supported";
        return 0;
    }
    int known_order = descr[0] == '<' || descr[0] == '|' || descr[0] == '=';
    int kind = descr[1] >= 'a' && descr[1] <= 'z';
    char *end = NULL;
    long v = known_order && kind ? strtol(descr + 2, &end, 10) : 0;
    if (v <= 0 || v > 64 || *end != '\0') {
        *why = "unsupported dtype code";
        return 0;
    }
    return (size_t)v;
}

int npy_read(const char *path, char *descr, size_t descr_len, size_t *shape, int *ndim, void **data,
             size_t *bytes)
{
    *data = NULL;
    *bytes = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        program_error("cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    const char *why = NULL;
    char *header = NULL;
    unsigned char pre[NPY_MAGIC_LEN + 2], len_bytes[4];
    size_t header_len = 0, count = 0, itemsize = 0;

    if (fread(pre, 1, sizeof pre, f) != sizeof pre || memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
        why = "not a .npy file (no \\x93NUMPY magic)";
        goto fail;
    }
    int wide = pre[6] >= 2; /* versions 2.0 and 3.0: a 4-byte header length */
    if (pre[6] < 1 || pre[6] > 3 || fread(len_bytes, 1, wide ? 4u : 2u, f) != (wide ? 4u : 2u)) {
        why = pre[6] < 1 || pre[6] > 3 ? "unknown .npy format version" : "truncated header";
        goto fail;
    }
    header_len = (size_t)len_bytes[0] | (size_t)len_bytes[1] << 8;
    if (wide) header_len |= (size_t)len_bytes[2] << 16 | (size_t)len_bytes[3] << 24;
    if (header_len > (1u << 20) || !(header = malloc(header_len + 1))) {
        why = "header too large";
        goto fail;
    }
    if (fread(header, 1, header_len, f) != header_len || header_len == 0 || header[header_len - 1] != '\n') {
        why = "truncated header";
        goto fail;
    }
    header[header_len] = '\0';
    if (parse_header(header, descr, descr_len, shape, ndim, &why) != 0) goto fail;
    if (!(itemsize = item_size(descr, &why))) goto fail;
    if (count_elements(shape, *ndim, &count) != 0 || count > SIZE_MAX / itemsize) {
        why = "the shape's size overflows";
        goto fail;
    }
    *bytes = count * itemsize;
    if (!(*data = malloc(*bytes ? *bytes : 1))) {
        why = "out of host memory for the data";
        goto fail;
    }
    if (fread(*data, 1, *bytes, f) != *bytes) {
        why = "data shorter than the shape says";
        goto fail;
    }
    if (fgetc(f) != EOF) {
        why = "data longer than the shape says";
        goto fail;
    }
    free(header);
    fclose(f);
    return 0;

fail:
    program_error("%s: %s", path, why);
    free(header);
    free(*data);
    *data = NULL;
    *bytes = 0;
    fclose(f);
    return -1;
}
