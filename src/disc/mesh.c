/* The mesh object: cell-type tables, allocation and reference counting, and
 * the validity check of every cell (orientation and degeneracy). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "mesh.h"
#include "mesh-boundary.h"

const int fea_cell_corner_bits[8] = {0, 1, 3, 2, 4, 5, 7, 6};

int fea_cell_num_nodes(fea_cell_type type) {
  switch (type) {
  case FEA_CELL_INTERVAL: return 2;
  case FEA_CELL_TRIANGLE: return 3;
  case FEA_CELL_QUAD: return 4;
  case FEA_CELL_TETRAHEDRON: return 4;
  case FEA_CELL_HEXAHEDRON: return 8;
  }
  return 0;
}

int fea_cell_dim(fea_cell_type type) {
  switch (type) {
  case FEA_CELL_INTERVAL: return 1;
  case FEA_CELL_TRIANGLE: return 2;
  case FEA_CELL_QUAD: return 2;
  case FEA_CELL_TETRAHEDRON: return 3;
  case FEA_CELL_HEXAHEDRON: return 3;
  }
  return 0;
}

const char *fea_cell_name(fea_cell_type type) {
  switch (type) {
  case FEA_CELL_INTERVAL: return "interval";
  case FEA_CELL_TRIANGLE: return "triangle";
  case FEA_CELL_QUAD: return "quad";
  case FEA_CELL_TETRAHEDRON: return "tetrahedron";
  case FEA_CELL_HEXAHEDRON: return "hexahedron";
  }
  return "unknown cell type";
}

/* n * size bytes (n >= 1), or 0 when that does not fit a size_t. */
static size_t array_bytes(fea_index n, size_t size) {
  if ((uint64_t)n > SIZE_MAX / size) return 0;
  return (size_t)n * size;
}

static void mesh_free(void *object) {
  fea_mesh *mesh = object;
  free(mesh->coords);
  free(mesh->cells);
  free(mesh->parents);
  fea_mesh_boundary_free(mesh->boundary);
  free(mesh);
}

fea_status fea_mesh_alloc(fea_context *ctx, int dim, fea_cell_type type, fea_index num_nodes,
                          fea_index num_cells, fea_mesh **out) {
  *out = NULL;
  const int npc = fea_cell_num_nodes(type);
  FEA_CHECK(npc > 0 && dim >= 1 && dim <= 3, ctx, FEA_ERR_INVALID_ARG,
            "no mesh of cell type %d in dimension %d", (int)type, dim);
  FEA_CHECK(num_nodes >= 1 && num_cells >= 1, ctx, FEA_ERR_INVALID_ARG,
            "a mesh needs at least one node and one cell, not %lld and %lld", (long long)num_nodes,
            (long long)num_cells);
  size_t coord_bytes = array_bytes(num_nodes, (size_t)dim * sizeof(double));
  size_t cell_bytes = array_bytes(num_cells, (size_t)npc * sizeof(fea_index));
  FEA_CHECK(coord_bytes > 0 && cell_bytes > 0, ctx, FEA_ERR_OUT_OF_MEMORY,
            "a mesh of %lld nodes and %lld cells is too large to address", (long long)num_nodes,
            (long long)num_cells);
  fea_mesh *m;
  FEA_CALL(fea_object_alloc(ctx, sizeof *m, "mesh", mesh_free, (void **)&m));
  m->coords = calloc(1, coord_bytes);
  m->cells = calloc(1, cell_bytes);
  if (!m->coords || !m->cells) {
    fea_object_release(m);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for a mesh of %lld nodes and %lld cells", (long long)num_nodes,
                     (long long)num_cells);
  }
  m->dim = dim;
  m->type = type;
  m->nodes_per_cell = npc;
  m->num_nodes = num_nodes;
  m->num_cells = num_cells;
  *out = m;
  return FEA_SUCCESS;
}

/* ---- cell validity -------------------------------------------------------------------------- */

/* Relative size under which a measure counts as zero: a cell whose measure is
 * below 1e-14 h^d (h its diameter) is flat up to rounding of its coordinates. */
#define DEGENERATE_TOL 1e-14

/* Geometry of one cell: its nodes' coordinates padded to 3D, and the scale
 * against which degeneracy is judged. */
struct cell_geom {
  double x[8][3];
  double h;     /* diameter: the longest distance between two nodes */
  double coord; /* largest coordinate magnitude, for coincident-node detection */
};

