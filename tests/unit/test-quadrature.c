/* Quadrature rules against closed forms: monomial integrals over [0,1]^d
 * (1 / prod (a_k + 1)), over the unit triangle (a! b! / (a + b + 2)!) and the
 * unit tetrahedron (a! b! c! / (a + b + c + 3)!), tabulated Gauss points, and
 * roots of P_n evaluated by the explicit sum formula in long double.
 *
 * Tolerances: a positive sum of npts terms, each with a few roundings, is
 * off by about npts * eps relative; 1e-13 leaves room for that at 20^3 points. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "internal/error.h"
#include "disc/quadrature.h"

#define REL_TOL 1e-13

static double factorial(int n) {
  double f = 1.0;
  for (int i = 2; i <= n; i++) f *= i;
  return f;
}

/* Integer power by repeated multiplication (exact for the small powers of 0). */
static double ipow(double x, int a) {
  double r = 1.0;
  for (int i = 0; i < a; i++) r *= x;
  return r;
}

static double rule_monomial(const fea_quadrature *q, const int a[3]) {
  double s = 0.0;
  for (int i = 0; i < q->npts; i++) {
    double v = q->weights[i];
    for (int k = 0; k < q->dim; k++) v *= ipow(q->points[i * q->dim + k], a[k]);
    s += v;
  }
  return s;
}

Test(gauss_legendre, weights_sum_to_one_and_points_ascend_symmetric) {
  for (int n = 1; n <= FEA_QUAD_MAX_1D; n++) {
    double x[FEA_QUAD_MAX_1D], w[FEA_QUAD_MAX_1D], sum = 0.0;
    cr_assert_eq(fea_gauss_legendre(n, x, w), FEA_SUCCESS);
    for (int i = 0; i < n; i++) {
      sum += w[i];
      cr_assert(x[i] > 0.0 && x[i] < 1.0 && w[i] > 0.0, "n=%d point %d: x=%g w=%g", n, i, x[i],
                w[i]);
      if (i) cr_assert(x[i] > x[i - 1], "n=%d: points not ascending at %d", n, i);
      cr_assert(fabs(x[i] + x[n - 1 - i] - 1.0) <= 2e-16, "n=%d: not symmetric at %d", n, i);
      cr_assert(fabs(w[i] - w[n - 1 - i]) <= 1e-16, "n=%d: weights not symmetric at %d", n, i);
    }
    cr_assert(fabs(sum - 1.0) <= 1e-15, "n=%d: weights sum to %.17g", n, sum);
  }
}

Test(gauss_legendre, tabulated_small_rules) {
  double x[3], w[3];
  cr_assert_eq(fea_gauss_legendre(1, x, w), FEA_SUCCESS);
  cr_assert(x[0] == 0.5 && w[0] == 1.0);
  cr_assert_eq(fea_gauss_legendre(2, x, w), FEA_SUCCESS);
  /* Within a few ulps of the closed forms (correctly rounded where long double is wider). */
  cr_assert(fabs(x[0] - (0.5 - 0.5 / sqrt(3.0))) <= 2e-16 && fabs(w[0] - 0.5) <= 4e-16,
            "x0 = %.17g w0 = %.17g", x[0], w[0]);
  cr_assert_eq(fea_gauss_legendre(3, x, w), FEA_SUCCESS);
  cr_assert(fabs(x[0] - 0.5 * (1.0 - sqrt(0.6))) <= 2e-16, "x0 = %.17g", x[0]);
  cr_assert(x[1] == 0.5);
  cr_assert(fabs(w[0] - 5.0 / 18.0) <= 2e-16 && fabs(w[1] - 8.0 / 18.0) <= 4e-16, "w = %.17g %.17g",
            w[0], w[1]);
}

/* The nodes are the roots of P_n(2x - 1): Newton's correction P_n / P_n'
 * computed in long double (recurrence and derivative) is below the rounding
 * of a double in [0, 1]. */
Test(gauss_legendre, nodes_are_legendre_roots) {
  for (int n = 2; n <= FEA_QUAD_MAX_1D; n++) {
    double x[FEA_QUAD_MAX_1D], w[FEA_QUAD_MAX_1D];
    cr_assert_eq(fea_gauss_legendre(n, x, w), FEA_SUCCESS);
    for (int i = 0; i < n; i++) {
      long double t = 2.0L * x[i] - 1.0L, p0 = 1, p1 = t;
      for (int k = 1; k < n; k++) {
        long double p2 = ((2 * k + 1) * t * p1 - k * p0) / (k + 1);
        p0 = p1;
        p1 = p2;
      }
      long double dp = n * (p0 - t * p1) / (1 - t * t);
      /* In x = (1 + t) / 2 the node is off by |P_n / P_n'| / 2. */
      long double off = fabsl(p1 / dp) / 2;
      cr_assert(off <= 2.3e-16L, "n=%d node %d = %.17g is %Lg from the root", n, i, x[i], off);
    }
  }
}

