/* The vector kernels of the multigrid cycle and smoothers (src/multigrid/),
 * on the arrays of one memory: host arrays (fea_mg_host_kernels,
 * src/multigrid/kernels-host.c: OpenMP loops on the context's threads) or
 * the device arrays of a device backend (its `mg` slot; /gpu/cuda:
 * cuda/multigrid-cuda.c). The cycle, the smoothers and the iterations are
 * written once over this table; the level operators are fea_operators of
 * the multigrid's context, whose apply takes arrays of the same memory.
 *
 * Every array argument holds n doubles of the table's memory unless it says
 * host. Calls are ordered on the context (a device backend's stream): only
 * download, norm2 and the matrix calls' errors wait for the device. */
#ifndef FEA_INTERNAL_MULTIGRID_KERNELS_H
#define FEA_INTERNAL_MULTIGRID_KERNELS_H

#include "linalg/matrix.h"

typedef struct fea_mg_kernels {
  /* 1: host memory, so the setup may hand arrays to host code directly;
   * 0: every host <-> table copy goes through upload and download. */
  int host;
  fea_status (*alloc)(fea_context *ctx, fea_index n, double **p); /* zeroed */
  void (*release)(fea_context *ctx, double *p);                   /* NULL: nothing */
  fea_status (*upload)(fea_context *ctx, fea_index n, const double *host, double *p);
  /* Returns once host holds the values. */
  fea_status (*download)(fea_context *ctx, fea_index n, const double *p, double *host);
  fea_status (*copy)(fea_context *ctx, fea_index n, const double *src, double *dst);
  fea_status (*zero)(fea_context *ctx, fea_index n, double *x);
  /* r = b - r (the residual after r = A x). */
  fea_status (*sub_from)(fea_context *ctx, fea_index n, const double *b, double *r);
  /* x += c. */
  fea_status (*add)(fea_context *ctx, fea_index n, const double *c, double *x);
  /* x = alpha dinv r (zero) or x += alpha dinv r; dinv NULL: the identity. */
  fea_status (*scaled_update)(fea_context *ctx, fea_index n, double alpha, const double *dinv,
                              const double *r, double *x, int zero);
  /* Chebyshev's first step: d = dinv r / theta; x = d (zero) or x += d. */
  fea_status (*chebyshev_first)(fea_context *ctx, fea_index n, double theta, const double *dinv,
                                const double *r, double *d, double *x, int zero);
  /* Chebyshev's later steps: d = c1 d + c2 dinv r; x += d. */
  fea_status (*chebyshev_step)(fea_context *ctx, fea_index n, double c1, double c2,
                               const double *dinv, const double *r, double *d, double *x);
  /* *result = ||x||_2 (on the host). */
  fea_status (*norm2)(fea_context *ctx, fea_index n, const double *x, double *result);
  /* A transfer matrix (CSR) in the table's memory: created from the host's,
   * y = M x (add 0) or y += M x (add 1), and released. */
  fea_status (*matrix_create)(fea_context *ctx, const fea_matrix *A, void **M);
  fea_status (*matrix_multiply)(fea_context *ctx, void *M, const double *x, double *y, int add);
  void (*matrix_destroy)(fea_context *ctx, void *M);
  /* The coarsest level's dense Cholesky on host arrays (n x n, column-
   * major, lower): factor A in place, then solve L L^T x = b in place (one
   * column). A device table runs them on its backend's host delegate and
   * raises their errors on ctx. */
  fea_status (*host_potrf)(fea_context *ctx, fea_index n, double *A);
  fea_status (*host_potrs)(fea_context *ctx, fea_index n, const double *L, double *b);
} fea_mg_kernels;

/* The host table (kernels-host.c). */
extern const fea_mg_kernels fea_mg_host_kernels;

#endif
