/* /cpu/ref dense ops through OpenBLAS (CBLAS) and LAPACKE, column-major.
 *
 * Debian's OpenBLAS has no half-precision GEMM (no sbgemm), so f16/bf16
 * inputs are widened to f32 and multiplied with SGEMM: the same arithmetic as
 * cuBLAS's GemmEx with FP32 accumulation, at f32 speed. */
#include <cblas.h>
#include <lapacke.h>
#include <stdlib.h>

#include "blas.h"
#include "context.h"
#include "cpu.h"
#include "error.h"
#include "half.h"

static fea_status fits_int(fea_context *ctx, const char *op, const fea_dmat *M) {
  FEA_CHECK(M->rows <= FEA_BLAS_MAX_INT && M->cols <= FEA_BLAS_MAX_INT && M->ld <= FEA_BLAS_MAX_INT,
            ctx, FEA_ERR_UNSUPPORTED,
            "%s: %lld x %lld (ld %lld) exceeds the 32-bit integers of this BLAS", op,
            (long long)M->rows, (long long)M->cols, (long long)M->ld);
  return FEA_SUCCESS;
}

static CBLAS_TRANSPOSE cb_trans(fea_transpose t) { return t ? CblasTrans : CblasNoTrans; }
static CBLAS_UPLO cb_uplo(fea_uplo u) { return u == FEA_UPPER ? CblasUpper : CblasLower; }
static char lp_uplo(fea_uplo u) { return u == FEA_UPPER ? 'U' : 'L'; }

/* A compact f32 copy of a 16-bit matrix (ld = rows). */
static float *widen(fea_context *ctx, const fea_dmat *M) {
  float *w = malloc((size_t)(M->rows * M->cols) * sizeof *w + 1);
  if (!w) return NULL;
  for (fea_index j = 0; j < M->cols; j++)
    fea_convert(M->prec, (const char *)M->data + (size_t)(j * M->ld) * 2, FEA_F32, w + j * M->rows,
                M->rows);
  return w;
}

static fea_status gemm_half(fea_context *ctx, fea_transpose ta, fea_transpose tb, double alpha,
                            const fea_dmat *A, const fea_dmat *B, double beta, fea_dmat *C) {
  fea_index m = C->rows, n = C->cols, k = ta ? A->rows : A->cols;
  float *a = widen(ctx, A), *b = widen(ctx, B);
  float *c = C->prec == FEA_F32 ? C->data : widen(ctx, C);
  fea_index ldc = C->prec == FEA_F32 ? C->ld : m;
  fea_status s = FEA_SUCCESS;
  if (!a || !b || !c) {
    s = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "gemm: no memory to widen %s operands to f32",
                  fea_precision_name(A->prec));
  } else {
    cblas_sgemm(CblasColMajor, cb_trans(ta), cb_trans(tb), (int)m, (int)n, (int)k, (float)alpha,
                a, (int)(A->rows > 1 ? A->rows : 1), b, (int)(B->rows > 1 ? B->rows : 1),
                (float)beta, c, (int)ldc);
    if (C->prec != FEA_F32)
      for (fea_index j = 0; j < n; j++)
        fea_convert(FEA_F32, c + j * m, C->prec, (char *)C->data + (size_t)(j * C->ld) * 2, m);
  }
  free(a);
  free(b);
  if (c != C->data) free(c);
  return s;
}

