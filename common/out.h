/* out.h: output files that are either complete or absent, and never written through anything
 * but a regular file.
 *
 * Every artifact (CSV, trace, table, plot) is written to "<path>.tmp.<pid>", created afresh
 * (O_CREAT | O_EXCL | O_NOFOLLOW: never through a file or symbolic link already there), and
 * renamed into place only when complete, and only over a regular file or nothing: a directory,
 * FIFO, device or symbolic link under the final name is refused by name. The temporaries in
 * flight are remembered: when the process ends before their commit (exit() from an error check,
 * or any signal that ends it: SIGINT, SIGTERM, SIGPIPE, SIGXFSZ, ...), they are removed, so
 * nothing is left behind either.
 */
#ifndef OUT_H
#define OUT_H

#include <stdio.h>

/* mkdir -p; returns 0, or -1 after printing one line naming the directory and the reason. */
int out_mkdirs(const char *dir);
/* Whether mkdir -p dir would succeed and files could be made in it, creating nothing: 0, or -1
 * after one line naming the flag (e.g. "--out") and the reason. The deepest existing part must
 * be a writable directory on a file system that takes files (not /proc or /sys, nor read-only);
 * a symbolic link to nothing is refused. Checked before any GPU work; the directory is made later. */
int out_dir_check(const char *flag, const char *dir);
/* The same for an output file: absent or a regular file, in a directory out_dir_check accepts. */
int out_file_check(const char *flag, const char *path);
/* The directory part of path ("." for a bare name) into dir: 0, or -1 when it does not fit. */
int out_parent_dir(const char *path, char *dir, size_t len);

/* Creates the temporary file for `path` (tmp receives its name) and returns its descriptor, or
 * -1 after one line naming the problem. out_open: the same as a stream. */
int out_create(const char *path, char *tmp, size_t tmp_len);
FILE *out_open(const char *path, char *tmp, size_t tmp_len);
/* Closes f and renames tmp to path; returns 0, or -1 (and removes tmp) on any write error. */
int out_commit(FILE *f, const char *tmp, const char *path);
/* Renames a complete, closed temporary into place (another program wrote it: gnuplot's PNG);
 * 0, or -1 with one line, the temporary removed. */
int out_rename(const char *tmp, const char *path);
/* Removes a temporary that will not be committed. */
void out_discard(const char *tmp);

/* The checkout the running program was built in: the programs live in bin/ (tests in bin/tests/)
 * of a checkout that holds common/plots. Returns 0, or -1 when not found (a copied binary). */
int out_checkout_dir(char *dir, size_t len);

#endif
