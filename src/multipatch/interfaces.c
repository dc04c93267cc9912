/* The interfaces of a multipatch domain, found from the geometry.
 *
 * Two sides are joined when their corners coincide one to one (within the
 * domain's tolerance); the corner correspondence fixes the orientation
 * (which tangential direction runs against which, and in 3D whether they
 * swap), and then every DoF anchor of one side must coincide with the
 * anchor the orientation names on the other. Coinciding corners with
 * differing DoFs mean non-conforming patches (other knots or another
 * degree along the side): refused, naming both sides, since C0 coupling by
 * shared DoFs would be wrong there. A side whose corners coincide among
 * themselves (a collapsed side) joins nothing, and a side that two others
 * match means patches overlap along it: refused, naming all three (patches
 * that coincide as a whole are refused before, by overlap.c). Sides of two
 * patches that miss each other by little more than the tolerance are left
 * as boundary and logged at FEA_LOG_WARN (warn_near_matches). The cost is
 * one anchor evaluation per side DoF and a bounding-box test per pair of
 * sides. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "multipatch.h"

static const char *const side_name[6] = {"west", "east", "south", "north", "front", "back"};

typedef struct side_anchors {
  fea_side_grid g;
  double *x; /* m0 m1 x dim */
  double lo[3], hi[3];
  int collapsed;
  int linked; /* the side it meets (patch * 6 + side) + 1; 0: none yet */
} side_anchors;

static const double *corner(const side_anchors *a, int dim, int c) {
  const fea_index i = (c & 1) ? a->g.m[0] - 1 : 0, j = (c & 2) ? a->g.m[1] - 1 : 0;
  return a->x + (i + j * a->g.m[0]) * dim;
}

static double dist(const double *a, const double *b, int dim) {
  double s = 0;
  for (int k = 0; k < dim; k++) s += (a[k] - b[k]) * (a[k] - b[k]);
  return sqrt(s);
}

static fea_status side_anchors_of(const fea_space *s, int side, side_anchors *a) {
  fea_side_grid_of(s, side, &a->g);
  const fea_index m = a->g.m[0] * a->g.m[1];
  const int dim = s->dim;
  fea_index *dofs = malloc((size_t)m * sizeof *dofs);
  a->x = malloc((size_t)(m * dim) * sizeof *a->x);
  FEA_CHECK(dofs && a->x, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the anchors of %lld DoFs",
            (long long)m);
  for (fea_index j = 0; j < a->g.m[1]; j++)
    for (fea_index i = 0; i < a->g.m[0]; i++)
      dofs[i + j * a->g.m[0]] = fea_side_grid_dof(&a->g, i, j);
  fea_status st = fea_multipatch_dof_anchors(s, m, dofs, a->x);
  free(dofs);
  FEA_CALL(st);
  for (int k = 0; k < dim; k++) a->lo[k] = INFINITY, a->hi[k] = -INFINITY;
  for (fea_index q = 0; q < m; q++)
    for (int k = 0; k < dim; k++) {
      a->lo[k] = fmin(a->lo[k], a->x[q * dim + k]);
      a->hi[k] = fmax(a->hi[k], a->x[q * dim + k]);
    }
  return FEA_SUCCESS;
}

static int boxes_meet(const side_anchors *a, const side_anchors *b, int dim, double tol) {
  for (int k = 0; k < dim; k++)
    if (a->lo[k] > b->hi[k] + tol || b->lo[k] > a->hi[k] + tol) return 0;
  return 1;
}

/* The corner of b at each corner of a, or 0 when some corner has none. */
static int match_corners(const side_anchors *a, const side_anchors *b, int dim, double tol,
                         int to[4]) {
  const int nc = dim == 3 ? 4 : 2;
  for (int c = 0; c < nc; c++) {
    to[c] = -1;
    for (int e = 0; e < nc && to[c] < 0; e++)
      if (dist(corner(a, dim, c), corner(b, dim, e), dim) <= tol) to[c] = e;
    if (to[c] < 0) return 0;
  }
  return 1;
}

