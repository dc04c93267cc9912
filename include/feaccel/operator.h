/**
 * @file operator.h
 * @brief The reduced Poisson operator y = A x, assembled or matrix-free,
 * behind one interface, and the conjugate-gradient solver over it.
 *
 * An operator acts on the free DoFs of a problem (Dirichlet DoFs eliminated,
 * as in fea_problem_assemble_reference()). Three kinds:
 *
 * - FEA_OPERATOR_CSR: the matrix assembled with fea_problem_assemble() and a
 *   threaded CSR product (rows in blocks of equal nonzero count per thread);
 * - FEA_OPERATOR_MATFREE_ELEMENT_MATRIX: matrix-free, y = sum_e P_e K_e P_e^T x
 *   with element matrices K_e kept per element shape (one for all elements
 *   of a uniform Cartesian mesh);
 * - FEA_OPERATOR_MATFREE_SUMFACT: matrix-free with sum factorization on
 *   tensor-product spaces; where it does not apply, element-matrix runs
 *   instead and fea_operator_get_info() says so (never a wrong product).
 *
 * Matrix-free kinds scatter element results into shared entries
 * concurrently; the update strategy of assembly.h handles the conflicts.
 * See docs/operators.md.
 *
 * Applying one operator from several threads at once is not supported (an
 * operator keeps its gather and scatter buffers, which is why the functions
 * that apply it take a non-const fea_operator); different operators may be
 * applied concurrently. On /gpu/cuda (compiled, not yet run on a GPU) the
 * operator's data is built on the host and uploaded: CSR, element matrices
 * (ATOMIC_CAS/AUTO or COLORING), sum factorization falling back to element
 * matrices; vectors are device vectors of that context. See docs/operators.md.
 *
 * @par Errors common to this header
 * Every function here that returns fea_status returns FEA_SUCCESS when it did
 * its job (fea_cg_solve() may also return FEA_WARN_NOT_CONVERGED). Except
 * fea_operator_destroy(), each also returns FEA_ERR_INVALID_ARG when the
 * context, operator, problem or an output pointer it needs is NULL, and each
 * that builds, applies or solves returns FEA_ERR_OUT_OF_MEMORY when host or
 * device memory runs out. On `/gpu/cuda` those may also return
 * FEA_ERR_DEVICE (a CUDA call failed) or FEA_ERR_BACKEND (cuBLAS or cuSPARSE
 * failed). fea_cg_solve() returns FEA_ERR_CANCELLED when the context's progress
 * callback (fea_context_set_progress_callback()) asks to stop; x then holds
 * the last iterate. The other codes are listed under each function.
 */
#ifndef FEACCEL_OPERATOR_H
#define FEACCEL_OPERATOR_H

#include <stddef.h>
#include <stdint.h>

#include <feaccel/assembly.h>
#include <feaccel/export.h>
#include <feaccel/problem.h>
#include <feaccel/types.h>
#include <feaccel/vector.h>

FEA_BEGIN_DECLS

/** Opaque operator. @since 0.1.0 */
typedef struct fea_operator fea_operator;

/** How the operator is applied. @since 0.1.0 */
typedef enum fea_operator_kind {
  FEA_OPERATOR_CSR = 0,                    /**< assembled CSR matrix, threaded SpMV */
  FEA_OPERATOR_MATFREE_ELEMENT_MATRIX = 1, /**< matrix-free, dense element matrices */
  FEA_OPERATOR_MATFREE_SUMFACT = 2         /**< matrix-free, sum factorization */
} fea_operator_kind;

/**
 * Where sum factorization (FEA_OPERATOR_MATFREE_SUMFACT) takes the geometry's
 * terms from (docs/operators.md, "Mapped elements"). Elements that are
 * axis-aligned boxes with constant coefficients need none: their operator
 * factors into 1D matrices. Any other tensor-product element (a mapped or
 * NURBS patch, a curved or general quadrilateral or hexahedral mesh, or a
 * reaction term, sigma(x) or A(x)) is applied at the quadrature points with
 * a symmetric matrix per point that holds the weight, det J, J^-1, the
 * coefficients and the NURBS weight. Linear elasticity
 * (fea_problem_create_elasticity()) has a kernel of its own with the same
 * choice: on axis-aligned boxes with a constant material nothing is kept per
 * point; elsewhere, and with E(x) or nu(x), w |det J| lambda, w |det J| mu and
 * J^-T (and the NURBS weight's term) per point (STORED).
 * @since 0.1.0
 */
