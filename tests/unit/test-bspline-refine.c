/* h-, p- and k-refinement of knot vectors and the transfer between nested
 * spaces: the refined knot vectors themselves, and that the transferred
 * coefficients represent the same function (to 1e-13 for coefficients in
 * [-1, 1]) at the knots and at many random points, evaluated independently
 * through each space's own basis. Spaces that are not nested are refused
 * with the offending knot named. */
#include "bspline-common.h"

#define FUNC_TOL 1e-13

static void expect_msg(const char *needle) {
  cr_assert(strstr(fea_thread_last_error(), needle) != NULL, "message \"%s\" lacks \"%s\"",
            fea_thread_last_error(), needle);
}

/* T from the library, then for random coarse coefficients: the fine spline
 * T c equals the coarse spline, T 1 = 1 (partition of unity), T >= 0 (knot
 * insertion and degree elevation are convex), and transfer_apply gives T c. */
static void check_transfer(const fea_knots *coarse, const fea_knots *fine, const char *what) {
  fea_index nc = fea_knots_num_functions(coarse), nf = fea_knots_num_functions(fine);
  double *T = malloc((size_t)(nc * nf) * sizeof *T);
  double *c = malloc((size_t)nc * 3 * sizeof *c), *f = malloc((size_t)nf * 3 * sizeof *f);
  double *fa = malloc((size_t)nf * 3 * sizeof *fa);
  cr_assert_eq(fea_knots_transfer_matrix(NULL, coarse, fine, T), FEA_SUCCESS, "%s: %s", what,
               fea_thread_last_error());
  for (fea_index i = 0; i < nf; i++) {
    double row = 0.0;
    for (fea_index j = 0; j < nc; j++) {
      cr_assert(T[i + j * nf] >= -1e-14, "%s: T(%lld,%lld) = %g < 0", what, (long long)i,
                (long long)j, T[i + j * nf]);
      row += T[i + j * nf];
    }
    cr_assert(fabs(row - 1.0) <= 1e-13, "%s: row %lld of T sums to %.17g", what, (long long)i, row);
  }
  uint64_t seed = 77 + (uint64_t)nf;
  for (int r = 0; r < 3; r++) {
    for (fea_index j = 0; j < nc; j++) c[r * nc + j] = 2 * rnd(&seed) - 1;
    for (fea_index i = 0; i < nf; i++) {
      double s = 0.0;
      for (fea_index j = 0; j < nc; j++) s += T[i + j * nf] * c[r * nc + j];
      f[r * nf + i] = s;
    }
  }
  cr_assert_eq(fea_knots_transfer_apply(NULL, 0, coarse, fine, 3, c, fa), FEA_SUCCESS, "%s: %s",
               what, fea_thread_last_error());
  /* Two roundings of the same collocation solve (identity vs c as right-hand side). */
  for (fea_index i = 0; i < 3 * nf; i++)
    cr_assert(fabs(fa[i] - f[i]) <= 1e-13, "%s: apply and T c differ at %lld", what, (long long)i);
  double x[1200];
  int np = sample_points(fine, 1000, seed, x);
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < np; i++) {
      double uc = spline_eval(coarse, c + r * nc, x[i]), uf = spline_eval(fine, f + r * nf, x[i]);
      double ua = spline_eval(fine, fa + r * nf, x[i]);
      cr_assert(fabs(uc - uf) <= FUNC_TOL && fabs(uc - ua) <= FUNC_TOL,
                "%s: at x=%.17g coarse %.17g, fine %.17g (apply %.17g)", what, x[i], uc, uf, ua);
    }
  free(T);
  free(c);
  free(f);
  free(fa);
}

Test(insert, knots_land_in_order_and_counts_grow) {
  fea_knots k = knot_case(3, 1), r;          /* uniform, 5 elements on [0, 1] */
  const double add[] = {0.9, 0.1, 0.4, 0.4}; /* unsorted, one repeated, 0.4 is a knot already */
  cr_assert_eq(fea_knots_insert(NULL, &k, 4, add, &r), FEA_SUCCESS, "%s", fea_thread_last_error());
  cr_assert_eq(r.p, 3);
  cr_assert_eq(r.m, k.m + 4);
  cr_assert_eq(fea_knots_num_functions(&r), fea_knots_num_functions(&k) + 4);
  for (fea_index i = 1; i < r.m; i++) cr_assert(r.t[i] >= r.t[i - 1]);
  int n04 = 0, n01 = 0;
  for (fea_index i = 0; i < r.m; i++) n04 += r.t[i] == 0.4, n01 += r.t[i] == 0.1;
  cr_assert_eq(n04, 3, "0.4 has multiplicity %d", n04);
  cr_assert_eq(n01, 1);
  cr_assert_eq(r.nelem, 7); /* 0.1 and 0.9 split two elements */
  fea_knots_free(&r);
  cr_assert_eq(fea_knots_insert(NULL, &k, 0, NULL, &r), FEA_SUCCESS);
  cr_assert_eq(r.m, k.m);
  cr_assert(memcmp(r.t, k.t, (size_t)k.m * sizeof *k.t) == 0);
  fea_knots_free(&r);
  fea_knots_free(&k);
}

