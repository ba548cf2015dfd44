/* CPU tests of the step schedule's phases, the per-step CSV, and all-or-nothing file output. */
#define _GNU_SOURCE /* dl_iterate_phdr, setgroups */
#include <dirent.h>
#include <dlfcn.h>
#include <grp.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "harness.h"
#include "out.h"
#include "prof.h"

static int test_phases(void)
{
    prof_run r = {.sched = {.wait = 1, .warmup_steps = 1, .active = 3}, .n_steps = 5};
    EXPECT(prof_phase(&r, 0) == PHASE_WAIT, "step 0 waits");
    EXPECT(prof_phase(&r, 1) == PHASE_WARMUP, "step 1 warms up");
    for (int s = 2; s < 5; s++) EXPECT(prof_phase(&r, s) == PHASE_ACTIVE, "step %d active", s);
    prof_run none = {.sched = {.wait = 0, .warmup_steps = 0, .active = 2}, .n_steps = 2};
    EXPECT(prof_phase(&none, 0) == PHASE_ACTIVE, "wait=0 warmup=0: the first step is recorded");
    EXPECT(strcmp(prof_phase_name(PHASE_WARMUP), "warmup") == 0, "names");
    return 0;
}

static int test_active_stats(void)
{
    double cpu[] = {1000, 50, 10, 12, 11}, gpu[] = {900, 5, 4, 6, 5};
    int gated[5] = {0};
    prof_run r = {.sched = {.wait = 1, .warmup_steps = 1, .active = 3}, .n_steps = 5,
                  .cpu_us = cpu, .gpu_us = gpu, .gated = gated};
    stats_t c = prof_active_stats(&r, 0), g = prof_active_stats(&r, 1);
    EXPECT(c.n == 3 && c.median == 11 && c.max == 12, "cpu over active steps only: %g", c.median);
    EXPECT(g.n == 3 && g.median == 5 && g.min == 4, "gpu over active steps only: %g", g.median);
    return 0;
}

static int test_csv(void)
{
    char dir[] = "/tmp/prof_csv_XXXXXX";
    EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
    char path[128];
    snprintf(path, sizeof path, "%s/sub/dir/run.csv", dir);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/sub/dir", dir);
    EXPECT(out_mkdirs(sub) == 0, "mkdir -p");
    EXPECT(out_mkdirs(sub) == 0, "mkdir -p twice");
    double cpu[] = {100.5, 10.25}, gpu[] = {90.125, 4};
    int gated[] = {0, 1};
    prof_run r = {.sched = {.wait = 1, .warmup_steps = 0, .active = 1}, .n_steps = 2,
                  .cpu_us = cpu, .gpu_us = gpu, .gated = gated};
    EXPECT(prof_write_csv(&r, path) == 0, "write");
    FILE *f = fopen(path, "r");
    EXPECT(f != NULL, "the CSV exists under its final name");
    char buf[256] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    EXPECT(n > 0, "read");
    EXPECT(strcmp(buf, "step,phase,cpu_us,gpu_us,gated\n0,wait,100.500,90.125,0\n1,active,10.250,4.000,1\n") == 0,
           "content:\n%s", buf);
    DIR *d = opendir(sub);
    EXPECT(d != NULL, "opendir");
    int temporaries = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) temporaries += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    EXPECT(temporaries == 0, "%d temporary files left behind", temporaries);
    EXPECT(remove_tree(dir) == 0, "cleanup");
    return 0;
}

/* A directory without write permission refuses both the check before the run and the mkdir.
 * Root writes anyway, so as root (CI runs as root) the test drops to an unprivileged user in a
 * child, as setpriv or runuser would. */
