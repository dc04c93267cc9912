/**
 * @file cost.h
 * @brief A-priori cost model of the IGA multifrontal direct solver.
 *
 * Before a problem is set up, these functions say what the multifrontal
 * solver (fea_solver_create_multifrontal) will cost on an open uniform
 * B-spline space of degree p and n elements per direction, with Dirichlet
 * conditions on the whole boundary or on the sides the query names (the
 * others Neumann or Robin). The factorization does not depend on the
 * geometry map or the equation's terms (c u, sigma(x), A(x)): a mapped or
 * NURBS patch with them factors exactly as the unit box (tested):
 *
 * - fea_cost_model_exact() builds the space and the solver's symbolic
 *   elimination tree (no element integration, no numeric work) and sums the
 *   exact per-node counts: the FLOPs and factor bytes the solver's
 *   fea_solver_get_stats() reports after a setup of the same problem, and the
 *   critical path of a level-synchronous schedule on nproc processors.
 * - fea_cost_model_paper() evaluates the closed forms of Woźniak et al.
 *   (eqs. 22–27 of "Computational cost estimates for parallel shared memory
 *   isogeometric multi-frontal solvers", 2014) with unit constants: only their
 *   ratios and exponents mean something.
 *
 * See docs/multifrontal.md for the tree, the formulas and measured figures.
 *
 * @par Errors common to this header
 * Every function here returns FEA_SUCCESS when it did its job, and
 * FEA_ERR_INVALID_ARG when the context, the query or an output it must
 * write is NULL, or for a query whose .size is outside the accepted sizes or
 * whose fields are out of range (dim 1..3, p 1..8, n >= 1, nproc >= 0),
 * naming the field. The other codes are listed under each function.
 */
#ifndef FEACCEL_COST_H
#define FEACCEL_COST_H

#include <stddef.h>
#include <stdint.h>

#include <feaccel/export.h>
#include <feaccel/problem.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** What to estimate; initialize with FEA_COST_QUERY_INIT. @since 0.1.0 */
typedef struct fea_cost_query {
  size_t size; /**< sizeof(fea_cost_query) as compiled by the caller */
  int dim;     /**< 1, 2 or 3 */
  int p;       /**< B-spline degree, the same in every direction, 1..8 */
  fea_index n; /**< elements per direction, >= 1 */
  int nproc;   /**< processors for the critical path, >= 1; 0: unlimited (eq. 24) */
  /** The condition per side (fea_patch_side), 2 dim entries, or NULL: all Dirichlet (default).
   * A Neumann or Robin side keeps its DoFs (those on no Dirichlet side) as unknowns, so the tree
   * grows; a geometry map, c u, sigma(x) or A(x) change the elements, not the tree, and the
   * counts are those of the box (exact model only: the paper's ignores this field). */
  const fea_bc_type *sides;
  /* Appended after 0.1.0 (callers built before see one component): */
  /** Components per B-spline function (a system of N_eq equations, 1..8; default 1), every
   * component with the same condition per side, as an elasticity problem with clamped sides
   * (fea_problem_create_elasticity()) or any problem on a vector space
   * (fea_space_set_num_components()). The solver's tree is the scalar one with fronts N_eq times
   * larger; the paper's model scales its q and r by N_eq likewise (the p~ = p N_eq of systems). */
  int num_components;
} fea_cost_query;

/** Initializer: 2D, p = 1, one element, unlimited processors, all sides Dirichlet, one
 * component. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_COST_QUERY_INIT                                                              \
  {                                                                                      \
    .size = sizeof(fea_cost_query), .dim = 2, .p = 1, .n = 1, .nproc = 0, .sides = NULL, \
    .num_components = 1                                                                  \
  }
#else
#define FEA_COST_QUERY_INIT \
  { sizeof(fea_cost_query), 2, 1, 1, 0, NULL, 1 }
#endif

/** The estimate; initialize with FEA_COST_INIT (the callee fills the fields
 * the caller's .size covers).
 * @since 0.1.0 */
typedef struct fea_cost {
  size_t size;  /**< sizeof(fea_cost) as compiled by the caller */
  double flops; /**< sequential FLOPs of the factorization (eq. 22) */
  double
      critical_path_flops; /**< FLOPs per processor on the critical path (eq. 23, or 24 when nproc = 0) */
  double memory_bytes;  /**< bytes of the stored factors */
  int num_levels;       /**< levels of the elimination tree, the root included */
  fea_index root_front; /**< order of the root's front (all of it is eliminated there) */
} fea_cost;

/** Initializer for fea_cost. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_COST_INIT                                                                        \
  {                                                                                          \
    .size = sizeof(fea_cost), .flops = 0.0, .critical_path_flops = 0.0, .memory_bytes = 0.0, \
    .num_levels = 0, .root_front = 0                                                         \
  }
#else
#define FEA_COST_INIT \
  { sizeof(fea_cost), 0.0, 0.0, 0.0, 0, 0 }
#endif

/**
 * @brief Exact counts from the solver's symbolic tree.
 *
 * Builds the B-spline space and the elimination tree on the host of @p ctx,
 * with the solver's default options (the tree of fea_solver_desc's defaults),
 * and sums per node: flops and factor bytes, the figures the solver's stats
 * report after a setup of the same problem.
 *
 * Critical path (eq. 23 of the paper with the exact q, r of every node): the
 * tree is processed level by level with a barrier in between. A level of m
 * nodes on P = nproc processors runs in ceil(m / P) rounds of at most P nodes
 * (the costliest nodes together, so each round costs its costliest node), and
 * each node of the level gets Ñ = max(1, floor(P / m)) processors. A node
 * with q eliminated and r passed-up unknowns costs
 * F(q, 0) / min(Ñ, q) + (F(q, r) − F(q, 0)) / min(Ñ, r), where F is the
 * node's exact FLOP count and F(q, 0) its dense factorization of the q × q
 * block: the factorization is split over its q rows and the triangular
 * solve and Schur update over the r rows, as in eq. 23. nproc = 0 takes
 * Ñ = ∞ and one round per level: eq. 24. nproc = 1 gives the sequential flops.
 *
 * Time and memory grow like the problem: 2D p = 3 with n = 1024 takes about a
 * second. Nothing numeric is allocated.
 *
 * @retval FEA_ERR_INVALID_ARG naming the bad field (dim 1..3, p 1..8, n >= 1,
 *         nproc >= 0, size), or an `out->size` outside the accepted sizes
 * @retval FEA_ERR_OUT_OF_MEMORY when the space or the tree does not fit the
 *         context's memory budget (checked before either is built)
 * @retval FEA_ERR_UNSUPPORTED when a front exceeds the solver's 32-bit front
 *         positions
 * @since 0.1.0
 */
