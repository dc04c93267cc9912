/* /gpu/cuda operators (docs/operators.md "On the GPU").
 *
 * The interface builds the operator's data with the CPU code on a host
 * context (operator-device.h); create here uploads it:
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
 *   The diagonal is the CPU operator's, uploaded once; get_diagonal copies.
 * Compiled, not yet run on a GPU. */
#include "fea-config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "cuda-backend.h"
#include "cuda-check.h"
#include "error.h"
#include "kernels/operator-launch.h"
#include "operator-device.h"

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
  /* element-matrix */
  int nb, shared_K, atomic;
  fea_index ne, ngroups;
  int *erow;            /* ne x nb */
  int *group;           /* ne, or NULL with one group */
  double *K;            /* ngroups x nb x nb */
  int64_t *order;       /* coloring: elements sorted by color */
  fea_index *color_off; /* host, ncolors + 1 */
  int ncolors;
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
  if (c->atomic) {
    FEA_CALL_CUDA(c->ctx, fea_cuda_em_apply(c->nb, c->ne, NULL, c->erow, grp, c->K, c->shared_K, 1,
                                            x, y, b->stream));
    return FEA_SUCCESS;
  }
  for (int k = 0; k < c->ncolors; k++) /* stream order separates the colors */
    FEA_CALL_CUDA(c->ctx, fea_cuda_em_apply(c->nb, c->color_off[k + 1] - c->color_off[k],
                                            c->order + c->color_off[k], c->erow, grp, c->K,
                                            c->shared_K, 0, x, y, b->stream));
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

static const fea_operator_impl csr_impl = {csr_apply, op_diagonal, op_destroy};
static const fea_operator_impl em_impl = {em_apply, op_diagonal, op_destroy};

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

static fea_status em_create(fea_operator *op, cuda_op *c, const fea_op_device_src *src) {
  fea_context *ctx = op->ctx;
  struct fea_cuda *b = ctx->backend_data;
  const fea_em_view *v = &src->em;
  FEA_CHECK(op->num_free < INT_MAX, ctx, FEA_ERR_UNSUPPORTED,
            "%lld free DoFs do not fit the GPU element kernel's 32-bit row table",
            (long long)op->num_free);
  c->nb = v->nb;
  c->ne = v->ne;
  c->ngroups = v->ngroups;
  c->atomic = src->strategy != FEA_UPDATE_COLORING;
  const size_t nb = (size_t)v->nb, ne = (size_t)v->ne;
  /* Element -> free row, from the CPU operator's numbering. */
  int *erow = malloc(ne * nb * sizeof *erow + 1);
  int *grp = v->ngroups > 1 ? malloc(ne * sizeof *grp + 1) : NULL;
  if (!erow || (!grp && v->ngroups > 1)) {
    free(erow);
    free(grp);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the row table of %lld elements",
                     (long long)v->ne);
  }
  for (size_t k = 0; k < ne * nb; k++) erow[k] = (int)src->free_index[v->edofs[k]];
  for (size_t e = 0; grp && e < ne; e++) grp[e] = (int)v->group[e];
  fea_status st = upload(ctx, erow, ne * nb * sizeof *erow, (void **)&c->erow);
  if (st == FEA_SUCCESS && grp) st = upload(ctx, grp, ne * sizeof *grp, (void **)&c->group);
  free(erow);
  free(grp);
  FEA_CALL(st);
  FEA_CALL(upload(ctx, v->K, (size_t)v->ngroups * nb * nb * sizeof(double), (void **)&c->K));
  /* One shape: the matrix in shared memory if it fits a block. */
  int optin = 0;
  FEA_CALL_CUDA(ctx,
                cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, b->device));
  c->shared_K = v->ngroups == 1 && nb * nb * sizeof(double) <= (size_t)optin;
  if (!c->atomic) { /* elements sorted by color, counting sort */
    c->ncolors = src->ncolors;
    c->color_off = calloc((size_t)c->ncolors + 1, sizeof *c->color_off);
    int64_t *order = malloc(ne * sizeof *order + 1);
    if (!c->color_off || !order) {
      free(order);
      return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d colors", c->ncolors);
    }
    for (size_t e = 0; e < ne; e++) c->color_off[src->colors[e] + 1]++;
    for (int k = 0; k < c->ncolors; k++) c->color_off[k + 1] += c->color_off[k];
    fea_index *next = malloc(((size_t)c->ncolors + 1) * sizeof *next);
    if (!next) {
      free(order);
      return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d colors", c->ncolors);
    }
    memcpy(next, c->color_off, (size_t)c->ncolors * sizeof *next);
    for (size_t e = 0; e < ne; e++) order[next[src->colors[e]]++] = (int64_t)e;
    free(next);
    st = upload(ctx, order, ne * sizeof *order, (void **)&c->order);
    free(order);
    FEA_CALL(st);
  }
  char how[40];
  if (c->atomic)
    snprintf(how, sizeof how, "fp64 atomicAdd");
  else
    snprintf(how, sizeof how, "%d colors", c->ncolors);
  if (v->ngroups == 1)
    snprintf(op->info.kernel, sizeof op->info.kernel,
             "gpu element-matrix: thread/element, one %dx%d matrix (%s), %.16s", v->nb, v->nb,
             c->shared_K ? "shared mem" : "global", how);
  else
    snprintf(op->info.kernel, sizeof op->info.kernel,
             "gpu element-matrix: thread/element, %lld shapes, %.16s", (long long)v->ngroups, how);
  op->info.strategy_run = c->atomic ? FEA_UPDATE_ATOMIC_CAS : FEA_UPDATE_COLORING;
  op->info.memory_bytes = ne * nb * sizeof(int) + (grp ? ne * sizeof(int) : 0) +
                          (uint64_t)v->ngroups * nb * nb * sizeof(double) +
                          (c->atomic ? 0 : ne * sizeof(int64_t));
  return FEA_SUCCESS;
}

static fea_status cuda_op_create(fea_operator *op, const fea_op_device_src *src) {
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
    st = src->kind == FEA_OPERATOR_CSR ? csr_create(op, c, src->A) : em_create(op, c, src);
  if (st == FEA_SUCCESS) st = fea_cuda_sync(ctx); /* faults of the uploads show here */
  if (st != FEA_SUCCESS) {
    op_destroy(c);
    return st;
  }
  op->impl = src->kind == FEA_OPERATOR_CSR ? &csr_impl : &em_impl;
  op->data = c;
  op->info.memory_bytes += (uint64_t)c->n * sizeof(double); /* the diagonal */
  op->info.flops_per_apply = src->flops_per_apply;
  op->info.bytes_per_apply = src->bytes_per_apply;
  return FEA_SUCCESS;
}

static fea_status cuda_pointwise_mul(fea_context *ctx, fea_index n, const double *a,
                                     const double *x, double *y) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUDA(ctx, fea_cuda_pointwise_mul(a, x, y, n, b->stream));
  return FEA_SUCCESS;
}

const struct fea_operator_ops fea_cuda_operator_ops = {
    .create = cuda_op_create,
    .pointwise_mul = cuda_pointwise_mul,
    .sync = fea_cuda_sync,
};
