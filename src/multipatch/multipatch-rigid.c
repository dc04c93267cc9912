/* The rigid-body check of a multipatch elasticity problem: the fixed global
 * DoFs must remove every translation and rotation, else the coupled system
 * is singular (a pure traction problem, or a domain held by rollers that
 * all point one way).
 *
 * No single patch need be held: a patch with only interface and free sides
 * is anchored through its neighbours, so the check runs over the domain,
 * as fea_problem_create_elasticity() runs it over one space. A mode is
 * removed when the fixed DoFs see it: the Gram matrix of the modes' values
 * at the fixed DoFs is nonsingular, checked by an LDL^T without pivoting (a
 * mode whose pivot vanishes is free, alone or with the modes before it);
 * springs add the Gram matrix of their stiffness over their sides.
 * The values are exact coefficients: x_k and 1 are in every patch's space
 * (isoparametric), so their interpolants represent the modes, and a DoF
 * shared by patches has the same value from each (conforming sides); each
 * global DoF is counted once, from its first patch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/error.h"
#include "multipatch.h"

/* x_k for k = 0 .. dim - 1, and the constant 1 for k = dim. */
static double coordinate(const double *x, void *user) {
  const int k = ((const int *)user)[0], dim = ((const int *)user)[1];
  return k < dim ? x[k] : 1.0;
}

/* Add patch p's fixed DoFs not seen before (seen: per global DoF) to G. */
static fea_status add_patch(const fea_multipatch_problem *pb, int p, unsigned char *seen,
                            double G[6][6], double *scale) {
  const fea_multipatch *mp = pb->mp;
  const fea_space *s = mp->patches[p];
  const int dim = s->dim, nc = s->ncomp, nrot = dim == 2 ? 1 : 3, nm = dim + nrot;
  static const int pair[3][2] = {{1, 2}, {2, 0}, {0, 1}}; /* about x, y, z */
  const int first_pair = dim == 2 ? 2 : 0;
  const fea_index n = s->num_dofs, *g = mp->global + mp->patch_off[p];
  double *X = malloc((size_t)(dim + 1) * (size_t)(n ? n : 1) * sizeof *X);
  FEA_CHECK(X, pb->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the rigid-body modes of patch %d's %lld functions", p, (long long)n);
  fea_status st = FEA_SUCCESS;
  for (int k = 0; k <= dim && st == FEA_SUCCESS; k++) {
    const int which[2] = {k, dim};
    st = s->ops->interpolate(s, coordinate, (void *)which, X + (size_t)k * n);
  }
  /* One scale for the whole domain: the first patch's largest coordinate. */
  if (*scale == 0)
    for (fea_index i = 0; i < n && st == FEA_SUCCESS; i++)
      for (int k = 0; k < dim; k++) *scale = fmax(*scale, fabs(X[(size_t)k * n + i]));
  if (*scale == 0) *scale = 1;
  for (fea_index i = 0; i < n && st == FEA_SUCCESS; i++)
    for (int c = 0; c < nc; c++) {
      const fea_index G_ = g[c + nc * i];
      if (pb->free_index[G_] >= 0 || seen[G_]) continue;
      seen[G_] = 1;
      double v[6] = {0};
      v[c] = X[(size_t)dim * n + i];
      for (int r = 0; r < nrot; r++) {
        const int a = pair[first_pair + r][0], b = pair[first_pair + r][1];
        v[dim + r] = (c == a   ? -X[(size_t)b * n + i]
                      : c == b ? X[(size_t)a * n + i]
                               : 0.0) /
                     *scale;
      }
      for (int m = 0; m < nm; m++)
        for (int k = 0; k < nm; k++) G[m][k] += v[m] * v[k];
    }
  free(X);
  return st;
}

fea_status fea_multipatch_check_rigid_modes(const fea_multipatch_problem *pb) {
  const fea_multipatch *mp = pb->mp;
  const int dim = mp->dim, nm = dim == 2 ? 3 : 6;
  unsigned char *seen = calloc((size_t)(mp->num_dofs ? mp->num_dofs : 1), 1);
  FEA_CHECK(seen, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the flags of %lld DoFs",
            (long long)mp->num_dofs);
  double G[6][6] = {{0}}, scale = 0;
  fea_status st = FEA_SUCCESS;
  for (int p = 0; p < mp->num_patches && st == FEA_SUCCESS; p++)
    st = add_patch(pb, p, seen, G, &scale);
  free(seen);
  FEA_CALL(st);
  /* Springs (FEA_ELASTIC_SPRING sides) hold modes too: their Gram matrix
   * int k v_m . v_n, summed over the patches (a boundary side is one
   * patch's), its rotations scaled as G's. Both are positive semidefinite,
   * so the kernel of the sum, each scaled to unit trace, is the modes that
   * neither removes, whatever their units. */
  double S[6][6] = {{0}};
  for (int p = 0; p < mp->num_patches; p++) {
    double Sp[6][6];
    FEA_CALL(fea_form_elastic_spring_gram(pb->patch_pb[p], Sp));
    for (int m = 0; m < nm; m++)
      for (int k = 0; k < nm; k++)
        S[m][k] += Sp[m][k] / ((m >= dim ? scale : 1.0) * (k >= dim ? scale : 1.0));
  }
  char free_modes[160];
  fea_elastic_free_modes(dim, G, S, free_modes, sizeof free_modes);
  FEA_CHECK(free_modes[0] == '\0', pb->ctx, FEA_ERR_INVALID_ARG,
            "the displacement conditions of the %d-patch domain leave rigid-body modes free (%s): "
            "a pure traction problem has no unique solution; fix enough components on boundary "
            "sides (FEA_ELASTIC_DISPLACEMENT, a roller fixes one component) or support them on "
            "springs (FEA_ELASTIC_SPRING with k > 0)",
            mp->num_patches, free_modes);
  return FEA_SUCCESS;
}
