/* CPU tests of the .npy writer and reader (common/npy.h): the header byte by byte, the 64-byte
 * alignment of the data, the dtype codes, shapes, round trips, bad input, and files our writer
 * produced loaded by NumPy itself (SKIP when python3 cannot import numpy). */
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "harness.h"
#include "npy.h"

static char dir[] = "/tmp/npy_test_XXXXXX";

static const char *in_dir(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* The whole file, malloc'ed; *len its size. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    unsigned char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* memmem, which C11 and POSIX lack. */
static const unsigned char *find_bytes(const void *hay, size_t n, const void *needle, size_t m)
{
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (memcmp((const unsigned char *)hay + i, needle, m) == 0) return (const unsigned char *)hay + i;
    return NULL;
}

/* stderr goes to a file while a bad-input case runs, so the test can count its lines. */
static int saved_stderr = -1;
static void capture_stderr(void)
{
    fflush(stderr);
    saved_stderr = dup(2);
    FILE *f = freopen(in_dir("stderr.txt"), "w", stderr);
    (void)f;
}
static int captured_lines(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    size_t len;
    unsigned char *text = slurp(in_dir("stderr.txt"), &len);
    int lines = 0;
    for (size_t i = 0; text && i < len; i++) lines += text[i] == '\n';
    /* the program's name first (program_error), here the default one */
    int starts_with_error = text && len > 16 && memcmp(text, "program: error: ", 16) == 0;
    free(text);
    return starts_with_error ? lines : -1;
}

static int test_header_bytes(void)
{
    const float data[6] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f};
    const size_t shape[2] = {2, 3};
    EXPECT(npy_write(in_dir("h.npy"), DTYPE_FP32, shape, 2, data) == 0, "write");
    size_t len;
    unsigned char *b = slurp(in_dir("h.npy"), &len);
    EXPECT(b != NULL, "read back");
    const char dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    size_t dict_len = sizeof dict - 1;
    /* 10 bytes of prefix + the dict + spaces + '\n' = 128, the next multiple of 64 */
    EXPECT(len == 128 + sizeof data, "file size %zu", len);
    EXPECT(memcmp(b, "\x93NUMPY\x01\x00", 8) == 0, "magic and version 1.0");
    EXPECT(b[8] == 118 && b[9] == 0, "header length 118, little-endian: %u %u", b[8], b[9]);
    EXPECT(memcmp(b + 10, dict, dict_len) == 0, "dict: %.*s", (int)dict_len, (char *)b + 10);
    for (size_t i = 10 + dict_len; i < 127; i++) EXPECT(b[i] == ' ', "space padding at byte %zu", i);
    EXPECT(b[127] == '\n', "newline ends the header");
    EXPECT(memcmp(b + 128, data, sizeof data) == 0, "the data follows, as is");
    free(b);
    return 0;
}

/* The offset of the data in the file at path (0 when unreadable or the header does not end
 * with a newline), its length, and where the dict ends (the byte after its '}'). */
static size_t data_offset(const char *path, size_t *len, size_t *dict_end)
{
    unsigned char *b = slurp(path, len);
    if (!b || *len < 10) {
        free(b);
        return 0;
    }
    size_t offset = 10 + (size_t)b[8] + ((size_t)b[9] << 8);
    int newline = offset <= *len && b[offset - 1] == '\n';
    const unsigned char *brace = newline ? find_bytes(b, offset, "}", 1) : NULL;
    *dict_end = brace ? (size_t)(brace - b) + 1 : 0;
    free(b);
    return brace ? offset : 0;
}

