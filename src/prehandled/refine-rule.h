/* The stopping rule of the prehandled solver's mixed-precision iterative
 * refinement, shared by the host (m1-solve.c) and the device backends
 * (src/internal/prehandled-device.h) so that both stop on the same step.
 *
 * A column is done when its relative residual ||r|| / ||b|| reaches the
 * caller's refine_rtol, or when ||r|| reaches the rounding floor of the FP64
 * residual itself: r = b - A x formed in FP64 carries errors of about
 * eps (|A| |x| + |b|) per entry whatever x is, so below
 *   ||r||_2 <= FEA_PH_REFINE_FLOOR_FACTOR * eps * (||A||_inf ||x||_2 + ||b||_2)
 * (a normwise backward error of a few eps, LAPACK's dsgesv rule in the
 * 2-norm) further corrections only move x by rounding. Without the floor a
 * tolerance tighter than eps * kappa(A) runs every correction to the limit:
 * measured on an H200 at h = 1/512 (Q1, 256 right-hand sides), refine_rtol
 * 1e-12 against a floor of 2.9e-12 took 30 corrections (0.70 s) instead of
 * 5 (0.28 s) and reported FEA_WARN_NOT_CONVERGED for a solution as accurate
 * as the FP64 direct solve's. */
#ifndef FEA_PREHANDLED_REFINE_RULE_H
#define FEA_PREHANDLED_REFINE_RULE_H

#include <float.h>
#include <math.h>

#include "linalg/matrix.h"

/* 16: the stencil's nine products and sums per row, with room to spare. */
#define FEA_PH_REFINE_FLOOR_FACTOR 16.0

/* Whether a correction is still worth it: the residual at least halved in
 * the last step. Two steps that do not halve it mean the working precision
 * cannot reduce it further (stagnation), and the refinement stops. */
#define FEA_PH_REFINE_MIN_REDUCTION 0.5

/* ||A||_inf of a host CSR matrix: the largest absolute row sum. */
static inline double fea_ph_csr_norm_inf(const fea_matrix *A) {
  double best = 0;
  for (fea_index i = 0; i < A->rows; i++) {
    double s = 0;
    for (fea_index j = A->row_ptr[i]; j < A->row_ptr[i + 1]; j++) s += fabs(A->values[j]);
    best = fmax(best, s);
  }
  return best;
}

/* Whether one column is done: rnorm, xnorm, bnorm are the 2-norms of its
 * residual, iterate and right-hand side. */
static inline int fea_ph_refine_column_done(double rnorm, double xnorm, double bnorm, double anorm,
                                            double rtol) {
  if (!(bnorm > 0)) return 1;
  if (rnorm <= rtol * bnorm) return 1;
  return rnorm <= FEA_PH_REFINE_FLOOR_FACTOR * DBL_EPSILON * (anorm * xnorm + bnorm);
}

#endif
