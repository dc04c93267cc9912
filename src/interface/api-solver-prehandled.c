/* Prehandled Schur-complement solver API: the options' checks, the problem's
 * (src/prehandled/problem-check.c), then the solver kind of
 * src/prehandled/prehandled-solver-kind.c. */
#include "disc/problem.h"
#include "base/context.h"
#include "internal/error.h"
#include "prehandled/macro-mesh.h"
#include "prehandled/prehandled.h"
#include "base/struct-copy.h"

static fea_status check_desc(fea_context *ctx, const fea_prehandled_desc *d) {
  FEA_CHECK(d->coarse_cells >= 0, ctx, FEA_ERR_INVALID_ARG, "desc.coarse_cells = %lld is negative",
            (long long)d->coarse_cells);
  FEA_CHECK(d->precision == FEA_F64 || d->precision == FEA_F32 || d->precision == FEA_F16 ||
                d->precision == FEA_BF16,
            ctx, FEA_ERR_INVALID_ARG, "desc.precision = %d is not FEA_F64, F32, F16 or BF16",
            (int)d->precision);
  FEA_CHECK(d->refine == 0 || d->refine == 1, ctx, FEA_ERR_INVALID_ARG,
            "desc.refine = %d is not 0 or 1", d->refine);
  FEA_CHECK(d->refine_rtol > 0 && d->refine_rtol < 1, ctx, FEA_ERR_INVALID_ARG,
            "desc.refine_rtol = %g is not in (0, 1)", d->refine_rtol);
  FEA_CHECK(d->refine_max_iterations >= 1, ctx, FEA_ERR_INVALID_ARG,
            "desc.refine_max_iterations = %d is not positive", d->refine_max_iterations);
  FEA_CHECK(d->rhs_scaling == 0 || d->rhs_scaling == 1, ctx, FEA_ERR_INVALID_ARG,
            "desc.rhs_scaling = %d is not 0 or 1", d->rhs_scaling);
  FEA_CHECK(d->tf32 == 0 || d->tf32 == 1, ctx, FEA_ERR_INVALID_ARG, "desc.tf32 = %d is not 0 or 1",
            d->tf32);
  return FEA_SUCCESS;
}

/* A mesh refined uniformly from macro triangles: coarse_cells is the number
 * of macro cells (0: the depth with the fewest FLOPs), src/prehandled/macro-mesh.c
 * reads the hierarchy and the groups from the fine mesh. */
static fea_status create_macro(fea_context *ctx, fea_problem *problem, fea_prehandled_desc *d,
                               fea_solver **out) {
  int levels = 0;
  FEA_CALL(fea_ph_macro_choose_levels(ctx, problem, d->coarse_cells, &levels));
  fea_ph_macro *macro = NULL;
  FEA_CALL(fea_ph_macro_create(ctx, problem, levels, &macro));
  d->coarse_cells = macro->cells;
  fea_ph_grid g = {FEA_PH_P1, macro->r, 1, macro->r, levels, macro->num, macro};
  fea_solver *s = NULL;
  fea_status st = fea_solver_alloc(ctx, problem, problem->space, problem->num_free,
                                   FEA_SOLVER_PREHANDLED, &fea_ph_solver_ops, &s);
  if (st < 0) {
    fea_ph_macro_destroy(&macro);
    return st;
  }
  st = fea_ph_solver_attach(s, d, &g); /* takes macro over */
  if (st < 0) {
    fea_solver_free(s);
    return st;
  }
  *out = s;
  return FEA_SUCCESS;
}

fea_status fea_solver_create_prehandled(fea_context *ctx, fea_problem *problem,
                                        const fea_prehandled_desc *desc, fea_solver **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_prehandled_desc d = FEA_PREHANDLED_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_prehandled_desc));
  FEA_CALL(check_desc(ctx, &d));
  FEA_CALL(fea_space_require_scalar(problem->space, "the prehandled solver"));
  FEA_CHECK(problem->space->ctx == ctx, ctx, FEA_ERR_INVALID_ARG,
            "the problem's space was created on another context");
  fea_ph_element el;
  fea_index n;
  FEA_CALL(fea_ph_problem_kind(ctx, problem, &el, &n));
  if (n == 0) return create_macro(ctx, problem, &d, out);
  if (d.coarse_cells == 0) {
    d.coarse_cells = fea_ph_auto_coarse_cells(el, n);
    FEA_CHECK(d.coarse_cells > 0, ctx, FEA_ERR_UNSUPPORTED,
              "the mesh has %lld cells per direction, an odd number: no coarse mesh nests in it",
              (long long)n);
  }
  FEA_CHECK(d.coarse_cells < n, ctx, FEA_ERR_INVALID_ARG,
            "desc.coarse_cells = %lld leaves no fine level under %lld cells per direction "
            "(n / n0 must be a power of two >= 2)",
            (long long)d.coarse_cells, (long long)n);
  fea_ph_grid g;
  FEA_CALL(fea_ph_grid_init(ctx, el, n, d.coarse_cells, &g));
  fea_solver *s = NULL;
  FEA_CALL(fea_solver_alloc(ctx, problem, problem->space, problem->num_free, FEA_SOLVER_PREHANDLED,
                            &fea_ph_solver_ops, &s));
  fea_status st = fea_ph_solver_attach(s, &d, &g);
  if (st < 0) {
    fea_solver_free(s);
    return st;
  }
  *out = s;
  return FEA_SUCCESS;
}

fea_status fea_solver_get_prehandled_stats(const fea_solver *solver, fea_prehandled_stats *stats) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(stats, solver->ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_PREHANDLED,
                                 "fea_solver_get_prehandled_stats()"));
  fea_prehandled_stats full;
  fea_ph_solver_get_stats(solver, &full);
  return fea_struct_copy_out(solver->ctx, stats, &full, "stats", &fea_struct_prehandled_stats);
}

fea_status fea_solver_prehandled_condition(fea_solver *solver, fea_prehandled_matrix which,
                                           int steps, double *kappa) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = solver->ctx;
  FEA_CHECK_NULL(kappa, ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_PREHANDLED,
                                 "fea_solver_prehandled_condition()"));
  FEA_CHECK(which >= FEA_PREHANDLED_NODAL && which <= FEA_PREHANDLED_SCHUR, ctx,
            FEA_ERR_INVALID_ARG, "which = %d is not a fea_prehandled_matrix (0..4)", (int)which);
  FEA_CHECK(steps >= 2 && steps <= 1000, ctx, FEA_ERR_INVALID_ARG, "steps = %d is outside 2..1000",
            steps);
  return fea_ph_condition(solver, which, steps, kappa);
}