/* The orientation from the corner map: a's tangential direction t runs
 * along b's direction axis[t], reversed when flip[t]. 0 when the map is not
 * a symmetry of the square (a twisted pair of corners). */
static int orientation(const int to[4], int dim, int axis[2], int flip[2]) {
  axis[0] = 0, axis[1] = 1, flip[1] = 0;
  if (dim == 2) {
    flip[0] = to[0] == 1;
    return to[1] == (to[0] ^ 1);
  }
  const int o = to[0];
  for (int t = 0; t < 2; t++) {
    const int d = o ^ to[1 << t];
    if (d != 1 && d != 2) return 0;
    axis[t] = d == 1 ? 0 : 1;
    flip[t] = (o >> axis[t]) & 1;
  }
  return axis[0] != axis[1] && to[3] == (to[1] ^ to[2] ^ o);
}

static fea_status check_dofs(const fea_multipatch *mp, int pa, int sa, const side_anchors *a,
                             int pb, int sb, const side_anchors *b, const int axis[2],
                             const int flip[2]) {
  fea_context *ctx = mp->ctx;
  const int dim = mp->dim;
  FEA_CHECK(a->g.m[0] == b->g.m[axis[0]] && a->g.m[1] == b->g.m[axis[1]], ctx, FEA_ERR_INVALID_ARG,
            "patch %d side %s and patch %d side %s have the same corners but %lld x %lld against "
            "%lld x %lld DoFs: the patches are not conforming there (other knots or degree)",
            pa, side_name[sa], pb, side_name[sb], (long long)a->g.m[0], (long long)a->g.m[1],
            (long long)b->g.m[axis[0]], (long long)b->g.m[axis[1]]);
  for (fea_index j = 0; j < a->g.m[1]; j++)
    for (fea_index i = 0; i < a->g.m[0]; i++) {
      fea_index ib[2] = {0, 0};
      ib[axis[0]] = flip[0] ? a->g.m[0] - 1 - i : i;
      ib[axis[1]] = flip[1] ? a->g.m[1] - 1 - j : j;
      const double *xa = a->x + (i + j * a->g.m[0]) * dim;
      const double *xb = b->x + (ib[0] + ib[1] * b->g.m[0]) * dim;
      FEA_CHECK(dist(xa, xb, dim) <= mp->tolerance, ctx, FEA_ERR_INVALID_ARG,
                "patch %d side %s and patch %d side %s have the same corners, but DoF (%lld, "
                "%lld) of the first sits at (%g, %g, %g) and its partner at (%g, %g, %g), %g "
                "apart (tolerance %g): the patches are not conforming there (other knots, or "
                "another parametrization)",
                pa, side_name[sa], pb, side_name[sb], (long long)i, (long long)j, xa[0], xa[1],
                dim == 3 ? xa[2] : 0.0, xb[0], xb[1], dim == 3 ? xb[2] : 0.0, dist(xa, xb, dim),
                mp->tolerance);
    }
  return FEA_SUCCESS;
}

