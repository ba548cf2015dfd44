#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "out.h"

extern char **environ;

/* The scripts sit in common/plots/ of the checkout (out_checkout_dir finds it from the
 * executable's own path). */
static int scripts_dir(char *dir, size_t len)
{
    char root[PATH_MAX];
    if (out_checkout_dir(root, sizeof root) != 0) return -1;
    return snprintf(dir, len, "%s/common/plots", root) >= (int)len ? -1 : 0;
}

/* gnuplot's path, looked up on PATH as a shell would; "" (said once) when it is not there. */
static const char *gnuplot_path(void)
{
    static char found[PATH_MAX];
    static int known;
    if (known) return found;
    known = 1;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p && !found[0];) {
        const char *end = strchr(p, ':');
        const int n = end ? (int)(end - p) : (int)strlen(p);
        char candidate[PATH_MAX];
        struct stat st;
        const int fits = n == 0 ? snprintf(candidate, sizeof candidate, "./gnuplot") /* empty: the current directory */
                                : snprintf(candidate, sizeof candidate, "%.*s/gnuplot", n, p);
        if (fits < (int)sizeof candidate && stat(candidate, &st) == 0 && S_ISREG(st.st_mode) &&
            access(candidate, X_OK) == 0)
            snprintf(found, sizeof found, "%s", candidate);
        p += n + (end != NULL);
    }
    if (!found[0]) printf("plot: gnuplot not found; CSV files written, no PNG (install gnuplot)\n");
    return found;
}

/* gnuplot runs common/plots/call.gp with the script, the CSV, the PNG and the title as its
 * arguments: an argument vector and no shell, so no byte of a name or title means anything to
 * anyone. Two names gnuplot itself would read as more than a file are kept from it: a CSV name
 * starting with '<' runs a command (and '-', '+' are special files), so a relative name goes as
 * ./name; and the PNG is not named at all: gnuplot writes the temporary out_create made through
 * descriptor 3. */
int plot_run(const char *script, const char *csv, const char *png, const char *title)
{
    const char *gnuplot = gnuplot_path();
    if (!gnuplot[0]) return -1;
    char dir[PATH_MAX], call[PATH_MAX + 16], script_path[PATH_MAX + 64], data[PATH_MAX + 8], tmp[PATH_MAX + 32];
    if (scripts_dir(dir, sizeof dir) != 0) {
        printf("plot: cannot find common/plots next to the program; no PNG\n");
        return -1;
    }
    snprintf(call, sizeof call, "%s/call.gp", dir);
    if (snprintf(script_path, sizeof script_path, "%s/%s", dir, script) >= (int)sizeof script_path ||
        snprintf(data, sizeof data, "%s%s", csv[0] == '/' ? "" : "./", csv) >= (int)sizeof data) {
        printf("plot: a path is too long; no PNG\n");
        return -1;
    }
    int fd = out_create(png, tmp, sizeof tmp);
    if (fd < 0) return -1;
    if (fd == 3) { /* dup2(3, 3) in the child would leave it close-on-exec */
        const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 4);
        close(fd);
        fd = moved;
        if (fd < 0) {
            printf("plot: %s; no PNG\n", strerror(errno));
            out_discard(tmp);
            return -1;
        }
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, 1, 2); /* its messages among ours, in order */
    posix_spawn_file_actions_adddup2(&actions, fd, 3);
    char *argv[] = {"gnuplot", "-c", call, script_path, data, "/proc/self/fd/3", (char *)title, NULL};
    fflush(stdout);
    pid_t pid;
    const int spawned = posix_spawn(&pid, gnuplot, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fd);
    int status = -1;
    if (spawned == 0 && waitpid(pid, &status, 0) < 0) status = -1;
    if (spawned != 0) printf("plot: cannot start %s: %s; no PNG\n", gnuplot, strerror(spawned));
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        printf("plot: gnuplot failed on %s (exit %d); no PNG\n", script, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (spawned != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        out_discard(tmp);
        return -1;
    }
    return out_rename(tmp, png);
}
