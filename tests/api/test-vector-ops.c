/* Vector arithmetic on each backend: axpy, scale, dot, nrm2.
 *
 * Two kinds of checks:
 *  - exact: small integers whose products and partial sums are exact in every
 *    precision and summation order, so the result must be equal;
 *  - rounded: general values, compared with a loop in long double over the
 *    values as stored (read back from the vector), with error bounds built
 *    from the unit roundoff u of the storage format and cu of the arithmetic
 *    (f16/bf16 are computed on in f32):
 *      axpy  |err_i| <= (2u + 4cu)(|y_i| + |alpha x_i|)   alpha, product, sum,
 *                                                        final store
 *      scale |err_i| <= (2u + 3cu)|alpha x_i|
 *      dot   |err|   <= n cu / (1 - n cu) sum |x_i y_i|  (Higham, Thm 3.1: any
 *                                                        summation order)
 *      nrm2  |err|   <= (n + 2) cu ||x||                 (sum of squares, sqrt)
 *    plus half the smallest subnormal of the format where a result may
 *    underflow. For n = 1000 that is 1.1e-13 (f64) and 6e-5 (f32) relative to
 *    sum |x_i y_i|; computing f64 data in f32, or f32 data in f16, exceeds it. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

#include "api-common.h"

static const fea_index lengths[] = {0, 1, 1000, 100003};
#define NUM_LENGTHS 4

/* A vector of precision p holding f(i) rounded to p; vals gets what is stored. */
static fea_vector *make_vector(fea_context *ctx, fea_precision p, fea_index n,
                               double (*f)(fea_index), double *vals) {
  fea_vector *v = NULL;
  OK(fea_vector_create(ctx, n, p, &v));
  for (fea_index i = 0; i < n; i++) vals[i] = f(i);
  OK(fea_vector_write(v, n, FEA_F64, vals));
  OK(fea_vector_read(v, n, FEA_F64, vals));
  return v;
}

static double small_int_x(fea_index i) { return (double)((i * 7) % 17) - 8.0; }
static double small_int_y(fea_index i) { return (double)((i * 5 + 3) % 17) - 8.0; }
static double wave_x(fea_index i) { return sin(0.37 * (double)i + 0.1); }
static double wave_y(fea_index i) { return 1.5 * cos(0.91 * (double)i); }

static double *doubles(fea_index n) {
  double *d = malloc((size_t)(n + 1) * sizeof *d);
  cr_assert_not_null(d);
  return d;
}

/* Integers in [-8, 8]: y + 2x, -3x and x.y (|x.y| <= 64 n < 2^24) are exact. */
BACKEND_TEST(vector_ops, exact_integers) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  for (int l = 0; l < NUM_LENGTHS; l++) {
    fea_index n = lengths[l];
    double *x = doubles(n), *y = doubles(n), *out = doubles(n);
    for (int p = 0; p < NUM_PRECISIONS; p++) {
      fea_precision vp = all_precisions[p];
      fea_vector *vx = make_vector(ctx, vp, n, small_int_x, x);
      fea_vector *vy = make_vector(ctx, vp, n, small_int_y, y);
      double want = 0, got = 99;
      for (fea_index i = 0; i < n; i++) want += x[i] * y[i];
      OK(fea_vector_dot(vx, vy, &got));
      cr_assert_eq(got, want, "%s n=%lld: dot %.17g, expected %.17g", fea_precision_name(vp),
                   (long long)n, got, want);
      double sq = 0;
      for (fea_index i = 0; i < n; i++) sq += x[i] * x[i];
      OK(fea_vector_nrm2(vx, &got));
      cr_assert(fabs(got - sqrt(sq)) <= (double)(n + 2) * compute_roundoff(vp) * sqrt(sq),
                "%s n=%lld: nrm2 %.17g, expected %.17g", fea_precision_name(vp), (long long)n, got,
                sqrt(sq));
      OK(fea_vector_axpy(vy, 2.0, vx));
      OK(fea_vector_read(vy, n, FEA_F64, out));
      for (fea_index i = 0; i < n; i++)
        cr_assert_eq(out[i], y[i] + 2 * x[i], "%s axpy[%lld] = %g", fea_precision_name(vp),
                     (long long)i, out[i]);
      OK(fea_vector_scale(vx, -3.0));
      OK(fea_vector_read(vx, n, FEA_F64, out));
      for (fea_index i = 0; i < n; i++)
        cr_assert_eq(out[i], -3 * x[i], "%s scale[%lld] = %g", fea_precision_name(vp), (long long)i,
                     out[i]);
      OK(fea_vector_destroy(&vx));
      OK(fea_vector_destroy(&vy));
    }
    free(x);
    free(y);
    free(out);
  }
  OK(fea_context_destroy(&ctx));
}

