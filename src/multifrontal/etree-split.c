/* How the patch tree splits a box of elements: per direction, the supports
 * of the functions and the C0 separators of the knot vector, and the rule
 * that picks the cuts of a box (the rule itself is explained at the top of
 * etree.c). */
#include <stdlib.h>

#include "internal/error.h"
#include "etree-split.h"

void fea_etree_dir_free(fea_etree_dir *d) {
  free(d->sup_lo);
  free(d->sup_hi);
  free(d->fn_lo);
  free(d->fn_hi);
  free(d->c0);
}

fea_status fea_etree_dir_init(const fea_context *ctx, const fea_knots *kn, int k,
                              fea_etree_dir *d) {
  d->p = kn->p;
  d->ne = kn->nelem;
  d->nf = fea_knots_num_functions(kn);
  d->sup_lo = malloc((size_t)d->nf * sizeof *d->sup_lo);
  d->sup_hi = malloc((size_t)d->nf * sizeof *d->sup_hi);
  d->fn_lo = malloc((size_t)d->ne * sizeof *d->fn_lo);
  d->fn_hi = malloc((size_t)d->ne * sizeof *d->fn_hi);
  d->c0 = calloc((size_t)d->ne + 1, 1);
  FEA_CHECK(d->sup_lo && d->sup_hi && d->fn_lo && d->fn_hi && d->c0, ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the knot spans of direction %d (%lld elements)", k, (long long)d->ne);
  for (fea_index i = 0; i < d->nf; i++) d->sup_lo[i] = d->ne, d->sup_hi[i] = -1;
  for (fea_index e = 0; e < d->ne; e++) {
    fea_index sp = kn->span[e];
    d->fn_lo[e] = sp - d->p;
    d->fn_hi[e] = sp;
    for (fea_index i = sp - d->p; i <= sp; i++) {
      if (e < d->sup_lo[i]) d->sup_lo[i] = e;
      if (e > d->sup_hi[i]) d->sup_hi[i] = e;
    }
    /* span[e] is the last index of its knot value and span[e-1] the last of
     * the previous one, so their difference is the multiplicity between them. */
    if (e > 0 && d->p >= 2 && kn->span[e] - kn->span[e - 1] >= d->p) d->c0[e] = 1;
  }
  return FEA_SUCCESS;
}

/* Where direction k of [lo, hi) splits, or -1 when it does not; *sep says
 * whether the split is at a C0 separator. */
static fea_index split_at(const fea_etree_dir *d, fea_index lo, fea_index hi, int *sep) {
  fea_index best = -1, twice_mid = lo + hi;
  for (fea_index b = lo + 1; b < hi; b++) {
    if (!d->c0[b]) continue;
    fea_index dist = 2 * b > twice_mid ? 2 * b - twice_mid : twice_mid - 2 * b;
    fea_index bdist = 2 * best > twice_mid ? 2 * best - twice_mid : twice_mid - 2 * best;
    if (best < 0 || dist < bdist) best = b;
  }
  *sep = best >= 0;
  if (best >= 0) return best;
  if (hi - lo >= 2 * ((fea_index)d->p + 1)) return lo + (hi - lo) / 2;
  return -1;
}

int fea_etree_choose_cuts(const fea_etree_dir dir[3], int dim, fea_multifrontal_merge merge,
                          const fea_index lo[3], const fea_index hi[3], fea_index cut[3]) {
  int nsplit = 0;
  cut[0] = cut[1] = cut[2] = -1;
  if (merge == FEA_MULTIFRONTAL_MERGE_TENSOR) {
    for (int k = 0; k < dim; k++) {
      int sep;
      cut[k] = split_at(&dir[k], lo[k], hi[k], &sep);
      nsplit += cut[k] >= 0;
    }
    return nsplit;
  }
  int best = -1, best_sep = 0;
  fea_index best_cut = -1;
  for (int k = 0; k < dim; k++) {
    int sep;
    fea_index c = split_at(&dir[k], lo[k], hi[k], &sep);
    if (c < 0) continue;
    int better = best < 0 || (sep && !best_sep) ||
                 (sep == best_sep && hi[k] - lo[k] > hi[best] - lo[best]);
    if (better) best = k, best_sep = sep, best_cut = c;
  }
  if (best < 0) return 0;
  cut[best] = best_cut;
  return 1;
}
