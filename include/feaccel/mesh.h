/**
 * @file mesh.h
 * @brief Meshes: structured boxes, unstructured arrays, uniform refinement, Gmsh input, VTK output.
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
 */
#ifndef FEACCEL_MESH_H
#define FEACCEL_MESH_H

#include <feaccel/export.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** Opaque mesh. */
typedef struct fea_mesh fea_mesh;

/** Cell types. */
typedef enum fea_cell_type {
  FEA_CELL_INTERVAL = 1,
  FEA_CELL_TRIANGLE = 2,
  FEA_CELL_QUAD = 3,
  FEA_CELL_TETRAHEDRON = 4,
  FEA_CELL_HEXAHEDRON = 5
} fea_cell_type;

/** Options of a structured mesh; initialize with FEA_MESH_DESC_INIT. */
typedef struct fea_mesh_desc {
  size_t size;     /**< sizeof(fea_mesh_desc) as compiled by the caller */
  int dim;         /**< 1, 2 or 3 */
  fea_index n[3];  /**< cells per direction (>= 1); entries beyond dim are ignored */
  double lower[3]; /**< box corner, default 0 */
  double upper[3]; /**< opposite corner, default 1; upper > lower in each used direction */
  int simplices; /**< 0: intervals/quads/hexes; 1: each quad as 2 triangles, each hex as 6 tetrahedra */
} fea_mesh_desc;

/** Initializer: the unit square with one cell. */
#define FEA_MESH_DESC_INIT \
  { sizeof(fea_mesh_desc), 2, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 0 }

/**
 * @brief Cartesian mesh of the box [lower, upper] with n[k] cells in direction k.
 *
 * Nodes are numbered lexicographically, x fastest; cells likewise. With
 * `simplices`, cell (i,j[,k]) of the box mesh becomes cells 2c, 2c+1 (2D) or
 * 6c .. 6c+5 (3D, Kuhn subdivision along the main diagonal), so the mesh is conforming.
 */
FEA_API fea_status fea_mesh_create_structured(fea_context *ctx, const fea_mesh_desc *desc,
                                              fea_mesh **out);

/**
 * @brief Mesh from arrays, copied.
 * @param dim space dimension (1..3), at least the cell's dimension
 * @param coords num_nodes * dim coordinates, node by node; no NaN or infinity
 * @param cells num_cells * nodes-per-cell node indices in [0, num_nodes), in the order of the table above
 * @return FEA_ERR_INVALID_ARG for bad indices or coordinates, and for inverted
 *         or degenerate cells (zero or negative measure), naming the cell.
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
 * build nested hierarchies. Tetrahedral meshes are not refined (FEA_ERR_UNSUPPORTED).
 */
FEA_API fea_status fea_mesh_refine_uniform(const fea_mesh *coarse, fea_mesh **fine);

/** @brief Destroy a mesh (spaces keep it alive while they use it). Accepts NULL; sets `*mesh = NULL`. */
FEA_EXPORT fea_status fea_mesh_destroy(fea_mesh **mesh);

/** @brief Space dimension, cell type and counts. Any output pointer may be NULL. */
FEA_API fea_status fea_mesh_get_info(const fea_mesh *mesh, int *dim, fea_cell_type *type,
                                     fea_index *num_nodes, fea_index *num_cells);

/** @brief Copy the coordinates (num_nodes * dim doubles) into @p coords. */
FEA_API fea_status fea_mesh_get_coordinates(const fea_mesh *mesh, fea_index capacity,
                                            double *coords);

/** @brief Copy the connectivity (num_cells * nodes-per-cell indices) into @p cells. */
FEA_API fea_status fea_mesh_get_cells(const fea_mesh *mesh, fea_index capacity, fea_index *cells);

/**
 * @brief Parent cell of each cell in the coarser mesh it was refined from.
 * @return FEA_ERR_STATE when the mesh was not made by fea_mesh_refine_uniform().
 */
FEA_API fea_status fea_mesh_get_parents(const fea_mesh *mesh, fea_index capacity,
                                        fea_index *parents);

/**
 * @brief Read a Gmsh `.msh` file, format 4.1 ASCII.
 *
 * The cells of the highest dimension present become the mesh (lower-dimensional
 * boundary entities are skipped); node tags are renumbered densely. Only one
 * cell type per mesh. Errors are FEA_ERR_IO with the line number, e.g.
 * `"mesh.msh:57: node tag 912 is not defined"`.
 */
FEA_API fea_status fea_mesh_read_gmsh(fea_context *ctx, const char *path, fea_mesh **out);

/** Where a field's values live. */
typedef enum fea_field_location { FEA_FIELD_NODE = 0, FEA_FIELD_CELL = 1 } fea_field_location;

/** A named field for output; values are location-count * components doubles. */
typedef struct fea_field {
  const char *name;
  fea_field_location location;
  int components; /**< 1 (scalar) .. 9 */
  const double *values;
} fea_field;

/**
 * @brief Write the mesh and fields as VTK XML UnstructuredGrid (`.vtu`, ASCII) for ParaView.
 */
FEA_API fea_status fea_mesh_write_vtu(const fea_mesh *mesh, const char *path, int num_fields,
                                      const fea_field *fields);

FEA_END_DECLS

#endif /* FEACCEL_MESH_H */
