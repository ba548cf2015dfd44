/* out.h: output files that are either complete or absent.
 *
 * Every artifact (CSV, trace, table, plot) is written to "<path>.tmp.<pid>" and renamed into
 * place only when complete, so an interrupted run never leaves a half-written file under the
 * final name. The temporaries in flight are remembered: when the process ends before their
 * commit (exit() from an error check, SIGINT, SIGTERM, SIGHUP), they are removed, so nothing is
 * left behind either.
 */
#ifndef OUT_H
#define OUT_H

#include <stdio.h>

/* mkdir -p; returns 0, or -1 after printing one line naming the directory and the reason. */
int out_mkdirs(const char *dir);
/* Whether mkdir -p dir would succeed, creating nothing: 0, or -1 after one line naming the flag
 * (e.g. "--out") and the reason. Checked before any GPU work; the directory is made later. */
int out_dir_check(const char *flag, const char *dir);
/* Opens the temporary file for `path`; tmp receives its name. NULL (with a message) on error. */
FILE *out_open(const char *path, char *tmp, size_t tmp_len);
/* Closes f and renames tmp to path; returns 0, or -1 (and removes tmp) on any write error. */
int out_commit(FILE *f, const char *tmp, const char *path);
/* For a temporary that another program writes (gnuplot's PNG): remembered until out_forget, and
 * removed like the others if the process ends first. Returns 0, or -1 when too many are in flight. */
int out_remember(const char *tmp);
void out_forget(const char *tmp);

/* The checkout the running program was built in: the programs live in bin/ (tests in bin/tests/)
 * of a checkout that holds common/plots. Returns 0, or -1 when not found (a copied binary). */
int out_checkout_dir(char *dir, size_t len);

#endif
