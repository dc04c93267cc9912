/* Dense factorizations and solves (potrf/potrs, getrf/getrs) through
 * fea_dense_*, on /cpu/ref and /cpu/threads, and the argument checks of every
 * dense entry point.
 *
 * Solutions are judged by their residuals against the backward-error bounds
 * of the algorithms (Higham, 2nd ed.), computed from the factors the library
 * returned, so that the test does not depend on the condition number:
 *   Cholesky  |A - R^T R| <= gamma_{n+1} |R^T||R|        (Thm 10.3)
 *             |B - A X|   <= gamma_{3n+1} |R^T||R||X|    (Thm 10.4)
 *   LU        |A - P L U| <= gamma_n P|L||U|             (Thm 9.3)
 *             |B - A X|   <= gamma_{3n} P|L||U||X|       (Thm 9.4)
 * with gamma_k taken as 2 k u to absorb second-order terms. */
#include "dense-common.h"

/* An SPD matrix M M^T + n I; the triangle that uplo does not name holds junk
 * that a factorization must neither read nor write. */
static void make_spd(fea_context *ctx, struct mat *A, fea_index n, fea_uplo uplo, fea_precision p) {
  struct mat M;
  mat_make(ctx, &M, n, n, n, FEA_F64, 99, 0);
  mat_make(ctx, A, n, n, n + 2, p, 1, 0);
  for (fea_index j = 0; j < n; j++)
    for (fea_index i = 0; i < n; i++) {
      double s = i == j ? (double)n : 0;
      for (fea_index l = 0; l < n; l++) s += *mat_at(&M, i, l) * *mat_at(&M, j, l);
      int in_triangle = uplo == FEA_LOWER ? i >= j : i <= j;
      *mat_at(A, i, j) = in_triangle ? s : -1e6;
    }
  mat_store(A);
  mat_free(&M);
}

/* Entry (i, j) of the symmetric matrix stored in the uplo triangle. */
static double sym_at(const struct mat *A, fea_uplo uplo, fea_index i, fea_index j) {
  int in_triangle = uplo == FEA_LOWER ? i >= j : i <= j;
  return in_triangle ? *mat_at(A, i, j) : *mat_at(A, j, i);
}

static void check_cholesky(fea_context *ctx, fea_uplo uplo, fea_precision p) {
  const fea_index n = 8, nrhs = 3;
  const double u = compute_roundoff(p);
  struct mat A, B;
  make_spd(ctx, &A, n, uplo, p);
  OK(fea_dense_potrf(ctx, uplo, &A.m));
  double *F = mat_read(&A);
  /* R is upper with A = R^T R: R(i, j) = L(j, i) for a lower factor. */
#define R_AT(i, j) ((i) > (j) ? 0.0 : uplo == FEA_UPPER ? F[(i) + (j)*A.ld] : F[(j) + (i)*A.ld])
  double RtR_abs[8][8];
  for (fea_index i = 0; i < n; i++)
    for (fea_index j = 0; j < n; j++) {
      long double s = 0, abs_s = 0;
      for (fea_index l = 0; l < n; l++) {
        s += (long double)R_AT(l, i) * R_AT(l, j);
        abs_s += fabsl((long double)R_AT(l, i) * R_AT(l, j));
      }
      RtR_abs[i][j] = (double)abs_s;
      double tol = 2.0 * (double)(n + 1) * u * (double)abs_s;
      cr_assert(fabsl(s - sym_at(&A, uplo, i, j)) <= tol, "R^T R differs from A at (%lld, %lld)",
                (long long)i, (long long)j);
    }
  for (fea_index j = 0; j < n; j++)
    for (fea_index i = 0; i < n; i++) {
      int in_triangle = uplo == FEA_LOWER ? i >= j : i <= j;
      if (!in_triangle) cr_assert_eq(F[i + j * A.ld], -1e6, "potrf wrote the other triangle");
    }
  assert_padding_kept(&A, F, "potrf A");

  mat_make(ctx, &B, n, nrhs, n + 1, p, 2, 0);
  OK(fea_dense_potrs(ctx, uplo, &A.m, &B.m));
  double *X = mat_read(&B);
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < n; i++) {
      long double r = *mat_at(&B, i, j), bound = 0;
      for (fea_index l = 0; l < n; l++) {
        r -= (long double)sym_at(&A, uplo, i, l) * X[l + j * B.ld];
        bound += RtR_abs[i][l] * fabs(X[l + j * B.ld]);
      }
      double tol = 2.0 * (double)(3 * n + 1) * u * (double)bound;
      cr_assert(fabsl(r) <= tol, "potrs residual %.3Lg at (%lld, %lld) exceeds %.3g", fabsl(r),
                (long long)i, (long long)j, tol);
    }
