/* Stresses of an elasticity solution u_h: sigma = lambda tr(eps) I + 2 mu
 * eps (or C eps with a tensor C(x)) from the gradient of u_h at a point of an element, the von Mises
 * stress from it, both at points a caller names (the patch's parameters on
 * B-spline spaces, since a mapped patch cannot locate physical points
 * without inverting its map; physical points on Lagrange spaces, located as
 * fea_space_evaluate() locates them), and sampled with the displacement
 * into a VTU file for ParaView. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elastic-stress.h"
#include "internal/error.h"
#include "space-vtu.h"

/* The stress s (Voigt, 6) into stress and its von Mises value into vm, each unless NULL. */
static fea_status finish(const double *s, double *stress, double *vm) {
  if (stress) memcpy(stress, s, 6 * sizeof *s);
  if (vm) {
    const double a = s[0] - s[1], b = s[1] - s[2], c = s[2] - s[0];
    *vm = sqrt(0.5 * (a * a + b * b + c * c) + 3 * (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]));
  }
  return FEA_SUCCESS;
}

fea_status fea_elastic_stress_at(const fea_problem *pb, const fea_element_values *ev, int i,
                                 const double *local, double *u, double *stress, double *vm) {
  const int dim = ev->dim, nb = ev->nb, nc = pb->space->ncomp;
  const double *x = ev->x + (size_t)i * dim, *phi = ev->phi + (size_t)i * nb;
  const double *dphi = ev->dphi + (size_t)i * nb * dim;
  double g[3][3] = {{0}};
  if (u)
    for (int c = 0; c < nc; c++) u[c] = 0.0;
  for (int j = 0; j < nb; j++)
    for (int c = 0; c < nc; c++) {
      const double a = local[c + nc * j];
      if (u) u[c] += a * phi[j];
      for (int k = 0; k < dim; k++) g[c][k] += a * dphi[j * dim + k];
    }
  if (!stress && !vm) return FEA_SUCCESS;
  double s[6] = {0};
  if (pb->elastic->C_fn) {
    /* sigma = C eps in Voigt form; in 2D the in-plane tensor leaves sigma_zz
     * undefined: reported as 0 (docs/problems.md). */
    const int nv = FEA_VOIGT(dim);
    double C[36], eps[6], sv[6];
    FEA_CALL(fea_form_elastic_tensor(pb, x, C));
    for (int k = 0; k < nv; k++) {
      const int a = fea_form_elastic_voigt_pair(dim, k, 0),
                b = fea_form_elastic_voigt_pair(dim, k, 1);
      eps[k] = a == b ? g[a][a] : g[a][b] + g[b][a];
    }
    for (int k = 0; k < nv; k++) {
      sv[k] = 0;
      for (int l = 0; l < nv; l++) sv[k] += C[k * nv + l] * eps[l];
    }
    if (dim == 3)
      memcpy(s, sv, sizeof s);
    else
      s[0] = sv[0], s[1] = sv[1], s[5] = sv[2];
    return finish(s, stress, vm);
  }
  double lambda, mu;
  FEA_CALL(fea_form_elastic_lame(pb, x, &lambda, &mu));
  const double tr = g[0][0] + g[1][1] + g[2][2];
  for (int k = 0; k < 3; k++) s[k] = lambda * tr + 2 * mu * g[k][k];
  s[3] = mu * (g[1][2] + g[2][1]);
  s[4] = mu * (g[0][2] + g[2][0]);
  s[5] = mu * (g[0][1] + g[1][0]);
  if (dim == 2) {
    /* eps_zz = 0: plane strain's sigma_zz = lambda tr(eps); plane stress has
     * sigma_zz = 0 by definition (its lambda is already 2 lambda mu / (lambda
     * + 2 mu), which gives sigma_xx and sigma_yy). */
    s[2] = pb->elastic->model == FEA_ELASTICITY_PLANE_STRESS ? 0.0 : lambda * tr;
  }
  return finish(s, stress, vm);
}

/* The element holding parameter point t of a B-spline space and t's
 * reference coordinates in it: the space's box [lower, upper] (for a
 * mapped patch, its parameter range) split at the knots, as the space's own
 * locate splits it for unmapped boxes. */