static int test_alignment(void)
{
    /* A zero first dimension keeps the files empty while the other dimensions take 1 to 19
     * digits: the dict's length, and so the padding, goes through every residue mod 64. */
    size_t shape[NPY_MAX_NDIM], len;
    char seen[64] = {0};
    for (int ndim = 1; ndim <= NPY_MAX_NDIM; ndim++) {
        for (int digits = 1; digits <= 19; digits++) {
            shape[0] = 0;
            for (int i = 1; i < ndim; i++) {
                shape[i] = 1;
                for (int d = 1; d < digits; d++) shape[i] = shape[i] * 10 + (size_t)(d % 10);
            }
            EXPECT(npy_write(in_dir("a.npy"), DTYPE_FP32, shape, ndim, NULL) == 0, "write ndim %d", ndim);
            size_t dict_end, offset = data_offset(in_dir("a.npy"), &len, &dict_end);
            EXPECT(offset != 0 && offset % 64 == 0, "ndim %d, %d digits: data at %zu", ndim, digits, offset);
            EXPECT(offset - dict_end <= 64, "no more than 64 bytes of padding: %zu", offset - dict_end);
            EXPECT(len == offset, "an empty array has no data");
            seen[dict_end % 64] = 1;
        }
    }
    int residues = 0;
    for (int i = 0; i < 64; i++) residues += seen[i];
    EXPECT(residues > 32, "the dict lengths covered %d residues mod 64", residues);
    /* ndim 0: a scalar, one element */
    uint16_t one = 0x3F80;
    EXPECT(npy_write(in_dir("a.npy"), DTYPE_BF16, shape, 0, &one) == 0, "write a scalar");
    size_t dict_end, offset = data_offset(in_dir("a.npy"), &len, &dict_end);
    EXPECT(offset == 128 && len == 130, "a scalar: data at %zu, %zu bytes", offset, len);
    return 0;
}

