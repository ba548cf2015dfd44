/* test_out.c: output files are complete or absent, even when the writer is interrupted.
 *
 * A child process opens an output through out_open and keeps writing; the test sends it SIGINT
 * or SIGTERM mid-write (or the child calls exit() mid-write, as an error check does), then looks
 * at the directory: no temporary left, no partial final file. A committed file survives.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The child: opens dir/out.csv, tells the parent through `ready` once it has written, then
 * either writes forever (until a signal) or exits with status 1 mid-write. */
static void writer(int ready, int exit_midway)
{
    char path[600], tmp[700];
    snprintf(path, sizeof path, "%s/out.csv", dir);
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f) _exit(3);
    for (long i = 0;; i++) {
        fprintf(f, "%ld,some,values,of,a,row\n", i);
        if (i == 1000) {
            fflush(f);
            if (write(ready, "x", 1) != 1) _exit(4);
            if (exit_midway) exit(1); /* atexit handlers run: as after a failed CUDA_CHECK */
        }
    }
}

/* Starts the writer, waits until it is writing, then sends sig (0: none, the child exits). */
static int interrupted_write(int sig, int *status)
{
    clean();
    int fds[2];
    if (pipe(fds) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fds[0]);
        writer(fds[1], sig == 0);
    }
    close(fds[1]);
    char c;
    ssize_t got = read(fds[0], &c, 1);
    close(fds[0]);
    if (got != 1) return -1;
    if (sig) kill(pid, sig);
    if (waitpid(pid, status, 0) != pid) return -1;
    return 0;
}

static int sigint_leaves_nothing(void)
{
    int status;
    EXPECT(interrupted_write(SIGINT, &status) == 0, "fork/pipe failed");
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "the writer should die of SIGINT (status %d)", status);
    EXPECT(entries() == 0, "%d files left in %s", entries(), dir);
    return 0;
}

static int sigterm_leaves_nothing(void)
{
    int status;
    EXPECT(interrupted_write(SIGTERM, &status) == 0, "fork/pipe failed");
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "the writer should die of SIGTERM (status %d)", status);
    EXPECT(entries() == 0, "%d files left in %s", entries(), dir);
    return 0;
}

static int exit_midway_leaves_nothing(void)
{
    int status;
    EXPECT(interrupted_write(0, &status) == 0, "fork/pipe failed");
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

int main(void)
{
    snprintf(dir, sizeof dir, "%s/test_out.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        printf("FAIL test_out: cannot make a temporary directory\n");
        return 1;
    }
    TEST_RUN(sigint_leaves_nothing);
    TEST_RUN(sigterm_leaves_nothing);
    TEST_RUN(exit_midway_leaves_nothing);
    TEST_RUN(committed_file_stays);
    clean();
    rmdir(dir);
    return harness_failed ? 1 : 0;
}
