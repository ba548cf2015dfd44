/* test_ceilings.c: the stored ceilings (common/ceilings.h) round-trip, and without a stored
 * measurement the reports fall back to the reference figures, or to none on an unknown GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ceilings.h"
#include "harness.h"

static char dir[256];

static int unknown_gpu_has_none(void)
{
    ceilings_t c;
    ceilings_for(&c, "Some Future GPU", 590000);
    EXPECT(c.gemm_tflops_16bit == 0 && c.copy_gbps == 0, "an unmeasured, unknown GPU gets no ceilings");
    EXPECT(strstr(c.source, "bin/ceilings") != NULL, "the source tells how to measure: %s", c.source);
    return 0;
}

static int h200_falls_back_to_reference(void)
{
    ceilings_t c;
    ceilings_for(&c, "NVIDIA H200", 580159);
    EXPECT(c.gemm_tflops_16bit > 700 && c.copy_gbps > 4000, "the H200's reference figures");
    EXPECT(strstr(c.source, "reference") != NULL, "the source says reference: %s", c.source);
    return 0;
}

static int saved_measurement_wins(void)
{
    ceilings_t m = {.gemm_tflops_16bit = 777.5, .copy_gbps = 4100};
    EXPECT(ceilings_save(&m, "NVIDIA H200", 580159) == 0, "save failed");
    ceilings_t c;
    ceilings_for(&c, "NVIDIA H200", 580159);
    EXPECT(c.gemm_tflops_16bit > 777.4 && c.gemm_tflops_16bit < 777.6, "stored GEMM rate read back: %f",
           c.gemm_tflops_16bit);
    EXPECT(c.copy_gbps == 4100, "stored copy rate read back: %f", c.copy_gbps);
    EXPECT(strstr(c.source, "measured") != NULL, "the source says measured: %s", c.source);
    ceilings_for(&c, "NVIDIA H200", 590000); /* another driver: not that measurement */
    EXPECT(strstr(c.source, "reference") != NULL, "another driver falls back: %s", c.source);
    char path[1024];
    EXPECT(ceilings_path(path, sizeof path, "NVIDIA H200", 580159) == 0, "no path");
    EXPECT(strchr(strrchr(path, '/'), ' ') == NULL, "no spaces in the file name: %s", path);
    unlink(path);
    return 0;
}

static int parse_refuses_garbage(void)
{
    ceilings_t c;
    EXPECT(ceilings_parse("gemm_tflops_16bit=800\ncopy_gbps=4000\n", &c) == 0, "a good file parses");
    EXPECT(ceilings_parse("gemm_tflops_16bit=800\n", &c) != 0, "a missing number is refused");
    EXPECT(ceilings_parse("gemm_tflops_16bit=-1\ncopy_gbps=4000\n", &c) != 0, "a negative rate is refused");
    EXPECT(ceilings_parse("", &c) != 0, "an empty file is refused");
    return 0;
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/test_ceilings.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        printf("FAIL test_ceilings: cannot make a temporary directory\n");
        return 1;
    }
    setenv("CEILINGS_DIR", dir, 1);
    TEST_RUN(unknown_gpu_has_none);
    TEST_RUN(h200_falls_back_to_reference);
    TEST_RUN(saved_measurement_wins);
    TEST_RUN(parse_refuses_garbage);
    rmdir(dir);
    TEST_EXIT();
}
