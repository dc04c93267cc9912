/* Uniform refinement: interval -> 2, triangle -> 4 (red), quad -> 4, hex -> 8.
 *
 * Node numbering of the fine mesh: the coarse nodes first with their numbers,
 * then one node per coarse edge of a triangle, quad or hexahedron (its
 * midpoint), per hexahedron face (its center), and per interval, quad or
 * hexahedron (its center), each group in order of first appearance along the
 * coarse cells. Children of coarse cell c are fine
 * cells c * nchild .. c * nchild + nchild - 1; child l of a quad or hexahedron
 * holds the parent's local node l.
 *
 * Edges and faces shared by several cells get one node: they are found by
 * their sorted node numbers in a hash table. New nodes are placed at the image
 * of the reference midpoints under the parent's (multi)linear map, so every
 * child is the exact restriction of its parent and measures add up.
 *
 * The fine mesh of a structured mesh is not marked structured: its numbering
 * is coarse-nodes-first, not lexicographic, and Cartesian shortcuts (the 2^d
 * coloring formula) would be wrong on it.
 *
 * The boundary facets of a mesh read from Gmsh (mesh-boundary.h) are split
 * with the cells' edges and faces, each child in its parent's physical
 * groups, so that a refined mesh keeps its boundary parts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "mesh-boundary.h"
#include "mesh.h"

/* ---- a set of keys of K sorted node numbers, numbered in insertion order ---------------------- */

struct keyset {
  int K;
  fea_index count, capacity;
  fea_index *keys;  /* count * K, key i at keys + i K */
  fea_index *slots; /* hash slots holding a key number, -1 when empty */
  size_t mask;
};

static int keyset_init(struct keyset *s, int K, fea_index capacity) {
  size_t nslots = 16;
  while (nslots < (size_t)capacity * 2) nslots *= 2;
  s->K = K;
  s->count = 0;
  s->capacity = capacity;
  s->mask = nslots - 1;
  s->keys = malloc((size_t)(capacity > 0 ? capacity : 1) * (size_t)K * sizeof *s->keys);
  s->slots = malloc(nslots * sizeof *s->slots);
  if (!s->keys || !s->slots) return 0;
  memset(s->slots, 0xff, nslots * sizeof *s->slots); /* all -1 */
  return 1;
}

static void keyset_free(struct keyset *s) {
  free(s->keys);
  free(s->slots);
}

static uint64_t hash_key(const fea_index *key, int K) {
  uint64_t h = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < K; i++) {
    h ^= (uint64_t)key[i];
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 31;
  }
  return h;
}

/* Number of the key made of nodes v[0..K) (any order): the existing one or a
 * new one. The capacity is an upper bound on distinct keys, so it never fills. */
static fea_index keyset_insert(struct keyset *s, const fea_index *v) {
  fea_index key[4];
  for (int i = 0; i < s->K; i++) { /* insertion sort of at most four values */
    fea_index x = v[i];
    int j = i;
    for (; j > 0 && key[j - 1] > x; j--) key[j] = key[j - 1];
    key[j] = x;
  }
  size_t slot = (size_t)hash_key(key, s->K) & s->mask;
  for (;; slot = (slot + 1) & s->mask) {
    fea_index id = s->slots[slot];
    if (id < 0) break;
    if (memcmp(s->keys + id * s->K, key, (size_t)s->K * sizeof *key) == 0) return id;
  }
  fea_index id = s->count++;
  memcpy(s->keys + id * s->K, key, (size_t)s->K * sizeof *key);
  s->slots[slot] = id;
  return id;
}

/* Number of the key of nodes v[0..K) (any order), or -1 when it is not in the set. */
static fea_index keyset_find(const struct keyset *s, const fea_index *v) {
  fea_index key[4];
  for (int i = 0; i < s->K; i++) {
    fea_index x = v[i];
    int j = i;
    for (; j > 0 && key[j - 1] > x; j--) key[j] = key[j - 1];
    key[j] = x;
  }
  for (size_t slot = (size_t)hash_key(key, s->K) & s->mask;; slot = (slot + 1) & s->mask) {
    const fea_index id = s->slots[slot];
    if (id < 0) return -1;
    if (memcmp(s->keys + id * s->K, key, (size_t)s->K * sizeof *key) == 0) return id;
  }
}

/* ---- the sub-lattice of a cell ---------------------------------------------------------------- */

