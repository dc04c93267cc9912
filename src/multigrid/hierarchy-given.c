/* Multigrid over levels built by the caller (fea_mg_create_given): the
 * multipatch B-spline hierarchy of src/multipatch/multipatch-mg.c hands its
 * assembled level matrices, its global prolongations and its Schwarz blocks
 * here, and gets the cycle, the smoothers and CG of the single-space
 * multigrid (cycle.c, smoother.c, smoother-schwarz.c) unchanged.
 *
 * Levels carry no fea_problem: a multipatch level is a set of patch problems
 * coupled through a global numbering, which no single problem describes.
 * What the cycle needs of a level is its operator (apply and diagonal), its
 * transfers, its smoother's data and its size, so each level gets a CSR
 * operator around the given matrix (operator-csr.c's product and diagonal,
 * adopted without a problem) and the smoother's setup is done here the way
 * smoother.c does it on problem levels: 1 / diag(A) and 20 Lanczos steps on
 * D^-1/2 A D^-1/2 (Chebyshev-Jacobi, Jacobi Richardson) or on A (plain
 * Richardson), or the Schwarz blocks' inverses and their CG-Lanczos bound.
 * Host memory only: the operators are host CSR products. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "internal/backend.h"
#include "internal/error.h"
#include "linalg/blas.h"
#include "linalg/csr-product.h"
#include "linalg/lanczos.h"
#include "multigrid-impl.h"

#define GIVEN_LANCZOS_STEPS 20 /* as smoother.c's LANCZOS_STEPS, for the same reasons */

static void given_operator_free(void *object) {
  fea_operator *op = object;
  if (op->impl && op->impl->destroy) op->impl->destroy(op->data);
  free(op->rhs);
  free(op);
}

/* A host CSR operator around A (a reference taken), without a problem; rhs
 * (A->rows values) kept when given. */
static fea_status given_operator(fea_context *ctx, fea_matrix *A, const double *rhs,
                                 fea_operator **out) {
  fea_operator *op;
  FEA_CALL(fea_object_alloc(ctx, sizeof *op, "operator", given_operator_free, (void **)&op));
  op->info = (fea_operator_info)FEA_OPERATOR_INFO_INIT;
  op->num_free = A->rows;
  op->rhs = calloc((size_t)A->rows + 1, sizeof *op->rhs);
  fea_status st = op->rhs
                      ? fea_operator_csr_adopt(op, A)
                      : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                  "no memory for %lld right-hand-side values", (long long)A->rows);
  if (st != FEA_SUCCESS) {
    fea_object_release(op);
    return st;
  }
  if (rhs) memcpy(op->rhs, rhs, (size_t)A->rows * sizeof *op->rhs);
  op->rhs_ready = 1; /* a level below the finest has no load of its own: zeros */
  op->info.rows = A->rows;
  op->info.memory_bytes += (uint64_t)A->rows * sizeof(double);
  *out = op;
  return FEA_SUCCESS;
}

/* y = S A S x (S = diag(scale), or I when scale is NULL). */
typedef struct scaled_op {
  fea_operator *op;
  const double *scale;
  double *tmp;
} scaled_op;

static fea_status scaled_apply(void *user, const double *x, double *y) {
  const scaled_op *o = user;
  const fea_index n = o->op->num_free;
  if (!o->scale) return o->op->impl->apply(o->op, x, y, 0);
  for (fea_index i = 0; i < n; i++) o->tmp[i] = o->scale[i] * x[i];
  FEA_CALL(o->op->impl->apply(o->op, o->tmp, y, 0));
  for (fea_index i = 0; i < n; i++) y[i] *= o->scale[i];
  return FEA_SUCCESS;
}

/* Jacobi's 1 / diag(A) into lv->dinv (scaled smoothers) and lambda_max of
 * D^-1 A or A; Richardson's omega checked as smoother.c checks it. */
