/**
 * @file solver.h
 * @brief Direct solvers: the IGA multifrontal solver for B-spline spaces.
 *
 * The multifrontal solver factors the Poisson system of a problem on a
 * tensor-product B-spline space without forming the global matrix and
 * without a graph ordering: its elimination tree is the patch tree of the
 * element box. Leaves are boxes of p+1..2p+1 elements per direction; the
 * element integrals are computed inside the leaves, each node eliminates
 * the DoFs whose support it contains (partial Cholesky: potrf, trsm, syrk)
 * and passes the Schur complement on its interface to its parent. Where a
 * knot vector has a C0 separator (an interior knot of multiplicity >= p),
 * the tree is cut along it, which makes the factorization cheaper
 * (refined isogeometric analysis).
 *
 * Typical use:
 * @code
 * fea_solver_desc d = FEA_SOLVER_DESC_INIT;
 * fea_solver *s;
 * fea_solver_create_multifrontal(ctx, space, problem, &d, &s); // the tree
 * fea_solver_setup(s);                                         // integrate + factor
 * fea_solver_solve(s, 1, NULL, 0, u_free, num_free);           // the problem's own load
 * fea_solver_destroy(&s);
 * @endcode
 */
#ifndef FEACCEL_SOLVER_H
#define FEACCEL_SOLVER_H

#include <stddef.h>
#include <stdint.h>

#include <feaccel/export.h>
#include <feaccel/problem.h>
#include <feaccel/space.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** Opaque solver. */
typedef struct fea_solver fea_solver;

/** How the patch tree merges patches. */
typedef enum fea_mf_merge {
  FEA_MF_MERGE_AUTO = 0,     /**< the faster of the two (see the solver's docs page) */
  FEA_MF_MERGE_TENSOR = 1,   /**< 2^d children: every direction split at once (the paper's tree) */
  FEA_MF_MERGE_PAIRWISE = 2  /**< 2 children: one direction at a time, the longest first */
} fea_mf_merge;

/** Options of the multifrontal solver; initialize with FEA_SOLVER_DESC_INIT. */
typedef struct fea_solver_desc {
  size_t size;               /**< sizeof(fea_solver_desc) as compiled by the caller */
  fea_mf_merge merge;        /**< tree shape */
  /** 1: never eliminate the patch-boundary DoFs (the space's boundary DoFs).
   * fea_solver_setup() then ends with their dense Schur complement, which
   * fea_solver_get_boundary_schur() exports for an outer solver coupling
   * several patches. The complement does not depend on the Dirichlet data;
   * fea_solver_solve() still solves the problem's Dirichlet system. */
  int keep_boundary;
  /** Refuse setup when its memory would exceed this; 0: the physical memory. */
  uint64_t memory_limit_bytes;
} fea_solver_desc;

/** Initializer: automatic merge, full elimination, memory limit = physical memory. */
#define FEA_SOLVER_DESC_INIT {sizeof(fea_solver_desc), FEA_MF_MERGE_AUTO, 0, 0}

/**
 * @brief Create a multifrontal solver for @p problem on the B-spline @p space.
 *
 * The symbolic phase (the elimination tree, front sizes, index maps and the
 * exact FLOP and memory counts) runs here; nothing numeric does. The solver
 * holds references on the context, the space and the problem.
 * @param desc options, or NULL for the defaults
 * @return FEA_ERR_UNSUPPORTED for a space that is not a B-spline space,
 *         FEA_ERR_INVALID_ARG when @p problem is defined on another space.
 */
FEA_API fea_status fea_solver_create_multifrontal(fea_context *ctx, fea_space *space,
                                                  fea_problem *problem,
                                                  const fea_solver_desc *desc, fea_solver **out);

/**
 * @brief Replace the problem (e.g. a new sigma or source) by another one on
 * the same space. The tree is kept; the next fea_solver_setup() refactors.
 * Until then fea_solver_solve() answers FEA_ERR_STATE.
 */
FEA_API fea_status fea_solver_set_problem(fea_solver *solver, fea_problem *problem);

/**
 * @brief Numeric phase: element integration (fused into the leaves, the
 * global matrix is never formed) and the factorization, level by level.
 *
 * @return FEA_ERR_OUT_OF_MEMORY before any large allocation when the tree's
 *         exact memory estimate exceeds the limit;
 *         FEA_ERR_NOT_POSDEF naming the tree node (index, level, element box)
 *         whose front is not positive definite.
 */
FEA_API fea_status fea_solver_setup(fea_solver *solver);

