/* Meshes through the public API: structured boxes (counts, coordinates,
 * connectivity, simplices' orientation, measure and conformity), meshes from
 * arrays with every kind of bad input, inverted and degenerate cells of each
 * type, the getters' capacity checks and object lifetimes. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mesh-common.h"

static fea_mesh *box(fea_context *ctx, int dim, const fea_index n[3], const double lo[3],
                     const double hi[3], int simplices) {
  fea_mesh_desc d = FEA_MESH_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < 3; k++) {
    d.n[k] = n[k];
    d.lower[k] = lo[k];
    d.upper[k] = hi[k];
  }
  d.simplices = simplices;
  fea_mesh *m = NULL;
  OK(fea_mesh_create_structured(ctx, &d, &m));
  cr_assert_not_null(m);
  return m;
}

static const fea_index N[3] = {3, 2, 4};
static const double LO[3] = {-1.0, 0.5, 2.0}, HI[3] = {2.0, 1.5, 2.25};

/* ---- structured meshes ---------------------------------------------------------------------- */

Test(mesh, structured_counts_coordinates_and_cells) {
  fea_context *ctx = open_ref();
  static const fea_cell_type types[4] = {0, FEA_CELL_INTERVAL, FEA_CELL_QUAD, FEA_CELL_HEXAHEDRON};
  for (int dim = 1; dim <= 3; dim++) {
    fea_mesh *m = box(ctx, dim, N, LO, HI, 0);
    struct arrays a = get_arrays(m);
    fea_index nodes = 1, cells = 1;
    for (int k = 0; k < dim; k++) {
      nodes *= N[k] + 1;
      cells *= N[k];
    }
    cr_assert_eq(a.dim, dim);
    cr_assert_eq(a.type, types[dim]);
    cr_assert_eq(a.nn, nodes, "dim %d: %lld nodes, expected %lld", dim, (long long)a.nn,
                 (long long)nodes);
    cr_assert_eq(a.nc, cells);
    /* Node v = (i, j, k) lexicographically, x fastest, at lo + (hi - lo) i / n. */
    for (fea_index v = 0; v < a.nn; v++) {
      fea_index rest = v;
      for (int k = 0; k < dim; k++) {
        fea_index i = rest % (N[k] + 1);
        rest /= N[k] + 1;
        double want = LO[k] + (HI[k] - LO[k]) * (double)i / (double)N[k];
        cr_assert(fabs(a.x[v * dim + k] - want) <= 1e-15 * 4,
                  "dim %d node %lld coordinate %d is %.17g, expected %.17g", dim, (long long)v, k,
                  a.x[v * dim + k], want);
        if (i == 0) cr_assert_eq(a.x[v * dim + k], LO[k], "the box's lower face is not exact");
        if (i == N[k]) cr_assert_eq(a.x[v * dim + k], HI[k], "the box's upper face is not exact");
      }
    }
    /* Cell (i, j, k): its corners in the node order of mesh.h. */
    static const int corner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                     {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
    for (fea_index c = 0; c < a.nc; c++) {
      fea_index idx[3] = {c % N[0], (c / N[0]) % N[1], c / (N[0] * N[1])};
      for (int l = 0; l < a.npc; l++) {
        fea_index want = 0, stride = 1;
        for (int k = 0; k < dim; k++) {
          want += (idx[k] + corner[l][k]) * stride;
          stride *= N[k] + 1;
        }
        cr_assert_eq(a.c[c * a.npc + l], want, "dim %d cell %lld node %d", dim, (long long)c, l);
      }
    }
    double volume = 1;
    for (int k = 0; k < dim; k++) volume *= HI[k] - LO[k];
    cr_assert(fabs(total_measure(&a) - volume) <= 1e-13 * volume);
    OK(revalidate(ctx, &a));
    free_arrays(&a);
    OK(fea_mesh_destroy(&m));
    cr_assert_null(m);
  }
  OK(fea_context_destroy(&ctx));
}

static int cmp_key(const void *p, const void *q) {
  const fea_index *a = p, *b = q;
  for (int i = 0; i < 3; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/* Facets (edges of triangles, faces of tetrahedra) as sorted node triples
 * (edges padded with -1): in a conforming mesh each facet has one or two
 * cells, and the boundary facets are those of the box. */
static void check_conforming(const struct arrays *a, fea_index boundary_facets) {
  const int nf = a->npc, fn = a->npc - 1; /* facets per cell, nodes per facet */
  fea_index *keys = malloc((size_t)(a->nc * nf * 3) * sizeof *keys);
  for (fea_index c = 0; c < a->nc; c++)
    for (int f = 0; f < nf; f++) {
      fea_index *k = keys + (c * nf + f) * 3;
      int n = 0;
      for (int i = 0; i < a->npc; i++)
        if (i != f) k[n++] = a->c[c * a->npc + i];
      if (fn == 2) k[2] = -1;
      for (int i = 1; i < 3; i++) /* sort the three */
        for (int j = i; j > 0 && k[j - 1] > k[j]; j--) {
          fea_index t = k[j];
          k[j] = k[j - 1];
          k[j - 1] = t;
        }
    }
  qsort(keys, (size_t)(a->nc * nf), 3 * sizeof *keys, cmp_key);
  fea_index single = 0;
  for (fea_index i = 0; i < a->nc * nf;) {
    fea_index j = i + 1;
    while (j < a->nc * nf && cmp_key(keys + 3 * i, keys + 3 * j) == 0) j++;
    cr_assert(j - i <= 2, "a facet belongs to %lld cells", (long long)(j - i));
    single += j - i == 1;
    i = j;
  }
  cr_assert_eq(single, boundary_facets, "%lld facets with one cell, expected %lld on the boundary",
               (long long)single, (long long)boundary_facets);
  free(keys);
}

Test(mesh, structured_simplices) {
  fea_context *ctx = open_ref();
  for (int dim = 2; dim <= 3; dim++) {
    fea_mesh *m = box(ctx, dim, N, LO, HI, 1);
    struct arrays a = get_arrays(m);
    const int per_box = dim == 2 ? 2 : 6;
    fea_index boxes = 1, nodes = 1;
    for (int k = 0; k < dim; k++) {
      boxes *= N[k];
      nodes *= N[k] + 1;
    }
    cr_assert_eq(a.type, dim == 2 ? FEA_CELL_TRIANGLE : FEA_CELL_TETRAHEDRON);
    cr_assert_eq(a.nn, nodes);
    cr_assert_eq(a.nc, boxes * per_box);
    double volume = 1, box_volume;
    for (int k = 0; k < dim; k++) volume *= HI[k] - LO[k];
    box_volume = volume / (double)boxes;
    for (fea_index c = 0; c < a.nc; c++) {
      double mu = cell_measure(&a, c);
      /* Every simplex of a box has the same share of it. */
      cr_assert(fabs(mu - box_volume / per_box) <= 1e-13 * box_volume,
                "dim %d simplex %lld has measure %.17g, expected %.17g (positively oriented)", dim,
                (long long)c, mu, box_volume / per_box);
      /* Cells per_box*b .. per_box*b + per_box-1 lie in box b: their nodes
       * are corners of that box. */
      fea_index b = c / per_box, idx[3] = {b % N[0], (b / N[0]) % N[1], b / (N[0] * N[1])};
      for (int l = 0; l < a.npc; l++) {
        fea_index v = a.c[c * a.npc + l], rest = v;
        for (int k = 0; k < dim; k++) {
          fea_index i = rest % (N[k] + 1);
          rest /= N[k] + 1;
          cr_assert(i == idx[k] || i == idx[k] + 1, "simplex %lld has node %lld outside box %lld",
                    (long long)c, (long long)v, (long long)b);
        }
      }
    }
    cr_assert(fabs(total_measure(&a) - volume) <= 1e-13 * volume);
    /* Boundary facets: 2 per boundary box face in 3D (faces are split in two), 1 edge in 2D. */
    fea_index boundary = dim == 2 ? 2 * (N[0] + N[1])
                                  : 2 * 2 * (N[0] * N[1] + N[1] * N[2] + N[0] * N[2]);
    check_conforming(&a, boundary);
    OK(revalidate(ctx, &a));
    free_arrays(&a);
    OK(fea_mesh_destroy(&m));
  }
  OK(fea_context_destroy(&ctx));
}

Test(mesh, desc_size_versions) {
  fea_context *ctx = open_ref();
  fea_mesh *m = NULL;
  /* The first version of fea_mesh_desc is the whole struct: a caller that
   * knew only size and dim is refused, naming its size. */
  fea_mesh_desc d = FEA_MESH_DESC_INIT;
  d.dim = 3;
  d.size = offsetof(fea_mesh_desc, dim) + sizeof d.dim;
  char want[48];
  snprintf(want, sizeof want, "desc.size is %zu", d.size);
  m = (fea_mesh *)&m;
  EXPECT_FAIL(fea_mesh_create_structured(ctx, &d, &m), FEA_ERR_INVALID_ARG, ctx, want);
  cr_assert_null(m);
  /* A newer caller's larger struct: this library cannot honour the fields it
   * does not know, so it refuses instead of ignoring them. */
  struct {
    fea_mesh_desc d;
    double appended;
  } newer = {FEA_MESH_DESC_INIT, 1.0};
  newer.d.size = sizeof newer;
  snprintf(want, sizeof want, "desc.size is %zu", sizeof newer);
  m = (fea_mesh *)&m;
  EXPECT_FAIL(fea_mesh_create_structured(ctx, &newer.d, &m), FEA_ERR_INVALID_ARG, ctx, want);
  cr_assert_null(m);
  d.size = 4;
  m = (fea_mesh *)&m;
  EXPECT_FAIL(fea_mesh_create_structured(ctx, &d, &m), FEA_ERR_INVALID_ARG, ctx, "desc.size is 4");
  cr_assert_null(m);
  d.size = 0;
  EXPECT_FAIL(fea_mesh_create_structured(ctx, &d, &m), FEA_ERR_INVALID_ARG, ctx,
              "desc.size is 0; a fea_mesh_desc has");
  d.size = sizeof d;
  OK(fea_mesh_create_structured(ctx, &d, &m));
  OK(fea_mesh_destroy(&m));
  OK(fea_context_destroy(&ctx));
}

/* create_structured with one field changed must fail with want and needle. */
static void bad_desc(fea_context *ctx, fea_mesh_desc d, fea_status want, const char *needle) {
  fea_mesh *m = (fea_mesh *)&d; /* not NULL: a failed create must clear it */
  EXPECT_FAIL(fea_mesh_create_structured(ctx, &d, &m), want, ctx, needle);
  cr_assert_null(m, "a failed create left *out set (%s)", needle);
}

Test(mesh, structured_bad_arguments) {
  fea_context *ctx = open_ref();
  const fea_mesh_desc ok = FEA_MESH_DESC_INIT;
  fea_mesh *m = (fea_mesh *)&m;
  EXPECT_FAIL(fea_mesh_create_structured(NULL, &ok, &m), FEA_ERR_INVALID_ARG, NULL, "ctx");
  cr_assert_null(m);
  EXPECT_FAIL(fea_mesh_create_structured(ctx, NULL, &m), FEA_ERR_INVALID_ARG, ctx, "desc");
  EXPECT_FAIL(fea_mesh_create_structured(ctx, &ok, NULL), FEA_ERR_INVALID_ARG, ctx, "out");
  fea_mesh_desc d = ok;
  d.dim = 0;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "dim = 0 must be 1, 2 or 3");
  d.dim = 4;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "dim = 4");
  d = ok;
  d.n[1] = 0;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "n[1] = 0 must be at least 1");
  d.n[1] = -3;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "n[1] = -3");
  d = ok;
  d.dim = 1;
  d.n[1] = 0; /* beyond dim: ignored */
  OK(fea_mesh_create_structured(ctx, &d, &m));
  OK(fea_mesh_destroy(&m));
  d = ok;
  d.lower[0] = 1.0;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "lower[0] = 1 must be below upper[0] = 1");
  d = ok;
  d.upper[1] = -2.0;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "lower[1] = 0 must be below upper[1] = -2");
  d = ok;
  d.lower[1] = NAN;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "not finite");
  d = ok;
  d.upper[0] = INFINITY;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "inf");
  d = ok;
  d.dim = 1;
  d.simplices = 1;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "simplices = 1 needs dim 2 or 3");
  d = ok;
  d.simplices = 2;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "simplices = 2");
  d = ok;
  d.dim = 3;
  d.n[0] = d.n[1] = d.n[2] = (fea_index)1 << 40;
  bad_desc(ctx, d, FEA_ERR_OUT_OF_MEMORY, "too many");
  OK(fea_context_destroy(&ctx));
}

