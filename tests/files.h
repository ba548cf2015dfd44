/* files.h: what the tests ask of the system, without a shell: run a program from an argument
 * vector, find one on PATH, remove a directory tree. Built strings handed to system() would
 * read a space or a quote in a temporary directory's name as syntax. */
#ifndef FILES_H
#define FILES_H

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs argv[0] (looked up on PATH) with argv; with quiet, its stdout and stderr go to
 * /dev/null. Returns its exit status, or -1 when it could not run or died of a signal. */
static inline int run_argv(char *const argv[], int quiet)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (quiet && (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))) _exit(127);
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* 1 when an executable `name` is on PATH. */
static inline int on_path(const char *name)
{
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        const char *end = strchr(p, ':');
        const int n = end ? (int)(end - p) : (int)strlen(p);
        char candidate[PATH_MAX];
        struct stat st;
        if (n > 0 && snprintf(candidate, sizeof candidate, "%.*s/%s", n, p, name) < (int)sizeof candidate &&
            stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0)
            return 1;
        p += n + (end != NULL);
    }
    return 0;
}

/* rm -rf path: 0, or -1 when something could not be removed. Symbolic links are removed, never
 * followed. */
static inline int remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) return unlink(path);
    DIR *d = opendir(path);
    if (!d) return -1;
    int rc = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char child[PATH_MAX];
        if (snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= (int)sizeof child || remove_tree(child) != 0)
            rc = -1;
    }
    closedir(d);
    return rmdir(path) != 0 ? -1 : rc;
}

#endif