FEA_API fea_status fea_cost_model_exact(fea_context *ctx, const fea_cost_query *q, fea_cost *out);

/**
 * @brief The paper's closed forms (eqs. 25–27), with unit constants.
 *
 * The tree has s levels below the root, with N_p = 2^s patches per direction:
 * s is the smallest integer with 2^s >= ceil(n / (p + 1)), the depth of a tree
 * of pairwise merges over leaf patches of p + 1 elements. Level i (0..s−1) has
 * N_p(i) = 2^(d(s−i)) patches of the paper's Table 1 sizes with unit
 * constants, q(0) = 1, r(0) = p^d, q(i) = r(i) = 2^((d−1)i) p^d, and a patch
 * costs the larger of the terms of eq. (20): max(q³, q r²) FLOPs and
 * max(q², q r) entries. Summed over the levels this is exactly the printed
 * eqs. (25)–(27), e.g. 2D flops = 2^(2s) p⁴ + Σ_{i=1}^{s−1} 2^(2(s−i)) 2^(3i) p⁶,
 * except the 3D leaf term of the critical path and memory, which the paper
 * misprints as p⁴ and this function gives as p³ (docs/multifrontal.md; lower
 * order). The root is not counted, as in the paper.
 *
 * critical_path_flops is eq. (23) with these sizes for nproc processors:
 * Σ_i N_p(i) / min(N_p(i), P) · max(q³ / min(Ñ, q), q r² / min(Ñ, r)),
 * Ñ = max(1, P / N_p(i)); for nproc = 0 it is the MFPC of eqs. (25)–(27).
 * memory_bytes counts 8 bytes per entry. num_levels is s + 1 (the root
 * included) and root_front the Table 1 size at level s, 2^((d−1)s) p^d.
 *
 * @retval FEA_ERR_INVALID_ARG naming the bad field, or an `out->size`
 *         outside the accepted sizes
 * @since 0.1.0
 */
FEA_API fea_status fea_cost_model_paper(const fea_cost_query *q, fea_cost *out);

/**
 * @brief Whether the solver's setup of the query's problem fits in @p bytes.
 *
 * Sets *fits to 1 when the exact peak memory of the setup (the stored factors
 * plus the largest set of live Schur complements and fronts, the figure
 * fea_solver_setup() compares with the available memory before it allocates)
 * is at most @p bytes, else 0. The query's nproc is not used.
 *
 * A lower bound of that peak comes first, from the knot vectors alone (the
 * tree's boxes walked parents first, counting the interior DoFs: no
 * O(DoF) memory, and a walk that stops once it passes @p bytes): when it
 * exceeds @p bytes the answer is 0 at once. Only otherwise is the exact
 * tree built, after its own memory is checked against the context's budget.
 * @retval FEA_ERR_INVALID_ARG naming the bad field of @p q, or a NULL @p fits
 * @retval FEA_ERR_OUT_OF_MEMORY when the exact tree, needed because the bound
 *         fits, does not fit the context's memory budget
 * @retval FEA_ERR_UNSUPPORTED when a front exceeds the solver's 32-bit front
 *         positions
 * @since 0.1.0
 */
FEA_API fea_status fea_cost_model_fits(fea_context *ctx, const fea_cost_query *q, uint64_t bytes,
                                       int *fits);

/**
 * @brief The paper's 3D memory estimate (Section 7.3): 8 · 2 · p² · N^(4/3) bytes.
 *
 * The order of the root's dense problem, 8 bytes per entry for L and U: about
 * 5.5e9 (5.71e9) bytes for N = 5e5 unknowns and p = 3.
 * @param p 1..8; @param N unknowns, finite and >= 1
 * @retval FEA_ERR_INVALID_ARG for @p p outside 1..8, @p N not finite or
 *         below 1, or a NULL @p bytes
 * @since 0.1.0
 */
FEA_API fea_status fea_cost_memory_3d_paper(int p, double N, double *bytes);

/**
 * @brief Theoretical strong scaling of the paper's Figs. 9–11.
 *
 * T_P = fea_cost_model_paper()'s critical path on P = q->nproc processors
 * (eq. 23), T_1 the same on one: the speedup S = T_1 / T_P and the efficiency
 * E = T_1 / (P T_P). The paper draws them for 1D, n = 2048 elements, p = 1..4.
 * @param q a query with nproc >= 1
 * @param speedup, efficiency outputs; either may be NULL
 * @retval FEA_ERR_INVALID_ARG naming the bad field of @p q, including an
 *         nproc below 1
 * @since 0.1.0
 */
FEA_API fea_status fea_cost_strong_scaling_paper(const fea_cost_query *q, double *speedup,
                                                 double *efficiency);

FEA_END_DECLS

#endif /* FEACCEL_COST_H */
