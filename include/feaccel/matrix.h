/**
 * @file matrix.h
 * @brief Sparse matrices in CSR on the host, and Matrix Market export.
 */
#ifndef FEACCEL_MATRIX_H
#define FEACCEL_MATRIX_H

#include <feaccel/export.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** Opaque CSR matrix (double values, sorted column indices per row). */
typedef struct fea_matrix fea_matrix;

/** @brief Destroy a matrix. Accepts NULL; sets `*A = NULL`. */
FEA_EXPORT fea_status fea_matrix_destroy(fea_matrix **A);

/** @brief Rows, columns and stored entries. Any output may be NULL. */
FEA_API fea_status fea_matrix_get_size(const fea_matrix *A, fea_index *rows, fea_index *cols,
                                       fea_index *nnz);

/**
 * @brief Copy the CSR arrays out: row_ptr (rows + 1), col_idx (nnz), values (nnz).
 * Any of the three may be NULL.
 */
FEA_API fea_status fea_matrix_get_csr(const fea_matrix *A, fea_index *row_ptr, fea_index *col_idx,
                                      double *values);

/** @brief y := A x (serial reference product; host arrays). */
FEA_API fea_status fea_matrix_multiply(const fea_matrix *A, const double *x, double *y);

/** @brief Write A in Matrix Market coordinate format (`real general`, 17 significant digits). */
FEA_API fea_status fea_matrix_write_mtx(const fea_matrix *A, const char *path);

/** @brief Write n values as a Matrix Market `array real general` n x 1 matrix. */
FEA_API fea_status fea_array_write_mtx(fea_context *ctx, fea_index n, const double *values,
                                       const char *path);

FEA_END_DECLS

#endif /* FEACCEL_MATRIX_H */
