/* ceilings.h: the GEMM and copy ceilings of the GPU at hand, as bin/ceilings measured them.
 *
 * Every "% of ceiling" and every floor in the reports divides by two numbers: the dense 16-bit
 * GEMM rate and the device copy bandwidth. They differ between GPU models, and by a few percent
 * between cards of one model, so bin/ceilings stores what it measured, per GPU name and driver,
 * in traces/ceilings/ of the checkout, and every stage reads it back:
 *
 *   make ceilings && bin/ceilings        measures, prints, and stores
 *   ./run 03_simple_mlp                  "ceilings: measured on this machine ..." in the report
 *
 * Without a stored measurement the reports use reference figures measured on an H200 when the
 * GPU is one, and print no percentages at all on other GPUs.
 */
#ifndef CEILINGS_H
#define CEILINGS_H

#include <stddef.h>

typedef struct {
    double gemm_tflops_16bit; /* dense bf16/fp16 GEMM, 8192^3 on random data */
    double copy_gbps;         /* device-to-device copy, bytes read plus written */
    char source[160];         /* where the two numbers come from, for the report */
    int measured;             /* 1: this machine's stored measurement; 0: reference figures or none */
} ceilings_t;

/* traces/<folder>/<GPU name>_driver<N>.txt of the checkout: where a measurement made once per
 * GPU and driver is kept (the ceilings; 04's GEMM tuning). Returns 0, or -1 outside a checkout. */
int gpu_store_path(char *path, size_t len, const char *folder, const char *gpu_name, int driver_version);
/* The file that holds the measurement for this GPU and driver: in CEILINGS_DIR if set, else in
 * traces/ceilings/ of the checkout. Returns 0, or -1 when no such place can be named. */
int ceilings_path(char *path, size_t len, const char *gpu_name, int driver_version);
/* Fills c for this GPU: the stored measurement, else the reference figures for its model, else
 * zeros (no ceilings known). Never fails; c->source says which. */
void ceilings_for(ceilings_t *c, const char *gpu_name, int driver_version);
/* Stores c for this GPU and driver (complete or not at all); returns 0, or -1 with a message. */
int ceilings_save(const ceilings_t *c, const char *gpu_name, int driver_version);
/* Parses a stored file's text; returns 0 when both numbers are present and positive. */
int ceilings_parse(const char *text, ceilings_t *c);

#endif