Test(elevate, multiplicities_grow_by_t) {
  const double x[] = {0.3, 0.6};
  const int mult[] = {1, 2};
  fea_knots k = make_knots(2, 0.0, 1.0, 2, x, mult), r;
  cr_assert_eq(fea_knots_elevate(NULL, &k, 2, &r), FEA_SUCCESS);
  cr_assert_eq(r.p, 4);
  const double want[] = {0, 0, 0, 0, 0, 0.3, 0.3, 0.3, 0.6, 0.6, 0.6, 0.6, 1, 1, 1, 1, 1};
  cr_assert_eq(r.m, 17);
  for (int i = 0; i < 17; i++) cr_assert(r.t[i] == want[i], "knot %d: %g", i, r.t[i]);
  cr_assert_eq(r.nelem, 3);
  fea_knots_free(&r);
  cr_assert_eq(fea_knots_elevate(NULL, &k, 0, &r), FEA_SUCCESS);
  cr_assert_eq(r.m, k.m);
  fea_knots_free(&r);
  fea_knots_free(&k);
}

/* h-refinement: new knots, and existing knots raised up to multiplicity p. */
Test(transfer, knot_insertion_keeps_the_function) {
  for (int p = 1; p <= MAXP; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c), r;
      double a = k.t[0], b = k.t[k.m - 1];
      /* Midpoints of all elements, plus an existing interior knot raised to p. */
      double add[64];
      int na = 0;
      for (fea_index e = 0; e < k.nelem; e++)
        add[na++] = 0.5 * (k.t[k.span[e]] + k.t[k.span[e] + 1]);
      if (k.nelem > 1) {
        double v = k.t[k.span[1]];
        int have = 0;
        for (fea_index i = 0; i < k.m; i++) have += k.t[i] == v;
        for (int i = have; i < p; i++) add[na++] = v;
      }
      add[na++] = a + 0.123 * (b - a);
      cr_assert_eq(fea_knots_insert(NULL, &k, na, add, &r), FEA_SUCCESS, "p=%d case %d: %s", p, c,
                   fea_thread_last_error());
      char what[64];
      snprintf(what, sizeof what, "insert p=%d case %d", p, c);
      check_transfer(&k, &r, what);
      fea_knots_free(&r);
      fea_knots_free(&k);
    }
}

/* p-refinement: degree raised by 1 and 2 (up to 8), continuity kept. */
Test(transfer, degree_elevation_keeps_the_function) {
  for (int p = 1; p <= MAXP - 1; p++)
    for (int c = 0; c < NUM_CASES; c++)
      for (int t = 1; t <= 2 && p + t <= MAXP; t++) {
        fea_knots k = knot_case(p, c), r;
        cr_assert_eq(fea_knots_elevate(NULL, &k, t, &r), FEA_SUCCESS);
        char what[64];
        snprintf(what, sizeof what, "elevate p=%d by %d case %d", p, t, c);
        check_transfer(&k, &r, what);
        fea_knots_free(&r);
        fea_knots_free(&k);
      }
}

/* Uniform meshes of n and k n elements are nested bit for bit. */
Test(transfer, uniform_refinement_keeps_the_function) {
  for (int p = 1; p <= MAXP; p++)
    for (int n = 1; n <= 4; n++)
      for (int f = 2; f <= 3; f++) {
        fea_knots k, r;
        cr_assert_eq(fea_knots_uniform(NULL, p, n, -1.0, 2.0, &k), FEA_SUCCESS);
        cr_assert_eq(fea_knots_uniform(NULL, p, f * n, -1.0, 2.0, &r), FEA_SUCCESS);
        char what[64];
        snprintf(what, sizeof what, "uniform p=%d n=%d x%d", p, n, f);
        check_transfer(&k, &r, what);
        fea_knots_free(&r);
        fea_knots_free(&k);
      }
}

/* k-refinement: elevate then insert (higher continuity at the new knots) and
 * insert then elevate; both fine spaces contain the coarse one. */
Test(transfer, k_refinement_both_orders_keep_the_function) {
  for (int p = 1; p <= MAXP - 1; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c), e1, r1, i2, r2;
      double a = k.t[0], b = k.t[k.m - 1];
      const double add[] = {a + 0.37 * (b - a), a + 0.61 * (b - a)};
      cr_assert_eq(fea_knots_elevate(NULL, &k, 1, &e1), FEA_SUCCESS);
      cr_assert_eq(fea_knots_insert(NULL, &e1, 2, add, &r1), FEA_SUCCESS);
      cr_assert_eq(fea_knots_insert(NULL, &k, 2, add, &i2), FEA_SUCCESS);
      cr_assert_eq(fea_knots_elevate(NULL, &i2, 1, &r2), FEA_SUCCESS);
      char what[64];
      snprintf(what, sizeof what, "elevate+insert p=%d case %d", p, c);
      check_transfer(&k, &r1, what);
      snprintf(what, sizeof what, "insert+elevate p=%d case %d", p, c);
      check_transfer(&k, &r2, what);
      /* The k-refined space (elevate first) is smaller and inside the other. */
      cr_assert_lt(fea_knots_num_functions(&r1), fea_knots_num_functions(&r2));
      snprintf(what, sizeof what, "k-refined in p-refined p=%d case %d", p, c);
      check_transfer(&r1, &r2, what);
      fea_knots_free(&e1);
      fea_knots_free(&r1);
      fea_knots_free(&i2);
      fea_knots_free(&r2);
      fea_knots_free(&k);
    }
}

