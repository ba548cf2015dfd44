#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

#define MAX_STEPS 100000

/* The stages' shared flags; `given` is the bit common_args.given records. */
typedef struct {
    const char *name;
    int takes_value;
    unsigned given;
} shared_flag;

static const shared_flag shared_flags[] = {
    {"variant", 1, GIVEN_VARIANT},   {"dtype", 1, GIVEN_DTYPE},        {"seed", 1, GIVEN_SEED},
    {"wait", 1, GIVEN_WAIT},         {"warmup-steps", 1, GIVEN_WARMUP_STEPS},
    {"active", 1, GIVEN_ACTIVE},     {"steps", 1, GIVEN_ACTIVE},       {"warmup", 1, GIVEN_WARMUP},
    {"sweep", 0, GIVEN_SWEEP},       {"no-trace", 0, GIVEN_NO_TRACE},  {"no-plot", 0, GIVEN_NO_PLOT},
    {"no-check", 0, GIVEN_NO_CHECK}, {"out", 1, GIVEN_OUT},            {"dump", 1, GIVEN_DUMP},
    {"trace-api", 1, GIVEN_TRACE_API}, {"hold", 1, GIVEN_HOLD},
};
#define N_SHARED (int)(sizeof shared_flags / sizeof shared_flags[0])

/* The length of the control character at p, or 0: C0 (below 0x20), DEL, and C1 (U+0080..U+009F,
 * written in UTF-8 as 0xC2 0x80..0x9F), which terminals also act on. */
static int control_at(const unsigned char *p)
{
    if (*p < 0x20 || *p == 0x7F) return 1;
    return p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F ? 2 : 0;
}

/* The message quotes what the user typed: control characters in it become '?', so the
 * message stays one line whatever the input. */
static void set_err(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    char *out = err;
    for (const unsigned char *p = (const unsigned char *)err; *p;) {
        const int n = control_at(p);
        *out++ = n ? '?' : (char)*p;
        p += n ? n : 1;
    }
    *out = '\0';
}

/* Text that messages quote, or a path that they print, must be one line: a control character in
 * it is refused by name. Returns 0, or -1 with the message set. */
static int refuse_control(const char *flag, const char *s, char *err, size_t len)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (control_at(p)) {
            set_err(err, len, "--%s: '%s' holds a control character (byte 0x%02x), which is refused", flag, s,
                    *p == 0xC2 ? p[1] : *p);
            return -1;
        }
    return 0;
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

static const char *all_name(const stage_spec *spec) { return spec->all_name ? spec->all_name : "all"; }

