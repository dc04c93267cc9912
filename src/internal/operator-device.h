/* Operators on device-memory backends (the backend's `op` slot).
 *
 * The operator object (src/matfree/operator.c) builds the operator's data
 * with the CPU code on the context's host delegate (fea_context_host) (assembled matrix, element
 * matrices, Dirichlet numbering, coloring, diagonal, right-hand side) and
 * hands it to the backend's create, which uploads what its kernels need and
 * installs an fea_operator_impl whose apply and diagonal take pointers in the
 * backend's memory (fea_vector data of its context). Host backends leave the
 * slot NULL: their operators are the CPU implementations themselves. */
#ifndef FEA_INTERNAL_OPERATOR_DEVICE_H
#define FEA_INTERNAL_OPERATOR_DEVICE_H

#include "linalg/matrix.h"
#include "matfree/matfree-kernel.h"
#include "matfree/operator.h"

/* What the host built, read-only during create (freed afterwards). */
typedef struct fea_op_device_src {
  fea_operator_kind kind;       /* CSR, MATFREE_ELEMENT_MATRIX or MATFREE_SUMFACT */
  fea_update_strategy strategy; /* MF: FEA_UPDATE_ATOMIC_CAS or FEA_UPDATE_COLORING */
  const fea_matrix *A;          /* CSR: the assembled reduced matrix */
  fea_index ne;                 /* MF: elements */
  int nb;                       /* MF: DoFs per element */
  const fea_index *edofs;       /* MF: ne x nb, each element's DoFs in local order */
  fea_em_view em;               /* element matrices: the kernel's data */
  fea_sf_view sf;               /* sum factorization: the 1D tables and lengths */
  const fea_index *free_index;  /* MF: per DoF its free row, or -1 (Dirichlet) */
  const fea_index *colors;      /* MF coloring: per element its color */
  int ncolors;
  const double *diag;                      /* num_free: the CPU operator's diagonal */
  double flops_per_apply, bytes_per_apply; /* the CPU operator's costs (same arithmetic) */
} fea_op_device_src;

struct fea_operator_ops {
  /* Fill op->impl, op->data and op->info's strategy_run, kernel and
   * memory_bytes (device bytes); op->ctx and op->num_free are set. */
  fea_status (*create)(fea_operator *op, const fea_op_device_src *src);
  /* Whether create serves MATFREE_SUMFACT with these sizes (NULL: never);
   * else a sentence in why, and the interface builds element matrices. */
  int (*sumfact_supports)(int dim, const int n[3], char *why, size_t len);
  /* y[i] = a[i] x[i], i < n, on device arrays (Jacobi's z = D^-1 r). */
  fea_status (*pointwise_mul)(fea_context *ctx, fea_index n, const double *a, const double *x,
                              double *y);
  /* Wait until queued work is done (timings). */
  fea_status (*sync)(fea_context *ctx);
};

/* Accessors of the CPU implementations, for the upload. */
const fea_matrix *fea_operator_csr_matrix(const fea_operator *op); /* operator-csr.c */
fea_status fea_operator_matfree_kernel_state(const fea_operator *op,
                                             const fea_matfree_kernel_ops **k,
                                             const void **state); /* operator-matfree.c */

#endif
