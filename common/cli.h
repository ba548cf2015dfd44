/* cli.h: one flag parser for every program here (the stages and bench/), strict.
 *
 * A program describes its flags in a stage_spec; cli_parse_args handles them, the shared flags
 * of the stages, --help, and every kind of bad input with one line.
 *
 * One rule for spelling: a flag is written in full, as `--name value` or `--name=value`.
 * Abbreviations are refused, naming the flags they could mean ("ambiguous flag '--s' (could be
 * --seed, --size, --steps)"), so a command line in a script means the same after a flag is
 * added.
 */
#ifndef CLI_H
#define CLI_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "schedule.h"

/* The shared flags of the stages, as bits of common_args.given. */
enum {
    GIVEN_VARIANT = 1 << 0, GIVEN_DTYPE = 1 << 1, GIVEN_SEED = 1 << 2, GIVEN_WAIT = 1 << 3,
    GIVEN_WARMUP_STEPS = 1 << 4, GIVEN_ACTIVE = 1 << 5, GIVEN_WARMUP = 1 << 6, GIVEN_SWEEP = 1 << 7,
    GIVEN_NO_TRACE = 1 << 8, GIVEN_NO_PLOT = 1 << 9, GIVEN_NO_CHECK = 1 << 10, GIVEN_OUT = 1 << 11,
    GIVEN_DUMP = 1 << 12, GIVEN_TRACE_API = 1 << 13, GIVEN_HOLD = 1 << 14,
};

typedef struct {
    const char *variant; /* one of the stage's variants, or the name that runs them all */
    dtype_t dtype;
    uint64_t seed;
    schedule_t sched;
    int sweep;    /* --sweep: the stage's size sweep instead of one run */
    int trace;    /* our CUPTI trace pass (on unless --no-trace) */
    int plot;     /* gnuplot figures (on unless --no-plot) */
    int check;    /* correctness check against the CPU reference (on unless --no-check) */
    char out_dir[512]; /* traces/<stage> unless --out DIR */
    char dump_dir[512]; /* --dump DIR: inputs, weights and output as .npy files; "" if not given */
    int trace_api_all;  /* --trace-api all: every CUDA API call in the trace, not Kineto's set */
    int hold_s;         /* --hold S: S seconds back to back at the end, clocks sampled throughout */
    unsigned given;     /* GIVEN_* bits: the shared flags on the command line */
    unsigned given_own; /* bit i: the program's own flag i was on the command line */
    int steps_spelled;  /* the active steps came as --steps, not --active */
} common_args;

/* A program's own flag. Its value lives in the program's struct of flag values, `offset` bytes
 * in (offsetof), which holds the default before parsing:
 *   FLAG_WHOLE   --name N, a whole number in [min, max], into a long long
 *   FLAG_SWITCH  --name, sets a long long to 1
 *   FLAG_WORD    --name TEXT into a const char * (the default, or NULL); the program checks it.
 *                Empty text, or text holding a control character, is refused here, as for --out
 *                and --dump: the program's messages quote the text on one line.
 * swept: --sweep varies this quantity itself, so the two together are refused. */
typedef enum { FLAG_WHOLE, FLAG_SWITCH, FLAG_WORD } flag_kind;
typedef struct {
    const char *name;
    size_t offset;
    long long min, max;
    const char *help;
    flag_kind kind;
    int swept;
} stage_opt;

/* The value of flag `o` in the struct of flag values `values`. */
static inline long long *stage_opt_whole(const stage_opt *o, void *values)
{
    return (long long *)((char *)values + o->offset);
}
static inline const char **stage_opt_word(const stage_opt *o, void *values)
{
    return (const char **)((char *)values + o->offset);
}

typedef struct {
    const char *stage;   /* "01_matmul_add": the program's name in --help and in every error */
    const char *summary; /* one line for --help */
    const char *const *variants; /* NULL-terminated; the first is the default */
    const char *const *variant_help; /* one line per variant */
    const stage_opt *opts;
    int n_opts;
    const char *all_name; /* the --variant value that runs every variant: "all" when NULL */
    int own_flags_only;   /* a tool, not a stage: only its own flags and --help */
    int all_is_default;   /* with no --variant, every variant runs */
} stage_spec;

enum { CLI_OK = 0, CLI_ERROR = 1, CLI_HELP = 2 };

/* Parses argv into args and the program's own flag values (`values`: the struct the opts'
 * offsets point into; NULL when the program has none). Returns CLI_OK, CLI_HELP (--help was on
 * a line with nothing wrong in it: the caller makes its own checks, then prints the help with
 * cli_print_help), or CLI_ERROR with a one-line message in err. Never exits: tests call it.
 * Refused besides bad values: a flag given twice (--steps and --active are one flag), and shared
 * flags that would do nothing together (--trace-api with --no-trace or --sweep, which write no
 * trace). */
int cli_parse_args(int argc, char **argv, const stage_spec *spec, common_args *args, void *values, char *err,
                   size_t err_len);
/* The same for programs: names the program for program_error, prints an error as
 * "<program>: error: ..." and exits 1; returns CLI_OK or CLI_HELP. */
int cli_parse(int argc, char **argv, const stage_spec *spec, common_args *args, void *values);
/* The usage on stdout; `defaults` is the program's struct of flag values before parsing (NULL
 * when it has none), whose whole numbers the help shows as defaults. */
void cli_print_help(const stage_spec *spec, const void *defaults);
/* The name of a shared flag among the GIVEN_* `bits` that was on the command line, as typed
 * ("out"; "steps" or "active"), or NULL when none was: what a program names when it refuses a
 * flag it would ignore. */
const char *cli_given_name(const common_args *args, unsigned bits);

#endif