BACKEND_TEST(vector_ops, axpy_rounded) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  const double alpha = 0.1; /* not exact in any format: its rounding counts */
  for (int l = 1; l < NUM_LENGTHS; l++) {
    fea_index n = lengths[l];
    double *x = doubles(n), *y = doubles(n), *out = doubles(n);
    for (int p = 0; p < NUM_PRECISIONS; p++) {
      fea_precision vp = all_precisions[p];
      double u = unit_roundoff(vp), cu = compute_roundoff(vp);
      fea_vector *vx = make_vector(ctx, vp, n, wave_x, x);
      fea_vector *vy = make_vector(ctx, vp, n, wave_y, y);
      OK(fea_vector_axpy(vy, alpha, vx));
      OK(fea_vector_read(vy, n, FEA_F64, out));
      for (fea_index i = 0; i < n; i++) {
        long double ref = (long double)y[i] + (long double)alpha * x[i];
        double tol = (2 * u + 4 * cu) * (fabs(y[i]) + fabs(alpha * x[i])) + underflow_error(vp);
        cr_assert(fabsl(out[i] - ref) <= tol, "%s n=%lld axpy[%lld]: %.17g vs %.17Lg (tol %.3g)",
                  fea_precision_name(vp), (long long)n, (long long)i, out[i], ref, tol);
      }
      /* x is input only. */
      OK(fea_vector_read(vx, n, FEA_F64, out));
      cr_assert(memcmp(out, x, (size_t)n * sizeof *x) == 0, "axpy changed x");
      OK(fea_vector_destroy(&vx));
      OK(fea_vector_destroy(&vy));
    }
    free(x);
    free(y);
    free(out);
  }
  OK(fea_context_destroy(&ctx));
}

BACKEND_TEST(vector_ops, scale_rounded) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  const double alpha = 1.3;
  for (int l = 1; l < NUM_LENGTHS; l++) {
    fea_index n = lengths[l];
    double *x = doubles(n), *out = doubles(n);
    for (int p = 0; p < NUM_PRECISIONS; p++) {
      fea_precision vp = all_precisions[p];
      double u = unit_roundoff(vp), cu = compute_roundoff(vp);
      fea_vector *vx = make_vector(ctx, vp, n, wave_x, x);
      OK(fea_vector_scale(vx, alpha));
      OK(fea_vector_read(vx, n, FEA_F64, out));
      for (fea_index i = 0; i < n; i++) {
        long double ref = (long double)alpha * x[i];
        double tol = (2 * u + 3 * cu) * fabs(alpha * x[i]) + underflow_error(vp);
        cr_assert(fabsl(out[i] - ref) <= tol, "%s n=%lld scale[%lld]: %.17g vs %.17Lg",
                  fea_precision_name(vp), (long long)n, (long long)i, out[i], ref);
      }
      OK(fea_vector_destroy(&vx));
    }
    free(x);
    free(out);
  }
  OK(fea_context_destroy(&ctx));
}

BACKEND_TEST(vector_ops, dot_rounded) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  for (int l = 1; l < NUM_LENGTHS; l++) {
    fea_index n = lengths[l];
    double *x = doubles(n), *y = doubles(n);
    for (int p = 0; p < NUM_PRECISIONS; p++) {
      fea_precision vp = all_precisions[p];
      double cu = compute_roundoff(vp);
      fea_vector *vx = make_vector(ctx, vp, n, wave_x, x);
      fea_vector *vy = make_vector(ctx, vp, n, wave_y, y);
      long double ref = 0, abs_sum = 0;
      for (fea_index i = 0; i < n; i++) {
        ref += (long double)x[i] * y[i];
        abs_sum += fabsl((long double)x[i] * y[i]);
      }
      double gamma = (double)n * cu / (1 - (double)n * cu);
      /* the reference's own error, and its rounding to double */
      double ref_err = (double)n * LDBL_EPSILON * (double)abs_sum + 0x1p-53 * fabs((double)ref);
      double tol = gamma * (double)abs_sum + ref_err;
      double got = NAN, got_yx = NAN;
      OK(fea_vector_dot(vx, vy, &got));
      cr_assert(fabsl(got - ref) <= tol, "%s n=%lld: dot %.17g vs %.17Lg (tol %.3g)",
                fea_precision_name(vp), (long long)n, got, ref, tol);
      OK(fea_vector_dot(vy, vx, &got_yx));
      cr_assert(fabsl(got_yx - ref) <= tol, "%s n=%lld: dot(y, x) %.17g vs %.17Lg",
                fea_precision_name(vp), (long long)n, got_yx, ref);
      OK(fea_vector_destroy(&vx));
      OK(fea_vector_destroy(&vy));
    }
    free(x);
    free(y);
  }
  OK(fea_context_destroy(&ctx));
}

