/* The check of a G+Smo MultiPatch's topology against its patches' geometry,
 * so that the interfaces and boundary sides a read file hands out are ones
 * the geometry has, not only ones the file claims.
 *
 * Sides are compared as G+Smo's own gsMultiPatch::computeTopology compares
 * them: by their corners and their centre (the images of the parameter
 * box's corners and centre), which for conforming patches is the same
 * parametrization. An interface must join sides whose points coincide one
 * to one in the orientation its direction map and flags give; when they do
 * not but another orientation fits, the message gives the file's map and
 * flags and the geometry's, else the farthest pair of points. A boundary
 * side must coincide with no other side of a member patch (in any
 * orientation): such a side is an interface, which fea_multipatch_create()
 * would also glue. Sides whose corners coincide (collapsed, as at the pole
 * of a disc) take no part.
 *
 * Points coincide within 1e-6 of the diameter of the member patches'
 * control points (a NURBS patch lies in the hull of its control points):
 * coordinates written with 7 digits or more agree. Finding the side a
 * boundary side may coincide with goes through the side centres sorted on a
 * grid of that spacing (coinciding centres are in neighbouring cells), so a
 * file of many patches costs n log n, not n^2. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/memory-limit.h"
#include "geometry-gismo.h"
#include "internal/error.h"

#define REL_TOL 1e-6
/* Points per side: its corners (corner c has tangential direction b at the
 * high end when bit b of c is set), then its centre. */
#define MAX_POINTS 5

typedef struct side_points {
  double x[MAX_POINTS][3];
  int collapsed;
} side_points;

typedef struct checker {
  const fea_context *ctx;
  const char *name;
  long line;
  const fea_geometry_file *f;
  int dim, corners; /* corners per side: 2 in 2D, 4 in 3D */
  double tol;
  side_points *sides; /* per patch position and side (6 each), members only */
} checker;

/* The tangential directions of side s, in order (-1 beyond dim - 1). */
static void tangents(int dim, int s, int t[2]) {
  int k = 0;
  t[0] = t[1] = -1;
  for (int a = 0; a < dim; a++)
    if (a != s / 2) t[k++] = a;
}

/* The length of v, scaled so that no square overflows (a file may hold
 * coordinates up to the largest double). */
static double norm(const double *v, int dim) {
  double m = 0, s = 0;
  for (int k = 0; k < dim; k++) m = fmax(m, fabs(v[k]));
  if (m == 0 || isinf(m)) return m;
  for (int k = 0; k < dim; k++) s += (v[k] / m) * (v[k] / m);
  return m * sqrt(s);
}

static double dist(const double *a, const double *b, int dim) {
  double d[3] = {0, 0, 0};
  for (int k = 0; k < dim; k++) d[k] = a[k] - b[k];
  return norm(d, dim);
}

/* The corners and centres of every side of patch pos. */
static fea_status evaluate(checker *c, int pos) {
  const fea_geometry_patch *pt = &c->f->patches[pos];
  const int dim = pt->dim;
  fea_geometry_map *g = NULL;
  FEA_CALL(fea_geometry_map_create(c->ctx, dim, &pt->desc, &g));
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int k = 0; k < dim; k++) {
    lo[k] = pt->desc.knots[k][0];
    hi[k] = pt->desc.knots[k][pt->desc.num_knots[k] - 1];
  }
  for (int s = 0; s < 2 * dim; s++) {
    side_points *sp = &c->sides[pos * 6 + s];
    int t[2];
    tangents(dim, s, t);
    for (int q = 0; q <= c->corners; q++) {
      double xi[3] = {0, 0, 0}, J[9], W, dW[3];
      fea_index span[3] = {0, 0, 0};
      xi[s / 2] = s % 2 ? hi[s / 2] : lo[s / 2];
      for (int b = 0; b < dim - 1; b++) {
        const int k = t[b];
        if (q == c->corners) /* the centre */
          xi[k] = 0.5 * (lo[k] + hi[k]);
        else
          xi[k] = (q >> b & 1) ? hi[k] : lo[k];
      }
      for (int k = 0; k < dim; k++) span[k] = fea_knots_find_span(&g->knots[k], xi[k]);
      fea_geometry_map_eval(g, span, xi, sp->x[q], J, &W, dW);
    }
    sp->collapsed = 1;
    for (int q = 1; q < c->corners; q++)
      if (dist(sp->x[0], sp->x[q], dim) > c->tol) sp->collapsed = 0;
  }
  fea_geometry_map_free(g);
  return FEA_SUCCESS;
}

