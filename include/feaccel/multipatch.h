/**
 * @file multipatch.h
 * @brief Multipatch domains: several B-spline or NURBS patches joined C0 across conforming
 *        interfaces, their Poisson problem and its direct solver (docs/multipatch.md).
 *
 * A multipatch domain is a list of B-spline spaces (fea_space_create_bspline(), each on its own
 * patch: a box or a geometry map) of one dimension and one context. Two patch sides form an
 * interface when they are the same curve or surface with the same parametrization: their
 * corners coincide and so does every DoF's anchor (its Greville point mapped to physical
 * space), in either orientation. The interfaces are found from the geometry; sides whose
 * corners coincide but whose DoFs do not (other knots, another degree) are refused, naming both
 * sides. DoFs that coincide across an interface become one global DoF (C0 coupling); global
 * DoFs are numbered patch by patch, each DoF at its first appearance. The sides that are on no
 * interface are the domain's boundary sides.
 *
 * Patches may be vector-valued (fea_space_set_num_components(), the same count on every
 * patch): the interfaces are found on the basis functions as above, and a global function's
 * components are global DoFs c + ncomp G (interleaved, as a space numbers them), so an
 * interface glues a function's components together; every count of DoFs below counts
 * components.
 *
 * The direct solver eliminates each patch's interior by its own multifrontal tree (the
 * context's backend, as fea_solver_create_multifrontal()), keeps every patch's boundary, forms
 * the interface system from the patches' boundary Schur complements, factors it, and recovers
 * the interiors by back-substitution. Right-hand sides and solutions are over the problem's free
 * global DoFs (fea_multipatch_problem_get_num_free_dofs()); fea_solver_setup(),
 * fea_solver_solve() and fea_solver_destroy() work on it as on any solver.
 *
 * @par Errors common to this header
 * Every function returning fea_status returns FEA_ERR_INVALID_ARG for a NULL handle or output
 * pointer, and FEA_ERR_OUT_OF_MEMORY when an allocation fails.
 */
#ifndef FEACCEL_MULTIPATCH_H
#define FEACCEL_MULTIPATCH_H

#include <stddef.h>
#include <stdint.h>

#include <feaccel/context.h>
#include <feaccel/export.h>
#include <feaccel/matrix.h>
#include <feaccel/problem.h>
#include <feaccel/solver.h>
#include <feaccel/space.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** Opaque multipatch domain. @since 0.1.0 */
typedef struct fea_multipatch fea_multipatch;

/** Options of a multipatch domain; initialize with FEA_MULTIPATCH_DESC_INIT. @since 0.1.0 */
typedef struct fea_multipatch_desc {
  size_t size; /**< sizeof(fea_multipatch_desc) as compiled by the caller */
  /** Points closer than tolerance x the domain's diameter coincide; 0: 1e-9. Two patches'
   * sides that miss by more, but by less than 1e-3 of the patches' shortest edge, stay boundary
   * and are logged at FEA_LOG_WARN naming both and the distance. */
  double tolerance;
} fea_multipatch_desc;

/** Initializer: the default tolerance. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_MULTIPATCH_DESC_INIT \
  { .size = sizeof(fea_multipatch_desc), .tolerance = 0.0 }
#else
#define FEA_MULTIPATCH_DESC_INIT \
  { sizeof(fea_multipatch_desc), 0.0 }
#endif

/**
 * @brief Join @p num_patches B-spline spaces into one domain, finding the interfaces.
 *
 * The domain holds a reference on every space.
 * @param patches num_patches B-spline spaces of one dimension (2 or 3) and of context @p ctx
 * @param desc options, or NULL for the defaults
 * @retval FEA_ERR_INVALID_ARG for num_patches < 1, a NULL entry of @p patches, a space of another
 *         context or dimension or with another number of components than patches[0], a tolerance outside [0, 0.1), one space listed twice, two
 *         patches that cover the same region (corners, centre and interior points coinciding
 *         whatever the parametrization; naming both: their sides would all be interfaces and
 *         the domain would have no boundary), two sides whose corners coincide but whose DoFs
 *         do not (naming both and the first DoF that differs), or a side that would meet two
 *         others (naming the three patches)
 * @retval FEA_ERR_UNSUPPORTED for a space that is not a B-spline space, or a 1D space
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_create(fea_context *ctx, int num_patches,
                                         fea_space *const *patches, const fea_multipatch_desc *desc,
                                         fea_multipatch **out);

/** @brief Destroy a domain (accepts NULL; sets `*mp = NULL`). @since 0.1.0 */
FEA_EXPORT fea_status fea_multipatch_destroy(fea_multipatch **mp);

