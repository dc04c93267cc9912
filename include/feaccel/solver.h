/**
 * @file solver.h
 * @brief Solvers behind one handle: the IGA multifrontal direct solver for
 * B-spline spaces, the prehandled Schur-complement solver for the 2D Q1/P1
 * Poisson problem (mixed precision), and geometric multigrid.
 *
 * Every solver follows create -> setup -> solve (many times) -> destroy;
 * fea_solver_setup(), fea_solver_solve(), fea_solver_set_problem() and
 * fea_solver_destroy() work on all of them. Right-hand sides and solutions
 * are always over the problem's free DoFs in fea_problem_assemble_reference()
 * numbering. Kind-specific facts come from fea_solver_get_stats()
 * (multifrontal), fea_solver_get_prehandled_stats() and
 * fea_solver_get_multigrid_stats().
 *
 * The multifrontal solver:
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
 *
 * @par Errors common to this header
 * Every function here that returns fea_status returns FEA_SUCCESS when it did
 * its job (fea_solver_solve() may also return FEA_WARN_NOT_CONVERGED). Except
 * fea_solver_destroy(), each also returns FEA_ERR_INVALID_ARG when the
 * context, solver, space, problem or an output pointer it needs is NULL, or a
 * size-versioned struct's .size is outside the accepted sizes; each that
 * creates, sets up or solves returns FEA_ERR_OUT_OF_MEMORY when host or device
 * memory runs out or an estimate made before allocating exceeds the memory
 * budget (the descriptor's memory_limit_bytes, fea_context_set_memory_limit())
 * and, on `/gpu/cuda`, FEA_ERR_DEVICE (a CUDA call failed) or
 * FEA_ERR_BACKEND (cuBLAS, cuSPARSE or cuSOLVER failed). Where a setup
 * integrates elements, a sigma that is not positive and finite or a load that
 * is not finite at a quadrature point is FEA_ERR_INVALID_ARG, and where the
 * solver copies the problem (create, fea_solver_set_problem()) a failure of
 * LAPACK to compute a triangle or tetrahedron quadrature rule is
 * FEA_ERR_BACKEND. Where the context has a progress callback
 * (fea_context_set_progress_callback()), a setup, fea_solver_create_multigrid()
 * and a solve that runs CG return FEA_ERR_CANCELLED when it asks to stop. The
 * other codes are listed under each function.
 */
#ifndef FEACCEL_SOLVER_H
#define FEACCEL_SOLVER_H

#include <stddef.h>
#include <stdint.h>

#include <feaccel/export.h>
#include <feaccel/operator.h>
#include <feaccel/problem.h>
#include <feaccel/space.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** Opaque solver. @since 0.1.0 */
typedef struct fea_solver fea_solver;

/** How the patch tree merges patches. @since 0.1.0 */
typedef enum fea_multifrontal_merge {
  FEA_MULTIFRONTAL_MERGE_AUTO = 0, /**< the faster of the two (see the solver's docs page) */
  FEA_MULTIFRONTAL_MERGE_TENSOR =
      1, /**< 2^d children: every direction split at once (the paper's tree) */
  FEA_MULTIFRONTAL_MERGE_PAIRWISE = 2 /**< 2 children: one direction at a time, the longest first */
} fea_multifrontal_merge;

/** Options of the multifrontal solver; initialize with FEA_SOLVER_DESC_INIT. @since 0.1.0 */
typedef struct fea_solver_desc {
  size_t size;                  /**< sizeof(fea_solver_desc) as compiled by the caller */
  fea_multifrontal_merge merge; /**< tree shape */
  /** 1: never eliminate the patch-boundary DoFs (the space's boundary DoFs).
   * fea_solver_setup() then ends with their dense Schur complement, which
   * fea_solver_get_boundary_schur() exports for an outer solver coupling
   * several patches. The complement does not depend on the Dirichlet data;
   * fea_solver_solve() still solves the problem's Dirichlet system. */
  int keep_boundary;
  /** Refuse creation when a lower bound of the factorization's memory (from
   * the knot vectors, before the tree is built) exceeds this, and setup
   * when the tree's exact peak does; 0: the context's budget
   * (fea_context_set_memory_limit()). rlimits and cgroup limits always apply. */
  uint64_t memory_limit_bytes;
  /** Measure every solve (the multifrontal solver; the multipatch solver
   * ignores it): 0 (default) no; 1: after each fea_solver_solve() the
   * relative residual max_j ||b_j - A x_j||_2 / ||b_j||_2 with the assembled
   * system (fea_problem_assemble_reference()'s matrix, assembled by
   * fea_solver_setup() and kept with the factors), in
   * fea_solver_stats.relative_residual; 2: as 1 after one step of iterative
   * refinement (x += A^-1 (b - A x), one more pair of sweeps). Each check
   * costs a sparse matrix-vector product per right-hand side (and a copy of
   * b); a backward error above sqrt(DBL_EPSILON) is logged at FEA_LOG_WARN
   * (docs/multifrontal.md, "Accuracy"). @since 0.1.0 */
  int check_residual;
  /** 1: fea_solver_setup() also estimates the condition number cond_1(A) = ||A||_1
   * ||A^-1||_1 into fea_solver_stats.condition_estimate, ||A^-1||_1 by Hager's method
   * with Higham's refinements (LAPACK's dlacn2) from at most 11 solves with the new factor,
   * ||A||_1 from the assembled system (kept as for check_residual); above
   * 1 / sqrt(DBL_EPSILON) it is logged at FEA_LOG_WARN and sets stats.ill_conditioned.
   * Where the pivot ratio is a loose bound (a 1D Laplacian: n against n^2) this is the
   * figure to read. 0 (default): no. The multipatch solver ignores it. @since 0.1.0 */
  int estimate_condition;
} fea_solver_desc;

