/* The mesh object as the library sees it. */
#ifndef FEA_INTERNAL_MESH_H
#define FEA_INTERNAL_MESH_H

#include <feaccel/mesh.h>

#include "internal/object.h"

struct fea_mesh {
  FEA_OBJECT_HEADER; /* references: the creator plus every space built on it */
  int dim;           /* space dimension */
  fea_cell_type type;
  int nodes_per_cell;
  fea_index num_nodes;
  double *coords; /* num_nodes * dim */
  fea_index num_cells;
  fea_index *cells;   /* num_cells * nodes_per_cell */
  fea_index *parents; /* num_cells, or NULL when not made by refinement */
  /* Set for fea_mesh_create_structured only: its cells are lexicographic, which
   * Cartesian shortcuts (fea_coloring_cartesian) rely on. Uniform refinements
   * number coarse nodes first, so they are not marked structured. Entries of
   * n, lower, upper beyond dim are 1, 0, 1. */
  int structured;
  int simplices; /* structured: split into triangles or tetrahedra */
  fea_index n[3];
  double lower[3], upper[3];
  /* Structured with a point map: nodes are map(box node), so lower, upper and
   * n describe the box of parameters, not the cells' shape; shortcuts that
   * read cell sizes from the box (the multigrid stencil, sum factorization,
   * the prehandled solver) must not apply. */
  int mapped;
  /* Read from Gmsh: the boundary facets and their physical groups
   * (mesh-boundary.h), which problems name as boundary parts; NULL when the
   * file has no physical group of dimension dim - 1, and for other meshes. */
  struct fea_mesh_boundary *boundary;
};

/* Reference-corner bits (x + 2y + 4z) of local node l of an interval (l < 2),
 * quad (l < 4) or hexahedron (l < 8): {0, 1, 3, 2, 4, 5, 7, 6}. The table is
 * its own inverse. */
extern const int fea_cell_corner_bits[8];

/* Nodes per cell and topological dimension of a cell type (0 for an unknown type). */
int fea_cell_num_nodes(fea_cell_type type);
int fea_cell_dim(fea_cell_type type);
const char *fea_cell_name(fea_cell_type type);

/* Allocate an empty mesh holding a context reference, arrays sized, zeroed.
 * fea_object_release frees it when the last reference goes. */
fea_status fea_mesh_alloc(fea_context *ctx, int dim, fea_cell_type type, fea_index num_nodes,
                          fea_index num_cells, fea_mesh **out);

/* The work behind the public functions of mesh.h, on arguments the interface
 * layer (src/interface/api-mesh.c) has validated. Each builds a whole mesh or
 * nothing. */
fea_status fea_mesh_build_structured(fea_context *ctx, const fea_mesh_desc *desc, fea_mesh **out);
/* The structured mesh of fine's box with half its cells per direction (every
 * fine n[k] even), the same simplex split; for a mapped fine mesh its nodes
 * are fine's at even grid positions, i.e. the same map at the coarse box
 * nodes, and its cells are checked (a coarse cell of a curved map may be
 * inverted where the fine ones are not). */
fea_status fea_mesh_build_coarse(const fea_mesh *fine, fea_mesh **out);
/* The mesh of the given (checked) nodes and cells, its cells checked for
 * orientation and degeneracy. */
fea_status fea_mesh_build_from_arrays(fea_context *ctx, int dim, fea_cell_type type,
                                      fea_index num_nodes, const double *coords,
                                      fea_index num_cells, const fea_index *cells, fea_mesh **out);
fea_status fea_mesh_build_refined(const fea_mesh *coarse, fea_mesh **fine);
fea_status fea_mesh_gmsh_read(fea_context *ctx, const char *path, fea_mesh **out);
fea_status fea_mesh_vtu_write(const fea_mesh *mesh, const char *path, int num_fields,
                              const fea_field *fields);

/* Signed measure of cell c (length, area, volume; for quads and hexes the
 * Jacobian determinant is checked at every corner): FEA_ERR_INVALID_ARG naming
 * the cell when a cell is inverted or degenerate. */
fea_status fea_mesh_check_cells(const fea_mesh *mesh);

/* What is wrong with cell c ("is inverted: signed area -0.5"), written to msg;
 * returns 0 (msg untouched) when the cell is valid. For callers that report a
 * bad cell in their own terms (the Gmsh reader names the file line). */
int fea_mesh_cell_problem(const fea_mesh *mesh, fea_index c, char *msg, size_t len);

/* The window of cell measures h^d the library computes in: element
 * integrals (h^d), gradients (1/h) and the squares of norms built from them
 * stay normal doubles inside it. 3D cells may be 1e-50 .. 1e50 wide. */
#define FEA_CELL_MIN_MEASURE 1e-150
#define FEA_CELL_MAX_MEASURE 1e150
/* Whether a cell of size h in ndir directions leaves that window: 0, or 1
 * with "has size ...: ..." in msg. */
int fea_cell_scale_problem(double h, int ndir, char *msg, size_t len);

/* "quad 4 9 10 5": the cell's type and node numbers, as messages show it. */
int fea_mesh_format_cell(const fea_mesh *mesh, fea_index c, char *buf, size_t len);

#endif
