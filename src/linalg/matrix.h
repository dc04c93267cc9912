/* The CSR matrix object as the library sees it. */
#ifndef FEA_INTERNAL_MATRIX_H
#define FEA_INTERNAL_MATRIX_H

#include <feaccel/matrix.h>

#include "internal/object.h"

struct fea_matrix {
  FEA_OBJECT_HEADER;
  fea_index rows, cols, nnz;
  fea_index *row_ptr; /* rows + 1 */
  fea_index *col_idx; /* nnz, sorted within each row */
  double *values;     /* nnz */
};

/* An empty matrix holding a context reference with arrays for nnz entries
 * (src/linalg/csr-matrix.c); fea_object_release frees it. */
fea_status fea_matrix_alloc(fea_context *ctx, fea_index rows, fea_index cols, fea_index nnz,
                            fea_matrix **out);
/* y = A x on host arrays (the reference product). */
void fea_csr_multiply_vector(const fea_matrix *A, const double *x, double *y);

/* Matrix Market files of A (coordinate) and of n values (array), on
 * checked arguments (src/linalg/matrix-market.c): FEA_ERR_IO naming the
 * path and the system's reason when it cannot be written. */
fea_status fea_matrix_market_write(const fea_matrix *A, const char *path);
fea_status fea_matrix_market_write_array(fea_context *ctx, fea_index n, const double *values,
                                         const char *path);

#endif
