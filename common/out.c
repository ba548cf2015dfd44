#include "program.h"
#include "out.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int out_mkdirs(const char *dir)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        program_error("output directory name too long: %s", dir);
        return -1;
    }
    for (char *p = path + 1;; p++) {
        char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                program_error("cannot create output directory %s: %s", path, strerror(errno));
                return -1;
            }
            *p = c;
        }
        if (c == '\0') break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK) != 0) {
        program_error("output directory %s is not a writable directory", dir);
        return -1;
    }
    return 0;
}

FILE *out_open(const char *path, char *tmp, size_t tmp_len)
{
    snprintf(tmp, tmp_len, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) program_error("cannot write %s: %s", tmp, strerror(errno));
    return f;
}

int out_commit(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        program_error("writing %s failed: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

int out_dir_check(const char *flag, const char *dir)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        program_error("%s: directory name too long: %s", flag, dir);
        return -1;
    }
    /* the deepest part of the path that exists must be a writable directory */
    struct stat st;
    for (;;) {
        if (stat(path, &st) == 0) break;
        if (errno != ENOENT) {
            program_error("%s: cannot create output directory %s: %s", flag, dir, strerror(errno));
            return -1;
        }
        char *slash = strrchr(path, '/');
        if (!slash) {
            snprintf(path, sizeof path, ".");
            continue;
        }
        if (slash == path) slash[1] = '\0';
        else *slash = '\0';
    }
    if (!S_ISDIR(st.st_mode) || access(path, W_OK | X_OK) != 0) {
        program_error("%s: cannot create output directory %s: %s is not a writable directory", flag, dir, path);
        return -1;
    }
    return 0;
}
