/**
 * @file mesh.h
 * @brief Meshes: structured boxes (optionally mapped onto a curved domain), unstructured arrays,
 * uniform refinement, Gmsh input, VTK output.
 *
 * Cells and their node order (the Gmsh and VTK order for linear cells):
 *
 * | type                | nodes | order |
 * |---------------------|-------|-------|
 * | FEA_CELL_INTERVAL   | 2     | left, right |
 * | FEA_CELL_TRIANGLE   | 3     | counter-clockwise |
 * | FEA_CELL_QUAD       | 4     | (0,0) (1,0) (1,1) (0,1) of the reference square |
 * | FEA_CELL_TETRAHEDRON| 4     | positive orientation: (v1-v0, v2-v0, v3-v0) right-handed |
 * | FEA_CELL_HEXAHEDRON | 8     | bottom face counter-clockwise, then the top face above it |
 *
 * Meshes live on the host; they are shared read-only by the spaces built on them.
 *
 * @par Errors common to this header
 * Every function here that returns fea_status returns FEA_SUCCESS when it did
 * its job. Except fea_mesh_destroy(), each also returns FEA_ERR_INVALID_ARG
 * when the context, mesh or an output pointer it needs is NULL, and each that
 * makes a mesh returns FEA_ERR_OUT_OF_MEMORY when an allocation fails. The
 * other codes are listed under each function.
 */
#ifndef FEACCEL_MESH_H
#define FEACCEL_MESH_H

#include <feaccel/export.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** Opaque mesh. @since 0.1.0 */
typedef struct fea_mesh fea_mesh;

/** Cell types. @since 0.1.0 */
typedef enum fea_cell_type {
  FEA_CELL_INTERVAL = 1,
  FEA_CELL_TRIANGLE = 2,
  FEA_CELL_QUAD = 3,
  FEA_CELL_TETRAHEDRON = 4,
  FEA_CELL_HEXAHEDRON = 5
} fea_cell_type;

/**
 * @brief A point map of a structured mesh: writes into @p x the physical
 * coordinates of the point @p xi of the box [lower, upper].
 *
 * Both have the mesh's dim coordinates. The map should be smooth and
 * orientation-preserving (a positive Jacobian determinant) on the whole box,
 * e.g. polar coordinates (r, theta) -> (r cos theta, r sin theta) on
 * [1, 2] x [0, pi/2] for the quarter annulus. It is called only during
 * fea_mesh_create_structured(), once per node on the calling thread; a
 * NaN or infinite output is how it reports a point it cannot map.
 * @since 0.1.0
 */
typedef void (*fea_point_map_fn)(const double *xi, double *x, void *user);

/** Options of a structured mesh; initialize with FEA_MESH_DESC_INIT. @since 0.1.0 */
typedef struct fea_mesh_desc {
  size_t size;     /**< sizeof(fea_mesh_desc) as compiled by the caller */
  int dim;         /**< 1, 2 or 3 */
  fea_index n[3];  /**< cells per direction (>= 1); entries beyond dim are ignored */
  double lower[3]; /**< box corner, default 0 */
  double upper[3]; /**< opposite corner, default 1; upper > lower in each used direction */
  int simplices; /**< 0: intervals/quads/hexes; 1: each quad as 2 triangles, each hex as 6 tetrahedra */
  /** NULL (default): the nodes are the box's. Else every node is placed at
   *  map(box node) and the cells join the mapped nodes: multilinear quads and
   *  hexes, affine simplices (docs/meshes.md, "Mapped structured meshes"). */
  fea_point_map_fn map;
  void *map_user; /**< passed to @p map as its last argument */
} fea_mesh_desc;

