#include "out.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int out_mkdirs(const char *dir)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        fprintf(stderr, "error: output directory name too long: %s\n", dir);
        return -1;
    }
    for (char *p = path + 1;; p++) {
        char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                fprintf(stderr, "error: cannot create output directory %s: %s\n", path, strerror(errno));
                return -1;
            }
            *p = c;
        }
        if (c == '\0') break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK) != 0) {
        fprintf(stderr, "error: output directory %s is not a writable directory\n", dir);
        return -1;
    }
    return 0;
}

FILE *out_open(const char *path, char *tmp, size_t tmp_len)
{
    snprintf(tmp, tmp_len, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) fprintf(stderr, "error: cannot write %s: %s\n", tmp, strerror(errno));
    return f;
}

int out_commit(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "error: writing %s failed: %s\n", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}