/* d: the shared flags' defaults; own_default[i]: own flag i's (the values before parsing). */
static void print_help(const stage_spec *spec, const common_args *d, const long long *own_default)
{
    printf("usage: %s [FLAGS]\n%s\n", spec->stage, spec->summary);
    printf("Flags are written in full (--name VALUE or --name=VALUE); abbreviations are refused.\n");
    if (!spec->own_flags_only && spec->variants) {
        printf("\n  --variant NAME   which forward to run (default %s):\n",
               spec->all_is_default ? all_name(spec) : spec->variants[0]);
        for (int i = 0; spec->variants[i]; i++)
            printf("      %-14s %s\n", spec->variants[i], spec->variant_help[i]);
        printf("      %-14s every variant above in one run, then a comparison%s\n", all_name(spec),
               spec->all_name ? " (also: all)" : "");
    }
    if (spec->n_opts) printf("\n%s:\n", spec->own_flags_only ? "flags" : "stage flags");
    for (int i = 0; i < spec->n_opts; i++) {
        const stage_opt *o = &spec->opts[i];
        char name[64];
        snprintf(name, sizeof name, "%s%s", o->name, o->kind == FLAG_SWITCH ? "" : o->kind == FLAG_WORD ? " TEXT" : " N");
        if (o->kind == FLAG_WHOLE)
            printf("  --%-16s %s (default %lld, %lld..%lld)%s\n", name, o->help, own_default[i], o->min, o->max,
                   o->swept ? "; --sweep varies it" : "");
        else
            printf("  --%-16s %s\n", name, o->help);
    }
    printf("  --%-16s this text\n", "help");
    if (spec->own_flags_only) return;
    printf("\nshared flags:\n"
           "  --dtype T          bf16 | fp16 | fp32 storage, fp32 accumulation (default %s)\n"
           "  --seed N           seed of the random inputs (default %llu)\n"
           "  --wait N           schedule: steps run but not recorded (default %d)\n"
           "  --warmup-steps N   schedule: steps run, recorded, then discarded (default %d)\n"
           "  --active N         schedule: steps recorded as ProfilerStep#N (default %d)\n"
           "  --steps N          the same as --active, e.g. --steps 100 for a distribution\n"
           "  --warmup N         untimed iterations before the schedule; 0 keeps step 0 cold (default %d)\n"
           "  --sweep            sweep the stage's sizes instead of one run (crossover plot); takes\n"
           "                     --steps (default 10 there), --dtype, --seed, --variant, --out, --no-*\n"
           "  --no-trace         skip the CUPTI trace pass (.json timeline and .txt table)\n"
           "  --no-plot          skip the gnuplot figures\n"
           "  --no-check         skip the check against the CPU reference\n"
           "  --out DIR          output directory (default traces/%s)\n"
           "  --dump DIR         write inputs, weights and output as .npy files (for compare/)\n"
           "  --trace-api SET    API calls in the trace: kineto (default: the calls PyTorch records) or all\n"
           "  --hold S           then S seconds back to back, SM clock and power sampled: <tag>_clocks.csv\n",
           dtype_name(d->dtype), (unsigned long long)d->seed, d->sched.wait, d->sched.warmup_steps,
           d->sched.active, d->sched.warmup, spec->stage);
}

static int find_variant(const stage_spec *spec, const char *name)
{
    if (!spec->variants) return 0;
    if (strcmp(name, all_name(spec)) == 0 || strcmp(name, "all") == 0) return 1; /* "all" in every program */
    for (int i = 0; spec->variants[i]; i++)
        if (strcmp(spec->variants[i], name) == 0) return 1;
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The flag `typed` (without its dashes, `len` characters) names: the index of a shared flag
 * (0..N_SHARED-1), of an own flag (N_SHARED + i), of --help (-2), or -1 with the message set. */
static int lookup(const stage_spec *spec, const char *arg, const char *typed, size_t len, char *err, size_t err_len)
{
    const char *names[N_SHARED + 64 + 1];
    int ids[N_SHARED + 64 + 1], n = 0;
    if (!spec->own_flags_only)
        for (int i = 0; i < N_SHARED; i++) names[n] = shared_flags[i].name, ids[n++] = i;
    for (int i = 0; i < spec->n_opts && i < 64; i++) names[n] = spec->opts[i].name, ids[n++] = N_SHARED + i;
    names[n] = "help", ids[n++] = -2;

    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == len && strncmp(names[i], typed, len) == 0) return ids[i];
    const char *could[N_SHARED + 64 + 1];
    int n_could = 0;
    for (int i = 0; i < n; i++)
        if (len > 0 && strncmp(names[i], typed, len) == 0) could[n_could++] = names[i];
    if (n_could == 0) {
        set_err(err, err_len, "unknown flag '%s' (see --help)", arg);
        return -1;
    }
    qsort(could, (size_t)n_could, sizeof *could, by_name);
    char list[512] = "";
    for (int i = 0; i < n_could; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s--%s", i ? ", " : "", could[i]);
    }
    if (n_could == 1) set_err(err, err_len, "unknown flag '%.*s' (abbreviations are refused: write %s)",
                              (int)(len + 2), arg, list);
    else set_err(err, err_len, "ambiguous flag '%.*s' (could be %s)", (int)(len + 2), arg, list);
    return -1;
}