/* ---- meshes from arrays --------------------------------------------------------------------- */

/* Two triangles of the unit square. */
static const double sq_x[8] = {0, 0, 1, 0, 1, 1, 0, 1};
static const fea_index sq_c[6] = {0, 1, 2, 0, 2, 3};

Test(mesh, from_arrays_copies) {
  fea_context *ctx = open_ref();
  double x[8];
  fea_index c[6];
  memcpy(x, sq_x, sizeof x);
  memcpy(c, sq_c, sizeof c);
  fea_mesh *m = NULL;
  OK(fea_mesh_create_from_arrays(ctx, 2, FEA_CELL_TRIANGLE, 4, x, 2, c, &m));
  x[0] = 99; /* the mesh holds copies */
  c[0] = 3;
  struct arrays a = get_arrays(m);
  cr_assert_eq(a.nn, 4);
  cr_assert_eq(a.nc, 2);
  cr_assert_eq(memcmp(a.x, sq_x, sizeof sq_x), 0);
  cr_assert_eq(memcmp(a.c, sq_c, sizeof sq_c), 0);
  cr_assert(fabs(total_measure(&a) - 1.0) < 1e-15);
  free_arrays(&a);
  /* Triangles in 3D and segments in 2D are meshes too. */
  const double x3[9] = {0, 0, 5, 1, 0, 5, 0, 1, 6};
  const fea_index t3[3] = {0, 1, 2};
  fea_mesh *m3 = NULL, *seg = NULL;
  OK(fea_mesh_create_from_arrays(ctx, 3, FEA_CELL_TRIANGLE, 3, x3, 1, t3, &m3));
  OK(fea_mesh_create_from_arrays(ctx, 2, FEA_CELL_INTERVAL, 4, sq_x, 2, sq_c, &seg));
  OK(fea_mesh_destroy(&m3));
  OK(fea_mesh_destroy(&seg));
  OK(fea_mesh_destroy(&m));
  OK(fea_context_destroy(&ctx));
}

