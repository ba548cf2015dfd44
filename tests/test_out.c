/* test_out.c: output files are complete or absent, even when the writer is interrupted, and are
 * written only where a regular file is or nothing is.
 *
 * A child process opens an output through out_open and keeps writing; the test ends it mid-write
 * with a signal (sent: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1; or of its own making:
 * SIGPIPE from a pipe nobody reads, SIGXFSZ from the file size limit, SIGABRT from abort()), or
 * the child calls exit() mid-write, as an error check does; then it looks at the directory: no
 * temporary left, no partial final file. A committed file survives. Then the targets: a
 * directory, FIFO or symbolic link under the final name is refused, a link planted under the
 * temporary's name is not written through, and the checks made before any GPU work refuse what
 * the writes would (/proc, /sys, a link to nothing, a device) while creating nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "harness.h"
#include "out.h"

static char dir[256];

/* Number of entries in dir besides . and .. */
static int entries(void)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static void clean(void)
{
    DIR *d = opendir(dir);
    if (!d) return;
    const struct dirent *e;
    char path[600];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

/* How the writer's run ends: a signal the parent sends, exit() mid-write, or a signal the
 * writer brings on itself. */
typedef enum { SENT, EXITS, BROKEN_PIPE, FILE_TOO_BIG, ABORTS } ending;

/* The child: opens dir/out.csv, tells the parent through `ready` once it has written, then ends
 * as `how` says (SENT: writes on until the signal comes). */
static void writer(int ready, ending how)
{
    char path[600], tmp[700];
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* SIGQUIT, SIGXFSZ, SIGABRT dump core by default */
    if (how == FILE_TOO_BIG) {
        const struct rlimit small = {1 << 16, 1 << 16};
        setrlimit(RLIMIT_FSIZE, &small);
    }
    snprintf(path, sizeof path, "%s/out.csv", dir);
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f) _exit(3);
    for (long i = 0;; i++) {
        fprintf(f, "%ld,some,values,of,a,row\n", i);
        if (i == 1000) {
            fflush(f);
            if (write(ready, "x", 1) != 1) _exit(4);
            if (how == EXITS) exit(1); /* atexit handlers run: as after a failed CUDA_CHECK */
            if (how == ABORTS) abort();
            if (how == BROKEN_PIPE) { /* as `stage | head` once head has exited */
                int p[2];
                if (pipe(p) != 0) _exit(5);
                close(p[0]);
                if (write(p[1], "x", 1) != 1) _exit(6); /* not reached: SIGPIPE */
            }
        }
    }
}

/* Starts the writer, waits until it is writing, then sends sig when how is SENT. */
static int interrupted_write(ending how, int sig, int *status)
{
    clean();
    int fds[2];
    if (pipe(fds) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fds[0]);
        writer(fds[1], how);
    }
    close(fds[1]);
    char c;
    ssize_t got = read(fds[0], &c, 1);
    close(fds[0]);
    if (got != 1) return -1;
    if (how == SENT) kill(pid, sig);
    if (waitpid(pid, status, 0) != pid) return -1;
    return 0;
}

/* The writer dies of `sig` (sent, or of its own making) and leaves nothing in dir. */
static int dies_of_and_leaves_nothing(ending how, int sig)
{
    int status;
    EXPECT(interrupted_write(how, sig, &status) == 0, "fork/pipe failed");
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == sig, "the writer should die of signal %d (status %d)", sig,
           status);
    EXPECT(entries() == 0, "%d files left in %s after signal %d", entries(), dir, sig);
    return 0;
}

static int sighup_leaves_nothing(void) { return dies_of_and_leaves_nothing(SENT, SIGHUP); }
static int sigquit_leaves_nothing(void) { return dies_of_and_leaves_nothing(SENT, SIGQUIT); }
static int sigalrm_leaves_nothing(void) { return dies_of_and_leaves_nothing(SENT, SIGALRM); }
static int sigusr1_leaves_nothing(void) { return dies_of_and_leaves_nothing(SENT, SIGUSR1); }
static int sigpipe_leaves_nothing(void) { return dies_of_and_leaves_nothing(BROKEN_PIPE, SIGPIPE); }
static int sigxfsz_leaves_nothing(void) { return dies_of_and_leaves_nothing(FILE_TOO_BIG, SIGXFSZ); }
static int abort_leaves_nothing(void) { return dies_of_and_leaves_nothing(ABORTS, SIGABRT); }

