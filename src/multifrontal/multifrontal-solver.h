/* The multifrontal solver kind behind fea_solver_create_multifrontal
 * (src/multifrontal/multifrontal-solver-kind.c): the solver ops, its state attached to a
 * solver, and the queries the interface copies out. */
#ifndef FEA_INTERNAL_MULTIFRONTAL_SOLVER_H
#define FEA_INTERNAL_MULTIFRONTAL_SOLVER_H

#include "internal/etree.h"
#include "base/solver-object.h"

extern const fea_solver_ops fea_multifrontal_solver_ops;

/* Attach the kind's state to s (made by fea_solver_alloc with
 * fea_multifrontal_solver_ops; d complete and checked): the DoF numbering
 * and the elimination tree. On failure s->data holds what was built, for
 * the ops' destroy. */
fea_status fea_multifrontal_attach(fea_solver *s, const fea_solver_desc *d);

/* The elimination tree of s, and whether s keeps the boundary in its root. */
const fea_etree *fea_multifrontal_tree(const fea_solver *s);
int fea_multifrontal_keeps_boundary(const fea_solver *s);

/* The root's boundary DoFs and their dense Schur complement (r x r, both
 * triangles), either NULL to skip; s with keep_boundary, set up when S is
 * asked for (the DoFs come from the symbolic tree). */
void fea_multifrontal_boundary_schur(const fea_solver *s, fea_index *dofs, double *S);

/* Solvers with keep_boundary, as the patches of a multipatch solver use
 * them (with the internal keep_boundary = 2: only the free boundary DoFs
 * stay in the root). y: nrhs columns in the tree's numbering (by space DoF,
 * ld the tree's num_dofs). kept_forward takes the right-hand sides in y (0 on Dirichlet
 * DoFs, loads lifted), runs the forward substitution and writes the
 * condensed right-hand side b_B - A_BI A_II^-1 b_I of the root's boundary
 * DoFs into g (r x nrhs, ld r, in fea_multifrontal_boundary_schur's order);
 * y keeps the state kept_backward needs. kept_backward sets those DoFs to
 * xb (same layout; 0 at Dirichlet DoFs) and runs the backward substitution:
 * y then holds A_II^-1 (b_I - A_IB x_B) inside and xb on the boundary. */
fea_status fea_multifrontal_kept_forward(fea_solver *s, fea_index nrhs, double *y, double *g);
fea_status fea_multifrontal_kept_backward(fea_solver *s, fea_index nrhs, double *y,
                                          const double *xb);
/* The problem's load with Dirichlet lifting in the tree's numbering (after setup). */
const double *fea_multifrontal_load(const fea_solver *s);

/* The accuracy report (src/multifrontal/multifrontal-accuracy.c). */
typedef struct fea_multifrontal_pivot_range {
  double min, max;    /* over the pivots L_jj^2; {+inf, -inf} when there are none */
  fea_index min_node; /* the tree node holding min (-1: none) */
  fea_index count;    /* pivots: the DoFs eliminated */
} fea_multifrontal_pivot_range;
/* The range of t's pivots from the per-node ranges of a factor (f->pivots). */
void fea_multifrontal_pivot_range_of(const fea_etree *t, const double *pivots,
                                     fea_multifrontal_pivot_range *r);
/* "tree node N (level L, elements [a, b) x ..., q = Q, r = R)" into buf. */
void fea_multifrontal_node_name(const fea_etree *t, fea_index n, char *buf, size_t len);
/* The rule on a factor's pivot range over count pivots, `where` naming the
 * place of min: FEA_ERR_NOT_POSDEF when min is not positive (or NaN) or
 * min / max < DBL_EPSILON; a warning at FEA_LOG_WARN and *warned = 1 when
 * min / max < fea_multifrontal_warn_ratio(count); else FEA_SUCCESS and
 * *warned = 0. */
fea_status fea_multifrontal_pivot_rule(fea_context *ctx, double min, double max, double count,
                                       const char *where, int *warned);
/* The warning threshold of the rule: max(sqrt(DBL_EPSILON), count DBL_EPSILON). */
double fea_multifrontal_warn_ratio(double count);
/* ||A||_inf, the largest row sum of |a_ij|. */
struct fea_matrix;
double fea_multifrontal_norm_inf(const struct fea_matrix *A);
/* R (A->rows x nrhs, ld A->rows) = b - A x; the largest, over the columns,
 * relative residual ||b_j - A x_j||_2 / ||b_j||_2 (the absolute one where
 * b_j = 0) and normwise backward error ||r_j||_inf / (norm_a ||x_j||_inf +
 * ||b_j||_inf), NaN if any is not finite. */
void fea_multifrontal_residual(const struct fea_matrix *A, double norm_a, fea_index nrhs,
                               const double *b, fea_index ldb, const double *x, fea_index ldx,
                               double *R, double *relative, double *backward);
/* Log at FEA_LOG_WARN a backward error above sqrt(DBL_EPSILON). */
void fea_multifrontal_residual_rule(fea_context *ctx, double relative, double backward,
                                    int refined);
/* An estimate of ||A^-1||_1 for a symmetric A of order n, from solves
 * x := A^-1 x (solve(data, x)): Hager's method with Higham's refinements,
 * as LAPACK's dlacn2, at most 11 solves (*solves says how many). A lower
 * bound, exact or within a factor of about 3 in practice. work: 2 n. */
typedef fea_status (*fea_multifrontal_solve_fn)(void *data, double *x);
fea_status fea_multifrontal_inverse_norm1(fea_index n, fea_multifrontal_solve_fn solve, void *data,
                                          double *work, double *est, int *solves);
/* Log at FEA_LOG_WARN, and set *warned, when the condition number is above
 * 1 / sqrt(DBL_EPSILON). */
void fea_multifrontal_condition_rule(fea_context *ctx, double condition, int *warned);
/* The pivot range of s's last setup (count 0 before one). */
void fea_multifrontal_get_pivot_range(const fea_solver *s, fea_multifrontal_pivot_range *r);

/* Complete results of s (levels and nodes in range). */
void fea_multifrontal_get_stats(const fea_solver *s, fea_solver_stats *full);
void fea_multifrontal_get_level(const fea_solver *s, int level, fea_solver_level *full);
void fea_multifrontal_get_node(const fea_solver *s, fea_index node, fea_solver_node *full);

#endif
