/* Sparse transpose and product of CSR matrices: Gustavson's row-by-row
 * product with a dense marker, two passes (pattern size, then values) so the
 * result is allocated once at its exact size. */
#include <stdlib.h>

#include "csr-product.h"
#include "internal/error.h"
#include "base/sort.h"

fea_status fea_csr_transpose(fea_context *ctx, const fea_matrix *A, fea_matrix **T) {
  fea_matrix *t;
  FEA_CALL(fea_matrix_alloc(ctx, A->cols, A->rows, A->nnz, &t));
  for (fea_index k = 0; k < A->nnz; k++) t->row_ptr[A->col_idx[k] + 1]++;
  for (fea_index c = 0; c < A->cols; c++) t->row_ptr[c + 1] += t->row_ptr[c];
  /* Rows of A in ascending order fill each row of T in ascending column order. */
  fea_index *next = malloc((size_t)(A->cols ? A->cols : 1) * sizeof *next);
  if (!next) {
    FEA_OBJECT_DROP(t);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a transpose of %lld columns",
                     (long long)A->cols);
  }
  for (fea_index c = 0; c < A->cols; c++) next[c] = t->row_ptr[c];
  for (fea_index i = 0; i < A->rows; i++)
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      fea_index p = next[A->col_idx[k]]++;
      t->col_idx[p] = i;
      t->values[p] = A->values[k];
    }
  free(next);
  *T = t;
  return FEA_SUCCESS;
}

fea_status fea_csr_multiply(fea_context *ctx, const fea_matrix *A, const fea_matrix *B,
                            fea_matrix **C) {
  FEA_CHECK(A->cols == B->rows, ctx, FEA_ERR_INVALID_ARG,
            "product of a %lld x %lld and a %lld x %lld matrix", (long long)A->rows,
            (long long)A->cols, (long long)B->rows, (long long)B->cols);
  const size_t nb = (size_t)(B->cols ? B->cols : 1);
  fea_index *mark = malloc(nb * sizeof *mark);
  double *acc = calloc(nb, sizeof *acc);
  fea_index *cols = malloc(nb * sizeof *cols);
  if (!mark || !acc || !cols) {
    free(mark);
    free(acc);
    free(cols);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a product with %lld columns",
                     (long long)B->cols);
  }
  for (fea_index c = 0; c < B->cols; c++) mark[c] = -1;
  fea_index nnz = 0;
  for (fea_index i = 0; i < A->rows; i++)
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      fea_index r = A->col_idx[k];
      for (fea_index l = B->row_ptr[r]; l < B->row_ptr[r + 1]; l++)
        if (mark[B->col_idx[l]] != i) {
          mark[B->col_idx[l]] = i;
          nnz++;
        }
    }
  fea_matrix *c;
  fea_status st = fea_matrix_alloc(ctx, A->rows, B->cols, nnz, &c);
  if (st < 0) {
    free(mark);
    free(acc);
    free(cols);
    return st;
  }
  for (fea_index j = 0; j < B->cols; j++) mark[j] = -1;
  fea_index p = 0;
  for (fea_index i = 0; i < A->rows; i++) {
    fea_index len = 0;
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      fea_index r = A->col_idx[k];
      for (fea_index l = B->row_ptr[r]; l < B->row_ptr[r + 1]; l++) {
        fea_index j = B->col_idx[l];
        if (mark[j] != i) {
          mark[j] = i;
          cols[len++] = j;
          acc[j] = 0;
        }
        acc[j] += A->values[k] * B->values[l];
      }
    }
    qsort(cols, (size_t)len, sizeof *cols, fea_index_cmp);
    for (fea_index q = 0; q < len; q++, p++) {
      c->col_idx[p] = cols[q];
      c->values[p] = acc[cols[q]];
    }
    c->row_ptr[i + 1] = p;
  }
  free(mark);
  free(acc);
  free(cols);
  *C = c;
  return FEA_SUCCESS;
}
