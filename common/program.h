/* program.h: the name every message starts with, "<program>: error: ...".
 *
 * The flag parser sets it from the program's spec; every later refusal (a directory that cannot
 * be made, a size that overflows, an allocation that cannot fit) prints through program_error,
 * so all of a program's messages read alike.
 */
#ifndef PROGRAM_H
#define PROGRAM_H

#ifdef __cplusplus
extern "C" {
#endif

void program_set_name(const char *name);
const char *program_name(void);
/* One line on stderr: "<program>: error: <message>". */
void program_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif
