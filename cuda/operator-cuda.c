/* /gpu/cuda operators (docs/operators.md "On the GPU").
 *
 * operator-build-cuda.c has the matfree family build the operator's data
 * with the CPU code on a host context (operator-device.h); the upload here
 * takes it to the device:
 *   CSR: the assembled reduced matrix (64-bit indices) for cuSPARSE's generic
 *        SpMV (FP64, CUSPARSE_SPMV_ALG_DEFAULT); y is cleared first for
 *        y = A x, so beta = 0 never meets stale NaNs.
 *   element-matrix: the element -> free-row table (int32, -1 for Dirichlet
 *        DoFs: the CPU operator's numbering), the element matrices per shape
 *        and, with several shapes, each element's group. One thread per
 *        element; with one shape (uniform Cartesian meshes) the matrix is
 *        staged in shared memory. Conflicts: native FP64 atomicAdd
 *        (ATOMIC_CAS, AUTO) or one launch per color of a greedy coloring
 *        (COLORING).
 *   sum factorization: the same row table, the 1D mass and stiffness
 *        matrices and element lengths of the CPU kernel (fea_sf_gpu_params,
 *        kernels/sumfact-stages.h); n or n^2 threads per element, the
 *        contractions in shared memory and registers (kernels/sumfact.cu).
 *        Conflicts as for element matrices.
 *   With the context's scatter=unprotected, both matrix-free kinds add with
 *   plain stores over all elements at once: the thesis's GPU_Max, an upper
 *   bound whose sums are wrong where elements share DoFs.
 *   The diagonal is the CPU operator's, uploaded once; get_diagonal copies.
 * The element-matrix and CSR kinds ran on an H200 (docs/operators.md); the
 * sum-factorization kernel and the unprotected scatter are compiled, not
 * yet run on a GPU. */
#include "fea-config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "cuda-backend.h"
#include "cuda-check.h"
#include "internal/error.h"
#include "kernels/operator-launch.h"
#include "internal/operator-device.h"

_Static_assert(sizeof(fea_index) == sizeof(int64_t), "CSR indices go up as int64_t");

typedef struct cuda_op {
  fea_context *ctx; /* the operator's (it holds the reference) */
  fea_operator_kind kind;
  fea_index n;
  double *diag; /* n */
  /* CSR */
  fea_index *rp, *ci;
  double *val;
  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t vx, vy;
  void *buffer;
  /* matrix-free: both kinds */
  int nb, atomic, unprotected;
  int *erow;            /* ne x nb */
  int64_t *order;       /* coloring: elements sorted by color */
  fea_index *color_off; /* host, ncolors + 1 */
  int ncolors;
  /* element-matrix */
  int shared_K;
  fea_index ne, ngroups;
  int *group; /* ne, or NULL with one group */
  double *K;  /* ngroups x nb x nb */
  /* sum factorization: the kernel's parameters, pointing at fea_sf_mem */
  fea_sf_gpu_params sf;
  double *fea_sf_mem; /* the 1D tables, then the lengths, of every direction */
} cuda_op;

static void op_destroy(void *data) {
  cuda_op *c = data;
  if (!c) return;
  struct fea_cuda *b = NULL;
  if (fea_cuda_enter(c->ctx, &b) == FEA_SUCCESS) {
    (void)cudaStreamSynchronize(b->stream); /* no kernel may still read what goes */
    if (c->mat) (void)cusparseDestroySpMat(c->mat);
    if (c->vx) (void)cusparseDestroyDnVec(c->vx);
    if (c->vy) (void)cusparseDestroyDnVec(c->vy);
    fea_cuda_free(c->ctx, c->diag);
    fea_cuda_free(c->ctx, c->rp);
    fea_cuda_free(c->ctx, c->ci);
    fea_cuda_free(c->ctx, c->val);
    fea_cuda_free(c->ctx, c->buffer);
    fea_cuda_free(c->ctx, c->erow);
    fea_cuda_free(c->ctx, c->group);
    fea_cuda_free(c->ctx, c->K);
    fea_cuda_free(c->ctx, c->order);
    fea_cuda_free(c->ctx, c->fea_sf_mem);
  }
  free(c->color_off);
  free(c);
}

/* Device copy of bytes of host data (pageable: the copy has read the source
 * when cudaMemcpyAsync returns). */
static fea_status upload(fea_context *ctx, const void *host, size_t bytes, void **dev) {
  struct fea_cuda *b = ctx->backend_data;
  FEA_CALL(fea_cuda_malloc(ctx, bytes ? bytes : 1, dev));
  if (bytes)
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(*dev, host, bytes, cudaMemcpyHostToDevice, b->stream));
  return FEA_SUCCESS;
}