/** Facts about a domain; initialize with FEA_MULTIPATCH_INFO_INIT. @since 0.1.0 */
typedef struct fea_multipatch_info {
  size_t size;            /**< sizeof(fea_multipatch_info) as compiled by the caller */
  int dim;                /**< 2 or 3 */
  int num_patches;        /**< patches */
  int num_interfaces;     /**< pairs of sides joined */
  int num_boundary_sides; /**< sides on no interface */
  fea_index num_dofs;     /**< global DoFs (patch DoFs joined across the interfaces; functions
                               times components) */
} fea_multipatch_info;

/** Initializer for fea_multipatch_info. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_MULTIPATCH_INFO_INIT                                                          \
  {                                                                                       \
    .size = sizeof(fea_multipatch_info), .dim = 0, .num_patches = 0, .num_interfaces = 0, \
    .num_boundary_sides = 0, .num_dofs = 0                                                \
  }
#else
#define FEA_MULTIPATCH_INFO_INIT \
  { sizeof(fea_multipatch_info), 0, 0, 0, 0, 0 }
#endif

/**
 * @brief Fill @p info (whose .size the caller set).
 * @retval FEA_ERR_INVALID_ARG for a .size outside the accepted sizes
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_get_info(const fea_multipatch *mp, fea_multipatch_info *info);

/** One interface; initialize with FEA_MULTIPATCH_INTERFACE_INIT. @since 0.1.0 */
typedef struct fea_multipatch_interface {
  size_t size;            /**< sizeof(fea_multipatch_interface) as compiled by the caller */
  int patch[2];           /**< the two patches (patch[0] <= patch[1]) */
  fea_patch_side side[2]; /**< their sides */
  int flip[2];            /**< 1 where the second side runs against the first along the first's
                               tangential direction 0 or 1 (in order of the patch's directions) */
  int swap;               /**< 3D: 1 when the first's tangential directions are the second's in
                               the other order */
  fea_index num_dofs;     /**< DoFs on the shared side (functions times components) */
} fea_multipatch_interface;

/** Initializer for fea_multipatch_interface. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_MULTIPATCH_INTERFACE_INIT                                                \
  {                                                                                  \
    .size = sizeof(fea_multipatch_interface), .patch = {0, 0},                       \
    .side = {FEA_SIDE_WEST, FEA_SIDE_WEST}, .flip = {0, 0}, .swap = 0, .num_dofs = 0 \
  }
#else
#define FEA_MULTIPATCH_INTERFACE_INIT \
  { sizeof(fea_multipatch_interface), {0, 0}, {FEA_SIDE_WEST, FEA_SIDE_WEST}, {0, 0}, 0, 0 }
#endif

/**
 * @brief Interface @p index (0-based; ordered by the first patch, then its side).
 * @retval FEA_ERR_INVALID_ARG for @p index outside [0, num_interfaces) or a .size outside the
 *         accepted sizes
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_get_interface(const fea_multipatch *mp, int index,
                                                fea_multipatch_interface *info);

/**
 * @brief Boundary side @p index (0-based; ordered by patch, then side): its patch and side.
 * @retval FEA_ERR_INVALID_ARG for @p index outside [0, num_boundary_sides)
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_get_boundary_side(const fea_multipatch *mp, int index, int *patch,
                                                    fea_patch_side *side);

/**
 * @brief The global DoF of each DoF of patch @p patch, in the patch space's numbering
 *        (vector patches: DoF c + ncomp i of the patch is global c + ncomp G).
 * @param capacity entries @p global has room for (at least the patch's DoFs)
 * @retval FEA_ERR_INVALID_ARG for @p patch outside [0, num_patches)
 * @retval FEA_ERR_DIMENSION when @p capacity is below the patch's DoFs
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_get_patch_dofs(const fea_multipatch *mp, int patch,
                                                 fea_index capacity, fea_index *global);

/** Opaque Poisson problem on a multipatch domain. @since 0.1.0 */
typedef struct fea_multipatch_problem fea_multipatch_problem;