/* A ring of intervals in 2D and the closed surface of a tetrahedron in 3D
 * are meshes (to refine, to write), but no Lagrange space is built on them:
 * refused at the space, naming the cell type and both dimensions. */
Test(mesh, lagrange_space_needs_cells_of_the_coordinate_dimension) {
  fea_context *ctx = open_ref();
  const double ring_x[8] = {0, 0, 1, 0, 1, 1, 0, 1};
  const fea_index ring_c[8] = {0, 1, 1, 2, 2, 3, 3, 0};
  const double tet_x[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  const fea_index tet_c[12] = {0, 2, 1, 0, 1, 3, 1, 2, 3, 0, 3, 2};
  fea_mesh *ring = NULL, *surf = NULL, *fine = NULL;
  OK(fea_mesh_create_from_arrays(ctx, 2, FEA_CELL_INTERVAL, 4, ring_x, 4, ring_c, &ring));
  OK(fea_mesh_create_from_arrays(ctx, 3, FEA_CELL_TRIANGLE, 4, tet_x, 4, tet_c, &surf));
  OK(fea_mesh_refine_uniform(ring, &fine));
  fea_space *sp = (fea_space *)&sp;
  EXPECT_FAIL(fea_space_create_lagrange(ring, 1, FEA_NODES_EQUISPACED, &sp), FEA_ERR_UNSUPPORTED,
              ctx, "interval cells have dimension 1 but the mesh's coordinates have dimension 2");
  cr_assert_null(sp);
  EXPECT_FAIL(fea_space_create_lagrange(fine, 2, FEA_NODES_EQUISPACED, &sp), FEA_ERR_UNSUPPORTED,
              ctx, "interval cells have dimension 1");
  EXPECT_FAIL(fea_space_create_lagrange(surf, 1, FEA_NODES_EQUISPACED, &sp), FEA_ERR_UNSUPPORTED,
              ctx, "triangle cells have dimension 2 but the mesh's coordinates have dimension 3");
  cr_assert_null(sp);
  OK(fea_mesh_destroy(&fine));
  OK(fea_mesh_destroy(&surf));
  OK(fea_mesh_destroy(&ring));
  OK(fea_context_destroy(&ctx));
}

/* from_arrays must fail with want and a message containing needle, leaving *out NULL. */
#define BAD_ARRAYS(want, needle, ...)                                                \
  do {                                                                               \
    fea_mesh *bad_ = (fea_mesh *)&bad_;                                              \
    EXPECT_FAIL(fea_mesh_create_from_arrays(__VA_ARGS__, &bad_), want, ctx, needle); \
    cr_assert_null(bad_, "a failed create left *out set (%s)", needle);              \
  } while (0)

Test(mesh, from_arrays_bad_input) {
  fea_context *ctx = open_ref();
  fea_mesh *m = NULL;
  EXPECT_FAIL(fea_mesh_create_from_arrays(NULL, 2, FEA_CELL_TRIANGLE, 4, sq_x, 2, sq_c, &m),
              FEA_ERR_INVALID_ARG, NULL, "ctx");
  EXPECT_FAIL(fea_mesh_create_from_arrays(ctx, 2, FEA_CELL_TRIANGLE, 4, sq_x, 2, sq_c, NULL),
              FEA_ERR_INVALID_ARG, ctx, "out");
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "coords", ctx, 2, FEA_CELL_TRIANGLE, 4, NULL, 2, sq_c);
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "cells", ctx, 2, FEA_CELL_TRIANGLE, 4, sq_x, 2, NULL);
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "dim = 0", ctx, 0, FEA_CELL_TRIANGLE, 4, sq_x, 2, sq_c);
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "dim = 4", ctx, 4, FEA_CELL_TRIANGLE, 4, sq_x, 2, sq_c);
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "unknown cell type 9", ctx, 2, (fea_cell_type)9, 4, sq_x, 2,
             sq_c);
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "unknown cell type 0", ctx, 2, (fea_cell_type)0, 4, sq_x, 2,
             sq_c);
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "tetrahedron cells need dim >= 3, got dim = 2", ctx, 2,
             FEA_CELL_TETRAHEDRON, 4, sq_x, 1, sq_c);
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "triangle cells need dim >= 2, got dim = 1", ctx, 1,
             FEA_CELL_TRIANGLE, 8, sq_x, 2, sq_c);
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "num_nodes = 0 must be at least 1", ctx, 2, FEA_CELL_TRIANGLE, 0,
             sq_x, 2, sq_c);
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "num_cells = -1 must be at least 1", ctx, 2, FEA_CELL_TRIANGLE, 4,
             sq_x, -1, sq_c);
  const fea_index out_of_range[6] = {0, 1, 2, 0, 2, 4};
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "cell 1, node 2 is 4, outside [0, 4)", ctx, 2, FEA_CELL_TRIANGLE,
             4, sq_x, 2, out_of_range);
  const fea_index negative[6] = {0, -1, 2, 0, 2, 3};
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "cell 0, node 1 is -1", ctx, 2, FEA_CELL_TRIANGLE, 4, sq_x, 2,
             negative);
  const fea_index twice[6] = {0, 1, 2, 0, 2, 0};
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "cell 1 lists node 0 twice", ctx, 2, FEA_CELL_TRIANGLE, 4, sq_x,
             2, twice);
  double x[8];
  memcpy(x, sq_x, sizeof x);
  x[5] = NAN;
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "coordinate 1 of node 2 is nan", ctx, 2, FEA_CELL_TRIANGLE, 4, x,
             2, sq_c);
  x[5] = 1;
  x[6] = -INFINITY;
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "coordinate 0 of node 3 is -inf", ctx, 2, FEA_CELL_TRIANGLE, 4, x,
             2, sq_c);
  OK(fea_context_destroy(&ctx));
}

