/* Multifrontal solver API: argument checks, then the solver kind of
 * src/multifrontal/multifrontal-solver-kind.c (the tree, setup, solve, stats and the
 * boundary Schur complement). */
#include "base/context.h"
#include "internal/error.h"
#include "internal/etree.h"
#include "multifrontal/multifrontal-solver.h"
#include "disc/problem.h"
#include "base/struct-copy.h"

fea_status fea_solver_check_tree_options(fea_context *ctx, const fea_solver_desc *d) {
  FEA_CHECK(d->merge == FEA_MULTIFRONTAL_MERGE_AUTO || d->merge == FEA_MULTIFRONTAL_MERGE_TENSOR ||
                d->merge == FEA_MULTIFRONTAL_MERGE_PAIRWISE,
            ctx, FEA_ERR_INVALID_ARG, "desc.merge = %d is not AUTO (0), TENSOR (1) or PAIRWISE (2)",
            (int)d->merge);
  FEA_CHECK(d->check_residual >= 0 && d->check_residual <= 2, ctx, FEA_ERR_INVALID_ARG,
            "desc.check_residual = %d is not 0 (none), 1 (residual) or 2 (refinement and "
            "residual)",
            d->check_residual);
  FEA_CHECK(d->estimate_condition == 0 || d->estimate_condition == 1, ctx, FEA_ERR_INVALID_ARG,
            "desc.estimate_condition = %d is not 0 or 1", d->estimate_condition);
  FEA_CHECK(ctx->multifrontal.factor_alloc && ctx->multifrontal.factor_release &&
                ctx->multifrontal.factor_level && ctx->multifrontal.forward_level &&
                ctx->multifrontal.backward_level,
            ctx, FEA_ERR_UNSUPPORTED, "backend %s has no multifrontal ops", ctx->backend->prefix);
  return FEA_SUCCESS;
}

fea_status fea_solver_create_multifrontal(fea_context *ctx, fea_space *space, fea_problem *problem,
                                          const fea_solver_desc *desc, fea_solver **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(space, ctx);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_solver_desc d = FEA_SOLVER_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_solver_desc));
  FEA_CHECK(space->ctx == ctx, ctx, FEA_ERR_INVALID_ARG,
            "the space was created on another context");
  FEA_CHECK(space->kind == FEA_SPACE_BSPLINE, ctx, FEA_ERR_UNSUPPORTED,
            "the multifrontal solver needs a B-spline space; this one is a %s space",
            space->kind == FEA_SPACE_LAGRANGE ? "Lagrange" : "non-B-spline");
  FEA_CHECK(problem->space == space, ctx, FEA_ERR_INVALID_ARG,
            "the problem is defined on another space (%lld DoFs) than the solver's (%lld DoFs)",
            (long long)problem->space->num_dofs, (long long)space->num_dofs);
  FEA_CHECK(d.keep_boundary == 0 || d.keep_boundary == 1, ctx, FEA_ERR_INVALID_ARG,
            "desc.keep_boundary = %d is not 0 or 1", d.keep_boundary);
  FEA_CALL(fea_solver_check_tree_options(ctx, &d));

  fea_solver *s = NULL;
  FEA_CALL(fea_solver_alloc(ctx, problem, problem->space, problem->num_free,
                            FEA_SOLVER_MULTIFRONTAL, &fea_multifrontal_solver_ops, &s));
  fea_status st = fea_multifrontal_attach(s, &d);
  if (st != FEA_SUCCESS) {
    fea_solver_free(s);
    return st;
  }
  *out = s;
  return FEA_SUCCESS;
}

fea_status fea_solver_get_boundary_schur(const fea_solver *solver, fea_index capacity,
                                         fea_index *dofs, double *S, fea_index *n) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = solver->ctx;
  FEA_CHECK_NULL(n, ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_MULTIFRONTAL,
                                 "fea_solver_get_boundary_schur()"));
  FEA_CHECK(fea_multifrontal_keeps_boundary(solver), ctx, FEA_ERR_STATE,
            "the boundary Schur complement needs a solver created with keep_boundary = 1");
  FEA_CHECK(solver->ready, ctx, FEA_ERR_STATE,
            "the boundary Schur complement exists after fea_solver_setup() only");
  const fea_etree *t = fea_multifrontal_tree(solver);
  const fea_index r = t->nodes[t->num_nodes - 1].r;
  *n = r;
  if (!dofs && !S) return FEA_SUCCESS;
  FEA_CHECK(capacity >= r, ctx, FEA_ERR_DIMENSION,
            "capacity %lld is smaller than the %lld boundary DoFs", (long long)capacity,
            (long long)r);
  fea_multifrontal_boundary_schur(solver, dofs, S);
  return FEA_SUCCESS;
}

fea_status fea_solver_get_stats(const fea_solver *solver, fea_solver_stats *stats) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(stats, solver->ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_MULTIFRONTAL, "fea_solver_get_stats()"));
  fea_solver_stats full;
  fea_multifrontal_get_stats(solver, &full);
  return fea_struct_copy_out(solver->ctx, stats, &full, "stats", &fea_struct_solver_stats);
}

fea_status fea_solver_get_level(const fea_solver *solver, int level, fea_solver_level *info) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(info, solver->ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_MULTIFRONTAL, "fea_solver_get_level()"));
  const fea_etree *t = fea_multifrontal_tree(solver);
  FEA_CHECK(level >= 0 && level < t->num_levels, solver->ctx, FEA_ERR_INVALID_ARG,
            "level %d is outside [0, %d)", level, t->num_levels);
  FEA_CALL(fea_struct_check(solver->ctx, info, "info", &fea_struct_solver_level));
  fea_solver_level full;
  fea_multifrontal_get_level(solver, level, &full);
  return fea_struct_copy_out(solver->ctx, info, &full, "info", &fea_struct_solver_level);
}

fea_status fea_solver_get_node(const fea_solver *solver, fea_index node, fea_solver_node *info) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(info, solver->ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_MULTIFRONTAL, "fea_solver_get_node()"));
  const fea_etree *t = fea_multifrontal_tree(solver);
  FEA_CHECK(node >= 0 && node < t->num_nodes, solver->ctx, FEA_ERR_INVALID_ARG,
            "node %lld is outside [0, %lld)", (long long)node, (long long)t->num_nodes);
  FEA_CALL(fea_struct_check(solver->ctx, info, "info", &fea_struct_solver_node));
  fea_solver_node full;
  fea_multifrontal_get_node(solver, node, &full);
  return fea_struct_copy_out(solver->ctx, info, &full, "info", &fea_struct_solver_node);
}
