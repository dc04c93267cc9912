/* Quadrature rules on the reference cells.
 *
 * Gauss-Legendre nodes are the roots of P_n, found by Newton's method on the
 * three-term recurrence from the Chebyshev-like first guesses
 * cos(pi (i - 1/4) / (n + 1/2)), which lie close enough to each root for
 * quadratic convergence from the first step (Golub and Welsch give the same
 * rule as an eigenvalue problem; Newton is more accurate for the weights).
 *
 * Simplex rules collapse the cube onto the simplex (Duffy). The Jacobian of the
 * collapse, (1 - v) on the triangle and (1 - v)(1 - w)^2 on the tetrahedron,
 * goes into Gauss-Jacobi rules for the weights (1 - x)^a, a = 1, 2, so every
 * collapsed coordinate keeps the full 2n - 1 polynomial exactness: the rule
 * with n points per direction is exact for total degree 2n - 1. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "quadrature.h"

/* Newton runs in long double where it is wider than double (x86: 64-bit
 * significand), so nodes and weights come out correctly rounded or nearly:
 * a weight computed in double at a rounded node is off by a few ulps,
 * because the weight formula amplifies the node's rounding error. */
#define NEWTON_TOL (8 * LDBL_EPSILON)
#define NEWTON_MAX_IT 100

static const long double pi = 3.14159265358979323846264338327950288L;

/* P_n(x) and P_{n-1}(x) by the Legendre recurrence
 * (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1}. */
static void legendre(int n, long double x, long double *pn, long double *pn1) {
  long double p0 = 1.0L, p1 = x;
  for (int k = 1; k < n; k++) {
    long double p2 = ((2 * k + 1) * x * p1 - k * p0) / (k + 1);
    p0 = p1;
    p1 = p2;
  }
  *pn = p1;
  *pn1 = p0;
}

fea_status fea_gauss_legendre(int n, double *points, double *weights) {
  if (n < 1 || n > FEA_QUAD_MAX_1D)
    return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG,
                     "%d Gauss-Legendre points requested; 1..%d are available", n, FEA_QUAD_MAX_1D);
  if (n == 1) {
    points[0] = 0.5;
    weights[0] = 1.0;
    return FEA_SUCCESS;
  }
  /* Roots come in pairs +-x: compute the upper half (descending from near 1)
   * and mirror, so the weights are exactly symmetric. */
  for (int i = 0; i < (n + 1) / 2; i++) {
    long double x = cosl(pi * (i + 0.75L) / (n + 0.5L)), pn, pn1;
    if (n % 2 == 1 && i == n / 2) {
      x = 0.0L; /* the middle root of an odd rule is exactly 0 */
    } else {
      for (int it = 0, done = 0; it < NEWTON_MAX_IT && done < 2; it++) {
        legendre(n, x, &pn, &pn1);
        /* (1 - x^2) P_n' = n (P_{n-1} - x P_n); the nodes stay away from +-1. */
        long double dx = pn * (1.0L - x * x) / (n * (pn1 - x * pn));
        x -= dx;
        if (fabsl(dx) < NEWTON_TOL) done++;
      }
    }
    legendre(n, x, &pn, &pn1);
    /* w = 2 / ((1 - x^2) P_n'^2), and (1 - x^2) P_n' = n P_{n-1} at a root. */
    long double w = 2.0L * (1.0L - x) * (1.0L + x) / ((n * pn1) * (n * pn1));
    /* Map [-1, 1] to [0, 1]: x -> (1 + x) / 2, weights halved. */
    points[n - 1 - i] = (double)(0.5L * (1.0L + x));
    points[i] = (double)(0.5L * (1.0L - x));
    weights[n - 1 - i] = weights[i] = (double)(0.5L * w);
  }
  return FEA_SUCCESS;
}

/* Gauss-Jacobi with n points on [0, 1] for the weight (1 - x)^a.
 *
 * The orthonormal polynomials p_k of this weight satisfy
 *   sqrt(b_{k+1}) p_{k+1} = (x - a_k) p_k - sqrt(b_k) p_{k-1},
 * with the Jacobi coefficients (alpha = a, beta = 0) shifted to [0, 1]. The
 * eigenvalues of the symmetric tridiagonal matrix of (a_k, sqrt b_k) (LAPACK
 * dstev) are the nodes; Newton on p_n polishes them, and the weights come
 * from the Christoffel function 1 / sum_{k<n} p_k(x)^2, which needs no
 * eigenvectors and is accurate to rounding. */
