/* Lagrange spaces on meshes: the global DoF numbering, the boundary DoFs, and
 * the element operations (values on the linear geometry, point location,
 * nodal interpolation).
 *
 * Numbering: the mesh nodes first (DoF = node number), then the interior DoFs
 * of the edges (order - 1 each), of the quad faces of hexahedra ((order - 1)^2
 * each), and of the cells. Edges and faces are shared by cells, so they are
 * identified globally by their sorted vertex numbers, and the interior DoFs
 * of a shared entity are laid out in a frame fixed by its global vertex
 * numbers, which every cell around it agrees on:
 * - an edge runs from its lower-numbered vertex to the higher one;
 * - a quad face starts at its lowest vertex V0, its first axis towards the
 *   lower-numbered of V0's two neighbours on the face.
 * Each cell maps its own (lexicographic) local nodes into those frames. The
 * 1D node sets are mirror-symmetric, so a node read in either frame is the
 * same point. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "base/memory-limit.h"
#include "lagrange.h"
#include "mesh.h"
#include "space.h"

/* Point location tolerance, in reference coordinates (so relative to the cell's size). */
#define LOCATE_TOL 1e-12

/* Buckets over the mesh's bounding box, each listing the cells whose bounding
 * boxes meet it; about one bucket per cell. */
typedef struct locate_grid {
  fea_index n[3];
  double lo[3], hi[3], scale[3]; /* bucket index = (x - lo) * scale */
  fea_index *start;              /* buckets + 1 */
  fea_index *cells;
} locate_grid;

typedef struct lagrange_impl {
  fea_lagrange_element el;
  fea_index *cell_dofs; /* num_cells * nb, local order of el */
  double *dof_coords;   /* num_dofs * mesh dim */
  /* The boundary facets (held by one cell): c * facets per cell + local
   * facet, ascending; natural boundary conditions integrate over them. */
  fea_index *bfacets, num_bfacets;
  /* Built by the first locate() that needs it; element loops may run on
   * several threads, so the build is serialized. */
  pthread_mutex_t grid_lock;
  atomic_int grid_ready;
  locate_grid grid;
} lagrange_impl;

/* ---- local topology of a cell ---------------------------------------------------------------- */

/* Local entities in mesh-order vertex numbers. A tensor-cell edge runs along
 * one reference direction, from the corner where that coordinate is 0; a
 * hexahedron face lists its corners (0,0) (1,0) (0,1) (1,1) in its own (u, v)
 * axes, the two directions other than its normal in increasing order. */
typedef struct cell_topo {
  int dim, nv;
  int ne, edge[12][2];
  int edge_dir[12];
  int nf, face[6][4];
  int face_axis[6][2];
  int nfacet, facet_nv, facet[6][4]; /* the cell's boundary pieces: vertex, edge or face */
} cell_topo;

/* In 2D the facets are the edges. */
static void facets_are_edges(cell_topo *t) {
  t->nfacet = t->ne;
  t->facet_nv = 2;
  for (int e = 0; e < t->ne; e++) {
    t->facet[e][0] = t->edge[e][0];
    t->facet[e][1] = t->edge[e][1];
  }
}

static void topo_init(fea_cell_type cell, cell_topo *t) {
  memset(t, 0, sizeof *t);
  t->dim = fea_cell_dim(cell);
  t->nv = fea_cell_num_nodes(cell);
  int d = t->dim;
  if (cell == FEA_CELL_TRIANGLE || cell == FEA_CELL_TETRAHEDRON) {
    t->ne = d == 2 ? 3 : 6;
    for (int e = 0; e < t->ne; e++)
      for (int j = 0; j < 2; j++)
        t->edge[e][j] = d == 2 ? fea_triangle_edges[e][j] : fea_tetrahedron_edges[e][j];
    if (d == 2) {
      facets_are_edges(t);
    } else {
      /* facet v: the triangle opposite vertex v */
      t->nfacet = 4;
      t->facet_nv = 3;
      for (int v = 0; v < 4; v++)
        for (int j = 0, k = 0; j < 4; j++)
          if (j != v) t->facet[v][k++] = j;
    }
    return;
  }
  for (int k = 0; k < d && d > 1; k++)
    for (int c = 0; c < (1 << d); c++) {
      if ((c >> k) & 1) continue;
      t->edge[t->ne][0] = fea_tensor_corner_vertex(d, c);
      t->edge[t->ne][1] = fea_tensor_corner_vertex(d, c | (1 << k));
      t->edge_dir[t->ne++] = k;
    }
  if (d == 3) {
    t->nf = 6;
    for (int n = 0; n < 3; n++) {
      int u = n == 0 ? 1 : 0, v = n == 2 ? 1 : 2;
      for (int s = 0; s < 2; s++) {
        int f = 2 * n + s;
        t->face_axis[f][0] = u;
        t->face_axis[f][1] = v;
        for (int b = 0; b < 4; b++)
          t->face[f][b] = fea_tensor_corner_vertex(3, (s << n) | ((b & 1) << u) | ((b >> 1) << v));
      }
    }
  }
  if (d == 1) {
    t->nfacet = 2;
    t->facet_nv = 1;
    t->facet[0][0] = 0;
    t->facet[1][0] = 1;
  } else if (d == 2) {
    facets_are_edges(t);
  } else {
    t->nfacet = 6;
    t->facet_nv = 4;
    memcpy(t->facet, t->face, sizeof t->facet);
  }
}

/* Where each local node of the element lives: a vertex, the interior of a
 * local edge or face (with its position in the entity's local axes, 1..p-1),
 * or the cell's interior (a running number). */
