/* The M1 solver object, shared by its setup (schur-m1.c) and solve
 * (schur-m1-solve.c) only. */
#ifndef FEA_INTERNAL_SCHUR_M1_IMPL_H
#define FEA_INTERNAL_SCHUR_M1_IMPL_H

#include <stddef.h>

#include "schur-m1.h"

struct fea_m1 {
  fea_context *ctx; /* holds a reference */
  fea_precision prec;
  size_t esize;     /* bytes per working-precision entry */
  fea_index num, nc, ne, ni, cells, blk;
  fea_index *perm;  /* C/E/I position -> lexicographic node */
  /* Working precision, column-major: */
  void *b;          /* nc x ne: B = A_CE */
  void *cinv;       /* blk x blk: C_1^-1, one block for every macro cell */
  void *pinv;       /* ne x ne: Pi^-1 */
  fea_matrix *d;    /* ne x ni: D = A_EI (FP64 values, the pattern) */
  void *dval;       /* d's values in the working precision */
};

#endif