/* A way to lay side B onto side A: A's tangential direction b runs along
 * B's tangential direction perm[b], the same way unless flip[b]. */
typedef struct orientation {
  int perm[2], flip[2];
} orientation;

/* The corner of B that corner q of A lands on. */
static int image(const checker *c, const orientation *o, int q) {
  int r = 0;
  for (int b = 0; b < c->dim - 1; b++) r |= ((q >> b & 1) ^ o->flip[b]) << o->perm[b];
  return r;
}

/* The largest distance between A's points and B's under o; *at the point. */
static double gap(const checker *c, const side_points *a, const side_points *b,
                  const orientation *o, int *at) {
  double worst = -1;
  for (int q = 0; q <= c->corners; q++) {
    const int r = q == c->corners ? q : image(c, o, q);
    const double d = dist(a->x[q], b->x[r], c->dim);
    if (d > worst) worst = d, *at = q;
  }
  return worst;
}

/* The orientations of a side onto another: 2 in 2D, 8 in 3D. */
static int num_orientations(int dim) { return dim == 2 ? 2 : 8; }
static orientation orientation_of(int i) {
  orientation o = {{0, 1}, {i & 1, i >> 1 & 1}};
  if (i >> 2 & 1) o.perm[0] = 1, o.perm[1] = 0;
  return o;
}

/* The first orientation under which a and b coincide, or -1. */
static int fitting(const checker *c, const side_points *a, const side_points *b) {
  int at = 0;
  for (int i = 0; i < num_orientations(c->dim); i++) {
    const orientation o = orientation_of(i);
    if (gap(c, a, b, &o, &at) <= c->tol) return i;
  }
  return -1;
}

static void format_point(const double *x, int dim, char *buf, size_t len) {
  if (dim == 2)
    snprintf(buf, len, "(%g, %g)", x[0], x[1]);
  else
    snprintf(buf, len, "(%g, %g, %g)", x[0], x[1], x[2]);
}

static void format_ints(const int *v, int dim, char *buf, size_t len) {
  if (dim == 2)
    snprintf(buf, len, "(%d, %d)", v[0], v[1]);
  else
    snprintf(buf, len, "(%d, %d, %d)", v[0], v[1], v[2]);
}

/* The direction map and flags of an interface whose tangential directions
 * lie as o says (the normal entries as the reader sets them). */
static void map_of(const checker *c, int s0, int s1, const orientation *o, int map[3],
                   int orient[3]) {
  int t0[2], t1[2];
  tangents(c->dim, s0, t0);
  tangents(c->dim, s1, t1);
  map[s0 / 2] = s1 / 2;
  orient[s0 / 2] = s0 % 2 == s1 % 2;
  for (int b = 0; b < c->dim - 1; b++) {
    map[t0[b]] = t1[o->perm[b]];
    orient[t0[b]] = !o->flip[b];
  }
}

