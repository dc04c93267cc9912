/* Multigrid cycles and iterations, and the object's life cycle.
 *
 * One cycle B ~ A^-1 on level l (zero initial guess on every level below the
 * finest, as a correction): pre-smoothing, restriction of the residual by
 * P^T, one (V) or two (W) cycles on level l + 1, prolongation of the
 * correction, post-smoothing. The coarsest level is solved exactly by the
 * dense Cholesky factor (fea_dense_potrf/potrs) when it has free DoFs; the
 * paper's one-element coarsest mesh has none, so the coarse correction is
 * simply zero there.
 *
 * The finest level runs either the stationary iteration x += B (b - A x)
 * (krylov = 0) or CG preconditioned by B (krylov = 1, fea_cg_run), both
 * stopping at ||b - A x|| <= max(rtol ||b||, atol). The stationary
 * iteration measures the true residual; CG its recurrence. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/backend.h"
#include "base/context.h"
#include "base/progress.h"
#include "linalg/dense.h"
#include "internal/error.h"
#include "base/memory-limit.h"
#include "multigrid-impl.h"
#include "linalg/vector.h"

/* ---- options --------------------------------------------------------------------------------- */

static fea_status check_desc(fea_context *ctx, const fea_multigrid_desc *d) {
  FEA_CHECK(d->cycle == FEA_MG_CYCLE_V || d->cycle == FEA_MG_CYCLE_W, ctx, FEA_ERR_INVALID_ARG,
            "cycle is %d; valid: FEA_MG_CYCLE_V (0), FEA_MG_CYCLE_W (1)", (int)d->cycle);
  FEA_CHECK(d->smoother == FEA_MG_SMOOTHER_RICHARDSON || d->smoother == FEA_MG_SMOOTHER_CHEBYSHEV ||
                d->smoother == FEA_MG_SMOOTHER_SCHWARZ,
            ctx, FEA_ERR_INVALID_ARG,
            "smoother is %d; valid: FEA_MG_SMOOTHER_RICHARDSON (0), FEA_MG_SMOOTHER_CHEBYSHEV (1), "
            "FEA_MG_SMOOTHER_SCHWARZ (2)",
            (int)d->smoother);
  FEA_CHECK(d->omega > 0.0 && isfinite(d->omega), ctx, FEA_ERR_INVALID_ARG,
            "omega is %g; it must be positive and finite", d->omega);
  FEA_CHECK(d->jacobi == 0 || d->jacobi == 1, ctx, FEA_ERR_INVALID_ARG, "jacobi is %d, not 0 or 1",
            d->jacobi);
  FEA_CHECK(d->pre_smooth >= 0 && d->post_smooth >= 0 && d->pre_smooth + d->post_smooth > 0, ctx,
            FEA_ERR_INVALID_ARG,
            "pre_smooth is %d and post_smooth %d; both must be >= 0 and one > 0", d->pre_smooth,
            d->post_smooth);
  FEA_CHECK(d->chebyshev_range > 1.0 && isfinite(d->chebyshev_range), ctx, FEA_ERR_INVALID_ARG,
            "chebyshev_range is %g; it must be finite and > 1", d->chebyshev_range);
  FEA_CHECK(d->operator_kind == FEA_OPERATOR_CSR ||
                d->operator_kind == FEA_OPERATOR_MATFREE_ELEMENT_MATRIX ||
                d->operator_kind == FEA_OPERATOR_MATFREE_SUMFACT,
            ctx, FEA_ERR_INVALID_ARG, "operator_kind is %d; valid: 0..%d", (int)d->operator_kind,
            (int)FEA_OPERATOR_MATFREE_SUMFACT);
  FEA_CHECK(fea_update_strategy_name(d->strategy), ctx, FEA_ERR_INVALID_ARG,
            "strategy is %d; valid: 0..%d", (int)d->strategy, (int)FEA_UPDATE_PRIVATE_COPIES);
  FEA_CHECK(d->krylov == 0 || d->krylov == 1, ctx, FEA_ERR_INVALID_ARG, "krylov is %d, not 0 or 1",
            d->krylov);
  /* CG needs a symmetric preconditioner: the cycle is one only with as many
   * smoothing steps after the correction as before it. */
  FEA_CHECK(!d->krylov || d->pre_smooth == d->post_smooth, ctx, FEA_ERR_INVALID_ARG,
            "krylov = 1 needs a symmetric cycle, but pre_smooth is %d and post_smooth %d",
            d->pre_smooth, d->post_smooth);
  FEA_CHECK(d->rtol >= 0.0 && isfinite(d->rtol), ctx, FEA_ERR_INVALID_ARG,
            "rtol is %g; it must be finite and >= 0", d->rtol);
  FEA_CHECK(d->atol >= 0.0 && isfinite(d->atol), ctx, FEA_ERR_INVALID_ARG,
            "atol is %g; it must be finite and >= 0", d->atol);
  FEA_CHECK(d->max_iterations >= 0, ctx, FEA_ERR_INVALID_ARG,
            "max_iterations is %lld; it must be >= 0", (long long)d->max_iterations);
  FEA_CHECK(d->coarsest_cells >= 1, ctx, FEA_ERR_INVALID_ARG,
            "coarsest_cells is %lld; it must be >= 1", (long long)d->coarsest_cells);
  return FEA_SUCCESS;
}

