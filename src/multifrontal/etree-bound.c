/* A lower bound of the multifrontal solver's memory, from the knot vectors
 * alone, without the O(DoF) arrays the tree itself needs.
 *
 * It walks the boxes fea_etree_build would make (the same cut rule,
 * etree-split.c), but counts only the DoFs interior in every direction
 * (index 1 .. n_k - 2): those are free in every problem, since Dirichlet
 * DoFs are boundary DoFs. Per box B, with inside(B) the interior DoFs whose
 * support lies in B and touch(B) those whose support meets it (products
 * over directions of counts found by binary search, supports being
 * non-decreasing in the function index):
 *   q(B) = inside(B) - sum over children inside(C),  r(B) = touch(B) - inside(B),
 * exactly the tree's q and r restricted to those DoFs (a DoF is eliminated
 * at the lowest box holding its support; the r are the DoFs touching the box
 * not eliminated inside it). Dropping DoFs only removes members from every
 * q and r, so sum (q + r) q is at most the tree's factor_entries, whatever
 * the problem's free DoFs and keep_boundary are.
 *
 * Memory: the per-direction supports and the recursion (depth O(log n)).
 * Time: one visit per node, boxes visited parent first, so a walk asked to
 * stop once the sum passes a budget returns after the few top nodes when the
 * problem is far too large. */
#include "internal/error.h"
#include "etree-split.h"
#include "internal/etree.h"
#include "base/sort.h"

typedef struct bound_walk {
  const fea_etree_dir *dir;
  int dim;
  fea_multifrontal_merge merge;
  double stop;
  fea_etree_bound *out;
} bound_walk;

/* Interior functions of direction d in [first, last]: the count. */
static double interior_count(const fea_etree_dir *d, fea_index first, fea_index last) {
  if (first < 1) first = 1;
  if (last > d->nf - 2) last = d->nf - 2;
  return last >= first ? (double)(last - first + 1) : 0.0;
}

/* Interior functions of direction d supported inside elements [lo, hi). */
static double inside_1d(const fea_etree_dir *d, fea_index lo, fea_index hi) {
  fea_index first = fea_index_lower_bound(d->sup_lo, d->nf, lo);    /* sup_lo >= lo */
  fea_index last = fea_index_lower_bound(d->sup_hi, d->nf, hi) - 1; /* sup_hi <= hi - 1 */
  return interior_count(d, first, last);
}

/* Interior functions of direction d non-zero somewhere in [lo, hi). */
static double touch_1d(const fea_etree_dir *d, fea_index lo, fea_index hi) {
  fea_index first = fea_index_lower_bound(d->sup_hi, d->nf, lo);    /* sup_hi >= lo */
  fea_index last = fea_index_lower_bound(d->sup_lo, d->nf, hi) - 1; /* sup_lo <= hi - 1 */
  return interior_count(d, first, last);
}

static double inside(const bound_walk *w, const fea_index lo[3], const fea_index hi[3]) {
  double c = 1.0;
  for (int k = 0; k < w->dim; k++) c *= inside_1d(&w->dir[k], lo[k], hi[k]);
  return c;
}

static void visit(bound_walk *w, const fea_index lo[3], const fea_index hi[3]) {
  fea_etree_bound *o = w->out;
  if (!o->complete) return;
  fea_index cut[3];
  const int nsplit = fea_etree_choose_cuts(w->dir, w->dim, w->merge, lo, hi, cut);
  const int nch = nsplit ? 1 << nsplit : 0;
  fea_index clo[8][3], chi[8][3];
  const double in = inside(w, lo, hi);
  double below = 0.0, touch = 1.0;
  for (int c = 0; c < nch; c++) {
    int bit = 0;
    for (int k = 0; k < 3; k++) {
      clo[c][k] = lo[k];
      chi[c][k] = hi[k];
      if (k < w->dim && cut[k] >= 0) {
        if (c >> bit & 1)
          clo[c][k] = cut[k];
        else
          chi[c][k] = cut[k];
        bit++;
      }
    }
    below += inside(w, clo[c], chi[c]);
  }
  for (int k = 0; k < w->dim; k++) touch *= touch_1d(&w->dir[k], lo[k], hi[k]);
  const double q = in - below, r = touch - in;
  o->factor_entries += (q + r) * q;
  o->front_entries += q + r;
  o->num_nodes += 1.0;
  if (w->stop > 0 && o->factor_entries > w->stop) {
    o->complete = 0;
    return;
  }
  for (int c = 0; c < nch; c++) visit(w, clo[c], chi[c]);
}

fea_status fea_etree_bound_knots(const fea_context *ctx, int dim, const fea_knots knots[3],
                                 fea_multifrontal_merge merge, double stop, fea_etree_bound *out) {
  fea_etree_dir dir[3] = {{0}};
  fea_status st = FEA_SUCCESS;
  for (int k = 0; k < dim && st == FEA_SUCCESS; k++)
    st = fea_etree_dir_init(ctx, &knots[k], k, &dir[k]);
  if (st == FEA_SUCCESS) {
    *out = (fea_etree_bound){.complete = 1, .interior_dofs = 1.0};
    for (int k = 0; k < dim; k++) out->interior_dofs *= interior_count(&dir[k], 0, dir[k].nf);
    bound_walk w = {.dir = dir,
                    .dim = dim,
                    .merge = merge == FEA_MULTIFRONTAL_MERGE_AUTO ? fea_etree_auto_merge(dim)
                                                                  : merge,
                    .stop = stop,
                    .out = out};
    fea_index lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    for (int k = 0; k < dim; k++) hi[k] = knots[k].nelem;
    visit(&w, lo, hi);
  }
  for (int k = 0; k < dim; k++) fea_etree_dir_free(&dir[k]);
  return st;
}

fea_status fea_etree_bound_eval(const fea_space *s, fea_multifrontal_merge merge, double stop,
                                fea_etree_bound *out) {
  FEA_CHECK(s->kind == FEA_SPACE_BSPLINE, s->ctx, FEA_ERR_UNSUPPORTED,
            "the multifrontal tree needs a B-spline space, not a %s space",
            s->kind == FEA_SPACE_LAGRANGE ? "Lagrange" : "non-B-spline");
  const fea_bspline_space *b = s->impl;
  return fea_etree_bound_knots(s->ctx, s->dim, b->knots, merge, stop, out);
}