enum { ON_VERTEX, ON_EDGE, ON_FACE, ON_CELL };
typedef struct node_place {
  signed char kind, ent;
  short a, b; /* cell-interior running number up to (p-1)^3 - 1: 124 for Q6, near char's limit */
} node_place;

static void place_nodes(const fea_lagrange_element *el, const cell_topo *t, node_place *pl) {
  int p = el->order, d = el->dim, n1 = p + 1, interior = 0;
  for (int i = 0; i < el->nb; i++) {
    node_place q = {ON_CELL, 0, 0, 0};
    if (!el->tensor) {
      /* P1/P2: vertices, then one node per edge in edge order */
      q = i < t->nv ? (node_place){ON_VERTEX, (signed char)i, 0, 0}
                    : (node_place){ON_EDGE, (signed char)(i - t->nv), 1, 0};
      pl[i] = q;
      continue;
    }
    int a[3] = {i % n1, (i / n1) % n1, i / (n1 * n1)}, nin = 0, in[3], corner = 0;
    for (int k = 0; k < d; k++) {
      if (a[k] > 0 && a[k] < p)
        in[nin++] = k;
      else if (a[k] == p)
        corner |= 1 << k;
    }
    if (nin == 0) {
      q = (node_place){ON_VERTEX, (signed char)fea_tensor_corner_vertex(d, corner), 0, 0};
    } else if (nin == d) {
      q = (node_place){ON_CELL, 0, (short)interior++, 0};
    } else if (nin == 1) {
      int start = fea_tensor_corner_vertex(d, corner);
      for (int e = 0; e < t->ne; e++)
        if (t->edge[e][0] == start && t->edge_dir[e] == in[0])
          q = (node_place){ON_EDGE, (signed char)e, (short)a[in[0]], 0};
    } else { /* two interior directions of a hexahedron: a face */
      int n = 3 - in[0] - in[1], f = 2 * n + (a[n] == p);
      q = (node_place){ON_FACE, (signed char)f, (short)a[t->face_axis[f][0]],
                       (short)a[t->face_axis[f][1]]};
    }
    pl[i] = q;
  }
}

/* ---- global identification of shared entities ------------------------------------------------ */

typedef struct key_rec {
  fea_index k[3]; /* the sorted vertex key without its first (smallest) entry */
  fea_index slot; /* cell * entities per cell + local entity */
} key_rec;

static int cmp_key_rec(const void *pa, const void *pb) {
  const key_rec *a = pa, *b = pb;
  for (int i = 0; i < 3; i++)
    if (a->k[i] != b->k[i]) return a->k[i] < b->k[i] ? -1 : 1;
  return 0;
}

static void entity_key(const fea_mesh *m, fea_index c, int nkey, const int *loc, fea_index *key) {
  const fea_index *v = m->cells + c * m->nodes_per_cell;
  for (int i = 0; i < nkey; i++) {
    fea_index x = v[loc[i]];
    int j = i;
    for (; j > 0 && key[j - 1] > x; j--) key[j] = key[j - 1];
    key[j] = x;
  }
}

/* Global numbers id[c * nloc + l] of the local entities l (nkey vertices each,
 * at loc + l * stride) of every cell c: equal sorted vertex keys, equal entity. Records
 * are bucketed by their smallest vertex (a counting sort) and sorted by the
 * rest of the key within each bucket, so the cost is O(N log B) for N records
 * and buckets of at most B. mult (optional) gets how many cells hold each entity. */
static fea_status identify(const fea_mesh *m, int nloc, int nkey, const int *loc, int stride,
                           fea_index *id, fea_index *count, int **mult) {
  fea_index nrec = m->num_cells * nloc, nn = m->num_nodes;
  fea_index *start = calloc((size_t)nn + 1, sizeof *start);
  fea_index *order = malloc((size_t)nrec * sizeof *order);
  int *mu = mult ? malloc((size_t)nrec * sizeof *mu) : NULL;
  key_rec *tmp = NULL;
  fea_status st = FEA_SUCCESS;
  if (!start || !order || (mult && !mu)) {
    st = FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to match %lld cell entities",
                   (long long)nrec);
    goto done;
  }
  fea_index key[4], maxb = 0;
  for (fea_index r = 0; r < nrec; r++) {
    entity_key(m, r / nloc, nkey, loc + (r % nloc) * stride, key);
    start[key[0] + 1]++;
  }
  for (fea_index v = 0; v < nn; v++) {
    maxb = start[v + 1] > maxb ? start[v + 1] : maxb;
    start[v + 1] += start[v];
  }
  for (fea_index r = 0; r < nrec; r++) {
    entity_key(m, r / nloc, nkey, loc + (r % nloc) * stride, key);
    order[start[key[0]]++] = r;
  }
  for (fea_index v = nn; v > 0; v--)
    start[v] = start[v - 1]; /* the fill moved each start one bucket on */
  start[0] = 0;
  tmp = malloc((size_t)(maxb > 0 ? maxb : 1) * sizeof *tmp);
  if (!tmp) {
    st = FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to match %lld cell entities",
                   (long long)nrec);
    goto done;
  }
  fea_index n = 0;
  for (fea_index v = 0; v < nn; v++) {
    fea_index nb = start[v + 1] - start[v];
    for (fea_index j = 0; j < nb; j++) {
      fea_index r = order[start[v] + j];
      entity_key(m, r / nloc, nkey, loc + (r % nloc) * stride, key);
      for (int i = 0; i < 3; i++) tmp[j].k[i] = i + 1 < nkey ? key[i + 1] : -1;
      tmp[j].slot = r;
    }
    qsort(tmp, (size_t)nb, sizeof *tmp, cmp_key_rec);
    for (fea_index j = 0; j < nb; j++) {
      if (j == 0 || cmp_key_rec(&tmp[j - 1], &tmp[j]) != 0) {
        if (mu) mu[n] = 0;
        n++;
      }
      id[tmp[j].slot] = n - 1;
      if (mu) mu[n - 1]++;
    }
  }
  *count = n;
  if (mult) {
    *mult = mu;
    mu = NULL;
  }
