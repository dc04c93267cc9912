/* Dense kernels gemm, syrk and trsm through the checked entry points
 * fea_dense_*, on /cpu/ref and /cpu/threads, against naive loops in long
 * double over the values as stored.
 *
 * Tolerances are the classical rounding-error bounds (Higham, Accuracy and
 * Stability of Numerical Algorithms, 2nd ed.): an inner product of length k
 * is off by at most gamma_k |a|.|b| with gamma_k = k u / (1 - k u) in the
 * arithmetic's unit roundoff u, whatever the summation order. We use
 * (k + 2) u to cover alpha, beta and the final addition; a 16-bit C adds one
 * rounding to its own format. Factorizations are in test-dense-factor.c. */
#include "dense-common.h"

/* |err_ij| allowed for alpha op(A) op(B) + beta C computed with k terms. */
static double gemm_tol(fea_index k, fea_precision in, fea_precision out, long double ref,
                       long double absval) {
  double cu = compute_roundoff(in);
  double tol = (double)(k + 2) * cu * (double)absval;
  if (out == FEA_F16 || out == FEA_BF16) tol += unit_roundoff(out) * fabsl(ref) + 0x1p-24;
  return tol;
}

static void check_gemm(fea_context *ctx, fea_transpose ta, fea_transpose tb, fea_precision pin,
                       fea_precision pout, fea_index m, fea_index n, fea_index k) {
  const double alpha = 1.5, beta = -0.5;
  struct mat A, B, C;
  mat_make(ctx, &A, ta ? k : m, ta ? m : k, (ta ? k : m) + 3, pin, 11, 0);
  mat_make(ctx, &B, tb ? n : k, tb ? k : n, (tb ? n : k) + 2, pin, 22, 0);
  mat_make(ctx, &C, m, n, m + 4, pout, 33, 0);
  OK(fea_dense_gemm(ctx, ta, tb, alpha, &A.m, &B.m, beta, &C.m, FEA_COMPUTE_DEFAULT));
  double *got = mat_read(&C);
  for (fea_index j = 0; j < n; j++) {
    for (fea_index i = 0; i < m; i++) {
      long double sum = 0, abssum = 0;
      for (fea_index l = 0; l < k; l++) {
        long double t = (long double)op_at(&A, ta, i, l) * op_at(&B, tb, l, j);
        sum += t;
        abssum += fabsl(t);
      }
      long double ref = alpha * sum + beta * (long double)*mat_at(&C, i, j);
      long double absval = fabs(alpha) * abssum + fabs(beta) * fabs(*mat_at(&C, i, j));
      double tol = gemm_tol(k, pin, pout, ref, absval);
      cr_assert(fabsl(got[i + j * C.ld] - ref) <= tol,
                "gemm %c%c %s->%s C(%lld,%lld) = %.17g, expected %.17Lg (tol %.3g)", ta ? 'T' : 'N',
                tb ? 'T' : 'N', fea_precision_name(pin), fea_precision_name(pout), (long long)i,
                (long long)j, got[i + j * C.ld], ref, tol);
    }
  }
  assert_padding_kept(&C, got, "gemm C");
  /* Inputs are not written. */
  double *a = mat_read(&A), *b = mat_read(&B);
  cr_assert(memcmp(a, A.h, (size_t)(A.ld * A.cols) * sizeof *a) == 0, "gemm wrote A");
  cr_assert(memcmp(b, B.h, (size_t)(B.ld * B.cols) * sizeof *b) == 0, "gemm wrote B");
  free(a);
  free(b);
  free(got);
  mat_free(&A);
  mat_free(&B);
  mat_free(&C);
}

CPU_TEST(dense, gemm_f64_all_transposes) {
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++)
      check_gemm(ctx, (fea_transpose)ta, (fea_transpose)tb, FEA_F64, FEA_F64, 7, 5, 6);
}

/* Large enough that a threaded BLAS splits the work. */
CPU_TEST(dense, gemm_f64_large) {
  check_gemm(ctx, FEA_NO_TRANS, FEA_TRANS, FEA_F64, FEA_F64, 130, 70, 90);
}

