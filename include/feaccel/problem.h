/**
 * @file problem.h
 * @brief The problem -div(A grad u) + c u = f in the domain (A = sigma I, or an anisotropic
 * tensor field), with u = g, or a Neumann or Robin condition, on each side of its boundary.
 *
 * A problem binds a space to the coefficients sigma and c, the load f, the
 * Dirichlet data g and the kind of condition on each part of the boundary:
 * per side of a B-spline patch or of a structured box mesh
 * (fea_problem_desc.sides), or per physical group of a mesh read from Gmsh
 * (fea_problem_desc.parts). Dirichlet conditions are imposed by elimination:
 * the DoFs on Dirichlet sides take the interpolant of g, are removed from the
 * system, and their contribution moves to the right-hand side (lifting).
 * Neumann and Robin sides add their boundary integrals (h v, and alpha u v)
 * to the element systems of the elements that touch them. Systems and
 * reduced solutions therefore run over the free DoFs only; full coefficient
 * vectors (all DoFs, boundary values included) are what the user gets back.
 *
 * @par Errors common to this header
 * Every function here that returns fea_status returns FEA_SUCCESS when it did
 * its job. Except fea_problem_destroy(), each also returns FEA_ERR_INVALID_ARG
 * when the problem, space or a pointer it must read or write through is
 * NULL, and each that integrates or makes an object returns
 * FEA_ERR_OUT_OF_MEMORY when an allocation fails or, before it allocates,
 * when its estimate exceeds the memory budget (fea_context_set_memory_limit()).
 * Where the user's sigma_fn, sigma_tensor, reaction_fn, flux or source is
 * evaluated, a sigma that is not positive and finite, a tensor that is not
 * finite, symmetric and positive definite, a negative c, or a load that is
 * not finite, at a quadrature point is FEA_ERR_INVALID_ARG naming the point;
 * a user's element form that fails is passed on with its status, and one
 * whose matrix is not finite and symmetric (to 1e-12 of its largest entry)
 * or whose load is not finite is FEA_ERR_INVALID_ARG naming the element. The other codes are listed under each function.
 *
 * @par Callbacks: threads and repeated calls
 * sigma_fn, sigma_tensor, reaction_fn, source, the flux of every side and
 * part, and element_form are called wherever element systems are computed,
 * and on a context with more than one thread (`/cpu/threads`;
 * fea_context_set_num_threads(); on `/gpu/cuda` the host threads that
 * integrate the multifrontal leaves) from several threads at once, for
 * different elements: in concurrent assembly (fea_problem_assemble(), the
 * CSR operator), in the setup of the multifrontal and multipatch solvers,
 * and in multigrid's setup. They must be safe to call concurrently: read
 * their user data only, or guard what they write. dirichlet (g) is called
 * on the calling thread only, when a problem is made (here, for each
 * multigrid level and for each patch of a multipatch problem); so are the
 * exact and exact_grad callbacks of fea_problem_error_norms().
 * @par
 * Every callback may be called more than once at the same point, and
 * element_form more than once for the same element: each consumer of a
 * problem evaluates what it needs itself (the reference assembly, each
 * operator and, for the matrix-free kinds, separately its right-hand side,
 * each solver's setup, fea_problem_element_system()), and one call may
 * evaluate a point twice (the multifrontal setup on `/gpu/cuda` evaluates
 * sigma for the device's stiffness weights and again for the element
 * matrices that lift Dirichlet values; g is evaluated by both patches at a
 * DoF two patches share). So each must give
 * the same value for the same x (or element) on every call, with no side
 * effect that the result depends on (a call counter, sums into the user's
 * arrays). element_form always gets both Ke and fe, also when the caller
 * needs only one of them.
 */
#ifndef FEACCEL_PROBLEM_H
#define FEACCEL_PROBLEM_H

#include <feaccel/export.h>
#include <feaccel/matrix.h>
#include <feaccel/space.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** Opaque problem. @since 0.1.0 */
typedef struct fea_problem fea_problem;

/** A symmetric positive definite dim x dim coefficient at x, written row-major into A.
 * @since 0.1.0 */