/** The condition on one boundary side of a multipatch domain. @since 0.1.0 */
typedef struct fea_multipatch_bc {
  int patch;                 /**< the patch */
  fea_patch_side side;       /**< its side: one of the domain's boundary sides */
  fea_boundary_condition bc; /**< what holds there */
} fea_multipatch_bc;

/**
 * @brief The Poisson problem of @p desc on every patch of @p mp.
 *
 * sigma, the tensor, c, f and g are functions of the physical point, so one descriptor serves
 * every patch; an element form, if given, is called per patch with that patch's elements. The
 * boundary sides take the conditions of @p bcs; a boundary side not listed is Dirichlet. A
 * global DoF on any Dirichlet side is fixed to the interpolant of g. The problem holds a
 * reference on the domain.
 * @param desc the equation; its sides and parts must keep their defaults (conditions come from
 *        @p bcs)
 * @param num_bcs entries of @p bcs (>= 0)
 * @param bcs conditions per boundary side, or NULL when num_bcs = 0
 * @retval FEA_ERR_INVALID_ARG for a domain of vector-valued patches, what
 *         fea_problem_create_poisson() refuses in the coefficients, a desc whose sides or parts are not the defaults, a negative num_bcs,
 *         an entry naming a patch out of range, a side that is not a boundary side of the
 *         domain (an interface, or beyond the dimension), a side listed twice, a bad condition
 *         (type, Robin alpha), or no Dirichlet or Robin side with c = 0 (u determined up to a
 *         constant only; not checked with an element form, which may hold its own mass term: a
 *         singular system is then FEA_ERR_NOT_POSDEF from the solver's setup)
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_problem_create_poisson(fea_multipatch *mp,
                                                         const fea_problem_desc *desc, int num_bcs,
                                                         const fea_multipatch_bc *bcs,
                                                         fea_multipatch_problem **out);

/** The condition on one boundary side of a multipatch elasticity problem. @since 0.1.0 */
typedef struct fea_multipatch_elastic_bc {
  int patch;                /**< the patch */
  fea_patch_side side;      /**< its side: one of the domain's boundary sides */
  fea_elastic_condition bc; /**< what holds there (a roller fixes one component) */
} fea_multipatch_elastic_bc;

/**
 * @brief The linear elasticity problem of @p desc on every patch of @p mp
 *        (fea_problem_create_elasticity(), patch by patch, coupled C0 across the interfaces).
 *
 * The patches must have dim components (the displacement). The body force, the prescribed
 * displacement g, the model and the rule come from @p desc for every patch; the material too,
 * unless @p materials gives a patch its own (E, nu, E_fn, nu_fn, material_user, lambda, mu of
 * materials[p]; its other fields are ignored). The boundary sides take the conditions of
 * @p bcs; a boundary side not listed is clamped (u = g on every component). The interface
 * sides carry no condition. The fixed DoFs of the whole domain must remove every rigid-body
 * mode (a single patch need not be held). The problem holds a reference on the domain.
 * @param desc the equation; its sides and parts must keep their defaults
 * @param materials NULL, or num_patches pointers (each NULL for desc's material)
 * @param num_bcs entries of @p bcs (>= 0)
 * @param bcs conditions per boundary side, or NULL when num_bcs = 0
 * @retval FEA_ERR_INVALID_ARG for patches without dim components, a `size` outside the accepted
 *         sizes (desc or a material), what fea_problem_create_elasticity() refuses in the
 *         material (naming materials[p] for a patch's own), model or rule, a desc whose sides
 *         or parts are not the defaults, a negative num_bcs, an entry naming a patch out of
 *         range, a side that is not a boundary side of the domain, a side listed twice, a bad
 *         condition (type, a component the space lacks, a pressure that is not finite), or
 *         conditions that leave a rigid-body mode of the domain free (the modes are named)
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_problem_create_elasticity(
    fea_multipatch *mp, const fea_elasticity_desc *desc,
    const fea_elasticity_desc *const *materials, int num_bcs, const fea_multipatch_elastic_bc *bcs,
    fea_multipatch_problem **out);

/** @brief Destroy a problem (accepts NULL; sets `*problem = NULL`). @since 0.1.0 */
FEA_EXPORT fea_status fea_multipatch_problem_destroy(fea_multipatch_problem **problem);

