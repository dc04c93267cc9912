/* CSR matrix API: argument checks, queries and Matrix Market output; the
 * object and its product are in src/linalg/csr-matrix.c. */
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "linalg/matrix.h"

fea_status fea_matrix_destroy(fea_matrix **A) {
  FEA_ENTRY();
  if (!A || !*A) return FEA_SUCCESS;
  fea_object_release(*A);
  *A = NULL;
  return FEA_SUCCESS;
}

fea_status fea_matrix_get_size(const fea_matrix *A, fea_index *rows, fea_index *cols,
                               fea_index *nnz) {
  FEA_ENTRY();
  FEA_CHECK_NULL(A, NULL);
  if (rows) *rows = A->rows;
  if (cols) *cols = A->cols;
  if (nnz) *nnz = A->nnz;
  return FEA_SUCCESS;
}

fea_status fea_matrix_get_csr(const fea_matrix *A, fea_index *row_ptr, fea_index *col_idx,
                              double *values) {
  FEA_ENTRY();
  FEA_CHECK_NULL(A, NULL);
  if (row_ptr) memcpy(row_ptr, A->row_ptr, (size_t)(A->rows + 1) * sizeof *row_ptr);
  if (col_idx) memcpy(col_idx, A->col_idx, (size_t)A->nnz * sizeof *col_idx);
  if (values) memcpy(values, A->values, (size_t)A->nnz * sizeof *values);
  return FEA_SUCCESS;
}

fea_status fea_matrix_multiply(const fea_matrix *A, const double *x, double *y) {
  FEA_ENTRY();
  FEA_CHECK_NULL(A, NULL);
  FEA_CHECK(x || A->cols == 0, A->ctx, FEA_ERR_INVALID_ARG, "argument 'x' is NULL");
  FEA_CHECK(y || A->rows == 0, A->ctx, FEA_ERR_INVALID_ARG, "argument 'y' is NULL");
  FEA_CHECK(x != y || A->rows == 0, A->ctx, FEA_ERR_INVALID_ARG, "x and y are the same array");
  fea_csr_multiply_vector(A, x, y);
  return FEA_SUCCESS;
}

fea_status fea_matrix_write_mtx(const fea_matrix *A, const char *path) {
  FEA_ENTRY();
  FEA_CHECK_NULL(A, NULL);
  FEA_CHECK_NULL(path, A->ctx);
  return fea_matrix_market_write(A, path);
}

fea_status fea_array_write_mtx(fea_context *ctx, fea_index n, const double *values,
                               const char *path) {
  FEA_ENTRY();
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK(n >= 0, ctx, FEA_ERR_INVALID_ARG, "length %lld is negative", (long long)n);
  FEA_CHECK(values || n == 0, ctx, FEA_ERR_INVALID_ARG, "argument 'values' is NULL");
  FEA_CHECK_NULL(path, ctx);
  return fea_matrix_market_write_array(ctx, n, values, path);
}