static fea_status csr_apply(fea_operator *op, const double *x, double *y, int add) {
  cuda_op *c = op->data;
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(c->ctx, &b));
  if (c->n == 0) return FEA_SUCCESS;
  const double one = 1.0, beta = add ? 1.0 : 0.0;
  if (!add) FEA_CALL_CUDA(c->ctx, cudaMemsetAsync(y, 0, (size_t)c->n * sizeof *y, b->stream));
  FEA_CALL_CUSPARSE(c->ctx, cusparseSetStream(b->sparse, b->stream));
  FEA_CALL_CUSPARSE(c->ctx, cusparseSetPointerMode(b->sparse, CUSPARSE_POINTER_MODE_HOST));
  FEA_CALL_CUSPARSE(c->ctx, cusparseDnVecSetValues(c->vx, (void *)x));
  FEA_CALL_CUSPARSE(c->ctx, cusparseDnVecSetValues(c->vy, y));
  FEA_CALL_CUSPARSE(c->ctx,
                    cusparseSpMV(b->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, c->mat, c->vx,
                                 &beta, c->vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, c->buffer));
  return FEA_SUCCESS;
}

static fea_status em_apply(fea_operator *op, const double *x, double *y, int add) {
  cuda_op *c = op->data;
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(c->ctx, &b));
  if (c->n == 0) return FEA_SUCCESS;
  if (!add) FEA_CALL_CUDA(c->ctx, cudaMemsetAsync(y, 0, (size_t)c->n * sizeof *y, b->stream));
  const int *grp = c->ngroups > 1 ? c->group : NULL;
  if (c->atomic || c->unprotected) {
    FEA_CALL_CUDA(c->ctx, fea_cuda_em_apply(c->nb, c->ne, NULL, c->erow, grp, c->K, c->shared_K,
                                            c->atomic, x, y, b->stream));
    return FEA_SUCCESS;
  }
  for (int k = 0; k < c->ncolors; k++) /* stream order separates the colors */
    FEA_CALL_CUDA(c->ctx, fea_cuda_em_apply(c->nb, c->color_off[k + 1] - c->color_off[k],
                                            c->order + c->color_off[k], c->erow, grp, c->K,
                                            c->shared_K, 0, x, y, b->stream));
  return FEA_SUCCESS;
}

static fea_status fea_sf_apply(fea_operator *op, const double *x, double *y, int add) {
  cuda_op *c = op->data;
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(c->ctx, &b));
  if (c->n == 0) return FEA_SUCCESS;
  if (!add) FEA_CALL_CUDA(c->ctx, cudaMemsetAsync(y, 0, (size_t)c->n * sizeof *y, b->stream));
  if (c->atomic || c->unprotected) {
    FEA_CALL_CUDA(c->ctx, fea_cuda_sf_apply(&c->sf, c->ne, NULL, c->atomic, x, y, b->stream));
    return FEA_SUCCESS;
  }
  for (int k = 0; k < c->ncolors; k++) /* stream order separates the colors */
    FEA_CALL_CUDA(c->ctx, fea_cuda_sf_apply(&c->sf, c->color_off[k + 1] - c->color_off[k],
                                            c->order + c->color_off[k], 0, x, y, b->stream));
  return FEA_SUCCESS;
}

static fea_status op_diagonal(const fea_operator *op, double *d) {
  cuda_op *c = op->data;
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(c->ctx, &b));
  if (c->n == 0) return FEA_SUCCESS;
  FEA_CALL_CUDA(c->ctx, cudaMemcpyAsync(d, c->diag, (size_t)c->n * sizeof *d,
                                        cudaMemcpyDeviceToDevice, b->stream));
  return FEA_SUCCESS;
}

static const fea_operator_impl csr_impl = {.apply = csr_apply,
                                           .diagonal = op_diagonal,
                                           .destroy = op_destroy};
static const fea_operator_impl em_impl = {.apply = em_apply,
                                          .diagonal = op_diagonal,
                                          .destroy = op_destroy};
static const fea_operator_impl fea_sf_impl = {.apply = fea_sf_apply,
                                              .diagonal = op_diagonal,
                                              .destroy = op_destroy};

