/* Univariate B-spline bases: knot validation, span search, Cox-de Boor values
 * against the recursive definition, partition of unity, non-negativity,
 * supports, derivatives against finite differences, continuity at repeated
 * knots, Greville points and collocation. Degrees 1..8 on the knot vectors of
 * bspline-common.h (uniform, graded on [-2, 3], repeated interior knots).
 * Refinement (insertion, elevation, transfer) is in test-bspline-refine.c. */
#include "bspline-common.h"

#define EPS 2.220446049250313e-16

static void expect_msg(const char *needle) {
  cr_assert(strstr(fea_thread_last_error(), needle) != NULL, "message \"%s\" lacks \"%s\"",
            fea_thread_last_error(), needle);
}

Test(knots, open_uniform_has_n_plus_p_functions) {
  for (int p = 1; p <= MAXP; p++)
    for (fea_index n = 1; n <= 7; n++) {
      fea_knots k;
      cr_assert_eq(fea_knots_uniform(NULL, p, n, 0.0, 2.0, &k), FEA_SUCCESS);
      cr_assert_eq(k.p, p);
      cr_assert_eq(k.m, n + 2 * p + 1);
      cr_assert_eq(fea_knots_num_functions(&k), n + p, "p=%d n=%lld", p, (long long)n);
      cr_assert_eq(k.nelem, n);
      for (fea_index e = 0; e < n; e++) {
        cr_assert_eq(k.span[e], p + e);
        cr_assert(fabs(k.t[p + e] - 2.0 * (double)e / (double)n) <= 4 * EPS);
      }
      for (int i = 0; i <= p; i++) cr_assert(k.t[i] == 0.0 && k.t[k.m - 1 - i] == 2.0);
      fea_knots_free(&k);
      cr_assert_null(k.t);
    }
}

Test(knots, repeated_knots_make_no_elements) {
  const double x[] = {0.25, 0.5, 0.75};
  const int mult[] = {1, 3, 2};
  fea_knots k = make_knots(3, 0.0, 1.0, 3, x, mult);
  cr_assert_eq(k.m, 8 + 6);
  cr_assert_eq(fea_knots_num_functions(&k), 10);
  cr_assert_eq(k.nelem, 4);
  const fea_index want[] = {3, 4, 7, 9};
  for (int e = 0; e < 4; e++)
    cr_assert_eq(k.span[e], want[e], "span[%d] = %lld", e, (long long)k.span[e]);
  fea_knots_free(&k);
}

Test(knots, find_span_brackets_every_point) {
  for (int p = 1; p <= MAXP; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c);
      double x[400];
      int n = sample_points(&k, 300, 7 + p, x);
      for (int i = 0; i < n; i++) {
        fea_index s = fea_knots_find_span(&k, x[i]);
        cr_assert(s >= p && s < fea_knots_num_functions(&k), "span %lld out of range",
                  (long long)s);
        cr_assert(k.t[s] < k.t[s + 1], "span %lld is empty", (long long)s);
        if (x[i] < k.t[k.m - 1])
          cr_assert(k.t[s] <= x[i] && x[i] < k.t[s + 1], "p=%d case %d: x=%.17g not in span %lld",
                    p, c, x[i], (long long)s);
        else
          cr_assert_eq(s, k.span[k.nelem - 1], "the right end belongs to the last element");
      }
      /* Outside the range: clamped to the first and last elements. */
      cr_assert_eq(fea_knots_find_span(&k, k.t[0] - 1.0), k.span[0]);
      cr_assert_eq(fea_knots_find_span(&k, k.t[k.m - 1] + 1.0), k.span[k.nelem - 1]);
      fea_knots_free(&k);
    }
}

Test(basis, values_match_the_recursive_definition) {
  for (int p = 1; p <= MAXP; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c);
      double x[400], v[MAXP + 1];
      int n = sample_points(&k, 100, 11 + p, x);
      fea_index nf = fea_knots_num_functions(&k);
      for (int i = 0; i < n; i++) {
        fea_index s = fea_knots_find_span(&k, x[i]);
        fea_bspline_basis_ders(&k, s, x[i], 0, v);
        /* Functions s-p..s as computed; every other function is zero at x. */
        for (fea_index f = 0; f < nf; f++) {
          double ref = ref_basis(&k, f, p, x[i]);
          double got = (f >= s - p && f <= s) ? v[f - (s - p)] : 0.0;
          cr_assert(fabs(got - ref) <= 1e-14, "p=%d case %d x=%.17g N_%lld: %.17g vs %.17g", p, c,
                    x[i], (long long)f, got, ref);
        }
      }
      fea_knots_free(&k);
    }
}