BACKEND_TEST(vector_ops, nrm2_rounded) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  for (int l = 1; l < NUM_LENGTHS; l++) {
    fea_index n = lengths[l];
    double *x = doubles(n);
    for (int p = 0; p < NUM_PRECISIONS; p++) {
      fea_precision vp = all_precisions[p];
      fea_vector *vx = make_vector(ctx, vp, n, wave_x, x);
      long double sq = 0;
      for (fea_index i = 0; i < n; i++) sq += (long double)x[i] * x[i];
      long double ref = sqrtl(sq);
      double tol = ((double)(n + 2) * compute_roundoff(vp) + (double)n * LDBL_EPSILON) *
                   (double)ref;
      double got = NAN;
      OK(fea_vector_nrm2(vx, &got));
      cr_assert(fabsl(got - ref) <= tol, "%s n=%lld: nrm2 %.17g vs %.17Lg (tol %.3g)",
                fea_precision_name(vp), (long long)n, got, ref, tol);
      OK(fea_vector_destroy(&vx));
    }
    free(x);
  }
  OK(fea_context_destroy(&ctx));
}

static double huge_f64(fea_index i) { return (i % 2 ? -1e200 : 1e200); }
static double huge_f32(fea_index i) { return (i % 2 ? -1e30 : 1e30); }
static double huge_f16(fea_index i) { return (i % 2 ? -60000.0 : 60000.0); }

/* Entries whose squares overflow the format: the norm must not. */
BACKEND_TEST(vector_ops, nrm2_no_overflow) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  static const fea_index ns[] = {1, 1000, 100003};
  for (int l = 0; l < 3; l++) {
    fea_index n = ns[l];
    double *x = doubles(n);
    static const struct {
      fea_precision p;
      double (*f)(fea_index);
    } cases[] = {{FEA_F64, huge_f64},
                 {FEA_F32, huge_f32},
                 {FEA_F16, huge_f16},
                 {FEA_BF16, huge_f32}};
    for (int c = 0; c < 4; c++) {
      fea_vector *vx = make_vector(ctx, cases[c].p, n, cases[c].f, x);
      double ref = fabs(x[0]) * sqrt((double)n); /* all entries have one magnitude */
      double got = NAN;
      OK(fea_vector_nrm2(vx, &got));
      double tol = (double)(n + 2) * compute_roundoff(cases[c].p) * ref;
      cr_assert(isfinite(got) && fabs(got - ref) <= tol,
                "%s n=%lld: nrm2 of |x_i| = %g is %g, expected %g", fea_precision_name(cases[c].p),
                (long long)n, fabs(x[0]), got, ref);
      OK(fea_vector_destroy(&vx));
    }
    free(x);
  }
  OK(fea_context_destroy(&ctx));
}

/* Empty vectors: dot and nrm2 write 0, axpy and scale do nothing. */
BACKEND_TEST(vector_ops, empty) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  for (int p = 0; p < NUM_PRECISIONS; p++) {
    fea_vector *x = NULL, *y = NULL;
    OK(fea_vector_create(ctx, 0, all_precisions[p], &x));
    OK(fea_vector_create(ctx, 0, all_precisions[p], &y));
    double r = 99;
    OK(fea_vector_dot(x, y, &r));
    cr_assert_eq(r, 0.0);
    r = 99;
    OK(fea_vector_nrm2(x, &r));
    cr_assert_eq(r, 0.0);
    OK(fea_vector_axpy(y, 2.0, x));
    OK(fea_vector_scale(x, 2.0));
    OK(fea_vector_set_all(x, 1.0));
    OK(fea_vector_copy(x, y));
    OK(fea_vector_write(x, 0, FEA_F64, NULL));
    OK(fea_vector_read(x, 0, FEA_F64, NULL));
    OK(fea_vector_destroy(&x));
    OK(fea_vector_destroy(&y));
  }
  OK(fea_context_destroy(&ctx));
}

/* dot and nrm2 return doubles: on the CPU backends a result above FLT_MAX is
 * finite for f32 and bf16 vectors too (entries near 3e38). The GPU carries
 * these reductions in FP32 (documented in vector.h), so it is not checked here. */
BACKEND_TEST(vector_ops, reductions_beyond_float_range) {
  if (strncmp(resource, "/cpu", 4) != 0) cr_skip_test("%s reduces in FP32 by design", resource);
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  static const fea_precision precs[] = {FEA_F32, FEA_BF16};
  enum { N = 1000 };
  static double x[N];
  for (int i = 0; i < N; i++) x[i] = 0x1p127; /* exact in f32 and bf16 */
  for (int k = 0; k < 2; k++) {
    fea_vector *v = NULL;
    OK(fea_vector_create(ctx, N, precs[k], &v));
    OK(fea_vector_write(v, N, FEA_F64, x));
    double norm = 0, dot = 0;
    OK(fea_vector_nrm2(v, &norm));
    OK(fea_vector_dot(v, v, &dot));
    double want_norm = 0x1p127 * sqrt((double)N), want_dot = (double)N * 0x1p254;
    cr_expect(fabs(norm - want_norm) <= 1e-6 * want_norm, "%s nrm2 = %g, want %g",
              fea_precision_name(precs[k]), norm, want_norm);
    cr_expect(fabs(dot - want_dot) <= 1e-6 * want_dot, "%s dot = %g, want %g",
              fea_precision_name(precs[k]), dot, want_dot);
    OK(fea_vector_destroy(&v));
  }
  OK(fea_context_destroy(&ctx));
}
