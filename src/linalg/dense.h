/* Dense linear algebra on matrices in a backend's memory (column-major, LAPACK
 * conventions). Internal: the solvers of libfeaccel call these; fea_dense_*
 * validate shapes and precisions once, then dispatch through the context's
 * dense ops table, so backends may assume valid input. */
#ifndef FEA_INTERNAL_DENSE_H
#define FEA_INTERNAL_DENSE_H

#include <feaccel/types.h>
#include <feaccel/vector.h>

#include "internal/private-export.h"

typedef enum fea_transpose { FEA_NO_TRANS = 0, FEA_TRANS = 1 } fea_transpose;
typedef enum fea_uplo { FEA_LOWER = 0, FEA_UPPER = 1 } fea_uplo;
typedef enum fea_side { FEA_LEFT = 0, FEA_RIGHT = 1 } fea_side;
typedef enum fea_diag { FEA_NON_UNIT = 0, FEA_UNIT = 1 } fea_diag;

/* How a GEMM may compute. DEFAULT: in the precision of C (half inputs
 * accumulate in FP32). TF32: FP32 data through TF32 tensor cores (GPU only). */
typedef enum fea_compute { FEA_COMPUTE_DEFAULT = 0, FEA_COMPUTE_TF32 = 1 } fea_compute;

/* A column-major view; data lives where the context's backend keeps memory. */
typedef struct fea_dmat {
  void *data;
  fea_index rows, cols, ld;
  fea_precision prec;
} fea_dmat;

/* A view of the first ld*cols entries of a vector as a rows x cols matrix. */
fea_status fea_dmat_from_vector(fea_vector *v, fea_index rows, fea_index cols, fea_index ld,
                                fea_dmat *out);

struct fea_dense_ops {
  /* C := alpha op(A) op(B) + beta C. Precisions: all equal, or A,B in F16/BF16
   * with C in F32. */
  fea_status (*gemm)(fea_context *ctx, fea_transpose ta, fea_transpose tb, double alpha,
                     const fea_dmat *A, const fea_dmat *B, double beta, fea_dmat *C,
                     fea_compute compute);
  /* C := alpha op(A) op(A)^T + beta C on the uplo triangle of C. */
  fea_status (*syrk)(fea_context *ctx, fea_uplo uplo, fea_transpose trans, double alpha,
                     const fea_dmat *A, double beta, fea_dmat *C);
  /* B := alpha op(A)^-1 B (LEFT) or alpha B op(A)^-1 (RIGHT), A triangular. */
  fea_status (*trsm)(fea_context *ctx, fea_side side, fea_uplo uplo, fea_transpose trans,
                     fea_diag diag, double alpha, const fea_dmat *A, fea_dmat *B);
  /* Cholesky of the uplo triangle in place; FEA_ERR_NOT_POSDEF names the minor.
   * As in LAPACK, A holds the partial factor after NOT_POSDEF (and after
   * getrf's SINGULAR): callers that must keep A factor a copy. */
  fea_status (*potrf)(fea_context *ctx, fea_uplo uplo, fea_dmat *A);
  /* Solve with a potrf factor; B overwritten by the solution. */
  fea_status (*potrs)(fea_context *ctx, fea_uplo uplo, const fea_dmat *A, fea_dmat *B);
  /* LU with partial pivoting; ipiv is host memory of length rows, 1-based. */
  fea_status (*getrf)(fea_context *ctx, fea_dmat *A, fea_index *ipiv);
  fea_status (*getrs)(fea_context *ctx, fea_transpose trans, const fea_dmat *A,
                      const fea_index *ipiv, fea_dmat *B);
};

/* Checked entry points used by the rest of the library. */
fea_status fea_dense_gemm(fea_context *ctx, fea_transpose ta, fea_transpose tb, double alpha,
                          const fea_dmat *A, const fea_dmat *B, double beta, fea_dmat *C,
                          fea_compute compute);
fea_status fea_dense_syrk(fea_context *ctx, fea_uplo uplo, fea_transpose trans, double alpha,
                          const fea_dmat *A, double beta, fea_dmat *C);
fea_status fea_dense_trsm(fea_context *ctx, fea_side side, fea_uplo uplo, fea_transpose trans,
                          fea_diag diag, double alpha, const fea_dmat *A, fea_dmat *B);
FEA_PRIVATE_EXPORT fea_status fea_dense_potrf(fea_context *ctx, fea_uplo uplo, fea_dmat *A);
FEA_PRIVATE_EXPORT fea_status fea_dense_potrs(fea_context *ctx, fea_uplo uplo, const fea_dmat *A,
                                              fea_dmat *B);
fea_status fea_dense_getrf(fea_context *ctx, fea_dmat *A, fea_index *ipiv);
fea_status fea_dense_getrs(fea_context *ctx, fea_transpose trans, const fea_dmat *A,
                           const fea_index *ipiv, fea_dmat *B);

#endif
