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
  int nb;             /**< scalar basis functions (the element's DoFs of a scalar space) */
  const double *x;    /**< nq x dim points */
  const double *w;    /**< nq weights: rule weight times |det J| */
  const double *phi;  /**< nq x nb values: phi[q * nb + i] */
  const double *dphi; /**< nq x nb x dim gradients: dphi[(q * nb + i) * dim + k] */
  /* Appended after 0.1.0 (size says whether a form may read it): */
  int ncomp; /**< components of the space (fea_space_set_num_components()): the form's Ke is
                  (nb ncomp) x (nb ncomp) and fe has nb ncomp entries, local DoF c + ncomp i
                  being component c of function i (fea_space_get_element_dofs() order) */
} fea_element_data;

/**
 * A user's element form: the n x n element matrix Ke (row-major, symmetric) and the n
 * load entries fe of element e, n = nb ncomp (nb on a scalar space). Return FEA_SUCCESS, or any error status to stop the caller,
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

/** A vector function of a point x (dim coordinates) writing its values into v: one per
 * component of the problem's space (fea_problem_create_elasticity()), or, for the gradients of
 * fea_problem_error_norms_vector(), ncomp x dim values, v[c * dim + k] = d u_c / d x_k.
 * @since 0.1.0 */
typedef void (*fea_vector_fn)(const double *x, double *v, void *user);

/** The 2D model of an elasticity problem (3D spaces ignore it). @since 0.1.0 */
typedef enum fea_elasticity_model {
  FEA_ELASTICITY_PLANE_STRAIN = 0, /**< eps_zz = 0: a long body (the default) */
  FEA_ELASTICITY_PLANE_STRESS = 1  /**< sigma_zz = 0: a thin plate */
} fea_elasticity_model;

/** The kind of condition on one side of an elasticity problem. @since 0.1.0 */
typedef enum fea_elastic_bc_type {
  FEA_ELASTIC_DISPLACEMENT = 0, /**< u_c = g_c (the desc's displacement) for the components in
                                     the mask, by elimination; the others are traction-free */
  FEA_ELASTIC_TRACTION = 1,     /**< sigma n = h(x) (traction; NULL: 0, a free side) */
  FEA_ELASTIC_PRESSURE = 2,     /**< sigma n = -p(x) n: a pressure pushing on the side */
  FEA_ELASTIC_SPRING = 3        /**< sigma n + k(x) u = h(x): an elastic support (Robin) of
                                     stiffness k >= 0 (the condition's pressure / pressure_fn
                                     field) and load h (traction; NULL: 0) */
} fea_elastic_bc_type;

/** Component masks of fea_elastic_condition.components. @since 0.1.0 */
#define FEA_COMPONENT_X 1u
#define FEA_COMPONENT_Y 2u
#define FEA_COMPONENT_Z 4u

/** What holds on one side of an elasticity problem (n: the outward unit normal). A symmetry
 * roller on a side normal to x is FEA_ELASTIC_DISPLACEMENT with components = FEA_COMPONENT_X.
 * The side's scalar coefficient (pressure, pressure_fn) is the pressure p of a PRESSURE side and
 * the spring stiffness k of a SPRING side (the struct's layout is frozen: one field serves both).
 * @since 0.1.0 */
typedef struct fea_elastic_condition {
  fea_elastic_bc_type type; /**< default FEA_ELASTIC_DISPLACEMENT */
  unsigned components;      /**< DISPLACEMENT: bit c fixes component c; 0: every component */
  fea_vector_fn traction;   /**< TRACTION, SPRING: h(x) (dim values), or NULL for h = 0 */
  void *traction_user;
  double pressure;           /**< PRESSURE: a constant p; SPRING: a constant k >= 0; used when
                                  pressure_fn is NULL */
  fea_scalar_fn pressure_fn; /**< PRESSURE: p(x); SPRING: k(x) >= 0; or NULL */
  void *pressure_user;
} fea_elastic_condition;

/** A part of a mesh's boundary (a physical group of the Gmsh file it was read from, as
 * fea_boundary_part names one) and the elasticity condition on it. @since 0.1.0 */
typedef struct fea_elastic_part {
  int physical_tag;         /**< the group's physical tag; used when name is NULL */
  const char *name;         /**< the group's name in $PhysicalNames, or NULL to use the tag */
  fea_elastic_condition bc; /**< the condition on the group's facets */
} fea_elastic_part;

