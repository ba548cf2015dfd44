/* eager.c (03_simple_mlp): the GeGLU MLP forward as PyTorch eager runs it, op by op: the lesson
 * of 03_simple_mlp, and the first rung of 04_fused_mlp's ladder, which links this file.
 *
 *   gate = x Wg^T,  up = x Wu^T,  act = gelu_tanh(gate),  prod = act * up,  y = prod Wd^T
 */
#include <stdlib.h>

#include "check.h"
#include "mlp.h"
#include "prof.h"

/* ---- the forward ----------------------------------------------------------------------- */

/* The handle, then one plan per GEMM shape: descriptors, the heuristic query that picks the
 * kernel, a workspace. Once: every later call goes straight to the launch. (cublasGemmEx, the
 * classic API, makes that choice inside every call, and at a few tokens that CPU time is most
 * of the forward.) */
static void plan_gemms(mlp_t *m)
{
    size_t M = m->tokens, D = m->dim, H = m->hidden;
    CUBLASLT_CHECK(cublasLtCreate(&m->lt));
    /* w_kn = 0: y[M, N] = x[M, K] . W^T with W stored [N, K], read through the transpose flag
     * instead of a transposed copy (02_linear shows why that costs nothing) */
    if (lt_plan_init(&m->plan_in, m->lt, m->dtype, 0, M, H, D, 1, CUBLASLT_EPILOGUE_DEFAULT, NULL) != 0 ||
        lt_plan_init(&m->plan_down, m->lt, m->dtype, 0, M, D, H, 1, CUBLASLT_EPILOGUE_DEFAULT, NULL) != 0)
        exit(EXIT_BAD_INPUT);
    m->planned = 1;
}

/* One op of the five; each result goes to device memory and the next op reads it back. */
void mlp_run_op(mlp_t *m, mlp_op op)
{
    size_t n = m->tokens * m->hidden;
    if (op != MLP_GELU && op != MLP_MUL && !m->planned) plan_gemms(m);
    switch (op) {
    case MLP_GATE: lt_plan_run(&m->plan_in, 1.0f, m->x, m->wg, 0.0f, m->gate, m->gate, m->stream); break;
    case MLP_UP: lt_plan_run(&m->plan_in, 1.0f, m->x, m->wu, 0.0f, m->up, m->up, m->stream); break;
    case MLP_GELU:
        launch_gelu_tanh(m->dtype, m->gate, m->act, n, m->stream);
        LAUNCH_CHECK();
        break;
    case MLP_MUL:
        launch_mul(m->dtype, m->act, m->up, m->prod, n, m->stream);
        LAUNCH_CHECK();
        break;
    default: lt_plan_run(&m->plan_down, 1.0f, m->prod, m->wd, 0.0f, m->y, m->y, m->stream); break;
    }
}

/* PyTorch eager, op by op, each op in its own range, as the profiler shows aten ops. */
void mlp_forward_eager(mlp_t *m)
{
    prof_range_push("mlp_fwd");
    for (int op = 0; op < MLP_N_OPS; op++) {
        prof_range_push(mlp_op_names[op]);
        mlp_run_op(m, (mlp_op)op);
        prof_range_pop();
    }
    prof_range_pop();
}
