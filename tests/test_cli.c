/* CPU tests of the shared flag parser: good input parses, every bad input is refused with a
 * message naming the flag. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stddef.h>

#include "cli.h"
#include "harness.h"
#include "size.h"

typedef struct {
    long long size, batch;
} test_flags;
static test_flags own;
static const test_flags defaults = {.size = 64, .batch = 1};
static const char *const variants[] = {"eager", "fused", NULL};
static const char *const variant_help[] = {"two kernels", "one kernel"};
static const stage_opt opts[] = {
    {"size", offsetof(test_flags, size), 1, 32768, "matrix size", FLAG_WHOLE, 1},
    {"batch", offsetof(test_flags, batch), 1, 64, "batch"},
};
static const stage_spec spec = {"test_stage", "a test", variants, variant_help, opts, 2};

/* The end of an argument list: a typed null pointer, as variadic functions need. */
#define END ((const char *)NULL)

/* Parses an END-terminated list of arguments; err receives the message. */
static int parse(common_args *a, char *err, const char *first, ...)
{
    char *argv[32] = {"prog"};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) argv[argc++] = (char *)s;
    va_end(ap);
    own = defaults;
    err[0] = '\0';
    return cli_parse_args(argc, argv, &spec, a, &own, err, 256);
}

static int test_defaults(void)
{
    common_args a;
    char err[256];
    EXPECT(parse(&a, err, NULL) == CLI_OK, "%s", err);
    EXPECT(strcmp(a.variant, "eager") == 0, "%s", a.variant);
    EXPECT(a.dtype == DTYPE_BF16, "%d", a.dtype);
    EXPECT(a.sched.wait == 1 && a.sched.warmup_steps == 1 && a.sched.active == 3 && a.sched.warmup == 0,
           "schedule %d %d %d %d", a.sched.wait, a.sched.warmup_steps, a.sched.active, a.sched.warmup);
    EXPECT(a.trace && a.plot && a.check && !a.sweep, "switches");
    EXPECT(strcmp(a.out_dir, "traces/test_stage") == 0, "%s", a.out_dir);
    EXPECT(a.dump_dir[0] == 0, "no dump by default");
    EXPECT(own.size == 64, "%lld", own.size);
    return 0;
}

static int test_good_flags(void)
{
    common_args a;
    char err[256];
    EXPECT(parse(&a, err, "--size", "4096", "--variant", "fused", "--dtype", "fp16", "--steps", "100",
                 "--warmup", "5", "--wait=0", "--warmup-steps", "0", "--seed", "18446744073709551615",
                 "--no-trace", "--no-plot", "--sweep", "--out", "x/y", "--batch=8", "--dump", "d", END) == CLI_OK, "%s", err);
    EXPECT(strcmp(a.dump_dir, "d") == 0, "dump dir %s", a.dump_dir);
    EXPECT(own.size == 4096 && own.batch == 8, "%lld %lld", own.size, own.batch);
    EXPECT(strcmp(a.variant, "fused") == 0 && a.dtype == DTYPE_FP16, "variant/dtype");
    EXPECT(a.sched.active == 100 && a.sched.warmup == 5 && a.sched.wait == 0 && a.sched.warmup_steps == 0, "schedule");
    EXPECT(a.seed == 18446744073709551615ull, "seed");
    EXPECT(!a.trace && !a.plot && a.sweep && strcmp(a.out_dir, "x/y") == 0, "switches");
    EXPECT(parse(&a, err, "--variant", "all", END) == CLI_OK, "all is a variant: %s", err);
    return 0;
}

