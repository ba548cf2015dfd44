#include "ceilings.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "out.h"
#include "program.h"

/* Measured on each GPU model with bin/ceilings (docs/01_matmul_add.md, "Ceilings"): an 8192^3
 * bf16 GEMM through cuBLAS on random data, and a large device-to-device copy. */
static const struct {
    const char *name;
    double gemm_tflops_16bit, copy_gbps;
} reference[] = {
    {"NVIDIA H200", 798.0, 4250.0},
};

/* "NVIDIA H200", 580 -> "NVIDIA_H200_driver580.txt": a file name without spaces or slashes */
static void file_name(char *name, size_t len, const char *gpu_name, int driver_version)
{
    char gpu[128];
    size_t i = 0;
    for (; i < sizeof gpu - 1 && gpu_name[i]; i++)
        gpu[i] = isalnum((unsigned char)gpu_name[i]) || gpu_name[i] == '-' ? gpu_name[i] : '_';
    gpu[i] = '\0';
    snprintf(name, len, "%s_driver%d.txt", gpu, driver_version);
}

int gpu_store_path(char *path, size_t len, const char *folder, const char *gpu_name, int driver_version)
{
    char root[PATH_MAX - 256], name[160];
    if (out_checkout_dir(root, sizeof root) != 0) return -1;
    file_name(name, sizeof name, gpu_name, driver_version);
    return snprintf(path, len, "%s/traces/%s/%s", root, folder, name) >= (int)len ? -1 : 0;
}

int ceilings_path(char *path, size_t len, const char *gpu_name, int driver_version)
{
    const char *env = getenv("CEILINGS_DIR");
    if (!env || !*env) return gpu_store_path(path, len, "ceilings", gpu_name, driver_version);
    char name[160];
    file_name(name, sizeof name, gpu_name, driver_version);
    return snprintf(path, len, "%s/%s", env, name) >= (int)len ? -1 : 0;
}

int ceilings_parse(const char *text, ceilings_t *c)
{
    const char *g = strstr(text, "gemm_tflops_16bit=");
    const char *b = strstr(text, "copy_gbps=");
    if (!g || !b) return -1;
    c->gemm_tflops_16bit = strtod(g + strlen("gemm_tflops_16bit="), NULL);
    c->copy_gbps = strtod(b + strlen("copy_gbps="), NULL);
    return c->gemm_tflops_16bit > 0 && c->copy_gbps > 0 ? 0 : -1;
}

static int load(ceilings_t *c, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char text[1024];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return ceilings_parse(text, c);
}

void ceilings_for(ceilings_t *c, const char *gpu_name, int driver_version)
{
    memset(c, 0, sizeof *c);
    char path[PATH_MAX];
    if (ceilings_path(path, sizeof path, gpu_name, driver_version) == 0 && load(c, path) == 0) {
        snprintf(c->source, sizeof c->source, "measured on this machine by bin/ceilings");
        c->measured = 1;
        return;
    }
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < sizeof reference / sizeof reference[0]; i++)
        if (strcmp(gpu_name, reference[i].name) == 0) {
            c->gemm_tflops_16bit = reference[i].gemm_tflops_16bit;
            c->copy_gbps = reference[i].copy_gbps;
            snprintf(c->source, sizeof c->source,
                     "reference figures of an %s (make ceilings && bin/ceilings measures yours)", reference[i].name);
            return;
        }
    snprintf(c->source, sizeof c->source, "none known for this GPU (make ceilings && bin/ceilings measures them)");
}

int ceilings_save(const ceilings_t *c, const char *gpu_name, int driver_version)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    if (ceilings_path(path, sizeof path, gpu_name, driver_version) != 0) {
        program_error("no place to store the ceilings (set CEILINGS_DIR)");
        return -1;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    if (out_mkdirs(dir) != 0) return -1;
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f) return -1;
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    fprintf(f, "gpu=%s\ndriver=%d\ndate=%s\ngemm_tflops_16bit=%.1f\ncopy_gbps=%.0f\n", gpu_name, driver_version,
            date, c->gemm_tflops_16bit, c->copy_gbps);
    if (out_commit(f, tmp, path) != 0) return -1;
    printf("ceilings: stored in %s (every stage's report reads them from there)\n", path);
    return 0;
}