Test(basis, partition_of_unity_and_non_negative) {
  for (int p = 1; p <= MAXP; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c);
      double x[600], v[MAXP + 1];
      int n = sample_points(&k, 500, 13 + p, x);
      for (int i = 0; i < n; i++) {
        fea_index s = fea_knots_find_span(&k, x[i]);
        fea_bspline_basis_ders(&k, s, x[i], 0, v);
        double sum = 0.0;
        for (int j = 0; j <= p; j++) {
          cr_assert(v[j] >= 0.0, "p=%d case %d x=%.17g: N_%lld = %g < 0", p, c, x[i],
                    (long long)(s - p + j), v[j]);
          sum += v[j];
        }
        cr_assert(fabs(sum - 1.0) <= 1e-14, "p=%d case %d x=%.17g: sum %.17g", p, c, x[i], sum);
      }
      fea_knots_free(&k);
    }
}

/* Function i is positive inside exactly the elements of [t_i, t_{i+p+1}]:
 * at most p + 1 of them, and p + 1 for interior functions of uniform knots. */
Test(basis, support_is_p_plus_1_spans) {
  for (int p = 1; p <= MAXP; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c);
      fea_index nf = fea_knots_num_functions(&k);
      int count[64] = {0};
      double v[MAXP + 1];
      for (fea_index e = 0; e < k.nelem; e++) {
        fea_index s = k.span[e];
        double mid = 0.5 * (k.t[s] + k.t[s + 1]);
        fea_bspline_basis_ders(&k, s, mid, 0, v);
        for (int j = 0; j <= p; j++) {
          fea_index f = s - p + j;
          int inside = k.t[f] <= k.t[s] && k.t[s + 1] <= k.t[f + p + 1];
          cr_assert(inside && v[j] > 0.0, "p=%d case %d: N_%lld on element %lld", p, c,
                    (long long)f, (long long)e);
          count[f]++;
        }
      }
      int maxcount = 0;
      for (fea_index f = 0; f < nf; f++) {
        int spans = 0; /* non-empty spans in [t_f, t_{f+p+1}] */
        for (fea_index s = f; s <= f + p; s++) spans += k.t[s] < k.t[s + 1];
        cr_assert_eq(count[f], spans, "p=%d case %d: N_%lld lives on %d elements, expected %d", p,
                     c, (long long)f, count[f], spans);
        cr_assert(count[f] >= 1 && count[f] <= p + 1);
        maxcount = count[f] > maxcount ? count[f] : maxcount;
      }
      if (c == 1 && p + 1 <= k.nelem) cr_assert_eq(maxcount, p + 1, "p=%d: interior support", p);
      fea_knots_free(&k);
    }
}

/* The kd-th derivative against the central difference of the (kd-1)-th, both
 * on the same span (the basis is one polynomial there): error O(h^2) from
 * truncation plus eps / h from rounding, relative to the derivatives' size. */
Test(basis, derivatives_match_central_differences) {
  for (int p = 1; p <= MAXP; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c);
      uint64_t seed = 99 + p;
      for (fea_index e = 0; e < k.nelem; e++) {
        fea_index s = k.span[e];
        double len = k.t[s + 1] - k.t[s], h = 1e-5 * len;
        for (int trial = 0; trial < 5; trial++) {
          double x = k.t[s] + len * (0.05 + 0.9 * rnd(&seed));
          double d[(MAXP + 1) * (MAXP + 1)], dp[(MAXP + 1) * (MAXP + 1)],
              dm[(MAXP + 1) * (MAXP + 1)];
          fea_bspline_basis_ders(&k, s, x, p, d);
          fea_bspline_basis_ders(&k, s, x + h, p, dp);
          fea_bspline_basis_ders(&k, s, x - h, p, dm);
          for (int kd = 1; kd <= p; kd++) {
            double scale = 0.0;
            for (int j = 0; j <= p; j++)
              scale = fmax(scale,
                           fmax(fabs(d[kd * (p + 1) + j]), fabs(d[(kd - 1) * (p + 1) + j]) / len));
            for (int j = 0; j <= p; j++) {
              double fd = (dp[(kd - 1) * (p + 1) + j] - dm[(kd - 1) * (p + 1) + j]) / (2 * h);
              double got = d[kd * (p + 1) + j];
              cr_assert(fabs(fd - got) <= 1e-7 * scale,
                        "p=%d case %d x=%.17g: d^%d N_%lld = %.12g, "
                        "finite difference %.12g (scale %g)",
                        p, c, x, kd, (long long)(s - p + j), got, fd, scale);
            }
          }
        }
      }
      fea_knots_free(&k);
    }
}

