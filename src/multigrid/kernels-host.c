/* The multigrid vector kernels on host arrays (multigrid-kernels.h): one
 * OpenMP loop each on the context's threads, serial below
 * FEA_MG_PARALLEL_MIN entries. No BLAS: a BLAS call between the OpenMP
 * regions of the cycle wakes OpenBLAS's own thread pool, and the two pools
 * spinning against each other slow the cycle down tenfold on a machine with
 * few cores (hence norm2's plain sum of squares, which a residual of a
 * smooth solution cannot overflow). Transfer matrices are the hierarchy's
 * own CSR matrices, not copied. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "linalg/dense.h"
#include "multigrid-impl.h"
#include "internal/multigrid-kernels.h"

#define TEAM(n) num_threads(ctx->nthreads > 0 ? ctx->nthreads : 1) if ((n) >= FEA_MG_PARALLEL_MIN)

static fea_status host_alloc(fea_context *ctx, fea_index n, double **p) {
  *p = calloc((size_t)n + 1, sizeof **p);
  FEA_CHECK(*p, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a vector of %lld entries", (long long)n);
  return FEA_SUCCESS;
}

static void host_release(fea_context *ctx, double *p) {
  (void)ctx;
  free(p);
}

static fea_status host_copy(fea_context *ctx, fea_index n, const double *src, double *dst) {
  (void)ctx;
  if (n > 0 && src != dst) memcpy(dst, src, (size_t)n * sizeof *dst);
  return FEA_SUCCESS;
}

static fea_status host_zero(fea_context *ctx, fea_index n, double *x) {
  (void)ctx;
  if (n > 0) memset(x, 0, (size_t)n * sizeof *x);
  return FEA_SUCCESS;
}

static fea_status host_sub_from(fea_context *ctx, fea_index n, const double *b, double *r) {
#pragma omp parallel for schedule(static) TEAM(n)
  for (fea_index i = 0; i < n; i++) r[i] = b[i] - r[i];
  return FEA_SUCCESS;
}

static fea_status host_add(fea_context *ctx, fea_index n, const double *c, double *x) {
#pragma omp parallel for schedule(static) TEAM(n)
  for (fea_index i = 0; i < n; i++) x[i] += c[i];
  return FEA_SUCCESS;
}

static fea_status host_scaled_update(fea_context *ctx, fea_index n, double alpha,
                                     const double *dinv, const double *r, double *x, int zero) {
#pragma omp parallel for schedule(static) TEAM(n)
  for (fea_index i = 0; i < n; i++) {
    const double z = alpha * (dinv ? dinv[i] : 1.0) * r[i];
    x[i] = zero ? z : x[i] + z;
  }
  return FEA_SUCCESS;
}

static fea_status host_chebyshev_first(fea_context *ctx, fea_index n, double theta,
                                       const double *dinv, const double *r, double *d, double *x,
                                       int zero) {
#pragma omp parallel for schedule(static) TEAM(n)
  for (fea_index i = 0; i < n; i++) {
    d[i] = (dinv ? dinv[i] : 1.0) * r[i] / theta;
    x[i] = zero ? d[i] : x[i] + d[i];
  }
  return FEA_SUCCESS;
}

static fea_status host_chebyshev_step(fea_context *ctx, fea_index n, double c1, double c2,
                                      const double *dinv, const double *r, double *d, double *x) {
#pragma omp parallel for schedule(static) TEAM(n)
  for (fea_index i = 0; i < n; i++) {
    d[i] = c1 * d[i] + c2 * (dinv ? dinv[i] : 1.0) * r[i];
    x[i] += d[i];
  }
  return FEA_SUCCESS;
}

static fea_status host_norm2(fea_context *ctx, fea_index n, const double *x, double *result) {
  double s = 0.0;
#pragma omp parallel for schedule(static) TEAM(n) reduction(+ : s)
  for (fea_index i = 0; i < n; i++) s += x[i] * x[i];
  *result = sqrt(s);
  return FEA_SUCCESS;
}

static fea_status host_matrix_create(fea_context *ctx, const fea_matrix *A, void **M) {
  (void)ctx;
  *M = (void *)A;
  return FEA_SUCCESS;
}

static fea_status host_matrix_multiply(fea_context *ctx, void *M, const double *x, double *y,
                                       int add) {
  const fea_matrix *A = M;
  const fea_index n = A->rows;
#pragma omp parallel for schedule(static) TEAM(n)
  for (fea_index i = 0; i < n; i++) {
    double s = add ? y[i] : 0.0;
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += A->values[k] * x[A->col_idx[k]];
    y[i] = s;
  }
  return FEA_SUCCESS;
}

static void host_matrix_destroy(fea_context *ctx, void *M) {
  (void)ctx;
  (void)M;
}

static fea_status host_potrf(fea_context *ctx, fea_index n, double *A) {
  fea_dmat L = {A, n, n, n, FEA_F64};
  return fea_dense_potrf(ctx, FEA_LOWER, &L);
}

static fea_status host_potrs(fea_context *ctx, fea_index n, const double *L, double *b) {
  const fea_dmat F = {(double *)L, n, n, n, FEA_F64};
  fea_dmat B = {b, n, 1, n, FEA_F64};
  return fea_dense_potrs(ctx, FEA_LOWER, &F, &B);
}

const fea_mg_kernels fea_mg_host_kernels = {
    .host = 1,
    .alloc = host_alloc,
    .release = host_release,
    .upload = host_copy,
    .download = host_copy,
    .copy = host_copy,
    .zero = host_zero,
    .sub_from = host_sub_from,
    .add = host_add,
    .scaled_update = host_scaled_update,
    .chebyshev_first = host_chebyshev_first,
    .chebyshev_step = host_chebyshev_step,
    .norm2 = host_norm2,
    .matrix_create = host_matrix_create,
    .matrix_multiply = host_matrix_multiply,
    .matrix_destroy = host_matrix_destroy,
    .host_potrf = host_potrf,
    .host_potrs = host_potrs,
};
