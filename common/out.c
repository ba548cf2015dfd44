#include "out.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "program.h"

/* The temporaries in flight. A signal handler may only call async-signal-safe functions, so the
 * names live in fixed slots and removal is a plain unlink(); a slot's name is complete before
 * `used` says so. */
enum { OUT_SLOTS = 16, OUT_NAME = 1024 };
static char out_names[OUT_SLOTS][OUT_NAME];
static volatile sig_atomic_t out_used[OUT_SLOTS];

static void out_remove_all(void)
{
    for (int i = 0; i < OUT_SLOTS; i++)
        if (out_used[i]) {
            out_used[i] = 0;
            unlink(out_names[i]);
        }
}

/* Removes the temporaries, then dies of the same signal, so the caller's shell sees why. */
static void out_on_signal(int sig)
{
    out_remove_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Once, at the first temporary: the exit and signal handlers (a handler someone else installed
 * is left alone). */
static void out_install(void)
{
    static int installed;
    if (installed) return;
    installed = 1;
    atexit(out_remove_all);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = out_on_signal;
            sigemptyset(&sa.sa_mask);
            sigaction(sigs[i], &sa, NULL);
        }
    }
}

int out_remember(const char *tmp)
{
    out_install();
    if (strlen(tmp) >= OUT_NAME) return -1;
    for (int i = 0; i < OUT_SLOTS; i++)
        if (!out_used[i]) {
            memcpy(out_names[i], tmp, strlen(tmp) + 1);
            out_used[i] = 1;
            return 0;
        }
    return -1;
}

void out_forget(const char *tmp)
{
    for (int i = 0; i < OUT_SLOTS; i++)
        if (out_used[i] && strcmp(out_names[i], tmp) == 0) out_used[i] = 0;
}

int out_mkdirs(const char *dir)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        program_error("output directory name too long: %s", dir);
        return -1;
    }
    for (char *p = path + 1;; p++) {
        char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                program_error("cannot create output directory %s: %s", path, strerror(errno));
                return -1;
            }
            *p = c;
        }
        if (c == '\0') break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK) != 0) {
        program_error("output directory %s is not a writable directory", dir);
        return -1;
    }
    return 0;
}

FILE *out_open(const char *path, char *tmp, size_t tmp_len)
{
    snprintf(tmp, tmp_len, "%s.tmp.%ld", path, (long)getpid());
    if (out_remember(tmp) != 0) {
        program_error("too many output files open at once (writing %s)", path);
        return NULL;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        program_error("cannot write %s: %s", tmp, strerror(errno));
        out_forget(tmp);
    }
    return f;
}

int out_commit(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        program_error("writing %s failed: %s", path, strerror(errno));
        remove(tmp);
        out_forget(tmp);
        return -1;
    }
    out_forget(tmp);
    return 0;
}

int out_checkout_dir(char *dir, size_t len)
{
    char exe[PATH_MAX], probe[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    for (int up = 0; up < 3; up++) { /* bin/<stage> or bin/tests/<test> */
        char *slash = strrchr(exe, '/');
        if (!slash) return -1;
        *slash = '\0';
        snprintf(probe, sizeof probe, "%s/common/plots", exe);
        if (access(probe, R_OK) == 0) return snprintf(dir, len, "%s", exe) >= (int)len ? -1 : 0;
    }
    return -1;
}

int out_dir_check(const char *flag, const char *dir)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        program_error("%s: directory name too long: %s", flag, dir);
        return -1;
    }
    /* the deepest part of the path that exists must be a writable directory */
    struct stat st;
    for (;;) {
        if (stat(path, &st) == 0) break;
        if (errno != ENOENT) {
            program_error("%s: cannot create output directory %s: %s", flag, dir, strerror(errno));
            return -1;
        }
        char *slash = strrchr(path, '/');
        if (!slash) {
            snprintf(path, sizeof path, ".");
            continue;
        }
        if (slash == path) slash[1] = '\0';
        else *slash = '\0';
    }
    if (!S_ISDIR(st.st_mode) || access(path, W_OK | X_OK) != 0) {
        program_error("%s: cannot create output directory %s: %s is not a writable directory", flag, dir, path);
        return -1;
    }
    return 0;
}
