/* Multigrid solver API: the descriptor's copy, then the hierarchy (whose
 * checks refuse unsupported problems and options) and the solver kind of
 * src/multigrid/multigrid-solver-kind.c. */
#include "base/context.h"
#include "internal/error.h"
#include "multigrid/multigrid.h"
#include "multigrid/multigrid-solver.h"
#include "base/solver-object.h"
#include "base/struct-copy.h"

fea_status fea_solver_create_multigrid(fea_context *ctx, fea_problem *problem,
                                       const fea_multigrid_desc *desc, fea_solver **out) {
  FEA_ENTRY();
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
  fea_status st = fea_solver_alloc(ctx, problem, problem->space, problem->num_free,
                                   FEA_SOLVER_MULTIGRID, &fea_mg_solver_ops, &s);
  if (st >= 0) st = fea_mg_solver_attach(s, &d, mg);
  if (st < 0) {
    fea_mg_destroy(&mg);
    fea_solver_free(s);
    return st;
  }
  *out = s;
  return FEA_SUCCESS;
}

fea_status fea_solver_get_multigrid_stats(const fea_solver *solver, fea_multigrid_stats *stats) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(stats, solver->ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_MULTIGRID, "fea_solver_get_multigrid_stats()"));
  fea_multigrid_stats full;
  fea_mg_solver_get_stats(solver, &full);
  return fea_struct_copy_out(solver->ctx, stats, &full, "stats", &fea_struct_multigrid_stats);
}
