/* The assembled operator: the CSR matrix of fea_problem_assemble and our own
 * threaded product y = A x.
 *
 * SpMV is bandwidth-bound (about 0.2 flop per byte), so what matters is that
 * every thread streams the same number of bytes: rows are cut into one
 * contiguous block per thread with equal nonzero counts (not equal row
 * counts: boundary rows are shorter), computed once at creation. Static
 * blocks also keep each thread on the rows it touched first. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assembly/assemble.h"
#include "base/context.h"
#include "internal/error.h"
#include "base/sort.h"
#include "base/thread-budget.h"
#include "linalg/matrix.h"
#include "operator.h"
#include "internal/operator-device.h"
#include "disc/pattern.h"

typedef struct csr_op {
  fea_matrix *A;
  int blocks;
  fea_index *bound; /* blocks + 1 row boundaries */
} csr_op;

static void csr_destroy(void *data) {
  csr_op *c = data;
  if (!c) return;
  FEA_OBJECT_DROP(c->A);
  free(c->bound);
  free(c);
}

/* First row r with row_ptr[r] >= target. */
static fea_index row_at(const fea_index *row_ptr, fea_index rows, fea_index target) {
  return fea_index_lower_bound(row_ptr, rows, target);
}

static fea_status csr_apply(fea_operator *op, const double *x, double *y, int add) {
  const csr_op *c = op->data;
  const fea_index *rp = c->A->row_ptr, *ci = c->A->col_idx;
  const double *v = c->A->values;
  const int B = c->blocks, budget = fea_thread_budget(op->ctx);
  /* Fewer threads than blocks where other processes hold cores: each row is
   * still one block's, summed the same way, so y does not change. */
#pragma omp parallel num_threads(budget < B ? budget : B)
  {
    /* Blocks dealt round-robin: the region may have fewer threads. */
    for (int b = omp_get_thread_num(); b < B; b += omp_get_num_threads())
      for (fea_index r = c->bound[b]; r < c->bound[b + 1]; r++) {
        double s = 0.0;
        for (fea_index k = rp[r]; k < rp[r + 1]; k++) s += v[k] * x[ci[k]];
        y[r] = add ? y[r] + s : s;
      }
  }
  return FEA_SUCCESS;
}

static fea_status csr_diagonal(const fea_operator *op, double *d) {
  const csr_op *c = op->data;
  const fea_index *rp = c->A->row_ptr, *ci = c->A->col_idx;
  for (fea_index r = 0; r < c->A->rows; r++) {
    d[r] = 0.0;
    for (fea_index k = rp[r]; k < rp[r + 1]; k++)
      if (ci[k] == r) d[r] = c->A->values[k];
  }
  return FEA_SUCCESS;
}

/* The block of rows (sorted), column-major, by merging each row's sorted
 * columns with the rows. */
static fea_status csr_entries(const fea_operator *op, const fea_index *rows, int m, double *M) {
  const fea_matrix *A = ((const csr_op *)op->data)->A;
  memset(M, 0, (size_t)m * (size_t)m * sizeof *M);
  for (int i = 0; i < m; i++) {
    const fea_index r = rows[i];
    int j = 0;
    for (fea_index k = A->row_ptr[r]; k < A->row_ptr[r + 1] && j < m; k++) {
      const fea_index c = A->col_idx[k];
      while (j < m && rows[j] < c) j++;
      if (j < m && rows[j] == c) M[i + (size_t)j * m] = A->values[k];
    }
  }
  return FEA_SUCCESS;
}

static const fea_operator_impl csr_impl = {.apply = csr_apply,
                                           .diagonal = csr_diagonal,
                                           .destroy = csr_destroy,
                                           .entries = csr_entries};

/* Row blocks, the implementation and the info of the operator on c->A. */
static fea_status csr_attach(fea_operator *op, csr_op *c, const char *made_by) {
  c->blocks = op->ctx->nthreads > 0 ? op->ctx->nthreads : 1;
  c->bound = malloc(((size_t)c->blocks + 1) * sizeof *c->bound);
  if (!c->bound) {
    const int blocks = c->blocks;
    csr_destroy(c);
    return FEA_ERROR(op->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d row blocks", blocks);
  }
  const fea_index rows = c->A->rows, nnz = c->A->nnz;
  for (int b = 0; b <= c->blocks; b++)
    c->bound[b] = b == c->blocks ? rows : row_at(c->A->row_ptr, rows, nnz * b / c->blocks);
  op->impl = &csr_impl;
  op->data = c;
  op->info.kind_run = FEA_OPERATOR_CSR;
  op->info.strategy_run = FEA_UPDATE_SERIAL;
  snprintf(op->info.kernel, sizeof op->info.kernel, "csr spmv, %d row blocks by nnz (%s)",
           c->blocks, made_by);
  /* 2 flops per nonzero; values and column indices once, x and y once each
   * (x is reused from cache at best), row pointers. */
  op->info.flops_per_apply = 2.0 * (double)nnz;
  op->info.bytes_per_apply = (double)nnz * (sizeof(double) + sizeof(fea_index)) +
                             (double)rows * (3 * sizeof(double) + sizeof(fea_index));
  op->info.memory_bytes = (uint64_t)nnz * (sizeof(double) + sizeof(fea_index)) +
                          (uint64_t)(rows + 1) * sizeof(fea_index);
  return FEA_SUCCESS;
}

fea_status fea_operator_csr_build(fea_operator *op) {
  const fea_problem *pb = op->problem;
  csr_op *c = calloc(1, sizeof *c);
  FEA_CHECK(c, op->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the CSR operator");
  fea_assembly_desc ad = FEA_ASSEMBLY_DESC_INIT;
  ad.threads = op->ctx->nthreads > 0 ? op->ctx->nthreads : 1;
  fea_assembly_stats as = FEA_ASSEMBLY_STATS_INIT;
  fea_conc_config cfg;
  fea_conc_config_init(&cfg, op->ctx, &ad);
  fea_status st = FEA_SUCCESS;
  if (pb->space->ncomp > 1) { /* systems: the reference assembly (api-operator.c) */
    st = fea_problem_reference_system(pb, op->rhs, &c->A);
    as.strategy_run = FEA_UPDATE_SERIAL;
  } else {
    st = fea_pattern_matrix(pb, &c->A);
    if (st == FEA_SUCCESS) st = fea_conc_assemble_csr(pb, c->A, op->rhs, ad.strategy, &cfg, &as);
  }
  if (st != FEA_SUCCESS) {
    csr_destroy(c);
    return st;
  }
  char made_by[64];
  snprintf(made_by, sizeof made_by, "assembled: %s", fea_update_strategy_name(as.strategy_run));
  FEA_CALL(csr_attach(op, c, made_by));
  op->rhs_ready = 1;
  return FEA_SUCCESS;
}

fea_status fea_operator_csr_adopt(fea_operator *op, fea_matrix *A) {
  csr_op *c = calloc(1, sizeof *c);
  FEA_CHECK(c, op->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the CSR operator");
  fea_object_retain(A);
  c->A = A;
  return csr_attach(op, c, "given matrix");
}

const fea_matrix *fea_operator_csr_matrix(const fea_operator *op) {
  return op->impl == &csr_impl ? ((const csr_op *)op->data)->A : NULL;
}