/* ---- inverted and degenerate cells ---------------------------------------------------------- */

struct bad_cell {
  const char *what;
  int dim;
  fea_cell_type type;
  fea_index nn;
  double x[33];
  fea_index nc;
  fea_index c[16];
  const char *needle;
};

/* clang-format off */
static const struct bad_cell bad_cells[] = {
    {"interval backwards", 1, FEA_CELL_INTERVAL, 3, {0, 1, 3}, 2, {0, 1, 2, 1},
     "cell 1 (interval 2 1) is inverted: length -2"},
    {"interval of length 0", 1, FEA_CELL_INTERVAL, 3, {0, 1, 1}, 2, {0, 1, 1, 2},
     "cell 1 (interval 1 2) is degenerate"},
    {"segment of length 0 in 2D", 2, FEA_CELL_INTERVAL, 2, {0.5, 2, 0.5, 2}, 1, {0, 1},
     "cell 0 (interval 0 1) is degenerate"},
    {"clockwise triangle", 2, FEA_CELL_TRIANGLE, 4, {0, 0, 1, 0, 1, 1, 0, 1}, 2, {0, 1, 2, 0, 3, 2},
     "cell 1 (triangle 0 3 2) is inverted: signed area -0.5"},
    {"flat triangle", 2, FEA_CELL_TRIANGLE, 3, {0, 0, 1, 1, 3, 3}, 1, {0, 1, 2},
     "cell 0 (triangle 0 1 2) is degenerate: signed area 0"},
    {"nearly flat triangle", 2, FEA_CELL_TRIANGLE, 3, {0, 0, 1, -1e-16, 2, 0}, 1, {0, 1, 2},
     "cell 0 (triangle 0 1 2) is degenerate: signed area 1e-16"},
    {"flat triangle in 3D", 3, FEA_CELL_TRIANGLE, 3, {0, 0, 0, 1, 1, 1, 2, 2, 2}, 1, {0, 1, 2},
     "cell 0 (triangle 0 1 2) is degenerate: area 0"},
    {"concave quad", 2, FEA_CELL_QUAD, 11,
     {9, 9, 10, 9, 10, 10, 9, 10, 2, 0, 2, 1, 0, 0, 0, 0, 0, 0, 3, 0, 2.25, 0.5}, 2,
     {0, 1, 2, 3, 4, 9, 10, 5}, "cell 1 (quad 4 9 10 5) is inverted: Jacobian determinant -0.25 at corner 2"},
    {"clockwise quad", 2, FEA_CELL_QUAD, 4, {0, 0, 1, 0, 1, 1, 0, 1}, 1, {0, 3, 2, 1},
     "cell 0 (quad 0 3 2 1) is inverted: Jacobian determinant -1 at corner 0"},
    {"quad with a flat corner", 2, FEA_CELL_QUAD, 4, {0, 0, 1, 0, 2, 0, 0, 1}, 1, {0, 1, 2, 3},
     "cell 0 (quad 0 1 2 3) is degenerate: Jacobian determinant 0 at corner 1"},
    {"folded quad in 3D", 3, FEA_CELL_QUAD, 4, {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0}, 1,
     {0, 1, 2, 3}, "cell 0 (quad 0 1 2 3) is folded"},
    {"flat quad in 3D", 3, FEA_CELL_QUAD, 4, {0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0}, 1, {0, 1, 2, 3},
     "cell 0 (quad 0 1 2 3) is degenerate"},
    {"negative tetrahedron", 3, FEA_CELL_TETRAHEDRON, 4, {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3}, 1,
     {0, 2, 1, 3}, "cell 0 (tetrahedron 0 2 1 3) is inverted: signed volume -0.5"},
    {"flat tetrahedron", 3, FEA_CELL_TETRAHEDRON, 4, {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0}, 1,
     {0, 1, 2, 3}, "cell 0 (tetrahedron 0 1 2 3) is degenerate: signed volume 0"},
    {"upside-down hexahedron", 3, FEA_CELL_HEXAHEDRON, 8,
     {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1}, 1,
     {4, 5, 6, 7, 0, 1, 2, 3}, "cell 0 (hexahedron 4 5 6 7 0 1 2 3) is inverted: Jacobian "
                               "determinant -1 at corner 0"},
    {"hexahedron with corner 6 pushed in past the diagonal plane", 3, FEA_CELL_HEXAHEDRON, 8,
     {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0.5, 0.5, 0.5, 0, 1, 1}, 1,
     {0, 1, 2, 3, 4, 5, 6, 7}, "is inverted: Jacobian determinant -0.5 at corner 6"},
    {"hexahedron with coincident top", 3, FEA_CELL_HEXAHEDRON, 8,
     {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}, 1,
     {0, 1, 2, 3, 4, 5, 6, 7}, "cell 0 (hexahedron 0 1 2 3 4 5 6 7) is degenerate: Jacobian "
                               "determinant 0 at corner 0"},
};
/* clang-format on */

