/* Checked entry points of the dense ops: shapes, leading dimensions and
 * precisions are validated once here, so backends may assume valid input. */
#include "base/context.h"
#include "dense.h"
#include "internal/error.h"
#include "vector.h"

#define DISPATCH(ctx, slot, ...)                                                             \
  ((ctx)->dense.slot ? (ctx)->dense.slot(__VA_ARGS__)                                        \
                     : FEA_ERROR(ctx, FEA_ERR_UNSUPPORTED, "backend %s has no dense " #slot, \
                                 (ctx)->backend->prefix))

static fea_status check_mat(const fea_context *ctx, const char *name, const fea_dmat *M) {
  FEA_CHECK(M != NULL, ctx, FEA_ERR_INVALID_ARG, "matrix %s is NULL", name);
  FEA_CHECK(M->rows >= 0 && M->cols >= 0, ctx, FEA_ERR_DIMENSION, "matrix %s is %lld x %lld", name,
            (long long)M->rows, (long long)M->cols);
  FEA_CHECK(M->ld >= (M->rows > 1 ? M->rows : 1), ctx, FEA_ERR_DIMENSION,
            "matrix %s has ld %lld < max(1, rows = %lld)", name, (long long)M->ld,
            (long long)M->rows);
  FEA_CHECK(M->data || M->rows == 0 || M->cols == 0, ctx, FEA_ERR_INVALID_ARG,
            "matrix %s (%lld x %lld) has no data", name, (long long)M->rows, (long long)M->cols);
  FEA_CHECK(M->prec == FEA_F64 || M->prec == FEA_F32 || M->prec == FEA_F16 || M->prec == FEA_BF16,
            ctx, FEA_ERR_INVALID_ARG, "matrix %s has unknown precision %d", name, (int)M->prec);
  return FEA_SUCCESS;
}

/* syrk, trsm and the factorizations exist in f64 and f32 only (as in LAPACK and cuSOLVER). */
static fea_status check_lapack_prec(const fea_context *ctx, const char *op, const fea_dmat *A,
                                    const fea_dmat *B) {
  FEA_CHECK(A->prec == FEA_F64 || A->prec == FEA_F32, ctx, FEA_ERR_UNSUPPORTED,
            "%s in %s: only f64 and f32 are supported", op, fea_precision_name(A->prec));
  FEA_CHECK(!B || B->prec == A->prec, ctx, FEA_ERR_INVALID_ARG,
            "%s: precision mismatch (%s and %s)", op, fea_precision_name(A->prec),
            fea_precision_name(B->prec));
  return FEA_SUCCESS;
}

static fea_status check_square(const fea_context *ctx, const char *op, const fea_dmat *A) {
  FEA_CHECK(A->rows == A->cols, ctx, FEA_ERR_DIMENSION, "%s needs a square matrix, got %lld x %lld",
            op, (long long)A->rows, (long long)A->cols);
  return FEA_SUCCESS;
}

fea_status fea_dmat_from_vector(fea_vector *v, fea_index rows, fea_index cols, fea_index ld,
                                fea_dmat *out) {
  FEA_CHECK_NULL(v, NULL);
  FEA_CHECK_NULL(out, v->ctx);
  FEA_CHECK(rows >= 0 && cols >= 0 && ld >= (rows > 1 ? rows : 1), v->ctx, FEA_ERR_DIMENSION,
            "view %lld x %lld with ld %lld is not valid", (long long)rows, (long long)cols,
            (long long)ld);
  fea_index need = cols > 0 ? (cols - 1) * ld + rows : 0;
  FEA_CHECK(need <= v->n, v->ctx, FEA_ERR_DIMENSION,
            "view %lld x %lld with ld %lld needs %lld entries, the vector has %lld",
            (long long)rows, (long long)cols, (long long)ld, (long long)need, (long long)v->n);
  *out = (fea_dmat){.data = v->data, .rows = rows, .cols = cols, .ld = ld, .prec = v->prec};
  return FEA_SUCCESS;
}

fea_status fea_dense_gemm(fea_context *ctx, fea_transpose ta, fea_transpose tb, double alpha,
                          const fea_dmat *A, const fea_dmat *B, double beta, fea_dmat *C,
                          fea_compute compute) {
  FEA_CALL(check_mat(ctx, "A", A));
  FEA_CALL(check_mat(ctx, "B", B));
  FEA_CALL(check_mat(ctx, "C", C));
  fea_index m = ta ? A->cols : A->rows, k = ta ? A->rows : A->cols;
  fea_index kb = tb ? B->cols : B->rows, n = tb ? B->rows : B->cols;
  FEA_CHECK(k == kb && C->rows == m && C->cols == n, ctx, FEA_ERR_DIMENSION,
            "gemm: op(A) is %lld x %lld, op(B) is %lld x %lld, C is %lld x %lld", (long long)m,
            (long long)k, (long long)kb, (long long)n, (long long)C->rows, (long long)C->cols);
  FEA_CHECK(A->prec == B->prec, ctx, FEA_ERR_INVALID_ARG, "gemm: A is %s but B is %s",
            fea_precision_name(A->prec), fea_precision_name(B->prec));
  int half_in = A->prec == FEA_F16 || A->prec == FEA_BF16;
  FEA_CHECK(C->prec == A->prec || (half_in && C->prec == FEA_F32), ctx, FEA_ERR_INVALID_ARG,
            "gemm: C is %s for %s inputs (allowed: the same, or f32 for f16/bf16 inputs)",
            fea_precision_name(C->prec), fea_precision_name(A->prec));
  FEA_CHECK(compute == FEA_COMPUTE_DEFAULT || (compute == FEA_COMPUTE_TF32 && A->prec == FEA_F32),
            ctx, FEA_ERR_INVALID_ARG, "gemm: compute mode %d is not valid for %s data",
            (int)compute, fea_precision_name(A->prec));
  if (m == 0 || n == 0) return FEA_SUCCESS;
  return DISPATCH(ctx, gemm, ctx, ta, tb, alpha, A, B, beta, C, compute);
}

