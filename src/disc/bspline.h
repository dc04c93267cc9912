/* Univariate B-spline bases (Cox-de Boor) on knot vectors, and the knot-vector
 * operations behind h-, p- and k-refinement. Pure functions on host arrays. */
#ifndef FEA_INTERNAL_BSPLINE_H
#define FEA_INTERNAL_BSPLINE_H

#include <feaccel/types.h>

#define FEA_BSPLINE_MAX_DEGREE 8

/* A knot vector of degree p: m = n + p + 1 knots for n functions, open
 * (first and last knots repeated p + 1 times). */
typedef struct fea_knots {
  int p;
  fea_index m;     /* number of knots */
  double *t;       /* m knots, non-decreasing */
  fea_index nelem; /* number of non-empty spans (elements) */
  fea_index *span; /* nelem: index s of element e's span [t[s], t[s+1]), t[s] < t[s+1] */
} fea_knots;

/* The checks of fea_knots_create alone; dir >= 0 is named in the messages
 * ("knot vector of direction 1 ..."), as the interface layer reports them. */
fea_status fea_knots_check(const fea_context *ctx, int dir, int p, fea_index m, const double *t);
/* Validate and copy a knot vector (messages name the index and value): non-decreasing,
 * open ends, interior multiplicity <= p, finite values, at least one element. */
fea_status fea_knots_create(const fea_context *ctx, int p, fea_index m, const double *t,
                            fea_knots *out);
/* Open uniform knots on [a, b] with nelem elements. */
fea_status fea_knots_uniform(const fea_context *ctx, int p, fea_index nelem, double a, double b,
                             fea_knots *out);
void fea_knots_free(fea_knots *k);
fea_index fea_knots_num_functions(const fea_knots *k); /* m - p - 1 */

/* The span s with t[s] <= x < t[s+1] (the last non-empty span for x = t[m-1]). */
fea_index fea_knots_find_span(const fea_knots *k, double x);

/* Values and derivatives up to order nder (<= p) of the p + 1 functions
 * N_{s-p..s} non-zero on span s at x: ders[(k)*(p+1) + j] is the k-th
 * derivative of N_{s-p+j}. Cox-de Boor, built from low order up. */
void fea_bspline_basis_ders(const fea_knots *k, fea_index s, double x, int nder, double *ders);
/* The values and first derivatives (fea_bspline_basis_ders with nder = 1)
 * at npts points x of one span s, into rows of ld doubles: the knot
 * differences' reciprocals once for all points, so a point costs no
 * division (equal to fea_bspline_basis_ders up to rounding). */
void fea_bspline_basis_ders1_points(const fea_knots *k, fea_index s, int npts, const double *x,
                                    int ld, double *ders);

/* Greville abscissae (averages of p consecutive interior knots): n values. */
void fea_knots_greville(const fea_knots *k, double *g);

/* Refinement: new knot vector with knots inserted (h) or degree raised by t (p). */
fea_status fea_knots_insert(const fea_context *ctx, const fea_knots *k, fea_index count,
                            const double *x, fea_knots *out);
fea_status fea_knots_elevate(const fea_context *ctx, const fea_knots *k, int t, fea_knots *out);

/* FEA_ERR_INVALID_ARG, naming the knot, unless the spline space of fine
 * contains that of coarse (degree, parameter range, multiplicities); dir >= 0
 * is named in the messages. */
fea_status fea_knots_check_nested(const fea_context *ctx, int dir, const fea_knots *coarse,
                                  const fea_knots *fine);

/* The n_fine x n_coarse matrix T (column-major, dense) with N_coarse = N_fine T
 * when the fine space contains the coarse one; FEA_ERR_INVALID_ARG otherwise. */
fea_status fea_knots_transfer_matrix(const fea_context *ctx, const fea_knots *coarse,
                                     const fea_knots *fine, double *T);

/* The same transfer applied to nlines coefficient vectors without forming T:
 * x is n_coarse x nlines, y is n_fine x nlines (column-major, packed);
 * dir >= 0 is named in the messages. */
fea_status fea_knots_transfer_apply(const fea_context *ctx, int dir, const fea_knots *coarse,
                                    const fea_knots *fine, fea_index nlines, const double *x,
                                    double *y);

/* Solve N(g) X = B in place (B: n x nrhs, leading dimension ldb >= n) for the
 * collocation matrix of the basis at its Greville points g, by banded LU (LAPACK). */
fea_status fea_knots_greville_solve(const fea_context *ctx, const fea_knots *k, fea_index nrhs,
                                    double *b, fea_index ldb);

#endif