Test(mesh, inverted_and_degenerate_cells) {
  fea_context *ctx = open_ref();
  for (size_t i = 0; i < sizeof bad_cells / sizeof bad_cells[0]; i++) {
    const struct bad_cell *b = &bad_cells[i];
    cr_log_info("%s", b->what);
    BAD_ARRAYS(FEA_ERR_INVALID_ARG, b->needle, ctx, b->dim, b->type, b->nn, b->x, b->nc, b->c);
  }
  /* The same cells the right way round are accepted. */
  const double tet_x[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3};
  const fea_index tet_c[4] = {0, 1, 2, 3};
  fea_mesh *m = NULL;
  OK(fea_mesh_create_from_arrays(ctx, 3, FEA_CELL_TETRAHEDRON, 4, tet_x, 1, tet_c, &m));
  OK(fea_mesh_destroy(&m));
  OK(fea_context_destroy(&ctx));
}

Test(mesh, tolerance_is_relative_to_the_cell) {
  /* A tiny but well-shaped triangle far from the origin is fine. */
  fea_context *ctx = open_ref();
  const double x[6] = {1e-9, 1e-9, 2e-9, 1e-9, 1e-9, 2e-9};
  const fea_index c[3] = {0, 1, 2};
  fea_mesh *m = NULL;
  OK(fea_mesh_create_from_arrays(ctx, 2, FEA_CELL_TRIANGLE, 3, x, 1, c, &m));
  OK(fea_mesh_destroy(&m));
  /* Nodes a rounding error apart at 1e6 coincide. */
  const double far[4] = {1e6, 1e6 + 1e-9, 0, 0};
  const fea_index seg[2] = {0, 1};
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "nodes coincide", ctx, 1, FEA_CELL_INTERVAL, 2, far, 1, seg);
  OK(fea_context_destroy(&ctx));
}