done:
  free(start);
  free(order);
  free(tmp);
  free(mu);
  return st;
}

/* ---- numbering ------------------------------------------------------------------------------- */

/* Position (0-based, of (p-1)^2) of face node (a, b) (in the cell's face axes,
 * 1..p-1) in the face's global frame; g holds the face's global vertices at
 * its local corners (0,0) (1,0) (0,1) (1,1). */
static int face_position(const fea_index g[4], int p, int a, int b) {
  int o = 0;
  for (int c = 1; c < 4; c++)
    if (g[c] < g[o]) o = c;
  int ou = o & 1, ov = o >> 1;
  fea_index along_u = g[(1 - ou) | (ov << 1)], along_v = g[ou | ((1 - ov) << 1)];
  int du = ou ? p - a : a, dv = ov ? p - b : b; /* distances from the origin corner */
  int i = du - 1, j = dv - 1;
  if (along_v < along_u) {
    i = dv - 1;
    j = du - 1;
  }
  return i + (p - 1) * j;
}

/* The numbering of one cell's nodes. */
typedef struct numbering {
  int p;
  fea_index edge_base, face_base, cell_base;
  int cell_interior;
  const fea_index *edge_id, *face_id;
} numbering;

static void number_cell(const fea_mesh *m, const cell_topo *t, const node_place *pl, int nb,
                        const numbering *nu, fea_index c, fea_index *dofs) {
  const fea_index *v = m->cells + c * m->nodes_per_cell;
  int p = nu->p;
  for (int i = 0; i < nb; i++) {
    node_place q = pl[i];
    switch (q.kind) {
    case ON_VERTEX: dofs[i] = v[q.ent]; break;
    case ON_EDGE: {
      fea_index gs = v[t->edge[q.ent][0]], ge = v[t->edge[q.ent][1]];
      int pos = gs < ge ? q.a - 1 : p - 1 - q.a;
      dofs[i] = nu->edge_base + nu->edge_id[c * t->ne + q.ent] * (p - 1) + pos;
      break;
    }
    case ON_FACE: {
      fea_index g[4];
      for (int k = 0; k < 4; k++) g[k] = v[t->face[q.ent][k]];
      dofs[i] = nu->face_base + nu->face_id[c * t->nf + q.ent] * (p - 1) * (p - 1) +
                face_position(g, p, q.a, q.b);
      break;
    }
    default: dofs[i] = nu->cell_base + c * nu->cell_interior + q.a; break;
    }
  }
}

/* ---- construction ---------------------------------------------------------------------------- */

static void impl_free(lagrange_impl *L) {
  if (!L) return;
  pthread_mutex_destroy(&L->grid_lock);
  free(L->cell_dofs);
  free(L->dof_coords);
  free(L->bfacets);
  free(L->grid.start);
  free(L->grid.cells);
  free(L);
}

/* Boundary DoFs: those of the nodes on facets that only one cell holds.
 * Mesh nodes that no cell uses (a Gmsh file's geometry points, say) are
 * DoFs too, since DoF = node number; no element couples them to anything, so
 * they are listed here as well, where Dirichlet elimination fixes them,
 * rather than left as empty rows that make every system singular. */
static fea_status collect_boundary(const fea_mesh *m, lagrange_impl *L, const cell_topo *t,
                                   const fea_index *facet_id, const int *facet_mult,
                                   fea_index num_dofs, fea_index **out, fea_index *count) {
  unsigned char *mark = malloc((size_t)num_dofs);
  FEA_CHECK(mark, m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to mark %lld DoFs",
            (long long)num_dofs);
  memset(mark, 0, (size_t)num_dofs);
  memset(mark, 1, (size_t)m->num_nodes);
  for (fea_index i = 0; i < m->num_cells * m->nodes_per_cell; i++) mark[m->cells[i]] = 0;
  int nb = L->el.nb;
  fea_index nbf = 0;
  for (fea_index i = 0; i < m->num_cells * t->nfacet; i++) nbf += facet_mult[facet_id[i]] == 1;
  L->bfacets = malloc((size_t)(nbf > 0 ? nbf : 1) * sizeof *L->bfacets);
  if (!L->bfacets) {
    free(mark);
    return FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld boundary facets",
                     (long long)nbf);
  }
  for (fea_index c = 0; c < m->num_cells; c++)
    for (int f = 0; f < t->nfacet; f++) {
      if (facet_mult[facet_id[c * t->nfacet + f]] != 1) continue;
      L->bfacets[L->num_bfacets++] = c * t->nfacet + f;
      unsigned fmask = 0;
      for (int j = 0; j < t->facet_nv; j++) fmask |= 1u << t->facet[f][j];
      for (int i = 0; i < nb; i++)
        if ((L->el.vmask[i] & ~fmask) == 0) mark[L->cell_dofs[c * nb + i]] = 1;
    }
  fea_index n = 0;
  for (fea_index i = 0; i < num_dofs; i++) n += mark[i];
  fea_index *b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
  if (!b) {
    free(mark);
    return FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld boundary DoFs",
                     (long long)n);
  }
  for (fea_index i = 0, j = 0; i < num_dofs; i++)
    if (mark[i]) b[j++] = i;
  free(mark);
  *out = b;
  *count = n;
  return FEA_SUCCESS;
}

