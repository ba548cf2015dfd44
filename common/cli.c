#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shared flags: their getopt ids sit above any character so they never clash with stage flags,
 * which get ids STAGE_BASE + index. */
enum {
    OPT_VARIANT = 1000, OPT_DTYPE, OPT_SEED, OPT_WAIT, OPT_WARMUP_STEPS, OPT_ACTIVE, OPT_STEPS,
    OPT_WARMUP, OPT_SWEEP, OPT_NO_TRACE, OPT_NO_PLOT, OPT_NO_CHECK, OPT_OUT, OPT_DUMP, OPT_HELP,
    STAGE_BASE = 2000
};

static const struct option shared_opts[] = {
    {"variant", required_argument, NULL, OPT_VARIANT},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"wait", required_argument, NULL, OPT_WAIT},
    {"warmup-steps", required_argument, NULL, OPT_WARMUP_STEPS},
    {"active", required_argument, NULL, OPT_ACTIVE},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"sweep", no_argument, NULL, OPT_SWEEP},
    {"no-trace", no_argument, NULL, OPT_NO_TRACE},
    {"no-plot", no_argument, NULL, OPT_NO_PLOT},
    {"no-check", no_argument, NULL, OPT_NO_CHECK},
    {"out", required_argument, NULL, OPT_OUT},
    {"dump", required_argument, NULL, OPT_DUMP},
    {"help", no_argument, NULL, OPT_HELP},
};
#define N_SHARED (int)(sizeof shared_opts / sizeof shared_opts[0])
#define MAX_STAGE_OPTS 16
#define MAX_STEPS 100000

/* The message quotes what the user typed: control characters in it become '?', so the
 * message stays one line whatever the input. */
static void set_err(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7F) *p = '?';
}

/* Accepts only plain decimal digits: no sign, no spaces, no hex, no trailing text. */
static int parse_whole(const char *flag, const char *s, long long min, long long max,
                       long long *out, char *err, size_t len)
{
    if (*s == '\0') {
        set_err(err, len, "--%s needs a number, got an empty value", flag);
        return -1;
    }
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') {
            set_err(err, len, "--%s: '%s' is not a whole number >= %lld", flag, s, min);
            return -1;
        }
    }
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno == ERANGE || v > (unsigned long long)max) {
        set_err(err, len, "--%s: %s is too large (at most %lld)", flag, s, max);
        return -1;
    }
    if ((long long)v < min) {
        set_err(err, len, "--%s: %s is too small (at least %lld)", flag, s, min);
        return -1;
    }
    *out = (long long)v;
    return 0;
}

static int parse_seed(const char *s, uint64_t *out, char *err, size_t len)
{
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') {
            set_err(err, len, "--seed: '%s' is not a whole number", s);
            return -1;
        }
    }
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (*s == '\0' || errno == ERANGE) {
        set_err(err, len, "--seed: '%s' is not a 64-bit whole number", s);
        return -1;
    }
    *out = v;
    return 0;
}

static void print_help(const stage_spec *spec, const common_args *d)
{
    printf("usage: %s [FLAGS]\n%s\n\nvariants (--variant NAME, or 'all' to compare them in one run):\n",
           spec->stage, spec->summary);
    for (int i = 0; spec->variants[i]; i++)
        printf("  %-16s %s%s\n", spec->variants[i], spec->variant_help[i], i == 0 ? " (default)" : "");
    printf("\nstage flags:\n");
    for (int i = 0; i < spec->n_opts; i++) {
        const stage_opt *o = &spec->opts[i];
        printf("  --%-14s %s (default %lld, %lld..%lld)\n", o->name, o->help, *o->value, o->min, o->max);
    }
    printf("\nshared flags:\n"
           "  --dtype T        bf16 | fp16 | fp32 storage, fp32 accumulation (default %s)\n"
           "  --seed N         seed of the random inputs (default %llu)\n"
           "  --wait N         schedule: steps run but not recorded (default %d)\n"
           "  --warmup-steps N schedule: steps run, recorded, then discarded (default %d)\n"
           "  --active N       schedule: steps recorded as ProfileStep#N (default %d)\n"
           "  --steps N        the same as --active, e.g. --steps 100 for a distribution\n"
           "  --warmup N       untimed iterations before the schedule; 0 keeps step 0 cold (default %d)\n"
           "  --sweep          sweep the stage's sizes instead of one run (crossover plot)\n"
           "  --no-trace       skip the CUPTI trace pass (.json timeline and .txt table)\n"
           "  --no-plot        skip the gnuplot figures\n"
           "  --no-check       skip the check against the CPU reference\n"
           "  --out DIR        output directory (default traces/%s)\n"
           "  --dump DIR       write inputs, weights and output as .npy files (for compare/)\n"
           "  --help           this text\n",
           dtype_name(d->dtype), (unsigned long long)d->seed, d->sched.wait, d->sched.warmup_steps,
           d->sched.active, d->sched.warmup, spec->stage);
}

