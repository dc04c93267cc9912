/* Prehandling of the Q1/P1 Poisson system on the unit square (Ruda et al.,
 * 2022, §3-§4; docs/prehandled.md): the
 * hierarchical-basis transform S from the coarse width h0 = 1/n0 to the fine
 * width h = 1/n, the partial Cholesky L of S^T A_h S, the C/E/I splitting of
 * the unknowns, and a Lanczos estimate of condition numbers.
 *
 * Vectors run over the interior grid nodes (homogeneous Dirichlet data: the
 * boundary holds no unknowns) in lexicographic order, x fastest: node (i, j),
 * 1 <= i, j <= n - 1, is entry (i - 1) + (j - 1)(n - 1). This is the order of
 * the free DoFs of a Lagrange Q1/P1 problem on fea_mesh_create_structured(),
 * so A_h comes from the reference assembly unchanged. On this grid the level
 * hierarchy is index arithmetic: with r = n / n0, level k (0 = coarse) holds
 * the nodes whose indices are both multiples of r / 2^k. P1 triangles are cut
 * along the diagonal (0,0)-(1,1) of each square, as the structured mesh does,
 * and uniform red refinement keeps that direction on every level. */
#ifndef FEA_INTERNAL_PREHANDLE_H
#define FEA_INTERNAL_PREHANDLE_H

#include "linalg/lanczos.h"
#include <stdint.h>

#include <feaccel/context.h>
#include <feaccel/matrix.h>
#include <feaccel/types.h>

typedef enum fea_ph_element { FEA_PH_Q1 = 0, FEA_PH_P1 = 1 } fea_ph_element;

/* The two grids: n = 2^levels * n0 fine cells per direction. */
typedef struct fea_ph_grid {
  fea_ph_element element;
  fea_index n, n0, r; /* r = n / n0 */
  int levels;         /* log2 r: the S_k of S = S_levels ... S_1 */
  fea_index num;      /* (n - 1)^2 interior nodes */
  /* A mesh of several macro cells (macro-mesh.h), or NULL for the unit
   * square. With it, the transforms, the coarse nodes and the split follow
   * its tables, num is its unknowns, r = n = 2^levels, n0 = 1, and element
   * is P1. Owned by the solver that holds the grid. */
  const struct fea_ph_macro *macro;
} fea_ph_grid;

/* Checks n0 >= 1, n = 2^levels n0 with levels >= 0, and the element. */
fea_status fea_ph_grid_init(fea_context *ctx, fea_ph_element element, fea_index n, fea_index n0,
                            fea_ph_grid *g);

/* x := S x and x := S^T x in place, level by level, O(num). */
void fea_ph_apply_s(const fea_ph_grid *g, double *x);
void fea_ph_apply_st(const fea_ph_grid *g, double *x);

/* The explicit S (num x num CSR), the product of the per-level S_k. */
fea_status fea_ph_build_s(fea_context *ctx, const fea_ph_grid *g, fea_matrix **S);

/* At := S^T A S by sparse products (A and S square of one size). */
fea_status fea_ph_transform_matrix(fea_context *ctx, const fea_matrix *A, const fea_matrix *S,
                                   fea_matrix **At);

/* The partial Cholesky L of (5): the dense lower factor of the coarse block
 * of At (coarse nodes in lexicographic order) and sqrt(diag At) elsewhere. */
typedef struct fea_ph_factor fea_ph_factor;

/* Needs a host-memory context (the factor is computed by its dense ops).
 * The solves share one workspace: one thread per factor at a time. */
fea_status fea_ph_factor_create(fea_context *ctx, const fea_ph_grid *g, const fea_matrix *At,
                                fea_ph_factor **out);
void fea_ph_factor_destroy(fea_ph_factor **f);
/* The coarse factor L0 (column-major, lower; nc x nc) and its size. */
const double *fea_ph_factor_coarse(const fea_ph_factor *f, fea_index *nc);
/* sqrt(diag At) per interior node (lexicographic), 0 at the coarse nodes. */
const double *fea_ph_factor_sqrt_diag(const fea_ph_factor *f);

/* x := L^-1 x, x := L^-T x, and their inverses x := L x, x := L^T x. */
fea_status fea_ph_solve_l(fea_ph_factor *f, double *x);
fea_status fea_ph_solve_lt(fea_ph_factor *f, double *x);
fea_status fea_ph_apply_l(fea_ph_factor *f, double *x);
fea_status fea_ph_apply_lt(fea_ph_factor *f, double *x);
/* b := L^-1 S^T b (forward map of a nodal load) and x := S L^-T x (back to
 * nodal values). */
fea_status fea_ph_forward(fea_ph_factor *f, double *b);
fea_status fea_ph_backward(fea_ph_factor *f, double *x);
/* The same for k columns (leading dimension num): the coarse solves as one
 * TRSM, the sweeps and scalings column-parallel on the context's threads. */
fea_status fea_ph_forward_many(fea_ph_factor *f, fea_index k, double *b);
fea_status fea_ph_backward_many(fea_ph_factor *f, fea_index k, double *x);

/* The C/E/I splitting: new position p holds interior node perm[p], in the
 * order C (coarse nodes), E (on coarse edges), I (macro-cell interiors, cell
 * by cell, one local geometric order for all cells). pos is the inverse. */
typedef struct fea_ph_split {
  fea_index nc, ne, ni;
  fea_index num_cells; /* macro cells: n0^2 (Q1), 2 n0^2 (P1) */
  fea_index block;     /* interior nodes per macro cell */
  fea_index *perm;
  fea_index *pos;
  /* Groups of macro cells with one interior block (Ruda et al. 2022, eq.
   * (25)): I holds group 0's cells, then group 1's, ...; group_cells[g] cells
   * each. The unit square has one group (group_cells NULL: all cells). */
  int groups;
  fea_index *group_cells;
} fea_ph_split;

fea_status fea_ph_split_create(fea_context *ctx, const fea_ph_grid *g, fea_ph_split *out);
void fea_ph_split_free(fea_ph_split *s);

#endif