Test(gauss_legendre, exact_to_degree_2n_minus_1_not_2n) {
  for (int n = 1; n <= FEA_QUAD_MAX_1D; n++) {
    fea_quadrature q;
    int nn[3] = {n, 1, 1};
    cr_assert_eq(fea_quadrature_tensor(1, nn, &q), FEA_SUCCESS);
    for (int a = 0; a <= 2 * n - 1; a++) {
      int e[3] = {a, 0, 0};
      double exact = 1.0 / (a + 1), got = rule_monomial(&q, e);
      cr_assert(fabs(got - exact) <= REL_TOL * exact, "n=%d x^%d: %.17g vs %.17g", n, a, got,
                exact);
    }
    /* Degree 2n is not integrated exactly (the error term is visible for small n). */
    if (n <= 6) {
      int e[3] = {2 * n, 0, 0};
      double exact = 1.0 / (2 * n + 1), got = rule_monomial(&q, e);
      cr_assert(fabs(got - exact) > 1e-9 * exact, "n=%d x^%d exact?", n, 2 * n);
    }
    fea_quadrature_free(&q);
  }
}

Test(gauss_legendre, rejects_bad_counts) {
  double x[FEA_QUAD_MAX_1D + 1], w[FEA_QUAD_MAX_1D + 1];
  cr_assert_eq(fea_gauss_legendre(0, x, w), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_thread_last_error(), "0 Gauss-Legendre points"), "%s",
            fea_thread_last_error());
  cr_assert_eq(fea_gauss_legendre(21, x, w), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_thread_last_error(), "21 Gauss-Legendre points"), "%s",
            fea_thread_last_error());
}

Test(quadrature_tensor, anisotropic_exactness_in_each_direction) {
  const int cases[][3] = {{1, 1, 1}, {2, 3, 4}, {5, 1, 3}, {7, 6, 2}, {20, 2, 1}};
  for (int dim = 1; dim <= 3; dim++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      const int *n = cases[c];
      fea_quadrature q;
      cr_assert_eq(fea_quadrature_tensor(dim, n, &q), FEA_SUCCESS);
      int expect = 1;
      for (int k = 0; k < dim; k++) expect *= n[k];
      cr_assert_eq(q.npts, expect);
      cr_assert_eq(q.dim, dim);
      int e[3] = {0, 0, 0};
      for (e[0] = 0; e[0] <= 2 * n[0] - 1; e[0]++)
        for (e[1] = 0; e[1] <= (dim > 1 ? 2 * n[1] - 1 : 0); e[1]++)
          for (e[2] = 0; e[2] <= (dim > 2 ? 2 * n[2] - 1 : 0); e[2]++) {
            double exact = 1.0 / ((e[0] + 1.0) * (e[1] + 1.0) * (e[2] + 1.0));
            double got = rule_monomial(&q, e);
            cr_assert(fabs(got - exact) <= REL_TOL * exact, "dim %d n=(%d,%d,%d) x^%d y^%d z^%d",
                      dim, n[0], n[1], n[2], e[0], e[1], e[2]);
          }
      /* Direction 0 varies fastest. */
      if (dim > 1 && n[0] > 1) cr_assert(q.points[dim + 1] == q.points[1]);
      fea_quadrature_free(&q);
    }
}

Test(quadrature_tensor, rejects_bad_arguments) {
  fea_quadrature q;
  int n[3] = {2, 2, 2}, bad[3] = {2, 21, 2};
  cr_assert_eq(fea_quadrature_tensor(4, n, &q), FEA_ERR_INVALID_ARG);
  cr_assert_null(q.points);
  cr_assert_eq(fea_quadrature_tensor(3, bad, &q), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_thread_last_error(), "21 points in direction 1"), "%s",
            fea_thread_last_error());
  cr_assert_null(q.points);
}

