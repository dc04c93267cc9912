/**
 * @brief Discrete spaces: Lagrange on meshes, tensor-product B-splines on boxes or mapped patches.
 * @file space.h
 *
 * A space numbers its degrees of freedom (DoFs) globally, knows which lie on
 * the boundary, and evaluates its functions. Coefficient vectors are host
 * arrays of num_dofs doubles in the space's numbering.
 *
 * @par Errors common to this header
 * Every function here that returns fea_status returns FEA_SUCCESS when it did
 * its job. Except fea_space_destroy() and fea_geometry_file_destroy(), each also returns
 * FEA_ERR_INVALID_ARG
 * when the context, mesh, space or a pointer it must read or write through is
 * NULL, and each that makes a space or needs scratch memory returns
 * FEA_ERR_OUT_OF_MEMORY when an allocation fails or, before it allocates,
 * when its estimate exceeds the memory budget (fea_context_set_memory_limit()).
 * The other codes are listed
 * under each function.
 */
#ifndef FEACCEL_SPACE_H
#define FEACCEL_SPACE_H

#include <feaccel/export.h>
#include <feaccel/mesh.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** Opaque space. @since 0.1.0 */
typedef struct fea_space fea_space;

/** A scalar function of a point x (dim coordinates). @since 0.1.0 */
typedef double (*fea_scalar_fn)(const double *x, void *user);
/** A function of a point x writing dim gradient components into grad. @since 0.1.0 */
typedef void (*fea_gradient_fn)(const double *x, double *grad, void *user);

/** Where Lagrange nodes sit inside each cell (Q2 and up). @since 0.1.0 */
typedef enum fea_lagrange_nodes {
  FEA_NODES_EQUISPACED = 0,
  FEA_NODES_GAUSS_LOBATTO = 1
} fea_lagrange_nodes;

/**
 * @brief Lagrange space on @p mesh: P1, P2 on triangles and tetrahedra;
 * Q1..Q6 on intervals, quads and hexahedra.
 *
 * DoFs are numbered: mesh nodes first (same numbers), then edge, face and cell
 * interior DoFs. The space holds a reference on the mesh.
 * @param order 1..2 on simplices, 1..6 on intervals, quads and hexahedra
 * @retval FEA_ERR_INVALID_ARG for an order or node set out of range
 * @retval FEA_ERR_UNSUPPORTED when the mesh's cells have a lower dimension than
 *         its coordinates (curves in 2D or 3D, surfaces in 3D)
 * @since 0.1.0
 */
FEA_API fea_status fea_space_create_lagrange(fea_mesh *mesh, int order, fea_lagrange_nodes nodes,
                                             fea_space **out);

/**
 * A B-spline or NURBS geometry map of one patch (what G+Smo calls TensorBSpline2/3 and
 * TensorNurbs2/3): x(xi) = sum_i R_i(xi) P_i over the patch's own knot vectors and degrees.
 * Initialize with FEA_GEOMETRY_DESC_INIT. The parametric and physical dimensions are the
 * space's dim. Control points are numbered lexicographically, direction 0 fastest; point i
 * has coordinates control_points[i * dim + a].
 * @since 0.1.0
 */
typedef struct fea_geometry_desc {
  size_t size;                  /**< sizeof(fea_geometry_desc) as compiled by the caller */
  int degree[3];                /**< per direction, 1..8 */
  const double *knots[3];       /**< open knot vector per direction */
  fea_index num_knots[3];       /**< lengths of knots[k] */
  const double *control_points; /**< num_control_points x dim coordinates */
  fea_index num_control_points; /**< must equal the product of the functions per direction */
  const double *weights;        /**< NULL: a B-spline map; else one weight > 0 per point (NURBS) */
} fea_geometry_desc;

/** Initializer for fea_geometry_desc (no knots, no points: fill them in). @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_GEOMETRY_DESC_INIT                                                               \
  {                                                                                          \
    .size = sizeof(fea_geometry_desc), .degree = {1, 1, 1}, .knots = {NULL, NULL, NULL},     \
    .num_knots = {0, 0, 0}, .control_points = NULL, .num_control_points = 0, .weights = NULL \
  }
#else
#define FEA_GEOMETRY_DESC_INIT \
  { sizeof(fea_geometry_desc), {1, 1, 1}, {NULL, NULL, NULL}, {0, 0, 0}, NULL, 0, NULL }
#endif

/**
 * The sides of a patch or of a structured mesh's box, in G+Smo's order: direction 0 low / high,
 * 1 low / high, 2 low / high (G+Smo's files number them from 1: west = 1 ... back = 6). A
 * structured mesh's sides are found by grid position (the nodes whose index in direction k is 0
 * or n[k]), so they follow a point map. Declared here for the geometry files' topology;
 * problem.h, which includes this header, takes a condition per side.
 * @since 0.1.0
 */
