/* The solver handle: argument checks common to every kind, dispatch through
 * the kind's ops (src/base/solver-object.h).
 *
 * A solver holds a reference on its problem (problems do not change after
 * creation), so the caller may destroy theirs; no copy of the DoF maps. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "disc/problem.h"
#include "base/context.h"
#include "internal/error.h"
#include "base/size-checks.h"
#include "base/solver-object.h"

fea_status fea_solver_set_problem(fea_solver *solver, fea_problem *problem) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = solver->ctx;
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK(solver->space, ctx, FEA_ERR_INVALID_ARG,
            "a %s solver keeps the problem it was created with: create another solver",
            solver->ops->name);
  FEA_CHECK(problem->space == solver->space, ctx, FEA_ERR_INVALID_ARG,
            "the problem is defined on another space (%lld DoFs) than the solver's (%lld DoFs)",
            (long long)problem->space->num_dofs, (long long)solver->space->num_dofs);
  if (solver->ops->check_problem) FEA_CALL(solver->ops->check_problem(solver, problem));
  /* Same space, so the same free DoFs: the numbering stays. */
  fea_object_retain(problem);
  if (solver->ops->reset) solver->ops->reset(solver);
  solver->ready = 0;
  fea_object_release(solver->problem);
  solver->problem = problem;
  return FEA_SUCCESS;
}

fea_status fea_solver_setup(fea_solver *solver) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  /* The kind checks what it can first (a refused setup keeps the previous
   * one usable), then resets, and clears ready itself when it does. */
  FEA_CALL(solver->ops->setup(solver));
  solver->ready = 1;
  return FEA_SUCCESS;
}

fea_status fea_solver_solve(fea_solver *solver, fea_index nrhs, const double *b, fea_index ldb,
                            double *x, fea_index ldx) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = solver->ctx;
  const fea_index nf = solver->num_free, need_ld = nf > 1 ? nf : 1;
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
  /* Each array spans (nrhs - 1) * ld + num_free entries: one that cannot be
   * addressed would wrap the offsets below (and the kinds') onto other
   * columns, or past the array. */
  if (b)
    FEA_CALL(fea_size_check_span(ctx, "b", "(nrhs - 1) * ldb + num_free", (uint64_t)(nrhs - 1),
                                 (uint64_t)ldb, (uint64_t)nf, sizeof *b, NULL));
  FEA_CALL(fea_size_check_span(ctx, "x", "(nrhs - 1) * ldx + num_free", (uint64_t)(nrhs - 1),
                               (uint64_t)ldx, (uint64_t)nf, sizeof *x, NULL));
  if (b) {
    /* solver.h: x may be b (in place, ldx = ldb); no other overlap. The
     * ranges are compared as addresses: pointers into different objects have
     * no order in C. */
    const uintptr_t b0 = (uintptr_t)b, x0 = (uintptr_t)x;
    const uintptr_t b1 = b0 + ((uintptr_t)(nrhs - 1) * (uintptr_t)ldb + (uintptr_t)nf) * sizeof *b;
    const uintptr_t x1 = x0 + ((uintptr_t)(nrhs - 1) * (uintptr_t)ldx + (uintptr_t)nf) * sizeof *x;
    const int in_place = b0 == x0 && (ldb == ldx || nrhs == 1);
    FEA_CHECK(in_place || b1 <= x0 || x1 <= b0, ctx, FEA_ERR_INVALID_ARG,
              "b [%p, %p) (ldb = %lld) and x [%p, %p) (ldx = %lld) overlap; only x = b with "
              "ldx = ldb (in place) is allowed",
              (const void *)b, (const void *)b1, (long long)ldb, (const void *)x, (const void *)x1,
              (long long)ldx);
    /* types.h: NaN is an invalid argument; a factorization would only
     * spread it over x and report success. */
    for (fea_index j = 0; j < nrhs; j++)
      for (fea_index i = 0; i < nf; i++) {
        const double v = b[j * ldb + i];
        FEA_CHECK(isfinite(v), ctx, FEA_ERR_INVALID_ARG,
                  "b has entry %g in column %lld, row %lld; right-hand sides must be finite", v,
                  (long long)j, (long long)i);
      }
  }
  return solver->ops->solve(solver, nrhs, b, ldb, x, ldx);
}

fea_status fea_solver_destroy(fea_solver **solver) {
  FEA_ENTRY();
  if (!solver || !*solver) return FEA_SUCCESS;
  fea_solver_free(*solver);
  *solver = NULL;
  return FEA_SUCCESS;
}