#undef R_AT
  assert_padding_kept(&B, X, "potrs B");
  free(F);
  free(X);
  mat_free(&A);
  mat_free(&B);
}

CPU_TEST(dense_factor, cholesky_solves_spd) {
  for (int uplo = 0; uplo < 2; uplo++) {
    check_cholesky(ctx, (fea_uplo)uplo, FEA_F64);
    check_cholesky(ctx, (fea_uplo)uplo, FEA_F32);
  }
}

/* Leading minors of order 1 and 2 are positive, order 3 is not. */
CPU_TEST(dense_factor, cholesky_indefinite) {
  static const double a[16] = {4, 2, 0, 0, 2, 5, 0, 0, 0, 0, -1, 0, 0, 0, 0, 2};
  for (int uplo = 0; uplo < 2; uplo++) {
    struct mat A;
    mat_make(ctx, &A, 4, 4, 4, FEA_F64, 1, 0);
    memcpy(A.h, a, sizeof a);
    mat_store(&A);
    EXPECT_FAIL(fea_dense_potrf(ctx, (fea_uplo)uplo, &A.m), FEA_ERR_NOT_POSDEF, ctx, "order 3");
    mat_free(&A);
  }
}

/* P |L| |U| for a getrf result F (unit lower L, upper U) and its pivots. */
static void plu_abs(const double *F, fea_index ld, fea_index n, const fea_index *ipiv,
                    double *out) {
  for (fea_index i = 0; i < n; i++)
    for (fea_index j = 0; j < n; j++) {
      long double s = 0;
      for (fea_index l = 0; l <= (i < j ? i : j); l++) {
        double Lil = l == i ? 1.0 : F[i + l * ld];
        s += fabsl((long double)Lil * F[l + j * ld]);
      }
      out[i + j * n] = (double)s;
    }
  /* A = P L U with P = P_1 P_2 ... P_n, P_i swapping rows i and ipiv[i]: apply P_n first. */
  for (fea_index i = n - 1; i >= 0; i--) {
    fea_index r = ipiv[i] - 1;
    for (fea_index j = 0; j < n && r != i; j++) {
      double t = out[i + j * n];
      out[i + j * n] = out[r + j * n];
      out[r + j * n] = t;
    }
  }
}