/* Cells whose measures leave the normal doubles: refused by size, with the
 * size named, instead of failing later (a mesh 1e-320 wide passed and
 * multigrid then failed in dstev; a node at 1e308 was called a degenerate
 * cell with "Jacobian determinant 1"). Small but representable cells pass. */
Test(mesh, cells_outside_the_representable_sizes) {
  fea_context *ctx = open_ref();
  fea_mesh_desc d = FEA_MESH_DESC_INIT;
  d.n[0] = d.n[1] = 8;
  d.upper[0] = d.upper[1] = 1e-320;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "has size 1.24999e-321");
  d.upper[0] = d.upper[1] = 1e300;
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "has size 1.25e+299");
  d.upper[0] = d.upper[1] = 1.0;
  d.lower[0] = 1e300;
  d.upper[0] = 1e300 * (1 + 1e-15);
  bad_desc(ctx, d, FEA_ERR_INVALID_ARG, "below the rounding of coordinates near 1e+300");
  const fea_index quad[4] = {0, 1, 2, 3};
  const double huge[8] = {0, 0, 1, 0, 1e308, 1e308, 0, 1};
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "has size 1.41421e+308", ctx, 2, FEA_CELL_QUAD, 4, huge, 1, quad);
  const double tiny[8] = {0, 0, 1e-310, 0, 1e-310, 1e-310, 0, 1e-310};
  BAD_ARRAYS(FEA_ERR_INVALID_ARG, "has size 1.41421e-310", ctx, 2, FEA_CELL_QUAD, 4, tiny, 1, quad);
  /* A B-spline box of denormal width: refused per element. */
  fea_bspline_desc b = FEA_BSPLINE_DESC_INIT;
  b.upper[0] = b.upper[1] = 1e-320;
  fea_space *sp = (fea_space *)&sp;
  EXPECT_FAIL(fea_space_create_bspline(ctx, &b, &sp), FEA_ERR_INVALID_ARG, ctx,
              "element 0 of direction 0 has size");
  cr_assert_null(sp);
  /* Nanometre cells are fine. */
  d = (fea_mesh_desc)FEA_MESH_DESC_INIT;
  d.dim = 3;
  d.n[0] = d.n[1] = d.n[2] = 2;
  d.upper[0] = d.upper[1] = d.upper[2] = 1e-9;
  fea_mesh *m = NULL;
  OK(fea_mesh_create_structured(ctx, &d, &m));
  OK(fea_mesh_destroy(&m));
  /* 8e9 cells: refused against the memory budget before anything is allocated. */
  d.n[0] = d.n[1] = d.n[2] = 2000;
  OK(fea_context_set_memory_limit(ctx, 1ull << 30));
  bad_desc(ctx, d, FEA_ERR_OUT_OF_MEMORY, "8000000000 box cells needs");
  OK(fea_context_destroy(&ctx));
}

