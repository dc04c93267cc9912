/* Lagrange reference elements: 1D node sets and bases, the shape functions of
 * the reference cells, and the linear geometry map of a mesh cell (the P1/Q1
 * shape functions on its vertices). Pure functions on caller memory.
 *
 * Reference cells: [0,1]^d for intervals, quads and hexahedra; the unit
 * simplex {xi_k >= 0, sum xi_k <= 1} for triangles and tetrahedra, its
 * vertices 0, e_1, e_2 (, e_3) being the cell's vertices in mesh order.
 *
 * Local order of the shape functions:
 * - intervals, quads, hexahedra (Q_p): lexicographic over the (p+1)^d tensor
 *   nodes, direction 0 fastest: i = a_0 + (p+1) (a_1 + (p+1) a_2), node
 *   (x1d[a_0], x1d[a_1], x1d[a_2]). Sum factorization relies on this.
 * - triangles and tetrahedra (P1, P2): the vertices in mesh order, then (P2)
 *   the midpoints of the edges in the order of fea_triangle_edges /
 *   fea_tetrahedron_edges. */
#ifndef FEA_INTERNAL_LAGRANGE_H
#define FEA_INTERNAL_LAGRANGE_H

#include <feaccel/mesh.h>
#include <feaccel/space.h>

#define FEA_LAGRANGE_MAX_ORDER 6
#define FEA_LAGRANGE_MAX_BASIS 343 /* hexahedron Q6: 7^3 */
#define FEA_CELL_MAX_VERTICES 8

/* Edges of the simplices as pairs of vertices (mesh order). */
extern const int fea_triangle_edges[3][2];    /* (0,1) (1,2) (2,0) */
extern const int fea_tetrahedron_edges[6][2]; /* (0,1) (1,2) (2,0) (0,3) (1,3) (2,3) */

/* The vertex (mesh order) at corner c of [0,1]^dim, where bit k of c is the
 * corner's coordinate in direction k: the lexicographic corners of the tensor
 * cells mapped to the node order of mesh.h (quads and hexahedra list their
 * vertices around the face, not lexicographically). */
int fea_tensor_corner_vertex(int dim, int c);

/* The p + 1 nodes of degree p (1..6) on [0, 1], ascending and exactly
 * mirror-symmetric (x[p - i] == 1 - x[i]), so that an edge read from either
 * end meets the same nodes. Equispaced: i / p. Gauss-Lobatto: the ends and
 * the roots of P'_p (Legendre), by Newton's method. */
fea_status fea_lagrange_nodes_1d(int p, fea_lagrange_nodes kind, double *x);

/* Values val[i] and derivatives der[i] at t of the p + 1 Lagrange polynomials
 * on the distinct nodes x[0..p]; der may be NULL. */
void fea_lagrange_basis_1d(int p, const double *x, double t, double *val, double *der);

/* A reference element: its shape functions and nodes. */
typedef struct fea_lagrange_element {
  fea_cell_type cell;
  int dim; /* of the reference cell */
  int order;
  int nb;                                   /* shape functions (= nodes) */
  int tensor;                               /* 1 for intervals, quads and hexahedra */
  double x1d[FEA_LAGRANGE_MAX_ORDER + 1];   /* tensor cells: the 1D nodes */
  double nodes[FEA_LAGRANGE_MAX_BASIS * 3]; /* nb * dim reference coordinates */
  /* For node i, the vertices (bit v: vertex v in mesh order) of the smallest
   * closed entity of the cell holding it: one bit for a vertex node, two for
   * an edge, four for a quad face, all for a cell-interior node. A node lies on
   * a facet exactly when its mask is inside the facet's. */
  unsigned char vmask[FEA_LAGRANGE_MAX_BASIS];
} fea_lagrange_element;

/* order: 1..6 on intervals, quads, hexahedra; 1..2 on triangles and
 * tetrahedra (where both node kinds give the same nodes). */
fea_status fea_lagrange_element_init(fea_cell_type cell, int order, fea_lagrange_nodes kind,
                                     fea_lagrange_element *el);

/* Shape functions phi[i] and reference gradients dphi[i * dim + k] =
 * d phi_i / d xi_k at the reference point xi; either output may be NULL. */
void fea_lagrange_element_eval(const fea_lagrange_element *el, const double *xi, double *phi,
                               double *dphi);

/* The linear geometry of a cell from its vertices (mesh order, gdim
 * coordinates each, gdim >= the cell's dimension d): x(xi) (gdim values) and,
 * when J is not NULL, J[i * d + k] = d x_i / d xi_k. Affine for intervals and
 * simplices, multilinear for quads and hexahedra. */
void fea_cell_map(fea_cell_type cell, int gdim, const double *verts, const double *xi, double *x,
                  double *J);

/* Reference coordinates xi of the physical point x in a cell of its own
 * dimension (affine inverse, or Newton's method for multilinear cells).
 * Returns 1 when x lies in the cell up to tol in reference coordinates (xi is
 * then moved onto the reference cell), else 0 (xi undefined). */
int fea_cell_map_inverse(fea_cell_type cell, const double *verts, const double *x, double tol,
                         double *xi);

/* Determinant of the d x d row-major matrix A (d = 1..3) and, when it is not
 * zero and Ainv is not NULL, the inverse. */
double fea_small_inverse(int d, const double *A, double *Ainv);

/* The reference element of a Lagrange space and its DoF points (num_dofs *
 * mesh dim coordinates); NULL for other kinds of space. For kernels that work
 * on the tensor structure (sum factorization) and for tests. */
const fea_lagrange_element *fea_space_lagrange_element(const fea_space *s);
const double *fea_space_lagrange_dof_coords(const fea_space *s);

/* The facets of a cell type, numbered as the Lagrange space numbers them
 * (space-lagrange.c): their count, and facet f's vertices (mesh order; the
 * count, 0 for an f out of range). A quad face lists its corners (0,0)
 * (1,0) (0,1) (1,1) in its own axes, so its vertices 0, 1 and 2 span it, as
 * they do an edge's (0, 1) or a triangle's. */
int fea_cell_num_facets(fea_cell_type type);
int fea_cell_facet_vertices(fea_cell_type type, int f, int v[4]);
/* A Lagrange space's boundary facets (held by one cell only) as codes
 * c * fea_cell_num_facets + f, ascending, and their count; NULL for other
 * kinds of space. */
const fea_index *fea_space_lagrange_boundary_facets(const fea_space *s, fea_index *count);

#endif