static fea_status check_interface(const checker *c, int index) {
  const fea_geometry_interface *in = &c->f->interfaces[index];
  const int s0 = (int)in->side[0], s1 = (int)in->side[1];
  const side_points *a = &c->sides[in->patch[0] * 6 + s0], *b = &c->sides[in->patch[1] * 6 + s1];
  /* The file's orientation: where each tangential direction of side 0 runs. */
  int t0[2], t1[2];
  tangents(c->dim, s0, t0);
  tangents(c->dim, s1, t1);
  orientation o = {{0, 1}, {0, 0}};
  for (int bb = 0; bb < c->dim - 1; bb++) {
    o.perm[bb] = in->direction_map[t0[bb]] == t1[0] ? 0 : 1;
    o.flip[bb] = !in->direction_orientation[t0[bb]];
  }
  int at = 0;
  const double d = gap(c, a, b, &o, &at);
  if (d <= c->tol) return FEA_SUCCESS;
  const int id0 = c->f->patches[in->patch[0]].id, id1 = c->f->patches[in->patch[1]].id;
  char head[160];
  snprintf(head, sizeof head, "interface %d (patch id %d side %d, patch id %d side %d)", index, id0,
           s0 + 1, id1, s1 + 1);
  const int fit = fitting(c, a, b);
  if (fit >= 0) {
    const orientation g = orientation_of(fit);
    int map[3] = {0, 1, 2}, orient[3] = {1, 1, 1};
    map_of(c, s0, s1, &g, map, orient);
    char fm[32], fo[32], gm[32], go[32];
    format_ints(in->direction_map, c->dim, fm, sizeof fm);
    format_ints(in->direction_orientation, c->dim, fo, sizeof fo);
    format_ints(map, c->dim, gm, sizeof gm);
    format_ints(orient, c->dim, go, sizeof go);
    return FEA_ERROR(c->ctx, FEA_ERR_INVALID_ARG,
                     "%s: <MultiPatch> (line %ld): %s: the orientation disagrees with the "
                     "geometry: the file gives direction map %s and orientation %s, the geometry "
                     "%s and %s",
                     c->name, c->line, head, fm, fo, gm, go);
  }
  char pa[96], pb[96];
  format_point(a->x[at], c->dim, pa, sizeof pa);
  format_point(b->x[at == c->corners ? at : image(c, &o, at)], c->dim, pb, sizeof pb);
  return FEA_ERROR(c->ctx, FEA_ERR_INVALID_ARG,
                   "%s: <MultiPatch> (line %ld): %s: the sides do not coincide: the point %s of "
                   "patch id %d is %g from %s of patch id %d (tolerance %g, %g of the patches' "
                   "diameter)",
                   c->name, c->line, head, pa, id0, d, pb, id1, c->tol, REL_TOL);
}

/* A centre's cell along one direction: within [-1, 10^6 + 1] when the
 * extent is finite; clamped (NaN included) where it overflowed, so that the
 * cast is defined. */
static int64_t cell_of(double x, double lo, double h) {
  const double v = floor((x - lo) / h);
  if (v >= -4.0 && v <= 4e6) return (int64_t)v;
  return v > 0 ? (int64_t)4e6 + 1 : -5;
}

/* A side's cell: its centre on the grid of spacing h from lo. */
typedef struct cell {
  int64_t key[3];
  int pos, side;
} cell;

static int cell_cmp_key(const int64_t *a, const int64_t *b) {
  for (int k = 0; k < 3; k++)
    if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
  return 0;
}

static int cell_cmp(const void *a, const void *b) {
  return cell_cmp_key(((const cell *)a)->key, ((const cell *)b)->key);
}

