/* The hierarchy of a P1 mesh made by `levels` uniform refinements of a mesh
 * of macro triangles (fea_mesh_refine_uniform()), for the prehandled solver
 * on several macro cells (macro-mesh.h).
 *
 * The refinement numbers the children of cell c as 4c .. 4c + 3: child k < 3
 * keeps the parent's vertex k in its local position k, with the midpoints of
 * the parent's edges at the other two, and child 3 is (m01, m12, m20)
 * (src/disc/mesh-refine.c). So after `levels` refinements macro cell c owns
 * the fine cells c 4^levels .. (c + 1) 4^levels - 1, and walking that tree
 * puts every fine node at its lattice point (i, j), 0 <= i + j <= r, the
 * point V0 + (i (V1 - V0) + j (V2 - V0)) / r of the macro triangle. Each
 * node's coordinates are checked against its lattice point, so a mesh that
 * is not such a refinement is refused, not mis-solved.
 *
 * From the lattice: a node is new on level k (1 <= k <= levels) when i and j
 * are multiples of s = r / 2^k but not both of 2s, and then it halves a
 * level-(k-1) edge, of direction (1, 0), (0, 1) or (1, -1): its two parents
 * are the edge's ends (the P1 weights 1/2 of Ruda et al. 2022, eq. (2)). The
 * macro vertices are C, the other nodes on macro edges E, the rest I. C and
 * E are numbered in the problem's DoF order; I macro cell by macro cell,
 * group by group (macro-groups.c), each cell's nodes in the lattice order
 * of the vertex permutation that maps it onto its group's first cell, so
 * every cell of a group has the same interior block. Dirichlet nodes are
 * not unknowns; as parents they hold 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "disc/mesh.h"
#include "disc/problem.h"
#include "disc/space.h"
#include "internal/error.h"
#include "macro-mesh.h"

/* Groups compare stiffness entries (O(1): scale invariant) to this. */
#define MACRO_GROUP_TOL 1e-9
/* A fine node may sit this far (relative to the macro cell's size) from
 * its lattice point: the refinement's midpoints are exact up to rounding. */
#define MACRO_POINT_TOL 1e-9

void fea_ph_macro_destroy(fea_ph_macro **m) {
  if (!m || !*m) return;
  fea_ph_macro *h = *m;
  free(h->group_cells);
  free(h->group_rep);
  free(h->cell_group);
  free(h->perm);
  free(h->pos);
  free(h->level_start);
  free(h->new_node);
  free(h->new_parent);
  free(h);
  *m = NULL;
}

void fea_ph_macro_apply_s(const fea_ph_macro *m, double *x) {
  for (int k = 1; k <= m->levels; k++)
    for (fea_index t = m->level_start[k - 1]; t < m->level_start[k]; t++) {
      const fea_index a = m->new_parent[2 * t], b = m->new_parent[2 * t + 1];
      x[m->new_node[t]] += 0.5 * ((a >= 0 ? x[a] : 0.0) + (b >= 0 ? x[b] : 0.0));
    }
}

void fea_ph_macro_apply_st(const fea_ph_macro *m, double *x) {
  for (int k = m->levels; k >= 1; k--)
    for (fea_index t = m->level_start[k - 1]; t < m->level_start[k]; t++) {
      const fea_index a = m->new_parent[2 * t], b = m->new_parent[2 * t + 1];
      const double v = 0.5 * x[m->new_node[t]];
      if (a >= 0) x[a] += v;
      if (b >= 0) x[b] += v;
    }
}

double fea_ph_macro_flops(const fea_ph_macro *m) {
  return 2.0 * (double)m->ne * (double)m->ne + 4.0 * (double)m->blk * (double)m->ni;
}

/* The walk over one macro cell's tree of fine cells. */
typedef struct walk {
  const fea_mesh *mesh;
  const fea_space *space;
  fea_index r;
  fea_index *lat; /* (r + 1)^2: the DoF at lattice point (i, j) at i + (r + 1) j; -1 unset */
  double x[6];    /* the macro triangle's corners */
  double size;    /* its longest coordinate extent */
  fea_index bad;  /* first fine cell out of place, or -1 */
} walk;

static void point_of(const walk *w, fea_index i, fea_index j, double p[2]) {
  const double a = (double)i / (double)w->r, b = (double)j / (double)w->r;
  for (int d = 0; d < 2; d++)
    p[d] = w->x[d] + a * (w->x[2 + d] - w->x[d]) + b * (w->x[4 + d] - w->x[d]);
}

