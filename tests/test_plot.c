/* CPU tests of the figures: every gnuplot script of common/plots turns a small CSV into a PNG;
 * names and titles holding shell and gnuplot syntax are plotted as they are, and run nothing;
 * the PNG is never written through what stands under its name; without gnuplot, plot_run says
 * so and returns -1 instead of failing the run. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "harness.h"
#include "plot.h"

static char dir[] = "/tmp/plot_test_XXXXXX";

static const char steps_csv[] = "step,phase,cpu_us,gpu_us,gated\n0,wait,90000,90010,0\n1,warmup,30,7,1\n"
                                "2,active,15,6,1\n3,active,14,6,1\n4,active,16,6,1\n";

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
    if (!on_path("gnuplot")) SKIP("gnuplot not installed");
    return plot_case("steps.gp", steps_csv);
}

static int test_crossover_plot(void)
{
    if (!on_path("gnuplot")) SKIP("gnuplot not installed");
    return plot_case("crossover.gp", "size,cpu_us,gpu_us,back_to_back_us,tflops,rel_err\n64,15,6,15,0.1,1e-3\n"
                                     "512,15,9,15,30,1e-3\n2048,14,40,40,400,1e-3\n8192,16,1500,1550,700,1e-3\n");
}

static int test_clocks_plot(void)
{
    if (!on_path("gnuplot")) SKIP("gnuplot not installed");
    return plot_case("clocks.gp", "t_ms,sm_mhz,power_w,temp_c\n0.000,1980,350.000,40\n2.100,1980,nan,41\n"
                                  "4.200,1755,700.000,55\n6.300,nan,690.000,nan\n8.400,1770,695.000,56\n");
}

/* Names and titles a shell or gnuplot would read as syntax: each is plotted under exactly that
 * name, and the command inside never runs (it would make the file PWNED). A name starting with
 * '<' or '|' is a command to gnuplot itself; '-' and '+' are its special files. */
static int test_names_are_data(void)
{
    if (!on_path("gnuplot")) SKIP("gnuplot not installed");
    static const char *const names[] = {
        "d$(touch PWNED)",   "b`touch PWNED`",       "q\"; touch PWNED; \"", "s'; touch PWNED; '",
        "back\\slash\\",     "new\nline",            "with space",          "<touch PWNED",
        "|touch PWNED",      "-",                    "+",                   "'",
        "\"",                "@PWNED",               "tab\there",
    };
    char cwd[PATH_MAX];
    EXPECT(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    EXPECT(chdir(dir) == 0, "chdir %s", dir); /* the commands would run here: relative names */
    int failed = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char png[64];
        snprintf(png, sizeof png, "%s.png", names[i]);
        if (write_file(names[i], steps_csv) != 0) {
            failed = printf("  cannot write the CSV '%s'\n", names[i]);
            continue;
        }
        const int rc = plot_run("steps.gp", names[i], png, names[i]);
        if (access("PWNED", F_OK) == 0) failed = printf("  '%s' ran a command\n", names[i]);
        else if (rc != 0) failed = printf("  no plot for '%s'\n", names[i]);
        else if (!png_ok(png)) failed = printf("  no PNG under the name '%s'\n", png);
        unlink("PWNED");
        unlink(names[i]);
        unlink(png);
    }
    EXPECT(chdir(cwd) == 0, "chdir back");
    EXPECT(!failed, "see above");
    return 0;
}

/* The PNG goes into place only over a regular file or nothing: a directory, FIFO or symbolic
 * link under its name is left as it is, and so is a symbolic link planted under the name of
 * the temporary (which this process's id makes predictable). */
static int test_png_target_not_a_file(void)
{
    if (!on_path("gnuplot")) SKIP("gnuplot not installed");
    char csv[128], png[128], victim[128], planted[160];
    snprintf(csv, sizeof csv, "%s/t.csv", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    EXPECT(write_file(csv, steps_csv) == 0 && write_file(victim, "keep") == 0, "fixtures");
    snprintf(png, sizeof png, "%s/is_a_dir.png", dir);
    EXPECT(mkdir(png, 0755) == 0, "mkdir");
    EXPECT(plot_run("steps.gp", csv, png, "t") == -1, "a directory under the PNG's name was accepted");
    struct stat st;
    EXPECT(stat(png, &st) == 0 && S_ISDIR(st.st_mode), "the directory is gone");
    snprintf(png, sizeof png, "%s/fifo.png", dir);
    EXPECT(mkfifo(png, 0644) == 0, "mkfifo");
    EXPECT(plot_run("steps.gp", csv, png, "t") == -1, "a FIFO under the PNG's name was accepted");
    snprintf(png, sizeof png, "%s/link.png", dir);
    EXPECT(symlink(victim, png) == 0, "symlink");
    EXPECT(plot_run("steps.gp", csv, png, "t") == -1, "a symbolic link under the PNG's name was accepted");
    EXPECT(lstat(png, &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced");
    snprintf(png, sizeof png, "%s/planted.png", dir);
    snprintf(planted, sizeof planted, "%s.tmp.%ld", png, (long)getpid());
    EXPECT(symlink(victim, planted) == 0, "symlink");
    EXPECT(plot_run("steps.gp", csv, png, "t") == -1, "wrote through a planted symbolic link");
    char keep[8] = "";
    FILE *f = fopen(victim, "r");
    EXPECT(f && fgets(keep, sizeof keep, f), "read the victim");
    fclose(f);
    EXPECT(strcmp(keep, "keep") == 0, "the file behind the links was written: '%s'", keep);
    EXPECT(access(png, F_OK) != 0, "a PNG appeared beside the planted link");
    return 0;
}

static int test_without_gnuplot(void)
{
    /* in a child with an empty PATH: the answer is cached per process */
    fflush(stdout);
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

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    TEST_RUN(test_steps_plot);
    TEST_RUN(test_crossover_plot);
    TEST_RUN(test_clocks_plot);
    TEST_RUN(test_names_are_data);
    TEST_RUN(test_png_target_not_a_file);
    TEST_RUN(test_without_gnuplot);
    if (remove_tree(dir) != 0) return 1;
    TEST_EXIT();
}