/** Initializer: automatic merge, full elimination, the context's memory budget, no residual
 * check or condition estimate. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_SOLVER_DESC_INIT                                                                   \
  {                                                                                            \
    .size = sizeof(fea_solver_desc), .merge = FEA_MULTIFRONTAL_MERGE_AUTO, .keep_boundary = 0, \
    .memory_limit_bytes = 0, .check_residual = 0, .estimate_condition = 0                      \
  }
#else
#define FEA_SOLVER_DESC_INIT \
  { sizeof(fea_solver_desc), FEA_MULTIFRONTAL_MERGE_AUTO, 0, 0, 0, 0 }
#endif

/**
 * @brief Create a multifrontal solver for @p problem on the B-spline @p space.
 *
 * The symbolic phase (the elimination tree, front sizes, index maps and the
 * exact FLOP and memory counts) runs here; nothing numeric does. The solver
 * holds references on the context, the space and the problem.
 * @param desc options, or NULL for the defaults
 * @retval FEA_ERR_UNSUPPORTED for a space that is not a B-spline space, a
 *         backend without multifrontal ops, or a front beyond the solver's
 *         32-bit front positions
 * @retval FEA_ERR_INVALID_ARG when @p problem is defined on another space, the
 *         space belongs to another context, or merge or keep_boundary is out
 *         of range
 * @retval FEA_ERR_OUT_OF_MEMORY when a lower bound of the factorization's
 *         memory, computed from the knot vectors before the tree is built,
 *         exceeds the budget (desc->memory_limit_bytes, else the context's),
 *         naming both figures; or an allocation fails
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_create_multifrontal(fea_context *ctx, fea_space *space,
                                                  fea_problem *problem, const fea_solver_desc *desc,
                                                  fea_solver **out);

/**
 * @brief Replace the problem (e.g. a new sigma or source) by another one on
 * the same space. The tree is kept; the next fea_solver_setup() refactors.
 * Until then fea_solver_solve() answers FEA_ERR_STATE.
 * @retval FEA_ERR_INVALID_ARG when @p problem is defined on another space
 *         than the solver's, its Dirichlet data are not finite at a
 *         boundary DoF, the solver is a multipatch solver (its problem is
 *         fixed at creation), or (multifrontal) it fixes other DoFs than the
 *         solver's problem (another side condition or component mask; the
 *         first DoF that differs is named)
 * @retval FEA_ERR_UNSUPPORTED when the solver's kind cannot take the problem
 *         (prehandled: a variable sigma or another space), naming what differs
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_set_problem(fea_solver *solver, fea_problem *problem);

/**
 * @brief Numeric phase: element integration (fused into the leaves, the
 * global matrix is never formed) and the factorization, level by level.
 *
 * The multifrontal and multipatch setups check their factor's pivots
 * d_j = L_jj^2 (every front's, and the multipatch interface system's): with
 * pivot_ratio = min d_j / max d_j (fea_solver_stats), a ratio below
 * max(sqrt(DBL_EPSILON), n DBL_EPSILON) (n the eliminated DoFs) is logged at
 * FEA_LOG_WARN and sets stats.ill_conditioned: the condition number exceeds
 * 1 / sqrt(DBL_EPSILON), so the solution may have lost more than half its
 * digits, or the smallest pivot is within the rounding error n eliminations
 * accumulate; the setup succeeds (docs/multifrontal.md, "Accuracy").
 *
 * @retval FEA_ERR_OUT_OF_MEMORY (multifrontal, prehandled) before any large
 *         allocation when the exact memory estimate exceeds the limit
 * @retval FEA_ERR_NOT_POSDEF (multifrontal) naming the tree node (index,
 *         level, element box) whose front is not positive definite and the
 *         pivot's value; also (multifrontal, multipatch) when the factor is
 *         singular to working precision, pivot_ratio below DBL_EPSILON: a
 *         pivot below one rounding error of the largest is positive by
 *         chance, naming the node and both pivots;
 *         (prehandled) when a pivot of the partial Cholesky or a diagonal
 *         entry of the transformed matrix is not positive; (multigrid) when a
 *         level's diagonal or largest eigenvalue estimate is not positive
 * @retval FEA_ERR_INVALID_ARG (prehandled) when the transformed matrix does not
 *         have the block structure M1 needs; (multigrid, after
 *         fea_solver_set_problem()) for an unstable Richardson omega
 * @retval FEA_ERR_UNSUPPORTED (prehandled) for FP16 when an entry exceeds
 *         FP16's range; (multigrid, after fea_solver_set_problem()) as
 *         fea_solver_create_multigrid(); for a dense block beyond the 32-bit
 *         integers of the BLAS
 * @retval FEA_ERR_BACKEND when LAPACK rejects a factorization's arguments
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_setup(fea_solver *solver);

/**
 * @brief Solve for @p nrhs right-hand sides at once (any solver kind:
 * multigrid solves them one after another from a zero initial guess).
 *
 * @param b the reduced right-hand sides over the problem's free DoFs
 *        (column-major, num_free x nrhs, leading dimension @p ldb), as
 *        fea_problem_assemble_reference() numbers them; or NULL with
 *        @p nrhs = 1 for the problem's own load, Dirichlet lifting included
 * @param x the reduced solutions (num_free x nrhs, leading dimension @p ldx);
 *        fea_problem_expand_solution() turns one into full coefficients. x
 *        may be b (in place, ldx = ldb); other overlaps are not allowed.
 * @retval FEA_ERR_STATE before fea_solver_setup() (or after
 *         fea_solver_set_problem() without a new setup)
 * @retval FEA_WARN_NOT_CONVERGED from an iterative kind (multigrid, prehandled
 *         with refinement) whose iteration limit was reached, x holding the
 *         last iterate; multigrid also when the residual stops being finite
 * @retval FEA_ERR_INVALID_ARG for a negative @p nrhs, NULL @p b with nrhs other
 *         than 1, NULL @p x, @p b and @p x overlapping other than in place, or
 *         an entry of @p b that is not finite
 * @retval FEA_ERR_DIMENSION when @p ldb (with @p b) or @p ldx is below the
 *         number of free DoFs
 * @retval FEA_ERR_NOT_POSDEF (multigrid with krylov = 1) when CG meets
 *         p.Ap <= 0
 * @since 0.1.0
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
 * @retval FEA_ERR_STATE without keep_boundary or before setup
 * @retval FEA_ERR_DIMENSION when capacity < n and dofs or S is given
 *         (*n is set all the same)
 * @retval FEA_ERR_INVALID_ARG for a solver of another kind than multifrontal
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_get_boundary_schur(const fea_solver *solver, fea_index capacity,
                                                 fea_index *dofs, double *S, fea_index *n);

/** Facts about a solver; initialize with FEA_SOLVER_STATS_INIT. @since 0.1.0 */
typedef struct fea_solver_stats {
  size_t size;                /**< sizeof(fea_solver_stats) as compiled by the caller */
  int num_levels;             /**< tree levels (leaves are level 0, the root the last) */
  fea_index num_nodes;        /**< tree nodes */
  fea_index max_front;        /**< largest front q + r */
  double flops;               /**< factorization FLOPs (exact count, see the docs page) */
  double critical_path_flops; /**< sum over levels of the largest node's FLOPs */
  uint64_t factor_bytes;      /**< stored factors: 8 sum(q^2 + q r) */
  uint64_t
      peak_bytes; /**< peak memory of the numeric setup (the estimate checked against the limit) */
  double integrate_s; /**< element integration in the leaves, summed over threads (last setup) */
  double factor_s;    /**< the whole factorization, integration included (last setup) */
  double root_s;      /**< the root's factorization (last setup) */
  double forward_s;   /**< forward substitution (last solve) */
  double backward_s;  /**< backward substitution (last solve) */
  int threads;        /**< CPU threads the context uses */
  uint64_t
      device_bytes;  /**< device memory reserved by the last setup (GPU backends; 0 on the CPU) */
  double transfer_s; /**< host-device copies of the right-hand sides and solutions within
                          forward_s + backward_s, timed on the device (last solve; GPU backends,
                          0 on the CPU) */
  /* The accuracy report (docs/multifrontal.md, "Accuracy"). */
  /** The smallest pivot d_j = L_jj^2 of the last setup's factor, over every front; 0 before
   * setup or when nothing was eliminated. @since 0.1.0 */
  double pivot_min;
  /** The largest pivot. @since 0.1.0 */
  double pivot_max;
  /** pivot_min / pivot_max: the condition number of the system is at least 1 / pivot_ratio
   * (pivots lie between the extreme eigenvalues), the estimate CHOLMOD reports as rcond.
   * A lower bound only: the pivots of a nested-dissection order see a global near-null
   * space, a 1D Laplacian's 1/pivot_ratio grows like n where its condition number grows
   * like n^2. 0 before setup. @since 0.1.0 */
  double pivot_ratio;
  /** The tree node holding pivot_min (fea_solver_get_node()); -1 before setup. @since 0.1.0 */
  fea_index pivot_min_node;
  /** The last solve's relative residual max_j ||b_j - A x_j||_2 / ||b_j||_2 with
   * fea_solver_desc.check_residual (after its refinement step with check_residual = 2);
   * -1 when the last solve did not measure it. A stable solve leaves it near
   * DBL_EPSILON ||A|| ||x|| / ||b||, which the conditioning may make large. @since 0.1.0 */
  double relative_residual;
  /** The same solve's normwise backward error max_j ||b_j - A x_j||_inf /
   * (||A||_inf ||x_j||_inf + ||b_j||_inf): the smallest relative change of A and b that x
   * solves exactly, near DBL_EPSILON for a stable solve whatever the conditioning; above
   * sqrt(DBL_EPSILON) it is logged at FEA_LOG_WARN. -1 when not measured. @since 0.1.0 */
  double backward_error;
  /** With fea_solver_desc.estimate_condition: the last setup's estimate of cond_1(A), a
   * lower bound within a factor of about 3 in practice; -1 without. @since 0.1.0 */
  double condition_estimate;
  /** 1 when the last setup warned: pivot_ratio below max(sqrt(DBL_EPSILON), n DBL_EPSILON),
   * n the eliminated DoFs, or condition_estimate above 1 / sqrt(DBL_EPSILON)
   * (fea_solver_setup()); else 0. @since 0.1.0 */
  int ill_conditioned;
} fea_solver_stats;

