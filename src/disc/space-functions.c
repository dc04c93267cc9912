/* A space's functions beyond its elements: values and gradients at
 * physical points, and the coefficients of a coarse function in a finer
 * nested space (B-splines by knot insertion, Lagrange by interpolation with
 * a check that the fine space contains the coarse one). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "quadrature.h"
#include "space.h"

/* Evaluate with a one-point rule at the point's reference coordinates. */
fea_status fea_space_evaluate_points(fea_space *s, const double *coeffs, fea_index npts,
                                     const double *points, double *values, double *gradients) {
  int dim = s->dim, nb = s->dofs_per_element;
  double ref[3] = {0, 0, 0}, one = 1.0;
  fea_quadrature q = {.dim = dim, .npts = 1, .points = ref, .weights = &one};
  fea_element_values ev;
  FEA_CALL(fea_element_values_alloc(s, &q, &ev));
  fea_index *dofs = malloc((size_t)nb * sizeof *dofs);
  fea_status st = dofs ? FEA_SUCCESS
                       : FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d DoFs", nb);
  for (fea_index i = 0; i < npts && st == FEA_SUCCESS; i++) {
    fea_index e = 0;
    st = s->ops->locate(s, points + i * dim, &e, ref);
    if (st == FEA_SUCCESS) st = s->ops->element_values(s, e, &q, &ev);
    if (st != FEA_SUCCESS) break;
    s->ops->element_dofs(s, e, dofs);
    double u = 0, g[3] = {0, 0, 0};
    for (int b = 0; b < nb; b++) {
      double c = coeffs[dofs[b]];
      u += c * ev.phi[b];
      for (int k = 0; k < dim; k++) g[k] += c * ev.dphi[b * dim + k];
    }
    if (values) values[i] = u;
    if (gradients)
      for (int k = 0; k < dim; k++) gradients[i * dim + k] = g[k];
  }
  free(dofs);
  fea_element_values_free(&ev);
  return st;
}

/* A coarse function as a callback, for interpolating it in a finer space. */
typedef struct coarse_fn {
  fea_space *space;
  const double *coeffs;
  fea_status status;
} coarse_fn;

static double eval_coarse(const double *x, void *user) {
  coarse_fn *c = user;
  double u = 0;
  if (c->status == FEA_SUCCESS)
    c->status = fea_space_evaluate_points(c->space, c->coeffs, 1, x, &u, NULL);
  return u;
}

/* The fine interpolant equals the coarse function only if fine contains it:
 * compare them at interior quadrature points of every fine element. */
static fea_status check_contains(fea_space *coarse, const double *cc, const fea_space *fine,
                                 const double *fc) {
  fea_quadrature q;
  FEA_CALL(fea_quadrature_for_cell(fine->cell, 3, &q));
  fea_element_values ev;
  fea_status st = fea_element_values_alloc(fine, &q, &ev);
  if (st != FEA_SUCCESS) {
    fea_quadrature_free(&q);
    return st;
  }
  double scale = 0;
  for (fea_index i = 0; i < coarse->num_dofs; i++) scale = fmax(scale, fabs(cc[i]));
  fea_index *dofs = malloc((size_t)fine->dofs_per_element * sizeof *dofs);
  if (!dofs) st = FEA_ERROR(fine->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for element DoFs");
  for (fea_index e = 0; e < fine->num_elements && st == FEA_SUCCESS; e++) {
    st = fine->ops->element_values(fine, e, &q, &ev);
    if (st != FEA_SUCCESS) break;
    fine->ops->element_dofs(fine, e, dofs);
    for (int p = 0; p < ev.nq && st == FEA_SUCCESS; p++) {
      double uf = 0, uc = 0;
      for (int b = 0; b < ev.nb; b++) uf += fc[dofs[b]] * ev.phi[p * ev.nb + b];
      st = fea_space_evaluate_points(coarse, cc, 1, ev.x + p * ev.dim, &uc, NULL);
      if (st == FEA_SUCCESS && fabs(uf - uc) > 1e-10 * (scale > 0 ? scale : 1))
        st = FEA_ERROR(fine->ctx, FEA_ERR_INVALID_ARG,
                       "the fine space does not contain the coarse one: the functions differ by "
                       "%.3g in fine element %lld",
                       fabs(uf - uc), (long long)e);
    }
  }
  free(dofs);
  fea_element_values_free(&ev);
  fea_quadrature_free(&q);
  return st;
}

fea_status fea_space_transfer_coeffs(fea_space *coarse, const double *coarse_coeffs,
                                     const fea_space *fine, double *fine_coeffs) {
  double *tmp = malloc((size_t)fine->num_dofs * sizeof *tmp);
  FEA_CHECK(tmp, coarse->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld coefficients",
            (long long)fine->num_dofs);
  fea_status st;
  if (coarse->kind == FEA_SPACE_BSPLINE) {
    st = fea_space_bspline_transfer(coarse, coarse_coeffs, fine, tmp);
  } else {
    coarse_fn c = {coarse, coarse_coeffs, FEA_SUCCESS};
    st = fine->ops->interpolate(fine, eval_coarse, &c, tmp);
    if (st == FEA_SUCCESS) st = c.status;
    if (st == FEA_SUCCESS) st = check_contains(coarse, coarse_coeffs, fine, tmp);
  }
  if (st == FEA_SUCCESS) memcpy(fine_coeffs, tmp, (size_t)fine->num_dofs * sizeof *tmp);
  free(tmp);
  return st;
}
