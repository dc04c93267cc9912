/* Sparse products of host CSR matrices (serial, for setup-time transforms). */
#ifndef FEA_INTERNAL_CSR_PRODUCT_H
#define FEA_INTERNAL_CSR_PRODUCT_H

#include "matrix.h"

/* T := A^T (sorted columns). */
fea_status fea_csr_transpose(fea_context *ctx, const fea_matrix *A, fea_matrix **T);
/* C := A B (sorted columns; exact zeros from cancellation are kept). */
fea_status fea_csr_multiply(fea_context *ctx, const fea_matrix *A, const fea_matrix *B,
                            fea_matrix **C);

#endif