static void put(walk *w, fea_index f, int k, const fea_index c[2]) {
  fea_index dofs[3];
  w->space->ops->element_dofs(w->space, f, dofs);
  const fea_index node = w->mesh->cells[3 * f + k];
  double p[2];
  point_of(w, c[0], c[1], p);
  const double *y = w->mesh->coords + 2 * node;
  fea_index *slot = &w->lat[c[0] + (w->r + 1) * c[1]];
  if ((*slot >= 0 && *slot != dofs[k]) ||
      fmax(fabs(y[0] - p[0]), fabs(y[1] - p[1])) > MACRO_POINT_TOL * w->size) {
    if (w->bad < 0) w->bad = f;
    return;
  }
  *slot = dofs[k];
}

/* Fine cells f0 .. f0 + 4^d - 1 cover the triangle (a, b, c) of lattice points. */
static void visit(walk *w, fea_index f0, int d, const fea_index a[2], const fea_index b[2],
                  const fea_index c[2]) {
  if (d == 0) {
    put(w, f0, 0, a), put(w, f0, 1, b), put(w, f0, 2, c);
    return;
  }
  const fea_index q = (fea_index)1 << (2 * (d - 1));
  const fea_index ab[2] = {(a[0] + b[0]) / 2, (a[1] + b[1]) / 2};
  const fea_index bc[2] = {(b[0] + c[0]) / 2, (b[1] + c[1]) / 2};
  const fea_index ca[2] = {(c[0] + a[0]) / 2, (c[1] + a[1]) / 2};
  visit(w, f0, d - 1, a, ab, ca);
  visit(w, f0 + q, d - 1, ab, b, bc);
  visit(w, f0 + 2 * q, d - 1, ca, bc, c);
  visit(w, f0 + 3 * q, d - 1, ab, bc, ca);
}

/* The level of lattice point (i, j): 0 for the macro vertices, else the k
 * with i, j multiples of r / 2^k but not both of r / 2^(k-1). */
static int level_of(fea_index r, int levels, fea_index i, fea_index j) {
  for (int k = 0; k <= levels; k++) {
    const fea_index s = r >> k;
    if (i % s == 0 && j % s == 0) return k;
  }
  return levels;
}

/* Local index of the interior lattice point (i, j) (i, j >= 1, i + j <= r - 1):
 * rows j ascending, i ascending within a row. */
static fea_index interior_local(fea_index r, fea_index i, fea_index j) {
  /* rows 1 .. j - 1 hold r - 2, r - 3, ..., r - j points */
  return (j - 1) * (r - 2) - (j - 1) * (j - 2) / 2 + (i - 1);
}

typedef struct build {
  fea_context *ctx;
  const fea_problem *pb;
  fea_ph_macro *m;
  walk w;
  int *perm;        /* 3 per macro cell: its vertex playing its group's vertex k */
  signed char *cls; /* per unknown: 0 unseen, 1 C, 2 E, 3 I */
  signed char *lvl; /* per unknown: its level */
  fea_index *par;   /* 2 per unknown: parents (new nodes) */
  fea_index *ipos;  /* per unknown: I position (I nodes) */
  int quiet;        /* probing a depth (fea_ph_macro_choose_levels): no message */
} build;

static fea_status walk_cell(build *B, fea_index c) {
  walk *w = &B->w;
  const fea_index r = w->r;
  const fea_index first = c << (2 * B->m->levels);
  for (int k = 0; k < 3; k++) { /* corner k: the k-th digit repeated */
    fea_index f = first;
    for (int d = 0; d < B->m->levels; d++) f += (fea_index)k << (2 * d);
    const double *y = w->mesh->coords + 2 * w->mesh->cells[3 * f + k];
    w->x[2 * k] = y[0], w->x[2 * k + 1] = y[1];
  }
  w->size = fmax(fmax(fabs(w->x[2] - w->x[0]), fabs(w->x[4] - w->x[0])),
                 fmax(fabs(w->x[3] - w->x[1]), fabs(w->x[5] - w->x[1])));
  for (fea_index t = 0; t < (r + 1) * (r + 1); t++) w->lat[t] = -1;
  w->bad = -1;
  const fea_index a[2] = {0, 0}, b[2] = {r, 0}, cc[2] = {0, r};
  visit(w, first, B->m->levels, a, b, cc);
  if (w->bad >= 0 && B->quiet) return FEA_ERR_UNSUPPORTED;
  FEA_CHECK(w->bad < 0, B->ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs a mesh made by %d fea_mesh_refine_uniform() steps from "
            "its macro cells; fine cell %lld of macro cell %lld is not where that refinement "
            "puts it",
            B->m->levels, (long long)w->bad, (long long)c);
  return FEA_SUCCESS;
}