static void sub3(const double a[3], const double b[3], double r[3]) {
  for (int k = 0; k < 3; k++) r[k] = a[k] - b[k];
}

static double dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(const double a[3], const double b[3], double r[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}

static double det3(const double a[3], const double b[3], const double c[3]) {
  double r[3];
  cross3(b, c, r);
  return dot3(a, r);
}

static void load_cell(const fea_mesh *m, fea_index c, struct cell_geom *g) {
  const int npc = m->nodes_per_cell;
  const fea_index *v = m->cells + c * npc;
  g->h = 0.0;
  g->coord = 0.0;
  for (int i = 0; i < npc; i++) {
    for (int k = 0; k < 3; k++) g->x[i][k] = k < m->dim ? m->coords[v[i] * m->dim + k] : 0.0;
    for (int k = 0; k < 3; k++) g->coord = fmax(g->coord, fabs(g->x[i][k]));
    for (int j = 0; j < i; j++) {
      double d[3];
      sub3(g->x[i], g->x[j], d);
      /* Scaled by the largest component: the plain sum of squares would
       * underflow for cells 1e-160 wide (reported as coincident nodes) and
       * overflow for 1e160; hypot would do, at several times the cost. */
      const double s = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2])));
      if (s > 0) {
        const double dx = d[0] / s, dy = d[1] / s, dz = d[2] / s;
        g->h = fmax(g->h, s * sqrt(dx * dx + dy * dy + dz * dz));
      }
    }
  }
}

/* Jacobian columns of the bilinear/trilinear map at local node `node`: along
 * each reference direction, the edge from the corner with that bit clear to
 * the one with it set. */
static void corner_jacobian(const struct cell_geom *g, int node, int ndir, double col[3][3]) {
  const int bits = fea_cell_corner_bits[node]; /* the table is its own inverse */
  for (int d = 0; d < ndir; d++) {
    int lo = fea_cell_corner_bits[bits & ~(1 << d)], hi = fea_cell_corner_bits[bits | (1 << d)];
    sub3(g->x[hi], g->x[lo], col[d]);
  }
}

/* Describes what is wrong with a measure (signed value `val`, zero threshold
 * tol); returns 0 when the cell is fine. `what` names the quantity. */
static int judge(double val, double tol, const char *what, const char *where, char *msg,
                 size_t len) {
  if (val > tol) return 0;
  if (val < -tol)
    snprintf(msg, len, "is inverted: %s %g%s", what, val, where);
  else
    snprintf(msg, len, "is degenerate: %s %g%s (zero up to rounding)", what, val, where);
  return 1;
}

/* Quads in 3D have no sign of their own: a corner is bad when its normal is
 * (nearly) zero or points against the normal at corner 0 (a folded quad). */
static int judge_surface_quad(const struct cell_geom *g, double tol, char *msg, size_t len) {
  double n0[3] = {0, 0, 0};
  for (int i = 0; i < 4; i++) {
    double col[3][3], n[3];
    corner_jacobian(g, i, 2, col);
    cross3(col[0], col[1], n);
    double norm = sqrt(dot3(n, n));
    if (norm <= tol) {
      snprintf(msg, len, "is degenerate: Jacobian of norm %g at corner %d (zero up to rounding)",
               norm, i);
      return 1;
    }
    if (i == 0) {
      for (int k = 0; k < 3; k++) n0[k] = n[k];
    } else if (dot3(n, n0) <= 0.0) {
      snprintf(msg, len, "is folded: its normal at corner %d points against the normal at corner 0",
               i);
      return 1;
    }
  }
  return 0;
}

int fea_cell_scale_problem(double h, int ndir, char *msg, size_t len) {
  const double measure = pow(h, ndir);
  if (measure >= FEA_CELL_MIN_MEASURE && measure <= FEA_CELL_MAX_MEASURE) return 0;
  snprintf(msg, len, "has size %g: h^%d = %g is outside [%g, %g]; rescale the coordinates", h, ndir,
           measure, FEA_CELL_MIN_MEASURE, FEA_CELL_MAX_MEASURE);
  return 1;
}