CPU_TEST(dense, gemm_f32_all_transposes) {
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++)
      check_gemm(ctx, (fea_transpose)ta, (fea_transpose)tb, FEA_F32, FEA_F32, 7, 5, 6);
}

CPU_TEST(dense, gemm_half_inputs) {
  static const fea_precision halves[] = {FEA_F16, FEA_BF16};
  for (int h = 0; h < 2; h++) {
    for (int ta = 0; ta < 2; ta++) {
      for (int tb = 0; tb < 2; tb++) {
        check_gemm(ctx, (fea_transpose)ta, (fea_transpose)tb, halves[h], halves[h], 9, 6, 40);
        check_gemm(ctx, (fea_transpose)ta, (fea_transpose)tb, halves[h], FEA_F32, 9, 6, 40);
      }
    }
  }
}

/* k = 0: C := beta C; m = 0 or n = 0: nothing to do. */
CPU_TEST(dense, gemm_empty) {
  struct mat A, B, C;
  mat_make(ctx, &A, 4, 0, 4, FEA_F64, 1, 0);
  mat_make(ctx, &B, 0, 3, 1, FEA_F64, 2, 0);
  mat_make(ctx, &C, 4, 3, 5, FEA_F64, 3, 0);
  OK(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 2.0, &A.m, &B.m, -2.0, &C.m,
                    FEA_COMPUTE_DEFAULT));
  double *got = mat_read(&C);
  for (fea_index j = 0; j < 3; j++)
    for (fea_index i = 0; i < 4; i++)
      cr_assert_eq(got[i + j * C.ld], -2.0 * *mat_at(&C, i, j), "k = 0 must give beta C");
  free(got);
  mat_free(&A);
  mat_free(&B);
  mat_free(&C);

  /* m = 0 and n = 0 succeed without touching anything. */
  mat_make(ctx, &A, 0, 5, 1, FEA_F64, 1, 0);
  mat_make(ctx, &B, 5, 3, 5, FEA_F64, 2, 0);
  mat_make(ctx, &C, 0, 3, 1, FEA_F64, 3, 0);
  OK(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1.0, &A.m, &B.m, 0.0, &C.m,
                    FEA_COMPUTE_DEFAULT));
  got = mat_read(&C);
  assert_padding_kept(&C, got, "gemm m = 0");
  free(got);
  mat_free(&A);
  mat_free(&B);
  mat_free(&C);
}

CPU_TEST(dense, gemm_tf32_unsupported) {
  struct mat A, B, C;
  mat_make(ctx, &A, 3, 3, 3, FEA_F32, 1, 0);
  mat_make(ctx, &B, 3, 3, 3, FEA_F32, 2, 0);
  mat_make(ctx, &C, 3, 3, 3, FEA_F32, 3, 0);
  EXPECT_FAIL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1.0, &A.m, &B.m, 0.0, &C.m,
                             FEA_COMPUTE_TF32),
              FEA_ERR_UNSUPPORTED, ctx, "TF32");
  double *got = mat_read(&C);
  cr_assert(memcmp(got, C.h, 9 * sizeof *got) == 0, "C written by a failed gemm");
  free(got);
  mat_free(&A);
  mat_free(&B);
  mat_free(&C);
}

