/* mlp_stage.h (03_simple_mlp): what the shared driver (common/stage.h) needs to run the MLP,
 * for 03_simple_mlp and 04_fused_mlp alike: the shape flags, setup, check, napkin math, the ops
 * of the per-op report and the file names. The forwards themselves are in the stages' main.c. */
#ifndef MLP_STAGE_H
#define MLP_STAGE_H

#include "mlp.h"
#include "stage.h"

/* --batch, --seq (tokens = batch x seq), --dim, --hidden; --sweep varies the tokens. */
extern long long mlp_batch, mlp_seq, mlp_dim, mlp_hidden;
extern stage_opt mlp_opts[4];

int mlp_stage_validate(const common_args *a, int variant, char *why, size_t len);
void *mlp_stage_setup(const common_args *a, size_t tokens); /* 0: batch x seq */
void mlp_stage_free(void *model);
double mlp_stage_check(void *model, void (*forward)(void *model));
double mlp_stage_flops(const void *model);
double mlp_stage_min_bytes(const void *model);
cudaStream_t mlp_stage_stream(const void *model);
void mlp_stage_tag(const void *model, const common_args *a, char *buf, size_t len);
int mlp_stage_arrays(const void *model, stage_array *out, int max);
void mlp_stage_describe(const void *model);
void mlp_stage_sweep_names(const common_args *a, const char *variant, char *stem, char *title, size_t len);
/* eager's five ops, each timed alone, and the rows of the per-kernel table */
extern const stage_ops mlp_stage_ops;
/* After eager's report: what its four [M, hidden] intermediates cost in HBM traffic. */
void mlp_report_intermediates(void *model, int variant, const stage_result *r, const gpu_info *g,
                              const common_args *a);

#endif
