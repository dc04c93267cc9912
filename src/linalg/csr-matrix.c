/* The CSR matrix object on the host: allocation with a context reference,
 * release, and the reference product y = A x. */
#include <stdlib.h>

#include "internal/error.h"
#include "matrix.h"

static void matrix_free(void *object) {
  fea_matrix *A = object;
  free(A->row_ptr);
  free(A->col_idx);
  free(A->values);
  free(A);
}

fea_status fea_matrix_alloc(fea_context *ctx, fea_index rows, fea_index cols, fea_index nnz,
                            fea_matrix **out) {
  fea_matrix *A;
  FEA_CALL(fea_object_alloc(ctx, sizeof *A, "matrix", matrix_free, (void **)&A));
  A->row_ptr = calloc((size_t)rows + 1, sizeof *A->row_ptr);
  A->col_idx = malloc((size_t)(nnz ? nnz : 1) * sizeof *A->col_idx);
  A->values = malloc((size_t)(nnz ? nnz : 1) * sizeof *A->values);
  if (!A->row_ptr || !A->col_idx || !A->values) {
    fea_object_release(A);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for a %lld x %lld matrix with %lld entries", (long long)rows,
                     (long long)cols, (long long)nnz);
  }
  A->rows = rows;
  A->cols = cols;
  A->nnz = nnz;
  *out = A;
  return FEA_SUCCESS;
}

void fea_csr_multiply_vector(const fea_matrix *A, const double *x, double *y) {
  for (fea_index i = 0; i < A->rows; i++) {
    double s = 0;
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += A->values[k] * x[A->col_idx[k]];
    y[i] = s;
  }
}
