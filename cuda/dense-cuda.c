/* Dense ops of /gpu/cuda: BLAS-3 through cuBLAS, factorizations through the
 * 64-bit generic cuSOLVER API. Shapes and precisions were validated by
 * src/linalg/dense-checks.c; matrices are column-major views of device memory. */
#include "fea-config.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/context.h"
#include "cuda-backend.h"
#include "cuda-check.h"
#include "linalg/dense.h"
#include "internal/error.h"

_Static_assert(sizeof(fea_index) == sizeof(int64_t), "cuSOLVER pivots are int64_t");

static cublasOperation_t op_of(fea_transpose t) {
  return t == FEA_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
}

static cublasFillMode_t fill_of(fea_uplo u) {
  return u == FEA_UPPER ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
}

static cublasSideMode_t side_of(fea_side s) {
  return s == FEA_RIGHT ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
}

static cublasDiagType_t diag_of(fea_diag d) {
  return d == FEA_UNIT ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
}

/* Only FP64 and FP32 have cuBLAS syrk/trsm and cuSOLVER factorizations. */
static fea_status need_f64_or_f32(fea_context *ctx, fea_precision prec, const char *what) {
  FEA_CHECK(prec == FEA_F64 || prec == FEA_F32, ctx, FEA_ERR_UNSUPPORTED,
            "%s on /gpu/cuda needs f64 or f32 data, got %s", what,
            fea_precision_name(prec) ? fea_precision_name(prec) : "an unknown precision");
  return FEA_SUCCESS;
}

static fea_status cuda_gemm(fea_context *ctx, fea_transpose ta, fea_transpose tb, double alpha,
                            const fea_dmat *A, const fea_dmat *B, double beta, fea_dmat *C,
                            fea_compute compute) {
  struct fea_cuda *b;
  int64_t m = C->rows, n = C->cols, k = ta == FEA_NO_TRANS ? A->cols : A->rows;
  if (m == 0 || n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));

  if (A->prec == FEA_F64) {
    /* On FP64 tensor-core GPUs (cc 8.0, 9.0) cuBLAS uses them by itself. */
    FEA_CALL_CUBLAS(ctx, cublasDgemm_64(b->blas, op_of(ta), op_of(tb), m, n, k, &alpha, A->data,
                                        A->ld, B->data, B->ld, &beta, C->data, C->ld));
  } else if (A->prec == FEA_F32 && compute != FEA_COMPUTE_TF32) {
    float a = (float)alpha, c = (float)beta;
    FEA_CALL_CUBLAS(ctx, cublasSgemm_64(b->blas, op_of(ta), op_of(tb), m, n, k, &a, A->data, A->ld,
                                        B->data, B->ld, &c, C->data, C->ld));
  } else {
    /* FP32 through TF32 tensor cores, or 16-bit inputs accumulated in FP32
     * with C in FP32 or in the inputs' format. */
    float a = (float)alpha, c = (float)beta;
    cublasComputeType_t ct = A->prec == FEA_F32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    FEA_CALL_CUBLAS(ctx,
                    cublasGemmEx_64(b->blas, op_of(ta), op_of(tb), m, n, k, &a, A->data,
                                    fea_cuda_data_type(A->prec), A->ld, B->data,
                                    fea_cuda_data_type(B->prec), B->ld, &c, C->data,
                                    fea_cuda_data_type(C->prec), C->ld, ct, CUBLAS_GEMM_DEFAULT));
  }
  return FEA_SUCCESS;
}

