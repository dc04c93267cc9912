/* Element integrals of the Poisson problem: stiffness with coefficient sigma,
 * load f, and the mass matrix. */
#include <math.h>
#include <string.h>

#include "error.h"
#include "problem.h"

static fea_status bad_point(const fea_problem *pb, const char *what, double v, const double *x,
                            int dim) {
  return FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG, "%s is %g at x = (%g, %g, %g)", what, v, x[0],
                   dim > 1 ? x[1] : 0.0, dim > 2 ? x[2] : 0.0);
}

fea_status fea_form_stiffness_load(const fea_problem *pb, const fea_element_values *ev, double *Ke,
                                   double *fe) {
  const int nb = ev->nb, dim = ev->dim;
  if (Ke) memset(Ke, 0, (size_t)nb * nb * sizeof *Ke);
  if (fe) memset(fe, 0, (size_t)nb * sizeof *fe);
  const fea_problem_desc *d = &pb->desc;
  for (int q = 0; q < ev->nq; q++) {
    const double *x = ev->x + q * dim;
    if (Ke) {
      double sigma = d->sigma_fn ? d->sigma_fn(x, d->sigma_user) : d->sigma;
      if (!(sigma > 0) || !isfinite(sigma)) return bad_point(pb, "sigma", sigma, x, dim);
      double ws = ev->w[q] * sigma;
      const double *g = ev->dphi + (size_t)q * nb * dim;
      for (int i = 0; i < nb; i++)
        for (int j = i; j < nb; j++) {
          double s = 0;
          for (int k = 0; k < dim; k++) s += g[i * dim + k] * g[j * dim + k];
          Ke[i * nb + j] += ws * s;
        }
    }
    if (fe && d->source) {
      double f = d->source(x, d->source_user);
      if (!isfinite(f)) return bad_point(pb, "the source f", f, x, dim);
      const double *phi = ev->phi + (size_t)q * nb;
      for (int i = 0; i < nb; i++) fe[i] += ev->w[q] * f * phi[i];
    }
  }
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