typedef void (*fea_tensor_fn)(const double *x, double *A, void *user);

/**
 * One element as a user's element form sees it: its basis at the problem's quadrature points,
 * in physical coordinates (read-only; valid during the call).
 * @since 0.1.0
 */
typedef struct fea_element_data {
  size_t size;        /**< sizeof(fea_element_data) as this library was built */
  fea_index element;  /**< the element's index in the space */
  int dim;            /**< space dimension */
  int nq;             /**< quadrature points */
  int nb;             /**< basis functions (the element's DoFs, fea_space_get_element_dofs order) */
  const double *x;    /**< nq x dim points */
  const double *w;    /**< nq weights: rule weight times |det J| */
  const double *phi;  /**< nq x nb values: phi[q * nb + i] */
  const double *dphi; /**< nq x nb x dim gradients: dphi[(q * nb + i) * dim + k] */
} fea_element_data;

/**
 * A user's element form: the nb x nb element matrix Ke (row-major, symmetric) and the nb
 * load entries fe of element e. Return FEA_SUCCESS, or any error status to stop the caller,
 * which then returns that status; anything else (a warning, a value outside fea_status) stops
 * it with FEA_ERR_INVALID_ARG naming the value.
 * @since 0.1.0
 */
typedef fea_status (*fea_element_form_fn)(const fea_element_data *e, double *Ke, double *fe,
                                          void *user);

/** The condition on one side of a B-spline patch or a structured mesh, or on a boundary part.
 * @since 0.1.0 */
typedef enum fea_bc_type {
  FEA_BC_DIRICHLET = 0, /**< u = g (the problem's dirichlet function), by elimination */
  FEA_BC_NEUMANN = 1,   /**< (A grad u) . n = h, A = sigma I or sigma_tensor */
  FEA_BC_ROBIN = 2      /**< alpha u + (A grad u) . n = h, alpha > 0 */
} fea_bc_type;

/* fea_patch_side, the sides of a patch in G+Smo's order, is declared in space.h (included
 * above), beside the geometry files whose multipatch topology names them. */

/** What holds on one side (n: the outward unit normal). @since 0.1.0 */
typedef struct fea_boundary_condition {
  fea_bc_type type;   /**< default FEA_BC_DIRICHLET */
  double alpha;       /**< Robin coefficient, finite and > 0 (FEA_BC_ROBIN only) */
  fea_scalar_fn flux; /**< h(x) for Neumann and Robin; NULL: h = 0 */
  void *flux_user;
} fea_boundary_condition;

/**
 * A part of a mesh's boundary, named by a physical group of the Gmsh file it was read from
 * (a group of dimension one below the mesh's: curves of a 2D mesh, surfaces of a 3D one; see
 * fea_mesh_get_boundary_groups()), and the condition on it.
 * @since 0.1.0
 */
typedef struct fea_boundary_part {
  int physical_tag;          /**< the group's physical tag; used when name is NULL */
  const char *name;          /**< the group's name in $PhysicalNames, or NULL to use the tag */
  fea_boundary_condition bc; /**< the condition on the group's facets */
} fea_boundary_part;