Test(basis, derivatives_sum_to_zero_and_vanish_above_p) {
  for (int p = 1; p <= MAXP; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c);
      double x[200];
      int n = sample_points(&k, 100, 5 + p, x);
      for (int i = 0; i < n; i++) {
        fea_index s = fea_knots_find_span(&k, x[i]);
        double d[(MAXP + 3) * (MAXP + 1)];
        fea_bspline_basis_ders(&k, s, x[i], p + 2, d);
        for (int kd = 1; kd <= p + 2; kd++) {
          double sum = 0.0, mag = 0.0;
          for (int j = 0; j <= p; j++) {
            sum += d[kd * (p + 1) + j];
            mag = fmax(mag, fabs(d[kd * (p + 1) + j]));
            if (kd > p)
              cr_assert(d[kd * (p + 1) + j] == 0.0, "d^%d of degree %d is not zero", kd, p);
          }
          cr_assert(fabs(sum) <= 1e-12 * fmax(mag, 1.0),
                    "p=%d case %d x=%g: sum of d^%d = %g (size %g)", p, c, x[i], kd, sum, mag);
        }
      }
      fea_knots_free(&k);
    }
}

/* The many-points form (reciprocals of the knot differences once per span)
 * agrees with the one-point form to rounding, values and first derivatives. */
Test(basis, points_form_matches_one_point_form) {
  for (int p = 1; p <= MAXP; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c);
      uint64_t seed = 7 + p;
      for (fea_index e = 0; e < k.nelem; e++) {
        fea_index s = k.span[e];
        const double len = k.t[s + 1] - k.t[s];
        double x[6], got[6 * 2 * (MAXP + 1)];
        x[0] = k.t[s], x[1] = k.t[s + 1];
        for (int i = 2; i < 6; i++) x[i] = k.t[s] + len * rnd(&seed);
        const int ld = 2 * (MAXP + 1);
        fea_bspline_basis_ders1_points(&k, s, 6, x, ld, got);
        for (int i = 0; i < 6; i++) {
          double want[2 * (MAXP + 1)], scale[2] = {0, 0};
          fea_bspline_basis_ders(&k, s, x[i], 1, want);
          for (int kd = 0; kd < 2; kd++)
            for (int j = 0; j <= p; j++) scale[kd] = fmax(scale[kd], fabs(want[kd * (p + 1) + j]));
          for (int kd = 0; kd < 2; kd++)
            for (int j = 0; j <= p; j++)
              cr_assert(fabs(got[i * ld + kd * (p + 1) + j] - want[kd * (p + 1) + j]) <=
                            1e-13 * scale[kd],
                        "p=%d case %d x=%.17g: d^%d N_%lld = %.17g, one-point form %.17g", p, c,
                        x[i], kd, (long long)(s - p + j), got[i * ld + kd * (p + 1) + j],
                        want[kd * (p + 1) + j]);
        }
      }
      fea_knots_free(&k);
    }
}

/* At a knot of multiplicity m the basis is C^(p-m): derivatives 0..p-m agree
 * from both sides, derivative p-m+1 jumps. */