/* The coordinates of cell c's vertices (mesh order, mesh dim each). */
static void load_vertices(const fea_mesh *m, fea_index c, double *verts) {
  int nv = m->nodes_per_cell, gd = m->dim;
  for (int j = 0; j < nv; j++)
    for (int k = 0; k < gd; k++) verts[j * gd + k] = m->coords[m->cells[c * nv + j] * gd + k];
}

/* Every DoF's point: the mesh node for vertex DoFs, else the image of the
 * reference node under the cell's linear map. A DoF shared by cells takes
 * the last cell's image (they agree to rounding): the cells run backwards
 * and each DoF is mapped once, by the first of them to reach it, which
 * gives the same coordinates bit for bit as mapping it from every cell in
 * order, at a third of the maps in 3D Q2 (total DoFs: the count). */
static void compute_dof_coords(const fea_mesh *m, lagrange_impl *L, fea_index total) {
  int gd = m->dim, nb = L->el.nb;
  memcpy(L->dof_coords, m->coords, (size_t)m->num_nodes * (size_t)gd * sizeof(double));
  /* Without memory for the marks: every cell in order, each DoF each time. */
  unsigned char *done = calloc((size_t)(total - m->num_nodes) + 1, 1);
  for (fea_index j = 0; j < m->num_cells; j++) {
    const fea_index c = done ? m->num_cells - 1 - j : j;
    double verts[FEA_CELL_MAX_VERTICES * 3];
    int loaded = 0;
    for (int i = 0; i < nb; i++) {
      fea_index dof = L->cell_dofs[c * nb + i];
      if (dof < m->num_nodes || (done && done[dof - m->num_nodes])) continue;
      if (done) done[dof - m->num_nodes] = 1;
      if (!loaded) {
        load_vertices(m, c, verts);
        loaded = 1;
      }
      fea_cell_map(m->type, gd, verts, L->el.nodes + i * L->el.dim, L->dof_coords + dof * gd, NULL);
    }
  }
  free(done);
}

/* Numbering, DoF points and boundary DoFs of an order-p space on m, into L. */
static fea_status number_space(const fea_mesh *m, int p, lagrange_impl *L, fea_index *num_dofs,
                               fea_index **boundary, fea_index *num_boundary) {
  cell_topo t;
  topo_init(m->type, &t);
  node_place pl[FEA_LAGRANGE_MAX_BASIS];
  place_nodes(&L->el, &t, pl);
  const int d = t.dim, nb = L->el.nb;
  const fea_index nc = m->num_cells;
  fea_index *edge_id = NULL, *face_id = NULL, *facet_id = NULL;
  int *facet_mult = NULL;
  fea_index ne = 0, nf = 0, nfacet = 0;
  fea_status st = FEA_SUCCESS;

  /* Edges carry DoFs from order 2 on and are the facets in 2D; hexahedron
   * faces carry DoFs from order 2 on and are its facets; the facets of
   * tetrahedra (P1, P2 have no face DoFs) and of intervals only tell the boundary. */
  if (d == 2 || (d == 3 && p >= 2)) {
    edge_id = malloc((size_t)nc * (size_t)t.ne * sizeof *edge_id);
    st = edge_id ? identify(m, t.ne, 2, &t.edge[0][0], 2, edge_id, &ne, d == 2 ? &facet_mult : NULL)
                 : FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the edges of %lld cells",
                             (long long)nc);
    if (d == 2) facet_id = edge_id;
  }
  if (st == FEA_SUCCESS && d == 3 && t.nf > 0) {
    face_id = malloc((size_t)nc * (size_t)t.nf * sizeof *face_id);
    st = face_id ? identify(m, t.nf, 4, &t.face[0][0], 4, face_id, &nf, &facet_mult)
                 : FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the faces of %lld cells",
                             (long long)nc);
    facet_id = face_id;
  } else if (st == FEA_SUCCESS && d != 2) {
    facet_id = malloc((size_t)nc * (size_t)t.nfacet * sizeof *facet_id);
    st = facet_id
             ? identify(m, t.nfacet, t.facet_nv, &t.facet[0][0], 4, facet_id, &nfacet, &facet_mult)
             : FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the facets of %lld cells",
                         (long long)nc);
  }

  numbering nu = {.p = p, .edge_id = edge_id, .face_id = face_id};
  nu.cell_interior = 0; /* simplices up to P2 have none */
  if (L->el.tensor) {
    nu.cell_interior = 1;
    for (int k = 0; k < d; k++) nu.cell_interior *= p - 1;
  }
  nu.edge_base = m->num_nodes;
  nu.face_base = nu.edge_base + ne * (p - 1);
  nu.cell_base = nu.face_base + (t.nf > 0 ? nf * (p - 1) * (p - 1) : 0);
  fea_index total = nu.cell_base + nc * nu.cell_interior;

  if (st == FEA_SUCCESS) {
    L->cell_dofs = malloc((size_t)nc * (size_t)nb * sizeof *L->cell_dofs);
    L->dof_coords = malloc((size_t)total * (size_t)m->dim * sizeof *L->dof_coords);
    if (!L->cell_dofs || !L->dof_coords)
      st = FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the DoFs of %lld cells (%lld DoFs)", (long long)nc,
                     (long long)total);
  }
  if (st == FEA_SUCCESS) {
    for (fea_index c = 0; c < nc; c++) number_cell(m, &t, pl, nb, &nu, c, L->cell_dofs + c * nb);
    compute_dof_coords(m, L, total);
    st = collect_boundary(m, L, &t, facet_id, facet_mult, total, boundary, num_boundary);
  }
  if (st == FEA_SUCCESS) *num_dofs = total;
  if (facet_id != edge_id && facet_id != face_id) free(facet_id);
  free(edge_id);
  free(face_id);
  free(facet_mult);
  return st;
}