/* ---- setup ----------------------------------------------------------------------------------- */

/* Level l's matrix-free stencil operator where sum factorization is asked
 * for and every free row is one stencil (*done 1), the finest level's load
 * with it. */
static fea_status stencil_level(fea_mg *mg, int l, int *done) {
  fea_mg_level *lv = &mg->levels[l];
  double w[27], *b = l == 0 ? malloc(((size_t)lv->n + 1) * sizeof *b) : NULL;
  FEA_CHECK(l > 0 || b, mg->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for a right-hand side of %lld entries", (long long)lv->n);
  fea_status st = fea_mg_stencil_weights(mg->ctx, lv->problem, w, b, done);
  if (st == FEA_SUCCESS && *done) st = fea_mg_stencil_operator(mg->ctx, lv->problem, w, b, &lv->op);
  free(b);
  return st;
}

/* Level l's operator: with CSR, the matrix from the structured stencil where
 * it applies (no element integration; the finest level's load with it); with
 * sum factorization on such a level the stencil itself, matrix-free; else the
 * operator of the requested kind. */
static fea_status level_operator(fea_mg *mg, const fea_operator_desc *od, int l) {
  fea_mg_level *lv = &mg->levels[l];
  fea_matrix *A = NULL;
  double *b = NULL;
  /* The stencil shortcuts make host operators: elsewhere the context's own. */
  if (!mg->k->host) return fea_operator_build(mg->ctx, lv->problem, od, &lv->op);
  /* B-spline levels take the kind asked: sum factorization is the Kronecker
   * operator on boxes and separable maps, the point kernel elsewhere. The
   * Schwarz smoother reads its blocks from the level's entries, which CSR
   * and the Kronecker operators have: a level without them is assembled. */
  if (mg->bspline) {
    FEA_CALL(fea_operator_build(mg->ctx, lv->problem, od, &lv->op));
    if (mg->desc.smoother != FEA_MG_SMOOTHER_SCHWARZ || lv->op->impl->entries) return FEA_SUCCESS;
    FEA_OBJECT_DROP(lv->op);
    fea_operator_desc csr = *od;
    csr.kind = FEA_OPERATOR_CSR;
    return fea_operator_build(mg->ctx, lv->problem, &csr, &lv->op);
  }
  if (od->kind == FEA_OPERATOR_MATFREE_SUMFACT) {
    int done = 0;
    FEA_CALL(stencil_level(mg, l, &done));
    lv->stencil = done ? 2 : 0;
    if (done) return FEA_SUCCESS;
  }
  if (od->kind == FEA_OPERATOR_CSR && fea_mg_stencil_applies(lv->problem)) {
    b = l == 0 ? malloc(((size_t)lv->n + 1) * sizeof *b) : NULL;
    FEA_CHECK(l > 0 || b, mg->ctx, FEA_ERR_OUT_OF_MEMORY,
              "no memory for a right-hand side of %lld entries", (long long)lv->n);
    fea_status st = fea_mg_stencil_system(mg->ctx, lv->problem, &A, b);
    if (st != FEA_SUCCESS) {
      free(b);
      return st;
    }
  }
  lv->stencil = A ? 1 : 0;
  fea_status st = A ? fea_operator_build_from_csr(mg->ctx, lv->problem, A, b, &lv->op)
                    : fea_operator_build(mg->ctx, lv->problem, od, &lv->op);
  FEA_OBJECT_DROP(A);
  free(b);
  return st;
}

/* The finest level always (its residuals), every smoothing level; not a
 * factored coarsest level below the finest. The finest level's load is
 * computed here, so that setup_s covers all a solve needs. */
static fea_status build_operators(fea_mg *mg) {
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = mg->desc.operator_kind;
  od.strategy = mg->desc.strategy;
  for (int l = 0; l < mg->num_levels; l++) {
    FEA_CALL(fea_progress_of(mg->ctx, FEA_PROGRESS_MG_OPERATORS, l, mg->num_levels));
    if (l > 0 && l + 1 == mg->num_levels) break;
    FEA_CALL(level_operator(mg, &od, l));
  }
  FEA_CALL(fea_operator_rhs(mg->levels[0].op, NULL));
  return fea_progress(mg->ctx, FEA_PROGRESS_MG_OPERATORS, 1.0);
}

/* The coarsest level's matrix, dense (lower triangle, column-major), from the
 * reference assembly, and its Cholesky factor in place. */
static fea_status factor_coarsest(fea_mg *mg) {
  const fea_mg_level *lv = &mg->levels[mg->num_levels - 1];
  const fea_index n = lv->n;
  if (n == 0) return FEA_SUCCESS;
  double *b = malloc((size_t)n * sizeof *b);
  mg->coarse_chol = calloc((size_t)n * (size_t)n, sizeof *mg->coarse_chol);
  if (!b || !mg->coarse_chol) {
    free(b);
    return FEA_ERROR(mg->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the dense %lld x %lld coarsest-level matrix", (long long)n,
                     (long long)n);
  }
  fea_matrix *A = NULL;
  fea_status st = fea_problem_assemble_reference(lv->problem, b, &A);
  free(b);
  FEA_CALL(st);
  /* Row i's upper entries (i, j) are column i's lower entries (j, i). */
  for (fea_index i = 0; i < n; i++)
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      const fea_index j = A->col_idx[k];
      if (j >= i) mg->coarse_chol[(size_t)i * (size_t)n + (size_t)j] = A->values[k];
    }
  FEA_OBJECT_DROP(A);
  return mg->k->host_potrf(mg->ctx, n, mg->coarse_chol);
}

