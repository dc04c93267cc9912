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

/* Complete results of s (levels and nodes in range). */
void fea_multifrontal_get_stats(const fea_solver *s, fea_solver_stats *full);
void fea_multifrontal_get_level(const fea_solver *s, int level, fea_solver_level *full);
void fea_multifrontal_get_node(const fea_solver *s, fea_index node, fea_solver_node *full);

#endif