/* ---- getters and lifetimes ------------------------------------------------------------------ */

Test(mesh, getters_check_capacity) {
  fea_context *ctx = open_ref();
  fea_mesh *m = NULL;
  OK(fea_mesh_create_from_arrays(ctx, 2, FEA_CELL_TRIANGLE, 4, sq_x, 2, sq_c, &m));
  double x[8] = {0};
  fea_index c[6] = {0};
  EXPECT_FAIL(fea_mesh_get_coordinates(m, 5, x), FEA_ERR_DIMENSION, ctx, "capacity 5 < 8 needed");
  EXPECT_FAIL(fea_mesh_get_cells(m, 5, c), FEA_ERR_DIMENSION, ctx, "capacity 5 < 6 needed");
  for (int i = 0; i < 6; i++) cr_assert_eq(c[i], 0, "a failed get wrote the array");
  EXPECT_FAIL(fea_mesh_get_coordinates(m, 8, NULL), FEA_ERR_INVALID_ARG, ctx, "coords");
  EXPECT_FAIL(fea_mesh_get_cells(m, 6, NULL), FEA_ERR_INVALID_ARG, ctx, "cells");
  EXPECT_FAIL(fea_mesh_get_parents(m, 2, c), FEA_ERR_STATE, ctx, "fea_mesh_refine_uniform");
  EXPECT_FAIL(fea_mesh_get_info(NULL, NULL, NULL, NULL, NULL), FEA_ERR_INVALID_ARG, NULL, "mesh");
  EXPECT_FAIL(fea_mesh_get_coordinates(NULL, 8, x), FEA_ERR_INVALID_ARG, NULL, "mesh");
  OK(fea_mesh_get_info(m, NULL, NULL, NULL, NULL));
  OK(fea_mesh_destroy(&m));
  OK(fea_context_destroy(&ctx));
}

Test(mesh, destroy_order_and_null) {
  OK(fea_mesh_destroy(NULL));
  fea_mesh *m = NULL;
  OK(fea_mesh_destroy(&m));
  fea_context *ctx = open_ref();
  OK(fea_mesh_create_from_arrays(ctx, 2, FEA_CELL_TRIANGLE, 4, sq_x, 2, sq_c, &m));
  OK(fea_context_destroy(&ctx)); /* the mesh holds the context */
  fea_index nc = 0;
  OK(fea_mesh_get_info(m, NULL, NULL, NULL, &nc));
  cr_assert_eq(nc, 2);
  double x[8];
  EXPECT_FAIL(fea_mesh_get_coordinates(m, 1, x), FEA_ERR_DIMENSION, NULL, "capacity 1 < 8");
  OK(fea_mesh_destroy(&m));
  cr_assert_null(m);
}