/** Initializer: the unit square with one cell, not mapped. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_MESH_DESC_INIT                                                       \
  {                                                                              \
    .size = sizeof(fea_mesh_desc), .dim = 2, .n = {1, 1, 1}, .lower = {0, 0, 0}, \
    .upper = {1, 1, 1}, .simplices = 0, .map = NULL, .map_user = NULL            \
  }
#else
#define FEA_MESH_DESC_INIT \
  { sizeof(fea_mesh_desc), 2, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 0, NULL, NULL }
#endif

/**
 * @brief Cartesian mesh of the box [lower, upper] with n[k] cells in direction k.
 *
 * Nodes are numbered lexicographically, x fastest; cells likewise. With
 * `simplices`, cell (i,j[,k]) of the box mesh becomes cells 2c, 2c+1 (2D) or
 * 6c .. 6c+5 (3D, Kuhn subdivision along the main diagonal), so the mesh is conforming.
 *
 * With a point map (`desc->map`) node v is placed at map(box node v) and the
 * cells keep the box's connectivity: quads and hexes are then the
 * multilinear (isoparametric Q1) cells through the mapped corners and
 * simplices the affine ones, so a curved domain is approximated to O(h^2),
 * which keeps the convergence orders of Q1 and P1 elements. Such a mesh is
 * still structured (Cartesian coloring, multigrid on it; its coarse levels
 * are the same map on coarser boxes), but shortcuts that need box cells
 * (one element matrix for all cells, sum factorization, the prehandled
 * solver) do not apply to it.
 * @retval FEA_ERR_INVALID_ARG for a `desc->size` outside the accepted sizes,
 *         dim outside 1..3, simplices not 0 or 1 (or 1 with dim 1), an n[k]
 *         below 1, or a box side that is not finite with lower < upper; with a
 *         map, a mapped node that is not finite (naming the node and its box
 *         coordinates) and an inverted or degenerate mapped cell (naming the
 *         cell, its box cell and the offending Jacobian determinant or measure)
 * @retval FEA_ERR_OUT_OF_MEMORY when the node count is too large to address
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_create_structured(fea_context *ctx, const fea_mesh_desc *desc,
                                              fea_mesh **out);

/**
 * @brief Mesh from arrays, copied.
 * @param dim space dimension (1..3), at least the cell's dimension
 * @param coords num_nodes * dim coordinates, node by node; no NaN or infinity
 * @param cells num_cells * nodes-per-cell node indices in [0, num_nodes), in the order of the table above
 * @retval FEA_ERR_INVALID_ARG for an unknown @p type, @p dim outside 1..3 or
 *         below the cell's dimension, counts below 1, NULL arrays, a coordinate
 *         that is not finite, a node index outside [0, num_nodes) or repeated
 *         in a cell, and for inverted or degenerate cells (zero or negative
 *         measure), naming the cell
 * @retval FEA_ERR_OUT_OF_MEMORY for counts above 2^56, too many to address
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_create_from_arrays(fea_context *ctx, int dim, fea_cell_type type,
                                               fea_index num_nodes, const double *coords,
                                               fea_index num_cells, const fea_index *cells,
                                               fea_mesh **out);

/**
 * @brief Uniform refinement: interval → 2, triangle → 4, quad → 4, hex → 8 cells.
 *
 * The fine mesh keeps the coarse nodes first, with the same numbers, and
 * records each fine cell's parent (fea_mesh_get_parents()), so refinements
 * build nested hierarchies. The boundary facets of a mesh read from Gmsh are
 * split with the cells, each child in its parent's physical groups
 * (fea_mesh_get_boundary_groups()). New nodes lie on the coarse cells' own
 * (multi)linear geometry, also for a mesh made with a point map: the map is
 * not called again, so the refined mesh covers the same polygonal domain
 * (for nodes on the curved domain, make the structured mesh with more cells).
 * @retval FEA_ERR_UNSUPPORTED for a tetrahedral mesh, which is not refined
 * @retval FEA_ERR_OUT_OF_MEMORY when the fine mesh is too large to address
 *         or its allocation fails
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_refine_uniform(const fea_mesh *coarse, fea_mesh **fine);

/**
 * @brief Destroy a mesh (spaces keep it alive while they use it). Accepts NULL; sets `*mesh = NULL`.
 * Not marked warn-unused-result: it is called on cleanup paths.
 * @retval FEA_SUCCESS always; it cannot fail.
 * @since 0.1.0
 */
FEA_EXPORT fea_status fea_mesh_destroy(fea_mesh **mesh);

