/* Multigrid's vector kernels on /gpu/cuda (src/internal/multigrid-kernels.h):
 * the elementwise steps of the cycle and the smoothers as kernels
 * (kernels/multigrid.cu), norms by cuBLAS, transfer matrices by cuSPARSE's
 * generic SpMV (CSR, FP64, 64-bit indices), everything on the context's
 * stream. Uploads read pageable host memory (cudaMemcpyAsync has read it
 * when it returns); downloads and norms wait for the stream. The level
 * operators are the context's own operators (operator-cuda.c).
 * Compiled, not yet run on a GPU; the host table runs the same cycle, and
 * tests/unit/test-multigrid.c plays this table's way through it on the host. */
#include "fea-config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "cuda-backend.h"
#include "cuda-check.h"
#include "internal/error.h"
#include "linalg/dense.h"
#include "kernels/multigrid-launch.h"
#include "internal/multigrid-kernels.h"

_Static_assert(sizeof(fea_index) == sizeof(int64_t), "CSR indices go up as int64_t");

static fea_status mg_alloc(fea_context *ctx, fea_index n, double **p) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  void *d = NULL;
  const size_t bytes = ((size_t)n + 1) * sizeof(double);
  FEA_CALL(fea_cuda_malloc(ctx, bytes, &d));
  cudaError_t e = cudaMemsetAsync(d, 0, bytes, b->stream);
  if (e != cudaSuccess) {
    fea_cuda_free(ctx, d);
    FEA_CALL_CUDA(ctx, e);
  }
  *p = d;
  return FEA_SUCCESS;
}

static void mg_release(fea_context *ctx, double *p) {
  struct fea_cuda *b = NULL;
  if (p && fea_cuda_enter(ctx, &b) == FEA_SUCCESS) {
    (void)cudaStreamSynchronize(b->stream); /* no queued kernel may still use it */
    fea_cuda_free(ctx, p);
  }
}

static fea_status mg_upload(fea_context *ctx, fea_index n, const double *host, double *p) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (n > 0)
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(p, host, (size_t)n * sizeof *p, cudaMemcpyHostToDevice,
                                       b->stream));
  return FEA_SUCCESS;
}

static fea_status mg_download(fea_context *ctx, fea_index n, const double *p, double *host) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (n > 0)
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(host, p, (size_t)n * sizeof *p, cudaMemcpyDeviceToHost,
                                       b->stream));
  return fea_cuda_sync(ctx);
}

static fea_status mg_copy(fea_context *ctx, fea_index n, const double *src, double *dst) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (n > 0 && src != dst)
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(dst, src, (size_t)n * sizeof *dst, cudaMemcpyDeviceToDevice,
                                       b->stream));
  return FEA_SUCCESS;
}

static fea_status mg_zero(fea_context *ctx, fea_index n, double *x) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (n > 0) FEA_CALL_CUDA(ctx, cudaMemsetAsync(x, 0, (size_t)n * sizeof *x, b->stream));
  return FEA_SUCCESS;
}

static fea_status mg_sub_from(fea_context *ctx, fea_index n, const double *bv, double *r) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUDA(ctx, fea_cuda_mg_sub_from(n, bv, r, b->stream));
  return FEA_SUCCESS;
}

static fea_status mg_add(fea_context *ctx, fea_index n, const double *c, double *x) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUDA(ctx, fea_cuda_mg_add(n, c, x, b->stream));
  return FEA_SUCCESS;
}

static fea_status mg_scaled_update(fea_context *ctx, fea_index n, double alpha, const double *dinv,
                                   const double *r, double *x, int zero) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUDA(ctx, fea_cuda_mg_scaled_update(n, alpha, dinv, r, x, zero, b->stream));
  return FEA_SUCCESS;
}

