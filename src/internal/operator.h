/* The operator object as the library sees it: the public checks live in
 * src/interface/operator.c, the two implementations (assembled CSR,
 * matrix-free gather/kernel/scatter) in src/matfree/operator-*.c behind
 * this small table. Vectors reach the implementations as host arrays of
 * num_free doubles, already checked. */
#ifndef FEA_INTERNAL_OPERATOR_H
#define FEA_INTERNAL_OPERATOR_H

#include <feaccel/operator.h>

#include "matfree-kernel.h"
#include "problem.h"

typedef struct fea_operator_impl {
  /* y = A x (add 0) or y += A x (add 1); may use the operator's buffers. */
  fea_status (*apply)(fea_operator *op, const double *x, double *y, int add);
  fea_status (*diagonal)(const fea_operator *op, double *d);
  void (*destroy)(void *data);
} fea_operator_impl;

struct fea_operator {
  fea_context *ctx;         /* holds a reference */
  fea_problem *problem;     /* the operator's own copy (same space and desc) */
  fea_index num_free;
  fea_operator_info info;   /* complete; copied out up to the caller's size */
  double *rhs;              /* num_free */
  int rhs_ready;            /* CSR: from the assembly; matrix-free: on the first get_rhs
                               (an element pass as costly as an assembly's, which the
                               operator's setup need not pay) */
  const fea_operator_impl *impl;
  void *data;
};

/* Build the implementations into op (op->problem, ctx, num_free set);
 * fill op->impl, op->data and the info's kind, strategy, kernel and costs. */
fea_status fea_operator_csr_build(fea_operator *op);
fea_status fea_operator_matfree_build(fea_operator *op, const fea_matfree_kernel_ops *kernel,
                                 fea_update_strategy strategy);

/* The reduced right-hand side element by element, without a global matrix
 * (operator-matfree.c); the same sums in the same order as the reference. */
fea_status fea_operator_matfree_rhs(const fea_problem *pb, double *b);

/* z = M^-1 r on host arrays of the operator's num_free entries. */
typedef fea_status (*fea_cg_precond_fn)(void *user, const double *r, double *z);

/* The CG iteration behind fea_cg_solve (src/linalg/cg.c), on checked
 * arguments: b and x F64 vectors of A's size on its context, d complete and
 * valid (d->jacobi is not read: precond is the preconditioner, NULL for
 * none; a preconditioner must be symmetric positive definite). Fills s's
 * iterations, residuals, converged and apply_s (added to); not solve_s. */
fea_status fea_cg_run(fea_operator *A, const fea_vector *b, fea_vector *x,
                      const fea_cg_desc *d, fea_cg_precond_fn precond, void *user,
                      fea_cg_stats *s);

#endif
