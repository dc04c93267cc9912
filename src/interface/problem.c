/* Poisson problem API: the descriptor's checks before src/disc/problem.c
 * builds the object; element systems, reduced-solution expansion and error
 * norms. */
#include <math.h>

#include "context.h"
#include "error.h"
#include "problem.h"
#include "struct-copy.h"

fea_status fea_problem_create_poisson(fea_space *space, const fea_problem_desc *desc,
                                      fea_problem **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(space, NULL);
  fea_context *ctx = space->ctx;
  FEA_CHECK_NULL(desc, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_problem_desc));
  FEA_CHECK(d.sigma_fn || (d.sigma > 0 && isfinite(d.sigma)), ctx, FEA_ERR_INVALID_ARG,
            "sigma = %g must be positive and finite", d.sigma);
  FEA_CHECK(d.quad_points >= 0 && d.quad_points <= FEA_QUAD_MAX_1D, ctx, FEA_ERR_INVALID_ARG,
            "quad_points = %d is outside 0..%d (0: degree + 1)", d.quad_points, FEA_QUAD_MAX_1D);
  FEA_CHECK(d.reaction_fn || (d.reaction >= 0 && isfinite(d.reaction)), ctx, FEA_ERR_INVALID_ARG,
            "the reaction coefficient c = %g must be finite and >= 0", d.reaction);
  static const char *const side_names[6] = {"west", "east", "south", "north", "front", "back"};
  int anchored = d.reaction != 0.0 || d.reaction_fn != NULL, natural = 0;
  for (int side = 0; side < 6; side++) {
    const fea_boundary_condition *bc = &d.sides[side];
    FEA_CHECK(bc->type == FEA_BC_DIRICHLET || bc->type == FEA_BC_NEUMANN ||
                  bc->type == FEA_BC_ROBIN,
              ctx, FEA_ERR_INVALID_ARG,
              "sides[%d] (%s) has type %d; it must be FEA_BC_DIRICHLET, _NEUMANN or _ROBIN", side,
              side_names[side], (int)bc->type);
    if (bc->type == FEA_BC_DIRICHLET) {
      if (side < 2 * space->dim) anchored = 1;
      continue;
    }
    FEA_CHECK(side < 2 * space->dim, ctx, FEA_ERR_INVALID_ARG,
              "sides[%d] (%s) is not Dirichlet, but a %dD space has sides 0..%d only", side,
              side_names[side], space->dim, 2 * space->dim - 1);
    FEA_CHECK(space->kind == FEA_SPACE_BSPLINE, ctx, FEA_ERR_UNSUPPORTED,
              "sides[%d] (%s) is %s: Neumann and Robin sides are implemented for B-spline "
              "spaces; this is a Lagrange space (Dirichlet on its whole boundary only)",
              side, side_names[side], bc->type == FEA_BC_NEUMANN ? "Neumann" : "Robin");
    if (bc->type == FEA_BC_ROBIN) {
      FEA_CHECK(bc->alpha > 0 && isfinite(bc->alpha), ctx, FEA_ERR_INVALID_ARG,
                "sides[%d] (%s) is Robin with alpha = %g; it must be finite and > 0", side,
                side_names[side], bc->alpha);
      anchored = 1;
    }
    natural = 1;
  }
  FEA_CHECK(!natural || anchored, ctx, FEA_ERR_INVALID_ARG,
            "no side is Dirichlet or Robin and c = 0: u would be determined up to a constant "
            "only (make one side Dirichlet or Robin, or give c > 0)");

  return fea_problem_build(space, &d, out);
}

fea_status fea_problem_destroy(fea_problem **problem) {
  FEA_ENTRY();
  if (!problem || !*problem) return FEA_SUCCESS;
  fea_object_release(*problem);
  *problem = NULL;
  return FEA_SUCCESS;
}

fea_status fea_problem_get_num_free_dofs(const fea_problem *problem, fea_index *n) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(n, problem->ctx);
  *n = problem->num_free;
  return FEA_SUCCESS;
}

static fea_status check_element(const fea_problem *pb, fea_index e) {
  FEA_CHECK(e >= 0 && e < pb->space->num_elements, pb->ctx, FEA_ERR_INVALID_ARG,
            "element %lld is outside [0, %lld)", (long long)e, (long long)pb->space->num_elements);
  return FEA_SUCCESS;
}

fea_status fea_problem_element_system(const fea_problem *problem, fea_index e, double *Ke,
                                      double *fe) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CALL(check_element(problem, e));
  return fea_problem_element_forms(problem, e, Ke, fe, NULL);
}

fea_status fea_problem_element_mass(const fea_problem *problem, fea_index e, double *Me) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(Me, problem->ctx);
  FEA_CALL(check_element(problem, e));
  return fea_problem_element_forms(problem, e, NULL, NULL, Me);
}

fea_status fea_problem_expand_solution(const fea_problem *problem, const double *u_free,
                                       double *u_full) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK(u_free || problem->num_free == 0, problem->ctx, FEA_ERR_INVALID_ARG,
            "argument 'u_free' is NULL");
  FEA_CHECK_NULL(u_full, problem->ctx);
  fea_problem_expand(problem, u_free, u_full);
  return FEA_SUCCESS;
}

fea_status fea_problem_error_norms(const fea_problem *problem, const double *u_full,
                                   fea_scalar_fn exact, fea_gradient_fn exact_grad, void *user,
                                   double *l2, double *h1_semi) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(u_full, problem->ctx);
  FEA_CHECK_NULL(exact, problem->ctx);
  FEA_CHECK_NULL(l2, problem->ctx);
  FEA_CHECK(!h1_semi || exact_grad, problem->ctx, FEA_ERR_INVALID_ARG,
            "h1_semi asked for without exact_grad");
  return fea_problem_norms(problem, u_full, exact, exact_grad, user, l2, h1_semi);
}