/* Pass 1 over a walked cell: classes, levels and parents of its unknowns. */
static void classify_cell(build *B) {
  const walk *w = &B->w;
  const fea_index r = w->r;
  const fea_index *fi = B->pb->free_index;
  for (fea_index j = 0; j <= r; j++)
    for (fea_index i = 0; i + j <= r; i++) {
      const fea_index u = fi[w->lat[i + (r + 1) * j]];
      if (u < 0 || B->cls[u]) continue;
      const int nz = (i > 0) + (j > 0) + (i + j < r);
      B->cls[u] = nz == 1 ? 1 : nz == 2 ? 2 : 3;
      const int k = level_of(r, B->m->levels, i, j);
      B->lvl[u] = (signed char)k;
      if (k == 0) continue;
      const fea_index s = r >> k;
      fea_index p[2][2];
      if (i % (2 * s) == 0) /* j odd: on a (0, 1) edge */
        p[0][0] = i, p[0][1] = j - s, p[1][0] = i, p[1][1] = j + s;
      else if (j % (2 * s) == 0) /* on a (1, 0) edge */
        p[0][0] = i - s, p[0][1] = j, p[1][0] = i + s, p[1][1] = j;
      else /* on a (1, -1) edge */
        p[0][0] = i - s, p[0][1] = j + s, p[1][0] = i + s, p[1][1] = j - s;
      for (int e = 0; e < 2; e++) B->par[2 * u + e] = fi[w->lat[p[e][0] + (r + 1) * p[e][1]]];
    }
}

/* Pass 2: the I positions of a walked cell, in its group's vertex order. */
static void number_interior(build *B, fea_index c, fea_index first_pos) {
  const walk *w = &B->w;
  const fea_index r = w->r;
  const int *pm = B->perm + 3 * c;
  for (fea_index j = 1; j < r; j++)
    for (fea_index i = 1; i + j < r; i++) {
      const fea_index bary[3] = {r - i - j, i, j};
      const fea_index u = B->pb->free_index[w->lat[i + (r + 1) * j]];
      B->ipos[u] = first_pos + interior_local(r, bary[pm[1]], bary[pm[2]]);
    }
}