static fea_status point_smoother(fea_mg *mg, int l) {
  fea_context *ctx = mg->ctx;
  fea_mg_level *lv = &mg->levels[l];
  const fea_multigrid_desc *d = &mg->desc;
  const int scaled = d->smoother == FEA_MG_SMOOTHER_CHEBYSHEV || d->jacobi;
  const fea_index n = lv->n;
  double *scale = NULL;
  if (scaled) {
    FEA_CALL(mg->k->alloc(ctx, n, &lv->dinv));
    FEA_CALL(lv->op->impl->diagonal(lv->op, lv->dinv));
    scale = malloc(2 * ((size_t)n + 1) * sizeof *scale);
    FEA_CHECK(scale, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a scaling of %lld entries",
              (long long)n);
    for (fea_index i = 0; i < n; i++) {
      const double a = lv->dinv[i];
      if (!(a > 0.0 && isfinite(a))) {
        free(scale);
        return FEA_ERROR(ctx, FEA_ERR_NOT_POSDEF,
                         "level %d: diagonal entry %lld of the operator is %g; the smoother "
                         "needs positive entries",
                         l, (long long)i, a);
      }
      lv->dinv[i] = 1.0 / a;
      scale[i] = sqrt(lv->dinv[i]);
    }
  }
  scaled_op o = {lv->op, scale, scale ? scale + n + 1 : NULL};
  double lmin = 0.0;
  fea_blas_use_threads(1); /* smoother.c: OpenBLAS's pool against the OpenMP team */
  fea_status st = fea_lanczos_extremes(ctx, n, scaled_apply, &o, GIVEN_LANCZOS_STEPS, 0,
                                       (uint64_t)l + 1, &lmin, &lv->lambda_max);
  free(scale);
  FEA_CALL(st);
  FEA_CHECK(lv->lambda_max > 0.0 && isfinite(lv->lambda_max), ctx, FEA_ERR_NOT_POSDEF,
            "level %d: the largest eigenvalue estimate of the operator is %g", l, lv->lambda_max);
  const double prod = d->omega * lv->lambda_max;
  FEA_CHECK(d->smoother != FEA_MG_SMOOTHER_RICHARDSON || prod < 2.0, ctx, FEA_ERR_INVALID_ARG,
            "omega = %g is unstable for %s Richardson on level %d (%lld free DoFs): "
            "lambda_max = %g of %s, and omega * lambda_max = %g >= 2; use omega < %g or the "
            "Chebyshev smoother",
            d->omega, d->jacobi ? "Jacobi-scaled" : "unscaled", l, (long long)n, lv->lambda_max,
            d->jacobi ? "D^-1 A" : "A", prod, 2.0 / lv->lambda_max);
  return FEA_SUCCESS;
}

/* The last level's dense Cholesky factor, from its CSR matrix. */
static fea_status factor_last(fea_mg *mg, const fea_matrix *A) {
  const fea_index n = A->rows;
  mg->coarse_chol = calloc((size_t)n * (size_t)n, sizeof *mg->coarse_chol);
  FEA_CHECK(mg->coarse_chol, mg->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the dense %lld x %lld coarsest-level matrix", (long long)n,
            (long long)n);
  for (fea_index i = 0; i < n; i++)
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      const fea_index j = A->col_idx[k];
      if (j >= i) mg->coarse_chol[(size_t)i * (size_t)n + (size_t)j] = A->values[k];
    }
  return mg->k->host_potrf(mg->ctx, n, mg->coarse_chol);
}

/* Everything of level l: operator (not on a factored last level below the
 * finest), transfers, work vectors, smoother. */
static fea_status build_level(fea_mg *mg, int l, const fea_mg_given_level *g, const double *rhs) {
  fea_context *ctx = mg->ctx;
  const fea_mg_kernels *k = mg->k;
  fea_mg_level *lv = &mg->levels[l];
  const int last = l + 1 == mg->num_levels;
  lv->n = g->A->rows;
  for (int d = 0; d < 3; d++) lv->cells[d] = g->cells[d] > 0 ? g->cells[d] : 1;
  double t = omp_get_wtime();
  if (!last || l == 0) FEA_CALL(given_operator(ctx, g->A, l == 0 ? rhs : NULL, &lv->op));
  mg->phases.operators += omp_get_wtime() - t;
  FEA_CALL(k->alloc(ctx, lv->n, &lv->r));
  FEA_CALL(k->alloc(ctx, lv->n, &lv->w));
  if (l > 0) {
    FEA_CALL(k->alloc(ctx, lv->n, &lv->b));
    FEA_CALL(k->alloc(ctx, lv->n, &lv->x));
  }
  if (last) {
    t = omp_get_wtime();
    FEA_CALL(factor_last(mg, g->A));
    mg->phases.coarse += omp_get_wtime() - t;
    return FEA_SUCCESS;
  }
  t = omp_get_wtime();
  fea_object_retain(g->P);
  lv->P = g->P;
  FEA_CALL(fea_csr_transpose(ctx, lv->P, &lv->PT));
  FEA_CALL(k->matrix_create(ctx, lv->P, &lv->Pk));
  FEA_CALL(k->matrix_create(ctx, lv->PT, &lv->PTk));
  mg->phases.transfers += omp_get_wtime() - t;
  t = omp_get_wtime();
  fea_status st = FEA_SUCCESS;
  if (mg->desc.smoother == FEA_MG_SMOOTHER_SCHWARZ) {
    st = fea_mg_schwarz_setup_lists(ctx, lv->n, g->A, g->nblocks, g->block_ptr, g->block_dofs, l,
                                    &lv->schwarz);
    if (st == FEA_SUCCESS)
      st = fea_mg_schwarz_lambda_max(ctx, lv->schwarz, lv->op, lv->n, l, &lv->lambda_max);
  } else {
    st = point_smoother(mg, l);
  }
  mg->phases.smoother += omp_get_wtime() - t;
  return st;
}