static fea_status gauss_jacobi(int n, int a, double *x, double *w) {
  const double alpha = a, mu0 = 1.0 / (alpha + 1.0); /* mu0: integral of (1 - x)^a over [0, 1] */
  double ak[FEA_QUAD_MAX_1D], sb[FEA_QUAD_MAX_1D + 1], eig[FEA_QUAD_MAX_1D], off[FEA_QUAD_MAX_1D];
  for (int k = 0; k < n; k++) {
    /* Monic Jacobi on [-1, 1] with beta = 0: a_k = -alpha^2 / ((2k+alpha)(2k+alpha+2)),
     * a_0 = -alpha / (alpha + 2); on [0, 1], a_k' = (1 + a_k) / 2. */
    double s = 2.0 * k + alpha;
    double akm = k == 0 ? -alpha / (alpha + 2.0) : -alpha * alpha / (s * (s + 2.0));
    ak[k] = eig[k] = 0.5 * (1.0 + akm);
  }
  sb[0] = 0.0;
  for (int k = 1; k <= n; k++) {
    /* b_k = 4k^2 (k+alpha)^2 / ((2k+alpha)^2 (2k+alpha+1)(2k+alpha-1)); on [0, 1], b_k / 4. */
    double s = 2.0 * k + alpha;
    double bk = 4.0 * k * k * (k + alpha) * (k + alpha) / (s * s * (s + 1.0) * (s - 1.0));
    sb[k] = sqrt(0.25 * bk);
    if (k < n) off[k - 1] = sb[k];
  }
  lapack_int info = LAPACKE_dstev(LAPACK_COL_MAJOR, 'N', n, eig, off, NULL, 1);
  if (info != 0)
    return FEA_ERROR(NULL, FEA_ERR_BACKEND,
                     "LAPACK dstev failed (info %d) for a %d-point Gauss-Jacobi rule", (int)info,
                     n);
  for (int i = 0; i < n; i++) {
    double xi = eig[i];
    /* Two Newton steps on p_n, then the weight at the polished node. */
    for (int it = 0; it < 3; it++) {
      double p0 = 0.0, p1 = 1.0 / sqrt(mu0), d0 = 0.0, d1 = 0.0, sum = p1 * p1;
      for (int k = 0; k < n; k++) {
        double p2 = ((xi - ak[k]) * p1 - sb[k] * p0) / sb[k + 1];
        double d2 = (p1 + (xi - ak[k]) * d1 - sb[k] * d0) / sb[k + 1];
        p0 = p1;
        p1 = p2;
        d0 = d1;
        d1 = d2;
        if (k + 1 < n) sum += p1 * p1;
      }
      if (it < 2) {
        xi -= p1 / d1;
      } else {
        x[i] = xi;
        w[i] = 1.0 / sum;
      }
    }
  }
  return FEA_SUCCESS;
}

static fea_status quad_init(fea_quadrature *q, int dim, int npts) {
  q->dim = dim;
  q->npts = npts;
  q->points = malloc((size_t)npts * (size_t)dim * sizeof *q->points);
  q->weights = malloc((size_t)npts * sizeof *q->weights);
  if (!q->points || !q->weights) {
    fea_quadrature_free(q);
    return FEA_ERROR(NULL, FEA_ERR_OUT_OF_MEMORY, "no memory for a %d-point rule", npts);
  }
  return FEA_SUCCESS;
}