/* Total degree 2n - 1 on the triangle: every monomial, and a miss at 2n. */
Test(quadrature_simplex, triangle_exact_for_total_degree_2n_minus_1) {
  for (int n = 1; n <= FEA_QUAD_MAX_1D; n++) {
    fea_quadrature q;
    cr_assert_eq(fea_quadrature_simplex(2, n, &q), FEA_SUCCESS);
    cr_assert_eq(q.npts, n * n);
    double sum = 0;
    for (int i = 0; i < q.npts; i++) {
      double x = q.points[2 * i], y = q.points[2 * i + 1];
      cr_assert(x > 0 && y > 0 && x + y < 1 && q.weights[i] > 0, "n=%d point %d outside", n, i);
      sum += q.weights[i];
    }
    cr_assert(fabs(sum - 0.5) <= 1e-15, "n=%d: weights sum %.17g", n, sum);
    for (int deg = 0; deg <= 2 * n - 1; deg++)
      for (int a = 0; a <= deg; a++) {
        int e[3] = {a, deg - a, 0};
        double exact = factorial(a) * factorial(deg - a) / factorial(deg + 2);
        double got = rule_monomial(&q, e);
        cr_assert(fabs(got - exact) <= REL_TOL * exact, "n=%d x^%d y^%d: %.17g vs %.17g", n, a,
                  deg - a, got, exact);
      }
    if (n <= 5) {
      int e[3] = {2 * n, 0, 0};
      double exact = 1.0 / ((2 * n + 1.0) * (2 * n + 2.0)), got = rule_monomial(&q, e);
      cr_assert(fabs(got - exact) > 1e-9 * exact, "n=%d: x^%d should not be exact", n, 2 * n);
    }
    fea_quadrature_free(&q);
  }
}

Test(quadrature_simplex, tetrahedron_exact_for_total_degree_2n_minus_1) {
  for (int n = 1; n <= 12; n++) {
    fea_quadrature q;
    cr_assert_eq(fea_quadrature_simplex(3, n, &q), FEA_SUCCESS);
    cr_assert_eq(q.npts, n * n * n);
    double sum = 0;
    for (int i = 0; i < q.npts; i++) {
      const double *p = q.points + 3 * i;
      cr_assert(p[0] > 0 && p[1] > 0 && p[2] > 0 && p[0] + p[1] + p[2] < 1 && q.weights[i] > 0,
                "n=%d point %d outside", n, i);
      sum += q.weights[i];
    }
    cr_assert(fabs(sum - 1.0 / 6.0) <= 1e-15, "n=%d: weights sum %.17g", n, sum);
    for (int deg = 0; deg <= 2 * n - 1; deg++)
      for (int a = 0; a <= deg; a++)
        for (int b = 0; a + b <= deg; b++) {
          int c = deg - a - b, e[3] = {a, b, c};
          double exact = factorial(a) * factorial(b) * factorial(c) / factorial(deg + 3);
          double got = rule_monomial(&q, e);
          cr_assert(fabs(got - exact) <= REL_TOL * exact, "n=%d x^%d y^%d z^%d: %.17g vs %.17g", n,
                    a, b, c, got, exact);
        }
    if (n <= 5) {
      int e[3] = {0, 0, 2 * n};
      double exact = factorial(2 * n) / factorial(2 * n + 3), got = rule_monomial(&q, e);
      cr_assert(fabs(got - exact) > 1e-9 * exact, "n=%d: z^%d should not be exact", n, 2 * n);
    }
    fea_quadrature_free(&q);
  }
}

Test(quadrature_simplex, rejects_bad_arguments) {
  fea_quadrature q;
  cr_assert_eq(fea_quadrature_simplex(1, 3, &q), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_thread_last_error(), "not 1"), "%s", fea_thread_last_error());
  cr_assert_eq(fea_quadrature_simplex(2, 0, &q), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_thread_last_error(), "0 points"), "%s", fea_thread_last_error());
  cr_assert_null(q.points);
}

Test(quadrature_for_cell, every_cell_type) {
  const struct {
    fea_cell_type type;
    int dim, npts;
    double measure;
  } cases[] = {{FEA_CELL_INTERVAL, 1, 3, 1.0},
               {FEA_CELL_QUAD, 2, 9, 1.0},
               {FEA_CELL_HEXAHEDRON, 3, 27, 1.0},
               {FEA_CELL_TRIANGLE, 2, 9, 0.5},
               {FEA_CELL_TETRAHEDRON, 3, 27, 1.0 / 6.0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fea_quadrature q;
    cr_assert_eq(fea_quadrature_for_cell(cases[c].type, 3, &q), FEA_SUCCESS);
    cr_assert_eq(q.dim, cases[c].dim);
    cr_assert_eq(q.npts, cases[c].npts);
    double sum = 0;
    for (int i = 0; i < q.npts; i++) sum += q.weights[i];
    cr_assert(fabs(sum - cases[c].measure) <= 2e-15, "cell %d: measure %.17g", (int)cases[c].type,
              sum);
    fea_quadrature_free(&q);
    cr_assert_null(q.points);
    fea_quadrature_free(&q); /* freeing twice is harmless */
  }
  fea_quadrature q;
  cr_assert_eq(fea_quadrature_for_cell((fea_cell_type)9, 3, &q), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_thread_last_error(), "unknown cell type 9"), "%s", fea_thread_last_error());
}