static int test_unwritable(void)
{
    char dir[] = "/tmp/prof_ro_XXXXXX";
    EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
    EXPECT(chmod(dir, 0555) == 0, "chmod"); /* others may enter, nobody may write */
    char sub[128];
    snprintf(sub, sizeof sub, "%s/x", dir);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    EXPECT(pid >= 0, "fork");
    if (pid == 0) {
        const uid_t nobody = 65534;
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(nobody) != 0 || setuid(nobody) != 0)) _exit(2);
        if (geteuid() == 0) _exit(2);
        if (!freopen("/dev/null", "w", stderr)) _exit(3);
        const int check = out_dir_check("--out", sub), made = out_mkdirs(sub);
        _exit(check != 0 && made != 0 && access(sub, F_OK) != 0 ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    chmod(dir, 0700);
    rmdir(sub);
    rmdir(dir);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2) SKIP("running as root, and cannot drop to uid 65534 here");
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a directory without write permission was written to "
           "(status %d)", status);
    return 0;
}

static int test_not_a_directory(void)
{
    /* a regular file where a directory should be: refused with a message, no crash */
    char path[] = "/tmp/prof_file_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp");
    close(fd);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/x", path);
    EXPECT(out_mkdirs(path) != 0, "a file is not a directory");
    EXPECT(out_mkdirs(sub) != 0, "nor can one be made below a file");
    unlink(path);
    return 0;
}

static int test_interrupted_write(void)
{
    /* A run stopped by Ctrl-C in the middle of writing leaves no file under the final name:
     * what a reader finds there is always complete. */
    char dir[] = "/tmp/prof_int_XXXXXX";
    EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
    char path[128];
    snprintf(path, sizeof path, "%s/run.csv", dir);
    pid_t pid = fork();
    EXPECT(pid >= 0, "fork");
    if (pid == 0) {
        char tmp[256];
        FILE *f = out_open(path, tmp, sizeof tmp);
        if (!f) _exit(3);
        fprintf(f, "step,phase,cpu_us,gpu_us,gated\n0,wait,");
        fflush(f);
        signal(SIGINT, SIG_DFL);
        raise(SIGINT); /* the default action ends the process here */
    }
    int status;
    waitpid(pid, &status, 0);
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "the child died of SIGINT");
    EXPECT(access(path, F_OK) != 0, "no half-written file under the final name");
    EXPECT(remove_tree(dir) == 0, "cleanup");
    return 0;
}

/* Under a tool that owns CUPTI the stages cut their timing loops; without one they do not.
 * nsys says so with CUDA_INJECTION64_PATH; compute-sanitizer and Nsight Compute only by the
 * libraries they load into the program. The second is played here by a copy of libm loaded
 * from a directory whose name says compute-sanitizer. */
static int find_libm(struct dl_phdr_info *info, size_t size, void *found)
{
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "/libm.so")) {
        snprintf(found, 512, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[1 << 16];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    return ok ? 0 : -1;
}

static int test_under_tool(void)
{
    unsetenv("CUDA_INJECTION64_PATH");
    EXPECT(!prof_under_tool(), "a tool reported with no CUDA_INJECTION64_PATH");
    setenv("CUDA_INJECTION64_PATH", "libToolsInjection64.so", 1);
    EXPECT(prof_under_tool(), "CUDA_INJECTION64_PATH set, no tool reported");
    unsetenv("CUDA_INJECTION64_PATH");
    EXPECT(!prof_under_tool(), "a tool still reported after CUDA_INJECTION64_PATH was unset");

    char libm[512] = "", dir[] = "/tmp/compute-sanitizer-XXXXXX", copy[600];
    dl_iterate_phdr(find_libm, libm);
    if (!libm[0]) SKIP("libm is not loaded as a shared library here");
    EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(copy, sizeof copy, "%s/libsanitizer-collection.so", dir);
    EXPECT(copy_file(libm, copy) == 0, "copying %s", libm);
    void *h = dlopen(copy, RTLD_LAZY | RTLD_LOCAL);
    unlink(copy);
    rmdir(dir);
    EXPECT(h != NULL, "dlopen of the copy: %s", dlerror());
    EXPECT(prof_under_tool(), "a library of compute-sanitizer loaded, no tool reported");
    dlclose(h);
    return 0;
}

int main(void)
{
    TEST_RUN(test_phases);
    TEST_RUN(test_active_stats);
    TEST_RUN(test_csv);
    TEST_RUN(test_unwritable);
    TEST_RUN(test_not_a_directory);
    TEST_RUN(test_interrupted_write);
    TEST_RUN(test_under_tool);
    TEST_EXIT();
}