static int find_variant(const stage_spec *spec, const char *name)
{
    if (strcmp(name, "all") == 0) return 1;
    for (int i = 0; spec->variants[i]; i++)
        if (strcmp(spec->variants[i], name) == 0) return 1;
    return 0;
}

int cli_parse_args(int argc, char **argv, const stage_spec *spec, common_args *args, char *err,
                   size_t err_len)
{
    *args = (common_args){
        .variant = spec->variants[0], .dtype = DTYPE_BF16, .seed = 1234,
        .sched = {.wait = 1, .warmup_steps = 1, .active = 3, .warmup = 0},
        .trace = 1, .plot = 1, .check = 1,
    };
    snprintf(args->out_dir, sizeof args->out_dir, "traces/%s", spec->stage);
    if (spec->n_opts > MAX_STAGE_OPTS) {
        set_err(err, err_len, "internal: too many stage flags");
        return CLI_ERROR;
    }

    struct option opts[N_SHARED + MAX_STAGE_OPTS + 1];
    memcpy(opts, shared_opts, sizeof shared_opts);
    for (int i = 0; i < spec->n_opts; i++)
        opts[N_SHARED + i] = (struct option){spec->opts[i].name, required_argument, NULL, STAGE_BASE + i};
    opts[N_SHARED + spec->n_opts] = (struct option){0};

    optind = 0; /* full re-initialisation, so tests can parse many command lines */
    opterr = 0;
    long long v;
    for (;;) {
        int prev = optind ? optind : 1;
        int c = getopt_long(argc, argv, "+:", opts, NULL);
        if (c == -1) break;
        const char *arg = optarg;
        switch (c) {
        case OPT_VARIANT:
            if (!find_variant(spec, arg)) {
                set_err(err, err_len, "--variant: unknown variant '%s' (see --help)", arg);
                return CLI_ERROR;
            }
            args->variant = arg;
            break;
        case OPT_DTYPE:
            if (dtype_parse(arg, &args->dtype) != 0) {
                set_err(err, err_len, "--dtype: unknown dtype '%s' (bf16, fp16 or fp32)", arg);
                return CLI_ERROR;
            }
            break;
        case OPT_SEED:
            if (parse_seed(arg, &args->seed, err, err_len)) return CLI_ERROR;
            break;
        case OPT_WAIT:
        case OPT_WARMUP_STEPS:
        case OPT_WARMUP:
        case OPT_ACTIVE:
        case OPT_STEPS: {
            const char *flag = opts[c - OPT_VARIANT].name;
            long long min = (c == OPT_ACTIVE || c == OPT_STEPS) ? 1 : 0;
            if (parse_whole(flag, arg, min, MAX_STEPS, &v, err, err_len)) return CLI_ERROR;
            if (c == OPT_WAIT) args->sched.wait = (int)v;
            else if (c == OPT_WARMUP_STEPS) args->sched.warmup_steps = (int)v;
            else if (c == OPT_WARMUP) args->sched.warmup = (int)v;
            else args->sched.active = (int)v;
            break;
        }
        case OPT_SWEEP: args->sweep = 1; break;
        case OPT_NO_TRACE: args->trace = 0; break;
        case OPT_NO_PLOT: args->plot = 0; break;
        case OPT_NO_CHECK: args->check = 0; break;
        case OPT_OUT:
        case OPT_DUMP: {
            char *dst = c == OPT_OUT ? args->out_dir : args->dump_dir;
            if (*arg == '\0' || strlen(arg) >= sizeof args->out_dir - 64) {
                set_err(err, err_len, "--%s: directory name empty or too long", c == OPT_OUT ? "out" : "dump");
                return CLI_ERROR;
            }
            snprintf(dst, sizeof args->out_dir, "%s", arg);
            break;
        }
        case OPT_HELP: print_help(spec, args); return CLI_HELP;
        case ':':
            set_err(err, err_len, "%s needs a value", argv[prev]);
            return CLI_ERROR;
        case '?':
            set_err(err, err_len, "unknown flag '%s' (see --help)", argv[prev]);
            return CLI_ERROR;
        default: {
            const stage_opt *o = &spec->opts[c - STAGE_BASE];
            if (parse_whole(o->name, arg, o->min, o->max, o->value, err, err_len)) return CLI_ERROR;
        }
        }
    }
    if (optind < argc) {
        set_err(err, err_len, "unexpected argument '%s' (flags start with --; see --help)", argv[optind]);
        return CLI_ERROR;
    }
    return CLI_OK;
}

void cli_parse(int argc, char **argv, const stage_spec *spec, common_args *args)
{
    char err[256];
    int rc = cli_parse_args(argc, argv, spec, args, err, sizeof err);
    if (rc == CLI_HELP) exit(0);
    if (rc == CLI_ERROR) {
        fprintf(stderr, "%s: error: %s\n", spec->stage, err);
        exit(1);
    }
}

size_t cli_mul(size_t a, size_t b, const char *what)
{
    if (a != 0 && b > SIZE_MAX / a) {
        fprintf(stderr, "error: %s overflows (%zu x %zu)\n", what, a, b);
        exit(1);
    }
    return a * b;
}
