/* The prehandled solver on a coarse triangle mesh of several macro cells
 * (Ruda et al. 2022, §5.1, Table 4; docs/prehandled.md, "Meshes of several
 * macro cells"): the hierarchy of a P1 mesh made by `levels` calls of
 * fea_mesh_refine_uniform() from a mesh of macro cells, read back from the
 * fine mesh's cell order (macro-mesh.c), and the groups of macro cells whose
 * P1 stiffness matrices are equal up to a vertex permutation (macro-groups.c),
 * which share one C_i^-1. The unit square (prehandle.h's index arithmetic)
 * does not use it. */
#ifndef FEA_PREHANDLED_MACRO_MESH_H
#define FEA_PREHANDLED_MACRO_MESH_H

#include <feaccel/problem.h>
#include <feaccel/types.h>

typedef struct fea_ph_macro {
  fea_index num;   /* unknowns: the problem's free DoFs, in its order */
  int levels;      /* refinements from the macro cells to the fine mesh: L - L0 */
  fea_index r;     /* 2^levels fine edges per macro edge */
  fea_index cells; /* macro cells */
  fea_index blk;   /* interior nodes per macro cell: (r - 1)(r - 2) / 2 */
  fea_index nc, ne, ni;
  int groups;             /* groups of macro cells with one interior block */
  fea_index *group_cells; /* groups: macro cells per group; I is numbered group by group */
  fea_index *group_rep;   /* groups: each group's first macro cell (mesh order) */
  fea_index *cell_group;  /* cells: the group of each macro cell (mesh order) */
  fea_index *perm, *pos;  /* the C/E/I order (prehandle.h's fea_ph_split) */
  fea_index num_new;      /* unknowns new on some level (not coarse) */
  fea_index
      *level_start;    /* levels + 1: level k's new nodes are [level_start[k-1], level_start[k]) */
  fea_index *new_node; /* num_new unknowns, level by level */
  fea_index *new_parent; /* 2 num_new: the ends of the edge each halves (-1: a Dirichlet node) */
} fea_ph_macro;

/* The hierarchy of pb's mesh as `levels` uniform refinements of macro cells:
 * FEA_ERR_UNSUPPORTED naming the reason when the mesh is not that (not
 * triangles, cell count not a multiple of 4^levels, a fine node away from
 * where the refinement puts it). */
fea_status fea_ph_macro_create(fea_context *ctx, const fea_problem *pb, int levels,
                               fea_ph_macro **out);
void fea_ph_macro_destroy(fea_ph_macro **m);

/* x := S x and x := S^T x in place (num entries), level by level. */
void fea_ph_macro_apply_s(const fea_ph_macro *m, double *x);
void fea_ph_macro_apply_st(const fea_ph_macro *m, double *x);

/* Exact dense FLOPs per right-hand side: 2 |E|^2 + 4 blk |I|. */
double fea_ph_macro_flops(const fea_ph_macro *m);

/* The refinement depth that desc.coarse_cells asks for on a mesh of
 * num_cells triangles: coarse_cells = num_cells / 4^levels macro cells, or
 * for coarse_cells = 0 the depth with the fewest dense FLOPs among those the
 * mesh supports. */
fea_status fea_ph_macro_choose_levels(fea_context *ctx, const fea_problem *pb,
                                      fea_index coarse_cells, int *levels);

/* ---- groups (macro-groups.c) ---- */

/* The P1 stiffness matrix (sigma = 1) of the triangle with corners x (3 x 2
 * coordinates, point by point), row-major 3 x 3. Scale invariant in 2D. */
void fea_ph_p1_stiffness(const double x[6], double k[9]);

/* Whether k equals ref up to a vertex permutation within tol (absolute):
 * 1 with perm such that k[perm[i]][perm[j]] = ref[i][j], else 0. */
int fea_ph_p1_match(const double k[9], const double ref[9], double tol, int perm[3]);

#endif