/** Initializer for fea_solver_stats. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_SOLVER_STATS_INIT                                                                      \
  {                                                                                                \
    .size = sizeof(fea_solver_stats), .num_levels = 0, .num_nodes = 0, .max_front = 0, .flops = 0, \
    .critical_path_flops = 0, .factor_bytes = 0, .peak_bytes = 0, .integrate_s = 0, .factor_s = 0, \
    .root_s = 0, .forward_s = 0, .backward_s = 0, .threads = 0, .device_bytes = 0,                 \
    .transfer_s = 0, .pivot_min = 0, .pivot_max = 0, .pivot_ratio = 0, .pivot_min_node = -1,       \
    .relative_residual = -1, .backward_error = -1, .condition_estimate = -1, .ill_conditioned = 0  \
  }
#else
#define FEA_SOLVER_STATS_INIT                                                                   \
  {                                                                                             \
    sizeof(fea_solver_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, \
        -1, 0                                                                                   \
  }
#endif

/**
 * @brief Fill @p stats (whose .size the caller set); the times are 0 before setup and solve.
 * @retval FEA_ERR_INVALID_ARG for a solver of another kind than multifrontal.
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_get_stats(const fea_solver *solver, fea_solver_stats *stats);

/** One level of the tree; initialize with FEA_SOLVER_LEVEL_INIT. @since 0.1.0 */
typedef struct fea_solver_level {
  size_t size;            /**< sizeof(fea_solver_level) as compiled by the caller */
  fea_index nodes;        /**< nodes at this level */
  fea_index q_min, q_max; /**< eliminated DoFs per node */
  fea_index r_min, r_max; /**< DoFs passed up per node */
  double flops;           /**< FLOPs of the level's nodes */
  double factor_s;        /**< time to factor the level (last setup) */
} fea_solver_level;