/* C := alpha op(A) op(A)^T + beta C on one triangle; the other and the padding stay. */
static void check_syrk(fea_context *ctx, fea_uplo uplo, fea_transpose trans, fea_precision p) {
  const fea_index n = 6, k = 4;
  const double alpha = 0.75, beta = 2.0;
  struct mat A, C;
  mat_make(ctx, &A, trans ? k : n, trans ? n : k, (trans ? k : n) + 1, p, 5, 0);
  mat_make(ctx, &C, n, n, n + 2, p, 6, 0);
  OK(fea_dense_syrk(ctx, uplo, trans, alpha, &A.m, beta, &C.m));
  double *got = mat_read(&C);
  for (fea_index j = 0; j < n; j++) {
    for (fea_index i = 0; i < n; i++) {
      double g = got[i + j * C.ld];
      int in_triangle = uplo == FEA_LOWER ? i >= j : i <= j;
      if (!in_triangle) {
        cr_assert_eq(g, *mat_at(&C, i, j), "syrk %s wrote (%lld, %lld) outside its triangle",
                     uplo == FEA_LOWER ? "lower" : "upper", (long long)i, (long long)j);
        continue;
      }
      long double sum = 0, abssum = 0;
      for (fea_index l = 0; l < k; l++) {
        long double t = (long double)op_at(&A, trans, i, l) * op_at(&A, trans, j, l);
        sum += t;
        abssum += fabsl(t);
      }
      long double ref = alpha * sum + beta * (long double)*mat_at(&C, i, j);
      double tol = (double)(k + 2) * compute_roundoff(p) *
                   (double)(alpha * abssum + beta * fabs(*mat_at(&C, i, j)));
      cr_assert(fabsl(g - ref) <= tol, "syrk C(%lld,%lld) = %.17g, expected %.17Lg", (long long)i,
                (long long)j, g, ref);
    }
  }
  assert_padding_kept(&C, got, "syrk C");
  free(got);
  mat_free(&A);
  mat_free(&C);
}

CPU_TEST(dense, syrk_both_triangles_and_transposes) {
  for (int u = 0; u < 2; u++)
    for (int t = 0; t < 2; t++) {
      check_syrk(ctx, (fea_uplo)u, (fea_transpose)t, FEA_F64);
      check_syrk(ctx, (fea_uplo)u, (fea_transpose)t, FEA_F32);
    }
}

/* Triangular solve: B := alpha op(A)^-1 B or alpha B op(A)^-1. The triangle
 * not named by uplo holds a large value, as does the diagonal for a unit
 * triangle: reading either would spoil the result. The check multiplies
 * back with the triangle as it is meant, T: op(T) X = alpha B (or
 * X op(T) = alpha B), to within the backward error of substitution,
 * gamma_n |op(T)| |X| (Higham, Thm 8.5). */
static void check_trsm(fea_context *ctx, fea_side side, fea_uplo uplo, fea_transpose trans,
                       fea_diag diag, fea_precision p) {
  const fea_index m = 6, nb = 4, n = side == FEA_LEFT ? m : nb;
  const double alpha = 2.0, junk = 1e6;
  struct mat A, B;
  mat_make(ctx, &A, n, n, n + 3, p, 7, 4.0); /* diagonally dominant: well conditioned */
  for (fea_index j = 0; j < n; j++)
    for (fea_index i = 0; i < n; i++) {
      int in_triangle = uplo == FEA_LOWER ? i >= j : i <= j;
      if (!in_triangle || (i == j && diag == FEA_UNIT)) *mat_at(&A, i, j) = junk;
    }
  mat_store(&A);
  mat_make(ctx, &B, m, nb, m + 1, p, 8, 0);
  OK(fea_dense_trsm(ctx, side, uplo, trans, diag, alpha, &A.m, &B.m));
  double *X = mat_read(&B);

  /* T(i, j) as meant by uplo and diag. */
#define T_AT(i, j)                                                                                  \
  ((i) == (j)                                    ? (diag == FEA_UNIT ? 1.0 : *mat_at(&A, (i), (j))) \
   : (uplo == FEA_LOWER ? (i) > (j) : (i) < (j)) ? *mat_at(&A, (i), (j))                            \
                                                 : 0.0)
#define OPT_AT(i, j) (trans ? T_AT((j), (i)) : T_AT((i), (j)))
  for (fea_index j = 0; j < nb; j++) {
    for (fea_index i = 0; i < m; i++) {
      long double r = 0, absr = 0;
      for (fea_index l = 0; l < n; l++) {
        long double t = side == FEA_LEFT ? (long double)OPT_AT(i, l) * X[l + j * B.ld]
                                         : (long double)X[i + l * B.ld] * OPT_AT(l, j);
        r += t;
        absr += fabsl(t);
      }
      long double want = alpha * (long double)*mat_at(&B, i, j);
      double tol = (double)(n + 2) * compute_roundoff(p) * (double)absr;
      cr_assert(fabsl(r - want) <= tol,
                "trsm %s %s %c %s: residual %.3Lg at (%lld,%lld) exceeds %.3g",
                side == FEA_LEFT ? "left" : "right", uplo == FEA_LOWER ? "lower" : "upper",
                trans ? 'T' : 'N', diag == FEA_UNIT ? "unit" : "non-unit", fabsl(r - want),
                (long long)i, (long long)j, tol);
    }
  }
#undef OPT_AT
#undef T_AT
  assert_padding_kept(&B, X, "trsm B");
  double *a = mat_read(&A);
  cr_assert(memcmp(a, A.h, (size_t)(A.ld * A.cols) * sizeof *a) == 0, "trsm wrote A");
  free(a);
  free(X);
  mat_free(&A);
  mat_free(&B);
}

