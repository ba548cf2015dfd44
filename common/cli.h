/* cli.h: the flags every stage shares, plus the stage's own, parsed strictly.
 *
 * A stage describes itself in a stage_spec (its variants and its own numeric flags); cli_parse
 * handles the shared flags, --help, and every kind of bad input with one line and exit code 1.
 */
#ifndef CLI_H
#define CLI_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

/* The articles' profiler schedule: `wait` steps run untraced, `warmup_steps` run traced-but-
 * discarded, `active` steps are recorded (ProfileStep#N). `warmup` iterations run before all of
 * it, untimed: 0 (the default) keeps the first step cold, as in the articles. */
typedef struct {
    int wait, warmup_steps, active, warmup;
} schedule_t;

typedef struct {
    const char *variant; /* one of the stage's variants, or "all" */
    dtype_t dtype;
    uint64_t seed;
    schedule_t sched;
    int sweep;    /* --sweep: the stage's size sweep instead of one run */
    int trace;    /* our CUPTI trace pass (on unless --no-trace) */
    int plot;     /* gnuplot figures (on unless --no-plot) */
    int check;    /* correctness check against the CPU reference (on unless --no-check) */
    char out_dir[512]; /* traces/<stage> unless --out DIR */
    char dump_dir[512]; /* --dump DIR: inputs, weights and output as .npy files; "" if not given */
} common_args;

/* A stage's own numeric flag, e.g. --size: a whole number in [min, max]. */
typedef struct {
    const char *name;
    long long *value; /* holds the default on entry */
    long long min, max;
    const char *help;
} stage_opt;

typedef struct {
    const char *stage;   /* "01_matmul_add" */
    const char *summary; /* one line for --help */
    const char *const *variants; /* NULL-terminated; the first is the default */
    const char *const *variant_help; /* one line per variant */
    const stage_opt *opts;
    int n_opts;
} stage_spec;

enum { CLI_OK = 0, CLI_ERROR = 1, CLI_HELP = 2 };

/* Parses argv into args and the stage's option values. Returns CLI_OK, CLI_HELP (after printing
 * the help to stdout), or CLI_ERROR with a one-line message in err. Never exits: tests call it. */
int cli_parse_args(int argc, char **argv, const stage_spec *spec, common_args *args, char *err,
                   size_t err_len);
/* The same for programs: prints the error to stderr and exits 1, or exits 0 after --help. */
void cli_parse(int argc, char **argv, const stage_spec *spec, common_args *args);

/* a * b, or exit 1 with "error: <what> overflows" when the product does not fit in size_t. */
size_t cli_mul(size_t a, size_t b, const char *what);

#endif