/** Initializer for fea_solver_level. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_SOLVER_LEVEL_INIT                                                                     \
  {                                                                                               \
    .size = sizeof(fea_solver_level), .nodes = 0, .q_min = 0, .q_max = 0, .r_min = 0, .r_max = 0, \
    .flops = 0.0, .factor_s = 0.0                                                                 \
  }
#else
#define FEA_SOLVER_LEVEL_INIT \
  { sizeof(fea_solver_level), 0, 0, 0, 0, 0, 0.0, 0.0 }
#endif

/**
 * @brief Facts about level @p level (0 = leaves, num_levels - 1 = the root).
 * @retval FEA_ERR_INVALID_ARG for a solver of another kind than multifrontal, or
 *         @p level outside [0, num_levels)
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_get_level(const fea_solver *solver, int level,
                                        fea_solver_level *info);

/** One tree node; initialize with FEA_SOLVER_NODE_INIT. @since 0.1.0 */
typedef struct fea_solver_node {
  size_t size;         /**< sizeof(fea_solver_node) as compiled by the caller */
  int level;           /**< height above the leaves */
  fea_index parent;    /**< parent node, -1 at the root */
  fea_index box_lo[3]; /**< element box [box_lo, box_hi) per direction */
  fea_index box_hi[3];
  fea_index q; /**< DoFs eliminated here */
  fea_index r; /**< DoFs passed up */
} fea_solver_node;

/** Initializer for fea_solver_node. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_SOLVER_NODE_INIT                                                       \
  {                                                                                \
    .size = sizeof(fea_solver_node), .level = 0, .parent = 0, .box_lo = {0, 0, 0}, \
    .box_hi = {0, 0, 0}, .q = 0, .r = 0                                            \
  }
#else
#define FEA_SOLVER_NODE_INIT \
  { sizeof(fea_solver_node), 0, 0, {0, 0, 0}, {0, 0, 0}, 0, 0 }
#endif

/**
 * @brief Facts about node @p node; nodes are in post-order, the root is num_nodes - 1.
 * @retval FEA_ERR_INVALID_ARG for a solver of another kind than multifrontal, or
 *         @p node outside [0, num_nodes)
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_get_node(const fea_solver *solver, fea_index node,
                                       fea_solver_node *info);

/* ------------------------------------------------------------------------ */
/* Prehandled Schur-complement solver (docs/prehandled.md)                  */
/* ------------------------------------------------------------------------ */

/** Options of the prehandled solver; initialize with FEA_PREHANDLED_DESC_INIT. @since 0.1.0 */
typedef struct fea_prehandled_desc {
  size_t size; /**< sizeof(fea_prehandled_desc) as compiled by the caller */
  /** Coarse cells per direction n0 (h0 = h n / n0); n / n0 must be a power
   * of two >= 2. 0: the n0 with the fewest dense FLOPs per right-hand side
   * (exact count; Q1 at n = 256, 512, 1024: n0 = 16, 16, 32, the paper's
   * configurations). On a triangle mesh made by fea_mesh_refine_uniform():
   * the number of macro cells, num_cells / 4^k with k >= 1 (0: the k the
   * mesh supports with the fewest dense FLOPs). */
  fea_index coarse_cells;
  fea_precision precision; /**< of the dense products: FEA_F64, FEA_F32, FEA_F16, FEA_BF16 */
  /** 1: mixed-precision iterative refinement (FP64 residuals on the nodal
   * system, corrections by M1 in the working precision) until refine_rtol,
   * or until the residual reaches FP64's rounding floor (normwise backward
   * error below 16 eps, LAPACK dsgesv's rule: below it corrections only move
   * x by rounding; FEA_SUCCESS, logged at FEA_LOG_INFO), or until two
   * corrections in a row fail to halve it (FEA_WARN_NOT_CONVERGED). */
  int refine;
  double refine_rtol;        /**< relative residual target of the refinement (default 1e-12) */
  int refine_max_iterations; /**< corrections at most (default 30) */
  /** 16-bit precisions: scale each GEMM operand column by a power of two so
   * that small loads neither underflow nor overflow (default 1; 0 exists to
   * show what it prevents). */
  int rhs_scaling;
  /** Refuse setup when its memory would exceed this; 0: the context's budget
   * (fea_context_set_memory_limit()). rlimits and cgroup limits always apply. */
  uint64_t memory_limit_bytes;
  /** FEA_F32 on /gpu/cuda: 1 runs the dense products on TF32 tensor cores
   * (inputs rounded to 10-bit mantissas, FP32 accumulation); 0 (default):
   * plain SGEMM. Ignored by the other precisions and by the CPU backends. */
  int tf32;
} fea_prehandled_desc;

