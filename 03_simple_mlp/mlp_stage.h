/* mlp_stage.h (03_simple_mlp): what the shared driver (common/stage.h) needs to run the MLP,
 * for 03_simple_mlp and 04_fused_mlp alike: the shape flags, setup, check, napkin math, the
 * per-op report's figures and the file names. The forwards themselves are in eager.c and the
 * stages' main.c.
 */
#ifndef MLP_STAGE_H
#define MLP_STAGE_H

#include <stddef.h>

#include "mlp.h"
#include "stage.h"

/* The shape flags: --batch, --seq (tokens = batch x seq), --dim, --hidden; --sweep varies the
 * tokens. A stage's struct of flag values starts with one (04's adds its own flags after it):
 * every flags argument below points at such a struct. */
typedef struct {
    long long batch, seq, dim, hidden;
} mlp_shape;
extern const mlp_shape mlp_default_shape; /* the article's: 64 x 128 tokens, 768 -> 3072 */

/* The four rows of the shape flags, for a flags struct `type` whose shape members are reached by
 * `in` (empty for an mlp_shape itself, `shape.` for a member named shape). */
#define MLP_SHAPE_OPTS(type, in)                                                                                   \
    {"batch", offsetof(type, in batch), 1, 1 << 20, "sequences per forward (tokens = batch x seq)", FLAG_WHOLE, 1}, \
    {"seq", offsetof(type, in seq), 1, 1 << 20, "tokens per sequence (x has batch x seq rows)", FLAG_WHOLE, 1},     \
    {"dim", offsetof(type, in dim), 1, 1 << 20, "model width: x and y are [tokens, dim]", FLAG_WHOLE, 0},           \
    {"hidden", offsetof(type, in hidden), 1, 1 << 20, "MLP width: Wg and Wu are [hidden, dim], Wd is [dim, hidden]", \
     FLAG_WHOLE, 0}
enum { MLP_N_SHAPE_OPTS = 4 };
extern const stage_opt mlp_opts[MLP_N_SHAPE_OPTS]; /* 03's flags: the shape alone */

int mlp_stage_validate(const void *flags, const common_args *a, char *why, size_t len);
size_t mlp_stage_size(const void *flags); /* batch x seq */
void *mlp_stage_setup(const common_args *a, void *flags, size_t tokens);
/* Fills m (03's model inside another stage's) for the flags' shape at `tokens` tokens. */
void mlp_stage_fill(mlp_t *m, const common_args *a, const void *flags, size_t tokens);
void mlp_stage_free(void *model);
double mlp_stage_check(void *model, void (*forward)(void *model));
double mlp_stage_flops(const void *model);
double mlp_stage_min_bytes(const void *model);
cudaStream_t mlp_stage_stream(const void *model);
void mlp_stage_tag(const void *model, const common_args *a, char *buf, size_t len);
int mlp_stage_arrays(const void *model, stage_array *out, int max);
void mlp_stage_describe(const void *model);
void mlp_stage_sweep_names(const void *flags, const common_args *a, const char *variant, char *stem, char *title,
                           size_t len);
/* The per-op report's figures of eager's five ops (stage_ops). */
double mlp_stage_op_flops(const void *model, int op);
double mlp_stage_op_bytes(const void *model, int op);
void mlp_stage_op_problem(const void *model, int op, char *buf, size_t len);
/* After eager's report: what its four [M, hidden] intermediates cost in HBM traffic. */
void mlp_report_intermediates(void *model, int variant, const stage_result *r, const gpu_info *g,
                              const common_args *a);

#endif