fea_status fea_dense_syrk(fea_context *ctx, fea_uplo uplo, fea_transpose trans, double alpha,
                          const fea_dmat *A, double beta, fea_dmat *C) {
  FEA_CALL(check_mat(ctx, "A", A));
  FEA_CALL(check_mat(ctx, "C", C));
  FEA_CALL(check_lapack_prec(ctx, "syrk", A, C));
  fea_index n = trans ? A->cols : A->rows;
  FEA_CHECK(C->rows == n && C->cols == n, ctx, FEA_ERR_DIMENSION,
            "syrk: op(A) has %lld rows but C is %lld x %lld", (long long)n, (long long)C->rows,
            (long long)C->cols);
  if (n == 0) return FEA_SUCCESS;
  return DISPATCH(ctx, syrk, ctx, uplo, trans, alpha, A, beta, C);
}

fea_status fea_dense_trsm(fea_context *ctx, fea_side side, fea_uplo uplo, fea_transpose trans,
                          fea_diag diag, double alpha, const fea_dmat *A, fea_dmat *B) {
  FEA_CALL(check_mat(ctx, "A", A));
  FEA_CALL(check_mat(ctx, "B", B));
  FEA_CALL(check_lapack_prec(ctx, "trsm", A, B));
  FEA_CALL(check_square(ctx, "trsm", A));
  fea_index need = side == FEA_LEFT ? B->rows : B->cols;
  FEA_CHECK(A->rows == need, ctx, FEA_ERR_DIMENSION, "trsm: A is %lld x %lld but B is %lld x %lld",
            (long long)A->rows, (long long)A->cols, (long long)B->rows, (long long)B->cols);
  if (B->rows == 0 || B->cols == 0) return FEA_SUCCESS;
  return DISPATCH(ctx, trsm, ctx, side, uplo, trans, diag, alpha, A, B);
}

fea_status fea_dense_potrf(fea_context *ctx, fea_uplo uplo, fea_dmat *A) {
  FEA_CALL(check_mat(ctx, "A", A));
  FEA_CALL(check_lapack_prec(ctx, "potrf", A, NULL));
  FEA_CALL(check_square(ctx, "potrf", A));
  if (A->rows == 0) return FEA_SUCCESS;
  return DISPATCH(ctx, potrf, ctx, uplo, A);
}

fea_status fea_dense_potrs(fea_context *ctx, fea_uplo uplo, const fea_dmat *A, fea_dmat *B) {
  FEA_CALL(check_mat(ctx, "A", A));
  FEA_CALL(check_mat(ctx, "B", B));
  FEA_CALL(check_lapack_prec(ctx, "potrs", A, B));
  FEA_CALL(check_square(ctx, "potrs", A));
  FEA_CHECK(B->rows == A->rows, ctx, FEA_ERR_DIMENSION,
            "potrs: A is %lld x %lld but B has %lld rows", (long long)A->rows, (long long)A->cols,
            (long long)B->rows);
  if (B->rows == 0 || B->cols == 0) return FEA_SUCCESS;
  return DISPATCH(ctx, potrs, ctx, uplo, A, B);
}

fea_status fea_dense_getrf(fea_context *ctx, fea_dmat *A, fea_index *ipiv) {
  FEA_CALL(check_mat(ctx, "A", A));
  FEA_CALL(check_lapack_prec(ctx, "getrf", A, NULL));
  FEA_CALL(check_square(ctx, "getrf", A));
  FEA_CHECK(ipiv || A->rows == 0, ctx, FEA_ERR_INVALID_ARG, "getrf: ipiv is NULL");
  if (A->rows == 0) return FEA_SUCCESS;
  return DISPATCH(ctx, getrf, ctx, A, ipiv);
}

fea_status fea_dense_getrs(fea_context *ctx, fea_transpose trans, const fea_dmat *A,
                           const fea_index *ipiv, fea_dmat *B) {
  FEA_CALL(check_mat(ctx, "A", A));
  FEA_CALL(check_mat(ctx, "B", B));
  FEA_CALL(check_lapack_prec(ctx, "getrs", A, B));
  FEA_CALL(check_square(ctx, "getrs", A));
  FEA_CHECK(B->rows == A->rows, ctx, FEA_ERR_DIMENSION,
            "getrs: A is %lld x %lld but B has %lld rows", (long long)A->rows, (long long)A->cols,
            (long long)B->rows);
  FEA_CHECK(ipiv || A->rows == 0, ctx, FEA_ERR_INVALID_ARG, "getrs: ipiv is NULL");
  for (fea_index i = 0; i < A->rows; i++)
    FEA_CHECK(ipiv[i] >= 1 && ipiv[i] <= A->rows, ctx, FEA_ERR_INVALID_ARG,
              "getrs: ipiv[%lld] = %lld is outside [1, %lld]", (long long)i, (long long)ipiv[i],
              (long long)A->rows);
  if (B->rows == 0 || B->cols == 0) return FEA_SUCCESS;
  return DISPATCH(ctx, getrs, ctx, trans, A, ipiv, B);
}
