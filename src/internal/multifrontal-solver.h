/* The multifrontal solver kind behind fea_solver_create_multifrontal
 * (src/multifrontal/solver-kind.c): the solver ops, its state attached to a
 * solver, and the queries the interface copies out. */
#ifndef FEA_INTERNAL_MULTIFRONTAL_SOLVER_H
#define FEA_INTERNAL_MULTIFRONTAL_SOLVER_H

#include "etree.h"
#include "solver.h"

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
 * triangles), either NULL to skip; s set up with keep_boundary. */
void fea_multifrontal_boundary_schur(const fea_solver *s, fea_index *dofs, double *S);

/* Complete results of s (levels and nodes in range). */
void fea_multifrontal_get_stats(const fea_solver *s, fea_solver_stats *full);
void fea_multifrontal_get_level(const fea_solver *s, int level, fea_solver_level *full);
void fea_multifrontal_get_node(const fea_solver *s, fea_index node, fea_solver_node *full);

#endif