static int set_shared(const stage_spec *spec, int id, const char *value, common_args *args, char *err, size_t err_len)
{
    const char *flag = shared_flags[id].name;
    long long v;
    switch (shared_flags[id].given) {
    case GIVEN_VARIANT:
        if (!find_variant(spec, value)) {
            set_err(err, err_len, "--variant: unknown variant '%s' (see --help)", value);
            return -1;
        }
        args->variant = value;
        return 0;
    case GIVEN_DTYPE:
        if (dtype_parse(value, &args->dtype) != 0) {
            set_err(err, err_len, "--dtype: unknown dtype '%s' (bf16, fp16 or fp32)", value);
            return -1;
        }
        return 0;
    case GIVEN_SEED: return parse_seed(value, &args->seed, err, err_len);
    case GIVEN_WAIT:
    case GIVEN_WARMUP_STEPS:
    case GIVEN_WARMUP:
    case GIVEN_ACTIVE: {
        unsigned g = shared_flags[id].given;
        if (parse_whole(flag, value, g == GIVEN_ACTIVE ? 1 : 0, MAX_STEPS, &v, err, err_len)) return -1;
        int *dst = g == GIVEN_WAIT ? &args->sched.wait : g == GIVEN_WARMUP_STEPS ? &args->sched.warmup_steps
                 : g == GIVEN_WARMUP ? &args->sched.warmup : &args->sched.active;
        *dst = (int)v;
        return 0;
    }
    case GIVEN_TRACE_API:
        if (strcmp(value, "all") != 0 && strcmp(value, "kineto") != 0) {
            set_err(err, err_len, "--trace-api: '%s' is neither kineto (the calls PyTorch records) nor all", value);
            return -1;
        }
        args->trace_api_all = strcmp(value, "all") == 0;
        return 0;
    case GIVEN_HOLD:
        if (parse_whole(flag, value, 1, 3600, &v, err, err_len)) return -1;
        args->hold_s = (int)v;
        return 0;
    case GIVEN_SWEEP: args->sweep = 1; return 0;
    case GIVEN_NO_TRACE: args->trace = 0; return 0;
    case GIVEN_NO_PLOT: args->plot = 0; return 0;
    case GIVEN_NO_CHECK: args->check = 0; return 0;
    default: { /* --out, --dump */
        char *dst = shared_flags[id].given == GIVEN_OUT ? args->out_dir : args->dump_dir;
        if (*value == '\0' || strlen(value) >= sizeof args->out_dir - 64) {
            set_err(err, err_len, "--%s: directory name empty or too long", flag);
            return -1;
        }
        if (refuse_control(flag, value, err, err_len)) return -1;
        snprintf(dst, sizeof args->out_dir, "%s", value);
        return 0;
    }
    }
}

/* The shared flags' defaults. */
static void set_defaults(const stage_spec *spec, common_args *args)
{
    *args = (common_args){
        .variant = spec->variants ? spec->variants[0] : NULL, .dtype = DTYPE_BF16, .seed = 1234,
        .sched = {.wait = 1, .warmup_steps = 1, .active = 3, .warmup = 0},
        .trace = 1, .plot = 1, .check = 1,
    };
    snprintf(args->out_dir, sizeof args->out_dir, "traces/%s", spec->stage);
}

void cli_print_help(const stage_spec *spec, const void *defaults)
{
    common_args d;
    long long own_default[32] = {0};
    set_defaults(spec, &d);
    for (int i = 0; i < spec->n_opts && i < 32 && defaults; i++)
        if (spec->opts[i].kind == FLAG_WHOLE)
            own_default[i] = *(const long long *)((const char *)defaults + spec->opts[i].offset);
    print_help(spec, &d, own_default);
}