typedef enum fea_geometry_terms {
  /** the 1D factorization where it applies, else STORED */
  FEA_GEOMETRY_TERMS_AUTO = 0,
  /** the matrix of every quadrature point of every element, built at create
   * (d (d + 1) / 2 doubles per point, one more row with a reaction or NURBS);
   * any coefficient */
  FEA_GEOMETRY_TERMS_STORED = 1,
  /** the geometry as coordinates per DoF (isoparametric), the matrices formed
   * at every apply: d (+ 1) doubles per DoF, about twice the arithmetic;
   * constant coefficients of scalar problems only (else the operator falls
   * back to element matrices, and says why: elasticity does) */
  FEA_GEOMETRY_TERMS_RECOMPUTED = 2
} fea_geometry_terms;

/** Options of an operator; initialize with FEA_OPERATOR_DESC_INIT. @since 0.1.0 */
typedef struct fea_operator_desc {
  size_t size;                  /**< sizeof(fea_operator_desc) as compiled by the caller */
  fea_operator_kind kind;       /**< default FEA_OPERATOR_MATFREE_SUMFACT */
  fea_update_strategy strategy; /**< scatter conflicts of the matrix-free kinds (default AUTO) */
  fea_geometry_terms geometry_terms; /**< MATFREE_SUMFACT: the geometry's terms (default AUTO) */
} fea_operator_desc;

/** Initializer: sum factorization, AUTO strategy, AUTO geometry terms. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_OPERATOR_DESC_INIT                                               \
  {                                                                          \
    .size = sizeof(fea_operator_desc), .kind = FEA_OPERATOR_MATFREE_SUMFACT, \
    .strategy = FEA_UPDATE_AUTO, .geometry_terms = FEA_GEOMETRY_TERMS_AUTO   \
  }
#else
#define FEA_OPERATOR_DESC_INIT                                                \
  {                                                                           \
    sizeof(fea_operator_desc), FEA_OPERATOR_MATFREE_SUMFACT, FEA_UPDATE_AUTO, \
        FEA_GEOMETRY_TERMS_AUTO                                               \
  }
#endif

/**
 * @brief Create the reduced operator of @p problem on @p ctx.
 *
 * CSR assembles through fea_problem_assemble() with the context's threads;
 * matrix-free kinds precompute only (element matrices, tables, geometry).
 * The operator keeps what it needs from the problem: the problem may be
 * destroyed first (its sigma, f and g callbacks' user data may not).
 * @param ctx the context the operator runs on (threads); vectors given to it
 *        must belong to this context
 * @param desc options, or NULL for FEA_OPERATOR_DESC_INIT
 * @retval FEA_ERR_INVALID_ARG for a `desc->size` outside the accepted sizes,
 *         an unknown kind or strategy, or (as fea_problem_assemble() reports
 *         them) a sigma or f that is not admissible at a quadrature point
 * On a space with several components (fea_space_set_num_components()) the
 * operators run over its vector DoFs (c + ncomp i): the element-matrix kind
 * with (nb ncomp)^2 element matrices, sum factorization for linear
 * elasticity (elsewhere, a user's element form, it falls back to element
 * matrices and says why in the info's kernel).
 * @retval FEA_ERR_UNSUPPORTED for TSX without usable RTM, on a device backend
 *         for strategies other than AUTO, ATOMIC_CAS and COLORING, or on a
 *         device backend without operators; on a space with several
 *         components (fea_space_set_num_components()) on device backends
 * @retval FEA_ERR_BACKEND on a device backend whose host delegate cannot be
 *         found or created
 * @retval FEA_ERR_OUT_OF_MEMORY when what the kind stores exceeds the memory
 *         budget (fea_context_set_memory_limit()), refused before the work
 *         that would fill it: the CSR matrix as soon as a lower bound of its
 *         entries (from the knots, or the element-DoF table) exceeds the
 *         budget, before its pattern is built (the message names the bound,
 *         and the exact count where the bound is exact); the element matrices
 *         once their count is known (at once with sigma(x), c(x), a tensor, an
 *         element form or Robin sides; else when grouping the elements by
 *         shape would exceed the budget). Each message names the figure, the
 *         limit and a kind that needs less.
 * @since 0.1.0
 */
FEA_API fea_status fea_operator_create(fea_context *ctx, const fea_problem *problem,
                                       const fea_operator_desc *desc, fea_operator **out);

/**
 * @brief y = A x. @p x and @p y: distinct F64 vectors of length num_free_dofs
 * on the operator's context (else FEA_ERR_DIMENSION or FEA_ERR_INVALID_ARG
 * naming the values). @p op is not const: the matrix-free kinds gather and
 * scatter through buffers the operator keeps.
 * @retval FEA_ERR_INVALID_ARG for a vector that is NULL, of another context
 *         than the operator's, or not FEA_F64, or @p x and @p y
 *         the same vector
 * @retval FEA_ERR_DIMENSION for a vector whose length is not num_free_dofs
 * @since 0.1.0
 */
