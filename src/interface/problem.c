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