/* --- refused refinements and non-nested pairs --- */

Test(insert_errors, outside_the_range_nan_and_multiplicity) {
  fea_knots k = knot_case(2, 1), r;
  const double out[] = {0.5, 1.5};
  cr_assert_eq(fea_knots_insert(NULL, &k, 2, out, &r), FEA_ERR_INVALID_ARG);
  expect_msg("knot 1.5 (entry 1) is not strictly inside the parameter range (0, 1)");
  cr_assert_null(r.t);
  const double end[] = {0.0};
  cr_assert_eq(fea_knots_insert(NULL, &k, 1, end, &r), FEA_ERR_INVALID_ARG);
  expect_msg("knot 0 (entry 0) is not strictly inside");
  const double nan[] = {NAN};
  cr_assert_eq(fea_knots_insert(NULL, &k, 1, nan, &r), FEA_ERR_INVALID_ARG);
  expect_msg("knot nan (entry 0)");
  const double twice[] = {0.4, 0.4}; /* 0.4 is a knot of the 5-element vector: 3 > p */
  cr_assert_eq(fea_knots_insert(NULL, &k, 2, twice, &r), FEA_ERR_INVALID_ARG);
  expect_msg("inserting 0.4 would raise its multiplicity to 3, above the degree 2");
  cr_assert_null(r.t);
  cr_assert_eq(fea_knots_insert(NULL, &k, -1, twice, &r), FEA_ERR_INVALID_ARG);
  expect_msg("knot count -1");
  fea_knots_free(&k);
}

Test(elevate_errors, beyond_degree_8_or_negative) {
  fea_knots k = knot_case(7, 1), r;
  cr_assert_eq(fea_knots_elevate(NULL, &k, 2, &r), FEA_ERR_INVALID_ARG);
  expect_msg("raising degree 7 by 2 gives 9, outside 1..8");
  cr_assert_null(r.t);
  cr_assert_eq(fea_knots_elevate(NULL, &k, -1, &r), FEA_ERR_INVALID_ARG);
  expect_msg("raising degree 7 by -1");
  fea_knots_free(&k);
}

Test(transfer_errors, not_nested_names_the_knot) {
  double T[400];
  const double xc[] = {0.25, 0.5}, xf[] = {0.25, 0.75};
  fea_knots c = make_knots(2, 0, 1, 2, xc, NULL), f = make_knots(2, 0, 1, 2, xf, NULL);
  cr_assert_eq(fea_knots_transfer_matrix(NULL, &c, &f, T), FEA_ERR_INVALID_ARG);
  expect_msg("coarse knot 0.5 (index 4) appears 0 times in the fine knot vector, nesting needs 1");
  fea_knots_free(&f);
  /* Degree raised without raising the multiplicities: C^1 at 0.25 and 0.5
   * in the coarse space, but C^2 is forced by a single knot at degree 3. */
  f = make_knots(3, 0, 1, 2, xc, NULL);
  cr_assert_eq(fea_knots_transfer_matrix(NULL, &c, &f, T), FEA_ERR_INVALID_ARG);
  expect_msg(
      "coarse knot 0.25 (index 3) appears 1 times in the fine knot vector, nesting needs 2 "
      "(multiplicity 1 + degree raise 1)");
  fea_knots_free(&f);
  /* Lower degree. */
  f = make_knots(1, 0, 1, 2, xc, NULL);
  cr_assert_eq(fea_knots_transfer_matrix(NULL, &c, &f, T), FEA_ERR_INVALID_ARG);
  expect_msg("fine degree 1 is below coarse degree 2");
  fea_knots_free(&f);
  /* Another range. */
  f = make_knots(2, 0, 2, 2, xc, NULL);
  cr_assert_eq(fea_knots_transfer_apply(NULL, 1, &c, &f, 0, NULL, NULL), FEA_ERR_INVALID_ARG);
  expect_msg("in direction 1: parameter ranges [0, 1] and [0, 2] differ");
  fea_knots_free(&f);
  /* The reverse direction (fine into coarse) is not a refinement. */
  const double xr[] = {0.25, 0.5, 0.75};
  f = make_knots(2, 0, 1, 3, xr, NULL);
  cr_assert_eq(fea_knots_transfer_matrix(NULL, &f, &c, T), FEA_ERR_INVALID_ARG);
  expect_msg("coarse knot 0.75 (index 5) appears 0 times");
  fea_knots_free(&f);
  fea_knots_free(&c);
}