FEA_API fea_status fea_operator_apply(fea_operator *op, const fea_vector *x, fea_vector *y);

/**
 * @brief y += A x; same rules as fea_operator_apply().
 * @retval FEA_ERR_INVALID_ARG for a vector that is NULL, of another context
 *         than the operator's, or not FEA_F64, or @p x and @p y
 *         the same vector
 * @retval FEA_ERR_DIMENSION for a vector whose length is not num_free_dofs
 * @since 0.1.0
 */
FEA_API fea_status fea_operator_apply_add(fea_operator *op, const fea_vector *x, fea_vector *y);

/**
 * @brief The diagonal of A (computed element by element for matrix-free kinds).
 * @retval FEA_ERR_INVALID_ARG for a vector that is NULL, of another context
 *         than the operator's, or not FEA_F64
 * @retval FEA_ERR_DIMENSION for a vector whose length is not num_free_dofs
 * @since 0.1.0
 */
FEA_API fea_status fea_operator_get_diagonal(const fea_operator *op, fea_vector *diag);

/**
 * @brief The reduced right-hand side b (load minus lifting of g), as
 * fea_problem_assemble_reference() computes it; without a global matrix for
 * matrix-free kinds. @p op is not const: matrix-free kinds compute it on the
 * first call and keep it.
 * @retval FEA_ERR_INVALID_ARG for a vector that is NULL, of another context
 *         than the operator's, or not FEA_F64, or a load f that
 *         is not finite at a quadrature point
 * @retval FEA_ERR_DIMENSION for a vector whose length is not num_free_dofs
 * @since 0.1.0
 */
FEA_API fea_status fea_operator_get_rhs(fea_operator *op, fea_vector *b);

/** What an operator is and costs; set .size (FEA_OPERATOR_INFO_INIT) before the call.
 * @since 0.1.0 */
typedef struct fea_operator_info {
  size_t size;                      /**< sizeof(fea_operator_info) as compiled by the caller */
  fea_operator_kind kind_run;       /**< the kind that runs (after a fallback) */
  fea_update_strategy strategy_run; /**< the strategy that scatters (AUTO's pick); SERIAL for CSR */
  fea_index rows;                   /**< num_free_dofs */
  uint64_t memory_bytes;            /**< what the operator keeps (matrix or kernel data, buffers) */
  double setup_s;                   /**< wall time of fea_operator_create() */
  char kernel[96];                  /**< what runs, with a fallback's reason */
  double flops_per_apply;           /**< floating-point operations of one apply */
  double bytes_per_apply;           /**< memory traffic one apply must move at least */
} fea_operator_info;

/** Initializer for fea_operator_info. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_OPERATOR_INFO_INIT                                                                     \
  {                                                                                                \
    .size = sizeof(fea_operator_info), .kind_run = FEA_OPERATOR_CSR,                               \
    .strategy_run = FEA_UPDATE_SERIAL, .rows = 0, .memory_bytes = 0, .setup_s = 0.0, .kernel = "", \
    .flops_per_apply = 0.0, .bytes_per_apply = 0.0                                                 \
  }
#else
#define FEA_OPERATOR_INFO_INIT \
  { sizeof(fea_operator_info), FEA_OPERATOR_CSR, FEA_UPDATE_SERIAL, 0, 0, 0.0, "", 0.0, 0.0 }
#endif

/**
 * @brief Fill @p info up to its .size.
 * @retval FEA_ERR_INVALID_ARG for an `info->size` outside the accepted sizes.
 * @since 0.1.0
 */
FEA_API fea_status fea_operator_get_info(const fea_operator *op, fea_operator_info *info);

/**
 * @brief Extreme eigenvalues of the SPD operator (or of D^-1/2 A D^-1/2 with
 * @p jacobi = 1, D its diagonal) by Lanczos: @p steps steps from a fixed
 * pseudo-random start, with full reorthogonalization (steps vectors of
 * num_free doubles are kept). The estimates lie inside the spectrum, so
 * lambda_max / lambda_min approaches the condition number from below; the
 * extremes converge first (200 steps give 4 digits for 2D Poisson up to
 * h = 1/256). A diagnostic, not a solver ingredient. Applies @p op (hence not const).
 * On a device backend Lanczos runs on the host and each product's vectors
 * cross to the device and back.
 * @param steps 2..1000 (fewer are run if the Krylov space is exhausted)
 * @retval FEA_ERR_INVALID_ARG for @p steps outside 2..1000 or @p jacobi not 0 or 1
 * @retval FEA_ERR_DIMENSION when the operator has no free DoFs
 * @retval FEA_ERR_NOT_POSDEF when an estimate, or with @p jacobi a diagonal
 *         entry, is not positive
 * @retval FEA_ERR_BACKEND when LAPACK fails on the Lanczos matrix
 * @since 0.1.0
 */
