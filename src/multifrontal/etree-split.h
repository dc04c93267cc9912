/* How the patch tree splits a box of elements (src/multifrontal/etree-split.c):
 * shared by the tree itself (etree.c) and its memory bound (etree-bound.c),
 * which must walk exactly the same boxes. */
#ifndef FEA_MULTIFRONTAL_ETREE_SPLIT_H
#define FEA_MULTIFRONTAL_ETREE_SPLIT_H

#include <feaccel/solver.h>

#include "disc/space.h"

/* One direction of a B-spline space, as the tree needs it. The supports are
 * non-decreasing in the function index (sup_lo, sup_hi), which the bound's
 * binary searches rely on. */
typedef struct fea_etree_dir {
  int p;
  fea_index ne, nf;           /* elements, functions */
  fea_index *sup_lo, *sup_hi; /* per function: first and last element of its support */
  fea_index *fn_lo, *fn_hi;   /* per element: first and last function non-zero on it */
  unsigned char *c0;          /* per element boundary b in 1..ne-1: a C0 separator */
} fea_etree_dir;

/* Direction k of a B-spline space, from its knot vector kn; on failure,
 * whatever was allocated is left for fea_etree_dir_free (d must start zeroed). */
fea_status fea_etree_dir_init(const fea_context *ctx, const fea_knots *kn, int k, fea_etree_dir *d);
void fea_etree_dir_free(fea_etree_dir *d);

/* The cuts of box [lo, hi) under merge (TENSOR or PAIRWISE, not AUTO):
 * cut[k] is the element boundary where direction k splits, or -1. Returns
 * the number of directions split (0: the box is a leaf). */
int fea_etree_choose_cuts(const fea_etree_dir dir[3], int dim, fea_multifrontal_merge merge,
                          const fea_index lo[3], const fea_index hi[3], fea_index cut[3]);

#endif
