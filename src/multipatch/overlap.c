/* Patches that cover the same region: two copies of one patch (or one
 * space listed twice) would match every side of one with a side of the
 * other, so the domain would have no boundary sides, its default Dirichlet
 * condition would vanish and the problem would be solved, with success, on
 * a domain without boundary. Such pairs are refused before any interface
 * is sought.
 *
 * Two patches coincide when the images of a few parameter points that no
 * reparametrization of the unit square or cube moves off their set agree
 * as sets: the 2^d corners, the 2^d points at 1/4 and 3/4 in each
 * direction, and the centre. A reflection or a permutation of the
 * directions (every orientation an interface may have) maps each set onto
 * itself, so copies parametrized differently are caught too, while
 * patches that only share their corners (the halves of a ring) differ at
 * the centre. Partial overlaps are not sought here (that needs the inverse
 * of the geometry maps); a side matched twice, their usual sign, is
 * refused where the interfaces are linked. Cost: 2^(d+1) + 1 map
 * evaluations per patch and (2^(d+1))^2 distances per pair. */
#include <math.h>
#include <stdlib.h>

#include "internal/error.h"
#include "multipatch.h"

#define SIG_POINTS (2 * 8 + 1) /* corners, quarter points, centre (3D) */

typedef struct signature {
  double x[SIG_POINTS][3];
} signature;

static double dist(const double *a, const double *b, int dim) {
  double s = 0;
  for (int k = 0; k < dim; k++) s += (a[k] - b[k]) * (a[k] - b[k]);
  return sqrt(s);
}

static void signature_of(const fea_space *s, signature *sig) {
  const int dim = s->dim, nc = 1 << dim;
  for (int c = 0; c < nc; c++) {
    double u[3] = {0, 0, 0}, v[3] = {0, 0, 0};
    for (int k = 0; k < dim; k++) {
      u[k] = (c >> k) & 1 ? 1.0 : 0.0;
      v[k] = (c >> k) & 1 ? 0.75 : 0.25;
    }
    fea_multipatch_patch_point(s, u, sig->x[c]);
    fea_multipatch_patch_point(s, v, sig->x[nc + c]);
  }
  const double centre[3] = {0.5, 0.5, 0.5};
  fea_multipatch_patch_point(s, centre, sig->x[2 * nc]);
}

/* Whether every point of a's set [from, from + count) has a partner in
 * b's, within tol. */
static int set_within(const signature *a, const signature *b, int from, int count, int dim,
                      double tol) {
  for (int i = from; i < from + count; i++) {
    int found = 0;
    for (int j = from; j < from + count && !found; j++) found = dist(a->x[i], b->x[j], dim) <= tol;
    if (!found) return 0;
  }
  return 1;
}

static int coincide(const signature *a, const signature *b, int dim, double tol) {
  const int nc = 1 << dim;
  return dist(a->x[2 * nc], b->x[2 * nc], dim) <= tol && set_within(a, b, 0, nc, dim, tol) &&
         set_within(b, a, 0, nc, dim, tol) && set_within(a, b, nc, nc, dim, tol) &&
         set_within(b, a, nc, nc, dim, tol);
}

fea_status fea_multipatch_check_overlap(const fea_multipatch *mp) {
  fea_context *ctx = mp->ctx;
  const int n = mp->num_patches;
  if (n < 2) return FEA_SUCCESS;
  signature *sig = malloc((size_t)n * sizeof *sig);
  FEA_CHECK(sig, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the outlines of %d patches", n);
  for (int p = 0; p < n; p++) signature_of(mp->patches[p], &sig[p]);
  int pa = -1, pb = -1;
  for (int p = 0; p < n && pa < 0; p++)
    for (int q = p + 1; q < n && pa < 0; q++)
      if (coincide(&sig[p], &sig[q], mp->dim, mp->tolerance)) pa = p, pb = q;
  free(sig);
  FEA_CHECK(pa < 0, ctx, FEA_ERR_INVALID_ARG,
            "patches %d and %d cover the same region (their corners, centres and interior points "
            "coincide within %g): each part of the domain must be one patch's only, else every "
            "side of one would meet the other and the domain would have no boundary",
            pa, pb, mp->tolerance);
  return FEA_SUCCESS;
}
