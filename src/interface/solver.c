/* The solver handle: argument checks common to every kind, dispatch through
 * the kind's ops (src/internal/solver.h), and the small helpers the kinds
 * share (memory limit, clock).
 *
 * Problems have no reference count, so a solver keeps its own copy (made
 * from the caller's complete descriptor): the caller may destroy theirs. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "error.h"
#include "solver.h"

double fea_solver_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t fea_memory_limit(uint64_t limit) {
  if (limit) return limit;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX; /* unknown: let malloc decide */
  return (uint64_t)pages * (uint64_t)page;
}

fea_status fea_solver_alloc(fea_context *ctx, fea_problem *problem, fea_solver_kind kind,
                            const fea_solver_ops *ops, fea_solver **out) {
  fea_solver *s = calloc(1, sizeof *s);
  FEA_CHECK(s, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a solver");
  s->ctx = ctx;
  fea_context_retain(ctx);
  s->space = problem->space;
  fea_space_retain(s->space);
  s->kind = kind;
  s->ops = ops;
  fea_status st = fea_problem_create_poisson(s->space, &problem->desc, &s->problem);
  if (st != FEA_SUCCESS) {
    fea_solver_free(s);
    return st;
  }
  *out = s;
  return FEA_SUCCESS;
}

void fea_solver_free(fea_solver *s) {
  if (!s) return;
  if (s->data && s->ops->destroy) s->ops->destroy(s);
  if (s->problem) (void)fea_problem_destroy(&s->problem);
  if (s->space) fea_space_release(s->space);
  if (s->ctx) fea_context_release(s->ctx);
  free(s);
}

fea_status fea_solver_check_kind(const fea_solver *s, fea_solver_kind kind, const char *what) {
  static const char *const names[] = {"multifrontal", "prehandled", "multigrid"};
  FEA_CHECK(s->kind == kind, s->ctx, FEA_ERR_INVALID_ARG,
            "%s needs a %s solver; this one is a %s solver", what, names[kind], s->ops->name);
  return FEA_SUCCESS;
}

fea_status fea_solver_set_problem(fea_solver *solver, fea_problem *problem) {
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = solver->ctx;
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK(problem->space == solver->space, ctx, FEA_ERR_INVALID_ARG,
            "the problem is defined on another space (%lld DoFs) than the solver's (%lld DoFs)",
            (long long)problem->space->num_dofs, (long long)solver->space->num_dofs);
  if (solver->ops->check_problem) FEA_CALL(solver->ops->check_problem(solver, problem));
  /* Same space, so the same free DoFs: the numbering stays. */
  fea_problem *copy = NULL;
  FEA_CALL(fea_problem_create_poisson(solver->space, &problem->desc, &copy));
  if (solver->ops->reset) solver->ops->reset(solver);
  solver->ready = 0;
  fea_problem_destroy(&solver->problem);
  solver->problem = copy;
  return FEA_SUCCESS;
}

fea_status fea_solver_setup(fea_solver *solver) {
  FEA_CHECK_NULL(solver, NULL);
  /* The kind checks what it can first (a refused setup keeps the previous
   * one usable), then resets, and clears ready itself when it does. */
  FEA_CALL(solver->ops->setup(solver));
  solver->ready = 1;
  return FEA_SUCCESS;
}

fea_status fea_solver_solve(fea_solver *solver, fea_index nrhs, const double *b, fea_index ldb,
                            double *x, fea_index ldx) {
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = solver->ctx;
  const fea_index nf = solver->problem->num_free, need_ld = nf > 1 ? nf : 1;
  FEA_CHECK(solver->ready, ctx, FEA_ERR_STATE,
            "the solver is not set up: call fea_solver_setup() first (after creation or "
            "fea_solver_set_problem())");
  FEA_CHECK(nrhs >= 0, ctx, FEA_ERR_INVALID_ARG, "nrhs = %lld is negative", (long long)nrhs);
  FEA_CHECK(b || nrhs == 1, ctx, FEA_ERR_INVALID_ARG,
            "b is NULL (the problem's own load) with nrhs = %lld instead of 1", (long long)nrhs);
  FEA_CHECK(!b || ldb >= need_ld, ctx, FEA_ERR_DIMENSION,
            "ldb = %lld is smaller than the %lld free DoFs", (long long)ldb, (long long)need_ld);
  FEA_CHECK(ldx >= need_ld, ctx, FEA_ERR_DIMENSION, "ldx = %lld is smaller than the %lld free DoFs",
            (long long)ldx, (long long)need_ld);
  FEA_CHECK(x || nrhs == 0 || nf == 0, ctx, FEA_ERR_INVALID_ARG, "argument 'x' is NULL");
  if (nrhs == 0 || nf == 0) return FEA_SUCCESS;
  return solver->ops->solve(solver, nrhs, b, ldb, x, ldx);
}

fea_status fea_solver_destroy(fea_solver **solver) {
  if (!solver || !*solver) return FEA_SUCCESS;
  fea_solver_free(*solver);
  *solver = NULL;
  return FEA_SUCCESS;
}
