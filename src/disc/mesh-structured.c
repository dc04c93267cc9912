/* Cartesian meshes of a box: lexicographic nodes and cells (x fastest), cut
 * into simplices on request, their nodes optionally moved by a point map;
 * and the coarser mesh of such a mesh that multigrid levels are made of. */
#include <math.h>
#include <stdio.h>

#include "internal/error.h"
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

/* "(0.5, 1.25)": the first dim entries of x, as messages show a point. */
static void format_point(const double *x, int dim, char *buf, size_t len) {
  int used = snprintf(buf, len, "(");
  for (int k = 0; k < dim && used >= 0 && (size_t)used < len; k++)
    used += snprintf(buf + used, len - (size_t)used, "%s%.17g", k ? ", " : "", x[k]);
  if (used >= 0 && (size_t)used < len) snprintf(buf + used, len - (size_t)used, ")");
}

/* The cells of a mapped structured mesh, checked like those of any mesh
 * (fea_mesh_cell_problem: orientation, degeneracy, size), but named also by
 * their box cell: a bad cell is where the map folds or is too curved for
 * the cell count, which the box position tells the map's author. `where`
 * says which mesh ("" or " of the coarse mesh ..."). */
static fea_status check_mapped_cells(const fea_mesh *m, const char *where) {
  const int per_box = !m->simplices ? 1 : m->dim == 2 ? 2 : 6;
  char why[256], cell[160];
  for (fea_index c = 0; c < m->num_cells; c++) {
    if (!fea_mesh_cell_problem(m, c, why, sizeof why)) continue;
    fea_mesh_format_cell(m, c, cell, sizeof cell);
    const fea_index b = c / per_box;
    fea_index ijk[3] = {b % m->n[0], (b / m->n[0]) % m->n[1], b / (m->n[0] * m->n[1])};
    char box[80];
    int used = snprintf(box, sizeof box, "(");
    for (int k = 0; k < m->dim; k++)
      used += snprintf(box + used, sizeof box - (size_t)used, "%s%lld", k ? ", " : "",
                       (long long)ijk[k]);
    snprintf(box + used, sizeof box - (size_t)used, ")");
    return FEA_ERROR(m->ctx, FEA_ERR_INVALID_ARG,
                     "cell %lld (%s, box cell %s)%s %s; a point map must be "
                     "orientation-preserving and smooth on the scale of the cells",
                     (long long)c, cell, box, where, why);
  }
  return FEA_SUCCESS;
}

/* Move every node of the box mesh m to map(node), refusing a non-finite
 * image by the node and its box coordinates. The output starts as NaN, so a
 * map that leaves a coordinate unwritten is refused too. */
static fea_status apply_map(fea_mesh *m, const fea_mesh_desc *d) {
  const int dim = m->dim;
  for (fea_index v = 0; v < m->num_nodes; v++) {
    double xi[3] = {0, 0, 0}, x[3] = {NAN, NAN, NAN};
    for (int k = 0; k < dim; k++) xi[k] = m->coords[v * dim + k];
    d->map(xi, x, d->map_user);
    for (int k = 0; k < dim; k++)
      if (!isfinite(x[k])) {
        char at[96], to[96];
        format_point(xi, dim, at, sizeof at);
        format_point(x, dim, to, sizeof to);
        return FEA_ERROR(m->ctx, FEA_ERR_INVALID_ARG,
                         "the point map sends node %lld (box point %s) to %s: coordinate %d is "
                         "not finite",
                         (long long)v, at, to, k);
      }
    for (int k = 0; k < dim; k++) m->coords[v * dim + k] = x[k];
  }
  m->mapped = 1;
  return check_mapped_cells(m, "");
}

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
  if (d->map) {
    fea_status st = apply_map(m, d);
    if (st != FEA_SUCCESS) {
      fea_object_release(m);
      return st;
    }
  }
  *out = m;
  return FEA_SUCCESS;
}

fea_status fea_mesh_build_coarse(const fea_mesh *fine, fea_mesh **out) {
  *out = NULL;
  const int dim = fine->dim;
  fea_mesh_desc d = FEA_MESH_DESC_INIT;
  d.dim = dim;
  d.simplices = fine->simplices;
  for (int k = 0; k < 3; k++) {
    FEA_CHECK(k >= dim || fine->n[k] % 2 == 0, fine->ctx, FEA_ERR_INVALID_ARG,
              "direction %d has %lld cells, an odd count that cannot be halved", k,
              (long long)fine->n[k]);
    d.n[k] = k < dim ? fine->n[k] / 2 : 1;
    d.lower[k] = fine->lower[k];
    d.upper[k] = fine->upper[k];
  }
  fea_mesh *m;
  FEA_CALL(fea_mesh_build_structured(fine->ctx, &d, &m));
  if (!fine->mapped) {
    *out = m;
    return FEA_SUCCESS;
  }
  /* Coarse node p is fine node 2p, the same box point: the fine mesh's
   * coordinates are the map's values there, so the map need not be kept (nor
   * its user data stay valid) after fea_mesh_create_structured. */
  const fea_index fs[3] = {1, fine->n[0] + 1, (fine->n[0] + 1) * (fine->n[1] + 1)};
  const fea_index cs[3] = {1, m->n[0] + 1, (m->n[0] + 1) * (m->n[1] + 1)};
  for (fea_index v = 0; v < m->num_nodes; v++) {
    fea_index f = 0;
    for (int k = 0; k < dim; k++) f += 2 * ((v / cs[k]) % (m->n[k] + 1)) * fs[k];
    for (int k = 0; k < dim; k++) m->coords[v * dim + k] = fine->coords[f * dim + k];
  }
  m->mapped = 1;
  char where[128];
  int used = snprintf(where, sizeof where, " of the coarse mesh of ");
  for (int k = 0; k < dim; k++)
    used += snprintf(where + used, sizeof where - (size_t)used, "%s%lld", k ? " x " : "",
                     (long long)m->n[k]);
  snprintf(where + used, sizeof where - (size_t)used, " cells");
  fea_status st = check_mapped_cells(m, where);
  if (st != FEA_SUCCESS) {
    fea_object_release(m);
    return st;
  }
  *out = m;
  return FEA_SUCCESS;
}
