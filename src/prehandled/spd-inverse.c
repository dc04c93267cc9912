/* The explicit inverse of a dense SPD matrix (M1's Pi^-1 and C_1^-1), in
 * pieces small enough to report progress between them.
 *
 * At h = 1/512 (|E| = 14,880) inverting Pi is ~7.7e12 flops, ~100 s on one
 * core: a single potrf and a single potrs would leave the progress callback
 * silent for a minute and a cancel unanswered. Above SPD_BLOCKED_MIN rows
 * the factorization runs right-looking in SPD_NB-column panels, each
 * panel's trailing update in SPD_NB-column blocks (a SYRK on the diagonal
 * block, a GEMM below it), and the solve on the identity in SPD_PANEL-column
 * panels, each as a blocked forward and backward substitution over SPD_NB
 * rows at a time (a GEMM with the rows solved so far, then a small TRSM).
 * Every piece is at most 2 n SPD_NB SPD_PANEL flops (4e9 at |E| = 14,880):
 * well under a second at a DGEMM rate of 15 GFLOP/s. The block sizes are
 * constants, so the digits do not follow the machine's speed; they differ
 * from one potrf and potrs in the order of the sums only. Smaller matrices
 * take the one-call path. */
#include <stdio.h>

#include "base/context.h"
#include "base/progress.h"
#include "internal/error.h"
#include "linalg/dense.h"
#include "spd-inverse.h"

#define SPD_BLOCKED_MIN 1024
#define SPD_NB 256
#define SPD_PANEL 512

/* The share of a Cholesky's flops done once its first j of n columns are. */
static double chol_done(double j, double n) {
  const double r = (n - j) / n;
  return 1.0 - r * r * r;
}

/* Lower Cholesky in place, right-looking in panels; the factorization is the
 * first 0.3 of the phase (~n^3/3 of ~7n^3/3 flops). */
static fea_status blocked_potrf(fea_context *ctx, double *a, fea_index n, const char *phase) {
  for (fea_index j0 = 0; j0 < n; j0 += SPD_NB) {
    const fea_index jb = n - j0 < SPD_NB ? n - j0 : SPD_NB, rest = n - j0 - jb;
    const double f0 = chol_done((double)j0, (double)n),
                 f1 = chol_done((double)(j0 + jb), (double)n);
    fea_dmat A11 = {a + j0 + j0 * n, jb, jb, n, FEA_F64};
    fea_status st = fea_dense_potrf(ctx, FEA_LOWER, &A11);
    if (st < 0) {
      char why[256];
      snprintf(why, sizeof why, "%.255s", ctx->last_error);
      return FEA_ERROR(ctx, st, "in the diagonal block at row %lld: %s", (long long)j0, why);
    }
    if (rest == 0) break;
    fea_dmat A21 = {a + j0 + jb + j0 * n, rest, jb, n, FEA_F64};
    FEA_CALL(fea_dense_trsm(ctx, FEA_RIGHT, FEA_LOWER, FEA_TRANS, FEA_NON_UNIT, 1.0, &A11, &A21));
    /* A22 -= A21 A21^T, lower triangle, one block column at a time. */
    for (fea_index c0 = 0; c0 < rest; c0 += SPD_NB) {
      const fea_index cb = rest - c0 < SPD_NB ? rest - c0 : SPD_NB, below = rest - c0 - cb;
      const fea_index g = j0 + jb + c0; /* the block column's first row and column in a */
      fea_dmat Ac = {a + g + j0 * n, cb, jb, n, FEA_F64};
      fea_dmat Cd = {a + g + g * n, cb, cb, n, FEA_F64};
      FEA_CALL(fea_dense_syrk(ctx, FEA_LOWER, FEA_NO_TRANS, -1.0, &Ac, 1.0, &Cd));
      if (below > 0) {
        fea_dmat Ab = {a + g + cb + j0 * n, below, jb, n, FEA_F64};
        fea_dmat Cb = {a + g + cb + g * n, below, cb, n, FEA_F64};
        FEA_CALL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_TRANS, -1.0, &Ab, &Ac, 1.0, &Cb,
                                FEA_COMPUTE_DEFAULT));
      }
      const double done = f0 + (f1 - f0) * (double)(c0 + cb) / (double)rest;
      FEA_CALL(fea_progress(ctx, phase, 0.3 * done));
    }
  }
  return fea_progress(ctx, phase, 0.3);
}