/* ---- element operations ---------------------------------------------------------------------- */

/* "(x, y, z)" with as many coordinates as the space has, for messages. */
static void format_point(const double *x, int d, char *buf, size_t len) {
  if (d == 1)
    snprintf(buf, len, "(%.17g)", x[0]);
  else if (d == 2)
    snprintf(buf, len, "(%.17g, %.17g)", x[0], x[1]);
  else
    snprintf(buf, len, "(%.17g, %.17g, %.17g)", x[0], x[1], x[2]);
}

static fea_status check_own_dimension(const fea_space *s, const char *what) {
  const fea_mesh *m = s->mesh;
  FEA_CHECK(m->dim == fea_cell_dim(m->type), s->ctx, FEA_ERR_UNSUPPORTED,
            "%s on %s cells in %dD space is not supported (cells must have the mesh's dimension)",
            what, fea_cell_name(m->type), m->dim);
  return FEA_SUCCESS;
}

static void lagrange_element_dofs(const fea_space *s, fea_index e, fea_index *dofs) {
  const lagrange_impl *L = s->impl;
  memcpy(dofs, L->cell_dofs + e * L->el.nb, (size_t)L->el.nb * sizeof *dofs);
}

/* Whether the quad or hexahedron with these vertices is the box
 * lo + [0, h_0] x ... (h_k > 0) with its edges along the axes, read
 * exactly: every corner's coordinate k is lo_k or lo_k + h_k as its bit k
 * says. Structured box meshes give every node of a grid plane the same
 * coordinate, so their cells pass; any other cell takes the general map. */
static int axis_aligned_box(int d, const double *verts, double lo[3], double h[3]) {
  const double *X0 = verts + fea_tensor_corner_vertex(d, 0) * d;
  double hi[3];
  for (int k = 0; k < d; k++) {
    lo[k] = X0[k];
    hi[k] = verts[fea_tensor_corner_vertex(d, 1 << k) * d + k];
    h[k] = hi[k] - lo[k];
    if (!(h[k] > 0.0)) return 0;
  }
  for (int c = 0; c < (1 << d); c++) {
    const double *X = verts + fea_tensor_corner_vertex(d, c) * d;
    for (int k = 0; k < d; k++)
      if (X[k] != ((c >> k) & 1 ? hi[k] : lo[k])) return 0;
  }
  return 1;
}

/* The caller's factors_only request on an axis-aligned box element under
 * a tensor rule: the 1D factors (values at the rule's 1D points and
 * derivatives in x_k, t1d), the 1D weights times the edge lengths (w1d),
 * the points x and the weights w, and no basis tables. The map is
 * x_k = lo_k + h_k xi_k, so this is the general path's element up to
 * rounding: (p + 1) d 1D evaluations per element instead of the (p + 1)^d
 * products per point and a Jacobian per point, which were half of a
 * matrix-free 3D Q2 multigrid setup (its finest load). Returns 0, having
 * filled nothing, where it does not apply. */
static int box_factors(const lagrange_impl *L, const double *verts, const fea_quadrature *q,
                       fea_element_values *ev) {
  const int d = L->el.dim, p = L->el.order;
  if (!ev->factors_only || !ev->t1d || !L->el.tensor || (d != 2 && d != 3) || q->tensor[0] <= 0)
    return 0;
  int m[3] = {1, 1, 1};
  for (int k = 0; k < d; k++) m[k] = q->tensor[k];
  if (m[0] * m[1] * m[2] != q->npts) return 0;
  for (int k = 0; k < 3; k++)
    if (m[k] > FEA_QUAD_MAX_1D || ev->tnq[k] != m[k] || ev->tnp[k] != (k < d ? p + 1 : 1)) return 0;
  double lo[3], h[3];
  if (!axis_aligned_box(d, verts, lo, h)) return 0;
  double x1[3][FEA_QUAD_MAX_1D], measure = 1.0;
  int stride = 1;
  for (int k = 0; k < d; k++) {
    measure *= h[k];
    for (int a = 0; a < m[k]; a++) {
      const double xi = q->points[(size_t)(a * stride) * (size_t)d + (size_t)k];
      double *row = ev->t1d + ((size_t)k * FEA_QUAD_MAX_1D + (size_t)a) * FEA_ELEMENT_T1D_LD;
      fea_lagrange_basis_1d(p, L->el.x1d, xi, row, row + p + 1);
      for (int i = 0; i <= p; i++) row[p + 1 + i] /= h[k];
      x1[k][a] = lo[k] + xi * h[k];
    }
    stride *= m[k];
  }
  for (int qi = 0; qi < q->npts; qi++) {
    const int at[3] = {qi % m[0], (qi / m[0]) % m[1], qi / (m[0] * m[1])};
    for (int k = 0; k < d; k++) ev->x[qi * d + k] = x1[k][at[k]];
    ev->w[qi] = q->weights[qi] * measure;
  }
  ev->tensor_valid = 1;
  ev->w1d_valid = q->w1d[0][0] > 0;
  for (int k = 0; k < 3 && ev->w1d_valid; k++)
    for (int a = 0; a < m[k]; a++) ev->w1d[k][a] = q->w1d[k][a] * (k < d ? h[k] : 1.0);
  return 1;
}