/** Initializer: automatic h0, FP64, no refinement (rtol 1e-12, 30), scaling on, memory limit = physical, no TF32.
 * @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_PREHANDLED_DESC_INIT                                                                  \
  {                                                                                               \
    .size = sizeof(fea_prehandled_desc), .coarse_cells = 0, .precision = FEA_F64, .refine = 0,    \
    .refine_rtol = 1e-12, .refine_max_iterations = 30, .rhs_scaling = 1, .memory_limit_bytes = 0, \
    .tf32 = 0                                                                                     \
  }
#else
#define FEA_PREHANDLED_DESC_INIT \
  { sizeof(fea_prehandled_desc), 0, FEA_F64, 0, 1e-12, 30, 1, 0, 0 }
#endif

/**
 * @brief Create the prehandled Schur-complement solver (method M1) for a
 * Poisson @p problem on a Lagrange Q1 or P1 space of a structured square
 * mesh with n x n cells (constant sigma, n = 2^k n0), or on a P1 space of a
 * triangle mesh made by fea_mesh_refine_uniform() from macro triangles
 * (desc.coarse_cells macro cells; one block C_i per group of macro cells
 * with equal P1 stiffness up to a vertex permutation; docs/prehandled.md,
 * "Meshes of several macro cells").
 *
 * Setup transforms the nodal system to the hierarchical basis from the
 * coarse mesh h0 (S), scales it by its partial Cholesky factor (L), splits
 * the unknowns into coarse nodes C, coarse-edge nodes E and macro-cell
 * interiors I, and forms in FP64 the inverses of the (identical) macro-cell
 * blocks and of the Schur complement Pi on E; solves then need only sparse
 * O(N) transforms and dense GEMMs in the working precision.
 * @param desc options, or NULL for FEA_PREHANDLED_DESC_INIT
 * On a /gpu/cuda context the setup runs on the host (an internal
 * /cpu/threads context) and hands the working-precision matrices to the GPU;
 * every solve (transforms, M1, refinement residuals) then runs there, with
 * the right-hand sides and solutions still host arrays.
 * @retval FEA_ERR_UNSUPPORTED for another space, mesh or a variable sigma,
 *         naming what differs, an odd cell count with coarse_cells = 0 (no
 *         coarse mesh nests), a space with several components, a device
 *         backend without a device M1, a refined triangle mesh that is not
 *         uniform refinements of its macro cells (naming the cell), or several
 *         macro cells on a device backend
 * @retval FEA_ERR_INVALID_ARG for a bad option (coarse_cells negative or not
 *         leaving a fine level with n / n0 a power of two, or on a refined
 *         triangle mesh not its cell count over 4^k, k >= 1; precision,
 *         refine, refine_rtol, refine_max_iterations, rhs_scaling, tf32), or a
 *         problem whose space belongs to another context
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_create_prehandled(fea_context *ctx, fea_problem *problem,
                                                const fea_prehandled_desc *desc, fea_solver **out);

/** Facts about a prehandled solver; initialize with FEA_PREHANDLED_STATS_INIT. @since 0.1.0 */
typedef struct fea_prehandled_stats {
  size_t size;                   /**< sizeof(fea_prehandled_stats) as compiled by the caller */
  fea_index n, n0;               /**< fine, coarse cells per direction (macro triangles: r, 1) */
  fea_index num_c, num_e, num_i; /**< |C|, |E|, |I| */
  fea_index num_cells;           /**< macro cells (n0^2 for Q1, 2 n0^2 for P1 on the square) */
  fea_index block;               /**< interior nodes per macro cell (size of C_i) */
  fea_precision precision;       /**< working precision of the dense products */
  uint64_t dense_bytes;          /**< B, one C_i^-1 per group and Pi^-1 in the working precision */
  /** Dense FLOPs of one M1 solve, exactly counted (docs/prehandled.md): 2|E|^2 (Pi^-1) +
   * 4 block |I| (C^-1 twice); the B, B^T and sparse D products are not counted. */
  double flops_per_rhs;
  /** The paper's model, h0 = 2^l sqrt(h): Q1 (8 4^-l + 4 4^l) N^1.5 (12 N^1.5
   * at l = 0), P1 (18 4^-l + 2 4^l) N^1.5; 0 on macro triangles. */
  double model_flops_per_rhs;
  double setup_s;           /**< last setup (FP64 factorizations and inverses, conversion) */
  double solve_s;           /**< last solve, all of it */
  double transform_s;       /**< last solve without refinement: S, S^T, L and L^T applications */
  double dense_s;           /**< last solve without refinement: the M1 block solve */
  int refine_iterations;    /**< last solve: M1 corrections (1 without refinement) */
  double relative_residual; /**< last solve with refinement: max_j ||b_j - A x_j|| / ||b_j|| */
  uint64_t device_bytes; /**< device memory held by the set-up solver (/gpu/cuda; 0 on the CPU) */
} fea_prehandled_stats;

/** Initializer for fea_prehandled_stats. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_PREHANDLED_STATS_INIT                                                              \
  {                                                                                            \
    .size = sizeof(fea_prehandled_stats), .n = 0, .n0 = 0, .num_c = 0, .num_e = 0, .num_i = 0, \
    .num_cells = 0, .block = 0, .precision = FEA_F64, .dense_bytes = 0, .flops_per_rhs = 0.0,  \
    .model_flops_per_rhs = 0.0, .setup_s = 0.0, .solve_s = 0.0, .transform_s = 0.0,            \
    .dense_s = 0.0, .refine_iterations = 0, .relative_residual = 0.0, .device_bytes = 0        \
  }
#else
#define FEA_PREHANDLED_STATS_INIT                                                                \
  {                                                                                              \
    sizeof(fea_prehandled_stats), 0, 0, 0, 0, 0, 0, 0, FEA_F64, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, \
        0, 0.0, 0                                                                                \
  }
#endif

/**
 * @brief Fill @p stats.
 * @retval FEA_ERR_INVALID_ARG for a solver of another kind than prehandled.
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_get_prehandled_stats(const fea_solver *solver,
                                                   fea_prehandled_stats *stats);

/** The matrices whose condition number fea_solver_prehandled_condition() estimates. @since 0.1.0 */
typedef enum fea_prehandled_matrix {
  FEA_PREHANDLED_NODAL = 0,        /**< A_h, the nodal stiffness matrix */
  FEA_PREHANDLED_HIERARCHICAL = 1, /**< S^T A_h S */
  FEA_PREHANDLED_SCALED = 2,       /**< L^-1 S^T A_h S L^-T, the system M1 solves */
  FEA_PREHANDLED_MACRO_BLOCK = 3,  /**< C_i, a macro cell's interior block (max over groups) */
  FEA_PREHANDLED_SCHUR = 4         /**< Pi = E - D C^-1 D^T - B^T B on the coarse edges */
} fea_prehandled_matrix;

