/* fuzz_cli: libFuzzer target for the shared flag parser (common/cli.c).
 *
 *   make fuzz && bin/fuzz_cli -max_total_time=60
 *
 * The input is split at NUL bytes into argv. Whatever the bytes, the parser must return one of
 * its three codes without crashing or hanging, and a refusal must come with exactly one line
 * naming the problem, which is what every stage prints before exiting 1.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct {
    long long size, batch;
} test_flags;
static test_flags own;
static const char *const variants[] = {"eager", "fused", NULL};
static const char *const variant_help[] = {"two kernels", "one kernel"};
static const stage_opt opts[] = {
    {"size", offsetof(test_flags, size), 1, 32768, "matrix size"},
    {"batch", offsetof(test_flags, batch), 1, 4096, "batch"},
};
static const stage_spec spec = {"fuzz_stage", "fuzzing", variants, variant_help, opts, 2};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (!freopen("/dev/null", "w", stdout)) abort(); /* --help prints; keep the fuzzer's log readable */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_ARGS = 64 };
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 1] = {"fuzz_stage"};
    int argc = 1;
    for (size_t i = 0; i <= size && argc < MAX_ARGS; i += strlen(buf + i) + 1) argv[argc++] = buf + i;
    argv[argc] = NULL;

    common_args a;
    char err[256] = "";
    own.size = 64;
    own.batch = 1;
    int rc = cli_parse_args(argc, argv, &spec, &a, &own, err, sizeof err);
    if (rc != CLI_OK && rc != CLI_ERROR && rc != CLI_HELP) abort();
    if (rc == CLI_ERROR && (err[0] == '\0' || strchr(err, '\n'))) abort(); /* one line, not none */
    if (rc == CLI_OK && (own.size < 1 || own.size > 32768 || own.batch < 1 || own.batch > 4096 || a.sched.active < 1))
        abort(); /* accepted values stay in range */
    free(buf);
    return 0;
}