/** Options of a Poisson problem; initialize with FEA_PROBLEM_DESC_INIT. @since 0.1.0 */
typedef struct fea_problem_desc {
  size_t size;
  double sigma;           /**< constant coefficient (> 0), used when sigma_fn is NULL */
  fea_scalar_fn sigma_fn; /**< sigma(x) > 0, or NULL */
  void *sigma_user;
  fea_scalar_fn source; /**< f(x), or NULL for f = 0 */
  void *source_user;
  fea_scalar_fn dirichlet; /**< g(x) on the Dirichlet sides, or NULL for g = 0 */
  void *dirichlet_user;
  int quad_points; /**< Gauss points per direction, 1..20; 0: degree + 1 (P2: 3) */
  /* Appended after 0.1.0 (callers built before see the defaults): */
  double reaction;           /**< c >= 0 of the term c u (finite), used when reaction_fn is NULL */
  fea_scalar_fn reaction_fn; /**< c(x) >= 0, or NULL */
  void *reaction_user;
  fea_boundary_condition sides[6]; /**< per fea_patch_side: a B-spline patch's sides, or a
                                        structured mesh's (Lagrange spaces); all Dirichlet by
                                        default */
  fea_tensor_fn sigma_tensor;      /**< an anisotropic A(x) (SPD) in place of sigma, or NULL */
  void *sigma_tensor_user;
  fea_element_form_fn element_form; /**< the user's element matrices and loads in place of
                                         sigma, A, c and f (the sides still apply), or NULL;
                                         with a form, all-natural sides are not refused (the
                                         form may hold a mass term) */
  void *element_form_user;
  /* Appended after sides (callers built before see the defaults): */
  const fea_boundary_part *parts; /**< num_parts conditions by physical group (a mesh read
                                       from Gmsh; copied): facets in no listed part stay
                                       Dirichlet; NULL when num_parts = 0 */
  int num_parts;                  /**< entries of parts, >= 0; default 0 */
} fea_problem_desc;

/* clang-format off */
/** Initializer: sigma = 1, f = 0, g = 0, default quadrature, c = 0, Dirichlet on every side.
 * @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_PROBLEM_DESC_INIT                                                               \
  { .size = sizeof(fea_problem_desc), .sigma = 1.0, .sigma_fn = NULL, .sigma_user = NULL,   \
    .source = NULL, .source_user = NULL, .dirichlet = NULL, .dirichlet_user = NULL,         \
    .quad_points = 0, .reaction = 0.0, .reaction_fn = NULL, .reaction_user = NULL,          \
    .sides = { {.type = FEA_BC_DIRICHLET, .alpha = 0.0, .flux = NULL, .flux_user = NULL},   \
               {.type = FEA_BC_DIRICHLET, .alpha = 0.0, .flux = NULL, .flux_user = NULL},   \
               {.type = FEA_BC_DIRICHLET, .alpha = 0.0, .flux = NULL, .flux_user = NULL},   \
               {.type = FEA_BC_DIRICHLET, .alpha = 0.0, .flux = NULL, .flux_user = NULL},   \
               {.type = FEA_BC_DIRICHLET, .alpha = 0.0, .flux = NULL, .flux_user = NULL},   \
               {.type = FEA_BC_DIRICHLET, .alpha = 0.0, .flux = NULL, .flux_user = NULL} }, \
    .sigma_tensor = NULL, .sigma_tensor_user = NULL, .element_form = NULL,                  \
    .element_form_user = NULL, .parts = NULL, .num_parts = 0 }
#else
#define FEA_PROBLEM_DESC_INIT                                                            \
  { sizeof(fea_problem_desc), 1.0, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0.0, NULL, NULL, \
    { {FEA_BC_DIRICHLET, 0.0, NULL, NULL}, {FEA_BC_DIRICHLET, 0.0, NULL, NULL},          \
      {FEA_BC_DIRICHLET, 0.0, NULL, NULL}, {FEA_BC_DIRICHLET, 0.0, NULL, NULL},          \
      {FEA_BC_DIRICHLET, 0.0, NULL, NULL}, {FEA_BC_DIRICHLET, 0.0, NULL, NULL} },        \
    NULL, NULL, NULL, NULL, NULL, 0 }
#endif
/* clang-format on */