static uint64_t memory_bytes(const fea_mg *mg) {
  uint64_t bytes = 0;
  for (int l = 0; l < mg->num_levels; l++) {
    const fea_mg_level *lv = &mg->levels[l];
    const uint64_t n = (uint64_t)lv->n;
    if (lv->op) bytes += lv->op->info.memory_bytes;
    bytes += fea_mg_schwarz_bytes(lv->schwarz);
    bytes += fea_mg_blocks_bytes(lv->blocks);
    bytes += fea_mg_ktransfer_bytes(lv->ktrans);
    const fea_matrix *T[2] = {lv->P, lv->PT};
    for (int k = 0; k < 2; k++)
      if (T[k]) bytes += (uint64_t)T[k]->nnz * 16 + ((uint64_t)T[k]->rows + 1) * 8;
    bytes += n * 8 * (2 + (l > 0 ? 2 : 0) + (lv->dinv ? 1 : 0));
  }
  const uint64_t nc = (uint64_t)mg->levels[mg->num_levels - 1].n, n0 = (uint64_t)mg->levels[0].n;
  if (mg->coarse_chol) bytes += nc * nc * 8 + nc * 8;
  return bytes + n0 * 8 * (mg->k->host ? 4 : 6); /* vb, vx, res, corr (db, dx) */
}