/**
 * Options of a linear elasticity problem; initialize with FEA_ELASTICITY_DESC_INIT.
 * The material is isotropic: Young's modulus E and Poisson's ratio nu (constants or
 * callbacks), or, with mu > 0, the Lame parameters lambda and mu in their place; or, with
 * C_fn, a general (anisotropic) elasticity tensor in place of all four.
 * @since 0.1.0
 */
typedef struct fea_elasticity_desc {
  size_t size;                /**< sizeof(fea_elasticity_desc) as compiled by the caller */
  double E;                   /**< Young's modulus > 0, used when E_fn is NULL (default 1) */
  double nu;                  /**< Poisson's ratio in (-1, 0.5), used when nu_fn is NULL (0.3) */
  fea_scalar_fn E_fn, nu_fn;  /**< E(x), nu(x), or NULL */
  void *material_user;        /**< the user data of E_fn and nu_fn */
  double lambda, mu;          /**< with mu > 0: the Lame parameters in place of E and nu */
  fea_elasticity_model model; /**< 2D: plane strain (default) or plane stress */
  fea_vector_fn body_force;   /**< f(x) (dim values), or NULL for f = 0 */
  void *body_force_user;
  fea_vector_fn displacement; /**< g(x) (dim values) on the fixed components, or NULL: g = 0 */
  void *displacement_user;
  int quad_points;                /**< Gauss points per direction, 1..20; 0: degree + 1 */
  fea_elastic_condition sides[6]; /**< per fea_patch_side; all clamped (u = g) by default */
  const fea_elastic_part *parts;  /**< num_parts conditions by physical group (a Lagrange space on
                                       a mesh read from Gmsh; copied): facets in no listed part
                                       stay clamped; NULL when num_parts = 0 */
  int num_parts;                  /**< entries of parts, >= 0; default 0 */
  /** The elasticity tensor C(x) in Voigt notation, or NULL (isotropic: E, nu or lambda, mu):
   * written row-major into its second argument, symmetric positive definite, 6 x 6 in 3D
   * (order xx, yy, zz, yz, xz, xy) and 3 x 3 in 2D (xx, yy, xy: the in-plane tensor, which
   * model does not change), with sigma = C eps and engineering shears (2 eps_xy); user data
   * material_user. Checked where it is evaluated, naming the point. */
  fea_tensor_fn C_fn;
} fea_elasticity_desc;

/* clang-format off */
/** Initializer: E = 1, nu = 0.3, plane strain, no loads, every side clamped. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
/* The fields left out are zero: every side FEA_ELASTIC_DISPLACEMENT of all
 * components with g = 0 (clamped), no loads, no parts. */
#define FEA_ELASTICITY_DESC_INIT                                                             \
  { .size = sizeof(fea_elasticity_desc), .E = 1.0, .nu = 0.3, .lambda = 0.0, .mu = 0.0,     \
    .model = FEA_ELASTICITY_PLANE_STRAIN, .quad_points = 0, .num_parts = 0 }
#else
#define FEA_ELASTIC_CLAMPED_INIT_ { FEA_ELASTIC_DISPLACEMENT, 0u, NULL, NULL, 0.0, NULL, NULL }
#define FEA_ELASTICITY_DESC_INIT                                                             \
  { sizeof(fea_elasticity_desc), 1.0, 0.3, NULL, NULL, NULL, 0.0, 0.0,                       \
    FEA_ELASTICITY_PLANE_STRAIN, NULL, NULL, NULL, NULL, 0,                                  \
    { FEA_ELASTIC_CLAMPED_INIT_, FEA_ELASTIC_CLAMPED_INIT_, FEA_ELASTIC_CLAMPED_INIT_,       \
      FEA_ELASTIC_CLAMPED_INIT_, FEA_ELASTIC_CLAMPED_INIT_, FEA_ELASTIC_CLAMPED_INIT_ },      \
    NULL, 0, NULL }
#endif
/* clang-format on */