/**
 * @brief Solve with the factors for @p nrhs right-hand sides at once.
 *
 * @param b the reduced right-hand sides over the problem's free DoFs
 *        (column-major, num_free x nrhs, leading dimension @p ldb), as
 *        fea_problem_assemble_reference() numbers them; or NULL with
 *        @p nrhs = 1 for the problem's own load, Dirichlet lifting included
 * @param x the reduced solutions (num_free x nrhs, leading dimension @p ldx);
 *        fea_problem_expand_solution() turns one into full coefficients
 * @return FEA_ERR_STATE before fea_solver_setup().
 */
FEA_API fea_status fea_solver_solve(fea_solver *solver, fea_index nrhs, const double *b,
                                    fea_index ldb, double *x, fea_index ldx);

/**
 * @brief The boundary Schur complement of a solver created with keep_boundary.
 *
 * S = A_BB - A_BI A_II^-1 A_IB over the boundary DoFs B (all DoFs of the
 * space, no Dirichlet elimination; I the interior ones).
 * @param capacity the DoFs @p dofs has room for (and @p S room for capacity^2 values)
 * @param dofs the boundary DoFs in the space's numbering (ascending), or NULL
 * @param S the dense n x n complement, column-major, leading dimension n, or NULL
 * @param[out] n the number of boundary DoFs
 * @return FEA_ERR_STATE without keep_boundary or before setup,
 *         FEA_ERR_DIMENSION when capacity < n and dofs or S is given.
 */
FEA_API fea_status fea_solver_get_boundary_schur(const fea_solver *solver, fea_index capacity,
                                                 fea_index *dofs, double *S, fea_index *n);

/** Facts about a solver; initialize with FEA_SOLVER_STATS_INIT. */
typedef struct fea_solver_stats {
  size_t size;               /**< sizeof(fea_solver_stats) as compiled by the caller */
  int num_levels;            /**< tree levels (leaves are level 0, the root the last) */
  fea_index num_nodes;       /**< tree nodes */
  fea_index max_front;       /**< largest front q + r */
  double flops;              /**< factorization FLOPs (exact count, see the docs page) */
  double critical_path_flops;/**< sum over levels of the largest node's FLOPs */
  uint64_t factor_bytes;     /**< stored factors: 8 sum(q^2 + q r) */
  uint64_t peak_bytes;       /**< peak memory of the numeric setup (the estimate checked against the limit) */
  double integrate_s;        /**< element integration in the leaves, summed over threads (last setup) */
  double factor_s;           /**< the whole factorization, integration included (last setup) */
  double root_s;             /**< the root's factorization (last setup) */
  double forward_s;          /**< forward substitution (last solve) */
  double backward_s;         /**< backward substitution (last solve) */
  int threads;               /**< CPU threads the context uses */
} fea_solver_stats;

/** Initializer for fea_solver_stats. */
#define FEA_SOLVER_STATS_INIT {sizeof(fea_solver_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

/** @brief Fill @p stats (whose .size the caller set); the times are 0 before setup and solve. */
FEA_API fea_status fea_solver_get_stats(const fea_solver *solver, fea_solver_stats *stats);

/** One level of the tree; initialize .size with sizeof(fea_solver_level). */
typedef struct fea_solver_level {
  size_t size;
  fea_index nodes;           /**< nodes at this level */
  fea_index q_min, q_max;    /**< eliminated DoFs per node */
  fea_index r_min, r_max;    /**< DoFs passed up per node */
  double flops;              /**< FLOPs of the level's nodes */
  double factor_s;           /**< time to factor the level (last setup) */
} fea_solver_level;

/** @brief Facts about level @p level (0 = leaves, num_levels - 1 = the root). */
FEA_API fea_status fea_solver_get_level(const fea_solver *solver, int level,
                                        fea_solver_level *info);

/** One tree node; initialize .size with sizeof(fea_solver_node). */
typedef struct fea_solver_node {
  size_t size;
  int level;                 /**< height above the leaves */
  fea_index parent;          /**< parent node, -1 at the root */
  fea_index box_lo[3];       /**< element box [box_lo, box_hi) per direction */
  fea_index box_hi[3];
  fea_index q;               /**< DoFs eliminated here */
  fea_index r;               /**< DoFs passed up */
} fea_solver_node;

/** @brief Facts about node @p node; nodes are in post-order, the root is num_nodes - 1. */
FEA_API fea_status fea_solver_get_node(const fea_solver *solver, fea_index node,
                                       fea_solver_node *info);

/** @brief Destroy a solver. Accepts NULL; sets `*solver = NULL`. */
FEA_EXPORT fea_status fea_solver_destroy(fea_solver **solver);

FEA_END_DECLS

#endif /* FEACCEL_SOLVER_H */
