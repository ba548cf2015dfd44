#include "plot.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "out.h"

/* The scripts sit in common/plots/ of the checkout (out_checkout_dir finds it from the
 * executable's own path). */
static int scripts_dir(char *dir, size_t len)
{
    char root[PATH_MAX];
    if (out_checkout_dir(root, sizeof root) != 0) return -1;
    return snprintf(dir, len, "%s/common/plots", root) >= (int)len ? -1 : 0;
}

static int have_gnuplot(void)
{
    static int known = -1;
    if (known < 0) {
        known = system("command -v gnuplot >/dev/null 2>&1") == 0;
        if (!known) printf("plot: gnuplot not found; CSV files written, no PNG (install gnuplot)\n");
    }
    return known;
}

/* gnuplot -e takes a string literal; refuse quotes rather than escape them. */
static int safe_literal(const char *s) { return strchr(s, '\'') == NULL && strchr(s, '\\') == NULL; }

int plot_run(const char *script, const char *csv, const char *png, const char *title)
{
    if (!have_gnuplot()) return -1;
    char dir[PATH_MAX], tmp[PATH_MAX + 32], cmd[4 * PATH_MAX];
    if (scripts_dir(dir, sizeof dir) != 0) {
        printf("plot: cannot find common/plots next to the program; no PNG\n");
        return -1;
    }
    if (!safe_literal(csv) || !safe_literal(png) || !safe_literal(title)) {
        printf("plot: a path or title contains a quote; no PNG\n");
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.png", png, (long)getpid());
    if (out_remember(tmp) != 0) {
        printf("plot: too many files in flight; no PNG\n");
        return -1;
    }
    snprintf(cmd, sizeof cmd, "gnuplot -e \"csv='%s'; png='%s'; title='%s'\" '%s/%s' 2>&1",
             csv, tmp, title, dir, script);
    int rc = system(cmd);
    if (rc != 0 || rename(tmp, png) != 0) {
        printf("plot: gnuplot failed on %s (exit %d); no PNG\n", script, WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
        remove(tmp);
        out_forget(tmp);
        return -1;
    }
    out_forget(tmp);
    return 0;
}