/* Points of the reference cell with coordinates in {0, 1/2, 1}, stored as
 * t in {0, 1, 2} per direction at index t0 + 3 t1 + 9 t2. A point with k
 * coordinates equal to 1/2 is the center of a k-dimensional entity whose
 * corners are the 2^k corners around it. */
#define LATTICE_MAX 27

/* Coarse corner nodes around lattice point p of a tensor cell. */
static int lattice_support(const fea_index *cell, int ndir, int p, fea_index *nodes) {
  int fixed = 0, free_dirs[3], nfree = 0;
  for (int d = 0, q = p; d < ndir; d++, q /= 3) {
    int t = q % 3;
    if (t == 1)
      free_dirs[nfree++] = d;
    else if (t == 2)
      fixed |= 1 << d;
  }
  for (int s = 0; s < (1 << nfree); s++) {
    int bits = fixed;
    for (int f = 0; f < nfree; f++)
      if (s & (1 << f)) bits |= 1 << free_dirs[f];
    nodes[s] = cell[fea_cell_corner_bits[bits]];
  }
  return nfree;
}

static const int triangle_edges[3][2] = {{0, 1}, {1, 2}, {2, 0}};
/* Red refinement over the points v0 v1 v2 m01 m12 m20 (numbered 0..5): three
 * corner triangles and the middle one, all with the parent's orientation. */
static const int triangle_children[4][3] = {{0, 3, 5}, {3, 1, 4}, {5, 4, 2}, {3, 4, 5}};

/* Node numbers of the lattice points of coarse cell c (tensor cells) or of its
 * three vertices and edge midpoints (triangles). Edge and face numbers are
 * those of the key sets; `base` shifts them into the fine numbering (pass
 * zeros to only collect the keys). */
static void cell_points(const fea_mesh *m, fea_index c, struct keyset *edges, struct keyset *faces,
                        const fea_index base[3], fea_index *pts) {
  const fea_index *cell = m->cells + c * m->nodes_per_cell;
  if (m->type == FEA_CELL_TRIANGLE) {
    for (int i = 0; i < 3; i++) {
      pts[i] = cell[i];
      fea_index e[2] = {cell[triangle_edges[i][0]], cell[triangle_edges[i][1]]};
      pts[3 + i] = base[0] + keyset_insert(edges, e);
    }
    return;
  }
  const int ndir = fea_cell_dim(m->type), npoints = ndir == 1 ? 3 : ndir == 2 ? 9 : 27;
  for (int p = 0; p < npoints; p++) {
    fea_index support[8];
    int k = lattice_support(cell, ndir, p, support);
    if (k == 0)
      pts[p] = support[0];
    else if (k == ndir)
      pts[p] = base[2] + c;
    else if (k == 1)
      pts[p] = base[0] + keyset_insert(edges, support);
    else
      pts[p] = base[1] + keyset_insert(faces, support);
  }
}

/* Coordinates of a new node: the mean of `count` coarse nodes. */
static void mean_of(const fea_mesh *coarse, const fea_index *nodes, int count, double *x) {
  const int dim = coarse->dim;
  for (int k = 0; k < dim; k++) {
    double sum = 0.0;
    for (int i = 0; i < count; i++) sum += coarse->coords[nodes[i] * dim + k];
    x[k] = sum / count;
  }
}

/* The children of boundary facet f (nodes fn, nv of them) in fine numbers,
 * FEA_FACET_MAX_NODES each; their count, 0 when the facet is no edge or
 * face of a cell (no problem can use it then: it is dropped). A point stays
 * itself, a line splits at its edge's midpoint, a quad (nodes in cyclic
 * order, as Gmsh lists them) around its face's center. */
static int facet_children(const fea_index *fn, int nv, const struct keyset *edges,
                          const struct keyset *faces, const fea_index base[3], fea_index *out) {
  for (int i = 0; i < 4 * FEA_FACET_MAX_NODES; i++) out[i] = -1;
  if (nv == 1) {
    out[0] = fn[0];
    return 1;
  }
  if (nv != 2 && nv != 4) return 0;   /* triangles: tetrahedra are not refined */
  const int nedges = nv == 2 ? 1 : 4; /* a line is its own edge */
  fea_index mid[4];
  for (int i = 0; i < nedges; i++) {
    const fea_index e[2] = {fn[i], fn[(i + 1) % nv]};
    const fea_index id = keyset_find(edges, e);
    if (id < 0) return 0;
    mid[i] = base[0] + id;
  }
  if (nv == 2) {
    out[0] = fn[0];
    out[1] = mid[0];
    out[FEA_FACET_MAX_NODES] = mid[0];
    out[FEA_FACET_MAX_NODES + 1] = fn[1];
    return 2;
  }
  const fea_index id = keyset_find(faces, fn);
  if (id < 0) return 0;
  const fea_index ctr = base[1] + id;
  for (int l = 0; l < 4; l++) { /* around corner l: it, the next midpoint, the center, the last */
    fea_index *child = out + l * FEA_FACET_MAX_NODES;
    child[0] = fn[l];
    child[1] = mid[l];
    child[2] = ctr;
    child[3] = mid[(l + 3) % 4];
  }
  return 4;
}

