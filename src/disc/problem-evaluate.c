/* What a problem computes for its caller: one element's stiffness, load
 * or mass, the full-DoF vector of a reduced solution, and the L2 and H1
 * errors against an exact solution (scalar, or per component). */
#include <math.h>
#include <stdlib.h>

#include "internal/error.h"
#include "problem.h"

fea_status fea_problem_element_forms(const fea_problem *pb, fea_index e, double *Ke, double *fe,
                                     double *Me) {
  fea_element_values ev;
  FEA_CALL(fea_element_values_alloc(pb->space, &pb->quad, &ev));
  fea_status st = pb->space->ops->element_values(pb->space, e, &pb->quad, &ev);
  if (st == FEA_SUCCESS && (Ke || fe)) st = fea_form_element_system(pb, e, &ev, Ke, fe);
  if (st == FEA_SUCCESS && Me) st = fea_form_mass(&ev, Me);
  fea_element_values_free(&ev);
  return st;
}

void fea_problem_expand(const fea_problem *pb, const double *u_free, double *u_full) {
  for (fea_index i = 0; i < fea_space_total_dofs(pb->space); i++) {
    fea_index r = pb->free_index[i];
    u_full[i] = r >= 0 ? u_free[r] : pb->dirichlet[i];
  }
}

fea_status fea_problem_norms(const fea_problem *problem, const double *u_full, fea_scalar_fn exact,
                             fea_gradient_fn exact_grad, void *user, double *l2, double *h1_semi) {
  const fea_space *s = problem->space;
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

fea_status fea_problem_norms_vector(const fea_problem *problem, const double *u_full,
                                    fea_vector_fn exact, fea_vector_fn exact_grad, void *user,
                                    double *l2, double *h1_semi) {
  const fea_space *s = problem->space;
  const int dim = s->dim, nb = s->dofs_per_element, nc = s->ncomp;
  fea_quadrature q;
  FEA_CALL(fea_problem_rule(s, problem->desc.quad_points, 2, &q)); /* as fea_problem_norms */
  fea_element_values ev;
  fea_status st = fea_element_values_alloc(s, &q, &ev);
  fea_index *dofs = st == FEA_SUCCESS ? malloc((size_t)nb * sizeof *dofs) : NULL;
  if (st == FEA_SUCCESS && !dofs)
    st = FEA_ERROR(problem->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for element DoFs");
  double e0[FEA_MAX_COMPONENTS] = {0}, e1[FEA_MAX_COMPONENTS] = {0};
  for (fea_index e = 0; e < s->num_elements && st == FEA_SUCCESS; e++) {
    st = s->ops->element_values(s, e, &q, &ev);
    if (st != FEA_SUCCESS) break;
    s->ops->element_dofs(s, e, dofs);
    for (int p = 0; p < ev.nq; p++) {
      const double *x = ev.x + p * dim;
      double uh[FEA_MAX_COMPONENTS] = {0}, guh[FEA_MAX_COMPONENTS * 3] = {0};
      double u[FEA_MAX_COMPONENTS] = {0}, g[FEA_MAX_COMPONENTS * 3] = {0};
      for (int b = 0; b < nb; b++) {
        const double phi = ev.phi[p * nb + b], *dphi = ev.dphi + ((size_t)p * nb + b) * dim;
        for (int c = 0; c < nc; c++) {
          const double coef = u_full[c + nc * dofs[b]];
          uh[c] += coef * phi;
          for (int k = 0; k < dim; k++) guh[c * dim + k] += coef * dphi[k];
        }
      }
      exact(x, u, user);
      if (h1_semi) exact_grad(x, g, user);
      for (int c = 0; c < nc; c++) {
        e0[c] += ev.w[p] * (u[c] - uh[c]) * (u[c] - uh[c]);
        for (int k = 0; h1_semi && k < dim; k++)
          e1[c] += ev.w[p] * (g[c * dim + k] - guh[c * dim + k]) *
                   (g[c * dim + k] - guh[c * dim + k]);
      }
    }
  }
  free(dofs);
  fea_element_values_free(&ev);
  fea_quadrature_free(&q);
  if (st != FEA_SUCCESS) return st;
  double t0 = 0, t1 = 0;
  for (int c = 0; c < nc; c++) {
    l2[c] = sqrt(e0[c]);
    t0 += e0[c];
    if (h1_semi) h1_semi[c] = sqrt(e1[c]), t1 += e1[c];
  }
  l2[nc] = sqrt(t0);
  if (h1_semi) h1_semi[nc] = sqrt(t1);
  return FEA_SUCCESS;
}
