/* The operator object as the library sees it: the public checks live in
 * src/interface/api-operator.c, the object in src/matfree/operator.c, the two
 * implementations (assembled CSR, matrix-free gather/kernel/scatter) in
 * src/matfree/operator-csr.c and operator-matfree.c behind
 * this small table. Vectors reach the implementations as host arrays of
 * num_free doubles, already checked. */
#ifndef FEA_INTERNAL_OPERATOR_H
#define FEA_INTERNAL_OPERATOR_H

#include <feaccel/operator.h>

#include "linalg/cg.h"
#include "matfree-kernel.h"
#include "internal/object.h"
#include "disc/problem.h"

typedef struct fea_operator_impl {
  /* y = A x (add 0) or y += A x (add 1); may use the operator's buffers. */
  fea_status (*apply)(fea_operator *op, const double *x, double *y, int add);
  fea_status (*diagonal)(const fea_operator *op, double *d);
  void (*destroy)(void *data);
  /* The reduced right-hand side by the implementation's own way, or NULL;
   * FEA_ERR_UNSUPPORTED (no error set): the element-wise one serves. */
  fea_status (*rhs)(fea_operator *op, double *b);
  /* The dense m x m block of the rows (sorted free indices), column-major,
   * or NULL: operators whose entries are cheap to read (the Schwarz
   * smoother's blocks). */
  fea_status (*entries)(const fea_operator *op, const fea_index *rows, int m, double *M);
} fea_operator_impl;

/* op's block of rows (fea_operator_impl.entries); FEA_ERR_UNSUPPORTED (no
 * error set) where the operator has no entries to read. */
fea_status fea_operator_block(const fea_operator *op, const fea_index *rows, int m, double *M);

struct fea_operator {
  FEA_OBJECT_HEADER;
  fea_problem *problem; /* the operator's own copy (same space and desc) */
  fea_index num_free;
  fea_operator_info info; /* complete; copied out up to the caller's size */
  double *rhs;            /* num_free */
  int rhs_ready;          /* CSR: from the assembly; matrix-free: on the first get_rhs
                               (an element pass as costly as an assembly's, which the
                               operator's setup need not pay) */
  const fea_operator_impl *impl;
  void *data;
};

/* The operator on ctx for problem with the complete, checked descriptor d
 * (src/matfree/operator.c); fea_object_release frees it. */
fea_status fea_operator_build(fea_context *ctx, const fea_problem *problem,
                              const fea_operator_desc *d, fea_operator **out);

/* A host CSR operator for problem around the matrix A of its reduced system,
 * built by the caller (multigrid's structured levels): A must be
 * num_free x num_free and is not checked against the problem; the operator
 * holds a reference on it. rhs: the reduced right-hand side to keep (copied),
 * or NULL to compute it on first use. */
fea_status fea_operator_build_from_csr(fea_context *ctx, const fea_problem *problem, fea_matrix *A,
                                       const double *rhs, fea_operator **out);

/* A host operator for problem around an implementation built by the caller
 * (multigrid's stencil levels): impl and data are the operator's from here
 * on, also on failure (impl->destroy(data) then); rhs as above. The caller
 * fills the info's kind_run, kernel, memory and costs. */
fea_status fea_operator_build_from_impl(fea_context *ctx, const fea_problem *problem,
                                        const fea_operator_impl *impl, void *data,
                                        const double *rhs, fea_operator **out);

/* The reduced right-hand side, computed on the first call and kept (the
 * operator's cache: matrix-free operators pay its element pass only when
 * asked); copied into the host array b unless b is NULL. */
fea_status fea_operator_rhs(fea_operator *op, double *b);

/* Build the implementations into op (op->problem, ctx, num_free set);
 * fill op->impl, op->data and the info's kind, strategy, kernel and costs. */
fea_status fea_operator_csr_build(fea_operator *op);
/* The same around a CSR matrix built elsewhere (op takes a reference on A);
 * the right-hand side is left to fea_operator_rhs's element pass. */
fea_status fea_operator_csr_adopt(fea_operator *op, fea_matrix *A);
fea_status fea_operator_matfree_build(fea_operator *op, const fea_matfree_kernel_ops *kernel,
                                      fea_update_strategy strategy);

/* The reduced right-hand side element by element, without a global matrix
 * (operator-matfree.c); the same sums in the same order as the reference. */
fea_status fea_operator_matfree_rhs(const fea_problem *pb, double *b);

/* CG over an operator (src/matfree/operator-cg.c): fea_cg_iterate on the
 * operator's apply, with precond (NULL: none); arguments as fea_cg_iterate. */
fea_status fea_cg_run(fea_operator *A, const fea_vector *b, fea_vector *x, const fea_cg_desc *d,
                      fea_cg_precond_fn precond, void *user, fea_cg_stats *s);
/* The solve behind fea_cg_solve on checked arguments: Jacobi from the
 * operator's diagonal when d->jacobi, s complete (solve_s included). */
fea_status fea_operator_cg_solve(fea_operator *A, const fea_vector *b, fea_vector *x,
                                 const fea_cg_desc *d, fea_cg_stats *s);

/* lambda_min and lambda_max of op (jacobi: of D^-1/2 A D^-1/2) from `steps`
 * Lanczos steps, on checked arguments and a host operator with free DoFs
 * (src/matfree/operator-spectrum.c). */
fea_status fea_operator_spectrum(fea_operator *op, int steps, int jacobi, double *lambda_min,
                                 double *lambda_max);

/* Accessors of the CPU implementations, for describing them to a backend
 * that uploads them (fea_operator_host_builder_cpu) and for benchmarks. */
const fea_matrix *fea_operator_csr_matrix(const fea_operator *op); /* operator-csr.c */
fea_status fea_operator_matfree_kernel_state(const fea_operator *op,
                                             const fea_matfree_kernel_ops **k,
                                             const void **state); /* operator-matfree.c */

#endif