static fea_status csr_create(fea_operator *op, cuda_op *c, const fea_matrix *A) {
  fea_context *ctx = op->ctx;
  struct fea_cuda *b = ctx->backend_data;
  FEA_CALL(upload(ctx, A->row_ptr, ((size_t)A->rows + 1) * sizeof(fea_index), (void **)&c->rp));
  FEA_CALL(upload(ctx, A->col_idx, (size_t)A->nnz * sizeof(fea_index), (void **)&c->ci));
  FEA_CALL(upload(ctx, A->values, (size_t)A->nnz * sizeof(double), (void **)&c->val));
  FEA_CALL_CUSPARSE(ctx, cusparseCreateCsr(&c->mat, A->rows, A->cols, A->nnz, c->rp, c->ci, c->val,
                                           CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I,
                                           CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  /* Placeholders until the first apply: the diagonal for both (sizing only). */
  FEA_CALL_CUSPARSE(ctx, cusparseCreateDnVec(&c->vx, A->cols, c->diag, CUDA_R_64F));
  FEA_CALL_CUSPARSE(ctx, cusparseCreateDnVec(&c->vy, A->rows, c->diag, CUDA_R_64F));
  FEA_CALL_CUSPARSE(ctx, cusparseSetStream(b->sparse, b->stream));
  const double one = 1.0, zero = 0.0;
  size_t bytes = 0;
  FEA_CALL_CUSPARSE(ctx, cusparseSpMV_bufferSize(b->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                                 c->mat, c->vx, &zero, c->vy, CUDA_R_64F,
                                                 CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  FEA_CALL(fea_cuda_malloc(ctx, bytes ? bytes : 1, &c->buffer));
  snprintf(op->info.kernel, sizeof op->info.kernel,
           "gpu csr: cusparseSpMV fp64, 64-bit indices, %lld nnz", (long long)A->nnz);
  op->info.strategy_run = FEA_UPDATE_SERIAL;
  op->info.memory_bytes = (uint64_t)A->nnz * (sizeof(double) + sizeof(fea_index)) +
                          (uint64_t)(A->rows + 1) * sizeof(fea_index) + bytes;
  return FEA_SUCCESS;
}

/* The matrix-free kinds' common data: the element -> free row table (from
 * the CPU operator's numbering) and, for coloring, the elements sorted by
 * color; the scatter mode from the strategy and the context's option. */
static fea_status mf_upload(fea_operator *op, cuda_op *c, const fea_op_device_src *src) {
  fea_context *ctx = op->ctx;
  struct fea_cuda *b = ctx->backend_data;
  FEA_CHECK(op->num_free < INT_MAX, ctx, FEA_ERR_UNSUPPORTED,
            "%lld free DoFs do not fit the GPU kernels' 32-bit row table", (long long)op->num_free);
  c->nb = src->nb;
  c->ne = src->ne;
  c->unprotected = b->scatter_unprotected;
  c->atomic = src->strategy != FEA_UPDATE_COLORING && !c->unprotected;
  const size_t nb = (size_t)src->nb, ne = (size_t)src->ne;
  int *erow = malloc(ne * nb * sizeof *erow + 1);
  if (!erow)
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the row table of %lld elements",
                     (long long)src->ne);
  for (size_t k = 0; k < ne * nb; k++) erow[k] = (int)src->free_index[src->edofs[k]];
  fea_status st = upload(ctx, erow, ne * nb * sizeof *erow, (void **)&c->erow);
  /* The pageable copy has read erow when upload returns. */
  free(erow);
  FEA_CALL(st);
  if (src->strategy != FEA_UPDATE_COLORING || c->unprotected) return FEA_SUCCESS;
  c->ncolors = src->ncolors; /* elements sorted by color, counting sort */
  c->color_off = calloc((size_t)c->ncolors + 1, sizeof *c->color_off);
  int64_t *order = malloc(ne * sizeof *order + 1);
  fea_index *next = malloc(((size_t)c->ncolors + 1) * sizeof *next);
  if (!c->color_off || !order || !next) {
    free(order);
    free(next);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d colors of %lld elements",
                     c->ncolors, (long long)src->ne);
  }
  for (size_t e = 0; e < ne; e++) c->color_off[src->colors[e] + 1]++;
  for (int k = 0; k < c->ncolors; k++) c->color_off[k + 1] += c->color_off[k];
  memcpy(next, c->color_off, (size_t)c->ncolors * sizeof *next);
  for (size_t e = 0; e < ne; e++) order[next[src->colors[e]]++] = (int64_t)e;
  free(next);
  st = upload(ctx, order, ne * sizeof *order, (void **)&c->order);
  free(order);
  return st;
}

/* How a matrix-free kind resolves conflicts, for the info's kernel text. */
static void scatter_text(const cuda_op *c, char *how, size_t len) {
  if (c->unprotected)
    snprintf(how, len, "UNPROTECTED, GPU_Max");
  else if (c->atomic)
    snprintf(how, len, "fp64 atomicAdd");
  else
    snprintf(how, len, "%d colors", c->ncolors);
}

/* Bytes a matrix-free apply must move through device memory: the row table
 * (4 nb per element), x once (8 per free DoF), y cleared (8) and read and
 * written by the adds (16); the element tables or matrices are a few
 * kilobytes read through the caches (one shape) and left out. With several
 * shapes every element also reads its nb^2 doubles. */
static double mf_apply_bytes(const cuda_op *c) {
  double bytes = 4.0 * (double)c->nb * (double)c->ne + 32.0 * (double)c->n;
  if (c->ngroups > 1) bytes += 8.0 * (double)c->nb * (double)c->nb * (double)c->ne;
  return bytes;
}

/* Device bytes of the common data. */
static uint64_t mf_bytes(const cuda_op *c) {
  return (uint64_t)c->ne * (uint64_t)c->nb * sizeof(int) +
         (c->order ? (uint64_t)c->ne * sizeof(int64_t) : 0);
}

static fea_status em_create(fea_operator *op, cuda_op *c, const fea_op_device_src *src) {
  fea_context *ctx = op->ctx;
  struct fea_cuda *b = ctx->backend_data;
  const fea_em_view *v = &src->em;
  FEA_CALL(mf_upload(op, c, src));
  c->ngroups = v->ngroups;
  const size_t nb = (size_t)v->nb, ne = (size_t)v->ne;
  if (v->ngroups > 1) {
    int *grp = malloc(ne * sizeof *grp + 1);
    if (!grp)
      return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the groups of %lld elements",
                       (long long)v->ne);
    for (size_t e = 0; e < ne; e++) grp[e] = (int)v->group[e];
    fea_status st = upload(ctx, grp, ne * sizeof *grp, (void **)&c->group);
    free(grp);
    FEA_CALL(st);
  }
  FEA_CALL(upload(ctx, v->K, (size_t)v->ngroups * nb * nb * sizeof(double), (void **)&c->K));
  /* One shape: the matrix in shared memory if it fits a block. */
  int optin = 0;
  FEA_CALL_CUDA(ctx,
                cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, b->device));
  c->shared_K = v->ngroups == 1 && nb * nb * sizeof(double) <= (size_t)optin;
  char how[40];
  scatter_text(c, how, sizeof how);
  if (v->ngroups == 1)
    snprintf(op->info.kernel, sizeof op->info.kernel,
             "gpu element-matrix: thread/element, one %dx%d matrix (%s), %.24s", v->nb, v->nb,
             c->shared_K ? "shared mem" : "global", how);
  else
    snprintf(op->info.kernel, sizeof op->info.kernel,
             "gpu element-matrix: thread/element, %lld shapes, %.24s", (long long)v->ngroups, how);
  /* Unprotected: the strategy asked for, whose conflicts go unhandled (the kernel text says so). */
  op->info.strategy_run = c->unprotected ? src->strategy
                          : c->atomic    ? FEA_UPDATE_ATOMIC_CAS
                                         : FEA_UPDATE_COLORING;
  op->info.memory_bytes = mf_bytes(c) + (c->group ? ne * sizeof(int) : 0) +
                          (uint64_t)v->ngroups * nb * nb * sizeof(double);
  return FEA_SUCCESS;
}

