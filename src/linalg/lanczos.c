/* Lanczos estimates of the extreme eigenvalues of an SPD operator, for the
 * condition numbers of the prehandling diagnostics. The extreme eigenvalues
 * of the tridiagonal matrix T_m come from LAPACK (dstev). */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "matrix.h"
#include "lanczos.h"

/* Extreme eigenvalues of the Lanczos tridiagonal T (alpha diagonal, beta
 * off-diagonal) through LAPACK's dstev; eigenvalues only, O(m^2). */
static fea_status tridiag_extremes(fea_context *ctx, const double *alpha, const double *beta,
                                   fea_index m, double *lo, double *hi) {
  double *d = malloc((size_t)m * sizeof *d), *e = malloc((size_t)(m > 1 ? m - 1 : 1) * sizeof *e);
  if (!d || !e) {
    free(d), free(e);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a %lld x %lld tridiagonal matrix",
                     (long long)m, (long long)m);
  }
  memcpy(d, alpha, (size_t)m * sizeof *d);
  if (m > 1) memcpy(e, beta, (size_t)(m - 1) * sizeof *e);
  lapack_int info = LAPACKE_dstev(LAPACK_COL_MAJOR, 'N', (lapack_int)m, d, e, NULL, 1);
  if (info == 0) { /* ascending */
    *lo = d[0];
    *hi = d[m - 1];
  }
  free(d), free(e);
  FEA_CHECK(info == 0, ctx, FEA_ERR_BACKEND,
            "dstev failed on the %lld-step Lanczos matrix (info %d)", (long long)m, (int)info);
  return FEA_SUCCESS;
}

static double dot(fea_index n, const double *x, const double *y) {
  return cblas_ddot((int)n, x, 1, y, 1);
}

/* Two classical Gram-Schmidt passes ("twice is enough") against q_0..q_{k-1}. */
static void reorthogonalize(fea_index n, const double *basis, fea_index k, double *w) {
  for (int pass = 0; pass < 2; pass++)
    for (fea_index j = 0; j < k; j++) {
      const double *q = basis + (size_t)j * (size_t)n;
      const double c = dot(n, q, w);
      for (fea_index i = 0; i < n; i++) w[i] -= c * q[i];
    }
}

fea_status fea_lanczos_extremes(fea_context *ctx, fea_index n, fea_spd_apply_fn apply, void *user,
                                int steps, int reorth, uint64_t seed, double *lambda_min,
                                double *lambda_max) {
  FEA_CHECK_NULL(apply, ctx);
  FEA_CHECK_NULL(lambda_min, ctx);
  FEA_CHECK_NULL(lambda_max, ctx);
  FEA_CHECK(n >= 1, ctx, FEA_ERR_INVALID_ARG, "operator size %lld", (long long)n);
  FEA_CHECK(steps >= 1, ctx, FEA_ERR_INVALID_ARG, "%d Lanczos steps", steps);
  const fea_index m = steps < n ? steps : n;
  /* Without reorthogonalization only the last two vectors are kept. */
  const size_t nvec = reorth ? (size_t)m + 1 : 2;
  double *basis = malloc(nvec * (size_t)n * sizeof *basis);
  double *w = malloc((size_t)n * sizeof *w);
  double *alpha = malloc((size_t)m * sizeof *alpha);
  double *beta = malloc((size_t)m * sizeof *beta);
  if (!basis || !w || !alpha || !beta) {
    free(basis), free(w), free(alpha), free(beta);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %zu Lanczos vectors of %lld", nvec,
                     (long long)n);
  }
  /* xorshift64* start vector in [-1, 1): deterministic for a seed. */
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  double *q = basis;
  for (fea_index i = 0; i < n; i++) {
    state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
    q[i] = (double)((state * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-52 - 1.0;
  }
  double nrm = sqrt(dot(n, q, q));
  for (fea_index i = 0; i < n; i++) q[i] /= nrm;

  fea_index done = 0;
  fea_status st = FEA_SUCCESS;
  for (fea_index k = 0; k < m; k++) {
    double *qk = basis + (reorth ? (size_t)k : (size_t)(k & 1)) * (size_t)n;
    double *qprev = basis + (reorth ? (size_t)(k ? k - 1 : 0) : (size_t)((k + 1) & 1)) * (size_t)n;
    st = apply(user, qk, w);
    if (st < 0) break;
    alpha[k] = dot(n, qk, w);
    for (fea_index i = 0; i < n; i++) w[i] -= alpha[k] * qk[i] + (k ? beta[k - 1] * qprev[i] : 0);
    if (reorth) reorthogonalize(n, basis, k + 1, w);
    done = k + 1;
    beta[k] = sqrt(dot(n, w, w));
    /* An invariant subspace: T_k's eigenvalues are exact eigenvalues. */
    if (beta[k] <= 64 * DBL_EPSILON * fabs(alpha[k]) || k + 1 == m) break;
    double *qnext = basis + (reorth ? (size_t)(k + 1) : (size_t)((k + 1) & 1)) * (size_t)n;
    for (fea_index i = 0; i < n; i++) qnext[i] = w[i] / beta[k];
  }
  if (st >= 0) st = tridiag_extremes(ctx, alpha, beta, done, lambda_min, lambda_max);
  free(basis), free(w), free(alpha), free(beta);
  return st;
}

static fea_status apply_csr(void *user, const double *x, double *y) {
  fea_csr_multiply_vector(user, x, y);
  return FEA_SUCCESS;
}

fea_status fea_lanczos_extremes_csr(const fea_matrix *A, int steps, int reorth, uint64_t seed,
                                    double *lambda_min, double *lambda_max) {
  FEA_CHECK_NULL(A, NULL);
  FEA_CHECK(A->rows == A->cols, A->ctx, FEA_ERR_DIMENSION, "Lanczos on a %lld x %lld matrix",
            (long long)A->rows, (long long)A->cols);
  return fea_lanczos_extremes(A->ctx, A->rows, apply_csr, (void *)(uintptr_t)A, steps, reorth, seed,
                              lambda_min, lambda_max);
}
