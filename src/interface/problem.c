/* Poisson problem API: the descriptor's checks before src/disc/problem.c
 * builds the object; element systems, reduced-solution expansion and error
 * norms. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "error.h"
#include "problem.h"
#include "struct-copy.h"

fea_status fea_problem_create_poisson(fea_space *space, const fea_problem_desc *desc,
                                      fea_problem **out) {
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
  if (!problem || !*problem) return FEA_SUCCESS;
  fea_object_release(*problem);
  *problem = NULL;
  return FEA_SUCCESS;
}

fea_status fea_problem_get_num_free_dofs(const fea_problem *problem, fea_index *n) {
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(n, problem->ctx);
  *n = problem->num_free;
  return FEA_SUCCESS;
}

/* Element e's basis on the problem's rule, into caller-owned buffers. */
static fea_status element_on_rule(const fea_problem *pb, fea_index e, fea_element_values *ev) {
  FEA_CHECK(e >= 0 && e < pb->space->num_elements, pb->ctx, FEA_ERR_INVALID_ARG,
            "element %lld is outside [0, %lld)", (long long)e, (long long)pb->space->num_elements);
  FEA_CALL(fea_element_values_alloc(pb->space, &pb->quad, ev));
  fea_status st = pb->space->ops->element_values(pb->space, e, &pb->quad, ev);
  if (st != FEA_SUCCESS) fea_element_values_free(ev);
  return st;
}

fea_status fea_problem_element_system(const fea_problem *problem, fea_index e, double *Ke,
                                      double *fe) {
  FEA_CHECK_NULL(problem, NULL);
  fea_element_values ev;
  FEA_CALL(element_on_rule(problem, e, &ev));
  fea_status st = fea_form_stiffness_load(problem, &ev, Ke, fe);
  fea_element_values_free(&ev);
  return st;
}

fea_status fea_problem_element_mass(const fea_problem *problem, fea_index e, double *Me) {
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(Me, problem->ctx);
  fea_element_values ev;
  FEA_CALL(element_on_rule(problem, e, &ev));
  fea_status st = fea_form_mass(&ev, Me);
  fea_element_values_free(&ev);
  return st;
}

fea_status fea_problem_expand_solution(const fea_problem *problem, const double *u_free,
                                       double *u_full) {
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK(u_free || problem->num_free == 0, problem->ctx, FEA_ERR_INVALID_ARG,
            "argument 'u_free' is NULL");
  FEA_CHECK_NULL(u_full, problem->ctx);
  for (fea_index i = 0; i < problem->space->num_dofs; i++) {
    fea_index r = problem->free_index[i];
    u_full[i] = r >= 0 ? u_free[r] : problem->dirichlet[i];
  }
  return FEA_SUCCESS;
}

fea_status fea_problem_error_norms(const fea_problem *problem, const double *u_full,
                                   fea_scalar_fn exact, fea_gradient_fn exact_grad, void *user,
                                   double *l2, double *h1_semi) {
  FEA_CHECK_NULL(problem, NULL);
  const fea_space *s = problem->space;
  FEA_CHECK_NULL(u_full, problem->ctx);
  FEA_CHECK_NULL(exact, problem->ctx);
  FEA_CHECK_NULL(l2, problem->ctx);
  FEA_CHECK(!h1_semi || exact_grad, problem->ctx, FEA_ERR_INVALID_ARG,
            "h1_semi asked for without exact_grad");
  fea_quadrature q;
  /* Two points more than the forms use, so the quadrature error stays below
   * the discretization error being measured. */
  FEA_CALL(fea_problem_rule(s, problem->desc.quad_points, 2, &q));
  fea_element_values ev;
  fea_status st = fea_element_values_alloc(s, &q, &ev);
  fea_index *dofs = st == FEA_SUCCESS ? malloc((size_t)s->dofs_per_element * sizeof *dofs) : NULL;
  if (st == FEA_SUCCESS && !dofs)
    st = FEA_ERROR(problem->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for element DoFs");
  double e0 = 0, e1 = 0;
  const int dim = s->dim, nb = s->dofs_per_element;
  for (fea_index e = 0; e < s->num_elements && st == FEA_SUCCESS; e++) {
    st = s->ops->element_values(s, e, &q, &ev);
    if (st != FEA_SUCCESS) break;
    s->ops->element_dofs(s, e, dofs);
    for (int p = 0; p < ev.nq; p++) {
      const double *x = ev.x + p * dim;
      double uh = 0, guh[3] = {0, 0, 0}, g[3] = {0, 0, 0};
      for (int b = 0; b < nb; b++) {
        double c = u_full[dofs[b]];
        uh += c * ev.phi[p * nb + b];
        for (int k = 0; k < dim; k++) guh[k] += c * ev.dphi[((size_t)p * nb + b) * dim + k];
      }
      double diff = exact(x, user) - uh;
      e0 += ev.w[p] * diff * diff;
      if (h1_semi) {
        exact_grad(x, g, user);
        for (int k = 0; k < dim; k++) e1 += ev.w[p] * (g[k] - guh[k]) * (g[k] - guh[k]);
      }
    }
  }
  free(dofs);
  fea_element_values_free(&ev);
  fea_quadrature_free(&q);
  if (st != FEA_SUCCESS) return st;
  *l2 = sqrt(e0);
  if (h1_semi) *h1_semi = sqrt(e1);
  return FEA_SUCCESS;
}