/**
 * @brief Spectral condition number of one of the solver's matrices by
 * Lanczos (@p steps steps with full reorthogonalization; the estimate
 * approaches kappa from below). Works before fea_solver_setup() too: it
 * assembles A_h and the partial Cholesky factor (kept for the setup);
 * MACRO_BLOCK and SCHUR form C_i and Pi in FP64 for the purpose, without the
 * O(|E|^3) inversion of the setup.
 * @param steps 2..1000; 200 resolves the extremes of these matrices to 4 digits
 * @retval FEA_ERR_INVALID_ARG for a solver of another kind than prehandled, an
 *         unknown @p which, @p steps outside 2..1000, or a matrix that is empty
 *         on this grid
 * @retval FEA_ERR_NOT_POSDEF when a pivot of the partial Cholesky or an
 *         eigenvalue estimate is not positive
 * @retval FEA_ERR_BACKEND when LAPACK fails on the Lanczos matrix
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_prehandled_condition(fea_solver *solver, fea_prehandled_matrix which,
                                                   int steps, double *kappa);

/* ------------------------------------------------------------------------ */
/* Geometric multigrid (docs/multigrid.md)                                  */
/* ------------------------------------------------------------------------ */

/** Multigrid cycle. @since 0.1.0 */
typedef enum fea_mg_cycle {
  FEA_MG_CYCLE_V = 0, /**< one coarse-grid correction per level */
  FEA_MG_CYCLE_W = 1  /**< two coarse-grid corrections per level */
} fea_mg_cycle;

/** Multigrid smoother. @since 0.1.0 */
typedef enum fea_mg_smoother {
  /** x += omega M^-1 (b - A x), M = I (the paper's) or diag(A) with jacobi = 1 */
  FEA_MG_SMOOTHER_RICHARDSON = 0,
  /** Chebyshev polynomial in D^-1 A on [lambda_max / range, 1.1 lambda_max],
   * lambda_max of D^-1 A estimated by Lanczos at setup; D = diag(A), or on a space with
   * components (elasticity) the node-block diagonal (each node's ncomp x ncomp block) */
  FEA_MG_SMOOTHER_CHEBYSHEV = 1,
  /** B-spline and NURBS spaces: Chebyshev polynomial in M^-1 A, M^-1 the additive
   * Schwarz preconditioner over overlapping boxes of (p + 1)^d coefficients (dense
   * inverses of the level operators' blocks: Kronecker or CSR levels), lambda_max of M^-1 A
   * from CG-Lanczos; iteration counts that do not grow with p (docs/multigrid.md,
   * "B-spline multigrid"). @since 0.1.0 */
  FEA_MG_SMOOTHER_SCHWARZ = 2
} fea_mg_smoother;

/** Options of the multigrid solver; initialize with FEA_MULTIGRID_DESC_INIT (the
 * fastest configuration measured) or FEA_MULTIGRID_DESC_PAPER (the paper's). @since 0.1.0 */
typedef struct fea_multigrid_desc {
  size_t size;              /**< sizeof(fea_multigrid_desc) as compiled by the caller */
  fea_mg_cycle cycle;       /**< default V */
  fea_mg_smoother smoother; /**< default CHEBYSHEV (the paper's: RICHARDSON) */
  double omega;             /**< Richardson damping (default 0.3; Chebyshev ignores it) */
  /** Richardson: 1 scales the residual by diag(A)^-1 (default 0). Chebyshev on a space with
   * components: 1 uses the point diagonal diag(A) instead of the node blocks (default 0) */
  int jacobi;
  /** Smoothing steps (Chebyshev: degree) before the correction (default 3, the paper's 4) */
  int pre_smooth;
  int post_smooth;        /**< after it (default 3, the paper's 4) */
  double chebyshev_range; /**< lambda_max / lambda_min of the smoothed interval (default 15) */
  /** Level operators (default MATFREE_SUMFACT, the paper's CSR). Sum factorization is a rule
   * per level rather than one kernel: the matrix-free Q1 stencil on box levels with
   * constant sigma and Dirichlet data on the whole boundary, sum factorization on Q_p and
   * mapped levels, element matrices where it does not apply (simplices);
   * fea_multigrid_stats.operator_kind and stencil_levels say what ran. */
  fea_operator_kind operator_kind;
  fea_update_strategy strategy; /**< their scatter strategy when matrix-free (default AUTO) */
  /** 0: multigrid iteration (the paper's); 1 (default): CG preconditioned by one
   * (symmetric) cycle */
  int krylov;
  double rtol;              /**< stop when ||b - A x|| <= max(rtol ||b||, atol) (default 1e-10) */
  double atol;              /**< (default 0) */
  fea_index max_iterations; /**< cycles or CG iterations per right-hand side (default 100) */
  /** Coarsen (halving the cells per direction) while every direction keeps
   * at least this many cells and an even count; the coarsest level is solved
   * by dense Cholesky when it has free DoFs (default 1: the one-element mesh
   * of the paper, no coarse solve with Dirichlet data on the whole boundary). */
  fea_index coarsest_cells;
} fea_multigrid_desc;