typedef enum fea_patch_side {
  FEA_SIDE_WEST = 0,
  FEA_SIDE_EAST = 1,
  FEA_SIDE_SOUTH = 2,
  FEA_SIDE_NORTH = 3,
  FEA_SIDE_FRONT = 4,
  FEA_SIDE_BACK = 5
} fea_patch_side;

/** The patches and multipatch topology of a G+Smo XML file; opaque (fea_geometry_file_read()).
 * @since 0.1.0 */
typedef struct fea_geometry_file fea_geometry_file;

/**
 * @brief Read the geometry patches of a G+Smo XML file: every `Geometry` element of type
 * TensorBSpline2, TensorBSpline3, TensorNurbs2 or TensorNurbs3 (physical dimension equal to
 * the parametric one), in file order, and the topology of the file's first `MultiPatch`
 * element (later ones are ignored, as G+Smo's own reader takes the first).
 *
 * The file is parsed by libxml2 without network access. A document type declaration (DTD) is
 * refused where it starts, before anything it declares is read, so no entity is ever expanded
 * (G+Smo files have none); character references and the five predefined entities are read.
 * Before the file is read, its size is checked against libxml2's ceiling (10^9 bytes) and the
 * memory that reading and parsing it needs (4 bytes per byte of text, and about 300 per tag and
 * per attribute for libxml2's tree) against the context's memory budget. What libxml2 reports
 * goes into the error message, never to stderr. Each patch is checked as
 * fea_space_create_bspline() checks a geometry; `rows` and `cols` attributes of `coefs` and
 * `weights`, where present, must be the number of control points and geoDim (1 for weights).
 *
 * The `MultiPatch` element is read as G+Smo reads it: `parDim`; `patches` of type `id_range`
 * (a first and a last Geometry id, both included) or `id_index` (a list of Geometry ids);
 * any number of `interfaces` elements, each a list of interfaces of 4 + 2 parDim integers
 * (patch id, side, patch id, side, parDim direction-map entries, parDim orientation flags);
 * any number of `boundary` elements, each a list of (patch id, side) pairs, with an optional
 * `name` attribute that names the group. Patches are named by their Geometry `id` attribute,
 * not by position, and sides from 1 (west) to 2 parDim; the accessors below give file
 * positions and 0-based sides instead. A file without a `MultiPatch` has no interfaces and no
 * boundary sides. Sides named in neither list are not filled in.
 *
 * The topology is checked against the patches' geometry, as G+Smo's computeTopology compares
 * sides (their corners and centre): the two sides of an interface must coincide point for point
 * in the orientation its direction map and flags give, and a boundary side must coincide with
 * no other side of a member patch (it would be an interface), within 10^-6 of the diameter of
 * the member patches' control points. Collapsed sides (all corners at one point) are not
 * compared. fea_multipatch_create() finds its interfaces from the geometry at its own tolerance
 * (10^-9 of the domain's diameter by default): for a file whose sides agree only to 10^-6, give
 * it a larger one.
 * @retval FEA_ERR_IO when the file cannot be opened or is not well-formed XML (the line is named;
 *         a reference to an entity that nothing declares is not well-formed, naming it)
 * @retval FEA_ERR_INVALID_ARG for a file that is XML but not a valid geometry, naming the patch,
 *         its line and the bad item: an unknown or missing type, a missing or extra knot vector,
 *         a degree or number that does not parse, counts that do not match (coefficients,
 *         weights, geoDim), non-finite coordinates, weights that are not positive, knots that
 *         decrease or are not open, a `rows` or `cols` attribute other than the count the knot
 *         vectors give (both numbers named); and for a file without patches. For a `MultiPatch`
 *         that is not valid, naming the file, the element, its line and the value: a missing or bad
 *         `parDim` or one that differs from a listed patch's dimension, a missing `patches`
 *         element or an unknown type of it, a patch id that names no Geometry (or two), an id
 *         listed twice, an integer that does not parse, a count that is not a whole number of
 *         interfaces or of pairs, a patch id not listed in `patches`, a side outside
 *         1..2 parDim, an interface that names the same side twice, a direction map that is not
 *         a permutation, an orientation flag other than 0 or 1, and a side that is named twice
 *         (by two interfaces, twice as boundary, or both as boundary and in an interface); and
 *         for a topology the geometry contradicts, naming the interface or boundary side, the
 *         patch ids and sides: an interface whose sides do not coincide (the farthest pair of
 *         points and their distance) or coincide only in another orientation (the file's direction
 *         map and flags and the geometry's), a boundary side that coincides with another side
 * @retval FEA_ERR_UNSUPPORTED for a patch whose geoDim differs from its parametric dimension
 *         (surfaces in 3D) or whose type is another G+Smo geometry (THB, 1D curves); for a file
 *         with a DTD (its line and declaration named) or of more than 10^9 bytes (its size named)
 * @retval FEA_ERR_OUT_OF_MEMORY when reading and parsing the file would pass the memory budget
 *         (the file's size and the limit named), or libxml2 runs out of memory
 * @since 0.1.0
 */
