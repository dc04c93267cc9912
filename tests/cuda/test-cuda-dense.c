/* /gpu/cuda dense ops against /cpu/ref on the same data, and against exact
 * solutions where there is one. Matrices carry leading dimensions larger than
 * their row counts, and the entries an op must not touch (padding rows, the
 * other triangle) are checked to be unchanged. */
#include <stdio.h>
#include <string.h>

#include "cuda-test.h"
#include "linalg/dense.h"

/* A matrix on one context, with the host copy of what was uploaded. */
typedef struct mat {
  fea_vector *v;
  fea_dmat m;
  fea_index len; /* ld * cols */
} mat;

static mat mat_from(fea_context *ctx, fea_precision p, const double *data, fea_index rows,
                    fea_index cols, fea_index ld) {
  mat a;
  a.len = ld * cols;
  a.v = vector_from(ctx, p, data, a.len);
  OK(fea_dmat_from_vector(a.v, rows, cols, ld, &a.m));
  return a;
}

static void mat_free(mat *a) { OK(fea_vector_destroy(&a->v)); }

static double *mat_values(const mat *a) { return vector_values(a->v, a->len); }

static const char *tname(fea_transpose t) { return t == FEA_TRANS ? "T" : "N"; }
static const char *uname(fea_uplo u) { return u == FEA_UPPER ? "U" : "L"; }

/* Entry (i, j) of op(A) for column-major A with leading dimension ld. */
static double op_at(const double *a, fea_index ld, fea_transpose t, fea_index i, fea_index j) {
  return t == FEA_TRANS ? a[j + i * ld] : a[i + j * ld];
}

static int in_triangle(fea_uplo u, fea_index i, fea_index j) {
  return u == FEA_UPPER ? i <= j : i >= j;
}

/* ---------------------------------------------------------------- gemm */

static void check_gemm(fea_precision prec, fea_transpose ta, fea_transpose tb) {
  const fea_index m = 13, n = 9, k = 11;
  const double alpha = 1.25, beta = -0.5;
  fea_index ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  fea_index lda = ar + 3, ldb = br + 2, ldc = m + 5;
  double *a = random_array((size_t)(lda * ac), 10);
  double *b = random_array((size_t)(ldb * bc), 11);
  double *c = random_array((size_t)(ldc * n), 12);

  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  mat ga = mat_from(gpu, prec, a, ar, ac, lda), gb = mat_from(gpu, prec, b, br, bc, ldb);
  mat gc = mat_from(gpu, prec, c, m, n, ldc);
  mat ra = mat_from(ref, prec, a, ar, ac, lda), rb = mat_from(ref, prec, b, br, bc, ldb);
  mat rc = mat_from(ref, prec, c, m, n, ldc);
  double *as = mat_values(&ga), *bs = mat_values(&gb), *cs = mat_values(&gc);

  OK(fea_dense_gemm(gpu, ta, tb, alpha, &ga.m, &gb.m, beta, &gc.m, FEA_COMPUTE_DEFAULT));
  OK(fea_dense_gemm(ref, ta, tb, alpha, &ra.m, &rb.m, beta, &rc.m, FEA_COMPUTE_DEFAULT));
  double *g = mat_values(&gc), *r = mat_values(&rc);

  const double u = unit_roundoff(prec);
  for (fea_index j = 0; j < n; j++) {
    for (fea_index i = 0; i < ldc; i++) {
      double got = g[i + j * ldc];
      if (i >= m) {
        cr_assert_eq(got, cs[i + j * ldc], "gemm %s%s in %s wrote padding C(%lld,%lld)", tname(ta),
                     tname(tb), fea_precision_name(prec), (long long)i, (long long)j);
        continue;
      }
      double mag = fabs(beta * cs[i + j * ldc]);
      for (fea_index l = 0; l < k; l++)
        mag += fabs(alpha * op_at(as, lda, ta, i, l) * op_at(bs, ldb, tb, l, j));
      double bound = 2.0 * (double)(k + 2) * u * mag;
      cr_assert_leq(fabs(got - r[i + j * ldc]), bound,
                    "gemm %s%s in %s: C(%lld,%lld) gpu %.17g, ref %.17g", tname(ta), tname(tb),
                    fea_precision_name(prec), (long long)i, (long long)j, got, r[i + j * ldc]);
    }
  }
  free(a), free(b), free(c), free(as), free(bs), free(cs), free(g), free(r);
  mat_free(&ga), mat_free(&gb), mat_free(&gc), mat_free(&ra), mat_free(&rb), mat_free(&rc);
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

Test(cuda_dense, gemm_f64_all_transposes) {
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) check_gemm(FEA_F64, (fea_transpose)ta, (fea_transpose)tb);
}

