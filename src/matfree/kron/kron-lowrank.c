/* Cross approximation with complete pivoting (kron.h): the low-rank
 * factorization that turns a mapped patch's coefficient tensor into sums of
 * Kronecker products (kron-mapped.c).
 *
 * Why this and not an SVD: the matrices are unfoldings of coefficients at
 * every Gauss point of the patch (m0 x m1 m2, up to 10^8 entries), and
 * what the operator needs is the fewest rank-one terms whose largest entry
 * error stays below a tolerance. Complete pivoting is Gaussian elimination
 * on the matrix itself: each step takes the residual's largest entry, so
 * the stopping test is the exact max-norm error, one pass over the matrix
 * per rank (an SVD of the unfolding would cost m0^2 m1 m2 flops and a copy).
 * For the separable maps it is built for (annuli, rings, cylinders: every
 * coefficient exactly rank one) it stops after one step and one pass; for a
 * smooth non-separable map the pivots fall geometrically (smooth kernels
 * are well approximated by cross approximation), and a cap on the rank
 * says when the Kronecker form no longer pays. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "kron.h"

/* The largest |R| and its position, over columns [0, n) of an m-row matrix. */
static double find_max(const double *R, fea_index m, fea_index n, int threads, fea_index *at) {
  double best = -1.0;
  fea_index where = 0;
#pragma omp parallel num_threads(threads)
  {
    double b = -1.0;
    fea_index w = 0;
#pragma omp for schedule(static) nowait
    for (fea_index c = 0; c < n; c++)
      for (fea_index i = 0; i < m; i++) {
        const double v = fabs(R[(size_t)c * (size_t)m + (size_t)i]);
        if (v > b) b = v, w = c * m + i;
      }
#pragma omp critical
    if (b > best || (b == best && w < where)) best = b, where = w;
  }
  *at = where;
  return best;
}

int fea_kron_cross_approx(double *R, fea_index m, fea_index n, double tol, int max_rank,
                          int threads, double *U, double *V, double *error) {
  fea_index at;
  if (threads < 1) threads = 1;
  double piv = find_max(R, m, n, threads, &at);
  int r = 0;
  while (piv > tol) {
    if (r == max_rank) {
      *error = piv;
      return -1;
    }
    const fea_index i = at % m, j = at / m;
    double *u = U + (size_t)r * (size_t)m, *v = V + (size_t)r * (size_t)n;
    const double p = R[(size_t)j * (size_t)m + (size_t)i];
    memcpy(u, R + (size_t)j * (size_t)m, (size_t)m * sizeof *u);
    for (fea_index c = 0; c < n; c++) v[c] = R[(size_t)c * (size_t)m + (size_t)i] / p;
    /* R -= u v^T, and the next pivot in the same pass */
    double best = -1.0;
    fea_index where = 0;
#pragma omp parallel num_threads(threads)
    {
      double b = -1.0;
      fea_index w = 0;
#pragma omp for schedule(static) nowait
      for (fea_index c = 0; c < n; c++) {
        double *col = R + (size_t)c * (size_t)m;
        const double vc = v[c];
        for (fea_index k = 0; k < m; k++) {
          col[k] -= u[k] * vc;
          const double a = fabs(col[k]);
          if (a > b) b = a, w = c * m + k;
        }
      }
#pragma omp critical
      if (b > best || (b == best && w < where)) best = b, where = w;
    }
    piv = best;
    at = where;
    r++;
  }
  *error = piv > 0 ? piv : 0.0;
  return r;
}
