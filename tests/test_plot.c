/* CPU tests of the figures: every gnuplot script of common/plots turns a small CSV into a PNG,
 * and without gnuplot plot_run says so and returns -1 instead of failing the run. */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "plot.h"

static char dir[] = "/tmp/plot_test_XXXXXX";

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

static int png_ok(const char *path)
{
    struct stat st;
    unsigned char magic[4] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(magic, 1, 4, f);
    fclose(f);
    return n == 4 && magic[1] == 'P' && magic[2] == 'N' && magic[3] == 'G' && stat(path, &st) == 0 && st.st_size > 1000;
}

static int have_gnuplot(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

/* script, CSV text: one case per gnuplot script that the stages call */
static int plot_case(const char *script, const char *csv_text)
{
    char csv[128], png[128];
    snprintf(csv, sizeof csv, "%s/%s.csv", dir, script);
    snprintf(png, sizeof png, "%s/%s.png", dir, script);
    EXPECT(write_file(csv, csv_text) == 0, "write %s", csv);
    EXPECT(plot_run(script, csv, png, "test plot") == 0, "gnuplot failed on %s", script);
    EXPECT(png_ok(png), "%s did not produce a PNG", script);
    return 0;
}

static int test_steps_plot(void)
{
    if (!have_gnuplot()) SKIP("gnuplot not installed");
    return plot_case("steps.gp", "step,phase,cpu_us,gpu_us,gated\n0,wait,90000,90010,0\n1,warmup,30,7,1\n"
                                 "2,active,15,6,1\n3,active,14,6,1\n4,active,16,6,1\n");
}

static int test_crossover_plot(void)
{
    if (!have_gnuplot()) SKIP("gnuplot not installed");
    return plot_case("crossover.gp", "size,cpu_us,gpu_us,back_to_back_us,tflops,rel_err\n64,15,6,15,0.1,1e-3\n"
                                     "512,15,9,15,30,1e-3\n2048,14,40,40,400,1e-3\n8192,16,1500,1550,700,1e-3\n");
}

static int test_clocks_plot(void)
{
    if (!have_gnuplot()) SKIP("gnuplot not installed");
    return plot_case("clocks.gp", "t_ms,sm_mhz,power_w,temp_c\n0.000,1980,350.000,40\n2.100,1980,nan,41\n"
                                  "4.200,1755,700.000,55\n6.300,nan,690.000,nan\n8.400,1770,695.000,56\n");
}

static int test_without_gnuplot(void)
{
    /* in a child with an empty PATH: the answer is cached per process */
    pid_t pid = fork();
    EXPECT(pid >= 0, "fork");
    if (pid == 0) {
        setenv("PATH", "/nonexistent", 1);
        if (!freopen("/dev/null", "w", stdout)) _exit(3);
        char png[128];
        snprintf(png, sizeof png, "%s/none.png", dir);
        int rc = plot_run("steps.gp", "missing.csv", png, "x");
        _exit(rc == -1 && access(png, F_OK) != 0 ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "plot_run without gnuplot must return -1 and write nothing");
    return 0;
}

static int test_refuses_quotes(void)
{
    char png[128];
    snprintf(png, sizeof png, "%s/q.png", dir);
    fflush(stdout);
    EXPECT(plot_run("steps.gp", "it's.csv", png, "x") == -1, "a quote in a path is refused, not passed to a shell");
    return 0;
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    TEST_RUN(test_steps_plot);
    TEST_RUN(test_crossover_plot);
    TEST_RUN(test_clocks_plot);
    TEST_RUN(test_without_gnuplot);
    TEST_RUN(test_refuses_quotes);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    TEST_EXIT();
}
