/* Where a patch's DoFs sit: the grid of DoFs on one side, and each DoF's
 * anchor, its Greville point mapped to physical space. Two conforming sides
 * have the same anchors (the same curve or surface, the same knots up to an
 * affine change and reversal), so interfaces are found and checked on them. */
#include <stdlib.h>

#include "internal/error.h"
#include "disc/geometry-map.h"
#include "multipatch.h"

void fea_side_grid_of(const fea_space *s, int side, fea_side_grid *g) {
  const fea_bspline_space *b = s->impl;
  fea_index n[3] = {1, 1, 1}, st = 1;
  for (int k = 0; k < s->dim; k++) n[k] = fea_knots_num_functions(&b->knots[k]);
  for (int k = 0; k < 3; k++) {
    g->stride[k] = st;
    st *= n[k];
  }
  g->fixed = side / 2;
  g->at = side % 2 ? (int)(n[g->fixed] - 1) : 0;
  int t = 0;
  g->tdir[0] = g->tdir[1] = -1;
  g->m[0] = g->m[1] = 1;
  for (int k = 0; k < s->dim; k++)
    if (k != g->fixed) {
      g->tdir[t] = k;
      g->m[t] = n[k];
      t++;
    }
}

/* The physical point of parameter xi (in the space's knot range): the
 * patch's geometry map, or the affine map onto its box. */
static void map_param(const fea_space *s, const double xi[3], double *x) {
  const fea_bspline_space *b = s->impl;
  const int dim = s->dim;
  if (b->geo) {
    fea_index span[3] = {0, 0, 0};
    double J[9], W, dW[3], y[3];
    for (int k = 0; k < dim; k++) span[k] = fea_knots_find_span(&b->geo->knots[k], xi[k]);
    fea_geometry_map_eval(b->geo, span, xi, y, J, &W, dW);
    for (int k = 0; k < dim; k++) x[k] = y[k];
    return;
  }
  for (int k = 0; k < dim; k++) {
    const fea_knots *kn = &b->knots[k];
    const double t0 = kn->t[0], t1 = kn->t[kn->m - 1];
    x[k] = b->lower[k] + (xi[k] - t0) * (b->upper[k] - b->lower[k]) / (t1 - t0);
  }
}

void fea_multipatch_patch_point(const fea_space *s, const double u[3], double *x) {
  const fea_bspline_space *b = s->impl;
  double xi[3] = {0, 0, 0};
  for (int k = 0; k < s->dim; k++) {
    const fea_knots *kn = &b->knots[k];
    xi[k] = kn->t[0] + u[k] * (kn->t[kn->m - 1] - kn->t[0]);
  }
  map_param(s, xi, x);
}

fea_status fea_multipatch_dof_anchors(const fea_space *s, fea_index count, const fea_index *dofs,
                                      double *x) {
  const fea_bspline_space *b = s->impl;
  const int dim = s->dim;
  fea_index n[3] = {1, 1, 1}, total = 0;
  for (int k = 0; k < dim; k++) total += n[k] = fea_knots_num_functions(&b->knots[k]);
  double *g = malloc((size_t)total * sizeof *g);
  FEA_CHECK(g, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld Greville points",
            (long long)total);
  double *gk[3] = {g, g, g};
  for (int k = 0; k < dim; k++) {
    if (k) gk[k] = gk[k - 1] + n[k - 1];
    fea_knots_greville(&b->knots[k], gk[k]);
  }
  for (fea_index a = 0; a < count; a++) {
    fea_index r = dofs[a];
    double xi[3] = {0, 0, 0};
    for (int k = 0; k < dim; k++) {
      xi[k] = gk[k][r % n[k]];
      r /= n[k];
    }
    map_param(s, xi, x + a * dim);
  }
  free(g);
  return FEA_SUCCESS;
}

fea_status fea_multipatch_function_anchors(const fea_multipatch *mp, double *x) {
  const int dim = mp->dim, nc = mp->ncomp;
  fea_status st = FEA_SUCCESS;
  for (int p = 0; p < mp->num_patches && st == FEA_SUCCESS; p++) {
    const fea_space *s = mp->patches[p];
    const fea_index n = s->num_dofs, *g = mp->global + mp->patch_off[p];
    fea_index *dofs = malloc((size_t)(n ? n : 1) * sizeof *dofs);
    double *y = malloc((size_t)(n ? n : 1) * (size_t)dim * sizeof *y);
    if (!dofs || !y)
      st = FEA_ERROR(mp->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the anchors of patch %d", p);
    for (fea_index i = 0; i < n && st == FEA_SUCCESS; i++) dofs[i] = i;
    if (st == FEA_SUCCESS) st = fea_multipatch_dof_anchors(s, n, dofs, y);
    /* A shared function's anchors agree (interfaces.c checked them). */
    for (fea_index i = 0; i < n && st == FEA_SUCCESS; i++)
      for (int k = 0; k < dim; k++) x[g[nc * i] / nc * dim + k] = y[i * dim + k];
    free(dofs);
    free(y);
  }
  return st;
}