static fea_status ref_gemm(fea_context *ctx, fea_transpose ta, fea_transpose tb, double alpha,
                           const fea_dmat *A, const fea_dmat *B, double beta, fea_dmat *C,
                           fea_compute compute) {
  FEA_CHECK(compute == FEA_COMPUTE_DEFAULT, ctx, FEA_ERR_UNSUPPORTED,
            "gemm: TF32 compute needs tensor cores; backend %s has none", ctx->backend->prefix);
  FEA_CALL(fits_int(ctx, "gemm", A));
  FEA_CALL(fits_int(ctx, "gemm", B));
  FEA_CALL(fits_int(ctx, "gemm", C));
  fea_blas_use_threads(ctx->nthreads);
  int m = (int)C->rows, n = (int)C->cols, k = (int)(ta ? A->rows : A->cols);
  switch (A->prec) {
  case FEA_F64:
    cblas_dgemm(CblasColMajor, cb_trans(ta), cb_trans(tb), m, n, k, alpha, A->data, (int)A->ld,
                B->data, (int)B->ld, beta, C->data, (int)C->ld);
    return FEA_SUCCESS;
  case FEA_F32:
    cblas_sgemm(CblasColMajor, cb_trans(ta), cb_trans(tb), m, n, k, (float)alpha, A->data,
                (int)A->ld, B->data, (int)B->ld, (float)beta, C->data, (int)C->ld);
    return FEA_SUCCESS;
  default:
    return gemm_half(ctx, ta, tb, alpha, A, B, beta, C);
  }
}

static fea_status ref_syrk(fea_context *ctx, fea_uplo uplo, fea_transpose trans, double alpha,
                           const fea_dmat *A, double beta, fea_dmat *C) {
  FEA_CALL(fits_int(ctx, "syrk", A));
  FEA_CALL(fits_int(ctx, "syrk", C));
  fea_blas_use_threads(ctx->nthreads);
  int n = (int)C->rows, k = (int)(trans ? A->rows : A->cols);
  if (A->prec == FEA_F64)
    cblas_dsyrk(CblasColMajor, cb_uplo(uplo), cb_trans(trans), n, k, alpha, A->data, (int)A->ld,
                beta, C->data, (int)C->ld);
  else
    cblas_ssyrk(CblasColMajor, cb_uplo(uplo), cb_trans(trans), n, k, (float)alpha, A->data,
                (int)A->ld, (float)beta, C->data, (int)C->ld);
  return FEA_SUCCESS;
}

static fea_status ref_trsm(fea_context *ctx, fea_side side, fea_uplo uplo, fea_transpose trans,
                           fea_diag diag, double alpha, const fea_dmat *A, fea_dmat *B) {
  FEA_CALL(fits_int(ctx, "trsm", A));
  FEA_CALL(fits_int(ctx, "trsm", B));
  fea_blas_use_threads(ctx->nthreads);
  CBLAS_SIDE cs = side == FEA_RIGHT ? CblasRight : CblasLeft;
  CBLAS_DIAG cd = diag == FEA_UNIT ? CblasUnit : CblasNonUnit;
  if (A->prec == FEA_F64)
    cblas_dtrsm(CblasColMajor, cs, cb_uplo(uplo), cb_trans(trans), cd, (int)B->rows, (int)B->cols,
                alpha, A->data, (int)A->ld, B->data, (int)B->ld);
  else
    cblas_strsm(CblasColMajor, cs, cb_uplo(uplo), cb_trans(trans), cd, (int)B->rows, (int)B->cols,
                (float)alpha, A->data, (int)A->ld, B->data, (int)B->ld);
  return FEA_SUCCESS;
}

/* LAPACK's info: < 0 is a bad argument (a bug here), > 0 the numerical outcome. */
static fea_status lapack_info(fea_context *ctx, const char *op, lapack_int info) {
  FEA_CHECK(info >= 0, ctx, FEA_ERR_BACKEND, "%s: LAPACK rejected argument %d", op, (int)-info);
  return FEA_SUCCESS;
}

static fea_status ref_potrf(fea_context *ctx, fea_uplo uplo, fea_dmat *A) {
  FEA_CALL(fits_int(ctx, "potrf", A));
  fea_blas_use_threads(ctx->nthreads);
  lapack_int info = A->prec == FEA_F64
      ? LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, lp_uplo(uplo), (lapack_int)A->rows, A->data, (lapack_int)A->ld)
      : LAPACKE_spotrf_work(LAPACK_COL_MAJOR, lp_uplo(uplo), (lapack_int)A->rows, A->data, (lapack_int)A->ld);
  FEA_CALL(lapack_info(ctx, "potrf", info));
  FEA_CHECK(info == 0, ctx, FEA_ERR_NOT_POSDEF,
            "potrf: the leading minor of order %d of the %lld x %lld matrix is not positive definite",
            (int)info, (long long)A->rows, (long long)A->cols);
  return FEA_SUCCESS;
}