static fea_status cuda_syrk(fea_context *ctx, fea_uplo uplo, fea_transpose trans, double alpha,
                            const fea_dmat *A, double beta, fea_dmat *C) {
  struct fea_cuda *b;
  int64_t n = C->rows, k = trans == FEA_NO_TRANS ? A->cols : A->rows;
  FEA_CALL(need_f64_or_f32(ctx, C->prec, "syrk"));
  if (n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (C->prec == FEA_F64) {
    FEA_CALL_CUBLAS(ctx, cublasDsyrk_64(b->blas, fill_of(uplo), op_of(trans), n, k, &alpha, A->data,
                                        A->ld, &beta, C->data, C->ld));
  } else {
    float a = (float)alpha, c = (float)beta;
    FEA_CALL_CUBLAS(ctx, cublasSsyrk_64(b->blas, fill_of(uplo), op_of(trans), n, k, &a, A->data,
                                        A->ld, &c, C->data, C->ld));
  }
  return FEA_SUCCESS;
}

static fea_status cuda_trsm(fea_context *ctx, fea_side side, fea_uplo uplo, fea_transpose trans,
                            fea_diag diag, double alpha, const fea_dmat *A, fea_dmat *B) {
  struct fea_cuda *b;
  int64_t m = B->rows, n = B->cols;
  FEA_CALL(need_f64_or_f32(ctx, B->prec, "trsm"));
  if (m == 0 || n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (B->prec == FEA_F64) {
    FEA_CALL_CUBLAS(ctx,
                    cublasDtrsm_64(b->blas, side_of(side), fill_of(uplo), op_of(trans),
                                   diag_of(diag), m, n, &alpha, A->data, A->ld, B->data, B->ld));
  } else {
    float a = (float)alpha;
    FEA_CALL_CUBLAS(ctx, cublasStrsm_64(b->blas, side_of(side), fill_of(uplo), op_of(trans),
                                        diag_of(diag), m, n, &a, A->data, A->ld, B->data, B->ld));
  }
  return FEA_SUCCESS;
}

/* cuSOLVER reports a bad argument through a negative info; our arguments were
 * validated, so that is a bug in this file or in the library underneath. */
static fea_status check_negative_info(fea_context *ctx, int info, const char *routine) {
  FEA_CHECK(info >= 0, ctx, FEA_ERR_BACKEND, "%s() rejected its argument %d", routine, -info);
  return FEA_SUCCESS;
}

/* Host scratch that cuSOLVER asks for lives only for one call. */
static fea_status host_scratch(fea_context *ctx, size_t bytes, void **out) {
  *out = NULL;
  if (bytes == 0) return FEA_SUCCESS;
  *out = malloc(bytes);
  FEA_CHECK(*out != NULL, ctx, FEA_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host workspace",
            bytes);
  return FEA_SUCCESS;
}

/* Runs the factorization and waits for it, so the host scratch can go. */
static fea_status potrf_run(fea_context *ctx, struct fea_cuda *b, fea_uplo uplo, fea_dmat *A,
                            void *dwork, size_t dbytes, void *hwork, size_t hbytes, int *info) {
  cudaDataType t = fea_cuda_data_type(A->prec);
  FEA_CALL_CUSOLVER(ctx,
                    cusolverDnXpotrf(b->solver, b->solver_params, fill_of(uplo), A->rows, t,
                                     A->data, A->ld, t, dwork, dbytes, hwork, hbytes, b->dinfo));
  return fea_cuda_read_info(ctx, info);
}

static fea_status cuda_potrf(fea_context *ctx, fea_uplo uplo, fea_dmat *A) {
  struct fea_cuda *b;
  int64_t n = A->rows;
  cudaDataType t = fea_cuda_data_type(A->prec);
  size_t dbytes = 0, hbytes = 0;
  void *dwork, *hwork;
  int info = 0;

  FEA_CALL(need_f64_or_f32(ctx, A->prec, "potrf"));
  if (n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUSOLVER(ctx, cusolverDnXpotrf_bufferSize(b->solver, b->solver_params, fill_of(uplo), n,
                                                     t, A->data, A->ld, t, &dbytes, &hbytes));
  FEA_CALL(fea_cuda_workspace(ctx, dbytes, &dwork));
  FEA_CALL(host_scratch(ctx, hbytes, &hwork));
  fea_status st = potrf_run(ctx, b, uplo, A, dwork, dbytes, hwork, hbytes, &info);
  if (st < 0) (void)cudaStreamSynchronize(b->stream);
  free(hwork);
  FEA_CALL(st);
  FEA_CALL(check_negative_info(ctx, info, "cusolverDnXpotrf"));
  FEA_CHECK(info == 0, ctx, FEA_ERR_NOT_POSDEF,
            "leading minor of order %d is not positive definite", info);
  return FEA_SUCCESS;
}

static fea_status cuda_potrs(fea_context *ctx, fea_uplo uplo, const fea_dmat *A, fea_dmat *B) {
  struct fea_cuda *b;
  int64_t n = A->rows, nrhs = B->cols;
  cudaDataType t = fea_cuda_data_type(A->prec);
  int info = 0;

  FEA_CALL(need_f64_or_f32(ctx, A->prec, "potrs"));
  if (n == 0 || nrhs == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUSOLVER(ctx, cusolverDnXpotrs(b->solver, b->solver_params, fill_of(uplo), n, nrhs, t,
                                          A->data, A->ld, t, B->data, B->ld, b->dinfo));
  FEA_CALL(fea_cuda_read_info(ctx, &info));
  return check_negative_info(ctx, info, "cusolverDnXpotrs");
}

/* Factorizes, brings the pivots to the host and waits. */
static fea_status getrf_run(fea_context *ctx, struct fea_cuda *b, fea_dmat *A, int64_t *dpiv,
                            fea_index *ipiv, void *dwork, size_t dbytes, void *hwork, size_t hbytes,
                            int *info) {
  cudaDataType t = fea_cuda_data_type(A->prec);
  int64_t npiv = A->rows < A->cols ? A->rows : A->cols;
  FEA_CALL_CUSOLVER(ctx, cusolverDnXgetrf(b->solver, b->solver_params, A->rows, A->cols, t, A->data,
                                          A->ld, dpiv, t, dwork, dbytes, hwork, hbytes, b->dinfo));
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(ipiv, dpiv, (size_t)npiv * sizeof *ipiv,
                                     cudaMemcpyDeviceToHost, b->stream));
  return fea_cuda_read_info(ctx, info);
}

static fea_status cuda_getrf(fea_context *ctx, fea_dmat *A, fea_index *ipiv) {
  struct fea_cuda *b;
  int64_t m = A->rows, n = A->cols, npiv = m < n ? m : n;
  cudaDataType t = fea_cuda_data_type(A->prec);
  size_t dbytes = 0, hbytes = 0;
  void *scratch, *hwork;
  int info = 0;

  FEA_CALL(need_f64_or_f32(ctx, A->prec, "getrf"));
  if (npiv == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUSOLVER(ctx, cusolverDnXgetrf_bufferSize(b->solver, b->solver_params, m, n, t, A->data,
                                                     A->ld, t, &dbytes, &hbytes));
  /* One scratch block: the pivots first, cuSOLVER's workspace after them. */
  size_t piv_bytes = fea_cuda_align_up((size_t)npiv * sizeof(int64_t));
  FEA_CALL(fea_cuda_workspace(ctx, piv_bytes + dbytes, &scratch));
  int64_t *dpiv = scratch;
  void *dwork = (char *)scratch + piv_bytes;
  FEA_CALL(host_scratch(ctx, hbytes, &hwork));
  fea_status st = getrf_run(ctx, b, A, dpiv, ipiv, dwork, dbytes, hwork, hbytes, &info);
  if (st < 0) (void)cudaStreamSynchronize(b->stream);
  free(hwork);
  FEA_CALL(st);
  FEA_CALL(check_negative_info(ctx, info, "cusolverDnXgetrf"));
  /* As in LAPACK, the factorization is complete anyway; U cannot be solved with. */
  FEA_CHECK(info == 0, ctx, FEA_ERR_SINGULAR, "U(%d,%d) is exactly zero", info, info);
  return FEA_SUCCESS;
}

static fea_status cuda_getrs(fea_context *ctx, fea_transpose trans, const fea_dmat *A,
                             const fea_index *ipiv, fea_dmat *B) {
  struct fea_cuda *b;
  int64_t n = A->rows, nrhs = B->cols;
  cudaDataType t = fea_cuda_data_type(A->prec);
  void *scratch;
  int info = 0;

  FEA_CALL(need_f64_or_f32(ctx, A->prec, "getrs"));
  if (n == 0 || nrhs == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL(fea_cuda_workspace(ctx, (size_t)n * sizeof(int64_t), &scratch));
  int64_t *dpiv = scratch;
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(dpiv, ipiv, (size_t)n * sizeof *dpiv, cudaMemcpyHostToDevice,
                                     b->stream));
  FEA_CALL_CUSOLVER(ctx, cusolverDnXgetrs(b->solver, b->solver_params, op_of(trans), n, nrhs, t,
                                          A->data, A->ld, dpiv, t, B->data, B->ld, b->dinfo));
  FEA_CALL(fea_cuda_read_info(ctx, &info));
  return check_negative_info(ctx, info, "cusolverDnXgetrs");
}

const struct fea_dense_ops fea_cuda_dense_ops = {
    .gemm = cuda_gemm,
    .syrk = cuda_syrk,
    .trsm = cuda_trsm,
    .potrf = cuda_potrf,
    .potrs = cuda_potrs,
    .getrf = cuda_getrf,
    .getrs = cuda_getrs,
};
