/* Shared by the B-spline unit tests: knot vectors to test on, a reference
 * B-spline evaluation straight from the Cox-de Boor definition, and spline
 * evaluation through the library's basis. */
#ifndef FEA_TESTS_BSPLINE_COMMON_H
#define FEA_TESTS_BSPLINE_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "disc/bspline.h"
#include "internal/error.h"

#define MAXP FEA_BSPLINE_MAX_DEGREE

/* Deterministic uniform numbers in [0, 1) (xorshift64*), same on every platform. */
static inline double rnd(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return (double)((x * 2685821657736338717ULL) >> 11) * 0x1p-53;
}

/* Open knot vector of degree p on [a, b] with the given interior knots, each
 * repeated mult[i] times (mult may be NULL: all 1). */
static inline fea_knots make_knots(int p, double a, double b, int nint, const double *interior,
                                   const int *mult) {
  double t[256];
  int m = 0;
  for (int i = 0; i <= p; i++) t[m++] = a;
  for (int i = 0; i < nint; i++)
    for (int r = 0; r < (mult ? mult[i] : 1); r++) t[m++] = interior[i];
  for (int i = 0; i <= p; i++) t[m++] = b;
  fea_knots k;
  fea_status st = fea_knots_create(NULL, p, m, t, &k);
  cr_assert_eq(st, FEA_SUCCESS, "make_knots(p=%d): %s", p, fea_thread_last_error());
  return k;
}

/* The knot vectors every property is checked on, for degree p: open uniform
 * with 1 and 5 elements, graded knots on [-2, 3], and a knot of multiplicity
 * p (a C0 separator) next to one of multiplicity ceil(p/2). */
#define NUM_CASES 4
static inline fea_knots knot_case(int p, int c) {
  fea_knots k;
  switch (c) {
  case 0: cr_assert_eq(fea_knots_uniform(NULL, p, 1, 0.0, 1.0, &k), FEA_SUCCESS); return k;
  case 1: cr_assert_eq(fea_knots_uniform(NULL, p, 5, 0.0, 1.0, &k), FEA_SUCCESS); return k;
  case 2: {
    const double x[] = {-1.9, -1.5, -0.2, 0.1, 2.0, 2.9};
    return make_knots(p, -2.0, 3.0, 6, x, NULL);
  }
  default: {
    const double x[] = {0.2, 0.45, 0.5, 0.8};
    const int mult[] = {1, p, (p + 1) / 2, 1};
    return make_knots(p, 0.0, 1.0, 4, x, mult);
  }
  }
}

/* N_{i,p}(x) from the definition, with 0/0 = 0 and the right end of the range
 * counted in the last non-empty span. */
static inline double ref_basis(const fea_knots *k, fea_index i, int p, double x) {
  const double *t = k->t;
  if (p == 0) {
    double end = t[k->m - 1];
    if (x == end) {
      /* The last non-empty span owns the right end. */
      return t[i] < t[i + 1] && t[i + 1] == end ? 1.0 : 0.0;
    }
    return t[i] <= x && x < t[i + 1] ? 1.0 : 0.0;
  }
  double v = 0.0;
  if (t[i + p] > t[i]) v += (x - t[i]) / (t[i + p] - t[i]) * ref_basis(k, i, p - 1, x);
  if (t[i + p + 1] > t[i + 1])
    v += (t[i + p + 1] - x) / (t[i + p + 1] - t[i + 1]) * ref_basis(k, i + 1, p - 1, x);
  return v;
}

/* sum_i c_i N_i(x) through the library's basis on x's span. */
static inline double spline_eval(const fea_knots *k, const double *c, double x) {
  double v[MAXP + 1];
  fea_index s = fea_knots_find_span(k, x);
  fea_bspline_basis_ders(k, s, x, 0, v);
  double u = 0.0;
  for (int j = 0; j <= k->p; j++) u += c[s - k->p + j] * v[j];
  return u;
}

/* Sample points: the knots themselves and npts pseudo-random points. */
static inline int sample_points(const fea_knots *k, int npts, uint64_t seed, double *x) {
  int n = 0;
  for (fea_index i = 0; i < k->m; i++) x[n++] = k->t[i];
  double a = k->t[0], b = k->t[k->m - 1];
  for (int i = 0; i < npts; i++) x[n++] = a + (b - a) * rnd(&seed);
  return n;
}

#endif