/* The levels' sizes and transfers agree, the last fits a dense factor. */
static fea_status check_levels(fea_context *ctx, const fea_multigrid_desc *desc, int L,
                               const fea_mg_given_level *g) {
  for (int l = 0; l < L; l++) {
    FEA_CHECK(g[l].A && g[l].A->rows == g[l].A->cols && g[l].A->rows > 0, ctx, FEA_ERR_INVALID_ARG,
              "level %d: no square matrix with free DoFs", l);
    if (l + 1 < L)
      FEA_CHECK(g[l].P && g[l].P->rows == g[l].A->rows && g[l].P->cols == g[l + 1].A->rows, ctx,
                FEA_ERR_DIMENSION, "level %d: the prolongation does not map level %d to it", l,
                l + 1);
    FEA_CHECK(desc->smoother != FEA_MG_SMOOTHER_SCHWARZ || l + 1 == L || g[l].block_ptr, ctx,
              FEA_ERR_INVALID_ARG, "level %d: the Schwarz smoother without blocks", l);
  }
  const fea_index nc = g[L - 1].A->rows;
  FEA_CHECK(nc <= FEA_MG_MAX_COARSE_DOFS, ctx, FEA_ERR_UNSUPPORTED,
            "the coarsest level (%lld x %lld x %lld elements per patch) has %lld free DoFs, more "
            "than the %d a dense coarse solve takes: use element counts with more factors of 2, "
            "or a smaller coarsest_cells (%lld)",
            (long long)g[L - 1].cells[0], (long long)g[L - 1].cells[1],
            (long long)(g[L - 1].cells[2] > 0 ? g[L - 1].cells[2] : 1), (long long)nc,
            FEA_MG_MAX_COARSE_DOFS, (long long)desc->coarsest_cells);
  return FEA_SUCCESS;
}

fea_status fea_mg_create_given(fea_context *ctx, const fea_multigrid_desc *desc, int num_levels,
                               const fea_mg_given_level *levels, const double *rhs, fea_mg **out) {
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(desc, ctx);
  FEA_CHECK_NULL(levels, ctx);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK(num_levels >= 1, ctx, FEA_ERR_INVALID_ARG, "%d levels", num_levels);
  FEA_CALL(fea_mg_check_desc(ctx, desc));
  FEA_CHECK(!ctx->backend->mg && !ctx->backend->op, ctx, FEA_ERR_UNSUPPORTED,
            "multigrid on given CSR levels runs on host backends; '%s' keeps its vectors "
            "elsewhere",
            ctx->resource);
  FEA_CALL(check_levels(ctx, desc, num_levels, levels));
  const double t0 = omp_get_wtime();
  fea_mg *mg = calloc(1, sizeof *mg);
  FEA_CHECK(mg, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a multigrid solver");
  fea_object_retain(ctx);
  mg->ctx = ctx;
  mg->k = &fea_mg_host_kernels;
  mg->desc = *desc;
  mg->stats = (fea_multigrid_stats)FEA_MULTIGRID_STATS_INIT;
  mg->levels = calloc((size_t)num_levels, sizeof *mg->levels);
  fea_status st = mg->levels ? FEA_SUCCESS
                             : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d levels",
                                         num_levels);
  if (st == FEA_SUCCESS) mg->num_levels = num_levels;
  for (int l = 0; l < num_levels && st == FEA_SUCCESS; l++)
    st = build_level(mg, l, &levels[l], rhs);
  if (st == FEA_SUCCESS) mg->stats.lambda_max = num_levels > 1 ? mg->levels[0].lambda_max : 0.0;
  if (st == FEA_SUCCESS) st = fea_mg_finish(mg, t0);
  if (st != FEA_SUCCESS) {
    fea_mg_destroy(&mg);
    return st;
  }
  *out = mg;
  return FEA_SUCCESS;
}