static fea_status link_sides(fea_multipatch *mp, side_anchors *sides) {
  fea_context *ctx = mp->ctx;
  const int dim = mp->dim, ns = 2 * dim, total = mp->num_patches * ns;
  for (int A = 0; A < total; A++) {
    if (sides[A].collapsed) continue;
    for (int B = A + 1; B < total; B++) {
      side_anchors *a = &sides[A], *b = &sides[B];
      int to[4], axis[2], flip[2];
      if (b->collapsed || !boxes_meet(a, b, dim, mp->tolerance) ||
          !match_corners(a, b, dim, mp->tolerance, to))
        continue;
      const int pa = A / ns, sa = A % ns, pb = B / ns, sb = B % ns;
      FEA_CHECK(orientation(to, dim, axis, flip), ctx, FEA_ERR_INVALID_ARG,
                "patch %d side %s and patch %d side %s have the same corners in an order no "
                "rotation or reflection of the side gives",
                pa, side_name[sa], pb, side_name[sb]);
      /* A side matched twice: the side it already meets and the side now
       * matching it both lie along it, so their patches overlap there. */
      if (a->linked || b->linked) {
        const side_anchors *taken = a->linked ? a : b;
        const int free_p = a->linked ? pb : pa, free_s = a->linked ? sb : sa;
        const int tp = a->linked ? pa : pb, ts = a->linked ? sa : sb;
        const int op = (taken->linked - 1) / 6, os = (taken->linked - 1) % 6;
        return FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                         "patch %d side %s would meet patch %d side %s, which already meets patch "
                         "%d side %s: a side meets at most one other, so patches %d and %d "
                         "overlap along it (or three patches share it)",
                         free_p, side_name[free_s], tp, side_name[ts], op, side_name[os], free_p,
                         op);
      }
      FEA_CALL(check_dofs(mp, pa, sa, a, pb, sb, b, axis, flip));
      fea_multipatch_link *l = &mp->links[mp->num_links++];
      *l = (fea_multipatch_link){.patch = {pa, pb},
                                 .side = {sa, sb},
                                 .flip = {flip[0], flip[1]},
                                 .swap = axis[0] == 1,
                                 .num_dofs = a->g.m[0] * a->g.m[1]};
      a->linked = pb * 6 + sb + 1;
      b->linked = pa * 6 + sa + 1;
    }
  }
  return FEA_SUCCESS;
}

/* The shortest edge of patch p: the smallest distance between neighbouring
 * corners of its sides that are not collapsed (the domain's diameter when
 * every side is). */
static double shortest_edge(const side_anchors *sides, int p, int dim, double diam) {
  const int ns = 2 * dim, nc = dim == 3 ? 4 : 2;
  double h = diam;
  for (int s = 0; s < ns; s++) {
    const side_anchors *a = &sides[p * ns + s];
    if (a->collapsed) continue;
    for (int c = 0; c < nc; c++)
      for (int t = 1; t < nc; t <<= 1)
        if (!(c & t)) h = fmin(h, dist(corner(a, dim, c), corner(a, dim, c | t), dim));
  }
  return h;
}

/* Sides of two patches left unjoined although they nearly coincide: their
 * corners, and then every DoF anchor with its partner, lie within
 * NEAR_MATCH of the smaller patch's shortest edge but not within the
 * tolerance. The user most likely meant an interface (a geometry written
 * with few digits, a tolerance too tight for it), and the problem on two
 * patches with a slit between them solves without complaint, so each such
 * pair is logged at FEA_LOG_WARN. Relative to the patches' edges rather
 * than the domain's diameter, so that thin patches stacked close together
 * (a boundary layer) are not taken for near matches. Only unlinked side
 * pairs whose boxes meet within NEAR_MATCH of the diameter go further. */
#define NEAR_MATCH 1e-3

