/**
 * @file matrix.h
 * @brief Sparse matrices in CSR on the host, and Matrix Market export.
 *
 * @par Errors common to this header
 * Every function here that returns fea_status returns FEA_SUCCESS when it did
 * its job. Except fea_matrix_destroy(), each also returns FEA_ERR_INVALID_ARG
 * when the matrix, context or path is NULL. The other codes are listed under
 * each function.
 */
#ifndef FEACCEL_MATRIX_H
#define FEACCEL_MATRIX_H

#include <feaccel/export.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** Opaque CSR matrix (double values, sorted column indices per row). @since 0.1.0 */
typedef struct fea_matrix fea_matrix;

/**
 * @brief Destroy a matrix. Accepts NULL; sets `*A = NULL`.
 * Not marked warn-unused-result: it is called on cleanup paths.
 * @retval FEA_SUCCESS always; it cannot fail.
 * @since 0.1.0
 */
FEA_EXPORT fea_status fea_matrix_destroy(fea_matrix **A);

/**
 * @brief Rows, columns and stored entries. Any output may be NULL.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p A.
 * @since 0.1.0
 */
FEA_API fea_status fea_matrix_get_size(const fea_matrix *A, fea_index *rows, fea_index *cols,
                                       fea_index *nnz);

/**
 * @brief Copy the CSR arrays out: row_ptr (rows + 1), col_idx (nnz), values (nnz).
 * Any of the three may be NULL. The arrays' sizes are the caller's
 * responsibility: they are not passed, so they cannot be checked.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p A.
 * @since 0.1.0
 */
FEA_API fea_status fea_matrix_get_csr(const fea_matrix *A, fea_index *row_ptr, fea_index *col_idx,
                                      double *values);

/**
 * @brief y := A x (serial reference product; host arrays).
 * @retval FEA_ERR_INVALID_ARG for a NULL @p x or @p y (unless the matrix has
 *         no columns or rows), or @p x and @p y the same array
 * @since 0.1.0
 */
FEA_API fea_status fea_matrix_multiply(const fea_matrix *A, const double *x, double *y);

/**
 * @brief Write A in Matrix Market coordinate format (`real general`, 17 significant digits).
 * @retval FEA_ERR_INVALID_ARG for a NULL @p path
 * @retval FEA_ERR_IO when the file cannot be opened, written or closed
 * @since 0.1.0
 */
FEA_API fea_status fea_matrix_write_mtx(const fea_matrix *A, const char *path);

/**
 * @brief Write n values as a Matrix Market `array real general` n x 1 matrix.
 * @retval FEA_ERR_INVALID_ARG for a negative @p n, NULL @p values with n > 0,
 *         or a NULL @p path
 * @retval FEA_ERR_IO when the file cannot be opened, written or closed
 * @since 0.1.0
 */
FEA_API fea_status fea_array_write_mtx(fea_context *ctx, fea_index n, const double *values,
                                       const char *path);

FEA_END_DECLS

#endif /* FEACCEL_MATRIX_H */
