/* mlp_shape.h (03_simple_mlp): the MLP's shape flags and what follows from them, for
 * 03_simple_mlp and 04_fused_mlp alike: the check before the GPU, the model at that shape, the
 * files' names, the --dump arrays and the line of shapes in the report.
 */
#ifndef MLP_SHAPE_H
#define MLP_SHAPE_H

#include <stddef.h>

#include "cli.h"
#include "dump.h"
#include "mlp.h"

/* --batch, --seq (tokens = batch x seq), --dim, --hidden; --sweep varies the tokens. */
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

/* 1 with one line in why when the shape overflows or needs more device memory than any GPU
 * holds (with --sweep: at its smallest token count); else 0. No GPU needed. */
int mlp_shape_validate(const mlp_shape *s, const common_args *a, char *why, size_t len);
size_t mlp_shape_tokens(const mlp_shape *s); /* batch x seq */
/* mlp_setup at the shape's widths and `tokens` tokens, from --dtype and --seed; batch and seq are
 * recorded when tokens is batch x seq (the files' names then say them). */
void mlp_setup_shape(mlp_t *m, const common_args *a, const mlp_shape *s, size_t tokens);
/* The files' names: "64x128_768x3072_bf16_cold", or "8_768x3072_bf16" for a swept size. */
void mlp_tag(const mlp_t *m, const common_args *a, char *buf, size_t len);
/* x, Wg, Wu, Wd and y for --dump: fills out[0..4], returns 5. */
int mlp_arrays(const mlp_t *m, dump_array *out);
/* "shapes: x [8192, 768]; Wg, Wu [3072, 768]; ..." */
void mlp_describe(const mlp_t *m);

#endif