/* The sizes the sum-factorization kernel is compiled for: the same n in
 * every direction, 2..9 (kernels/sumfact.cu). */
int fea_cuda_sumfact_supports(int dim, const int n[3], char *why, size_t len) {
  if (dim < 1 || dim > 3) {
    snprintf(why, len, "no GPU kernel in %dD", dim);
    return 0;
  }
  for (int k = 1; k < dim; k++)
    if (n[k] != n[0]) {
      snprintf(why, len, "GPU kernel needs one degree in all directions");
      return 0;
    }
  if (n[0] < SFG_MIN_N || n[0] > SFG_MAX_N) {
    snprintf(why, len, "no GPU kernel for degree %d (1..%d)", n[0] - 1, SFG_MAX_N - 1);
    return 0;
  }
  return 1;
}

static fea_status fea_sf_create(fea_operator *op, cuda_op *c, const fea_op_device_src *src) {
  fea_context *ctx = op->ctx;
  const fea_sf_view *v = &src->sf;
  char why[96];
  FEA_CHECK(fea_cuda_sumfact_supports(v->dim, v->n, why, sizeof why), ctx, FEA_ERR_UNSUPPORTED,
            "sum factorization on '%s': %s", ctx->resource, why);
  FEA_CALL(mf_upload(op, c, src));
  const int n = v->n[0];
  /* The tables and lengths of every direction in one allocation. */
  size_t doubles = 0;
  for (int k = 0; k < v->dim; k++) doubles += (size_t)v->nel[k] * (2u * (size_t)n * n + 1u);
  double *h = malloc(doubles * sizeof *h + 1);
  if (!h)
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %zu doubles of 1D tables", doubles);
  size_t at = 0, tab_at[3] = {0, 0, 0}, len_at[3] = {0, 0, 0};
  for (int k = 0; k < v->dim; k++) {
    const size_t t = (size_t)v->nel[k] * 2u * (size_t)n * n;
    memcpy(h + at, v->tab[k], t * sizeof *h);
    tab_at[k] = at;
    at += t;
    memcpy(h + at, v->len[k], (size_t)v->nel[k] * sizeof *h);
    len_at[k] = at;
    at += (size_t)v->nel[k];
  }
  fea_status st = upload(ctx, h, doubles * sizeof *h, (void **)&c->fea_sf_mem);
  free(h);
  FEA_CALL(st);
  fea_sf_gpu_params *p = &c->sf;
  memset(p, 0, sizeof *p);
  p->dim = v->dim;
  p->n = n;
  p->nb = c->nb;
  p->per_span = v->per_span;
  p->sigma = v->sigma;
  p->erow = c->erow;
  for (int k = 0; k < v->dim; k++) {
    p->nel[k] = v->nel[k];
    p->tab[k] = c->fea_sf_mem + tab_at[k];
    p->len[k] = c->fea_sf_mem + len_at[k];
  }
  char how[40];
  scatter_text(c, how, sizeof how);
  snprintf(op->info.kernel, sizeof op->info.kernel,
           "gpu sum-factorization %dD n=%d: %d threads/element, %d per block, %.24s", v->dim, n,
           fea_sf_gpu_threads_per_element(v->dim, n), fea_sf_gpu_elements_per_block(v->dim, n),
           how);
  /* Unprotected: the strategy asked for, whose conflicts go unhandled (the kernel text says so). */
  op->info.strategy_run = c->unprotected ? src->strategy
                          : c->atomic    ? FEA_UPDATE_ATOMIC_CAS
                                         : FEA_UPDATE_COLORING;
  op->info.memory_bytes = mf_bytes(c) + doubles * sizeof(double);
  return FEA_SUCCESS;
}