static fea_status finest_work(fea_mg *mg) {
  const fea_index n = mg->levels[0].n;
  FEA_CALL(fea_vec_create(mg->ctx, n, FEA_F64, &mg->vb));
  FEA_CALL(fea_vec_create(mg->ctx, n, FEA_F64, &mg->vx));
  FEA_CALL(mg->k->alloc(mg->ctx, n, &mg->res));
  FEA_CALL(mg->k->alloc(mg->ctx, n, &mg->corr));
  if (!mg->k->host) { /* the caller's host b and x go up here */
    FEA_CALL(mg->k->alloc(mg->ctx, n, &mg->db));
    FEA_CALL(mg->k->alloc(mg->ctx, n, &mg->dx));
  }
  /* The coarse solve's host vector (potrs runs on the host). */
  const fea_index nc = mg->levels[mg->num_levels - 1].n;
  mg->coarse_rhs = malloc(((size_t)nc + 1) * sizeof *mg->coarse_rhs);
  FEA_CHECK(mg->coarse_rhs, mg->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for a coarse vector of %lld entries", (long long)nc);
  return FEA_SUCCESS;
}

/* Each phase's time into mg->phases (the hierarchy splits its own). */
static fea_status build(fea_mg *mg, const fea_problem *problem) {
  fea_mg_setup_phases *ph = &mg->phases;
  FEA_CALL(fea_mg_hierarchy_build(mg, problem));
  double t = omp_get_wtime();
  FEA_CALL(build_operators(mg));
  ph->operators = omp_get_wtime() - t;
  t = omp_get_wtime();
  FEA_CALL(fea_progress(mg->ctx, FEA_PROGRESS_MG_SMOOTHER, 0.0));
  FEA_CALL(fea_mg_smoother_setup(mg));
  FEA_CALL(fea_progress(mg->ctx, FEA_PROGRESS_MG_SMOOTHER, 1.0));
  ph->smoother = omp_get_wtime() - t;
  t = omp_get_wtime();
  FEA_CALL(fea_progress(mg->ctx, FEA_PROGRESS_MG_COARSE, 0.0));
  FEA_CALL(factor_coarsest(mg));
  FEA_CALL(fea_progress(mg->ctx, FEA_PROGRESS_MG_COARSE, 1.0));
  ph->coarse = omp_get_wtime() - t;
  return FEA_SUCCESS;
}

fea_status fea_mg_create(fea_context *ctx, const fea_problem *problem,
                         const fea_multigrid_desc *desc, fea_mg **out) {
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  /* A backend with kernels of its own (its data elsewhere) hands them over. */
  const fea_mg_kernels *k = ctx->backend->mg ? ctx->backend->mg : &fea_mg_host_kernels;
  return fea_mg_create_with(ctx, problem, desc, k, out);
}

fea_status fea_mg_create_with(fea_context *ctx, const fea_problem *problem,
                              const fea_multigrid_desc *desc, const fea_mg_kernels *k,
                              fea_mg **out) {
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(desc, ctx);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK_NULL(k, ctx);
  FEA_CALL(check_desc(ctx, desc));
  FEA_CALL(fea_mg_check_problem(ctx, problem));
  /* The Schwarz blocks are boxes of B-spline coefficients, applied by host loops. */
  FEA_CHECK(desc->smoother != FEA_MG_SMOOTHER_SCHWARZ || fea_mg_is_bspline(problem), ctx,
            FEA_ERR_UNSUPPORTED,
            "the Schwarz smoother (FEA_MG_SMOOTHER_SCHWARZ) takes B-spline and NURBS spaces; "
            "the problem's space is a Lagrange space (use FEA_MG_SMOOTHER_CHEBYSHEV)");
  FEA_CHECK(desc->smoother != FEA_MG_SMOOTHER_SCHWARZ || k->host, ctx, FEA_ERR_UNSUPPORTED,
            "the Schwarz smoother (FEA_MG_SMOOTHER_SCHWARZ) runs on host backends only; the "
            "context's backend keeps its vectors on a device");
  /* From below, before any level exists: the finest level alone, its CSR
   * matrix with at least the 2d + 1 entries of a row's nearest neighbours
   * (value and column), four work vectors and the prolongation's one entry
   * per fine row. The coarser levels only add to it. */
  const double n = (double)problem->num_free, d = problem->space->dim;
  char what[96];
  snprintf(what, sizeof what, "the finest multigrid level of %lld DoFs",
           (long long)problem->num_free);
  FEA_CALL(fea_memory_require(ctx, 0, n * ((2 * d + 1) * 16.0 + 4 * 8.0 + 16.0), what));
  const double t0 = omp_get_wtime();
  fea_mg *mg = calloc(1, sizeof *mg);
  FEA_CHECK(mg, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a multigrid solver");
  fea_object_retain(ctx);
  mg->ctx = ctx;
  mg->k = k;
  mg->desc = *desc;
  mg->stats = (fea_multigrid_stats)FEA_MULTIGRID_STATS_INIT;
  fea_status st = build(mg, problem);
  if (st == FEA_SUCCESS) st = fea_mg_finish(mg, t0);
  if (st != FEA_SUCCESS) {
    fea_mg_destroy(&mg);
    return st;
  }
  *out = mg;
  return FEA_SUCCESS;
}

fea_status fea_mg_check_desc(fea_context *ctx, const fea_multigrid_desc *desc) {
  return check_desc(ctx, desc);
}

fea_status fea_mg_finish(fea_mg *mg, double t0) {
  FEA_CALL(finest_work(mg));
  const fea_multigrid_desc *desc = &mg->desc;
  fea_multigrid_stats *s = &mg->stats;
  s->num_levels = mg->num_levels;
  s->fine_dofs = mg->levels[0].n;
  s->coarse_dofs = mg->coarse_chol ? mg->levels[mg->num_levels - 1].n : 0;
  s->memory_bytes = memory_bytes(mg);
  /* What runs, for a caller who took the defaults (FEA_MULTIGRID_DESC_INIT). */
  s->smoother = desc->smoother;
  s->pre_smooth = desc->pre_smooth;
  s->post_smooth = desc->post_smooth;
  s->krylov = desc->krylov;
  s->operator_kind = mg->levels[0].op ? mg->levels[0].op->info.kind_run : desc->operator_kind;
  s->stencil_levels = 0;
  for (int l = 0; l < mg->num_levels; l++)
    s->stencil_levels += mg->levels[l].op && mg->levels[l].stencil;
  s->setup_s = omp_get_wtime() - t0;
  fea_mg_setup_phases *ph = &mg->phases;
  ph->other = s->setup_s - (ph->meshes + ph->problems + ph->operators + ph->transfers +
                            ph->smoother + ph->coarse);
  return FEA_SUCCESS;
}

void fea_mg_destroy(fea_mg **mg) {
  if (!mg || !*mg) return;
  fea_mg *m = *mg;
  fea_mg_hierarchy_free(m);
  free(m->coarse_chol);
  free(m->coarse_rhs);
  FEA_OBJECT_DROP(m->vb);
  FEA_OBJECT_DROP(m->vx);
  double *arrays[] = {m->res, m->corr, m->db, m->dx};
  for (int i = 0; i < 4; i++)
    if (arrays[i]) m->k->release(m->ctx, arrays[i]);
  fea_object_release(m->ctx);
  free(m);
  *mg = NULL;
}

/* ---- the cycle ------------------------------------------------------------------------------- */

/* x = A_c^-1 b by the dense factor, on the host: b comes down, x goes up. */
static fea_status coarse_solve(const fea_mg *mg, const double *b, double *x) {
  const fea_index n = mg->levels[mg->num_levels - 1].n;
  double *h = mg->coarse_rhs;
  FEA_CALL(mg->k->download(mg->ctx, n, b, h));
  FEA_CALL(mg->k->host_potrs(mg->ctx, n, mg->coarse_chol, h));
  return mg->k->upload(mg->ctx, n, h, x);
}

/* x ~ A_l^-1 b; zero: x is taken as 0 on entry. */
static fea_status cycle(const fea_mg *mg, int l, const double *b, double *x, int zero) {
  const fea_multigrid_desc *d = &mg->desc;
  const fea_mg_level *lv = &mg->levels[l];
  if (l + 1 == mg->num_levels) return coarse_solve(mg, b, x);
  if (d->pre_smooth > 0) {
    FEA_CALL(fea_mg_smooth(mg, l, b, x, d->pre_smooth, zero));
  } else if (zero) {
    FEA_CALL(mg->k->zero(mg->ctx, lv->n, x));
  }
  const fea_mg_level *c = &mg->levels[l + 1];
  if (c->n > 0) {
    FEA_CALL(fea_mg_residual(mg, l, b, x, lv->r));
    if (lv->grid)
      fea_mg_grid_restrict(mg, l, lv->r, c->b);
    else
      FEA_CALL(mg->k->matrix_multiply(mg->ctx, lv->PTk, lv->r, c->b, 0));
    /* W: two corrections, except from a coarsest level solved exactly. */
    const int gamma = d->cycle == FEA_MG_CYCLE_W && l + 2 < mg->num_levels ? 2 : 1;
    for (int g = 0; g < gamma; g++) FEA_CALL(cycle(mg, l + 1, c->b, c->x, g == 0));
    if (lv->grid)
      fea_mg_grid_prolong(mg, l, c->x, x);
    else
      FEA_CALL(mg->k->matrix_multiply(mg->ctx, lv->Pk, c->x, x, 1));
  }
  return fea_mg_smooth(mg, l, b, x, d->post_smooth, 0);
}

/* ---- iterations ------------------------------------------------------------------------------ */

typedef struct solve_facts {
  fea_index iterations;
  int converged;
  double initial, final;
} solve_facts;

/* x += B (b - A x) until the residual meets tol. */
static fea_status stationary(fea_mg *mg, const double *b, double *x, double tol, solve_facts *f) {
  const fea_index n = mg->levels[0].n;
  const fea_mg_kernels *k = mg->k;
  for (fea_index it = 0;; it++) {
    FEA_CALL(fea_mg_residual(mg, 0, b, x, mg->res));
    double rn = 0.0;
    FEA_CALL(k->norm2(mg->ctx, n, mg->res, &rn));
    if (it == 0) f->initial = rn;
    f->final = rn;
    f->iterations = it;
    if (rn <= tol) {
      f->converged = 1;
      return FEA_SUCCESS;
    }
    if (it == mg->desc.max_iterations || !isfinite(rn)) return FEA_WARN_NOT_CONVERGED;
    FEA_CALL(cycle(mg, 0, mg->res, mg->corr, 1));
    FEA_CALL(k->add(mg->ctx, n, mg->corr, x));
  }
}

static fea_status precondition(void *user, const double *r, double *z) {
  return cycle(user, 0, r, z, 1);
}

static fea_status krylov(fea_mg *mg, const double *b, double *x, solve_facts *f) {
  const fea_index n = mg->levels[0].n;
  FEA_CALL(mg->k->copy(mg->ctx, n, b, mg->vb->data));
  FEA_CALL(mg->k->copy(mg->ctx, n, x, mg->vx->data));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = mg->desc.rtol;
  cd.atol = mg->desc.atol;
  cd.max_iterations = mg->desc.max_iterations;
  cd.jacobi = 0;
  fea_cg_stats cs = FEA_CG_STATS_INIT;
  fea_status st = fea_cg_run(mg->levels[0].op, mg->vb, mg->vx, &cd, precondition, mg, &cs);
  if (st < 0) return st;
  FEA_CALL(mg->k->copy(mg->ctx, n, mg->vx->data, x));
  f->iterations = cs.iterations;
  f->converged = cs.converged;
  f->initial = cs.initial_residual;
  f->final = cs.final_residual;
  return st;
}

fea_status fea_mg_solve(fea_mg *mg, const double *b, double *x) {
  FEA_CHECK_NULL(mg, NULL);
  FEA_CHECK_NULL(b, mg->ctx);
  FEA_CHECK_NULL(x, mg->ctx);
  const double t0 = omp_get_wtime();
  const fea_index n = mg->levels[0].n;
  const fea_mg_kernels *k = mg->k;
  const double *bk = b;
  double *xk = x;
  if (!k->host) { /* b and x up into the kernels' memory */
    FEA_CALL(k->upload(mg->ctx, n, b, mg->db));
    FEA_CALL(k->upload(mg->ctx, n, x, mg->dx));
    bk = mg->db, xk = mg->dx;
  }
  double bn = 0.0;
  FEA_CALL(k->norm2(mg->ctx, n, bk, &bn));
  const double tol = fmax(mg->desc.rtol * bn, mg->desc.atol);
  solve_facts f = {0, 0, 0.0, 0.0};
  fea_status st = mg->desc.krylov ? krylov(mg, bk, xk, &f) : stationary(mg, bk, xk, tol, &f);
  if (st < 0) return st;
  if (!k->host) FEA_CALL(k->download(mg->ctx, n, xk, x));
  fea_multigrid_stats *s = &mg->stats;
  s->iterations = f.iterations;
  s->converged = f.converged;
  s->initial_residual = f.initial;
  s->final_residual = f.final;
  s->convergence_factor = f.iterations > 0 && f.initial > 0.0
                              ? pow(f.final / f.initial, 1.0 / (double)f.iterations)
                              : 0.0;
  s->solve_s = omp_get_wtime() - t0;
  return st;
}

fea_status fea_mg_get_rhs(fea_mg *mg, double *b) {
  FEA_CHECK_NULL(mg, NULL);
  FEA_CHECK_NULL(b, mg->ctx);
  FEA_CALL(fea_operator_rhs(mg->levels[0].op, b));
  return FEA_SUCCESS;
}

void fea_mg_get_stats(const fea_mg *mg, fea_multigrid_stats *stats) { *stats = mg->stats; }

void fea_mg_get_setup_phases(const fea_mg *mg, fea_mg_setup_phases *phases) {
  *phases = mg->phases;
}