static fea_status mg_chebyshev_first(fea_context *ctx, fea_index n, double theta,
                                     const double *dinv, const double *r, double *d, double *x,
                                     int zero) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUDA(ctx, fea_cuda_mg_chebyshev_first(n, theta, dinv, r, d, x, zero, b->stream));
  return FEA_SUCCESS;
}

static fea_status mg_chebyshev_step(fea_context *ctx, fea_index n, double c1, double c2,
                                    const double *dinv, const double *r, double *d, double *x) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUDA(ctx, fea_cuda_mg_chebyshev_step(n, c1, c2, dinv, r, d, x, b->stream));
  return FEA_SUCCESS;
}

static fea_status mg_norm2(fea_context *ctx, fea_index n, const double *x, double *result) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  *result = 0.0;
  if (n <= 0) return FEA_SUCCESS;
  /* Host pointer mode (the context's): the result is on the host on return. */
  FEA_CALL_CUBLAS(ctx, cublasDnrm2_64(b->blas, (int64_t)n, x, 1, result));
  return FEA_SUCCESS;
}

/* A transfer matrix on the device. */
typedef struct mg_matrix {
  fea_index rows, cols;
  fea_index *rp, *ci;
  double *val;
  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t vx, vy;
  void *buffer;
} mg_matrix;

static void mg_matrix_destroy(fea_context *ctx, void *M) {
  mg_matrix *m = M;
  struct fea_cuda *b = NULL;
  if (!m) return;
  if (fea_cuda_enter(ctx, &b) == FEA_SUCCESS) {
    (void)cudaStreamSynchronize(b->stream);
    if (m->mat) (void)cusparseDestroySpMat(m->mat);
    if (m->vx) (void)cusparseDestroyDnVec(m->vx);
    if (m->vy) (void)cusparseDestroyDnVec(m->vy);
    fea_cuda_free(ctx, m->rp);
    fea_cuda_free(ctx, m->ci);
    fea_cuda_free(ctx, m->val);
    fea_cuda_free(ctx, m->buffer);
  }
  free(m);
}

static fea_status upload_bytes(fea_context *ctx, struct fea_cuda *b, const void *host, size_t bytes,
                               void **dev) {
  FEA_CALL(fea_cuda_malloc(ctx, bytes ? bytes : 1, dev));
  if (bytes)
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(*dev, host, bytes, cudaMemcpyHostToDevice, b->stream));
  return FEA_SUCCESS;
}