static void warn_near_matches(const fea_multipatch *mp, const side_anchors *sides, double diam) {
  const int dim = mp->dim, ns = 2 * dim, total = mp->num_patches * ns, nc = dim == 3 ? 4 : 2;
  for (int A = 0; A < total; A++) {
    const side_anchors *a = &sides[A];
    if (a->collapsed || a->linked) continue;
    for (int B = A + 1; B < total; B++) {
      const side_anchors *b = &sides[B];
      const int pa = A / ns, sa = A % ns, pb = B / ns, sb = B % ns;
      if (pa == pb || b->collapsed || b->linked || !boxes_meet(a, b, dim, NEAR_MATCH * diam))
        continue;
      const double near = NEAR_MATCH * fmin(shortest_edge(sides, pa, dim, diam),
                                            shortest_edge(sides, pb, dim, diam));
      int to[4], axis[2], flip[2];
      if (near <= mp->tolerance || !boxes_meet(a, b, dim, near) ||
          !match_corners(a, b, dim, near, to) || !orientation(to, dim, axis, flip) ||
          a->g.m[0] != b->g.m[axis[0]] || a->g.m[1] != b->g.m[axis[1]])
        continue;
      double far = 0;
      for (int c = 0; c < nc; c++)
        far = fmax(far, dist(corner(a, dim, c), corner(b, dim, to[c]), dim));
      for (fea_index j = 0; j < a->g.m[1]; j++)
        for (fea_index i = 0; i < a->g.m[0]; i++) {
          fea_index ib[2] = {0, 0};
          ib[axis[0]] = flip[0] ? a->g.m[0] - 1 - i : i;
          ib[axis[1]] = flip[1] ? a->g.m[1] - 1 - j : j;
          far = fmax(far, dist(a->x + (i + j * a->g.m[0]) * dim,
                               b->x + (ib[0] + ib[1] * b->g.m[0]) * dim, dim));
        }
      if (far > near) continue;
      fea_log(mp->ctx, FEA_LOG_WARN,
              "patch %d side %s and patch %d side %s nearly coincide, %g apart at most, beyond "
              "the tolerance %g (%g of the domain's diameter %g): they are treated as boundary "
              "sides, not as an interface; if the patches should meet there, raise "
              "fea_multipatch_desc.tolerance above %g or fix the geometry",
              pa, side_name[sa], pb, side_name[sb], far, mp->tolerance,
              diam > 0 ? mp->tolerance / diam : 0.0, diam, diam > 0 ? far / diam : far);
    }
  }
}

fea_status fea_multipatch_find_interfaces(fea_multipatch *mp) {
  fea_context *ctx = mp->ctx;
  const int dim = mp->dim, ns = 2 * dim, total = mp->num_patches * ns;
  side_anchors *sides = calloc((size_t)total, sizeof *sides);
  mp->links = calloc((size_t)total / 2 + 1, sizeof *mp->links);
  mp->boundary_sides = calloc((size_t)total, sizeof *mp->boundary_sides);
  FEA_CHECK(sides && mp->links && mp->boundary_sides, ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the sides of %d patches", mp->num_patches);
  fea_status st = FEA_SUCCESS;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int A = 0; A < total && st == FEA_SUCCESS; A++) {
    st = side_anchors_of(mp->patches[A / ns], A % ns, &sides[A]);
    for (int k = 0; k < dim && st == FEA_SUCCESS; k++) {
      lo[k] = fmin(lo[k], sides[A].lo[k]);
      hi[k] = fmax(hi[k], sides[A].hi[k]);
    }
  }
  if (st == FEA_SUCCESS) {
    double diam = 0;
    for (int k = 0; k < dim; k++) diam += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    diam = sqrt(diam);
    mp->tolerance *= diam;
    for (int A = 0; A < total; A++) {
      const int nc = dim == 3 ? 4 : 2;
      for (int c = 0; c < nc; c++)
        for (int e = c + 1; e < nc; e++)
          if (dist(corner(&sides[A], dim, c), corner(&sides[A], dim, e), dim) <= mp->tolerance)
            sides[A].collapsed = 1;
    }
    st = fea_multipatch_check_overlap(mp);
    if (st == FEA_SUCCESS) st = link_sides(mp, sides);
    if (st == FEA_SUCCESS) warn_near_matches(mp, sides, diam);
  }
  if (st == FEA_SUCCESS)
    for (int A = 0; A < total; A++)
      if (!sides[A].linked) mp->boundary_sides[mp->num_boundary_sides++] = A / ns * 6 + A % ns;
  for (int A = 0; A < total; A++) free(sides[A].x);
  free(sides);
  return st;
}

int fea_multipatch_side_is_interface(const fea_multipatch *mp, int p, int s) {
  for (int i = 0; i < mp->num_links; i++)
    for (int k = 0; k < 2; k++)
      if (mp->links[i].patch[k] == p && mp->links[i].side[k] == s) return 1;
  return 0;
}
