/* out.h: output files that are either complete or absent.
 *
 * Every artifact (CSV, trace, table, plot) is written to "<path>.tmp.<pid>" and renamed into
 * place only when complete, so an interrupted run never leaves a half-written file under the
 * final name.
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

#endif