/**
 * Initializer: the fastest correct configuration measured (docs/multigrid.md,
 * "Default configuration"): CG preconditioned by one V-cycle with 3 + 3
 * Chebyshev-Jacobi steps, on MATFREE_SUMFACT levels (the matrix-free Q1 stencil
 * where it applies, sum factorization on Q_p levels), to rtol 1e-10. Of the paper's
 * configuration and Chebyshev(2..4)-PCG on each operator kind it was the fastest in all
 * four cases measured (one thread, 2-core AMD EPYC VM, 2026-11-28; setup + solve, each
 * row from one run): 2D Q1 1.05M DoFs 0.37 s (the paper's 1.13 s, best CSR 1.04 s);
 * 2D Q2 1.05M 1.54 s (best CSR 3.76 s); 3D Q1 1.09M 0.80 s (best CSR 1.96 s); 3D Q2
 * 1.09M 3.78 s (best CSR 10.7 s). Degrees 2 and 4 on the same levels took 4-20 % more,
 * element-matrix levels 2.3-10x.
 * @since 0.1.0
 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_MULTIGRID_DESC_INIT                                                                  \
  {                                                                                              \
    .size = sizeof(fea_multigrid_desc), .cycle = FEA_MG_CYCLE_V,                                 \
    .smoother = FEA_MG_SMOOTHER_CHEBYSHEV, .omega = 0.3, .jacobi = 0, .pre_smooth = 3,           \
    .post_smooth = 3, .chebyshev_range = 15.0, .operator_kind = FEA_OPERATOR_MATFREE_SUMFACT,    \
    .strategy = FEA_UPDATE_AUTO, .krylov = 1, .rtol = 1e-10, .atol = 0.0, .max_iterations = 100, \
    .coarsest_cells = 1                                                                          \
  }
#else
#define FEA_MULTIGRID_DESC_INIT                                                                \
  {                                                                                            \
    sizeof(fea_multigrid_desc), FEA_MG_CYCLE_V, FEA_MG_SMOOTHER_CHEBYSHEV, 0.3, 0, 3, 3, 15.0, \
        FEA_OPERATOR_MATFREE_SUMFACT, FEA_UPDATE_AUTO, 1, 1e-10, 0.0, 100, 1                   \
  }
#endif

/**
 * Preset: Ruda et al.'s V(4,4) Richardson omega = 0.3 on CSR levels (the prehandled
 * solver's paper, 2022, §5: V-cycle iteration, 4 + 4 unscaled Richardson steps, coarsest
 * mesh one element), the default before issue #40. For reproducing the paper: it suits
 * 2D Q1 only (refused as unstable on P1 and 2D Q_p levels; h-dependent in 3D, where it did
 * not converge in 30 cycles at 1M DoFs); in 2D Q1 it took 3x the default's time.
 * @since 0.1.0
 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_MULTIGRID_DESC_PAPER                                                                 \
  {                                                                                              \
    .size = sizeof(fea_multigrid_desc), .cycle = FEA_MG_CYCLE_V,                                 \
    .smoother = FEA_MG_SMOOTHER_RICHARDSON, .omega = 0.3, .jacobi = 0, .pre_smooth = 4,          \
    .post_smooth = 4, .chebyshev_range = 15.0, .operator_kind = FEA_OPERATOR_CSR,                \
    .strategy = FEA_UPDATE_AUTO, .krylov = 0, .rtol = 1e-10, .atol = 0.0, .max_iterations = 100, \
    .coarsest_cells = 1                                                                          \
  }
#else
#define FEA_MULTIGRID_DESC_PAPER                                                                \
  {                                                                                             \
    sizeof(fea_multigrid_desc), FEA_MG_CYCLE_V, FEA_MG_SMOOTHER_RICHARDSON, 0.3, 0, 4, 4, 15.0, \
        FEA_OPERATOR_CSR, FEA_UPDATE_AUTO, 0, 1e-10, 0.0, 100, 1                                \
  }
#endif

/**
 * @brief Create a geometric multigrid solver for a Poisson @p problem on a
 * Lagrange space of a structured mesh (2D or 3D): Q1..Q6 on quadrilaterals or
 * hexahedra, P1 on triangles or Kuhn tetrahedra; or for a linear elasticity
 * problem (fea_problem_create_elasticity()) on such a space with components.
 *
 * Elasticity: every level is the elasticity problem (same material, loads and
 * fixed components per side) on its mesh, the transfers are the scalar ones
 * applied to each component, and Chebyshev smooths with node-block Jacobi
 * (jacobi = 1: point Jacobi) on host backends (docs/multigrid.md "Elasticity").
 *
 * The coarse levels are the structured meshes with half the cells per
 * direction (each nested in the next), with the problem rediscretized on
 * them; prolongation is the coarse space's interpolation at the fine nodes
 * and restriction its transpose. A Q_p problem (p > 1) first goes to Q1 on
 * the same mesh (p-multigrid); smooth it with Chebyshev (unscaled Richardson
 * is unstable on Q_p levels and refused).
 *
 * On a single-patch B-spline or NURBS space (2D or 3D) the levels halve the
 * knot spans (every other breakpoint dropped, while each direction keeps an
 * even element count, at least coarsest_cells elements and the geometry's
 * breakpoints), prolongation is knot insertion (exact: the spaces are nested;
 * applied as a Kronecker product of 1D matrices) and every level is the problem
 * on its own space over the same geometry, by default the matrix-free Kronecker
 * operator (box, or separable maps such as the NURBS annulus and ring). The
 * default Chebyshev-Jacobi was the fastest measured; its iteration counts grow
 * with the degree (22 against 6 at 2D p = 5), smoother = FEA_MG_SMOOTHER_SCHWARZ
 * keeps them flat at a higher cost per step (docs/multigrid.md "B-spline
 * multigrid").
 * @param desc options, or NULL for FEA_MULTIGRID_DESC_INIT
 * The hierarchy is built here (and again by fea_solver_setup() after
 * fea_solver_set_problem()), so the checks that need it happen here too.
 * On a device backend (/gpu/cuda) the levels' operators, transfers and
 * smoothers run on the device; the hierarchy and the coarse solve on the host.
 * @retval FEA_ERR_UNSUPPORTED for another space or mesh (P2, unstructured
 *         meshes, 1D), naming it, the Schwarz smoother on a Lagrange space
 *         or a device backend, a
 *         coarsest level too large for the dense coarse solve, a B-spline space
 *         with several components (fea_space_set_num_components()), or a backend
 *         that keeps vectors on a device and has no multigrid kernels
 * @retval FEA_ERR_NOT_POSDEF when a level's diagonal, a node block, or largest
 *         eigenvalue estimate is not positive (definite)
 * @retval FEA_ERR_INVALID_ARG for a problem without free DoFs or whose space
 *         belongs to another context, or a bad option: an unknown cycle,
 *         smoother, operator_kind or strategy, another field out of its
 *         range, an unstable Richardson omega (omega lambda_max >= 2 on some
 *         level; the paper's unscaled 0.3 suits 2D Q1, for P1 use
 *         omega <= 0.25, jacobi = 1 or Chebyshev), or krylov = 1 with
 *         pre_smooth != post_smooth (CG needs a symmetric cycle).
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_create_multigrid(fea_context *ctx, fea_problem *problem,
                                               const fea_multigrid_desc *desc, fea_solver **out);

/** Facts about a multigrid solver; initialize with FEA_MULTIGRID_STATS_INIT. @since 0.1.0 */
typedef struct fea_multigrid_stats {
  size_t size;           /**< sizeof(fea_multigrid_stats) as compiled by the caller */
  int num_levels;        /**< levels, the finest included */
  fea_index fine_dofs;   /**< free DoFs of the finest level */
  fea_index coarse_dofs; /**< free DoFs of the coarsest level (0: no coarse solve) */
  fea_index
      iterations; /**< last solve: cycles or CG iterations, the most over its right-hand sides */
  int converged;  /**< last solve: every right-hand side met the tolerance */
  double initial_residual;   /**< last solve, last right-hand side: ||b - A x0|| */
  double final_residual;     /**< and at the end */
  double convergence_factor; /**< (final / initial)^(1 / iterations), last right-hand side */
  double lambda_max;     /**< finest level: the smoothed operator's largest eigenvalue (estimate) */
  double setup_s;        /**< last setup: operators, transfers, estimates, coarse factor */
  double solve_s;        /**< last solve */
  uint64_t memory_bytes; /**< operators, transfers and work vectors of all levels */
  /* What ran (after setup), for a caller who took the defaults. */
  fea_mg_smoother smoother; /**< the descriptor's smoother @since 0.1.0 */
  int pre_smooth;           /**< its steps (Chebyshev: degree) before the correction @since 0.1.0 */
  int post_smooth;          /**< and after it @since 0.1.0 */
  int krylov;               /**< 1: CG preconditioned by one cycle; 0: cycles @since 0.1.0 */
  /** The finest level's operator kind as it runs: FEA_OPERATOR_MATFREE_SUMFACT
   * for the matrix-free stencil, ELEMENT_MATRIX where sum factorization fell
   * back (simplices), as fea_operator_get_info()'s kind_run. @since 0.1.0 */
  fea_operator_kind operator_kind;
  /** Levels whose operator comes from the constant Q1 stencil (the matrix-free
   * sweep with MATFREE_SUMFACT, a CSR matrix written from it with CSR). @since 0.1.0 */
  int stencil_levels;
} fea_multigrid_stats;