FEA_API fea_status fea_operator_estimate_eigenvalues(fea_operator *op, int steps, int jacobi,
                                                     double *lambda_min, double *lambda_max);

/**
 * @brief Destroy an operator. Accepts NULL and `*op == NULL`; sets `*op = NULL`.
 * Not marked warn-unused-result: it is called on cleanup paths.
 * @retval FEA_SUCCESS always; it cannot fail.
 * @since 0.1.0
 */
FEA_EXPORT fea_status fea_operator_destroy(fea_operator **op);

/** Options of fea_cg_solve(); initialize with FEA_CG_DESC_INIT. @since 0.1.0 */
typedef struct fea_cg_desc {
  size_t size;                /**< sizeof(fea_cg_desc) as compiled by the caller */
  double rtol;                /**< stop when ||r|| <= max(rtol ||b||, atol) (default 1e-10) */
  double atol;                /**< absolute tolerance (default 0) */
  fea_index max_iterations;   /**< >= 0 (default 10000) */
  int jacobi;                 /**< 1: Jacobi preconditioner from the operator's diagonal */
  fea_index history_capacity; /**< entries of history */
  double *history;            /**< ||r_k|| for k = 0, 1, ... (up to capacity), or NULL */
} fea_cg_desc;

/** Initializer: rtol 1e-10, atol 0, 10000 iterations, Jacobi, no history. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_CG_DESC_INIT                                                                           \
  {                                                                                                \
    .size = sizeof(fea_cg_desc), .rtol = 1e-10, .atol = 0.0, .max_iterations = 10000, .jacobi = 1, \
    .history_capacity = 0, .history = NULL                                                         \
  }
#else
#define FEA_CG_DESC_INIT \
  { sizeof(fea_cg_desc), 1e-10, 0.0, 10000, 1, 0, NULL }
#endif

/** What a CG solve did; set .size (FEA_CG_STATS_INIT) before the call. @since 0.1.0 */
typedef struct fea_cg_stats {
  size_t size;             /**< sizeof(fea_cg_stats) as compiled by the caller */
  fea_index iterations;    /**< iterations run */
  double initial_residual; /**< ||b - A x0|| */
  double final_residual;   /**< ||b - A x|| (recurrence) at the end */
  int converged;           /**< 1 when the tolerance was met */
  double solve_s;          /**< wall time */
  double apply_s;          /**< of which operator applications */
} fea_cg_stats;

/** Initializer for fea_cg_stats. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_CG_STATS_INIT                                                                          \
  {                                                                                                \
    .size = sizeof(fea_cg_stats), .iterations = 0, .initial_residual = 0.0, .final_residual = 0.0, \
    .converged = 0, .solve_s = 0.0, .apply_s = 0.0                                                 \
  }
#else
#define FEA_CG_STATS_INIT \
  { sizeof(fea_cg_stats), 0, 0.0, 0.0, 0, 0.0, 0.0 }
#endif

/**
 * @brief Solve A x = b by (preconditioned) conjugate gradients.
 *
 * @p x holds the initial guess and receives the solution. Vector operations
 * go through fea_vector_* (BLAS). @p A is applied, hence not const.
 * @param desc options, or NULL for FEA_CG_DESC_INIT
 * @param stats or NULL
 * @retval FEA_WARN_NOT_CONVERGED (x holds the last iterate) when
 *         max_iterations is reached
 * @retval FEA_ERR_NOT_POSDEF when p.Ap <= 0 or the Jacobi diagonal has an
 *         entry <= 0; when r.z or p.Ap overflowed to inf or NaN the message
 *         says so (the system or the iterate is too large for doubles)
 * @retval FEA_ERR_INVALID_ARG when ||b|| overflows; for a vector that is NULL, of another context
 *         than the operator's, or not FEA_F64, @p b and @p x
 *         the same vector, a `desc->size` or `stats->size` outside the
 *         accepted sizes, rtol or atol negative or not finite, a negative
 *         max_iterations, jacobi not 0 or 1, history_capacity negative or set
 *         without history, or an entry of @p b or of the initial @p x that is
 *         not finite
 * @retval FEA_ERR_DIMENSION for a vector whose length is not num_free_dofs
 * @retval FEA_ERR_UNSUPPORTED for jacobi = 1 on a device backend without
 *         device Jacobi scaling
 * @since 0.1.0
 */
FEA_API fea_status fea_cg_solve(fea_operator *A, const fea_vector *b, fea_vector *x,
                                const fea_cg_desc *desc, fea_cg_stats *stats);

FEA_END_DECLS

#endif /* FEACCEL_OPERATOR_H */