Test(basis, continuity_at_a_knot_of_multiplicity_m) {
  for (int p = 1; p <= MAXP; p++)
    for (int m = 1; m <= p; m++) {
      const double x[] = {0.3, 0.5, 0.8};
      const int mult[] = {1, m, 1};
      fea_knots k = make_knots(p, 0.0, 1.0, 3, x, mult);
      fea_index sr = fea_knots_find_span(&k, 0.5), sl = sr - m;
      cr_assert(k.t[sr] == 0.5 && k.t[sl + 1] == 0.5 && k.t[sl] < 0.5);
      double dl[(MAXP + 1) * (MAXP + 1)], dr[(MAXP + 1) * (MAXP + 1)];
      fea_bspline_basis_ders(&k, sl, 0.5, p, dl);
      fea_bspline_basis_ders(&k, sr, 0.5, p, dr);
      for (int kd = 0; kd <= p - m + 1; kd++) {
        double jump = 0.0, scale = 0.0;
        /* Every function non-zero on either side; absent on a side means zero there. */
        for (fea_index f = sl - p; f <= sr; f++) {
          double l = (f <= sl) ? dl[kd * (p + 1) + (f - (sl - p))] : 0.0;
          double r = (f >= sr - p) ? dr[kd * (p + 1) + (f - (sr - p))] : 0.0;
          jump = fmax(jump, fabs(l - r));
          scale = fmax(scale, fmax(fabs(l), fabs(r)));
        }
        if (kd <= p - m)
          cr_assert(jump <= 1e-12 * scale, "p=%d m=%d: d^%d jumps by %g (size %g)", p, m, kd, jump,
                    scale);
        else
          cr_assert(jump >= 1e-3 * scale && scale > 0, "p=%d m=%d: d^%d should jump (%g, size %g)",
                    p, m, kd, jump, scale);
      }
      fea_knots_free(&k);
    }
}

Test(greville, points_are_ordered_and_reproduce_x) {
  for (int p = 1; p <= MAXP; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c);
      fea_index n = fea_knots_num_functions(&k);
      double g[64];
      fea_knots_greville(&k, g);
      cr_assert(g[0] == k.t[0] && g[n - 1] == k.t[k.m - 1], "p=%d case %d: ends %.17g %.17g", p, c,
                g[0], g[n - 1]);
      for (fea_index i = 1; i < n; i++)
        cr_assert(g[i] > g[i - 1], "p=%d case %d: g not increasing", p, c);
      /* Linear precision: sum_i g_i N_i(x) = x. */
      double x[300];
      int np = sample_points(&k, 200, 3 + p, x);
      double scale = fmax(fabs(k.t[0]), fabs(k.t[k.m - 1]));
      for (int i = 0; i < np; i++) {
        double u = spline_eval(&k, g, x[i]);
        cr_assert(fabs(u - x[i]) <= 1e-14 * scale, "p=%d case %d: %.17g at x=%.17g", p, c, u, x[i]);
      }
      fea_knots_free(&k);
    }
}

/* Collocation at the Greville points recovers a spline's coefficients. */
Test(greville, solve_recovers_spline_coefficients) {
  for (int p = 1; p <= MAXP; p++)
    for (int c = 0; c < NUM_CASES; c++) {
      fea_knots k = knot_case(p, c);
      fea_index n = fea_knots_num_functions(&k);
      double coef[2][64], g[64], b[2 * 64];
      uint64_t seed = 1234 + p;
      fea_knots_greville(&k, g);
      for (int r = 0; r < 2; r++) {
        for (fea_index i = 0; i < n; i++) coef[r][i] = 2 * rnd(&seed) - 1;
        for (fea_index i = 0; i < n; i++) b[r * 64 + i] = spline_eval(&k, coef[r], g[i]);
      }
      cr_assert_eq(fea_knots_greville_solve(NULL, &k, 2, b, 64), FEA_SUCCESS);
      for (int r = 0; r < 2; r++)
        for (fea_index i = 0; i < n; i++)
          cr_assert(fabs(b[r * 64 + i] - coef[r][i]) <= 1e-13,
                    "p=%d case %d rhs %d: c_%lld %.17g vs %.17g", p, c, r, (long long)i,
                    b[r * 64 + i], coef[r][i]);
      fea_knots_free(&k);
    }
}

/* --- bad input: each message names the value, and nothing is returned --- */

static void expect_bad(int p, int m, const double *t, const char *needle) {
  fea_knots k;
  memset(&k, 0x5a, sizeof k);
  cr_assert_eq(fea_knots_create(NULL, p, m, t, &k), FEA_ERR_INVALID_ARG, "accepted (p=%d): %s", p,
               needle);
  expect_msg(needle);
  cr_assert_null(k.t);
  cr_assert_null(k.span);
}

