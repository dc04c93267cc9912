/* Cartesian meshes of a box: lexicographic nodes and cells (x fastest), cut
 * into simplices on request. */
#include "error.h"
#include "mesh.h"

/* The square cut along its diagonal (0,0)-(1,1): both triangles counter-clockwise. */
static const int triangle_corners[2][3] = {{0, 1, 3}, {0, 3, 2}};
/* Kuhn subdivision: one tetrahedron per path from corner 0 to corner 7 along
 * the axes (x, y, z in each order), so all six share the diagonal 0-7 and each
 * face of the cube is cut along its diagonal from its lowest to its highest
 * corner; neighbouring cubes therefore agree (the mesh is conforming). For
 * the three odd axis orders the middle two nodes are swapped, so that every
 * tetrahedron is positively oriented. */
static const int kuhn_corners[6][4] = {
    {0, 1, 3, 7}, /* x y z */
    {0, 5, 1, 7}, /* x z y, swapped */
    {0, 3, 2, 7}, /* y x z, swapped */
    {0, 2, 6, 7}, /* y z x */
    {0, 4, 5, 7}, /* z x y */
    {0, 6, 4, 7}, /* z y x, swapped */
};

fea_status fea_mesh_build_structured(fea_context *ctx, const fea_mesh_desc *d, fea_mesh **out) {
  const int dim = d->dim;
  fea_index n[3] = {1, 1, 1}, nodes = 1, boxes = 1; /* unused directions: one layer */
  for (int k = 0; k < dim; k++) {
    n[k] = d->n[k];
    nodes *= n[k] + 1;
    boxes *= n[k];
  }
  static const fea_cell_type box_type[4] = {0, FEA_CELL_INTERVAL, FEA_CELL_QUAD,
                                            FEA_CELL_HEXAHEDRON};
  fea_cell_type type = box_type[dim];
  int per_box = 1;
  if (d->simplices) {
    type = dim == 2 ? FEA_CELL_TRIANGLE : FEA_CELL_TETRAHEDRON;
    per_box = dim == 2 ? 2 : 6;
  }
  fea_mesh *m;
  FEA_CALL(fea_mesh_alloc(ctx, dim, type, nodes, boxes * per_box, &m));

  /* Node i along direction k sits at (lower (n - i) + upper i) / n, which is
   * exactly lower at i = 0 and exactly upper at i = n. */
  const fea_index stride[3] = {1, n[0] + 1, (n[0] + 1) * (n[1] + 1)};
  for (fea_index v = 0; v < nodes; v++)
    for (int k = 0; k < dim; k++) {
      fea_index i = (v / stride[k]) % (n[k] + 1);
      m->coords[v * dim + k] = (d->lower[k] * (double)(n[k] - i) + d->upper[k] * (double)i) /
                               (double)n[k];
    }

  const int npc = m->nodes_per_cell;
  fea_index *cell = m->cells;
  for (fea_index b = 0; b < boxes; b++) {
    const fea_index i = b % n[0], j = (b / n[0]) % n[1], k = b / (n[0] * n[1]);
    fea_index corner[8]; /* node of each reference corner, by bits x + 2y + 4z */
    for (int c = 0; c < 8; c++)
      corner[c] = (i + (c & 1)) + stride[1] * (j + ((c >> 1) & 1)) + stride[2] * (k + (c >> 2));
    for (int s = 0; s < per_box; s++, cell += npc)
      for (int l = 0; l < npc; l++)
        cell[l] = corner[!d->simplices ? fea_cell_corner_bits[l]
                         : dim == 2    ? triangle_corners[s][l]
                                       : kuhn_corners[s][l]];
  }

  m->structured = 1;
  m->simplices = d->simplices != 0;
  for (int k = 0; k < 3; k++) { /* beyond dim: one cell of [0, 1], so products stay right */
    m->n[k] = n[k];
    m->lower[k] = k < dim ? d->lower[k] : 0.0;
    m->upper[k] = k < dim ? d->upper[k] : 1.0;
  }
  *out = m;
  return FEA_SUCCESS;
}