/** Initializer for fea_multigrid_stats. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_MULTIGRID_STATS_INIT                                                                  \
  {                                                                                               \
    .size = sizeof(fea_multigrid_stats), .num_levels = 0, .fine_dofs = 0, .coarse_dofs = 0,       \
    .iterations = 0, .converged = 0, .initial_residual = 0.0, .final_residual = 0.0,              \
    .convergence_factor = 0.0, .lambda_max = 0.0, .setup_s = 0.0, .solve_s = 0.0,                 \
    .memory_bytes = 0, .smoother = FEA_MG_SMOOTHER_RICHARDSON, .pre_smooth = 0, .post_smooth = 0, \
    .krylov = 0, .operator_kind = FEA_OPERATOR_CSR, .stencil_levels = 0                           \
  }
#else
#define FEA_MULTIGRID_STATS_INIT                                                 \
  {                                                                              \
    sizeof(fea_multigrid_stats), 0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, \
        FEA_MG_SMOOTHER_RICHARDSON, 0, 0, 0, FEA_OPERATOR_CSR, 0                 \
  }
#endif

/**
 * @brief Fill @p stats.
 * @retval FEA_ERR_INVALID_ARG for a solver of another kind than multigrid.
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_get_multigrid_stats(const fea_solver *solver,
                                                  fea_multigrid_stats *stats);

/**
 * @brief Destroy a solver. Accepts NULL; sets `*solver = NULL`.
 * Not marked warn-unused-result: it is called on cleanup paths.
 * @retval FEA_SUCCESS always; it cannot fail.
 * @since 0.1.0
 */
FEA_EXPORT fea_status fea_solver_destroy(fea_solver **solver);

FEA_END_DECLS

#endif /* FEACCEL_SOLVER_H */