FEA_API fea_status fea_geometry_file_read(fea_context *ctx, const char *path,
                                          fea_geometry_file **out);

/** @brief The number of patches read. @since 0.1.0 */
FEA_API fea_status fea_geometry_file_get_num_patches(const fea_geometry_file *file, int *count);

/**
 * @brief Patch @p index (0-based, file order) as a geometry descriptor whose arrays belong to
 * @p file (valid until it is destroyed); @p dim gets its dimension (2 or 3).
 * @retval FEA_ERR_INVALID_ARG for an index outside [0, count) or a `desc->size` outside the
 *         accepted sizes
 * @since 0.1.0
 */
FEA_API fea_status fea_geometry_file_get_patch(const fea_geometry_file *file, int index, int *dim,
                                               fea_geometry_desc *desc);

/**
 * One interface of a geometry file's multipatch: side[0] of patch[0] is glued to side[1] of
 * patch[1] (the same patch for a periodic one), as G+Smo describes it. Initialize with
 * FEA_GEOMETRY_INTERFACE_INIT before fea_geometry_file_get_interface() fills it.
 *
 * direction_map[k] is the direction of patch[1] that direction k of patch[0] runs along on the
 * interface, and direction_orientation[k] is 1 when the two run the same way, 0 when they run
 * opposite ways. For the direction normal to side[0], as G+Smo sets them whatever the file
 * says: the map gives the direction normal to side[1], and the orientation is 1 when both sides
 * are at the same end of their direction (both low or both high), 0 otherwise. Entries from the
 * patch's dimension on are the identity (direction_map[2] = 2, direction_orientation[2] = 1 in
 * 2D).
 * @since 0.1.0
 */
typedef struct fea_geometry_interface {
  size_t size;                  /**< sizeof(fea_geometry_interface) as compiled by the caller */
  int patch[2];                 /**< positions in the file's patch list (as get_patch takes) */
  fea_patch_side side[2];       /**< the glued side of each */
  int direction_map[3];         /**< a permutation of the directions 0 .. dim - 1 */
  int direction_orientation[3]; /**< 1: the same way, 0: opposite ways */
} fea_geometry_interface;

/* clang-format off */
/** Initializer for fea_geometry_interface (no patches yet; the identity map). @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_GEOMETRY_INTERFACE_INIT                                     \
  { .size = sizeof(fea_geometry_interface), .patch = {-1, -1},          \
    .side = {FEA_SIDE_WEST, FEA_SIDE_WEST}, .direction_map = {0, 1, 2}, \
    .direction_orientation = {1, 1, 1} }
#else
#define FEA_GEOMETRY_INTERFACE_INIT \
  { sizeof(fea_geometry_interface), {-1, -1}, {FEA_SIDE_WEST, FEA_SIDE_WEST}, {0, 1, 2}, \
    {1, 1, 1} }
#endif
/* clang-format on */

/**
 * @brief The patches of the file's `MultiPatch` element, in the order it lists them, as
 * positions in the file's patch list; @p patches points into @p file (valid until it is
 * destroyed). A file without one gives 0 and NULL.
 * @since 0.1.0
 */
FEA_API fea_status fea_geometry_file_get_multipatch(const fea_geometry_file *file, int *num_patches,
                                                    const int **patches);

