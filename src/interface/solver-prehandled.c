/* Prehandled Schur-complement solver: the checks that the problem is one the
 * method covers (Q1 or P1 on a structured square mesh, constant sigma) and
 * that the options are sound; the pipeline is src/prehandled/solver-kind.c. */
#include <math.h>
#include <stdlib.h>

#include "context.h"
#include "error.h"
#include "mesh.h"
#include "prehandled.h"
#include "struct-copy.h"

/* Q1 or P1 on a structured 2D mesh of n x n square cells; the grid's n. */
static fea_status check_problem_kind(fea_context *ctx, const fea_problem *pb, fea_ph_element *el,
                                     fea_index *n) {
  const fea_space *sp = pb->space;
  FEA_CHECK(sp->kind == FEA_SPACE_LAGRANGE, ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs a Lagrange Q1 or P1 space; this one is a B-spline space");
  FEA_CHECK(sp->dim == 2, ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver is for 2D problems (prehandling is weak in 3D); the space is %dD",
            sp->dim);
  FEA_CHECK(sp->degree[0] == 1, ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs order-1 Lagrange elements (Q1 or P1); the space has order %d",
            sp->degree[0]);
  const fea_mesh *m = sp->mesh;
  FEA_CHECK(m && m->structured, ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs a mesh from fea_mesh_create_structured(): its hierarchy "
            "is index arithmetic on the Cartesian grid");
  FEA_CHECK(m->n[0] == m->n[1], ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs n x n cells; the mesh has %lld x %lld", (long long)m->n[0],
            (long long)m->n[1]);
  const double hx = (m->upper[0] - m->lower[0]) / (double)m->n[0];
  const double hy = (m->upper[1] - m->lower[1]) / (double)m->n[1];
  FEA_CHECK(fabs(hx - hy) <= 1e-12 * fmax(hx, hy), ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs square cells; they are %.6g x %.6g", hx, hy);
  FEA_CHECK(pb->desc.sigma_fn == NULL, ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs a constant sigma (identical macro-cell blocks); the "
            "problem has sigma_fn");
  *el = m->simplices ? FEA_PH_P1 : FEA_PH_Q1;
  *n = m->n[0];
  return FEA_SUCCESS;
}

/* The power-of-two coarsening n0 = n / 2^j, j >= 1, with the fewest FLOPs. */
static fea_index auto_coarse_cells(fea_ph_element el, fea_index n) {
  fea_index best = 0;
  double best_flops = 0;
  for (fea_index r = 2; n % r == 0; r *= 2) {
    fea_ph_grid g = {el, n, n / r, r, 0, (n - 1) * (n - 1)};
    const double f = fea_prehandled_flops(&g);
    if (best == 0 || f < best_flops) best = n / r, best_flops = f;
  }
  return best;
}

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

fea_status fea_prehandled_check_problem(const fea_solver *s, const fea_problem *problem) {
  fea_ph_element el;
  fea_index n;
  return check_problem_kind(s->ctx, problem, &el, &n);
}

fea_status fea_solver_create_prehandled(fea_context *ctx, fea_problem *problem,
                                        const fea_prehandled_desc *desc, fea_solver **out) {
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_prehandled_desc d = FEA_PREHANDLED_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_prehandled_desc));
  FEA_CALL(check_desc(ctx, &d));
  FEA_CHECK(problem->space->ctx == ctx, ctx, FEA_ERR_INVALID_ARG,
            "the problem's space was created on another context");
  /* Device backends need their own M1 (prehandled-device.h); the setup is on the host regardless. */
  FEA_CHECK(ctx->backend->mem == FEA_MEM_HOST || ctx->backend->m1 != NULL, ctx,
            FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs a host-memory backend or one with a device M1; "
            "context '%s' keeps device memory and has none", ctx->backend->prefix);
  fea_ph_element el;
  fea_index n;
  FEA_CALL(check_problem_kind(ctx, problem, &el, &n));
  if (d.coarse_cells == 0) {
    d.coarse_cells = auto_coarse_cells(el, n);
    FEA_CHECK(d.coarse_cells > 0, ctx, FEA_ERR_UNSUPPORTED,
              "the mesh has %lld cells per direction, an odd number: no coarse mesh nests in it",
              (long long)n);
  }
  FEA_CHECK(d.coarse_cells < n, ctx, FEA_ERR_INVALID_ARG,
            "desc.coarse_cells = %lld leaves no fine level under %lld cells per direction "
            "(n / n0 must be a power of two >= 2)", (long long)d.coarse_cells, (long long)n);
  fea_ph_grid g;
  FEA_CALL(fea_ph_grid_init(ctx, el, n, d.coarse_cells, &g));
  fea_solver *s = NULL;
  FEA_CALL(fea_solver_alloc(ctx, problem, FEA_SOLVER_PREHANDLED, &fea_prehandled_ops, &s));
  fea_status st = fea_prehandled_attach(s, &d, &g);
  if (st < 0) {
    fea_solver_free(s);
    return st;
  }
  *out = s;
  return FEA_SUCCESS;
}

fea_status fea_solver_get_prehandled_stats(const fea_solver *solver, fea_prehandled_stats *stats) {
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(stats, solver->ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_PREHANDLED,
                                 "fea_solver_get_prehandled_stats()"));
  fea_prehandled_stats full;
  fea_prehandled_get_stats(solver, &full);
  return fea_struct_copy_out(solver->ctx, stats, &full, "stats", &fea_struct_prehandled_stats);
}

fea_status fea_solver_prehandled_condition(fea_solver *solver, fea_prehandled_matrix which,
                                           int steps, double *kappa) {
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = solver->ctx;
  FEA_CHECK_NULL(kappa, ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_PREHANDLED,
                                 "fea_solver_prehandled_condition()"));
  FEA_CHECK(which >= FEA_PREHANDLED_NODAL && which <= FEA_PREHANDLED_SCHUR, ctx,
            FEA_ERR_INVALID_ARG, "which = %d is not a fea_prehandled_matrix (0..4)", (int)which);
  FEA_CHECK(steps >= 2 && steps <= 1000, ctx, FEA_ERR_INVALID_ARG,
            "steps = %d is outside 2..1000", steps);
  return fea_prehandled_condition(solver, which, steps, kappa);
}