CPU_TEST(dense, trsm_all_combinations) {
  for (int side = 0; side < 2; side++)
    for (int uplo = 0; uplo < 2; uplo++)
      for (int trans = 0; trans < 2; trans++)
        for (int diag = 0; diag < 2; diag++) {
          check_trsm(ctx, (fea_side)side, (fea_uplo)uplo, (fea_transpose)trans, (fea_diag)diag,
                     FEA_F64);
          check_trsm(ctx, (fea_side)side, (fea_uplo)uplo, (fea_transpose)trans, (fea_diag)diag,
                     FEA_F32);
        }
}

CPU_TEST(dense, syrk_trsm_empty) {
  struct mat A, C, B;
  mat_make(ctx, &A, 0, 3, 1, FEA_F64, 1, 0);
  mat_make(ctx, &C, 0, 0, 1, FEA_F64, 2, 0);
  OK(fea_dense_syrk(ctx, FEA_LOWER, FEA_NO_TRANS, 1.0, &A.m, 0.0, &C.m));
  mat_free(&A);
  mat_free(&C);
  mat_make(ctx, &A, 3, 3, 3, FEA_F64, 1, 4.0);
  mat_make(ctx, &B, 3, 0, 3, FEA_F64, 2, 0);
  OK(fea_dense_trsm(ctx, FEA_LEFT, FEA_LOWER, FEA_NO_TRANS, FEA_NON_UNIT, 1.0, &A.m, &B.m));
  mat_free(&A);
  mat_free(&B);
}

/* k = 0 with beta = 0: C := 0 without reading C (BLAS semantics), for the
 * 16-bit inputs too (their product is widened tile by tile). */
CPU_TEST(dense, gemm_empty_inner_dimension_clears_c) {
  const fea_precision precs[] = {FEA_F32, FEA_F16, FEA_BF16};
  for (int q = 0; q < 3; q++) {
    uint16_t a16[4] = {0}, b16[4] = {0};
    float a32[4] = {0}, b32[4] = {0}, c[6];
    for (int i = 0; i < 6; i++) c[i] = NAN;
    void *a = precs[q] == FEA_F32 ? (void *)a32 : (void *)a16;
    void *b = precs[q] == FEA_F32 ? (void *)b32 : (void *)b16;
    fea_dmat A = {a, 3, 0, 3, precs[q]}, B = {b, 0, 2, 1, precs[q]}, C = {c, 3, 2, 3, FEA_F32};
    cr_assert_eq(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1.0, &A, &B, 0.0, &C,
                                FEA_COMPUTE_DEFAULT),
                 FEA_SUCCESS, "%s", fea_context_last_error(ctx));
    for (int i = 0; i < 6; i++)
      cr_expect(c[i] == 0.0f, "%s: C[%d] = %g after k = 0, beta = 0", fea_precision_name(precs[q]),
                i, (double)c[i]);
  }
}