static fea_status ref_potrs(fea_context *ctx, fea_uplo uplo, const fea_dmat *A, fea_dmat *B) {
  FEA_CALL(fits_int(ctx, "potrs", A));
  FEA_CALL(fits_int(ctx, "potrs", B));
  fea_blas_use_threads(ctx->nthreads);
  lapack_int n = (lapack_int)A->rows, nrhs = (lapack_int)B->cols;
  lapack_int info = A->prec == FEA_F64
      ? LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, lp_uplo(uplo), n, nrhs, A->data, (lapack_int)A->ld, B->data, (lapack_int)B->ld)
      : LAPACKE_spotrs_work(LAPACK_COL_MAJOR, lp_uplo(uplo), n, nrhs, A->data, (lapack_int)A->ld, B->data, (lapack_int)B->ld);
  return lapack_info(ctx, "potrs", info);
}

static fea_status ref_getrf(fea_context *ctx, fea_dmat *A, fea_index *ipiv) {
  FEA_CALL(fits_int(ctx, "getrf", A));
  fea_blas_use_threads(ctx->nthreads);
  lapack_int n = (lapack_int)A->rows;
  lapack_int *piv = malloc((size_t)n * sizeof *piv);
  FEA_CHECK(piv, ctx, FEA_ERR_OUT_OF_MEMORY, "getrf: no memory for %d pivots", (int)n);
  lapack_int info = A->prec == FEA_F64
      ? LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, A->data, (lapack_int)A->ld, piv)
      : LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, A->data, (lapack_int)A->ld, piv);
  for (lapack_int i = 0; i < n; i++) ipiv[i] = piv[i];
  free(piv);
  FEA_CALL(lapack_info(ctx, "getrf", info));
  FEA_CHECK(info == 0, ctx, FEA_ERR_SINGULAR, "getrf: U(%d,%d) is exactly zero: the matrix is singular",
            (int)info, (int)info);
  return FEA_SUCCESS;
}

static fea_status ref_getrs(fea_context *ctx, fea_transpose trans, const fea_dmat *A,
                            const fea_index *ipiv, fea_dmat *B) {
  FEA_CALL(fits_int(ctx, "getrs", A));
  FEA_CALL(fits_int(ctx, "getrs", B));
  fea_blas_use_threads(ctx->nthreads);
  lapack_int n = (lapack_int)A->rows, nrhs = (lapack_int)B->cols;
  lapack_int *piv = malloc((size_t)n * sizeof *piv);
  FEA_CHECK(piv, ctx, FEA_ERR_OUT_OF_MEMORY, "getrs: no memory for %d pivots", (int)n);
  for (lapack_int i = 0; i < n; i++) piv[i] = (lapack_int)ipiv[i];
  char t = trans ? 'T' : 'N';
  lapack_int info = A->prec == FEA_F64
      ? LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, t, n, nrhs, A->data, (lapack_int)A->ld, piv, B->data, (lapack_int)B->ld)
      : LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, t, n, nrhs, A->data, (lapack_int)A->ld, piv, B->data, (lapack_int)B->ld);
  free(piv);
  return lapack_info(ctx, "getrs", info);
}

const struct fea_dense_ops fea_cpu_ref_dense_ops = {
  .gemm = ref_gemm,
  .syrk = ref_syrk,
  .trsm = ref_trsm,
  .potrf = ref_potrf,
  .potrs = ref_potrs,
  .getrf = ref_getrf,
  .getrs = ref_getrs,
};