/**
 * @brief The number of interfaces of the file's `MultiPatch` (0 without one), in file order.
 * @since 0.1.0
 */
FEA_API fea_status fea_geometry_file_get_num_interfaces(const fea_geometry_file *file, int *count);

/**
 * @brief Interface @p index (0-based, file order) into @p out (its first `out->size` bytes).
 * @retval FEA_ERR_INVALID_ARG for an index outside [0, count) or an `out->size` outside the
 *         accepted sizes
 * @since 0.1.0
 */
FEA_API fea_status fea_geometry_file_get_interface(const fea_geometry_file *file, int index,
                                                   fea_geometry_interface *out);

/**
 * @brief The number of boundary sides of the file's `MultiPatch` (0 without one): the pairs of
 * all its `boundary` elements, in file order.
 * @since 0.1.0
 */
FEA_API fea_status fea_geometry_file_get_num_boundary_sides(const fea_geometry_file *file,
                                                            int *count);

/**
 * @brief Boundary side @p index (0-based, file order): @p patch gets its position in the file's
 * patch list, @p side the side, and @p name the `name` attribute of the `boundary` element that
 * lists it (pointing into @p file, valid until it is destroyed), or NULL when that element has
 * none. @p name may be NULL when the name is not wanted.
 * @retval FEA_ERR_INVALID_ARG for an index outside [0, count)
 * @since 0.1.0
 */
FEA_API fea_status fea_geometry_file_get_boundary_side(const fea_geometry_file *file, int index,
                                                       int *patch, fea_patch_side *side,
                                                       const char **name);

/**
 * @brief Destroy what fea_geometry_file_read() made. Accepts NULL; sets `*file = NULL`.
 * Not marked warn-unused-result: it is called on cleanup paths.
 * @retval FEA_SUCCESS always; it cannot fail.
 * @since 0.1.0
 */
FEA_EXPORT fea_status fea_geometry_file_destroy(fea_geometry_file **file);

/** Options of a B-spline space; initialize with FEA_BSPLINE_DESC_INIT. @since 0.1.0 */
typedef struct fea_bspline_desc {
  size_t size;    /**< sizeof(fea_bspline_desc) as compiled by the caller */
  int dim;        /**< 1, 2 or 3 */
  int degree[3];  /**< per direction, 1..8 */
  fea_index n[3]; /**< elements per direction for open uniform knots (used when knots[k] is NULL) */
  const double *knots[3]; /**< optional full knot vector per direction (non-decreasing, open:
                                  first and last values repeated degree+1 times) */
  fea_index num_knots[3]; /**< lengths of knots[k] */
  double lower[3]; /**< the box the parameter domain maps to (identity up to scaling); default 0.
                        With a geometry, lower and upper must keep their defaults */
  double upper[3]; /**< default 1 */
  const fea_geometry_desc *geometry; /**< NULL: the box; else the patch's geometry map, which the
                                          space's knots must refine (see below); copied */
} fea_bspline_desc;