static void check_lu(fea_context *ctx, fea_precision p) {
  const fea_index n = 7, nrhs = 2;
  const double u = compute_roundoff(p);
  struct mat A, A0, B;
  mat_make(ctx, &A, n, n, n + 2, p, 3, 0);
  for (fea_index i = 0; i < n; i++) *mat_at(&A, i, i) *= 0.01; /* small diagonal: pivoting needed */
  mat_store(&A);
  mat_make(ctx, &A0, n, n, n + 2, p, 3, 0);
  memcpy(A0.h, A.h, (size_t)(A.ld * n) * sizeof *A.h);
  fea_index ipiv[7];
  OK(fea_dense_getrf(ctx, &A.m, ipiv));
  int swapped = 0;
  for (fea_index i = 0; i < n; i++) {
    cr_assert(ipiv[i] >= i + 1 && ipiv[i] <= n, "ipiv[%lld] = %lld", (long long)i,
              (long long)ipiv[i]);
    swapped |= ipiv[i] != i + 1;
  }
  cr_assert(swapped, "this matrix needs row interchanges");
  double *F = mat_read(&A);
  assert_padding_kept(&A, F, "getrf A");
  double PLU[49];
  plu_abs(F, A.ld, n, ipiv, PLU);
  /* |A - P L U|: rebuild P L U from the factors. */
  double LU[49];
  for (fea_index i = 0; i < n; i++)
    for (fea_index j = 0; j < n; j++) {
      long double s = 0;
      for (fea_index l = 0; l <= (i < j ? i : j); l++)
        s += (long double)(l == i ? 1.0 : F[i + l * A.ld]) * F[l + j * A.ld];
      LU[i + j * n] = (double)s;
    }
  for (fea_index i = n - 1; i >= 0; i--)
    for (fea_index j = 0, r = ipiv[i] - 1; j < n && r != i; j++) {
      double t = LU[i + j * n];
      LU[i + j * n] = LU[r + j * n];
      LU[r + j * n] = t;
    }
  for (fea_index i = 0; i < n; i++)
    for (fea_index j = 0; j < n; j++)
      cr_assert(fabs(LU[i + j * n] - *mat_at(&A0, i, j)) <=
                    2.0 * (double)n * u * PLU[i + j * n] + 1e-300,
                "P L U differs from A at (%lld, %lld)", (long long)i, (long long)j);

  for (int trans = 0; trans < 2; trans++) {
    mat_make(ctx, &B, n, nrhs, n + 1, p, 4, 0);
    OK(fea_dense_getrs(ctx, (fea_transpose)trans, &A.m, ipiv, &B.m));
    double *X = mat_read(&B);
    for (fea_index j = 0; j < nrhs; j++)
      for (fea_index i = 0; i < n; i++) {
        long double r = *mat_at(&B, i, j), bound = 0;
        for (fea_index l = 0; l < n; l++) {
          double a = trans ? *mat_at(&A0, l, i) : *mat_at(&A0, i, l);
          double m = trans ? PLU[l + i * n] : PLU[i + l * n];
          r -= (long double)a * X[l + j * B.ld];
          bound += m * fabs(X[l + j * B.ld]);
        }
        double tol = 2.0 * (double)(3 * n) * u * (double)bound;
        cr_assert(fabsl(r) <= tol, "getrs %c residual %.3Lg at (%lld, %lld) exceeds %.3g",
                  trans ? 'T' : 'N', fabsl(r), (long long)i, (long long)j, tol);
      }
    assert_padding_kept(&B, X, "getrs B");
    free(X);
    mat_free(&B);
  }
  free(F);
  mat_free(&A);
  mat_free(&A0);
}

CPU_TEST(dense_factor, lu_solves_nonsymmetric) {
  check_lu(ctx, FEA_F64);
  check_lu(ctx, FEA_F32);
}

/* Column 3 is zero, so U(3,3) is exactly zero whatever the pivoting. */
CPU_TEST(dense_factor, lu_singular) {
  struct mat A;
  mat_make(ctx, &A, 5, 5, 5, FEA_F64, 5, 2.0);
  for (fea_index i = 0; i < 5; i++) *mat_at(&A, i, 2) = 0.0;
  mat_store(&A);
  fea_index ipiv[5];
  EXPECT_FAIL(fea_dense_getrf(ctx, &A.m, ipiv), FEA_ERR_SINGULAR, ctx, "U(3,3)");
  mat_free(&A);
}

/* ---- argument checks ------------------------------------------------------ */