/* The first cell with key, or n. */
static size_t lower_bound(const cell *cells, size_t n, const int64_t *key) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (cell_cmp_key(cells[mid].key, key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Every boundary side against the sides whose centres are in its cell or
 * a neighbouring one. */
static fea_status check_boundary(const checker *c, const double lo[3], double h) {
  const fea_geometry_file *f = c->f;
  const size_t n = (size_t)f->num_members * (size_t)(2 * c->dim);
  FEA_CALL(fea_memory_require(c->ctx, 0, fea_bytes((double)n, sizeof(cell)),
                              "the side index of a geometry file's topology check"));
  cell *cells = malloc((n ? n : 1) * sizeof *cells);
  FEA_CHECK(cells, c->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the index of %zu sides", n);
  size_t m = 0;
  for (int i = 0; i < f->num_members; i++)
    for (int s = 0; s < 2 * c->dim; s++) {
      const int pos = f->members[i];
      const side_points *sp = &c->sides[pos * 6 + s];
      if (sp->collapsed) continue;
      cell *e = &cells[m++];
      e->pos = pos;
      e->side = s;
      for (int k = 0; k < 3; k++)
        e->key[k] = k < c->dim ? cell_of(sp->x[c->corners][k], lo[k], h) : 0;
    }
  qsort(cells, m, sizeof *cells, cell_cmp);
  fea_status st = FEA_SUCCESS;
  const int neighbours = c->dim == 2 ? 9 : 27;
  for (int bi = 0; bi < f->num_boundary && st == FEA_SUCCESS; bi++) {
    const fea_geometry_boundary_side *bs = &f->boundary[bi];
    const side_points *a = &c->sides[bs->patch * 6 + (int)bs->side];
    if (a->collapsed) continue;
    int64_t here[3] = {0, 0, 0};
    for (int k = 0; k < c->dim; k++) here[k] = cell_of(a->x[c->corners][k], lo[k], h);
    for (int nb = 0; nb < neighbours && st == FEA_SUCCESS; nb++) {
      int64_t key[3] = {here[0] + nb % 3 - 1, here[1] + nb / 3 % 3 - 1,
                        c->dim == 3 ? here[2] + nb / 9 - 1 : 0};
      for (size_t e = lower_bound(cells, m, key); e < m && !cell_cmp_key(cells[e].key, key); e++) {
        if (cells[e].pos == bs->patch && cells[e].side == (int)bs->side) continue;
        if (fitting(c, a, &c->sides[cells[e].pos * 6 + cells[e].side]) < 0) continue;
        st = FEA_ERROR(c->ctx, FEA_ERR_INVALID_ARG,
                       "%s: <MultiPatch> (line %ld): boundary side %d (patch id %d side %d) is not "
                       "boundary: it coincides with side %d of patch id %d (an interface)",
                       c->name, c->line, bi, f->patches[bs->patch].id, (int)bs->side + 1,
                       cells[e].side + 1, f->patches[cells[e].pos].id);
        break;
      }
    }
  }
  free(cells);
  return st;
}

fea_status fea_geometry_gismo_check_topology(const fea_context *ctx, const char *name, long line,
                                             const fea_geometry_file *file) {
  if (file->num_members == 0) return FEA_SUCCESS;
  checker c = {ctx, name, line, file, file->patches[file->members[0]].dim, 0, 0, NULL};
  c.corners = 1 << (c.dim - 1);
  /* The tolerance: REL_TOL of the diameter of the members' control points. */
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < file->num_members; i++) {
    const fea_geometry_desc *d = &file->patches[file->members[i]].desc;
    for (fea_index p = 0; p < d->num_control_points; p++)
      for (int k = 0; k < c.dim; k++) {
        lo[k] = fmin(lo[k], d->control_points[p * c.dim + k]);
        hi[k] = fmax(hi[k], d->control_points[p * c.dim + k]);
      }
  }
  /* Half extents: hi - lo may pass the largest double, their halves not. */
  double half[3] = {0, 0, 0};
  for (int k = 0; k < c.dim; k++) half[k] = hi[k] / 2 - lo[k] / 2;
  c.tol = 2 * REL_TOL * norm(half, c.dim);
  FEA_CALL(fea_memory_require(ctx, 0, fea_bytes((double)file->count * 6, sizeof(side_points)),
                              "the side points of a geometry file's topology check"));
  c.sides = calloc((size_t)file->count * 6, sizeof *c.sides);
  FEA_CHECK(c.sides, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the sides of %d patches",
            file->count);
  fea_status st = FEA_SUCCESS;
  for (int i = 0; i < file->num_members && st == FEA_SUCCESS; i++)
    st = evaluate(&c, file->members[i]);
  for (int i = 0; i < file->num_interfaces && st == FEA_SUCCESS; i++) st = check_interface(&c, i);
  /* Cells of the tolerance's size; any size when all points coincide. */
  if (st == FEA_SUCCESS) st = check_boundary(&c, lo, c.tol > 0 ? c.tol : 1.0);
  free(c.sides);
  return st;
}
