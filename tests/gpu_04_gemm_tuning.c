/* GPU test of 04_fused_mlp's GEMM tuning (gemm_tuning.h): --gemm auto measures the versions once
 * per shape and build, keeps the answer in traces/gemm_tuning/ of the checkout, and reads it back.
 *
 *   gpu_04_gemm_tuning
 *
 * The shape (77 tokens, 64 -> 96) is one no stage runs by default, so the line it adds to this
 * GPU's file is the test's own; the test removes it again. What it checks: the first call
 * measures ("measured now") and returns a version that takes the shape and runs here; the second
 * reads the same version back ("measured before"); the file names this build; and the chosen
 * version's output matches the CPU reference (so a measurement that broke m would show).
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "ceilings.h"
#include "dtype.h"
#include "../04_fused_mlp/gemm_geglu.h"
#include "../04_fused_mlp/gemm_tuning.h"
#include "harness.h"
#include "ref.h"

enum { M = 77, DIM = 64, HIDDEN = 96 };

static int have_gpu(void) { return harness_no_gpu() == NULL; }

/* Removes this test's line from the file, so that the next run measures again. */
static void forget_shape(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (!f) return;
    static char text[1 << 16], kept[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    kept[0] = '\0';
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, key, strlen(key)) != 0) snprintf(kept + strlen(kept), sizeof kept - strlen(kept), "%s\n", line);
    f = fopen(path, "w");
    if (!f) return;
    fputs(kept, f);
    fclose(f);
}

static int test_measured_then_read_back(void)
{
    if (!have_gpu()) SKIP(harness_no_gpu());
    if (!gemm_geglu_default_version()) SKIP("no version runs here (needs sm_80 or newer)");
    const dtype_t t = DTYPE_BF16;
    int dev, driver;
    struct cudaDeviceProp p;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&p, dev);
    cudaDriverGetVersion(&driver);
    char path[PATH_MAX], key[96];
    EXPECT(gpu_store_path(path, sizeof path, "gemm_tuning", p.name, driver) == 0, "no place for the tuning file");
    snprintf(key, sizeof key, "bf16 %d %d %d ", M, DIM, HIDDEN);
    forget_shape(path, key);

    /* inputs of 16-bit values, random, never zeros; m poisoned */
    rng_t rng = rng_seed(77);
    float *x = malloc(sizeof(float) * M * DIM), *wg = malloc(sizeof(float) * HIDDEN * DIM);
    float *wu = malloc(sizeof(float) * HIDDEN * DIM);
    uint16_t *bits = malloc(2 * (size_t)HIDDEN * DIM), *got = malloc(2 * (size_t)M * HIDDEN);
    void *dx, *dwg, *dwu, *dm;
    cudaMalloc(&dx, 2 * M * DIM), cudaMalloc(&dwg, 2 * HIDDEN * DIM), cudaMalloc(&dwu, 2 * HIDDEN * DIM);
    cudaMalloc(&dm, 2 * M * HIDDEN);
    fill_uniform(&rng, x, M * DIM, -1.0f, 1.0f);
    fill_uniform(&rng, wg, HIDDEN * DIM, -0.125f, 0.125f);
    fill_uniform(&rng, wu, HIDDEN * DIM, -0.125f, 0.125f);
    dtype_round_and_pack(t, x, bits, M * DIM);
    cudaMemcpy(dx, bits, 2 * M * DIM, cudaMemcpyHostToDevice);
    dtype_round_and_pack(t, wg, bits, HIDDEN * DIM);
    cudaMemcpy(dwg, bits, 2 * HIDDEN * DIM, cudaMemcpyHostToDevice);
    dtype_round_and_pack(t, wu, bits, HIDDEN * DIM);
    cudaMemcpy(dwu, bits, 2 * HIDDEN * DIM, cudaMemcpyHostToDevice);

    char why1[512], why2[512];
    const int v1 = gemm_tuned_version(t, dx, dwg, dwu, dm, M, DIM, HIDDEN, 0, why1, sizeof why1);
    printf("  first:  version %d: %s\n", v1, why1);
    const int v2 = gemm_tuned_version(t, dx, dwg, dwu, dm, M, DIM, HIDDEN, 0, why2, sizeof why2);
    printf("  second: version %d: %s\n", v2, why2);
    EXPECT(v1 >= 1 && gemm_geglu_runs_here(v1) && gemm_geglu_accepts(v1, t, M, DIM, HIDDEN, NULL, 0), "version %d", v1);
    EXPECT(strstr(why1, "measured now"), "first call: %s", why1);
    EXPECT(v2 == v1 && strstr(why2, "measured before"), "second call: version %d, %s", v2, why2);
    FILE *f = fopen(path, "r");
    EXPECT(f, "%s not written", path);
    char first[128], want[128];
    EXPECT(fgets(first, sizeof first, f), "%s is empty", path);
    fclose(f);
    snprintf(want, sizeof want, "build %s\n", gemm_geglu_build_stamp());
    EXPECT(strcmp(first, want) == 0, "first line '%s', not this build's", first);

    /* the chosen version, on poisoned m, against the CPU reference */
    cudaMemset(dm, 0xFF, 2 * M * HIDDEN);
    launch_gemm_geglu(v1, t, dx, dwg, dwu, dm, M, DIM, HIDDEN, 0);
    EXPECT(cudaDeviceSynchronize() == cudaSuccess, "the launch failed");
    cudaMemcpy(got, dm, 2 * M * HIDDEN, cudaMemcpyDeviceToHost);
    double num = 0, den = 0;
    size_t nan = 0;
    for (size_t r = 0; r < M; r++)
        for (size_t j = 0; j < HIDDEN; j++) {
            double g = 0, u = 0;
            for (size_t k = 0; k < DIM; k++) g += (double)x[r * DIM + k] * wg[j * DIM + k], u += (double)x[r * DIM + k] * wu[j * DIM + k];
            const double ref = ref_gelu_tanh(g) * u, v = bf16_to_float(got[r * HIDDEN + j]);
            nan += v != v;
            num += (v - ref) * (v - ref), den += ref * ref;
        }
    forget_shape(path, key);
    cudaFree(dx), cudaFree(dwg), cudaFree(dwu), cudaFree(dm);
    free(x), free(wg), free(wu), free(bits), free(got);
    EXPECT(nan == 0, "%zu elements unwritten", nan);
    EXPECT(sqrt(num / den) <= dtype_tolerance(t), "rel. error %.3e", sqrt(num / den));
    return 0;
}

int main(void)
{
    TEST_RUN(test_measured_then_read_back);
    TEST_EXIT();
}