CPU_TEST(dense_factor, shape_errors) {
  struct mat A, B, C, S;
  mat_make(ctx, &A, 4, 3, 4, FEA_F64, 1, 0);
  mat_make(ctx, &B, 4, 2, 4, FEA_F64, 2, 0); /* op(A) op(B) needs B with 3 rows */
  mat_make(ctx, &C, 4, 2, 4, FEA_F64, 3, 0);
  mat_make(ctx, &S, 4, 4, 4, FEA_F64, 4, 8.0);
  EXPECT_FAIL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1, &A.m, &B.m, 0, &C.m,
                             FEA_COMPUTE_DEFAULT),
              FEA_ERR_DIMENSION, ctx, "4 x 3");
  double *got = mat_read(&C);
  cr_assert(memcmp(got, C.h, 8 * sizeof *got) == 0, "C written by a failed gemm");
  free(got);
  EXPECT_FAIL(fea_dense_syrk(ctx, FEA_LOWER, FEA_NO_TRANS, 1, &A.m, 0, &C.m), FEA_ERR_DIMENSION,
              ctx, "4 x 2");
  EXPECT_FAIL(fea_dense_trsm(ctx, FEA_LEFT, FEA_LOWER, FEA_NO_TRANS, FEA_NON_UNIT, 1, &A.m, &C.m),
              FEA_ERR_DIMENSION, ctx, "4 x 3");
  EXPECT_FAIL(fea_dense_trsm(ctx, FEA_RIGHT, FEA_LOWER, FEA_NO_TRANS, FEA_NON_UNIT, 1, &S.m, &C.m),
              FEA_ERR_DIMENSION, ctx, "4 x 2");
  EXPECT_FAIL(fea_dense_potrf(ctx, FEA_LOWER, &A.m), FEA_ERR_DIMENSION, ctx, "4 x 3");
  EXPECT_FAIL(fea_dense_getrf(ctx, &A.m, (fea_index[4]){0}), FEA_ERR_DIMENSION, ctx, "4 x 3");
  fea_dmat short_b = B.m;
  short_b.rows = 3;
  EXPECT_FAIL(fea_dense_potrs(ctx, FEA_LOWER, &S.m, &short_b), FEA_ERR_DIMENSION, ctx, "3 rows");
  fea_index ipiv[4] = {1, 2, 3, 4};
  EXPECT_FAIL(fea_dense_getrs(ctx, FEA_NO_TRANS, &S.m, ipiv, &short_b), FEA_ERR_DIMENSION, ctx,
              "3 rows");
  /* Bad views. */
  fea_dmat bad = C.m;
  bad.ld = 3; /* < rows */
  EXPECT_FAIL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1, &A.m, &B.m, 0, &bad,
                             FEA_COMPUTE_DEFAULT),
              FEA_ERR_DIMENSION, ctx, "ld 3");
  bad = C.m;
  bad.rows = -1;
  EXPECT_FAIL(fea_dense_potrf(ctx, FEA_LOWER, &bad), FEA_ERR_DIMENSION, ctx, "-1");
  fea_dmat view;
  EXPECT_FAIL(fea_dmat_from_vector(C.v, 4, 3, 4, &view), FEA_ERR_DIMENSION, ctx, "needs 12");
  EXPECT_FAIL(fea_dmat_from_vector(C.v, 4, 2, 3, &view), FEA_ERR_DIMENSION, ctx, "ld 3");
  EXPECT_FAIL(fea_dense_potrf(ctx, FEA_LOWER, NULL), FEA_ERR_INVALID_ARG, ctx, "NULL");
  mat_free(&A);
  mat_free(&B);
  mat_free(&C);
  mat_free(&S);
}

CPU_TEST(dense_factor, precision_errors) {
  struct mat H, H2, D, F;
  mat_make(ctx, &H, 3, 3, 3, FEA_F16, 1, 4.0);
  mat_make(ctx, &H2, 3, 3, 3, FEA_BF16, 2, 4.0);
  mat_make(ctx, &D, 3, 3, 3, FEA_F64, 3, 4.0);
  mat_make(ctx, &F, 3, 3, 3, FEA_F32, 4, 4.0);
  EXPECT_FAIL(fea_dense_potrf(ctx, FEA_LOWER, &H.m), FEA_ERR_UNSUPPORTED, ctx, "f16");
  double *got = mat_read(&H);
  cr_assert(memcmp(got, H.h, 9 * sizeof *got) == 0, "potrf wrote an f16 matrix it refused");
  free(got);
  EXPECT_FAIL(fea_dense_trsm(ctx, FEA_LEFT, FEA_LOWER, FEA_NO_TRANS, FEA_NON_UNIT, 1, &H2.m, &H2.m),
              FEA_ERR_UNSUPPORTED, ctx, "bf16");
  EXPECT_FAIL(fea_dense_syrk(ctx, FEA_LOWER, FEA_NO_TRANS, 1, &H.m, 0, &H.m), FEA_ERR_UNSUPPORTED,
              ctx, "f16");
  fea_index ipiv[3] = {1, 2, 3};
  EXPECT_FAIL(fea_dense_getrf(ctx, &H2.m, ipiv), FEA_ERR_UNSUPPORTED, ctx, "bf16");
  /* Mixed precisions. */
  EXPECT_FAIL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1, &D.m, &F.m, 0, &D.m,
                             FEA_COMPUTE_DEFAULT),
              FEA_ERR_INVALID_ARG, ctx, "f32");
  EXPECT_FAIL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1, &H.m, &H.m, 0, &D.m,
                             FEA_COMPUTE_DEFAULT),
              FEA_ERR_INVALID_ARG, ctx, "f64");
  EXPECT_FAIL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1, &H.m, &H2.m, 0, &F.m,
                             FEA_COMPUTE_DEFAULT),
              FEA_ERR_INVALID_ARG, ctx, "bf16");
  EXPECT_FAIL(fea_dense_potrs(ctx, FEA_LOWER, &D.m, &F.m), FEA_ERR_INVALID_ARG, ctx, "f32");
  /* TF32 is for f32 data only. */
  EXPECT_FAIL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1, &D.m, &D.m, 0, &D.m,
                             FEA_COMPUTE_TF32),
              FEA_ERR_INVALID_ARG, ctx, "f64");
  fea_dmat bad = D.m;
  bad.prec = (fea_precision)9;
  EXPECT_FAIL(fea_dense_potrf(ctx, FEA_LOWER, &bad), FEA_ERR_INVALID_ARG, ctx, "precision 9");
  mat_free(&H);
  mat_free(&H2);
  mat_free(&D);
  mat_free(&F);
}

