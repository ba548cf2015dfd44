#include "out.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
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

/* Once, at the first temporary: the exit handler, and a handler for every signal whose default
 * ends the process (a handler someone else installed is left alone). SIGPIPE among them: a run
 * piped into `head` dies of it at its next line of output, and takes its temporaries along. */
static void out_install(void)
{
    static int installed;
    if (installed) return;
    installed = 1;
    atexit(out_remove_all);
    const int sigs[] = {SIGHUP, SIGINT,  SIGQUIT, SIGILL,  SIGTRAP, SIGABRT,   SIGBUS,  SIGFPE,  SIGUSR1, SIGSEGV,
                        SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGSYS};
    const int n_fixed = (int)(sizeof sigs / sizeof sigs[0]);
    for (int i = 0; i < n_fixed + (SIGRTMAX - SIGRTMIN + 1); i++) {
        const int sig = i < n_fixed ? sigs[i] : SIGRTMIN + (i - n_fixed);
        struct sigaction old;
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = out_on_signal;
            sigemptyset(&sa.sa_mask);
            sigaction(sig, &sa, NULL);
        }
    }
}

static int out_remember(const char *tmp)
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

static void out_forget(const char *tmp)
{
    for (int i = 0; i < OUT_SLOTS; i++)
        if (out_used[i] && strcmp(out_names[i], tmp) == 0) out_used[i] = 0;
}

/* "a directory", "a FIFO", ...: what stands where another kind of file was expected. */
static const char *kind_of(mode_t m)
{
    return S_ISREG(m) ? "a regular file" : S_ISDIR(m) ? "a directory" : S_ISLNK(m) ? "a symbolic link"
         : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISSOCK(m) ? "a socket" : "of an unknown kind";
}

/* The kernel's own file systems: they take no files, whatever access() says (root may "write"
 * to /proc). */
static const struct {
    long magic;
    const char *name;
} kernel_fs[] = {
    {PROC_SUPER_MAGIC, "proc"},     {SYSFS_MAGIC, "sysfs"},           {CGROUP_SUPER_MAGIC, "cgroup"},
    {CGROUP2_SUPER_MAGIC, "cgroup2"}, {DEBUGFS_MAGIC, "debugfs"},     {TRACEFS_MAGIC, "tracefs"},
    {SECURITYFS_MAGIC, "securityfs"}, {DEVPTS_SUPER_MAGIC, "devpts"}, {BPF_FS_MAGIC, "bpf"},
    {PSTOREFS_MAGIC, "pstore"},     {EFIVARFS_MAGIC, "efivarfs"},     {SELINUX_MAGIC, "selinuxfs"},
};

/* Whether files can be made in `existing`, an existing directory: 0, or -1 after one line
 * "<flag>: cannot create output directory <dir>: <why>". */
static int dir_takes_files(const char *flag, const char *dir, const char *existing)
{
    struct statfs fs;
    if (statfs(existing, &fs) == 0)
        for (size_t i = 0; i < sizeof kernel_fs / sizeof kernel_fs[0]; i++)
            if ((long)fs.f_type == kernel_fs[i].magic) {
                program_error("%s: cannot create output directory %s: %s is on %s, a kernel file system that takes "
                              "no files", flag, dir, existing, kernel_fs[i].name);
                return -1;
            }
    struct statvfs vfs;
    if (statvfs(existing, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) {
        program_error("%s: cannot create output directory %s: %s is on a read-only file system", flag, dir, existing);
        return -1;
    }
    if (access(existing, W_OK | X_OK) != 0) {
        program_error("%s: cannot create output directory %s: %s is not a writable directory", flag, dir, existing);
        return -1;
    }
    return 0;
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

int out_create(const char *path, char *tmp, size_t tmp_len)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        program_error("cannot write %s: it is %s, and only a regular file is replaced", path, kind_of(st.st_mode));
        return -1;
    }
    if (snprintf(tmp, tmp_len, "%s.tmp.%ld", path, (long)getpid()) >= (int)tmp_len) {
        program_error("cannot write %s: the name is too long", path);
        return -1;
    }
    if (out_remember(tmp) != 0) {
        program_error("too many output files open at once (writing %s)", path);
        return -1;
    }
    /* O_EXCL | O_NOFOLLOW: a file or symbolic link already under this name is never written
     * through; the run stops instead */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        program_error("cannot write %s: %s", tmp, strerror(errno));
        out_forget(tmp); /* whatever is there is not ours to remove */
    }
    return fd;
}

FILE *out_open(const char *path, char *tmp, size_t tmp_len)
{
    int fd = out_create(path, tmp, tmp_len);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        program_error("cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        out_discard(tmp);
    }
    return f;
}

void out_discard(const char *tmp)
{
    unlink(tmp);
    out_forget(tmp);
}

int out_rename(const char *tmp, const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* it appeared while we wrote */
        program_error("writing %s failed: it is %s, and only a regular file is replaced", path, kind_of(st.st_mode));
        out_discard(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        program_error("writing %s failed: %s", path, strerror(errno));
        out_discard(tmp);
        return -1;
    }
    out_forget(tmp);
    return 0;
}

int out_commit(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad) {
        program_error("writing %s failed: %s", path, strerror(errno));
        out_discard(tmp);
        return -1;
    }
    return out_rename(tmp, path);
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
    /* the deepest part of the path that exists must be a directory that takes files; a
     * symbolic link counts as what it points at, and one that points at nothing is refused */
    struct stat st;
    for (;;) {
        if (lstat(path, &st) == 0) {
            if (!S_ISLNK(st.st_mode) || stat(path, &st) == 0) break;
            program_error("%s: cannot create output directory %s: %s is a symbolic link to nothing", flag, dir, path);
            return -1;
        }
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
    if (!S_ISDIR(st.st_mode)) {
        program_error("%s: cannot create output directory %s: %s is %s, not a directory", flag, dir, path,
                      kind_of(st.st_mode));
        return -1;
    }
    return dir_takes_files(flag, dir, path);
}

int out_file_check(const char *flag, const char *path)
{
    struct stat st;
    const size_t n = strlen(path);
    if (n == 0 || path[n - 1] == '/') {
        program_error("%s: '%s' names a directory, not a file", flag, path);
        return -1;
    }
    if (lstat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            program_error("%s: cannot write %s: it is %s, and only a regular file is replaced", flag, path,
                          kind_of(st.st_mode));
            return -1;
        }
    } else if (errno != ENOENT) {
        program_error("%s: cannot write %s: %s", flag, path, strerror(errno));
        return -1;
    }
    char dir[1024];
    if (out_parent_dir(path, dir, sizeof dir) != 0) {
        program_error("%s: the name is too long: %s", flag, path);
        return -1;
    }
    return out_dir_check(flag, dir);
}

int out_parent_dir(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return snprintf(dir, len, ".") >= (int)len ? -1 : 0;
    const int keep = slash == path ? 1 : (int)(slash - path); /* "/x": the root */
    return snprintf(dir, len, "%.*s", keep, path) >= (int)len ? -1 : 0;
}