static fea_status group_cells(build *B) {
  fea_ph_macro *m = B->m;
  const fea_mesh *mesh = B->w.mesh;
  double *ref = malloc((size_t)m->cells * 9 * sizeof *ref);
  m->group_rep = malloc((size_t)m->cells * sizeof *m->group_rep);
  m->cell_group = malloc((size_t)m->cells * sizeof *m->cell_group);
  FEA_CHECK(ref && m->group_rep && m->cell_group, B->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the groups of %lld macro cells", (long long)m->cells);
  m->groups = 0;
  for (fea_index c = 0; c < m->cells; c++) {
    double x[6], k[9];
    for (int v = 0; v < 3; v++) {
      fea_index f = c << (2 * m->levels);
      for (int d = 0; d < m->levels; d++) f += (fea_index)v << (2 * d);
      const double *y = mesh->coords + 2 * mesh->cells[3 * f + v];
      x[2 * v] = y[0], x[2 * v + 1] = y[1];
    }
    fea_ph_p1_stiffness(x, k);
    int g = 0;
    for (; g < m->groups; g++)
      if (fea_ph_p1_match(k, ref + 9 * g, MACRO_GROUP_TOL, B->perm + 3 * c)) break;
    if (g == m->groups) {
      memcpy(ref + 9 * g, k, sizeof k);
      m->group_rep[g] = c;
      B->perm[3 * c] = 0, B->perm[3 * c + 1] = 1, B->perm[3 * c + 2] = 2;
      m->groups++;
    }
    m->cell_group[c] = g;
  }
  free(ref);
  m->group_cells = calloc((size_t)m->groups, sizeof *m->group_cells);
  FEA_CHECK(m->group_cells, B->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d groups", m->groups);
  for (fea_index c = 0; c < m->cells; c++) m->group_cells[m->cell_group[c]]++;
  return FEA_SUCCESS;
}

/* Checks that need no allocation: a P1 mesh whose cell count fits. */
static fea_status check_mesh(fea_context *ctx, const fea_problem *pb, int levels) {
  const fea_space *sp = pb->space;
  const fea_mesh *mesh = sp->mesh;
  FEA_CHECK(mesh && mesh->type == FEA_CELL_TRIANGLE && mesh->dim == 2 && sp->dofs_per_element == 3,
            ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver takes an unstructured mesh of P1 triangles only (refined "
            "uniformly from its macro cells)");
  FEA_CHECK(levels >= 1 && levels <= 20, ctx, FEA_ERR_INVALID_ARG,
            "%d refinement levels between the macro cells and the fine mesh (1..20)", levels);
  const fea_index per = (fea_index)1 << (2 * levels);
  FEA_CHECK(mesh->num_cells % per == 0, ctx, FEA_ERR_UNSUPPORTED,
            "%lld triangles are not %d uniform refinements (4^%d cells per macro cell) of a "
            "coarser mesh",
            (long long)mesh->num_cells, levels, levels);
  return FEA_SUCCESS;
}

static fea_status macro_build(build *B) {
  fea_ph_macro *m = B->m;
  const fea_index num = m->num, r = m->r;
  B->w.lat = malloc((size_t)((r + 1) * (r + 1)) * sizeof *B->w.lat);
  B->perm = malloc((size_t)m->cells * 3 * sizeof *B->perm);
  B->cls = calloc((size_t)(num ? num : 1), 1);
  B->lvl = calloc((size_t)(num ? num : 1), 1);
  B->par = malloc((size_t)(2 * num + 1) * sizeof *B->par);
  B->ipos = malloc((size_t)(num + 1) * sizeof *B->ipos);
  m->perm = malloc((size_t)(num + 1) * sizeof *m->perm);
  m->pos = malloc((size_t)(num + 1) * sizeof *m->pos);
  m->level_start = calloc((size_t)m->levels + 1, sizeof *m->level_start);
  FEA_CHECK(B->w.lat && B->perm && B->cls && B->lvl && B->par && B->ipos && m->perm && m->pos &&
                m->level_start,
            B->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the hierarchy of %lld unknowns",
            (long long)num);
  FEA_CALL(group_cells(B));
  for (fea_index c = 0; c < m->cells; c++) {
    FEA_CALL(walk_cell(B, c));
    classify_cell(B);
  }
  for (fea_index u = 0; u < num; u++) {
    FEA_CHECK(B->cls[u], B->ctx, FEA_ERR_UNSUPPORTED,
              "unknown %lld lies in no macro cell: the mesh has nodes outside its cells",
              (long long)u);
    m->nc += B->cls[u] == 1, m->ne += B->cls[u] == 2, m->ni += B->cls[u] == 3;
  }
  FEA_CHECK(m->ni == m->cells * m->blk, B->ctx, FEA_ERR_UNSUPPORTED,
            "%lld interior unknowns in %lld macro cells of %lld interior nodes: some macro-cell "
            "interior node is a Dirichlet node",
            (long long)m->ni, (long long)m->cells, (long long)m->blk);
  /* I: group by group, cell by cell in mesh order. */
  fea_index *gfirst = calloc((size_t)m->groups + 1, sizeof *gfirst);
  FEA_CHECK(gfirst, B->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d groups", m->groups);
  for (int g = 0; g < m->groups; g++) gfirst[g + 1] = gfirst[g] + m->group_cells[g];
  for (fea_index c = 0; c < m->cells; c++) {
    fea_status st = walk_cell(B, c);
    if (st < 0) {
      free(gfirst);
      return st;
    }
    number_interior(B, c, m->nc + m->ne + (gfirst[m->cell_group[c]]++) * m->blk);
  }
  free(gfirst);
  fea_index nextc = 0, nexte = m->nc;
  for (fea_index u = 0; u < num; u++) {
    const fea_index p = B->cls[u] == 1 ? nextc++ : B->cls[u] == 2 ? nexte++ : B->ipos[u];
    m->pos[u] = p;
    m->perm[p] = u;
  }
  /* The new nodes, level by level (a counting sort). */
  for (fea_index u = 0; u < num; u++)
    if (B->lvl[u] > 0) m->level_start[B->lvl[u]]++, m->num_new++;
  for (int k = 1; k <= m->levels; k++) m->level_start[k] += m->level_start[k - 1];
  m->new_node = malloc((size_t)(m->num_new + 1) * sizeof *m->new_node);
  m->new_parent = malloc((size_t)(2 * m->num_new + 1) * sizeof *m->new_parent);
  FEA_CHECK(m->new_node && m->new_parent, B->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for %lld hierarchical nodes", (long long)m->num_new);
  fea_index *next = malloc((size_t)(m->levels + 1) * sizeof *next);
  FEA_CHECK(next, B->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d levels", m->levels);
  next[1] = 0;
  for (int k = 2; k <= m->levels; k++) next[k] = m->level_start[k - 1];
  for (fea_index u = 0; u < num; u++)
    if (B->lvl[u] > 0) {
      const fea_index t = next[(int)B->lvl[u]]++;
      m->new_node[t] = u;
      m->new_parent[2 * t] = B->par[2 * u], m->new_parent[2 * t + 1] = B->par[2 * u + 1];
    }
  free(next);
  return FEA_SUCCESS;
}

static fea_status create(fea_context *ctx, const fea_problem *pb, int levels, int quiet,
                         fea_ph_macro **out) {
  FEA_CHECK_NULL(pb, ctx);
  FEA_CHECK_NULL(out, ctx);
  FEA_CALL(check_mesh(ctx, pb, levels));
  fea_ph_macro *m = calloc(1, sizeof *m);
  FEA_CHECK(m, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a macro-cell hierarchy");
  m->num = pb->num_free;
  m->levels = levels;
  m->r = (fea_index)1 << levels;
  m->cells = pb->space->mesh->num_cells >> (2 * levels);
  m->blk = (m->r - 1) * (m->r - 2) / 2;
  build B = {ctx,  pb,   m,    {pb->space->mesh, pb->space, m->r, NULL, {0}, 0, -1},
             NULL, NULL, NULL, NULL,
             NULL, quiet};
  fea_status st = macro_build(&B);
  free(B.w.lat), free(B.perm), free(B.cls), free(B.lvl), free(B.par), free(B.ipos);
  if (st < 0) {
    fea_ph_macro_destroy(&m);
    return st;
  }
  *out = m;
  return FEA_SUCCESS;
}

fea_status fea_ph_macro_create(fea_context *ctx, const fea_problem *pb, int levels,
                               fea_ph_macro **out) {
  return create(ctx, pb, levels, 0, out);
}

fea_status fea_ph_macro_choose_levels(fea_context *ctx, const fea_problem *pb,
                                      fea_index coarse_cells, int *levels) {
  const fea_index cells = pb->space->mesh->num_cells;
  if (coarse_cells > 0) {
    int k = 0;
    while (k < 20 && (coarse_cells << (2 * k)) < cells) k++;
    FEA_CHECK(k >= 1 && (coarse_cells << (2 * k)) == cells, ctx, FEA_ERR_INVALID_ARG,
              "desc.coarse_cells = %lld macro cells is not the mesh's %lld triangles over 4^k, "
              "k >= 1",
              (long long)coarse_cells, (long long)cells);
    *levels = k;
    return FEA_SUCCESS;
  }
  /* Every depth the cell count allows, built (O(N) each) to see that the
   * mesh supports it; the fewest FLOPs wins. */
  int best = 0;
  double best_flops = 0;
  for (int k = 1; k <= 20 && cells % ((fea_index)1 << (2 * k)) == 0; k++) {
    fea_ph_macro *m = NULL;
    const fea_status st = create(ctx, pb, k, 1, &m);
    if (st == FEA_ERR_UNSUPPORTED) break; /* the mesh is no k-fold refinement */
    FEA_CALL(st);
    const double f = fea_ph_macro_flops(m);
    fea_ph_macro_destroy(&m);
    if (best == 0 || f < best_flops) best = k, best_flops = f;
  }
  FEA_CHECK(best > 0, ctx, FEA_ERR_UNSUPPORTED,
            "the mesh of %lld triangles is no uniform refinement of a coarser mesh "
            "(fea_mesh_refine_uniform()): the prehandled solver needs its macro cells",
            (long long)cells);
  *levels = best;
  return FEA_SUCCESS;
}