/* Isoparametric on the linear geometry: x(xi) and J from the vertices, the
 * weights scaled by det J, the gradients mapped by J^{-T}; or, where the
 * caller asks for the factors only and the element is an axis-aligned box,
 * those (box_factors). */
static fea_status lagrange_element_values(const fea_space *s, fea_index e, const fea_quadrature *q,
                                          fea_element_values *ev) {
  const lagrange_impl *L = s->impl;
  const fea_mesh *m = s->mesh;
  const int d = L->el.dim, nb = L->el.nb;
  FEA_CALL(check_own_dimension(s, "element values"));
  FEA_CHECK(q->dim == d, s->ctx, FEA_ERR_INVALID_ARG,
            "the quadrature rule is %dD but the elements are %dD %ss", q->dim, d,
            fea_cell_name(m->type));
  double verts[FEA_CELL_MAX_VERTICES * 3], dref[FEA_LAGRANGE_MAX_BASIS * 3];
  load_vertices(m, e, verts);
  ev->tensor_valid = ev->w1d_valid = 0;
  if (box_factors(L, verts, q, ev)) return FEA_SUCCESS;
  for (int k = 0; k < q->npts; k++) {
    const double *xi = q->points + k * d;
    double J[9], Jinv[9];
    fea_cell_map(m->type, d, verts, xi, ev->x + k * d, J);
    double det = fea_small_inverse(d, J, Jinv);
    FEA_CHECK(det > 0.0, s->ctx, FEA_ERR_INVALID_ARG,
              "element %lld is inverted or degenerate: Jacobian determinant %g at "
              "quadrature point %d",
              (long long)e, det, k);
    ev->w[k] = q->weights[k] * det;
    fea_lagrange_element_eval(&L->el, xi, ev->phi + (size_t)k * nb, dref);
    double *dphi = ev->dphi + (size_t)k * nb * d;
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < d; j++) {
        double g = 0.0;
        for (int r = 0; r < d; r++) g += dref[i * d + r] * Jinv[r * d + j];
        dphi[i * d + j] = g;
      }
  }
  return FEA_SUCCESS;
}

static fea_status lagrange_interpolate(const fea_space *s, fea_scalar_fn g, void *user,
                                       double *coeffs) {
  const lagrange_impl *L = s->impl;
  const int gd = s->mesh->dim;
  for (fea_index i = 0; i < s->num_dofs; i++) {
    const double *x = L->dof_coords + i * gd;
    double v = g(x, user);
    if (!isfinite(v)) {
      char where[96];
      format_point(x, gd, where, sizeof where);
      return FEA_ERROR(s->ctx, FEA_ERR_INVALID_ARG, "the function is %g at DoF %lld, point %s", v,
                       (long long)i, where);
    }
    coeffs[i] = v;
  }
  return FEA_SUCCESS;
}

/* ---- point location -------------------------------------------------------------------------- */

/* Padding of a cell's extent [lo, hi] in one direction: more than the
 * location tolerance, and more than rounding in coordinates of that size. */
static double box_pad(double lo, double hi) {
  return 1e-9 * (hi - lo) + 64.0 * DBL_EPSILON * fmax(fabs(lo), fabs(hi));
}

static fea_index clamp_index(double t, fea_index n) {
  if (!(t >= 0.0)) return 0;
  if (t >= (double)n) return n - 1;
  return (fea_index)t;
}

/* Buckets sized so that the grid has about as many buckets as the mesh has
 * cells, as evenly shaped as the bounding box allows. */
static fea_status build_grid(const fea_space *s, locate_grid *G) {
  const fea_mesh *m = s->mesh;
  const int d = m->dim, nv = m->nodes_per_cell;
  const fea_index nc = m->num_cells;
  for (int k = 0; k < 3; k++) {
    G->lo[k] = k < d ? INFINITY : 0.0;
    G->hi[k] = k < d ? -INFINITY : 0.0;
    G->n[k] = 1;
    G->scale[k] = 0.0;
  }
  for (fea_index i = 0; i < nc * nv; i++)
    for (int k = 0; k < d; k++) {
      double x = m->coords[m->cells[i] * d + k];
      G->lo[k] = fmin(G->lo[k], x);
      G->hi[k] = fmax(G->hi[k], x);
    }
  double vol = 1.0;
  for (int k = 0; k < d; k++) vol *= G->hi[k] - G->lo[k];
  double h = pow(vol / (double)nc, 1.0 / d);
  fea_index nbk = 1;
  for (int k = 0; k < d; k++) {
    double ext = G->hi[k] - G->lo[k];
    double nk = h > 0.0 ? ceil(ext / h) : 1.0;
    G->n[k] = (fea_index)fmin(fmax(nk, 1.0), 1 << 20);
    nbk *= G->n[k];
  }
  while (nbk > 4 * nc + 64) { /* rounding up in every direction overshot: halve the finest */
    int k = 0;
    for (int j = 1; j < d; j++)
      if (G->n[j] > G->n[k]) k = j;
    nbk /= G->n[k];
    G->n[k] = (G->n[k] + 1) / 2;
    nbk *= G->n[k];
  }
  for (int k = 0; k < d; k++) G->scale[k] = (double)G->n[k] / (G->hi[k] - G->lo[k]);

  /* Two passes over the cells' bounding boxes (padded a little, for points
   * on a cell's boundary): count per bucket, then fill. */
  G->start = calloc((size_t)nbk + 1, sizeof *G->start);
  FEA_CHECK(G->start, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld location buckets",
            (long long)nbk);
  for (int pass = 0; pass < 2; pass++) {
    for (fea_index c = 0; c < nc; c++) {
      fea_index lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
      for (int k = 0; k < d; k++) {
        double a = INFINITY, b = -INFINITY;
        for (int j = 0; j < nv; j++) {
          double x = m->coords[m->cells[c * nv + j] * d + k];
          a = fmin(a, x);
          b = fmax(b, x);
        }
        double pad = box_pad(a, b);
        lo[k] = clamp_index((a - pad - G->lo[k]) * G->scale[k], G->n[k]);
        hi[k] = clamp_index((b + pad - G->lo[k]) * G->scale[k], G->n[k]);
      }
      for (fea_index i2 = lo[2]; i2 <= hi[2]; i2++)
        for (fea_index i1 = lo[1]; i1 <= hi[1]; i1++)
          for (fea_index i0 = lo[0]; i0 <= hi[0]; i0++) {
            fea_index b = i0 + G->n[0] * (i1 + G->n[1] * i2);
            if (pass == 0)
              G->start[b + 1]++;
            else
              G->cells[G->start[b]++] = c;
          }
    }
    if (pass == 0) {
      for (fea_index b = 0; b < nbk; b++) G->start[b + 1] += G->start[b];
      G->cells = malloc((size_t)(G->start[nbk] > 0 ? G->start[nbk] : 1) * sizeof *G->cells);
      if (!G->cells) {
        fea_index entries = G->start[nbk];
        free(G->start);
        G->start = NULL;
        return FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld location entries",
                         (long long)entries);
      }
    } else {
      for (fea_index b = nbk; b > 0; b--) G->start[b] = G->start[b - 1];
      G->start[0] = 0;
    }
  }
  return FEA_SUCCESS;
}