Test(cuda_dense, gemm_f32_all_transposes) {
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) check_gemm(FEA_F32, (fea_transpose)ta, (fea_transpose)tb);
}

/* Reduced-precision GEMM against the FP64 product of the values actually
 * stored: FP32 accumulation over k terms (2 (k+2) u32), inputs rounded to
 * TF32 inside the tensor cores (2 u_tf32 per product, u_tf32 = 2^-11), and
 * one rounding of C to its storage format. */
static void check_low_precision_gemm(fea_precision in, fea_precision out, fea_compute compute) {
  const fea_index m = 16, n = 12, k = 40;
  const fea_index lda = m + 1, ldb = k + 3, ldc = m + 2;
  const double alpha = 0.5, beta = 0.25;
  double *a = random_array((size_t)(lda * k), 20);
  double *b = random_array((size_t)(ldb * n), 21);
  double *c = random_array((size_t)(ldc * n), 22);

  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  mat ga = mat_from(gpu, in, a, m, k, lda), gb = mat_from(gpu, in, b, k, n, ldb);
  mat gc = mat_from(gpu, out, c, m, n, ldc);
  double *as = mat_values(&ga), *bs = mat_values(&gb), *cs = mat_values(&gc);
  /* The reference sees exactly the stored values, in FP64. */
  mat ra = mat_from(ref, FEA_F64, as, m, k, lda), rb = mat_from(ref, FEA_F64, bs, k, n, ldb);
  mat rc = mat_from(ref, FEA_F64, cs, m, n, ldc);

  OK(fea_dense_gemm(gpu, FEA_NO_TRANS, FEA_NO_TRANS, alpha, &ga.m, &gb.m, beta, &gc.m, compute));
  OK(fea_dense_gemm(ref, FEA_NO_TRANS, FEA_NO_TRANS, alpha, &ra.m, &rb.m, beta, &rc.m,
                    FEA_COMPUTE_DEFAULT));
  double *g = mat_values(&gc), *r = mat_values(&rc);

  const double u32 = ldexp(1.0, -24), u_tf32 = ldexp(1.0, -11);
  const double per_product = compute == FEA_COMPUTE_TF32 ? 2.0 * u_tf32 : 0.0;
  for (fea_index j = 0; j < n; j++) {
    for (fea_index i = 0; i < m; i++) {
      double prod = 0.0;
      for (fea_index l = 0; l < k; l++) prod += fabs(alpha * as[i + l * lda] * bs[l + j * ldb]);
      double mag = prod + fabs(beta * cs[i + j * ldc]);
      double want = r[i + j * ldc];
      double bound = 2.0 * ((double)(k + 2) * u32 * mag + per_product * prod) +
                     unit_roundoff(out) * fabs(want);
      cr_assert_leq(fabs(g[i + j * ldc] - want), bound,
                    "gemm %s->%s%s: C(%lld,%lld) gpu %.9g, fp64 %.17g", fea_precision_name(in),
                    fea_precision_name(out), compute == FEA_COMPUTE_TF32 ? " (tf32)" : "",
                    (long long)i, (long long)j, g[i + j * ldc], want);
    }
  }
  free(a), free(b), free(c), free(as), free(bs), free(cs), free(g), free(r);
  mat_free(&ga), mat_free(&gb), mat_free(&gc), mat_free(&ra), mat_free(&rb), mat_free(&rc);
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

Test(cuda_dense, gemm_f16_inputs) {
  check_low_precision_gemm(FEA_F16, FEA_F32, FEA_COMPUTE_DEFAULT);
  check_low_precision_gemm(FEA_F16, FEA_F16, FEA_COMPUTE_DEFAULT);
}

Test(cuda_dense, gemm_bf16_inputs) {
  check_low_precision_gemm(FEA_BF16, FEA_F32, FEA_COMPUTE_DEFAULT);
  check_low_precision_gemm(FEA_BF16, FEA_BF16, FEA_COMPUTE_DEFAULT);
}

Test(cuda_dense, gemm_tf32) { check_low_precision_gemm(FEA_F32, FEA_F32, FEA_COMPUTE_TF32); }

/* ---------------------------------------------------------------- syrk */

static void check_syrk(fea_precision prec, fea_uplo uplo, fea_transpose trans) {
  const fea_index n = 10, k = 7;
  const double alpha = -0.75, beta = 1.5;
  fea_index ar = trans ? k : n, ac = trans ? n : k, lda = ar + 2, ldc = n + 3;
  double *a = random_array((size_t)(lda * ac), 30);
  double *c = random_array((size_t)(ldc * n), 31);

  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  mat ga = mat_from(gpu, prec, a, ar, ac, lda), gc = mat_from(gpu, prec, c, n, n, ldc);
  mat ra = mat_from(ref, prec, a, ar, ac, lda), rc = mat_from(ref, prec, c, n, n, ldc);
  double *as = mat_values(&ga), *cs = mat_values(&gc);

  OK(fea_dense_syrk(gpu, uplo, trans, alpha, &ga.m, beta, &gc.m));
  OK(fea_dense_syrk(ref, uplo, trans, alpha, &ra.m, beta, &rc.m));
  double *g = mat_values(&gc), *r = mat_values(&rc);

  for (fea_index j = 0; j < n; j++) {
    for (fea_index i = 0; i < ldc; i++) {
      double got = g[i + j * ldc];
      if (i >= n || !in_triangle(uplo, i, j)) {
        cr_assert_eq(got, cs[i + j * ldc], "syrk %s%s in %s changed C(%lld,%lld) outside %s",
                     uname(uplo), tname(trans), fea_precision_name(prec), (long long)i,
                     (long long)j, uname(uplo));
        continue;
      }
      double mag = fabs(beta * cs[i + j * ldc]);
      for (fea_index l = 0; l < k; l++)
        mag += fabs(alpha * op_at(as, lda, trans, i, l) * op_at(as, lda, trans, j, l));
      cr_assert_leq(fabs(got - r[i + j * ldc]), 2.0 * (double)(k + 2) * unit_roundoff(prec) * mag,
                    "syrk %s%s in %s: C(%lld,%lld) gpu %.17g, ref %.17g", uname(uplo), tname(trans),
                    fea_precision_name(prec), (long long)i, (long long)j, got, r[i + j * ldc]);
    }
  }
  free(a), free(c), free(as), free(cs), free(g), free(r);
  mat_free(&ga), mat_free(&gc), mat_free(&ra), mat_free(&rc);
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

Test(cuda_dense, syrk_all_uplo_and_transposes) {
  for (int p = 0; p < 2; p++)
    for (int u = 0; u < 2; u++)
      for (int t = 0; t < 2; t++) check_syrk(all_precs[p], (fea_uplo)u, (fea_transpose)t);
}

/* ---------------------------------------------------------------- trsm */

/* A triangular matrix with a dominant diagonal (well conditioned), and large
 * garbage in the other triangle that a correct trsm never reads. */
static double *triangular_array(fea_index n, fea_index ld, fea_uplo uplo, uint64_t seed) {
  double *a = random_array((size_t)(ld * n), seed);
  for (fea_index j = 0; j < n; j++) {
    for (fea_index i = 0; i < n; i++) {
      double *e = &a[i + j * ld];
      if (i == j)
        *e = 2.5 + *e;
      else if (in_triangle(uplo, i, j))
        *e *= 0.5 / (double)n;
      else
        *e = 1.0e3 * (*e + 2.0);
    }
  }
  return a;
}

static void check_trsm(fea_precision prec, fea_side side, fea_uplo uplo, fea_transpose trans,
                       fea_diag diag) {
  const fea_index m = 8, n = 6, na = side == FEA_LEFT ? m : n;
  const fea_index lda = na + 2, ldb = m + 1;
  const double alpha = 0.75;
  double *a = triangular_array(na, lda, uplo, 40);
  double *b = random_array((size_t)(ldb * n), 41);

  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  mat ga = mat_from(gpu, prec, a, na, na, lda), gb = mat_from(gpu, prec, b, m, n, ldb);
  mat ra = mat_from(ref, prec, a, na, na, lda), rb = mat_from(ref, prec, b, m, n, ldb);
  double *bs = mat_values(&gb);

  OK(fea_dense_trsm(gpu, side, uplo, trans, diag, alpha, &ga.m, &gb.m));
  OK(fea_dense_trsm(ref, side, uplo, trans, diag, alpha, &ra.m, &rb.m));
  double *g = mat_values(&gb), *r = mat_values(&rb);

  double xmax = 0.0;
  for (fea_index j = 0; j < n; j++)
    for (fea_index i = 0; i < m; i++) xmax = fmax(xmax, fabs(r[i + j * ldb]));
  /* Triangular solves are backward stable and A is well conditioned. */
  const double bound = 20.0 * (double)na * unit_roundoff(prec) * (xmax + 1.0);
  for (fea_index j = 0; j < n; j++) {
    for (fea_index i = 0; i < ldb; i++) {
      double got = g[i + j * ldb], want = i < m ? r[i + j * ldb] : bs[i + j * ldb];
      cr_assert_leq(fabs(got - want), i < m ? bound : 0.0,
                    "trsm side=%s uplo=%s trans=%s diag=%s in %s: B(%lld,%lld) gpu %.17g, "
                    "ref %.17g",
                    side == FEA_LEFT ? "L" : "R", uname(uplo), tname(trans),
                    diag == FEA_UNIT ? "U" : "N", fea_precision_name(prec), (long long)i,
                    (long long)j, got, want);
    }
  }
  free(a), free(b), free(bs), free(g), free(r);
  mat_free(&ga), mat_free(&gb), mat_free(&ra), mat_free(&rb);
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

Test(cuda_dense, trsm_all_sides_uplos_transposes_diags) {
  for (int p = 0; p < 2; p++)
    for (int s = 0; s < 2; s++)
      for (int u = 0; u < 2; u++)
        for (int t = 0; t < 2; t++)
          for (int d = 0; d < 2; d++)
            check_trsm(all_precs[p], (fea_side)s, (fea_uplo)u, (fea_transpose)t, (fea_diag)d);
}

/* ---------------------------------------------------------------- Cholesky */

/* S = M M^T + n I: symmetric positive definite with condition number <= n + 1.
 * The triangle potrf must not read holds garbage. */
static double *spd_array(fea_index n, fea_index ld, fea_uplo uplo, uint64_t seed) {
  double *mm = random_array((size_t)(n * n), seed);
  double *s = malloc((size_t)(ld * n) * sizeof *s);
  cr_assert_not_null(s);
  for (fea_index j = 0; j < n; j++) {
    for (fea_index i = 0; i < ld; i++) {
      double v = 0.0;
      if (i < n) {
        for (fea_index l = 0; l < n; l++) v += mm[i + l * n] * mm[j + l * n];
        if (i == j) v += (double)n;
        if (!in_triangle(uplo, i, j)) v = -7.0e3;
      }
      s[i + j * ld] = v;
    }
  }
  free(mm);
  return s;
}

/* The full symmetric matrix from the uplo triangle of s. */
static double sym_at(const double *s, fea_index ld, fea_uplo uplo, fea_index i, fea_index j) {
  return in_triangle(uplo, i, j) ? s[i + j * ld] : s[j + i * ld];
}

static void check_cholesky(fea_precision prec, fea_uplo uplo) {
  const fea_index n = 12, nrhs = 3, lda = n + 3, ldb = n + 1;
  double *s = spd_array(n, lda, uplo, 50);
  double *x0 = random_array((size_t)(ldb * nrhs), 51);
  double *b = malloc((size_t)(ldb * nrhs) * sizeof *b);
  for (fea_index j = 0; j < nrhs; j++) {
    for (fea_index i = 0; i < ldb; i++) {
      double v = 0.0;
      if (i < n)
        for (fea_index l = 0; l < n; l++) v += sym_at(s, lda, uplo, i, l) * x0[l + j * ldb];
      b[i + j * ldb] = v;
    }
  }

  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  mat ga = mat_from(gpu, prec, s, n, n, lda), gb = mat_from(gpu, prec, b, n, nrhs, ldb);
  mat ra = mat_from(ref, prec, s, n, n, lda), rb = mat_from(ref, prec, b, n, nrhs, ldb);

  OK(fea_dense_potrf(gpu, uplo, &ga.m));
  OK(fea_dense_potrf(ref, uplo, &ra.m));
  double *gf = mat_values(&ga), *rf = mat_values(&ra);
  double fmax_abs = 0.0;
  for (fea_index i = 0; i < ga.len; i++) fmax_abs = fmax(fmax_abs, fabs(rf[i]));
  for (fea_index j = 0; j < n; j++)
    for (fea_index i = 0; i < n; i++)
      if (in_triangle(uplo, i, j))
        cr_assert_leq(fabs(gf[i + j * lda] - rf[i + j * lda]),
                      8.0 * (double)n * unit_roundoff(prec) * fmax_abs,
                      "potrf %s in %s: factor(%lld,%lld) gpu %.17g, ref %.17g", uname(uplo),
                      fea_precision_name(prec), (long long)i, (long long)j, gf[i + j * lda],
                      rf[i + j * lda]);

  OK(fea_dense_potrs(gpu, uplo, &ga.m, &gb.m));
  OK(fea_dense_potrs(ref, uplo, &ra.m, &rb.m));
  double *gx = mat_values(&gb), *rx = mat_values(&rb);
  /* Forward error <= cond * (backward error + rounding of A and b on upload). */
  const double bound = 20.0 * (double)(n + 1) * (double)n * unit_roundoff(prec);
  for (fea_index j = 0; j < nrhs; j++) {
    for (fea_index i = 0; i < n; i++) {
      double got = gx[i + j * ldb];
      cr_assert_leq(fabs(got - x0[i + j * ldb]), bound,
                    "potrs %s in %s: x(%lld,%lld) = %.17g, exact %.17g", uname(uplo),
                    fea_precision_name(prec), (long long)i, (long long)j, got, x0[i + j * ldb]);
      cr_assert_leq(fabs(got - rx[i + j * ldb]), bound,
                    "potrs %s in %s: x(%lld,%lld) gpu %.17g, ref %.17g", uname(uplo),
                    fea_precision_name(prec), (long long)i, (long long)j, got, rx[i + j * ldb]);
    }
  }
  free(s), free(x0), free(b), free(gf), free(rf), free(gx), free(rx);
  mat_free(&ga), mat_free(&gb), mat_free(&ra), mat_free(&rb);
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

Test(cuda_dense, potrf_potrs_solve_spd_system) {
  for (int p = 0; p < 2; p++)
    for (int u = 0; u < 2; u++) check_cholesky(all_precs[p], (fea_uplo)u);
}

Test(cuda_dense, potrf_reports_the_failing_minor) {
  /* Leading minors 1, 2 positive, the third negative. */
  const fea_index n = 4;
  const double a[16] = {1.0, 0.5, 0.0,  0.0, 0.5, 2.0, 0.1, 0.0,
                        0.0, 0.1, -3.0, 0.2, 0.0, 0.0, 0.2, 4.0};
  fea_context *gpu = open_gpu();
  for (int p = 0; p < 2; p++) {
    for (int u = 0; u < 2; u++) {
      mat ga = mat_from(gpu, all_precs[p], a, n, n, n);
      fea_status st = fea_dense_potrf(gpu, (fea_uplo)u, &ga.m);
      cr_assert_eq(st, FEA_ERR_NOT_POSDEF, "potrf %s in %s returned %s: %s", uname((fea_uplo)u),
                   fea_precision_name(all_precs[p]), fea_status_string(st),
                   fea_context_last_error(gpu));
      cr_assert(strstr(fea_context_last_error(gpu), "order 3") != NULL,
                "message does not name minor 3: %s", fea_context_last_error(gpu));
      mat_free(&ga);
    }
  }
  OK(fea_context_destroy(&gpu));
}

/* ---------------------------------------------------------------- LU */

/* Rows of a diagonally dominant matrix in reverse order: partial pivoting
 * has one clear choice at every step, so both backends pivot alike. */
static double *pivoting_array(fea_index n, fea_index ld, uint64_t seed) {
  double *g = random_array((size_t)(n * n), seed);
  double *a = random_array((size_t)(ld * n), seed + 1);
  for (fea_index j = 0; j < n; j++)
    for (fea_index i = 0; i < n; i++) {
      double v = i == j ? 4.0 + 0.5 * g[i + j * n] : 0.2 * g[i + j * n];
      a[(n - 1 - i) + j * ld] = v;
    }
  free(g);
  return a;
}

static void check_lu(fea_precision prec, fea_transpose trans) {
  const fea_index n = 10, nrhs = 2, lda = n + 2, ldb = n + 4;
  double *a = pivoting_array(n, lda, 60);
  double *x0 = random_array((size_t)(ldb * nrhs), 62);
  double *b = malloc((size_t)(ldb * nrhs) * sizeof *b);

  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  mat ga = mat_from(gpu, prec, a, n, n, lda), ra = mat_from(ref, prec, a, n, n, lda);
  double *as = mat_values(&ga); /* A as stored, for the residual of P A = L U */
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < ldb; i++) {
      double v = 0.0;
      if (i < n)
        for (fea_index l = 0; l < n; l++) v += op_at(as, lda, trans, i, l) * x0[l + j * ldb];
      b[i + j * ldb] = v;
    }
  mat gb = mat_from(gpu, prec, b, n, nrhs, ldb), rb = mat_from(ref, prec, b, n, nrhs, ldb);

  fea_index gpiv[10], rpiv[10];
  OK(fea_dense_getrf(gpu, &ga.m, gpiv));
  OK(fea_dense_getrf(ref, &ra.m, rpiv));
  for (fea_index i = 0; i < n; i++) {
    cr_assert(gpiv[i] >= i + 1 && gpiv[i] <= n, "ipiv[%lld] = %lld is not in [%lld, %lld]",
              (long long)i, (long long)gpiv[i], (long long)(i + 1), (long long)n);
    cr_assert_eq(gpiv[i], rpiv[i], "getrf in %s: ipiv[%lld] gpu %lld, ref %lld",
                 fea_precision_name(prec), (long long)i, (long long)gpiv[i], (long long)rpiv[i]);
  }

  /* P A = L U, rebuilt on the host from the GPU's factors and pivots. */
  double *lu = mat_values(&ga);
  double *pa = malloc((size_t)(n * n) * sizeof *pa);
  for (fea_index j = 0; j < n; j++)
    for (fea_index i = 0; i < n; i++) pa[i + j * n] = as[i + j * lda];
  for (fea_index i = 0; i < n; i++) {
    fea_index p = gpiv[i] - 1;
    for (fea_index j = 0; j < n && p != i; j++) {
      double t = pa[i + j * n];
      pa[i + j * n] = pa[p + j * n];
      pa[p + j * n] = t;
    }
  }
  for (fea_index j = 0; j < n; j++) {
    for (fea_index i = 0; i < n; i++) {
      double v = 0.0, mag = 0.0;
      for (fea_index l = 0; l <= (i < j ? i : j); l++) {
        double lil = l == i ? 1.0 : lu[i + l * lda];
        v += lil * lu[l + j * lda];
        mag += fabs(lil * lu[l + j * lda]);
      }
      /* |L U - P A| <= gamma_n |L| |U| for the computed factors. */
      cr_assert_leq(fabs(v - pa[i + j * n]), 2.0 * (double)(n + 2) * unit_roundoff(prec) * mag,
                    "getrf in %s: (L U - P A)(%lld,%lld) = %g", fea_precision_name(prec),
                    (long long)i, (long long)j, v - pa[i + j * n]);
    }
  }

  OK(fea_dense_getrs(gpu, trans, &ga.m, gpiv, &gb.m));
  OK(fea_dense_getrs(ref, trans, &ra.m, rpiv, &rb.m));
  double *gx = mat_values(&gb), *rx = mat_values(&rb);
  const double bound = 100.0 * (double)n * unit_roundoff(prec);
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < ldb; i++) {
      double got = gx[i + j * ldb];
      if (i >= n) {
        cr_assert_eq(got, b[i + j * ldb], "getrs %s in %s changed padding B(%lld,%lld)",
                     tname(trans), fea_precision_name(prec), (long long)i, (long long)j);
        continue;
      }
      cr_assert_leq(fabs(got - x0[i + j * ldb]), bound,
                    "getrs %s in %s: x(%lld,%lld) = %.17g, exact %.17g", tname(trans),
                    fea_precision_name(prec), (long long)i, (long long)j, got, x0[i + j * ldb]);
      cr_assert_leq(fabs(got - rx[i + j * ldb]), bound,
                    "getrs %s in %s: x(%lld,%lld) gpu %.17g, ref %.17g", tname(trans),
                    fea_precision_name(prec), (long long)i, (long long)j, got, rx[i + j * ldb]);
    }
  free(a), free(x0), free(b), free(as), free(lu), free(pa), free(gx), free(rx);
  mat_free(&ga), mat_free(&gb), mat_free(&ra), mat_free(&rb);
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

Test(cuda_dense, getrf_getrs_solve_with_pivoting) {
  for (int p = 0; p < 2; p++)
    for (int t = 0; t < 2; t++) check_lu(all_precs[p], (fea_transpose)t);
}

Test(cuda_dense, getrf_reports_the_zero_pivot) {
  /* Column 2 is zero: after the first step there is no pivot left in it. */
  const fea_index n = 4;
  const double a[16] = {1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                        0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0};
  fea_context *gpu = open_gpu();
  for (int p = 0; p < 2; p++) {
    mat ga = mat_from(gpu, all_precs[p], a, n, n, n);
    fea_index piv[4];
    fea_status st = fea_dense_getrf(gpu, &ga.m, piv);
    cr_assert_eq(st, FEA_ERR_SINGULAR, "getrf in %s returned %s: %s",
                 fea_precision_name(all_precs[p]), fea_status_string(st),
                 fea_context_last_error(gpu));
    cr_assert(strstr(fea_context_last_error(gpu), "U(2,2)") != NULL,
              "message does not name U(2,2): %s", fea_context_last_error(gpu));
    mat_free(&ga);
  }
  OK(fea_context_destroy(&gpu));
}