/* The coarse mesh's boundary facets and groups, refined, into m. */
static fea_status refine_boundary(const fea_mesh *coarse, const struct keyset *edges,
                                  const struct keyset *faces, const fea_index base[3],
                                  fea_mesh *m) {
  const fea_mesh_boundary *cb = coarse->boundary;
  if (!cb) return FEA_SUCCESS;
  fea_mesh_boundary *b = calloc(1, sizeof *b);
  const size_t ng = (size_t)(cb->num_groups > 0 ? cb->num_groups : 1);
  const size_t ne = (size_t)cb->num_entities, nof = (size_t)cb->entity_start[ne];
  const size_t nf = (size_t)(cb->num_facets > 0 ? cb->num_facets : 1) * 4;
  if (b) {
    b->group_tag = malloc(ng * sizeof *b->group_tag);
    b->group_name = calloc(ng, sizeof *b->group_name);
    b->group_facets = calloc(ng, sizeof *b->group_facets);
    b->entity_start = malloc((ne + 1) * sizeof *b->entity_start);
    b->group_of = malloc((nof > 0 ? nof : 1) * sizeof *b->group_of);
    b->facet_nodes = malloc(nf * FEA_FACET_MAX_NODES * sizeof *b->facet_nodes);
    b->facet_entity = malloc(nf * sizeof *b->facet_entity);
  }
  int ok = b && b->group_tag && b->group_name && b->group_facets && b->entity_start &&
           b->group_of && b->facet_nodes && b->facet_entity;
  for (int g = 0; ok && g < cb->num_groups; g++) {
    b->num_groups = g + 1; /* names so far are freed on failure */
    b->group_tag[g] = cb->group_tag[g];
    if (cb->group_name[g]) {
      const size_t len = strlen(cb->group_name[g]);
      b->group_name[g] = malloc(len + 1);
      if (b->group_name[g]) memcpy(b->group_name[g], cb->group_name[g], len + 1);
      ok = b->group_name[g] != NULL;
    }
  }
  if (!ok) {
    fea_mesh_boundary_free(b);
    return FEA_ERROR(coarse->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld boundary facets",
                     (long long)nf);
  }
  b->num_groups = cb->num_groups;
  b->num_entities = cb->num_entities;
  memcpy(b->entity_start, cb->entity_start, (ne + 1) * sizeof *b->entity_start);
  memcpy(b->group_of, cb->group_of, nof * sizeof *b->group_of);
  for (fea_index f = 0; f < cb->num_facets; f++) {
    const fea_index *fn = cb->facet_nodes + f * FEA_FACET_MAX_NODES;
    int nv = 0;
    while (nv < FEA_FACET_MAX_NODES && fn[nv] >= 0) nv++;
    fea_index children[4 * FEA_FACET_MAX_NODES];
    const int k = facet_children(fn, nv, edges, faces, base, children);
    const int e = cb->facet_entity[f];
    for (int l = 0; l < k; l++) {
      const fea_index at = b->num_facets++;
      memcpy(b->facet_nodes + at * FEA_FACET_MAX_NODES, children + l * FEA_FACET_MAX_NODES,
             FEA_FACET_MAX_NODES * sizeof *children);
      b->facet_entity[at] = e;
      for (int j = e < 0 ? 0 : b->entity_start[e]; e >= 0 && j < b->entity_start[e + 1]; j++)
        b->group_facets[b->group_of[j]]++;
    }
  }
  m->boundary = b;
  return FEA_SUCCESS;
}