static fea_status ensure_grid(fea_space *s, lagrange_impl *L) {
  if (atomic_load_explicit(&L->grid_ready, memory_order_acquire)) return FEA_SUCCESS;
  pthread_mutex_lock(&L->grid_lock);
  fea_status st = FEA_SUCCESS;
  if (!atomic_load_explicit(&L->grid_ready, memory_order_relaxed)) {
    locate_grid G;
    memset(&G, 0, sizeof G);
    st = build_grid(s, &G);
    if (st == FEA_SUCCESS) {
      L->grid = G;
      atomic_store_explicit(&L->grid_ready, 1, memory_order_release);
    }
  }
  pthread_mutex_unlock(&L->grid_lock);
  return st;
}

/* Whether x lies in cell c (ref: its reference coordinates there). The
 * cell's bounding box, padded by the tolerance, turns most candidates of a
 * bucket away before the inverse map is tried. */
static int try_cell(const fea_mesh *m, fea_index c, const double *x, double *ref) {
  double verts[FEA_CELL_MAX_VERTICES * 3];
  const int d = m->dim, nv = m->nodes_per_cell;
  load_vertices(m, c, verts);
  for (int k = 0; k < d; k++) {
    double lo = verts[k], hi = verts[k];
    for (int j = 1; j < nv; j++) {
      lo = fmin(lo, verts[j * d + k]);
      hi = fmax(hi, verts[j * d + k]);
    }
    double pad = box_pad(lo, hi);
    if (x[k] < lo - pad || x[k] > hi + pad) return 0;
  }
  return fea_cell_map_inverse(m->type, verts, x, LOCATE_TOL, ref);
}

/* On a structured box mesh the cell follows from the coordinates; it is
 * confirmed by the inverse map, so a mesh whose cells are not numbered
 * lexicographically (or not axis-aligned) falls back to the search. */
static int locate_structured(const fea_mesh *m, const double *x, fea_index *e, double *ref) {
  fea_index idx[3] = {0, 0, 0};
  for (int k = 0; k < m->dim; k++) {
    double t = (x[k] - m->lower[k]) / (m->upper[k] - m->lower[k]) * (double)m->n[k];
    idx[k] = clamp_index(t, m->n[k]);
  }
  fea_index c = idx[0] + m->n[0] * (idx[1] + m->n[1] * idx[2]);
  if (c >= m->num_cells || !try_cell(m, c, x, ref)) return 0;
  *e = c;
  return 1;
}

static fea_status lagrange_locate(fea_space *s, const double *x, fea_index *e, double *ref) {
  const fea_mesh *m = s->mesh;
  lagrange_impl *L = s->impl;
  const int d = m->dim;
  FEA_CALL(check_own_dimension(s, "point location"));
  /* A mapped mesh's box says nothing of where its cells are: search. */
  if (m->structured && !m->mapped && !m->simplices && locate_structured(m, x, e, ref))
    return FEA_SUCCESS;
  FEA_CALL(ensure_grid(s, L));
  const locate_grid *G = &L->grid;
  int inside_box = 1;
  fea_index b = 0, stride = 1;
  for (int k = 0; k < d; k++) {
    double ext = G->hi[k] - G->lo[k], slack = LOCATE_TOL * ext;
    if (!(x[k] >= G->lo[k] - slack && x[k] <= G->hi[k] + slack)) inside_box = 0;
    b += stride * clamp_index((x[k] - G->lo[k]) * G->scale[k], G->n[k]);
    stride *= G->n[k];
  }
  for (fea_index i = inside_box ? G->start[b] : 0; inside_box && i < G->start[b + 1]; i++)
    if (try_cell(m, G->cells[i], x, ref)) {
      *e = G->cells[i];
      return FEA_SUCCESS;
    }
  char where[96];
  format_point(x, d, where, sizeof where);
  return FEA_ERROR(s->ctx, FEA_ERR_INVALID_ARG, "point %s is outside the mesh", where);
}