CPU_TEST(dense_factor, ipiv_errors) {
  struct mat A, B;
  mat_make(ctx, &A, 4, 4, 4, FEA_F64, 1, 8.0);
  mat_make(ctx, &B, 4, 1, 4, FEA_F64, 2, 0);
  fea_index ipiv[4];
  OK(fea_dense_getrf(ctx, &A.m, ipiv));
  fea_index bad[4];
  memcpy(bad, ipiv, sizeof bad);
  bad[2] = 5;
  EXPECT_FAIL(fea_dense_getrs(ctx, FEA_NO_TRANS, &A.m, bad, &B.m), FEA_ERR_INVALID_ARG, ctx,
              "ipiv[2] = 5");
  memcpy(bad, ipiv, sizeof bad);
  bad[0] = 0;
  EXPECT_FAIL(fea_dense_getrs(ctx, FEA_TRANS, &A.m, bad, &B.m), FEA_ERR_INVALID_ARG, ctx,
              "ipiv[0] = 0");
  bad[0] = -3;
  EXPECT_FAIL(fea_dense_getrs(ctx, FEA_TRANS, &A.m, bad, &B.m), FEA_ERR_INVALID_ARG, ctx,
              "ipiv[0] = -3");
  double *got = mat_read(&B);
  cr_assert(memcmp(got, B.h, 4 * sizeof *got) == 0, "B written by a failed getrs");
  free(got);
  EXPECT_FAIL(fea_dense_getrs(ctx, FEA_NO_TRANS, &A.m, NULL, &B.m), FEA_ERR_INVALID_ARG, ctx,
              "ipiv");
  EXPECT_FAIL(fea_dense_getrf(ctx, &A.m, NULL), FEA_ERR_INVALID_ARG, ctx, "ipiv");
  mat_free(&A);
  mat_free(&B);
}

/* Zero-size factorizations and solves are no-ops that succeed. */
CPU_TEST(dense_factor, empty) {
  struct mat A, B, S;
  mat_make(ctx, &A, 0, 0, 1, FEA_F64, 1, 0);
  OK(fea_dense_potrf(ctx, FEA_LOWER, &A.m));
  OK(fea_dense_getrf(ctx, &A.m, NULL));
  mat_make(ctx, &B, 0, 3, 1, FEA_F64, 2, 0);
  OK(fea_dense_potrs(ctx, FEA_UPPER, &A.m, &B.m));
  OK(fea_dense_getrs(ctx, FEA_TRANS, &A.m, NULL, &B.m));
  mat_free(&B);
  /* No right-hand sides. */
  mat_make(ctx, &S, 3, 3, 3, FEA_F64, 3, 8.0);
  mat_make(ctx, &B, 3, 0, 3, FEA_F64, 4, 0);
  fea_index ipiv[3] = {1, 2, 3};
  OK(fea_dense_potrs(ctx, FEA_LOWER, &S.m, &B.m));
  OK(fea_dense_getrs(ctx, FEA_NO_TRANS, &S.m, ipiv, &B.m));
  double *got = mat_read(&S);
  cr_assert(memcmp(got, S.h, 9 * sizeof *got) == 0);
  free(got);
  mat_free(&A);
  mat_free(&B);
  mat_free(&S);
}
