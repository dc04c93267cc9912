/* Conjugate gradients over an abstract linear operator (src/linalg/cg.c). */
#ifndef FEA_INTERNAL_CG_H
#define FEA_INTERNAL_CG_H

#include <feaccel/operator.h>

/* A symmetric positive definite operator as CG sees it: y = A x on arrays
 * of n doubles in the memory of ctx's backend. */
typedef struct fea_cg_operator {
  fea_context *ctx;
  fea_index n;
  fea_status (*apply)(void *op, const double *x, double *y); /* may use op's buffers */
  fea_status (*sync)(fea_context *ctx); /* waits for apply; NULL where apply is synchronous */
  void *op;
} fea_cg_operator;

/* z = M^-1 r on arrays of the operator's n entries. */
typedef fea_status (*fea_cg_precond_fn)(void *user, const double *r, double *z);

/* The CG iteration on checked arguments: b and x F64 vectors of A's size on
 * its context, d complete and valid (d->jacobi is not read: precond is the
 * preconditioner, NULL for none; it must be symmetric positive definite).
 * Fills s's iterations, residuals, converged and apply_s (added to); not
 * solve_s. */
fea_status fea_cg_iterate(const fea_cg_operator *A, const fea_vector *b, fea_vector *x,
                          const fea_cg_desc *d, fea_cg_precond_fn precond, void *user,
                          fea_cg_stats *s);

#endif