fea_status fea_quadrature_tensor(int dim, const int n[3], fea_quadrature *q) {
  memset(q, 0, sizeof *q);
  if (dim < 1 || dim > 3)
    return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG, "dimension %d is outside 1..3", dim);
  for (int k = 0; k < dim; k++)
    if (n[k] < 1 || n[k] > FEA_QUAD_MAX_1D)
      return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG, "%d points in direction %d; 1..%d are available",
                       n[k], k, FEA_QUAD_MAX_1D);
  double x[3][FEA_QUAD_MAX_1D], w[3][FEA_QUAD_MAX_1D];
  int m[3] = {1, 1, 1};
  for (int k = 0; k < dim; k++) {
    m[k] = n[k];
    FEA_CALL(fea_gauss_legendre(n[k], x[k], w[k]));
  }
  for (int k = dim; k < 3; k++) w[k][0] = 1.0, x[k][0] = 0.0;
  FEA_CALL(quad_init(q, dim, m[0] * m[1] * m[2]));
  /* Lexicographic, direction 0 fastest (as element DoFs are ordered). */
  int idx = 0;
  for (int c = 0; c < m[2]; c++)
    for (int b = 0; b < m[1]; b++)
      for (int a = 0; a < m[0]; a++, idx++) {
        int i[3] = {a, b, c};
        double wt = 1.0;
        for (int k = 0; k < dim; k++) {
          q->points[idx * dim + k] = x[k][i[k]];
          wt *= w[k][i[k]];
        }
        q->weights[idx] = wt;
      }
  for (int k = 0; k < 3; k++) {
    q->tensor[k] = m[k];
    for (int a = 0; a < m[k]; a++) q->w1d[k][a] = w[k][a];
  }
  return FEA_SUCCESS;
}

fea_status fea_quadrature_simplex(int dim, int n, fea_quadrature *q) {
  memset(q, 0, sizeof *q);
  if (dim != 2 && dim != 3)
    return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG, "simplex rules exist for dimension 2 and 3, not %d",
                     dim);
  if (n < 1 || n > FEA_QUAD_MAX_1D)
    return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG, "%d points per direction; 1..%d are available", n,
                     FEA_QUAD_MAX_1D);
  /* u: plain Gauss-Legendre; v: weight (1 - v); w: weight (1 - w)^2 (3D). */
  double xu[FEA_QUAD_MAX_1D], wu[FEA_QUAD_MAX_1D], xv[FEA_QUAD_MAX_1D], wv[FEA_QUAD_MAX_1D];
  double xw[FEA_QUAD_MAX_1D] = {0}, ww[FEA_QUAD_MAX_1D] = {1.0};
  FEA_CALL(fea_gauss_legendre(n, xu, wu));
  FEA_CALL(gauss_jacobi(n, 1, xv, wv));
  int nw = 1;
  if (dim == 3) {
    nw = n;
    FEA_CALL(gauss_jacobi(n, 2, xw, ww));
  }
  FEA_CALL(quad_init(q, dim, n * n * nw));
  int idx = 0;
  for (int c = 0; c < nw; c++)
    for (int b = 0; b < n; b++)
      for (int a = 0; a < n; a++, idx++) {
        double u = xu[a], v = xv[b], w = xw[c];
        double *pt = q->points + idx * dim;
        if (dim == 2) {
          pt[0] = u * (1.0 - v);
          pt[1] = v;
        } else {
          pt[0] = u * (1.0 - v) * (1.0 - w);
          pt[1] = v * (1.0 - w);
          pt[2] = w;
        }
        q->weights[idx] = wu[a] * wv[b] * ww[c];
      }
  return FEA_SUCCESS;
}

fea_status fea_quadrature_for_cell(fea_cell_type type, int n, fea_quadrature *q) {
  int nn[3] = {n, n, n};
  switch (type) {
  case FEA_CELL_INTERVAL: return fea_quadrature_tensor(1, nn, q);
  case FEA_CELL_QUAD: return fea_quadrature_tensor(2, nn, q);
  case FEA_CELL_HEXAHEDRON: return fea_quadrature_tensor(3, nn, q);
  case FEA_CELL_TRIANGLE: return fea_quadrature_simplex(2, n, q);
  case FEA_CELL_TETRAHEDRON: return fea_quadrature_simplex(3, n, q);
  }
  memset(q, 0, sizeof *q);
  return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG, "unknown cell type %d", (int)type);
}

void fea_quadrature_free(fea_quadrature *q) {
  if (!q) return;
  free(q->points);
  free(q->weights);
  q->points = q->weights = NULL;
  q->npts = 0;
  q->tensor[0] = q->tensor[1] = q->tensor[2] = 0;
  memset(q->w1d, 0, sizeof q->w1d);
}