/**
 * @brief Space dimension, cell type and counts. Any output pointer may be NULL.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p mesh.
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_get_info(const fea_mesh *mesh, int *dim, fea_cell_type *type,
                                     fea_index *num_nodes, fea_index *num_cells);

/**
 * @brief Copy the coordinates (num_nodes * dim doubles) into @p coords.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p coords
 * @retval FEA_ERR_DIMENSION when @p capacity is below num_nodes * dim
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_get_coordinates(const fea_mesh *mesh, fea_index capacity,
                                            double *coords);

/**
 * @brief Copy the connectivity (num_cells * nodes-per-cell indices) into @p cells.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p cells
 * @retval FEA_ERR_DIMENSION when @p capacity is below num_cells * nodes-per-cell
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_get_cells(const fea_mesh *mesh, fea_index capacity, fea_index *cells);

/**
 * @brief Parent cell of each cell in the coarser mesh it was refined from.
 * @retval FEA_ERR_STATE when the mesh was not made by fea_mesh_refine_uniform()
 * @retval FEA_ERR_INVALID_ARG for a NULL @p parents
 * @retval FEA_ERR_DIMENSION when @p capacity is below num_cells
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_get_parents(const fea_mesh *mesh, fea_index capacity,
                                        fea_index *parents);

/**
 * @brief Read a Gmsh `.msh` file, format 4.1 ASCII.
 *
 * The cells of the highest dimension present become the mesh; node tags are
 * renumbered densely. Only one cell type per mesh. When the file has physical
 * groups one dimension below the cells (curves of a 2D mesh, surfaces of a 3D
 * one), the elements of that dimension are kept as boundary facets with their
 * groups and names ($Entities, $PhysicalNames), for fea_problem_desc.parts
 * (fea_mesh_get_boundary_groups()); other lower-dimensional elements are
 * skipped. Errors about the file's content name its line, e.g.
 * `"mesh.msh:57: node tag 912 is not defined"`.
 * @retval FEA_ERR_INVALID_ARG for a NULL or empty @p path
 * @retval FEA_ERR_IO when the file cannot be opened or read, is not a
 *         regular file, or its content is malformed: syntax, counts, undefined
 *         or repeated tags, missing sections, an unknown element type number,
 *         no cells of dimension 1 to 3, a 2D mesh outside a plane z = const
 *         (1D: a line), inverted or degenerate cells, an entity or a
 *         physical name defined twice, a tag outside 1..INT_MAX
 * @retval FEA_ERR_UNSUPPORTED for well-formed input libfeaccel cannot
 *         represent: a format version other than 4.1, binary files, Gmsh
 *         element types other than linear lines, triangles, quadrangles,
 *         tetrahedra and hexahedra (e.g. second order), two cell types of the
 *         top dimension, and node or element tags so sparse that they need
 *         renumbering
 * @retval FEA_ERR_OUT_OF_MEMORY when an allocation fails
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_read_gmsh(fea_context *ctx, const char *path, fea_mesh **out);

/**
 * @brief The physical groups of a mesh's boundary facets (kept by fea_mesh_read_gmsh() for
 * the groups one dimension below the cells, split by fea_mesh_refine_uniform()), which
 * fea_problem_desc.parts names.
 *
 * Call with @p capacity 0 to learn the count. A mesh not read from Gmsh, or read from a file
 * without such groups, has none.
 * @param capacity entries of @p tags and @p num_facets
 * @param[out] tags the groups' physical tags, ascending (NULL allowed when capacity is 0)
 * @param[out] num_facets the number of facets in each group, or NULL
 * @param[out] count the number of groups, written also when capacity is too small
 * @retval FEA_ERR_INVALID_ARG for a NULL @p count, a negative @p capacity, or a NULL
 *         @p tags with capacity > 0
 * @retval FEA_ERR_DIMENSION when @p capacity is positive but below the number of groups
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_get_boundary_groups(const fea_mesh *mesh, int capacity, int *tags,
                                                fea_index *num_facets, int *count);

/**
 * @brief The name ($PhysicalNames) of boundary group @p tag, or NULL when it has none; the
 * string lives as long as the mesh.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p name, or a @p tag that is not a boundary group
 *         of the mesh (naming the tag)
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_get_boundary_group_name(const fea_mesh *mesh, int tag,
                                                    const char **name);

/** Where a field's values live. @since 0.1.0 */
typedef enum fea_field_location { FEA_FIELD_NODE = 0, FEA_FIELD_CELL = 1 } fea_field_location;

/** A named field for output; values are location-count * components doubles. @since 0.1.0 */
typedef struct fea_field {
  const char *name;
  fea_field_location location;
  int components; /**< 1 (scalar) .. 9 */
  const double *values;
} fea_field;

/**
 * @brief Write the mesh and fields as VTK XML UnstructuredGrid (`.vtu`, ASCII) for ParaView.
 * @retval FEA_ERR_INVALID_ARG for a NULL or empty @p path, a negative
 *         @p num_fields, NULL @p fields with num_fields > 0, a field without a
 *         name or with a control character in it, two fields of one location
 *         with the same name, an unknown location, components outside 1..9,
 *         NULL values, or a value that is not finite (VTK cannot read it)
 * @retval FEA_ERR_IO when the file cannot be opened or written
 * @since 0.1.0
 */
FEA_API fea_status fea_mesh_write_vtu(const fea_mesh *mesh, const char *path, int num_fields,
                                      const fea_field *fields);

FEA_END_DECLS

#endif /* FEACCEL_MESH_H */