fea_status fea_mesh_build_refined(const fea_mesh *coarse, fea_mesh **fine) {
  fea_context *ctx = coarse->ctx;
  const fea_cell_type type = coarse->type;
  FEA_CHECK(type != FEA_CELL_TETRAHEDRON, ctx, FEA_ERR_UNSUPPORTED,
            "uniform refinement of tetrahedra is not supported (the octahedron in the middle of "
            "a red refinement has no canonical split); create the finer mesh directly");
  const int ndir = fea_cell_dim(type);
  const int nchild = type == FEA_CELL_TRIANGLE ? 4 : 1 << ndir;
  const fea_index ncells = coarse->num_cells;
  FEA_CHECK(ncells <= INT64_MAX / 12 / 8, ctx, FEA_ERR_OUT_OF_MEMORY,
            "%lld cells are too many to refine", (long long)ncells);
  /* Upper bounds of distinct edges and faces (every local one distinct), by
   * cell type; an interval's midpoint counts as its center, not an edge. */
  static const int local_edges[6] = {0, 0, 3, 4, 0, 12}, local_faces[6] = {0, 0, 0, 0, 0, 6};
  struct keyset edges = {0}, faces = {0};
  int ok = keyset_init(&edges, 2, ncells * local_edges[type]) &&
           keyset_init(&faces, 4, ncells * local_faces[type]);
  if (!ok) {
    keyset_free(&edges);
    keyset_free(&faces);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the edges of %lld cells",
                     (long long)ncells);
  }

  /* Pass 1 numbers the edges and faces, which sizes the fine mesh. */
  fea_index pts[LATTICE_MAX];
  const fea_index zero[3] = {0, 0, 0};
  for (fea_index c = 0; c < ncells; c++) cell_points(coarse, c, &edges, &faces, zero, pts);
  const int has_center = type != FEA_CELL_TRIANGLE; /* an interval's midpoint is its center */
  const fea_index base[3] = {coarse->num_nodes, coarse->num_nodes + edges.count,
                             coarse->num_nodes + edges.count + faces.count};
  const fea_index num_nodes = base[2] + (has_center ? ncells : 0);

  fea_mesh *m;
  fea_status s = fea_mesh_alloc(ctx, coarse->dim, type, num_nodes, ncells * nchild, &m);
  if (s == FEA_SUCCESS) {
    m->parents = malloc((size_t)m->num_cells * sizeof *m->parents);
    if (!m->parents) {
      fea_object_release(m);
      s = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the parents of %lld cells",
                    (long long)(ncells * nchild));
    }
  }
  if (s != FEA_SUCCESS) {
    keyset_free(&edges);
    keyset_free(&faces);
    return s;
  }

  const int dim = coarse->dim;
  memcpy(m->coords, coarse->coords, (size_t)coarse->num_nodes * (size_t)dim * sizeof(double));
  /* From the sorted keys, so that every cell around an edge or face would
   * compute the same coordinates. */
  for (fea_index e = 0; e < edges.count; e++)
    mean_of(coarse, edges.keys + 2 * e, 2, m->coords + (base[0] + e) * dim);
  for (fea_index f = 0; f < faces.count; f++)
    mean_of(coarse, faces.keys + 4 * f, 4, m->coords + (base[1] + f) * dim);

  /* Pass 2 finds the same edges and faces again and writes the children. */
  const int npc = m->nodes_per_cell;
  for (fea_index c = 0; c < ncells; c++) {
    cell_points(coarse, c, &edges, &faces, base, pts);
    if (has_center) mean_of(coarse, coarse->cells + c * npc, npc, m->coords + (base[2] + c) * dim);
    for (int l = 0; l < nchild; l++) {
      fea_index *child = m->cells + (c * nchild + l) * npc;
      m->parents[c * nchild + l] = c;
      if (type == FEA_CELL_TRIANGLE) {
        for (int i = 0; i < 3; i++) child[i] = pts[triangle_children[l][i]];
        continue;
      }
      const int cb = fea_cell_corner_bits[l];
      for (int i = 0; i < npc; i++) {
        const int nb = fea_cell_corner_bits[i];
        int p = 0;
        for (int d = 0, w = 1; d < ndir; d++, w *= 3) p += w * (((cb >> d) & 1) + ((nb >> d) & 1));
        child[i] = pts[p];
      }
    }
  }
  s = refine_boundary(coarse, &edges, &faces, base, m);
  keyset_free(&edges);
  keyset_free(&faces);
  if (s != FEA_SUCCESS) {
    fea_object_release(m);
    return s;
  }
  *fine = m;
  return FEA_SUCCESS;
}