/* Each bad command line must fail with a message containing `needle`. */
#define EXPECT_BAD(needle, ...)                                                              \
    do {                                                                                     \
        EXPECT(parse(&a, err, __VA_ARGS__, END) == CLI_ERROR, "accepted: " #__VA_ARGS__);  \
        EXPECT(strstr(err, needle) != NULL, "message '%s' lacks '%s'", err, needle);        \
        EXPECT(strchr(err, '\n') == NULL, "message is not one line: %s", err);               \
    } while (0)

static int test_bad_flags(void)
{
    common_args a;
    char err[256];
    EXPECT_BAD("unknown flag '--sise'", "--sise", "64");
    EXPECT_BAD("ambiguous flag '--s' (could be --seed, --size, --steps, --sweep)", "--s", "64");
    EXPECT_BAD("ambiguous flag '--s' (could be", "--s=64");
    EXPECT_BAD("unknown flag '--siz' (abbreviations are refused: write --size)", "--siz", "64");
    EXPECT_BAD("--sweep takes no value", "--sweep=1");
    EXPECT_BAD("--no-trace takes no value", "--no-trace=yes");
    EXPECT_BAD("--help takes no value", "--help=1");
    EXPECT_BAD("unknown flag '-s'", "-s", "64");
    EXPECT_BAD("--size needs a value", "--size");
    EXPECT_BAD("'abc' is not a whole number", "--size", "abc");
    EXPECT_BAD("'-3' is not a whole number", "--size", "-3");
    EXPECT_BAD("'+3' is not a whole number", "--size", "+3");
    EXPECT_BAD("'12x' is not a whole number", "--size", "12x");
    EXPECT_BAD("' 12' is not a whole number", "--size", " 12");
    EXPECT_BAD("'1e3' is not a whole number", "--size", "1e3");
    EXPECT_BAD("'0x10' is not a whole number", "--size", "0x10");
    EXPECT_BAD("empty value", "--size=");
    EXPECT_BAD("too small", "--size", "0");
    EXPECT_BAD("too large", "--size", "32769");
    EXPECT_BAD("too large", "--size", "99999999999999999999999");
    EXPECT_BAD("too large", "--batch", "65");
    EXPECT_BAD("unknown variant 'turbo'", "--variant", "turbo");
    EXPECT_BAD("unknown dtype 'bf17'", "--dtype", "bf17");
    EXPECT_BAD("--active: 0 is too small", "--active", "0");
    EXPECT_BAD("--steps: 0 is too small", "--steps", "0");
    EXPECT_BAD("--wait: '-1' is not", "--wait", "-1");
    EXPECT_BAD("--seed: 'x' is not", "--seed", "x");
    EXPECT_BAD("64-bit", "--seed", "18446744073709551616");
    EXPECT_BAD("unexpected argument 'extra'", "extra");
    EXPECT_BAD("unexpected argument '64'", "--size", "8", "64");
    EXPECT_BAD("--out", "--out", "");
    EXPECT_BAD("unexpected argument 'a?b'", "a\nb"); /* the message stays one line */
    EXPECT_BAD("unknown variant 'x?'", "--variant", "x\033");
    return 0;
}

/* What --sweep refuses is the stage's business (run_check_sweep); the parser records what was given. */
static int test_given(void)
{
    common_args a;
    char err[256];
    EXPECT(parse(&a, err, "--sweep", "--size", "128", "--wait", "0", END) == CLI_OK, "%s", err);
    EXPECT(a.given & GIVEN_SWEEP && a.given & GIVEN_WAIT && !(a.given & GIVEN_ACTIVE), "given %x", a.given);
    EXPECT(a.given_own == 1u, "own flags given %x", a.given_own);
    EXPECT(parse(&a, err, "--steps", "5", END) == CLI_OK && a.given & GIVEN_ACTIVE, "--steps is --active");
    return 0;
}

/* A flag given twice, or two flags that would do nothing together: refused by name, not left
 * for the last one to win silently. */
static int test_repeated_and_conflicting(void)
{
    common_args a;
    char err[256];
    EXPECT_BAD("--dtype given twice", "--dtype", "fp16", "--dtype", "bf16");
    EXPECT_BAD("--size given twice", "--size", "8", "--size=16");
    EXPECT_BAD("--no-plot given twice", "--no-plot", "--no-plot");
    EXPECT_BAD("--out given twice", "--out", "a", "--out", "b");
    EXPECT_BAD("--steps and --active are one flag", "--steps", "3", "--active", "4");
    EXPECT_BAD("--active and --steps are one flag", "--active", "3", "--steps", "4");
    EXPECT_BAD("--steps given twice", "--steps", "3", "--steps", "3");
    EXPECT_BAD("--trace-api does nothing with --no-trace", "--no-trace", "--trace-api", "all");
    EXPECT_BAD("--trace-api does nothing with --no-trace", "--trace-api", "kineto", "--no-trace");
    EXPECT_BAD("--sweep does not take --trace-api", "--sweep", "--trace-api", "all");
    EXPECT_BAD("--out: 'a?b' holds a control character (byte 0x0a)", "--out", "a\nb");
    EXPECT_BAD("--dump: 'd?' holds a control character (byte 0x7f)", "--dump", "d\177");
    /* C1 controls (U+0080..U+009F, 0xC2 0x80..0x9F in UTF-8) are control characters too; other
     * UTF-8 passes as it is */
    EXPECT_BAD("--out: 'o?' holds a control character (byte 0x9b)", "--out", "o\xc2\x9b");
    EXPECT_BAD("unknown variant 'a?b'", "--variant", "a\xc2\x85" "b");
    EXPECT_BAD("unknown variant 'caf\xc3\xa9'", "--variant", "caf\xc3\xa9");
    EXPECT(parse(&a, err, "--steps", "5", END) == CLI_OK && a.steps_spelled, "%s", err);
    EXPECT(strcmp(cli_given_name(&a, GIVEN_ACTIVE), "steps") == 0, "named as typed");
    EXPECT(parse(&a, err, "--active", "5", "--out", "o", END) == CLI_OK && !a.steps_spelled, "%s", err);
    EXPECT(strcmp(cli_given_name(&a, GIVEN_ACTIVE | GIVEN_OUT), "active") == 0, "the first of the bits given");
    EXPECT(strcmp(cli_given_name(&a, GIVEN_OUT), "out") == 0, "--out");
    EXPECT(cli_given_name(&a, GIVEN_DUMP) == NULL, "--dump was not given");
    return 0;
}

/* Parses with stdout sent to `path`; returns the parser's code. */
static int parse_to_file(const char *path, common_args *a, char *err, const char *first, const char *second,
                         const char *third)
{
    fflush(stdout);
    FILE *saved = stdout;
    stdout = fopen(path, "w");
    if (!stdout) {
        stdout = saved;
        return -1;
    }
    int rc = parse(a, err, first, second, third, END);
    if (rc == CLI_HELP) cli_print_help(&spec, &defaults);
    fclose(stdout);
    stdout = saved;
    return rc;
}

/* --help prints the usage only when every argument, those after it too, is good; the defaults
 * it shows are the defaults, whatever else is on the line. */
static int test_help(void)
{
    common_args a;
    char err[256], path[] = "/tmp/test_cli_help_XXXXXX", text[8192] = "";
    int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp");
    close(fd);
    EXPECT(parse_to_file(path, &a, err, "--help", END, END) == CLI_HELP, "--help: %s", err);
    EXPECT(parse_to_file(path, &a, err, "--help", "--bogus", END) == CLI_ERROR && strstr(err, "'--bogus'"),
           "--help --bogus: %s", err);
    EXPECT(parse_to_file(path, &a, err, "--help", "--size", "0") == CLI_ERROR && strstr(err, "too small"),
           "--help --size 0: %s", err);
    EXPECT(parse_to_file(path, &a, err, "--help", "--help", END) == CLI_ERROR && strstr(err, "--help given twice"),
           "--help --help: %s", err);
    FILE *f = fopen(path, "r");
    EXPECT(f != NULL, "reopen");
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    EXPECT(n == 0, "a refused --help printed %zu bytes", n);
    EXPECT(parse_to_file(path, &a, err, "--size", "128", "--help") == CLI_HELP, "--size 128 --help: %s", err);
    f = fopen(path, "r");
    EXPECT(f != NULL, "reopen");
    n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(path);
    EXPECT(strstr(text, "usage: test_stage [FLAGS]") && strstr(text, "\nstage flags:\n"), "usage:\n%s", text);
    EXPECT(strstr(text, "matrix size (default 64, 1..32768)"), "the default shown is the default:\n%s", text);
    return 0;
}

static int test_mul(void)
{
    EXPECT(size_mul(3, 5, "x") == 15, "3 x 5");
    EXPECT(size_mul(0, SIZE_MAX, "x") == 0, "0 x max");
    EXPECT(size_mul(SIZE_MAX / 2, 2, "x") == SIZE_MAX - 1, "the largest product that fits");
    /* a product that overflows size_t: exit 1 with one line, in a child */
    fflush(stdout);
    pid_t pid = fork();
    EXPECT(pid >= 0, "fork");
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(3);
        size_mul(SIZE_MAX / 2 + 1, 2, "x");
        _exit(0); /* not reached when the overflow is caught */
    }
    int status;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 1, "overflow must exit 1");
    return 0;
}

int main(void)
{
    TEST_RUN(test_defaults);
    TEST_RUN(test_good_flags);
    TEST_RUN(test_bad_flags);
    TEST_RUN(test_given);
    TEST_RUN(test_repeated_and_conflicting);
    TEST_RUN(test_help);
    TEST_RUN(test_mul);
    TEST_EXIT();
}
