/* The geometric multigrid solver kind: the hierarchy of src/multigrid/ in
 * the solver handle. Setup builds the hierarchy for the current problem
 * (create built the first one, which the first setup takes; levels built
 * elsewhere, a multipatch domain's, are rebuilt by their builder's callback);
 * solve runs one multigrid (or MG-preconditioned CG) solve per right-hand side
 * from a zero initial guess. */
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "multigrid.h"
#include "multigrid-solver.h"

typedef struct mg_solver {
  fea_multigrid_desc desc; /* complete */
  fea_mg *mg;
  double *load; /* the problem's reduced right-hand side (last setup) */
  fea_index iterations;
  int converged;
  int fresh; /* mg was built by create for the current problem, not yet set up */
  /* Levels built elsewhere (multipatch): how a later setup rebuilds them. */
  fea_status (*rebuild)(void *user, fea_mg **out);
  void (*release)(void *user);
  void *user;
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
  mg_solver *m = mg_of(s);
  if (m && m->release) m->release(m->user);
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
  } else {        /* build first: a refused setup keeps the previous hierarchy */
    FEA_CALL(m->rebuild ? m->rebuild(m->user, &mg)
                        : fea_mg_create(s->ctx, s->problem, &m->desc, &mg));
  }
  const fea_index nf = s->num_free;
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
  const fea_index nf = s->num_free;
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

const fea_solver_ops fea_mg_solver_ops = {
    .name = "multigrid",
    .check_problem = NULL, /* setup checks (fea_mg_create) */
    .reset = mgs_reset,
    .setup = mgs_setup,
    .solve = mgs_solve,
    .destroy = mgs_destroy,
};

fea_status fea_mg_solver_attach(fea_solver *s, const fea_multigrid_desc *d, fea_mg *mg) {
  mg_solver *m = calloc(1, sizeof *m);
  FEA_CHECK(m, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a solver");
  m->desc = *d;
  m->mg = mg;
  m->fresh = 1;
  s->data = m;
  return FEA_SUCCESS;
}

fea_status fea_mg_solver_attach_given(fea_solver *s, const fea_multigrid_desc *d, fea_mg *mg,
                                      fea_status (*rebuild)(void *user, fea_mg **out),
                                      void (*release)(void *user), void *user) {
  FEA_CALL(fea_mg_solver_attach(s, d, mg));
  mg_solver *m = mg_of(s);
  m->rebuild = rebuild;
  m->release = release;
  m->user = user;
  return FEA_SUCCESS;
}

void fea_mg_solver_get_stats(const fea_solver *s, fea_multigrid_stats *full) {
  const mg_solver *m = mg_of(s);
  *full = (fea_multigrid_stats)FEA_MULTIGRID_STATS_INIT;
  if (m->mg && s->ready) {
    fea_mg_get_stats(m->mg, full);
    full->iterations = m->iterations;
    full->converged = m->converged;
  }
}