int fea_mesh_cell_problem(const fea_mesh *m, fea_index c, char *msg, size_t len) {
  struct cell_geom g;
  load_cell(m, c, &g);
  if (!(g.h > DEGENERATE_TOL * g.coord)) {
    snprintf(msg, len, "is degenerate: its nodes coincide up to rounding (diameter %g)", g.h);
    return 1;
  }
  /* Before any measure is formed: h^d of a cell 1e-320 wide underflows to a
   * denormal or zero, of one 1e308 wide overflows, and the judgements below
   * would then compare garbage. */
  if (fea_cell_scale_problem(g.h, fea_cell_dim(m->type), msg, len)) return 1;
  double e1[3], e2[3], e3[3], n[3];
  const double h = g.h;
  switch (m->type) {
  case FEA_CELL_INTERVAL:
    sub3(g.x[1], g.x[0], e1);
    /* In 1D the sign is the orientation; in 2D/3D a segment only has a length. */
    return m->dim == 1 ? judge(e1[0], 0.0, "length", "", msg, len) : 0;
  case FEA_CELL_TRIANGLE:
    sub3(g.x[1], g.x[0], e1);
    sub3(g.x[2], g.x[0], e2);
    cross3(e1, e2, n);
    if (m->dim == 2) return judge(0.5 * n[2], DEGENERATE_TOL * h * h, "signed area", "", msg, len);
    return judge(0.5 * sqrt(dot3(n, n)), DEGENERATE_TOL * h * h, "area", "", msg, len);
  case FEA_CELL_TETRAHEDRON:
    sub3(g.x[1], g.x[0], e1);
    sub3(g.x[2], g.x[0], e2);
    sub3(g.x[3], g.x[0], e3);
    return judge(det3(e1, e2, e3) / 6.0, DEGENERATE_TOL * h * h * h, "signed volume", "", msg, len);
  case FEA_CELL_QUAD:
  case FEA_CELL_HEXAHEDRON: {
    const int ndir = fea_cell_dim(m->type);
    if (ndir == 2 && m->dim == 3) return judge_surface_quad(&g, DEGENERATE_TOL * h * h, msg, len);
    const double tol = DEGENERATE_TOL * (ndir == 2 ? h * h : h * h * h);
    for (int i = 0; i < m->nodes_per_cell; i++) {
      double col[3][3] = {{0}};
      corner_jacobian(&g, i, ndir, col);
      double det = ndir == 2 ? col[0][0] * col[1][1] - col[0][1] * col[1][0]
                             : det3(col[0], col[1], col[2]);
      char where[32];
      snprintf(where, sizeof where, " at corner %d", i);
      if (judge(det, tol, "Jacobian determinant", where, msg, len)) return 1;
    }
    return 0;
  }
  }
  snprintf(msg, len, "has unknown type %d", (int)m->type);
  return 1;
}

int fea_mesh_format_cell(const fea_mesh *m, fea_index c, char *buf, size_t len) {
  int used = snprintf(buf, len, "%s", fea_cell_name(m->type));
  for (int i = 0; i < m->nodes_per_cell && used >= 0 && (size_t)used < len; i++)
    used += snprintf(buf + used, len - (size_t)used, " %lld",
                     (long long)m->cells[c * m->nodes_per_cell + i]);
  return used;
}

fea_status fea_mesh_check_cells(const fea_mesh *mesh) {
  char why[256], cell[160];
  for (fea_index c = 0; c < mesh->num_cells; c++) {
    if (!fea_mesh_cell_problem(mesh, c, why, sizeof why)) continue;
    fea_mesh_format_cell(mesh, c, cell, sizeof cell);
    return FEA_ERROR(mesh->ctx, FEA_ERR_INVALID_ARG, "cell %lld (%s) %s", (long long)c, cell, why);
  }
  return FEA_SUCCESS;
}

fea_status fea_mesh_build_from_arrays(fea_context *ctx, int dim, fea_cell_type type,
                                      fea_index num_nodes, const double *coords,
                                      fea_index num_cells, const fea_index *cells, fea_mesh **out) {
  const int npc = fea_cell_num_nodes(type);
  fea_mesh *m;
  FEA_CALL(fea_mesh_alloc(ctx, dim, type, num_nodes, num_cells, &m));
  memcpy(m->coords, coords, (size_t)num_nodes * (size_t)dim * sizeof *coords);
  memcpy(m->cells, cells, (size_t)num_cells * (size_t)npc * sizeof *cells);
  fea_status s = fea_mesh_check_cells(m);
  if (s != FEA_SUCCESS) {
    fea_object_release(m);
    return s;
  }
  *out = m;
  return FEA_SUCCESS;
}
