/* The M1 solver object, shared by its setup (m1-setup.c) and solve
 * (m1-solve.c) only. */
#ifndef FEA_INTERNAL_SCHUR_M1_IMPL_H
#define FEA_INTERNAL_SCHUR_M1_IMPL_H

#include <stddef.h>

#include "schur-m1.h"

struct fea_ph_m1 {
  fea_context *ctx;    /* holds a reference */
  fea_precision prec;  /* of the dense matrices B, C_1^-1, Pi^-1 */
  fea_precision vprec; /* of the vector panels and D: prec, or F32 when prec is 16-bit */
  size_t esize;        /* bytes per matrix entry (prec) */
  size_t vsize;        /* bytes per panel entry (vprec) */
  int scale_rhs;       /* 16-bit: scale each GEMM right-hand column to max-abs ~1 */
  fea_index num, nc, ne, ni, cells, blk;
  fea_index *perm; /* C/E/I position -> lexicographic node */
  /* Groups of macro cells sharing one block (Ruda et al. 2022, eq. (25)): the
   * I cells of group g are gfirst[g] .. gfirst[g + 1] - 1, cell_group[c] is
   * cell c's group; one group on the unit square. */
  int groups;
  fea_index *gfirst;     /* groups + 1 */
  fea_index *cell_group; /* cells */
  /* Working precision (prec), column-major: */
  void *b;       /* nc x ne: B = A_CE */
  void *cinv;    /* groups blocks of blk x blk: C_g^-1, one per group of macro cells */
  void *pinv;    /* ne x ne: Pi^-1 */
  fea_matrix *d; /* ne x ni: D = A_EI (FP64 values, the pattern) */
  void *dval;    /* d's values in vprec */
};

#endif