/**
 * @brief Create a Poisson problem on @p space (which it holds a reference on).
 * @retval FEA_ERR_INVALID_ARG for a `desc->size` outside the accepted sizes, a
 *         constant sigma that is not positive and finite (without sigma_fn),
 *         quad_points outside 0..20, Dirichlet data g that is not finite at
 *         a boundary DoF, a constant c that is negative or not finite, a side
 *         or part with an unknown type, a Robin alpha that is not positive
 *         and finite, a non-Dirichlet side beyond the space's dimension, no
 *         Dirichlet and no Robin side or boundary facet with c = 0 (u would
 *         be determined up to a constant only; not checked with an element
 *         form, which replaces c and may hold its own mass term: a singular
 *         system is then the solvers' to report, FEA_ERR_NOT_POSDEF from the
 *         multifrontal setup's pivot check or from CG), a negative
 *         num_parts or NULL
 *         parts with num_parts > 0, a part whose physical tag or name is not
 *         a group of the mesh's boundary (or a name two groups share), a
 *         group listed twice, a facet in two listed groups, or a listed
 *         group's facet that is not on the boundary
 * @retval FEA_ERR_UNSUPPORTED for a Neumann or Robin side on a Lagrange space
 *         whose mesh is not structured (fea_mesh_create_structured(); name
 *         parts instead), or parts on a B-spline space
 * @retval FEA_ERR_BACKEND when LAPACK fails to compute the Gauss-Jacobi
 *         points of a triangle or tetrahedron rule
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_create_poisson(fea_space *space, const fea_problem_desc *desc,
                                              fea_problem **out);

/**
 * @brief Destroy a problem. Accepts NULL; sets `*problem = NULL`.
 * Not marked warn-unused-result: it is called on cleanup paths.
 * @retval FEA_SUCCESS always; it cannot fail.
 * @since 0.1.0
 */
FEA_EXPORT fea_status fea_problem_destroy(fea_problem **problem);

/**
 * @brief Number of free (non-Dirichlet) DoFs: the size of the reduced system.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p problem or @p n.
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_get_num_free_dofs(const fea_problem *problem, fea_index *n);

/**
 * @brief Element stiffness matrix and load vector of element @p e.
 * @param Ke dofs_per_element^2 entries, row-major (symmetric), or NULL
 * @param fe dofs_per_element entries, or NULL
 * The element's DoFs are those of fea_space_get_element_dofs().
 * @retval FEA_ERR_INVALID_ARG for @p e outside [0, num_elements), or sigma or
 *         f not admissible at a quadrature point
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_element_system(const fea_problem *problem, fea_index e, double *Ke,
                                              double *fe);

/**
 * @brief Element mass matrix (dofs_per_element^2, row-major).
 * @retval FEA_ERR_INVALID_ARG for a NULL @p Me or @p e outside [0, num_elements).
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_element_mass(const fea_problem *problem, fea_index e, double *Me);

/**
 * @brief Reference assembly of the reduced system A u = b over the free DoFs.
 *
 * Serial, simple and checked: the oracle every fast path is compared with.
 * Like every function that makes an object, it writes the new handle
 * through its last parameter.
 * @param[out] b num_free_dofs right-hand side values (load minus lifting), caller-allocated
 * @param[out] A the new CSR matrix (sorted column indices), on the host; NULL on failure
 * @retval FEA_ERR_INVALID_ARG for a NULL @p A, a NULL @p b when there are free
 *         DoFs, or sigma or f not admissible at a quadrature point
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_assemble_reference(const fea_problem *problem, double *b,
                                                  fea_matrix **A);

/**
 * @brief Full coefficients from a reduced solution: free DoFs from @p u_free,
 * boundary DoFs from the interpolant of g.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p u_full, or a NULL @p u_free when
 *         there are free DoFs
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_expand_solution(const fea_problem *problem, const double *u_free,
                                               double *u_full);

/**
 * @brief Errors of u_h (full coefficients) against an exact solution.
 * @param exact u(x); @param exact_grad its gradient, or NULL (then *h1_semi is not computed)
 * @param[out] l2 ||u - u_h||_L2; @param[out] h1_semi |u - u_h|_H1 (may be NULL)
 * Integrated with the problem's quadrature plus two points per direction.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p u_full, @p exact or @p l2, or
 *         @p h1_semi asked for without @p exact_grad
 * @retval FEA_ERR_BACKEND when LAPACK fails to compute the Gauss-Jacobi
 *         points of a triangle or tetrahedron rule
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_error_norms(const fea_problem *problem, const double *u_full,
                                           fea_scalar_fn exact, fea_gradient_fn exact_grad,
                                           void *user, double *l2, double *h1_semi);

FEA_END_DECLS

#endif /* FEACCEL_PROBLEM_H */