/** Initializer: bilinear B-splines on one element of the unit square. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_BSPLINE_DESC_INIT                                                                    \
  {                                                                                              \
    .size = sizeof(fea_bspline_desc), .dim = 2, .degree = {1, 1, 1}, .n = {1, 1, 1},             \
    .knots = {NULL, NULL, NULL}, .num_knots = {0, 0, 0}, .lower = {0, 0, 0}, .upper = {1, 1, 1}, \
    .geometry = NULL                                                                             \
  }
#else
#define FEA_BSPLINE_DESC_INIT                                                                    \
  {                                                                                              \
    sizeof(fea_bspline_desc), 2, {1, 1, 1}, {1, 1, 1}, {NULL, NULL, NULL}, {0, 0, 0}, {0, 0, 0}, \
        {1, 1, 1}, NULL                                                                          \
  }
#endif

/**
 * @brief Tensor-product B-spline space.
 *
 * Per direction: degree p, knots open uniform over n elements (n + p functions)
 * or given. An interior knot of multiplicity m lowers the continuity there to
 * C^(p-m); m = p gives a C0 separator, m = p+1 is refused (it would split the patch).
 * DoFs are numbered lexicographically, direction 0 fastest.
 *
 * With a geometry the space lives on the mapped patch, isoparametrically: its
 * knot vectors must span the geometry's parameter range and refine the
 * geometry's space (degree at least the geometry's; each geometry knot present
 * with its multiplicity raised by the degree difference: h-, p- and
 * k-refinement keep it). Over a NURBS geometry the basis is rational,
 * N_i / W with W the geometry's weight function, so the geometry is exact in
 * the space. Uniform knots (knots[k] NULL) then cover the geometry's parameter
 * range. What works on mapped spaces: problems, the multifrontal solver, the
 * reference and concurrent assembly, the element-matrix and CSR operators, CG,
 * interpolation, error norms; the sum-factorization operator falls back to
 * element matrices (its info says so), fea_space_evaluate() refuses them
 * (FEA_ERR_UNSUPPORTED), multigrid takes 2D and 3D B-spline and NURBS spaces
 * (fea_solver_create_multigrid()), and the prehandled solver takes no
 * B-spline spaces at all.
 * @retval FEA_ERR_INVALID_ARG for a `desc->size` outside the accepted sizes,
 *         dim outside 1..3, a degree outside 1..8, a box side that is not
 *         finite with lower < upper, n[k] below 1, num_knots[k] set without
 *         knots[k], or given knots that are too few or too many, not finite,
 *         decreasing, not open, or with an interior multiplicity above the degree;
 *         with a geometry: its size, degrees or knots invalid as above, a
 *         control-point count that is not the product of the functions per
 *         direction, a coordinate that is not finite, a weight that is not
 *         finite and positive, a box that is not the default, or space knots
 *         whose range differs from the geometry's or that do not refine it
 *         (the knot is named)
 * @since 0.1.0
 */
FEA_API fea_status fea_space_create_bspline(fea_context *ctx, const fea_bspline_desc *desc,
                                            fea_space **out);

/**
 * @brief h-refinement: a new B-spline space with @p count knots inserted in direction @p dir.
 * Knots must lie strictly inside the parameter range; multiplicities may not exceed the degree.
 * @retval FEA_ERR_INVALID_ARG for a Lagrange @p space, @p dir outside the
 *         space's directions, a negative or too large @p count, NULL @p knots
 *         with count > 0, a knot not strictly inside the parameter range, or a
 *         multiplicity that would exceed the degree
 * @since 0.1.0
 */
FEA_API fea_status fea_space_bspline_insert_knots(const fea_space *space, int dir, fea_index count,
                                                  const double *knots, fea_space **out);

/**
 * @brief p-refinement: a new B-spline space with the degree in @p dir raised by @p t,
 * every knot's multiplicity raised by t as well (continuity kept).
 * @retval FEA_ERR_INVALID_ARG for a Lagrange @p space, @p dir outside the
 *         space's directions, a negative @p t, or a raised degree above 8
 * @since 0.1.0
 */
FEA_API fea_status fea_space_bspline_elevate_degree(const fea_space *space, int dir, int t,
                                                    fea_space **out);

/**
 * @brief Coefficients in @p fine of the function @p coarse_coeffs represents in @p coarse.
 *
 * Exact when fine contains coarse (after knot insertion or degree elevation,
 * or uniform mesh refinement for Lagrange): the function is unchanged.
 * @p coarse is not const: it is evaluated (see fea_space_evaluate()).
 * @retval FEA_ERR_INVALID_ARG when the spaces differ in kind or dimension, or
 *         fine does not contain coarse (other boxes or geometries, knots not
 *         nested, or functions that differ)
 * @retval FEA_ERR_UNSUPPORTED for spaces with several components (not yet)
 * @since 0.1.0
 */
FEA_API fea_status fea_space_transfer(fea_space *coarse, const double *coarse_coeffs,
                                      const fea_space *fine, double *fine_coeffs);

/**
 * @brief Destroy a space. Accepts NULL; sets `*space = NULL`.
 * Not marked warn-unused-result: it is called on cleanup paths.
 * @retval FEA_SUCCESS always; it cannot fail.
 * @since 0.1.0
 */
FEA_EXPORT fea_status fea_space_destroy(fea_space **space);

/** Facts about a space; initialize with FEA_SPACE_INFO_INIT. @since 0.1.0 */
typedef struct fea_space_info {
  size_t size;
  int dim;
  int is_bspline; /**< 1 for B-spline spaces, 0 for Lagrange */
  int degree[3];  /**< polynomial degree per direction */
  fea_index num_dofs;
  fea_index num_elements;
  int dofs_per_element;
  fea_index num_boundary_dofs;
  fea_index elements[3]; /**< elements per direction (B-splines and structured meshes), else 0 */
  /* Appended after 0.1.0 (callers built before see the scalar counts): */
  int num_components; /**< components per basis function (fea_space_set_num_components()) */
} fea_space_info;