int cli_parse_args(int argc, char **argv, const stage_spec *spec, common_args *args, void *values, char *err,
                   size_t err_len)
{
    set_defaults(spec, args);
    if (spec->n_opts > 32) {
        set_err(err, err_len, "internal: too many flags");
        return CLI_ERROR;
    }
    unsigned seen = 0; /* bit i: shared_flags[i] was given (--steps and --active share a GIVEN_ bit) */
    int help = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (arg[0] == '-' && arg[1] != '\0') set_err(err, err_len, "unknown flag '%s' (see --help)", arg);
            else set_err(err, err_len, "unexpected argument '%s' (flags start with --; see --help)", arg);
            return CLI_ERROR;
        }
        const char *typed = arg + 2, *eq = strchr(typed, '=');
        size_t len = eq ? (size_t)(eq - typed) : strlen(typed);
        int id = lookup(spec, arg, typed, len, err, err_len);
        if (id == -1) return CLI_ERROR;
        if (id == -2) {
            if (eq) {
                set_err(err, err_len, "--help takes no value");
                return CLI_ERROR;
            }
            if (help) {
                set_err(err, err_len, "--help given twice (give each flag once)");
                return CLI_ERROR;
            }
            help = 1;
            continue;
        }
        const stage_opt *own = id >= N_SHARED ? &spec->opts[id - N_SHARED] : NULL;
        int takes_value = own ? own->kind != FLAG_SWITCH : shared_flags[id].takes_value;
        const char *name = own ? own->name : shared_flags[id].name;
        const char *value = ""; /* a switch has none */
        if (!takes_value && eq) {
            set_err(err, err_len, "--%s takes no value", name);
            return CLI_ERROR;
        }
        if (takes_value) {
            if (eq) value = eq + 1;
            else if (i + 1 < argc) value = argv[++i];
            else {
                set_err(err, err_len, "--%s needs a value", name);
                return CLI_ERROR;
            }
        }
        if (!own) {
            const unsigned bit = shared_flags[id].given;
            if (seen >> id & 1) {
                set_err(err, err_len, "--%s given twice (give each flag once)", name);
                return CLI_ERROR;
            }
            if (args->given & bit) { /* the other spelling of the active steps */
                set_err(err, err_len, "--%s and --%s are one flag, the steps recorded: give one of them",
                        args->steps_spelled ? "steps" : "active", name);
                return CLI_ERROR;
            }
            if (set_shared(spec, id, value, args, err, err_len)) return CLI_ERROR;
            args->given |= bit;
            seen |= 1u << id;
            if (bit == GIVEN_ACTIVE) args->steps_spelled = strcmp(name, "steps") == 0;
            continue;
        }
        if (args->given_own >> (id - N_SHARED) & 1) {
            set_err(err, err_len, "--%s given twice (give each flag once)", name);
            return CLI_ERROR;
        }
        if (own->kind == FLAG_WHOLE && parse_whole(own->name, value, own->min, own->max, stage_opt_whole(own, values), err, err_len))
            return CLI_ERROR;
        if (own->kind == FLAG_SWITCH) *stage_opt_whole(own, values) = 1;
        if (own->kind == FLAG_WORD) {
            if (*value == '\0') {
                set_err(err, err_len, "--%s needs a value, got an empty one", own->name);
                return CLI_ERROR;
            }
            if (refuse_control(own->name, value, err, err_len)) return CLI_ERROR;
            *stage_opt_word(own, values) = value;
        }
        args->given_own |= 1u << (id - N_SHARED);
    }
    /* Flags that would do nothing together are refused, not silently dropped. */
    if (!spec->own_flags_only && (args->given & GIVEN_TRACE_API)) {
        if (args->given & GIVEN_NO_TRACE) {
            set_err(err, err_len, "--trace-api does nothing with --no-trace (no trace is written)");
            return CLI_ERROR;
        }
        if (args->given & GIVEN_SWEEP) {
            set_err(err, err_len, "--sweep does not take --trace-api (a sweep writes no trace)");
            return CLI_ERROR;
        }
    }
    return help ? CLI_HELP : CLI_OK;
}

const char *cli_given_name(const common_args *args, unsigned bits)
{
    for (int i = 0; i < N_SHARED; i++) {
        const unsigned bit = shared_flags[i].given;
        if (!(bits & args->given & bit)) continue;
        if (bit == GIVEN_ACTIVE) return args->steps_spelled ? "steps" : "active";
        return shared_flags[i].name;
    }
    return NULL;
}

int cli_parse(int argc, char **argv, const stage_spec *spec, common_args *args, void *values)
{
    char err[512];
    program_set_name(spec->stage);
    int rc = cli_parse_args(argc, argv, spec, args, values, err, sizeof err);
    if (rc == CLI_ERROR) {
        program_error("%s", err);
        exit(1);
    }
    return rc;
}
