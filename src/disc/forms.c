/* Element integrals of the Poisson problem: stiffness with coefficient sigma,
 * load f, and the mass matrix. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "problem.h"

static fea_status bad_point(const fea_problem *pb, const char *what, double v, const double *x,
                            int dim) {
  return FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG, "%s is %g at x = (%g, %g, %g)", what, v, x[0],
                   dim > 1 ? x[1] : 0.0, dim > 2 ? x[2] : 0.0);
}

/* Ke += ws g g^T on the upper triangle for one quadrature point, g the
 * nb x DIM gradients (row i: function i). The gradients go to one row per
 * direction first, so that the inner loop runs down contiguous rows of Ke
 * and of the gradients and vectorizes; DIM is a constant in each caller, so
 * the direction loop unrolls. The sum over directions keeps the order of
 * the plain loop (direction 0 first), so the result does not change. */
static inline void stiffness_point(int nb, const int DIM, double ws, const double *g,
                                   double *restrict gs, double *restrict Ke) {
  for (int i = 0; i < nb; i++)
    for (int k = 0; k < DIM; k++) gs[k * nb + i] = g[i * DIM + k];
  for (int i = 0; i < nb; i++) {
    double gi[3] = {0, 0, 0};
    for (int k = 0; k < DIM; k++) gi[k] = gs[k * nb + i];
    double *row = Ke + (size_t)i * nb;
    for (int j = i; j < nb; j++) {
      double s = gi[0] * gs[j];
      if (DIM > 1) s += gi[1] * gs[nb + j];
      if (DIM > 2) s += gi[2] * gs[2 * nb + j];
      row[j] += ws * s;
    }
  }
}

fea_status fea_form_stiffness_load(const fea_problem *pb, const fea_element_values *ev, double *Ke,
                                   double *fe) {
  const int nb = ev->nb, dim = ev->dim;
  /* The gradients of one point, one row per direction (stiffness_point). */
  double gs_small[3 * 216], *gs = gs_small, *gs_heap = NULL;
  if (Ke && (size_t)nb * (size_t)dim > sizeof gs_small / sizeof *gs_small) {
    gs = gs_heap = malloc((size_t)nb * (size_t)dim * sizeof *gs);
    if (!gs)
      return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d x %d gradients", nb, dim);
  }
  fea_status st = FEA_SUCCESS;
  if (Ke) memset(Ke, 0, (size_t)nb * nb * sizeof *Ke);
  if (fe) memset(fe, 0, (size_t)nb * sizeof *fe);
  const fea_problem_desc *d = &pb->desc;
  for (int q = 0; q < ev->nq; q++) {
    const double *x = ev->x + q * dim;
    if (Ke) {
      double sigma = d->sigma_fn ? d->sigma_fn(x, d->sigma_user) : d->sigma;
      if (!(sigma > 0) || !isfinite(sigma)) {
        st = bad_point(pb, "sigma", sigma, x, dim);
        break;
      }
      double ws = ev->w[q] * sigma;
      const double *g = ev->dphi + (size_t)q * nb * dim;
      if (dim == 3)
        stiffness_point(nb, 3, ws, g, gs, Ke);
      else if (dim == 2)
        stiffness_point(nb, 2, ws, g, gs, Ke);
      else
        stiffness_point(nb, 1, ws, g, gs, Ke);
    }
    if (fe && d->source) {
      double f = d->source(x, d->source_user);
      if (!isfinite(f)) {
        st = bad_point(pb, "the source f", f, x, dim);
        break;
      }
      const double *phi = ev->phi + (size_t)q * nb;
      for (int i = 0; i < nb; i++) fe[i] += ev->w[q] * f * phi[i];
    }
  }
  free(gs_heap);
  if (st != FEA_SUCCESS) return st;
  if (Ke) /* computed on the upper triangle; the matrix is symmetric */
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < i; j++) Ke[i * nb + j] = Ke[j * nb + i];
  return FEA_SUCCESS;
}

fea_status fea_form_mass(const fea_element_values *ev, double *Me) {
  const int nb = ev->nb;
  memset(Me, 0, (size_t)nb * nb * sizeof *Me);
  for (int q = 0; q < ev->nq; q++) {
    const double *phi = ev->phi + (size_t)q * nb;
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++) Me[i * nb + j] += ev->w[q] * phi[i] * phi[j];
  }
  return FEA_SUCCESS;
}

fea_status fea_problem_rule(const fea_space *s, int points, int extra, fea_quadrature *q) {
  if (s->cell == FEA_CELL_TRIANGLE || s->cell == FEA_CELL_TETRAHEDRON) {
    /* The collapsed rule with n points is exact to total degree 2n - 2: the
     * mass matrix of P_p needs 2p, so n = p + 1 (P1: 2, P2: 3). */
    int n = points > 0 ? points : s->degree[0] + 1;
    n += extra;
    if (n > FEA_QUAD_MAX_1D) n = FEA_QUAD_MAX_1D;
    return fea_quadrature_simplex(s->dim, n, q);
  }
  int n[3] = {1, 1, 1};
  for (int k = 0; k < s->dim; k++) {
    n[k] = (points > 0 ? points : s->degree[k] + 1) + extra;
    if (n[k] > FEA_QUAD_MAX_1D) n[k] = FEA_QUAD_MAX_1D;
  }
  return fea_quadrature_tensor(s->dim, n, q);
}