Test(knots_errors, decreasing_knots) {
  const double t[] = {0, 0, 0, 0.25, 0.5, 0.75, 0.5, 1, 1, 1};
  expect_bad(2, 10, t, "knot vector is not non-decreasing at index 6 (0.5 after 0.75)");
}

Test(knots_errors, degree_0_and_9) {
  const double t[20] = {0};
  expect_bad(0, 4, t, "degree 0 is outside 1..8");
  expect_bad(9, 20, t, "degree 9 is outside 1..8");
  fea_knots k;
  cr_assert_eq(fea_knots_uniform(NULL, 9, 3, 0, 1, &k), FEA_ERR_INVALID_ARG);
  expect_msg("degree 9 is outside 1..8");
  cr_assert_eq(fea_knots_uniform(NULL, 0, 3, 0, 1, &k), FEA_ERR_INVALID_ARG);
  expect_msg("degree 0 is outside 1..8");
}

Test(knots_errors, interior_multiplicity_above_p) {
  const double t[] = {0, 0, 0, 0.5, 0.5, 0.5, 1, 1, 1};
  expect_bad(2, 9, t, "interior knot 0.5 at index 3 has multiplicity 3, above the degree 2");
  /* p itself is fine (a C0 separator). */
  fea_knots k;
  const double ok[] = {0, 0, 0, 0.5, 0.5, 1, 1, 1};
  cr_assert_eq(fea_knots_create(NULL, 2, 8, ok, &k), FEA_SUCCESS);
  fea_knots_free(&k);
}

Test(knots_errors, nan_and_infinite_knots) {
  const double t[] = {0, 0, 0, 0.25, NAN, 0.75, 1, 1, 1};
  expect_bad(2, 9, t, "non-finite knot nan at index 4");
  const double u[] = {0, 0, 0, 0.25, 0.5, 0.75, 1, 1, INFINITY};
  expect_bad(2, 9, u, "non-finite knot inf at index 8");
}

Test(knots_errors, ends_not_open) {
  const double few[] = {0, 0, 0.25, 0.5, 1, 1, 1};
  expect_bad(2, 7, few, "the first knot 0 has multiplicity 2, expected p + 1 = 3");
  const double many[] = {0, 0, 0, 0.5, 1, 1, 1, 1};
  expect_bad(2, 8, many, "the last knot 1 has multiplicity 4, expected p + 1 = 3");
  const double flat[] = {1, 1, 1, 1, 1, 1};
  expect_bad(2, 6, flat, "the first knot 1 has multiplicity 6");
}

Test(knots_errors, too_few_knots_and_null) {
  const double t[] = {0, 0, 1, 1};
  expect_bad(2, 4, t, "has 4 knots; degree 2 needs 6..");
  expect_bad(2, 6, NULL, "knot vector is NULL");
}

Test(knots_errors, uniform_bad_counts_and_ranges) {
  fea_knots k;
  cr_assert_eq(fea_knots_uniform(NULL, 2, 0, 0, 1, &k), FEA_ERR_INVALID_ARG);
  expect_msg("0 elements requested");
  cr_assert_null(k.t);
  cr_assert_eq(fea_knots_uniform(NULL, 2, -3, 0, 1, &k), FEA_ERR_INVALID_ARG);
  expect_msg("-3 elements requested");
  cr_assert_eq(fea_knots_uniform(NULL, 2, 4, 1, 1, &k), FEA_ERR_INVALID_ARG);
  expect_msg("[1, 1]");
  cr_assert_eq(fea_knots_uniform(NULL, 2, 4, 0, NAN, &k), FEA_ERR_INVALID_ARG);
  expect_msg("[0, nan]");
}

Test(knots_errors, direction_is_named_by_check) {
  const double t[] = {0, 0, 0.5, 0.25, 1, 1};
  cr_assert_eq(fea_knots_check(NULL, 1, 1, 6, t), FEA_ERR_INVALID_ARG);
  expect_msg("knot vector of direction 1 is not non-decreasing at index 3 (0.25 after 0.5)");
  cr_assert_eq(fea_knots_check(NULL, 2, 9, 6, t), FEA_ERR_INVALID_ARG);
  expect_msg("degree 9 in direction 2 is outside 1..8");
}