fea_status fea_cuda_operator_upload(fea_operator *op, const fea_op_device_src *src) {
  fea_context *ctx = op->ctx;
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  cuda_op *c = calloc(1, sizeof *c);
  FEA_CHECK(c, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a GPU operator");
  c->ctx = ctx;
  c->kind = src->kind;
  c->n = op->num_free;
  fea_status st = upload(ctx, src->diag, (size_t)c->n * sizeof(double), (void **)&c->diag);
  if (st == FEA_SUCCESS)
    st = src->kind == FEA_OPERATOR_CSR               ? csr_create(op, c, src->A)
         : src->kind == FEA_OPERATOR_MATFREE_SUMFACT ? fea_sf_create(op, c, src)
                                                     : em_create(op, c, src);
  if (st == FEA_SUCCESS) st = fea_cuda_sync(ctx); /* faults of the uploads show here */
  if (st != FEA_SUCCESS) {
    op_destroy(c);
    return st;
  }
  op->impl = src->kind == FEA_OPERATOR_CSR               ? &csr_impl
             : src->kind == FEA_OPERATOR_MATFREE_SUMFACT ? &fea_sf_impl
                                                         : &em_impl;
  op->data = c;
  op->info.memory_bytes += (uint64_t)c->n * sizeof(double); /* the diagonal */
  op->info.flops_per_apply = src->flops_per_apply;
  op->info.bytes_per_apply = src->bytes_per_apply;
  if (src->kind != FEA_OPERATOR_CSR) /* what the device kernels must move (mf_bytes' comment) */
    op->info.bytes_per_apply = mf_apply_bytes(c);
  return FEA_SUCCESS;
}

fea_status fea_cuda_operator_pointwise_mul(fea_context *ctx, fea_index n, const double *a,
                                           const double *x, double *y) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUDA(ctx, fea_cuda_pointwise_mul(a, x, y, n, b->stream));
  return FEA_SUCCESS;
}