fea_status fea_ph_spd_inverse(fea_context *ctx, double *a, double *inv, fea_index n,
                              const char *what, const char *phase) {
  if (n == 0) return FEA_SUCCESS;
  const int blocked = n >= SPD_BLOCKED_MIN;
  fea_dmat fa = {a, n, n, n, FEA_F64};
  fea_status st = blocked ? blocked_potrf(ctx, a, n, phase) : fea_dense_potrf(ctx, FEA_LOWER, &fa);
  if (st == FEA_ERR_CANCELLED) return st;
  if (st < 0) { /* the potrf message names the minor; keep it, add which matrix */
    char why[256];
    snprintf(why, sizeof why, "%.255s", ctx->last_error);
    return FEA_ERROR(ctx, st, "the Cholesky factorization of %s (%lld x %lld) failed: %s", what,
                     (long long)n, (long long)n, why);
  }
  for (fea_index i = 0; i < n; i++) inv[i + i * n] = 1.0;
  if (!blocked) {
    fea_dmat fi = {inv, n, n, n, FEA_F64};
    return fea_dense_potrs(ctx, FEA_LOWER, &fa, &fi);
  }
  /* Column panels of the identity, each solved in row blocks (GEMM updates
   * and small TRSMs), reporting after each block. Rows above a panel's first
   * column stay zero in the forward solve (L^-1 is lower triangular), so it
   * starts there. */
  const double total = (double)n * (double)n * (double)n * (2.0 / 3.0 + 1.0) + 1.0;
  double done = 0;
  for (fea_index j0 = 0; j0 < n; j0 += SPD_PANEL) {
    const fea_index jw = n - j0 < SPD_PANEL ? n - j0 : SPD_PANEL;
    double *X = inv + j0 * n; /* n x jw, ld n */
    for (fea_index i0 = j0; i0 < n; i0 += SPD_NB) {
      const fea_index ib = n - i0 < SPD_NB ? n - i0 : SPD_NB;
      fea_dmat Xi = {X + i0, ib, jw, n, FEA_F64};
      if (i0 > j0) {
        fea_dmat L = {a + i0 + j0 * n, ib, i0 - j0, n, FEA_F64};
        fea_dmat Y = {X + j0, i0 - j0, jw, n, FEA_F64};
        FEA_CALL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, -1.0, &L, &Y, 1.0, &Xi,
                                FEA_COMPUTE_DEFAULT));
      }
      fea_dmat Lii = {a + i0 + i0 * n, ib, ib, n, FEA_F64};
      FEA_CALL(fea_dense_trsm(ctx, FEA_LEFT, FEA_LOWER, FEA_NO_TRANS, FEA_NON_UNIT, 1.0, &Lii,
                              &Xi));
      done += 2.0 * (double)ib * (double)(i0 - j0 + ib) * (double)jw;
      FEA_CALL(fea_progress(ctx, phase, 0.3 + 0.7 * done / total));
    }
    for (fea_index i1 = n; i1 > 0; i1 -= SPD_NB) {
      const fea_index i0 = i1 > SPD_NB ? i1 - SPD_NB : 0, ib = i1 - i0;
      fea_dmat Xi = {X + i0, ib, jw, n, FEA_F64};
      if (i1 < n) {
        fea_dmat L = {a + i1 + i0 * n, n - i1, ib, n, FEA_F64};
        fea_dmat Z = {X + i1, n - i1, jw, n, FEA_F64};
        FEA_CALL(fea_dense_gemm(ctx, FEA_TRANS, FEA_NO_TRANS, -1.0, &L, &Z, 1.0, &Xi,
                                FEA_COMPUTE_DEFAULT));
      }
      fea_dmat Lii = {a + i0 + i0 * n, ib, ib, n, FEA_F64};
      FEA_CALL(fea_dense_trsm(ctx, FEA_LEFT, FEA_LOWER, FEA_TRANS, FEA_NON_UNIT, 1.0, &Lii, &Xi));
      done += 2.0 * (double)ib * (double)(n - i0) * (double)jw;
      FEA_CALL(fea_progress(ctx, phase, 0.3 + 0.7 * done / total));
    }
  }
  return fea_progress(ctx, phase, 1.0);
}