/**
 * @brief The number of free global DoFs: the rows of the problem's system.
 * @retval FEA_ERR_INVALID_ARG only for the NULL arguments above
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_problem_get_num_free_dofs(const fea_multipatch_problem *problem,
                                                            fea_index *n);

/**
 * @brief The assembled reduced system (free global DoFs, Dirichlet values lifted into @p b),
 *        from every patch's reference assembly: the independent check of the direct solver.
 * @param b num_free right-hand side values (caller-allocated), or NULL
 * @param[out] A the CSR matrix (fea_matrix_destroy()), or NULL
 * @retval FEA_ERR_INVALID_ARG when @p b and @p A are both NULL, or as
 *         fea_problem_assemble_reference() for a coefficient that is not positive or not finite
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_problem_assemble_reference(const fea_multipatch_problem *problem,
                                                             double *b, fea_matrix **A);

/**
 * @brief Expand a reduced solution to every global DoF (Dirichlet DoFs take their values).
 * @param u_free num_free values; @param u_full num_dofs values (caller-allocated)
 * @retval FEA_ERR_INVALID_ARG only for the NULL arguments above
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_problem_expand_solution(const fea_multipatch_problem *problem,
                                                          const double *u_free, double *u_full);

/**
 * @brief The L2 norm of u - exact and the H1 seminorm of its error over the whole domain
 *        (each patch on its problem's rule), from global coefficients @p u_full.
 * @param h1_semi the H1 seminorm error, or NULL (then exact_grad may be NULL)
 * @retval FEA_ERR_INVALID_ARG for a NULL exact, or h1_semi asked for without exact_grad
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_problem_error_norms(const fea_multipatch_problem *problem,
                                                      const double *u_full, fea_scalar_fn exact,
                                                      fea_gradient_fn exact_grad, void *user,
                                                      double *l2, double *h1_semi);

/**
 * @brief The errors of a vector-valued u_h (global coefficients) over the whole domain, per
 *        component and together, as fea_problem_error_norms_vector() (each patch on its rule).
 * @param[out] l2 ncomp + 1 values; @param[out] h1_semi ncomp + 1 values, or NULL
 * @retval FEA_ERR_INVALID_ARG for a NULL exact or l2, or h1_semi asked for without exact_grad
 * @since 0.1.0
 */
FEA_API fea_status fea_multipatch_problem_error_norms_vector(const fea_multipatch_problem *problem,
                                                             const double *u_full,
                                                             fea_vector_fn exact,
                                                             fea_vector_fn exact_grad, void *user,
                                                             double *l2, double *h1_semi);

