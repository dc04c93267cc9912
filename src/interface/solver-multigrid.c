/* Geometric multigrid solver kind: option checks live with the hierarchy
 * (src/multigrid/, which also refuses unsupported problems); this
 * file wires it into the solver handle. Setup builds the hierarchy for the
 * current problem; solve runs one multigrid (or MG-preconditioned CG) solve
 * per right-hand side from a zero initial guess. */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "error.h"
#include "multigrid.h"
#include "solver.h"
#include "struct-copy.h"

typedef struct mg_solver {
  fea_multigrid_desc desc; /* complete */
  fea_mg *mg;
  double *load; /* the problem's reduced right-hand side (last setup) */
  fea_index iterations;
  int converged;
  int fresh; /* mg was built by create for the current problem, not yet set up */
} mg_solver;

static mg_solver *mg_of(const fea_solver *s) { return s->data; }

static void mgs_reset(fea_solver *s) {
  mg_solver *m = mg_of(s);
  fea_mg_destroy(&m->mg);
  free(m->load);
  m->load = NULL;
  m->fresh = 0;
  s->ready = 0;
}

static void mgs_destroy(fea_solver *s) {
  mgs_reset(s);
  free(s->data);
  s->data = NULL;
}

static fea_status mgs_setup(fea_solver *s) {
  mg_solver *m = mg_of(s);
  fea_mg *mg = NULL;
  if (m->fresh) { /* the hierarchy create built for this problem */
    mg = m->mg;
    m->mg = NULL;
    m->fresh = 0; /* consumed: a failure below rebuilds on the next setup */
  } else { /* build first: a refused setup keeps the previous hierarchy */
    FEA_CALL(fea_mg_create(s->ctx, s->problem, &m->desc, &mg));
  }
  const fea_index nf = s->problem->num_free;
  double *load = malloc((size_t)(nf ? nf : 1) * sizeof *load);
  fea_status st = load ? fea_mg_get_rhs(mg, load)
                       : FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld loads",
                                   (long long)nf);
  if (st < 0) {
    free(load);
    fea_mg_destroy(&mg);
    return st;
  }
  mgs_reset(s);
  m->mg = mg;
  m->load = load;
  return FEA_SUCCESS;
}

static fea_status mgs_solve(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb,
                            double *x, fea_index ldx) {
  mg_solver *m = mg_of(s);
  const fea_index nf = s->problem->num_free;
  /* The right-hand side is copied before x is zeroed: x may be b (in place). */
  double *rhs = malloc((size_t)nf * sizeof *rhs);
  FEA_CHECK(rhs, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a right-hand side of %lld entries",
            (long long)nf);
  fea_status worst = FEA_SUCCESS;
  fea_index most = 0;
  int all = 1;
  for (fea_index j = 0; j < nrhs; j++) {
    double *xj = x + j * ldx;
    memcpy(rhs, b ? b + j * ldb : m->load, (size_t)nf * sizeof *rhs);
    memset(xj, 0, (size_t)nf * sizeof *xj);
    fea_status st = fea_mg_solve(m->mg, rhs, xj);
    if (st < 0) {
      free(rhs);
      return st;
    }
    if (st == FEA_WARN_NOT_CONVERGED) worst = st, all = 0;
    fea_multigrid_stats ms;
    fea_mg_get_stats(m->mg, &ms);
    if (ms.iterations > most) most = ms.iterations;
  }
  free(rhs);
  m->iterations = most;
  m->converged = all;
  return worst;
}

static const fea_solver_ops mg_ops = {
    .name = "multigrid",
    .check_problem = NULL, /* setup checks (fea_mg_create) */
    .reset = mgs_reset,
    .setup = mgs_setup,
    .solve = mgs_solve,
    .destroy = mgs_destroy,
};

fea_status fea_solver_create_multigrid(fea_context *ctx, fea_problem *problem,
                                       const fea_multigrid_desc *desc, fea_solver **out) {
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_multigrid_desc));
  FEA_CHECK(problem->space->ctx == ctx, ctx, FEA_ERR_INVALID_ARG,
            "the problem's space was created on another context");
  /* Check the problem and every option now, not at setup: the hierarchy
   * built here serves the first setup. */
  fea_mg *mg = NULL;
  FEA_CALL(fea_mg_create(ctx, problem, &d, &mg));
  fea_solver *s = NULL;
  fea_status st = fea_solver_alloc(ctx, problem, FEA_SOLVER_MULTIGRID, &mg_ops, &s);
  mg_solver *m = st >= 0 ? calloc(1, sizeof *m) : NULL;
  if (st >= 0 && !m) st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a solver");
  if (st < 0) {
    fea_mg_destroy(&mg);
    fea_solver_free(s);
    return st;
  }
  m->desc = d;
  m->mg = mg;
  m->fresh = 1;
  s->data = m;
  *out = s;
  return FEA_SUCCESS;
}

fea_status fea_solver_get_multigrid_stats(const fea_solver *solver, fea_multigrid_stats *stats) {
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(stats, solver->ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_MULTIGRID,
                                 "fea_solver_get_multigrid_stats()"));
  const mg_solver *m = mg_of(solver);
  fea_multigrid_stats full = FEA_MULTIGRID_STATS_INIT;
  if (m->mg && solver->ready) {
    fea_mg_get_stats(m->mg, &full);
    full.iterations = m->iterations;
    full.converged = m->converged;
  }
  return fea_struct_copy_out(solver->ctx, stats, &full, "stats", &fea_struct_multigrid_stats);
}