static int sigint_leaves_nothing(void) { return dies_of_and_leaves_nothing(SENT, SIGINT); }
static int sigterm_leaves_nothing(void) { return dies_of_and_leaves_nothing(SENT, SIGTERM); }

static int exit_midway_leaves_nothing(void)
{
    int status;
    EXPECT(interrupted_write(EXITS, 0, &status) == 0, "fork/pipe failed");
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 1, "the writer should exit 1 (status %d)", status);
    EXPECT(entries() == 0, "%d files left in %s", entries(), dir);
    return 0;
}

static int committed_file_stays(void)
{
    clean();
    char path[600], tmp[700];
    snprintf(path, sizeof path, "%s/done.csv", dir);
    FILE *f = out_open(path, tmp, sizeof tmp);
    EXPECT(f != NULL, "out_open failed");
    fprintf(f, "a,b\n1,2\n");
    EXPECT(out_commit(f, tmp, path) == 0, "out_commit failed");
    struct stat st;
    EXPECT(stat(path, &st) == 0 && st.st_size == 8, "the committed file should hold 8 bytes");
    EXPECT(access(tmp, F_OK) != 0, "the temporary should be gone");
    EXPECT(entries() == 1, "exactly the committed file should be there (%d entries)", entries());
    clean();
    return 0;
}

/* Runs check(flag, path) with stderr caught: 0 when it refused (-1) with one line holding
 * `needle`, after "program: error: ". */
static int refused(int (*check)(const char *, const char *), const char *path, const char *needle)
{
    char caught[600], text[1024] = "";
    snprintf(caught, sizeof caught, "%s.stderr", dir);
    fflush(stderr);
    const int saved = dup(2);
    if (saved < 0 || !freopen(caught, "w", stderr)) return -1;
    const int rc = check("--flag", path);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(caught, "r");
    const size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    unlink(caught);
    text[n] = '\0';
    const char *newline = strchr(text, '\n');
    if (rc == -1 && strncmp(text, "program: error: --flag: ", 24) == 0 && strstr(text, needle) && newline &&
        newline[1] == '\0')
        return 0;
    printf("  %s: rc %d, message: %s\n", path, rc, text);
    return -1;
}

/* A final name that holds a directory, FIFO or symbolic link is refused, before and after the
 * write; a symbolic link planted under the temporary's name is not written through. */
static int refuses_what_is_not_a_file(void)
{
    clean();
    char path[600], tmp[700], victim[600], planted[700];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *v = fopen(victim, "w");
    EXPECT(v && fputs("keep", v) >= 0 && fclose(v) == 0, "victim");
    fflush(stderr);
    const int saved = dup(2);
    EXPECT(saved >= 0 && freopen("/dev/null", "w", stderr), "quiet stderr");
    int bad = 0;
    snprintf(path, sizeof path, "%s/a_dir", dir);
    bad |= mkdir(path, 0755) != 0 || out_open(path, tmp, sizeof tmp) != NULL;
    snprintf(path, sizeof path, "%s/a_fifo", dir);
    bad |= (mkfifo(path, 0644) != 0 || out_open(path, tmp, sizeof tmp) != NULL) << 1;
    snprintf(path, sizeof path, "%s/a_link", dir);
    bad |= (symlink(victim, path) != 0 || out_open(path, tmp, sizeof tmp) != NULL) << 2;
    snprintf(path, sizeof path, "%s/planted", dir);
    snprintf(planted, sizeof planted, "%s.tmp.%ld", path, (long)getpid());
    bad |= (symlink(victim, planted) != 0 || out_open(path, tmp, sizeof tmp) != NULL) << 3;
    /* a directory that appears under the name while the file is written */
    snprintf(path, sizeof path, "%s/late", dir);
    FILE *f = out_open(path, tmp, sizeof tmp);
    bad |= (!f || fputs("x", f) < 0 || mkdir(path, 0755) != 0 || out_commit(f, tmp, path) != -1 ||
            access(tmp, F_OK) == 0) << 4;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    EXPECT(!(bad & 1), "a directory was opened as an output");
    EXPECT(!(bad & 2), "a FIFO was opened as an output");
    EXPECT(!(bad & 4), "a symbolic link was opened as an output");
    EXPECT(!(bad & 8), "a temporary was opened through a planted symbolic link");
    EXPECT(!(bad & 16), "a file was renamed over a directory, or its temporary was left");
    char keep[8] = "";
    v = fopen(victim, "r");
    EXPECT(v && fgets(keep, sizeof keep, v), "read the victim");
    fclose(v);
    EXPECT(strcmp(keep, "keep") == 0, "the file behind the links was written: '%s'", keep);
    struct stat st;
    EXPECT(lstat(planted, &st) == 0 && S_ISLNK(st.st_mode), "the planted link, not ours, was removed");
    EXPECT(remove_tree(dir) == 0 && mkdir(dir, 0700) == 0, "clean up");
    return 0;
}