/* clang-format off */
/** Initializer for fea_space_info. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_SPACE_INFO_INIT                                                                        \
  {                                                                                                \
    .size = sizeof(fea_space_info), .dim = 0, .is_bspline = 0, .degree = {0, 0, 0}, .num_dofs = 0, \
    .num_elements = 0, .dofs_per_element = 0, .num_boundary_dofs = 0, .elements = {0, 0, 0},      \
    .num_components = 1                                                                            \
  }
#else
#define FEA_SPACE_INFO_INIT                                             \
  {                                                                     \
    sizeof(fea_space_info), 0, 0, {0, 0, 0}, 0, 0, 0, 0, {0, 0, 0}, 1 \
  }
#endif
/* clang-format on */

/**
 * @brief Make @p space vector-valued: @p num_components components per basis function (a
 * displacement in 2D or 3D has dim), each in the scalar space.
 *
 * Set it after creating the space and before anything is built on it (a problem, a refined
 * space). The DoFs are then interleaved: DoF `c + num_components * i` is component c of the
 * scalar space's function i (docs/spaces.md says why), so num_dofs, dofs_per_element and the
 * boundary DoFs of fea_space_get_info() count every component, fea_space_get_element_dofs()
 * gives the element's functions with their components together (local `c + num_components * j`),
 * and with 1 component everything is as before. Spaces refined from a vector space
 * (fea_space_bspline_insert_knots(), _elevate_degree()) keep its components. What takes vector
 * spaces so far: fea_problem_create_elasticity(), fea_problem_create_poisson() with an
 * element_form, the reference assembly, the CSR operator and CG, the multifrontal solver,
 * error norms (fea_problem_error_norms_vector()), fea_space_write_vtu(), and an elasticity
 * solution's stresses (fea_problem_evaluate_stress(), fea_problem_write_vtu()), and multipatch
 * domains (fea_multipatch_create(), fea_multipatch_problem_create_elasticity()); the other
 * consumers of spaces refuse them
 * with FEA_ERR_UNSUPPORTED.
 * @retval FEA_ERR_INVALID_ARG for @p num_components outside 1..8
 * @retval FEA_ERR_STATE when an object is built on @p space already
 * @since 0.1.0
 */
FEA_API fea_status fea_space_set_num_components(fea_space *space, int num_components);

/**
 * @brief Fill @p info (whose .size the caller set).
 * @retval FEA_ERR_INVALID_ARG for an `info->size` outside the accepted sizes.
 * @since 0.1.0
 */
FEA_API fea_status fea_space_get_info(const fea_space *space, fea_space_info *info);

/**
 * @brief The DoFs of element @p e (dofs_per_element entries).
 * @retval FEA_ERR_INVALID_ARG for @p e outside [0, num_elements).
 * @since 0.1.0
 */
FEA_API fea_status fea_space_get_element_dofs(const fea_space *space, fea_index e, fea_index *dofs);

/**
 * @brief The sorted boundary DoFs (num_boundary_dofs entries).
 * @retval FEA_ERR_INVALID_ARG for a NULL @p dofs when there are boundary DoFs
 * @retval FEA_ERR_DIMENSION when @p capacity is below num_boundary_dofs
 * @since 0.1.0
 */
FEA_API fea_status fea_space_get_boundary_dofs(const fea_space *space, fea_index capacity,
                                               fea_index *dofs);

/**
 * @brief Knot vector of a B-spline space in direction @p dir.
 * @param[out] count the number of knots; @p knots may be NULL to ask only for it.
 * @retval FEA_ERR_INVALID_ARG for a Lagrange @p space or @p dir outside the
 *         space's directions
 * @retval FEA_ERR_DIMENSION when @p knots is given and @p capacity is below
 *         the number of knots (*count is set all the same)
 * @since 0.1.0
 */
FEA_API fea_status fea_space_bspline_get_knots(const fea_space *space, int dir, fea_index capacity,
                                               double *knots, fea_index *count);