/**
 * @brief Create the multipatch direct solver for @p problem.
 *
 * Each patch gets a multifrontal tree that keeps its boundary DoFs (the symbolic phase runs
 * here, as in fea_solver_create_multifrontal()); fea_solver_setup() factors the patches, one
 * after the other on the context's threads, then the interface system (dense Cholesky). Solves
 * take and give vectors over the free global DoFs.
 * @param desc the patches' tree options (merge, memory limit; keep_boundary must be 0), or NULL
 * @retval FEA_ERR_INVALID_ARG for a problem of another context, keep_boundary set, or a merge
 *         out of range
 * @retval FEA_ERR_UNSUPPORTED for a backend without multifrontal ops
 * @retval FEA_ERR_OUT_OF_MEMORY when a patch's factorization bound, or the dense interface
 *         system, exceeds the memory budget (naming both figures)
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_create_multipatch(fea_context *ctx, fea_multipatch_problem *problem,
                                                const fea_solver_desc *desc, fea_solver **out);

/**
 * @brief Create a B-spline multigrid solver for a multipatch Poisson problem: by default CG
 *        preconditioned by one V-cycle (docs/multigrid.md, "Multipatch domains").
 *
 * Every patch is coarsened alike (every other knot span dropped, all patches together, while
 * every patch can halve in every direction and keeps at least desc->coarsest_cells elements per
 * direction), so the interfaces stay conforming; each level is the same problem on the coarse
 * domain, assembled over all patches, and the prolongation is each patch's knot insertion
 * mapped through the levels' global numberings. Smoothers: FEA_MG_SMOOTHER_SCHWARZ (Chebyshev
 * over overlapping boxes of (p + 1)^d coefficients in each patch; the one whose iteration counts
 * hold over p), FEA_MG_SMOOTHER_CHEBYSHEV (Chebyshev-Jacobi) or RICHARDSON; the coarsest level
 * by dense Cholesky. The levels are CSR matrices on the host whatever desc->operator_kind says
 * (fea_multigrid_stats.operator_kind reports CSR). The solver is of kind multigrid:
 * fea_solver_get_multigrid_stats() describes it; right-hand sides and solutions are over the
 * problem's free global DoFs. The hierarchy is built here (so that every refusal comes now) and
 * serves the first fea_solver_setup().
 * @param desc the multigrid options (NULL: FEA_MULTIGRID_DESC_INIT)
 * @retval FEA_ERR_INVALID_ARG for a problem of another context, an option that
 *         fea_solver_create_multigrid() refuses (named), or a problem without free DoFs
 * @retval FEA_ERR_UNSUPPORTED for an elasticity problem (vector-valued patches), a backend that
 *         keeps its vectors off the host, or a coarsest level with more free DoFs than a dense
 *         factor takes (naming its elements and DoFs)
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_create_multipatch_multigrid(fea_context *ctx,
                                                          fea_multipatch_problem *problem,
                                                          const fea_multigrid_desc *desc,
                                                          fea_solver **out);

/** Facts about a multipatch solver; initialize with FEA_MULTIPATCH_STATS_INIT. @since 0.1.0 */
typedef struct fea_multipatch_stats {
  size_t size;              /**< sizeof(fea_multipatch_stats) as compiled by the caller */
  int num_patches;          /**< patches */
  fea_index interface_dofs; /**< free DoFs of the interface system */
  fea_index interior_dofs;  /**< DoFs eliminated inside the patches */
  double local_s;           /**< the patches' factorizations (last setup) */
  double interface_s;       /**< interface system: assembly and factorization (last setup) */
  double solve_s;           /**< the last solve, all phases */
  uint64_t patch_bytes;     /**< sum of the patches' peak setup memory estimates */
  uint64_t interface_bytes; /**< the dense interface factor */
  /** The smallest pivot L_jj^2 of the last setup's factor: every patch's fronts and the
   * interface system's Cholesky factor, the pivots of one Cholesky factorization of the
   * whole system (fea_solver_stats.pivot_min); 0 before setup. @since 0.1.0 */
  double pivot_min;
  double pivot_max;   /**< the largest (0 before setup) @since 0.1.0 */
  double pivot_ratio; /**< pivot_min / pivot_max, as fea_solver_stats.pivot_ratio @since 0.1.0 */
  /** 1 when the last setup warned (pivot_ratio below max(sqrt(DBL_EPSILON), the eliminated
   * DoFs times DBL_EPSILON), fea_solver_setup()). @since 0.1.0 */
  int ill_conditioned;
} fea_multipatch_stats;

/** Initializer for fea_multipatch_stats. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_MULTIPATCH_STATS_INIT                                                             \
  {                                                                                           \
    .size = sizeof(fea_multipatch_stats), .num_patches = 0, .interface_dofs = 0,              \
    .interior_dofs = 0, .local_s = 0.0, .interface_s = 0.0, .solve_s = 0.0, .patch_bytes = 0, \
    .interface_bytes = 0, .pivot_min = 0.0, .pivot_max = 0.0, .pivot_ratio = 0.0,             \
    .ill_conditioned = 0                                                                      \
  }
#else
#define FEA_MULTIPATCH_STATS_INIT \
  { sizeof(fea_multipatch_stats), 0, 0, 0, 0.0, 0.0, 0.0, 0, 0, 0.0, 0.0, 0.0, 0 }
#endif

/**
 * @brief Fill @p stats (whose .size the caller set); the times are 0 before setup and solve.
 * @retval FEA_ERR_INVALID_ARG for a solver of another kind than multipatch, or a .size outside
 *         the accepted sizes
 * @since 0.1.0
 */
FEA_API fea_status fea_solver_get_multipatch_stats(const fea_solver *solver,
                                                   fea_multipatch_stats *stats);

FEA_END_DECLS

#endif /* FEACCEL_MULTIPATCH_H */