static fea_status matrix_setup(fea_context *ctx, struct fea_cuda *b, const fea_matrix *A,
                               mg_matrix *m) {
  m->rows = A->rows;
  m->cols = A->cols;
  FEA_CALL(upload_bytes(ctx, b, A->row_ptr, ((size_t)A->rows + 1) * sizeof(fea_index),
                        (void **)&m->rp));
  FEA_CALL(upload_bytes(ctx, b, A->col_idx, (size_t)A->nnz * sizeof(fea_index), (void **)&m->ci));
  FEA_CALL(upload_bytes(ctx, b, A->values, (size_t)A->nnz * sizeof(double), (void **)&m->val));
  FEA_CALL_CUSPARSE(ctx, cusparseCreateCsr(&m->mat, A->rows, A->cols, A->nnz, m->rp, m->ci, m->val,
                                           CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I,
                                           CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  /* Placeholders until the first product: the values array for both (sizing only). */
  FEA_CALL_CUSPARSE(ctx, cusparseCreateDnVec(&m->vx, A->cols, m->val, CUDA_R_64F));
  FEA_CALL_CUSPARSE(ctx, cusparseCreateDnVec(&m->vy, A->rows, m->val, CUDA_R_64F));
  FEA_CALL_CUSPARSE(ctx, cusparseSetStream(b->sparse, b->stream));
  const double one = 1.0;
  size_t bytes = 0;
  FEA_CALL_CUSPARSE(ctx, cusparseSpMV_bufferSize(b->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                                 m->mat, m->vx, &one, m->vy, CUDA_R_64F,
                                                 CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  FEA_CALL(fea_cuda_malloc(ctx, bytes ? bytes : 1, &m->buffer));
  return fea_cuda_sync(ctx); /* faults of the uploads show here */
}

static fea_status mg_matrix_create(fea_context *ctx, const fea_matrix *A, void **M) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  mg_matrix *m = calloc(1, sizeof *m);
  FEA_CHECK(m, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a transfer matrix");
  fea_status st = matrix_setup(ctx, b, A, m);
  if (st != FEA_SUCCESS) {
    mg_matrix_destroy(ctx, m);
    return st;
  }
  *M = m;
  return FEA_SUCCESS;
}

static fea_status mg_matrix_multiply(fea_context *ctx, void *M, const double *x, double *y,
                                     int add) {
  mg_matrix *m = M;
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (m->rows == 0) return FEA_SUCCESS;
  /* y = A x clears y first: beta = 0 must not meet stale NaNs. */
  if (!add) FEA_CALL_CUDA(ctx, cudaMemsetAsync(y, 0, (size_t)m->rows * sizeof *y, b->stream));
  const double one = 1.0;
  FEA_CALL_CUSPARSE(ctx, cusparseSetStream(b->sparse, b->stream));
  FEA_CALL_CUSPARSE(ctx, cusparseSetPointerMode(b->sparse, CUSPARSE_POINTER_MODE_HOST));
  FEA_CALL_CUSPARSE(ctx, cusparseDnVecSetValues(m->vx, (void *)x));
  FEA_CALL_CUSPARSE(ctx, cusparseDnVecSetValues(m->vy, y));
  FEA_CALL_CUSPARSE(ctx,
                    cusparseSpMV(b->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->mat, m->vx,
                                 &one, m->vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, m->buffer));
  return FEA_SUCCESS;
}

/* The coarsest level's Cholesky on host arrays: on this context's host
 * delegate, whose message is raised again here. */
static fea_status relay(fea_context *ctx, fea_context *hctx, fea_status st, const char *what) {
  if (st >= 0) return st;
  char why[FEA_ERROR_LEN];
  snprintf(why, sizeof why, "%s", hctx->last_error);
  return FEA_ERROR(ctx, st, "%s on the host: %s", what, why);
}

static fea_status cuda_host_potrf(fea_context *ctx, fea_index n, double *A) {
  fea_context *hctx;
  FEA_CALL(fea_context_host(ctx, &hctx));
  fea_dmat L = {A, n, n, n, FEA_F64};
  return relay(ctx, hctx, fea_dense_potrf(hctx, FEA_LOWER, &L), "the coarsest level's factor");
}

static fea_status cuda_host_potrs(fea_context *ctx, fea_index n, const double *L, double *b) {
  fea_context *hctx;
  FEA_CALL(fea_context_host(ctx, &hctx));
  const fea_dmat F = {(double *)L, n, n, n, FEA_F64};
  fea_dmat B = {b, n, 1, n, FEA_F64};
  return relay(ctx, hctx, fea_dense_potrs(hctx, FEA_LOWER, &F, &B), "the coarse solve");
}

const fea_mg_kernels fea_cuda_mg_kernels = {
    .host = 0,
    .alloc = mg_alloc,
    .release = mg_release,
    .upload = mg_upload,
    .download = mg_download,
    .copy = mg_copy,
    .zero = mg_zero,
    .sub_from = mg_sub_from,
    .add = mg_add,
    .scaled_update = mg_scaled_update,
    .chebyshev_first = mg_chebyshev_first,
    .chebyshev_step = mg_chebyshev_step,
    .norm2 = mg_norm2,
    .matrix_create = mg_matrix_create,
    .matrix_multiply = mg_matrix_multiply,
    .matrix_destroy = mg_matrix_destroy,
    .host_potrf = cuda_host_potrf,
    .host_potrs = cuda_host_potrs,
};