/* ---- the space ------------------------------------------------------------------------------- */

static void lagrange_destroy(fea_space *s) {
  impl_free(s->impl);
  s->impl = NULL;
  fea_object_release(s->mesh);
  s->mesh = NULL;
}

static const struct fea_space_ops lagrange_ops = {
    .element_dofs = lagrange_element_dofs,
    .element_values = lagrange_element_values,
    .locate = lagrange_locate,
    .interpolate = lagrange_interpolate,
    .destroy = lagrange_destroy,
};

fea_status fea_space_lagrange_build(struct fea_mesh *mesh, int order, fea_lagrange_nodes nodes,
                                    fea_space **out) {
  *out = NULL;
  int simplex = mesh->type == FEA_CELL_TRIANGLE || mesh->type == FEA_CELL_TETRAHEDRON;
  int max_order = simplex ? 2 : FEA_LAGRANGE_MAX_ORDER;
  FEA_CHECK(order >= 1 && order <= max_order, mesh->ctx, FEA_ERR_INVALID_ARG,
            "order %d is outside 1..%d for %s cells", order, max_order, fea_cell_name(mesh->type));
  FEA_CHECK(nodes == FEA_NODES_EQUISPACED || nodes == FEA_NODES_GAUSS_LOBATTO, mesh->ctx,
            FEA_ERR_INVALID_ARG, "unknown Lagrange node set %d", (int)nodes);
  /* From below, before anything is allocated: the cell-to-DoF map and the
   * coordinates of at least the mesh's nodes. */
  {
    fea_lagrange_element probe;
    (void)fea_lagrange_element_init(mesh->type, order, nodes, &probe); /* arguments checked above */
    const int nbasis = probe.nb;
    char what[128];
    snprintf(what, sizeof what, "a degree-%d Lagrange space on %lld cells", order,
             (long long)mesh->num_cells);
    FEA_CALL(fea_memory_require(mesh->ctx, 0,
                                fea_bytes((double)mesh->num_cells * nbasis, sizeof(fea_index)) +
                                    fea_bytes((double)mesh->num_nodes * mesh->dim, sizeof(double)),
                                what));
  }
  lagrange_impl *L = calloc(1, sizeof *L);
  FEA_CHECK(L, mesh->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a Lagrange space");
  if (pthread_mutex_init(&L->grid_lock, NULL) != 0) {
    free(L);
    return FEA_ERROR(mesh->ctx, FEA_ERR_OUT_OF_MEMORY, "cannot create a lock for point location");
  }
  atomic_init(&L->grid_ready, 0);
  (void)fea_lagrange_element_init(mesh->type, order, nodes, &L->el); /* arguments checked above */
  int nb = L->el.nb;
  if ((uint64_t)mesh->num_cells > SIZE_MAX / ((size_t)nb * sizeof(fea_index) * 2)) {
    impl_free(L);
    return FEA_ERROR(mesh->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "%lld cells of %d DoFs are too many to address", (long long)mesh->num_cells,
                     nb);
  }
  fea_index num_dofs = 0, num_boundary = 0, *boundary = NULL;
  fea_status st = number_space(mesh, order, L, &num_dofs, &boundary, &num_boundary);
  fea_space *s = NULL;
  if (st == FEA_SUCCESS) st = fea_space_alloc(mesh->ctx, &s);
  if (st != FEA_SUCCESS) {
    impl_free(L);
    free(boundary);
    return st;
  }
  fea_object_retain(mesh);
  s->mesh = mesh;
  s->kind = FEA_SPACE_LAGRANGE;
  s->cell = mesh->type;
  s->dim = mesh->dim;
  for (int k = 0; k < 3; k++) {
    s->degree[k] = k < s->dim ? order : 0;
    s->elements[k] = mesh->structured && k < s->dim ? mesh->n[k] : 0;
  }
  s->num_dofs = num_dofs;
  s->num_elements = mesh->num_cells;
  s->dofs_per_element = nb;
  s->num_boundary_dofs = num_boundary;
  s->boundary_dofs = boundary;
  s->ops = &lagrange_ops;
  s->impl = L;
  s->element_dof_table = L->cell_dofs;
  *out = s;
  return FEA_SUCCESS;
}

const fea_lagrange_element *fea_space_lagrange_element(const fea_space *s) {
  return s->kind == FEA_SPACE_LAGRANGE ? &((const lagrange_impl *)s->impl)->el : NULL;
}

const double *fea_space_lagrange_dof_coords(const fea_space *s) {
  return s->kind == FEA_SPACE_LAGRANGE ? ((const lagrange_impl *)s->impl)->dof_coords : NULL;
}

int fea_cell_num_facets(fea_cell_type type) {
  cell_topo t;
  topo_init(type, &t);
  return t.nfacet;
}

int fea_cell_facet_vertices(fea_cell_type type, int f, int v[4]) {
  cell_topo t;
  topo_init(type, &t);
  if (f < 0 || f >= t.nfacet) return 0;
  for (int j = 0; j < t.facet_nv; j++) v[j] = t.facet[f][j];
  return t.facet_nv;
}

const fea_index *fea_space_lagrange_boundary_facets(const fea_space *s, fea_index *count) {
  const lagrange_impl *L = s->kind == FEA_SPACE_LAGRANGE ? s->impl : NULL;
  *count = L ? L->num_bfacets : 0;
  return L ? L->bfacets : NULL;
}
