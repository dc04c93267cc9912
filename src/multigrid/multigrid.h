/* Geometric multigrid on nested structured meshes (the solver behind
 * fea_solver_create_multigrid; docs/multigrid.md).
 *
 * Level 0 is the finest: the caller's problem. Level l + 1 is the same
 * problem (same sigma, f, g, quadrature) rediscretized on the structured
 * mesh with half the cells per direction; every level has its own
 * fea_operator of the requested kind and its own free-DoF numbering.
 * Prolongation P_l: coarse free DoFs -> fine free DoFs (CSR), the coarse
 * space's interpolation at the fine nodes; restriction is P_l^T. On a
 * B-spline or NURBS patch level l + 1 is the space with half the knot spans
 * (same degrees and geometry) and P_l is knot insertion
 * (hierarchy-bspline.c). */
#ifndef FEA_INTERNAL_MULTIGRID_H
#define FEA_INTERNAL_MULTIGRID_H

#include <feaccel/solver.h>

#include "disc/problem.h"

typedef struct fea_mg fea_mg;

/* Checks the problem (a Lagrange space on a structured mesh, or a 2D or 3D
 * B-spline / NURBS patch, whose levels halve the knot spans; anything else is
 * FEA_ERR_UNSUPPORTED naming what it is) and the options of desc (complete:
 * every field set; invalid values are FEA_ERR_INVALID_ARG naming the field
 * and value), builds the hierarchy (meshes, spaces, problems, operators,
 * transfers), estimates the smoother's eigenvalue bounds (Lanczos) and
 * factors the coarsest level when it has free DoFs. An unscaled Richardson
 * omega with omega * lambda_max(A_l) >= 2 on some level is refused
 * (FEA_ERR_INVALID_ARG naming the level, omega and lambda_max). Nothing is
 * kept from the caller's problem object itself: it may be destroyed. */
fea_status fea_mg_create(fea_context *ctx, const fea_problem *problem,
                         const fea_multigrid_desc *desc, fea_mg **out);
void fea_mg_destroy(fea_mg **mg);

/* Solve A x = b on the finest level's free DoFs for one right-hand side;
 * x is the initial guess on entry. FEA_WARN_NOT_CONVERGED (x the last
 * iterate) when max_iterations is reached. The per-solve facts (iterations,
 * residuals, factor, solve_s) go into the stats. */
fea_status fea_mg_solve(fea_mg *mg, const double *b, double *x);

/* The finest level's reduced right-hand side (the problem's own load). */
fea_status fea_mg_get_rhs(fea_mg *mg, double *b);

/* Complete stats (size = sizeof(fea_multigrid_stats)). */
void fea_mg_get_stats(const fea_mg *mg, fea_multigrid_stats *stats);

/* Where fea_mg_create's time went, in seconds (wall clock, omp_get_wtime):
 * the phases of fea_multigrid_stats.setup_s, for feaccel-bench multigrid
 * (a dozen clock reads per setup, so always measured; internal because the
 * phases follow the implementation and would freeze it in the ABI). */
typedef struct fea_mg_setup_phases {
  double meshes;    /* coarse structured meshes and their order-1 spaces */
  double problems;  /* coarse problems (Dirichlet data, free-DoF numbering) */
  double operators; /* level operators (and the finest level's load) */
  double transfers; /* prolongations and their transposes */
  double smoother;  /* inverse diagonals and eigenvalue estimates */
  double coarse;    /* coarsest level: assembly and dense Cholesky factor */
  double other;     /* work vectors, the rest of setup_s */
} fea_mg_setup_phases;

void fea_mg_get_setup_phases(const fea_mg *mg, fea_mg_setup_phases *phases);

/* ---- B-spline patches (hierarchy-bspline.c), also for multipatch levels ---- */

/* 1 when every direction of s can halve once more: an even element count, at
 * least coarsest elements after, the geometry's breakpoints kept. */
int fea_mg_bspline_can_halve(const fea_space *s, fea_index coarsest);
/* The space of fine with every other breakpoint dropped (same degrees, box
 * and geometry): fine is its uniform h-refinement. */
fea_status fea_mg_bspline_coarse_space(const fea_space *fine, fea_space **out);
/* P: coarse free DoFs -> fine free DoFs by knot insertion (the Kronecker
 * product of the 1D transfer matrices, free rows and columns). */
fea_status fea_mg_bspline_prolongation(fea_context *ctx, const fea_problem *fine,
                                       const fea_problem *coarse, fea_matrix **P);

/* ---- levels given by the caller (multipatch domains, src/multipatch/) ---- */

/* One level: its n x n CSR matrix A (the first level's n is the solve's
 * size), the prolongation P from the next level (n x n_next; NULL on the
 * last level), its size per direction for messages (elements of the first
 * patch), and, for the Schwarz smoother, its blocks as lists of free rows
 * (block i: block_dofs[block_ptr[i] .. block_ptr[i + 1]), increasing). */
typedef struct fea_mg_given_level {
  fea_matrix *A;
  fea_matrix *P;
  fea_index cells[3];
  fea_index nblocks;
  const fea_index *block_ptr, *block_dofs;
} fea_mg_given_level;

/* The multigrid of fea_mg_create over levels built elsewhere: desc checked
 * as there; CSR levels on the host (FEA_ERR_UNSUPPORTED naming the backend
 * otherwise); Richardson, Chebyshev-Jacobi or Chebyshev over the given
 * Schwarz blocks; the last level factored densely (at most
 * FEA_MG_MAX_COARSE_DOFS rows, FEA_ERR_UNSUPPORTED beyond). References are
 * taken on the matrices; the block lists are copied. rhs: the first level's
 * right-hand side (fea_mg_get_rhs), copied. */
fea_status fea_mg_create_given(fea_context *ctx, const fea_multigrid_desc *desc, int num_levels,
                               const fea_mg_given_level *levels, const double *rhs, fea_mg **out);

/* The Schwarz boxes of degree p along n coefficients (min(p + 1, n) each,
 * the smoother's stride apart, the last ending at n - 1): their starts,
 * and their count as the result (starts NULL: count only). */
fea_index fea_mg_schwarz_boxes_1d(fea_index n, int p, fea_index *starts);

#endif