/**
 * @brief Create a linear elasticity problem -div sigma(u) = f on @p space (which it holds a
 * reference on), sigma = lambda tr(eps) I + 2 mu eps, eps = (grad u + grad u^T) / 2.
 *
 * @p space must have dim components (fea_space_set_num_components()): u is the displacement.
 * Element matrices are (nb dim) x (nb dim) in the space's interleaved DoF order. Conditions are
 * per side (desc.sides): displacement on a chosen set of components (eliminated as Dirichlet
 * DoFs; a roller fixes one), traction h, pressure p (traction -p n), or a spring (elastic
 * support sigma n + k u = h), on the sides of a
 * B-spline patch or of a structured box mesh (Lagrange), or per physical group of a mesh read from
 * Gmsh (desc.parts, checked as fea_problem_create_poisson() checks its parts). In 2D, plane strain uses lambda and mu as
 * given; plane stress replaces lambda by 2 lambda mu / (lambda + 2 mu). With desc.C_fn the
 * material is that tensor (Voigt) instead. The conditions must remove every rigid-body motion
 * (translations and rotations): checked on the space's own representation of them and on the
 * springs' stiffness over their faces, so a pure traction problem (or springs of stiffness 0)
 * is refused naming the modes left free.
 * @retval FEA_ERR_INVALID_ARG for a `desc->size` outside the accepted sizes, a space whose
 *         components are not its dimension, an E that is not positive and finite, a nu outside
 *         (-1, 0.5) (both checked at every quadrature point when given as callbacks), a mu or
 *         lambda that make the material not positive definite (mu > 0, lambda > -2 mu / dim),
 *         quad_points outside 0..20, an unknown model or side type, a component mask naming a
 *         component the space lacks, a side beyond the space's dimension that is not the default,
 *         a pressure that is not finite, a constant spring stiffness that is negative or not
 *         finite, a spring stiffness callback that is negative or not finite at a face point
 *         (naming it), displacement data that is not finite at a fixed DoF,
 *         or conditions that leave a rigid-body mode free (the modes are named); a body force,
 *         traction, pressure or spring stiffness that is not finite (or, k, negative) at a
 *         quadrature point, or a tensor C_fn that is not finite, symmetric and positive
 *         definite there, is FEA_ERR_INVALID_ARG naming the point where element systems are
 *         computed;
 *         a negative num_parts or NULL parts with num_parts > 0, a part whose tag or name is
 *         not a group of the mesh's boundary (or a name two groups share), a group listed twice
 *         or a facet in two listed groups
 * @retval FEA_ERR_UNSUPPORTED for a 1D space, a side that is not clamped on a Lagrange space
 *         whose mesh is not a structured box, or parts on a B-spline space
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_create_elasticity(fea_space *space, const fea_elasticity_desc *desc,
                                                 fea_problem **out);

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
 * On a space with several components (fea_space_set_num_components()) the built-in terms have
 * no meaning: the problem needs an element_form (its matrices are (nb ncomp)^2, interleaved),
 * every side Dirichlet (g on every component) and no parts.
 * @retval FEA_ERR_INVALID_ARG also for a space with several components and no element_form
 * @retval FEA_ERR_UNSUPPORTED for a Neumann or Robin side on a Lagrange space
 *         whose mesh is not structured (fea_mesh_create_structured(); name
 *         parts instead), or parts on a B-spline space; on a space with several
 *         components, a side that is not Dirichlet or parts
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
 * @param Ke dofs_per_element^2 entries (fea_space_info's, which counts every component of a
 *        vector space), row-major (symmetric), or NULL
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
 * @retval FEA_ERR_UNSUPPORTED on a space with several components (not yet)
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
 * @retval FEA_ERR_UNSUPPORTED on a space with several components
 *         (fea_problem_error_norms_vector() takes them)
 * @retval FEA_ERR_BACKEND when LAPACK fails to compute the Gauss-Jacobi
 *         points of a triangle or tetrahedron rule
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_error_norms(const fea_problem *problem, const double *u_full,
                                           fea_scalar_fn exact, fea_gradient_fn exact_grad,
                                           void *user, double *l2, double *h1_semi);

/**
 * @brief Errors of a vector-valued u_h (full coefficients, interleaved as the space numbers
 * them) against an exact solution, per component and together.
 * @param exact u(x), ncomp values; @param exact_grad its gradient, ncomp x dim values
 * (v[c * dim + k] = d u_c / d x_k), or NULL (then @p h1_semi is not computed)
 * @param[out] l2 ncomp + 1 values: ||u_c - u_h,c||_L2 per component, then ||u - u_h||_L2
 * (the square root of the sum of their squares)
 * @param[out] h1_semi ncomp + 1 values likewise for |.|_H1, or NULL
 * Integrated as fea_problem_error_norms() integrates. Takes scalar problems too (ncomp = 1:
 * both entries are the scalar norms).
 * @retval FEA_ERR_INVALID_ARG for a NULL @p u_full, @p exact or @p l2, or @p h1_semi asked
 *         for without @p exact_grad
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_error_norms_vector(const fea_problem *problem, const double *u_full,
                                                  fea_vector_fn exact, fea_vector_fn exact_grad,
                                                  void *user, double *l2, double *h1_semi);

/**
 * @brief The displacement, the stress tensor and the von Mises stress of an elasticity
 * solution u_h (full coefficients) at points.
 *
 * Points: on a B-spline space, the patch's parameters (in the space's box, which for a patch
 * mapped by a geometry is the geometry's parameter range: a mapped patch cannot locate a
 * physical point without inverting its map, which is also why fea_space_evaluate() refuses
 * mapped spaces; on an unmapped box the parameters are the physical coordinates); on a
 * Lagrange space, physical coordinates, located as fea_space_evaluate() locates them. A point
 * on an element boundary takes the element that fea_space_evaluate() takes (the one above it
 * in each direction, the last one at the upper end), so a stress discontinuous there (a C0
 * space) is that element's.
 * The stress is sigma = lambda tr(eps) I + 2 mu eps of the problem's material at the point, in
 * Voigt order: xx, yy, zz, yz, xz, xy. In 2D, yz = xz = 0 and zz is lambda tr(eps) in plane
 * strain, 0 in plane stress. The von Mises stress is
 * sqrt(((s_xx - s_yy)^2 + (s_yy - s_zz)^2 + (s_zz - s_xx)^2) / 2 + 3 (s_yz^2 + s_xz^2 + s_xy^2)).
 * @param points npts * dim parameters (B-splines) or coordinates (Lagrange)
 * @param[out] x npts * dim physical points (where the parameters map to), or NULL
 * @param[out] u npts * dim displacements, or NULL
 * @param[out] stress npts * 6 stresses (Voigt), or NULL
 * @param[out] von_mises npts von Mises stresses, or NULL
 * @retval FEA_ERR_INVALID_ARG for a problem that is not an elasticity problem, a negative
 *         @p npts, a NULL @p u_full or @p points when npts > 0, a coordinate that is not
 *         finite, a point outside the patch's parameter range or the mesh (naming the point),
 *         or a material callback that gives an E or nu outside its range at a point
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_evaluate_stress(const fea_problem *problem, const double *u_full,
                                               fea_index npts, const double *points, double *x,
                                               double *u, double *stress, double *von_mises);

/**
 * @brief Write an elasticity solution u_h (full coefficients) as a VTK XML UnstructuredGrid
 * (`.vtu`, ASCII) for ParaView, sampled as fea_space_write_vtu() samples a function (on a
 * B-spline patch, or on each quadrilateral or hexahedron of a Lagrange space): the node
 * fields "displacement" (3 components, z = 0 in 2D, so that ParaView's "Warp By Vector"
 * takes it), "stress" (6 components in ParaView's order of a symmetric tensor: xx, yy, zz, xy,
 * yz, xz; see fea_problem_evaluate_stress()) and "von_mises" (1). Points on element
 * boundaries are repeated per element, so the stresses show their jumps between C0 elements.
 * @param samples 2..16 points per element and direction
 * @retval FEA_ERR_INVALID_ARG for a problem that is not an elasticity problem, @p samples
 *         outside 2..16, a NULL or empty @p path, NULL @p u_full, a coefficient that makes a
 *         sample not finite (the sample is named), or a material callback that gives an E or
 *         nu outside its range at a sample
 * @retval FEA_ERR_UNSUPPORTED for a problem on a Lagrange space of triangles or tetrahedra
 * @retval FEA_ERR_IO when the file cannot be opened or written
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_write_vtu(const fea_problem *problem, const double *u_full,
                                         int samples, const char *path);

FEA_END_DECLS

#endif /* FEACCEL_PROBLEM_H */