#define PARAM_TOL 1e-12
static fea_status locate_parameters(const fea_space *s, fea_index which, const double *t,
                                    fea_index *e, double *ref) {
  const fea_bspline_space *b = s->impl;
  fea_index elem = 0, stride = 1;
  for (int k = 0; k < s->dim; k++) {
    const fea_knots *kn = &b->knots[k];
    const double lo = b->lower[k], hi = b->upper[k], tol = PARAM_TOL * (hi - lo);
    FEA_CHECK(t[k] >= lo - tol && t[k] <= hi + tol, s->ctx, FEA_ERR_INVALID_ARG,
              "point %lld has the parameter %g in direction %d, outside the patch's range [%g, "
              "%g] (on a B-spline space the points are parameters)",
              (long long)which, t[k], k, lo, hi);
    const double tk = fmin(fmax(t[k], lo), hi), t0 = kn->t[0], t1 = kn->t[kn->m - 1];
    const double xi = fmin(fmax(t0 + (tk - lo) / (hi - lo) * (t1 - t0), t0), t1);
    const fea_index sp = fea_knots_find_span(kn, xi);
    fea_index lo_e = 0, hi_e = kn->nelem - 1;
    while (lo_e < hi_e) { /* the element of span sp (sorted spans) */
      const fea_index mid = lo_e + (hi_e - lo_e) / 2;
      if (kn->span[mid] < sp)
        lo_e = mid + 1;
      else
        hi_e = mid;
    }
    const double a = kn->t[sp], h = kn->t[sp + 1] - a;
    ref[k] = fmin(fmax((xi - a) / h, 0.0), 1.0);
    elem += lo_e * stride;
    stride *= kn->nelem;
  }
  *e = elem;
  return FEA_SUCCESS;
}

fea_status fea_elastic_stress_points(const fea_problem *pb, const double *u_full, fea_index npts,
                                     const double *points, double *x, double *u, double *stress,
                                     double *vm) {
  fea_space *s = pb->space;
  const int dim = s->dim, nb = s->dofs_per_element, nc = s->ncomp;
  double ref[3] = {0, 0, 0}, one = 1.0;
  fea_quadrature q = {.dim = dim, .npts = 1, .points = ref, .weights = &one};
  fea_element_values ev;
  FEA_CALL(fea_element_values_alloc(s, &q, &ev));
  fea_index *dofs = malloc((size_t)nb * sizeof *dofs);
  double *local = malloc((size_t)nb * (size_t)nc * sizeof *local);
  fea_status st = dofs && local ? FEA_SUCCESS
                                : FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY,
                                            "no memory for %d element DoFs", nb * nc);
  for (fea_index i = 0; i < npts && st == FEA_SUCCESS; i++) {
    fea_index e = 0;
    const double *p = points + i * dim;
    st = s->kind == FEA_SPACE_BSPLINE ? locate_parameters(s, i, p, &e, ref)
                                      : s->ops->locate(s, p, &e, ref);
    if (st == FEA_SUCCESS) st = s->ops->element_values(s, e, &q, &ev);
    if (st != FEA_SUCCESS) break;
    s->ops->element_dofs(s, e, dofs);
    for (int j = 0; j < nb; j++)
      for (int c = 0; c < nc; c++) local[c + nc * j] = u_full[c + (fea_index)nc * dofs[j]];
    st = fea_elastic_stress_at(pb, &ev, 0, local, u ? u + i * nc : NULL,
                               stress ? stress + i * FEA_STRESS_COMPONENTS : NULL,
                               vm ? vm + i : NULL);
    if (x) memcpy(x + i * dim, ev.x, (size_t)dim * sizeof *x);
  }
  free(dofs);
  free(local);
  fea_element_values_free(&ev);
  return st;
}

/* The VTU sampler: the stress in ParaView's order of a symmetric tensor
 * (xx, yy, zz, xy, yz, xz), then the von Mises stress. */
static fea_status sample_stress(void *user, const fea_element_values *ev, int i,
                                const double *local, double *out) {
  double s[6];
  FEA_CALL(fea_elastic_stress_at(user, ev, i, local, NULL, s, out + 6));
  out[0] = s[0], out[1] = s[1], out[2] = s[2], out[3] = s[5], out[4] = s[3], out[5] = s[4];
  return FEA_SUCCESS;
}

fea_status fea_elastic_write_vtu(const fea_problem *pb, const double *u_full, int samples,
                                 const char *path) {
  const fea_vtu_sampler sampler = {2, {"stress", "von_mises"}, {6, 1}, sample_stress, (void *)pb};
  return fea_space_bspline_write_vtu_fields(pb->space, u_full, samples, path, "displacement",
                                            &sampler);
}