/**
 * @brief Evaluate u_h = sum_i coeffs[i] phi_i and its gradient at points.
 *
 * @p space is not const: a Lagrange space on an unstructured or simplex mesh
 * builds its point-location grid on the first call and keeps it (calls on one
 * space from several threads are safe).
 * @param points npts * dim coordinates inside the domain
 * @param values npts results, or NULL
 * @param gradients npts * dim results, or NULL
 * @retval FEA_ERR_INVALID_ARG for a negative @p npts, a coordinate that is
 *         not finite, or a point outside the domain, naming the first such point
 * @retval FEA_ERR_UNSUPPORTED for a B-spline space mapped by a geometry (point
 *         location would need the inverse of the map), or a space with several components
 * @since 0.1.0
 */
FEA_API fea_status fea_space_evaluate(fea_space *space, const double *coeffs, fea_index npts,
                                      const double *points, double *values, double *gradients);

/**
 * @brief Write the function with @p coeffs on a B-spline space as a VTK XML UnstructuredGrid
 * (`.vtu`, ASCII) for ParaView: each element sampled at @p samples points per direction
 * (ends included) and drawn as (samples - 1)^dim linear cells through the space's geometry, so
 * a mapped patch appears with its shape; the values are the node field "u". Lagrange spaces
 * write their mesh with fea_mesh_write_vtu(). On a space with several components
 * (fea_space_set_num_components(), @p coeffs interleaved) "u" has them all, per node; two are
 * padded to three with a zero so that ParaView takes it as a vector ("Warp By Vector").
 * fea_problem_write_vtu() adds an elasticity solution's stresses.
 * @param samples 2..16 points per element and direction
 * @retval FEA_ERR_INVALID_ARG for @p samples outside 2..16, a NULL or empty @p path, NULL
 *         @p coeffs, or a coefficient that makes a sample not finite (the sample is named)
 * @retval FEA_ERR_UNSUPPORTED for a Lagrange space
 * @retval FEA_ERR_IO when the file cannot be opened or written
 * @since 0.1.0
 */
FEA_API fea_status fea_space_write_vtu(fea_space *space, const double *coeffs, int samples,
                                       const char *path);

/**
 * @brief Interpolant of @p g: nodal values for Lagrange, collocation at the
 * Greville points (tensor-product) for B-splines. Exact for functions of the space.
 * @retval FEA_ERR_INVALID_ARG when @p g returns a value that is not finite,
 *         naming the point
 * @retval FEA_ERR_UNSUPPORTED for a space with several components (g is scalar)
 * @retval FEA_ERR_UNSUPPORTED (B-splines) when the collocation system exceeds
 *         the 32-bit integers of LAPACK
 * @retval FEA_ERR_SINGULAR (B-splines) when LAPACK's banded LU finds the
 *         collocation matrix singular
 * @retval FEA_ERR_BACKEND (B-splines) when LAPACK rejects the system
 * @since 0.1.0
 */
FEA_API fea_status fea_space_interpolate(const fea_space *space, fea_scalar_fn g, void *user,
                                         double *coeffs);

/** How elements are colored so that elements of one color share no DoF. @since 0.1.0 */
typedef enum fea_coloring_method {
  FEA_COLORING_AUTO = 0, /**< Cartesian where the space is structured, else greedy */
  FEA_COLORING_CARTESIAN =
      1, /**< (c_0 mod m) + m (c_1 mod m) + ...: m = 2 for Lagrange, p+1 for B-splines */
  FEA_COLORING_GREEDY = 2 /**< greedy over the element-DoF incidence, any mesh */
} fea_coloring_method;

/**
 * @brief Color the elements: no two elements of one color share a DoF.
 * @param colors num_elements entries
 * @param[out] num_colors colors used
 * @retval FEA_ERR_INVALID_ARG for an unknown @p method
 * @retval FEA_ERR_UNSUPPORTED for FEA_COLORING_CARTESIAN on a space that is
 *         neither a B-spline space nor on a structured box mesh
 * @since 0.1.0
 */
FEA_API fea_status fea_space_color_elements(const fea_space *space, fea_coloring_method method,
                                            fea_index *colors, int *num_colors);

/**
 * @brief Check a coloring.
 * @retval FEA_ERR_INVALID_ARG naming an element with a negative color, or two
 *         elements of one color that share a DoF
 * @since 0.1.0
 */
FEA_API fea_status fea_space_check_coloring(const fea_space *space, const fea_index *colors);

FEA_END_DECLS

#endif /* FEACCEL_SPACE_H */
