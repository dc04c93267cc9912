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

#endif