static int test_dtype_codes(void)
{
    EXPECT(strcmp(npy_descr(DTYPE_BF16), "<u2") == 0, "bf16 is stored as raw bits, '<u2'");
    EXPECT(strcmp(npy_descr(DTYPE_FP16), "<f2") == 0, "fp16 is '<f2'");
    EXPECT(strcmp(npy_descr(DTYPE_FP32), "<f4") == 0, "fp32 is '<f4'");
    const dtype_t types[3] = {DTYPE_BF16, DTYPE_FP16, DTYPE_FP32};
    const size_t shape[1] = {5};
    const unsigned char bits[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    for (int i = 0; i < 3; i++) {
        EXPECT(npy_write(in_dir("d.npy"), types[i], shape, 1, bits) == 0, "write %s", dtype_name(types[i]));
        size_t len;
        unsigned char *b = slurp(in_dir("d.npy"), &len);
        EXPECT(b != NULL, "read back");
        char want[32];
        snprintf(want, sizeof want, "'descr': '%s'", npy_descr(types[i]));
        EXPECT(find_bytes(b, len, want, strlen(want)) != NULL, "%s in the header", want);
        EXPECT(len == 128 + 5 * dtype_size(types[i]), "%s: 5 elements of %zu bytes", dtype_name(types[i]),
               dtype_size(types[i]));
        EXPECT(memcmp(b + 128, bits, 5 * dtype_size(types[i])) == 0, "bits unchanged");
        free(b);
    }
    return 0;
}

static int test_shapes(void)
{
    struct {
        int ndim;
        size_t shape[3];
        const char *text;
    } cases[] = {
        {0, {0}, "'shape': (), }"},
        {1, {7}, "'shape': (7,), }"},
        {1, {1}, "'shape': (1,), }"},
        {2, {4, 5}, "'shape': (4, 5), }"},
        {2, {1, 5}, "'shape': (1, 5), }"},
        {3, {2, 1, 3}, "'shape': (2, 1, 3), }"},
        {3, {8192, 768, 1}, "'shape': (8192, 768, 1), }"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t bytes;
        EXPECT(npy_nbytes(DTYPE_FP16, cases[c].shape, cases[c].ndim, &bytes) == 0, "nbytes");
        void *data = calloc(bytes ? bytes : 1, 1);
        EXPECT(data != NULL, "alloc");
        int rc = npy_write(in_dir("s.npy"), DTYPE_FP16, cases[c].shape, cases[c].ndim, data);
        free(data);
        EXPECT(rc == 0, "write %s", cases[c].text);
        size_t len;
        unsigned char *b = slurp(in_dir("s.npy"), &len);
        EXPECT(b && find_bytes(b, len, cases[c].text, strlen(cases[c].text)) != NULL, "header holds %s", cases[c].text);
        free(b);
        char descr[16];
        size_t shape[NPY_MAX_NDIM], got_bytes;
        int ndim;
        void *got;
        EXPECT(npy_read(in_dir("s.npy"), descr, sizeof descr, shape, &ndim, &got, &got_bytes) == 0, "read");
        free(got);
        EXPECT(ndim == cases[c].ndim && got_bytes == bytes, "%s: ndim %d, %zu bytes", cases[c].text, ndim, got_bytes);
        for (int i = 0; i < ndim; i++) EXPECT(shape[i] == cases[c].shape[i], "dimension %d", i);
    }
    return 0;
}

static int test_round_trip(void)
{
    const dtype_t types[3] = {DTYPE_BF16, DTYPE_FP16, DTYPE_FP32};
    const size_t shape[3] = {3, 17, 5};
    uint32_t state = 12345;
    for (int t = 0; t < 3; t++) {
        size_t bytes;
        EXPECT(npy_nbytes(types[t], shape, 3, &bytes) == 0 && bytes == 255 * dtype_size(types[t]), "nbytes");
        unsigned char *data = malloc(bytes);
        EXPECT(data != NULL, "alloc");
        for (size_t i = 0; i < bytes; i++) {
            state = state * 1664525u + 1013904223u;
            data[i] = (unsigned char)(state >> 24);
        }
        int rc = npy_write(in_dir("r.npy"), types[t], shape, 3, data);
        char descr[16];
        size_t got_shape[NPY_MAX_NDIM], got_bytes = 0;
        int ndim = 0;
        void *got = NULL;
        if (rc == 0) rc = npy_read(in_dir("r.npy"), descr, sizeof descr, got_shape, &ndim, &got, &got_bytes);
        int same = rc == 0 && got_bytes == bytes && memcmp(got, data, bytes) == 0;
        free(data);
        free(got);
        EXPECT(rc == 0, "%s: write then read", dtype_name(types[t]));
        EXPECT(strcmp(descr, npy_descr(types[t])) == 0, "descr %s", descr);
        EXPECT(ndim == 3 && got_shape[0] == 3 && got_shape[1] == 17 && got_shape[2] == 5, "shape");
        EXPECT(same, "%s: the same bits back", dtype_name(types[t]));
    }
    return 0;
}

/* Writes raw bytes as a file, for the reader's bad-input cases. */
static int write_raw(const char *name, const void *bytes, size_t len)
{
    FILE *f = fopen(in_dir(name), "wb");
    if (!f) return -1;
    size_t n = fwrite(bytes, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

static int read_fails_with_one_line(const char *name)
{
    char descr[16];
    size_t shape[NPY_MAX_NDIM], bytes;
    int ndim;
    void *data = (void *)1;
    capture_stderr();
    int rc = npy_read(in_dir(name), descr, sizeof descr, shape, &ndim, &data, &bytes);
    int lines = captured_lines();
    return rc == -1 && data == NULL && lines == 1 ? 0 : -1;
}

static int test_bad_input(void)
{
    /* A directory that cannot exist (its parent is a file): fails even for root. */
    EXPECT(write_raw("plain_file", "x", 1) == 0, "setup");
    char path[300];
    snprintf(path, sizeof path, "%s/y.npy", in_dir("plain_file"));
    float v = 1.0f;
    size_t shape[1] = {1};
    capture_stderr();
    int rc = npy_write(path, DTYPE_FP32, shape, 1, &v);
    int lines = captured_lines();
    EXPECT(rc == -1, "unwritable directory: -1");
    EXPECT(lines == 1, "unwritable directory: one line starting with 'program: error: ', got %d", lines);

    capture_stderr();
    rc = npy_write(in_dir("too_many.npy"), DTYPE_FP32, shape, NPY_MAX_NDIM + 1, &v);
    lines = captured_lines();
    EXPECT(rc == -1 && lines == 1, "too many dimensions: -1 and one line");
    size_t huge[2] = {SIZE_MAX / 2, 3};
    capture_stderr();
    rc = npy_write(in_dir("huge.npy"), DTYPE_FP32, huge, 2, &v);
    lines = captured_lines();
    EXPECT(rc == -1 && lines == 1, "an overflowing shape: -1 and one line");
    EXPECT(access(in_dir("huge.npy"), F_OK) != 0, "nothing written for a refused shape");

    /* The reader: each broken file gives -1, no data, one line. */
    EXPECT(read_fails_with_one_line("missing.npy") == 0, "missing file");
    EXPECT(write_raw("text.npy", "hello, world\n", 13) == 0 && read_fails_with_one_line("text.npy") == 0,
           "not a .npy file");
    const size_t shape2[2] = {2, 3};
    const float data[6] = {0};
    EXPECT(npy_write(in_dir("good.npy"), DTYPE_FP32, shape2, 2, data) == 0, "setup");
    size_t len;
    unsigned char *good = slurp(in_dir("good.npy"), &len);
    EXPECT(good != NULL, "setup");
    int bad = write_raw("short.npy", good, len - 4) || read_fails_with_one_line("short.npy");
    EXPECT(!bad, "data shorter than the shape");
    unsigned char *longer = malloc(len + 4);
    EXPECT(longer != NULL, "alloc");
    memcpy(longer, good, len);
    memset(longer + len, 0, 4);
    bad = write_raw("long.npy", longer, len + 4) || read_fails_with_one_line("long.npy");
    free(longer);
    EXPECT(!bad, "data longer than the shape");
    bad = write_raw("header_cut.npy", good, 40) || read_fails_with_one_line("header_cut.npy");
    EXPECT(!bad, "header cut short");
    /* The same header with one field changed at a time (same lengths, so the data still fits). */
    const struct {
        const char *from, *to, *name;
    } edits[] = {
        {"False", "True ", "fortran.npy"},
        {"'<f4'", "'>f4'", "big_endian.npy"},
        {"'<f4'", "'<c?'", "bad_descr.npy"},
        {"(2, 3)", "[2, 3]", "bad_shape.npy"},
        {"'descr'", "'dscr' ", "no_descr.npy"},
    };
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        unsigned char *copy = malloc(len);
        EXPECT(copy != NULL, "alloc");
        memcpy(copy, good, len);
        const unsigned char *at = find_bytes(copy, 128, edits[e].from, strlen(edits[e].from));
        EXPECT(at != NULL, "setup: %s", edits[e].from);
        memcpy(copy + (at - copy), edits[e].to, strlen(edits[e].to));
        bad = write_raw(edits[e].name, copy, len) || read_fails_with_one_line(edits[e].name);
        free(copy);
        EXPECT(!bad, "%s is refused", edits[e].name);
    }
    free(good);
    return 0;
}

static int have_numpy(void)
{
    char *probe[] = {"python3", "-c", "import numpy", NULL};
    return run_argv(probe, 1) == 0;
}

/* NumPy loads what we wrote (dtype, shape, values; bf16 through the documented bit
 * convention), and we read what NumPy wrote. */
static int test_numpy_loads_ours(void)
{
    if (!have_numpy()) SKIP("python3 cannot import numpy (install python3-numpy to run this test)");

    const size_t shape[2] = {2, 3};
    const float values[6] = {-2.0f, -0.5f, 0.0f, 0.25f, 1.5f, 3.0f}; /* exact in every dtype */
    float rounded[6];
    uint16_t bf16[6], fp16[6];
    memcpy(rounded, values, sizeof values);
    dtype_round_and_pack(DTYPE_BF16, rounded, bf16, 6);
    memcpy(rounded, values, sizeof values);
    dtype_round_and_pack(DTYPE_FP16, rounded, fp16, 6);
    EXPECT(npy_write(in_dir("np_bf16.npy"), DTYPE_BF16, shape, 2, bf16) == 0, "write bf16");
    EXPECT(npy_write(in_dir("np_fp16.npy"), DTYPE_FP16, shape, 2, fp16) == 0, "write fp16");
    EXPECT(npy_write(in_dir("np_fp32.npy"), DTYPE_FP32, shape, 2, values) == 0, "write fp32");
    const size_t shape3[3] = {2, 1, 3};
    EXPECT(npy_write(in_dir("np_3d.npy"), DTYPE_FP32, shape3, 3, values) == 0, "write 3-D");

    char *check[] = {"python3", "-c",
                     "import numpy as np, sys\n"
                     "d = sys.argv[1]\n"
                     "want = np.array([[-2.0, -0.5, 0.0], [0.25, 1.5, 3.0]], dtype=np.float32)\n"
                     "a = np.load(d + '/np_fp32.npy'); assert a.dtype == np.float32 and a.shape == (2, 3), a\n"
                     "assert (a == want).all(), a\n"
                     "a = np.load(d + '/np_fp16.npy'); assert a.dtype == np.float16 and (a == want).all(), a\n"
                     "a = np.load(d + '/np_bf16.npy'); assert a.dtype == np.uint16 and a.shape == (2, 3), a\n"
                     "assert ((a.astype(np.uint32) << 16).view(np.float32) == want).all(), a\n"
                     "a = np.load(d + '/np_3d.npy'); assert a.shape == (2, 1, 3) and (a.reshape(2, 3) == want).all()\n"
                     "np.save(d + '/from_numpy.npy', np.arange(12, dtype='<f2').reshape(3, 4))\n",
                     dir, NULL};
    EXPECT(run_argv(check, 0) == 0, "NumPy loads our files with the right dtype, shape and values");

    char descr[16];
    size_t got_shape[NPY_MAX_NDIM], bytes;
    int ndim;
    void *data;
    EXPECT(npy_read(in_dir("from_numpy.npy"), descr, sizeof descr, got_shape, &ndim, &data, &bytes) == 0,
           "we read NumPy's file");
    float got[12];
    dtype_unpack(DTYPE_FP16, data, got, 12);
    free(data);
    EXPECT(strcmp(descr, "<f2") == 0 && ndim == 2 && got_shape[0] == 3 && got_shape[1] == 4, "descr and shape");
    for (int i = 0; i < 12; i++) EXPECT(got[i] == (float)i, "value %d: %g", i, got[i]);
    return 0;
}

/* The compare scripts' loader (compare/common.py) reads our files as the values we wrote, and
 * finds the relative error between two of them: the path --load takes, without PyTorch. */
static int test_compare_scripts_read_ours(void)
{
    if (!have_numpy()) SKIP("python3 cannot import numpy (install python3-numpy to run this test)");
    if (access("compare/common.py", R_OK) != 0) SKIP("compare/common.py not found from this directory");
    const size_t shape[2] = {2, 2};
    float a[4] = {1.0f, -2.0f, 0.5f, 4.0f}, b[4] = {1.0f, -2.0f, 0.5f, 4.0f};
    uint16_t bits[4], bits_b[4];
    b[3] = 4.03125f; /* one bf16 step above 4 */
    dtype_round_and_pack(DTYPE_BF16, a, bits, 4);
    dtype_round_and_pack(DTYPE_BF16, b, bits_b, 4);
    EXPECT(npy_write(in_dir("y.npy"), DTYPE_BF16, shape, 2, bits) == 0, "write y");
    EXPECT(npy_write(in_dir("y_other.npy"), DTYPE_BF16, shape, 2, bits_b) == 0, "write y_other");
    char *check[] = {"python3", "-c",
                     "import sys, math; sys.path.insert(0, 'compare'); import common\n"
                     "d = sys.argv[1]\n"
                     "assert common.outputs_in(d) == ['y', 'y_other'], common.outputs_in(d)\n"
                     "y = common.to_float64(common.load_npy(d, 'y', 'bf16'), 'bf16')\n"
                     "assert y.tolist() == [[1.0, -2.0], [0.5, 4.0]], y\n"
                     "o = common.to_float64(common.load_npy(d, 'y_other', 'bf16'), 'bf16')\n"
                     "err = common.rel_fro_error(o, y)\n"
                     "assert abs(err - 0.03125 / math.sqrt(1 + 4 + 0.25 + 16)) < 1e-12, err\n",
                     dir, NULL};
    EXPECT(run_argv(check, 0) == 0, "compare/common.py decodes our bf16 files and measures their difference");
    return 0;
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    TEST_RUN(test_header_bytes);
    TEST_RUN(test_alignment);
    TEST_RUN(test_dtype_codes);
    TEST_RUN(test_shapes);
    TEST_RUN(test_round_trip);
    TEST_RUN(test_bad_input);
    TEST_RUN(test_numpy_loads_ours);
    TEST_RUN(test_compare_scripts_read_ours);
    if (remove_tree(dir) != 0) printf("note: could not remove %s\n", dir);
    TEST_EXIT();
}
