/* Method M1 of the prehandled Schur-complement solver (spec
 * shared/specs/prehandling-schur.md §4.3, (13)-(17)) for the prehandled
 * system A x = b, A = L^-1 S^T A_h S L^-T, on the unit square.
 *
 * With the unknowns split into C, E, I (prehandle.h), A_CC = I and A_CI = 0,
 * and with B = A_CE, E = A_EE, D = A_EI, C = A_II = diag(C_1, ..., C_1):
 *
 *   Lambda = E - D C^-1 D^T,   Pi = Lambda - B^T B,
 *   x_E = Pi^-1 (b_E - B^T b_C - D C^-1 b_I),
 *   x_C = b_C - B x_E,
 *   x_I = C^-1 (b_I - D^T x_E).
 *
 * Setup runs in FP64 on a host context (dense ops only, no hand-written
 * factorization): the explicit inverses C_1^-1 (one block for all macro
 * cells) and Pi^-1 come from potrf + potrs against the identity; then B,
 * C_1^-1, Pi^-1 and D are converted to the working precision (FP64 or FP32)
 * that the solve computes in. The C^-1 applications are one GEMM each: the
 * I part of a column is, cell by cell, exactly the block x (cells * k) matrix
 * of the spec's reshaped V (§4.6), so k right-hand sides make one GEMM with
 * cells * k columns. */
#ifndef FEA_INTERNAL_SCHUR_M1_H
#define FEA_INTERNAL_SCHUR_M1_H

#include "matrix.h"
#include "prehandle.h"

typedef struct fea_m1 fea_m1;

/* Sizes and storage of a set-up solver, for tests and reports. */
typedef struct fea_m1_info {
  fea_index nc, ne, ni, num_cells, block;
  fea_precision prec;
  size_t dense_bytes; /* B, C_1^-1 and Pi^-1 in the working precision */
} fea_m1_info;

/* Set up M1 from At = S^T A_h S (CSR, lexicographic interior nodes, as
 * fea_ph_transform_matrix gives it), its partial Cholesky f and the split s of
 * grid g. prec: FEA_F64 or FEA_F32. ctx must keep host memory. Fails when
 * A_CI is not zero or the macro-cell blocks differ (a grid the method does
 * not cover), or when C_1 or Pi is not positive definite. The solver keeps no
 * reference to At, f or s. */
fea_status fea_m1_create(fea_context *ctx, const fea_ph_grid *g, const fea_ph_split *s,
                         const fea_matrix *At, const fea_ph_factor *f, fea_precision prec,
                         fea_m1 **out);
void fea_m1_destroy(fea_m1 **m);
void fea_m1_get_info(const fea_m1 *m, fea_m1_info *info);

/* x := A^-1 b for k right-hand sides of the prehandled system: b and x are
 * num x k, column-major with leading dimension num, lexicographic node order
 * (the order fea_ph_forward works in). x may equal b. The solve allocates its
 * working-precision workspace per call (O(num k)). */
fea_status fea_m1_solve(fea_m1 *m, fea_index k, const double *b, double *x);

/* The nodal solve x_h = S L^-T A^-1 L^-1 S^T b_h, in place on k nodal loads
 * (num x k, leading dimension num); f is the factor the solver was set up
 * with. */
fea_status fea_m1_solve_nodal(fea_m1 *m, fea_ph_factor *f, fea_index k, double *bh);

#endif