/* The checks before any GPU work: what the writes would refuse is refused, and nothing made. */
static int checks_before_the_run(void)
{
    clean();
    char p[700], file[300], fifo[300], dangling[300], link_to_dir[300];
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(dangling, sizeof dangling, "%s/dangling", dir);
    snprintf(link_to_dir, sizeof link_to_dir, "%s/to_dir", dir);
    FILE *f = fopen(file, "w");
    EXPECT(f && fclose(f) == 0, "fixture");
    EXPECT(mkfifo(fifo, 0644) == 0 && symlink("nowhere", dangling) == 0 && symlink(".", link_to_dir) == 0, "fixtures");
    int bad = 0;
    bad |= refused(out_dir_check, "/proc", "/proc is on proc, a kernel file system");
    bad |= refused(out_dir_check, "/proc/self/x", "is on proc");
    bad |= refused(out_dir_check, "/sys/x", "/sys is on sysfs");
    bad |= refused(out_dir_check, "/dev/null/x", "Not a directory");
    bad |= refused(out_dir_check, "/dev/full", "/dev/full is a character device, not a directory");
    bad |= refused(out_dir_check, file, "is a regular file, not a directory");
    bad |= refused(out_dir_check, fifo, "is a FIFO");
    bad |= refused(out_dir_check, dangling, "is a symbolic link to nothing");
    snprintf(p, sizeof p, "%s/sub/deeper", dangling);
    bad |= refused(out_dir_check, p, "is a symbolic link to nothing");
    bad |= refused(out_file_check, "/dev/full", "it is a character device");
    bad |= refused(out_file_check, fifo, "it is a FIFO");
    bad |= refused(out_file_check, dangling, "it is a symbolic link");
    bad |= refused(out_file_check, link_to_dir, "it is a symbolic link");
    bad |= refused(out_file_check, dir, "it is a directory");
    bad |= refused(out_file_check, "/proc/x.csv", "/proc is on proc");
    snprintf(p, sizeof p, "%s/", dir);
    bad |= refused(out_file_check, p, "names a directory");
    snprintf(p, sizeof p, "%s/x.csv", file);
    bad |= refused(out_file_check, p, "Not a directory");
    EXPECT(!bad, "see above");
    snprintf(p, sizeof p, "%s/new/dirs", link_to_dir);
    EXPECT(out_dir_check("--out", p) == 0, "a directory to make below a link to one");
    snprintf(p, sizeof p, "%s/new/x.csv", dir);
    EXPECT(out_file_check("--csv", p) == 0 && out_file_check("--csv", file) == 0, "a new file, a file to replace");
    EXPECT(entries() == 4, "the checks made something: %d entries", entries());
    char parent[64];
    EXPECT(out_parent_dir("x.csv", parent, sizeof parent) == 0 && strcmp(parent, ".") == 0, "bare name: %s", parent);
    EXPECT(out_parent_dir("/x.csv", parent, sizeof parent) == 0 && strcmp(parent, "/") == 0, "root: %s", parent);
    EXPECT(out_parent_dir("a/b/x.csv", parent, sizeof parent) == 0 && strcmp(parent, "a/b") == 0, "a/b: %s", parent);
    clean();
    return 0;
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/test_out.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        printf("FAIL test_out: cannot make a temporary directory\n");
        return 1;
    }
    TEST_RUN(sigint_leaves_nothing);
    TEST_RUN(sigterm_leaves_nothing);
    TEST_RUN(sighup_leaves_nothing);
    TEST_RUN(sigquit_leaves_nothing);
    TEST_RUN(sigalrm_leaves_nothing);
    TEST_RUN(sigusr1_leaves_nothing);
    TEST_RUN(sigpipe_leaves_nothing);
    TEST_RUN(sigxfsz_leaves_nothing);
    TEST_RUN(abort_leaves_nothing);
    TEST_RUN(exit_midway_leaves_nothing);
    TEST_RUN(committed_file_stays);
    TEST_RUN(refuses_what_is_not_a_file);
    TEST_RUN(checks_before_the_run);
    clean();
    rmdir(dir);
    return harness_failed ? 1 : 0;
}
