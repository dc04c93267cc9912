/* Uniform refinement: counts, coarse nodes kept with their numbers, parents,
 * measure kept, children positively oriented, no duplicated nodes (the node
 * count of a refined box matches the closed form, and the node set is that
 * of the box mesh with twice the cells), repeated refinement, and the errors. */
#include <stdlib.h>

#include "mesh-common.h"

static fea_mesh *box(fea_context *ctx, int dim, const fea_index n[3], int simplices) {
  fea_mesh_desc d = FEA_MESH_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < 3; k++) {
    d.n[k] = n[k];
    d.lower[k] = -0.5 + k;
    d.upper[k] = 0.25 + 1.5 * k;
  }
  d.simplices = simplices;
  fea_mesh *m = NULL;
  OK(fea_mesh_create_structured(ctx, &d, &m));
  return m;
}

static int dim_of_rows;
static int cmp_rows(const void *p, const void *q) {
  const double *a = p, *b = q;
  for (int k = 0; k < dim_of_rows; k++)
    if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
  return 0;
}

/* The coordinates of a, sorted row by row. */
static double *sorted_coords(const struct arrays *a) {
  double *x = malloc((size_t)(a->nn * a->dim) * sizeof *x);
  memcpy(x, a->x, (size_t)(a->nn * a->dim) * sizeof *x);
  dim_of_rows = a->dim;
  qsort(x, (size_t)a->nn, (size_t)a->dim * sizeof *x, cmp_rows);
  return x;
}

static int children_of(fea_cell_type t) {
  return t == FEA_CELL_INTERVAL ? 2 : t == FEA_CELL_HEXAHEDRON ? 8 : 4;
}

/* Everything a refinement must satisfy, for any coarse mesh. */
static void check_refinement(fea_context *ctx, const fea_mesh *coarse, const fea_mesh *fine) {
  struct arrays c = get_arrays(coarse), f = get_arrays(fine);
  const int nchild = children_of(c.type);
  cr_assert_eq(f.dim, c.dim);
  cr_assert_eq(f.type, c.type);
  cr_assert_eq(f.nc, c.nc * nchild, "%lld fine cells from %lld coarse ones", (long long)f.nc,
               (long long)c.nc);
  /* Coarse nodes first, same numbers, same coordinates bit for bit. */
  cr_assert(f.nn > c.nn);
  cr_assert_eq(memcmp(f.x, c.x, (size_t)(c.nn * c.dim) * sizeof *c.x), 0,
               "the coarse nodes moved or were renumbered");
  /* Parents: children of coarse cell p are fine cells p*nchild .. and lie in it. */
  fea_index *parents = malloc((size_t)f.nc * sizeof *parents);
  EXPECT_FAIL(fea_mesh_get_parents(fine, f.nc - 1, parents), FEA_ERR_DIMENSION, ctx, "capacity");
  OK(fea_mesh_get_parents(fine, f.nc, parents));
  for (fea_index e = 0; e < f.nc; e++) {
    fea_index p = parents[e];
    cr_assert_eq(p, e / nchild, "fine cell %lld has parent %lld", (long long)e, (long long)p);
    for (int i = 0; i < f.npc; i++)
      for (int k = 0; k < f.dim; k++) {
        double lo = INFINITY, hi = -INFINITY, v = X(&f, e, i, k);
        for (int j = 0; j < c.npc; j++) {
          lo = fmin(lo, X(&c, p, j, k));
          hi = fmax(hi, X(&c, p, j, k));
        }
        cr_assert(v >= lo - 1e-14 && v <= hi + 1e-14,
                  "fine cell %lld's node %d lies outside its parent %lld", (long long)e, i,
                  (long long)p);
      }
  }
  /* Measure: children add up to their parent (in 2D and 3D the measure is
   * signed, so positive children prove the orientation too). */
  for (fea_index p = 0; p < c.nc; p++) {
    double sum = 0, parent = cell_measure(&c, p);
    for (int l = 0; l < nchild; l++) {
      double mu = cell_measure(&f, p * nchild + l);
      cr_assert(mu > 0, "child %d of cell %lld has measure %g", l, (long long)p, mu);
      sum += mu;
    }
    if (c.type != FEA_CELL_QUAD || c.dim == 2) /* a quad in 3D need not be planar */
      cr_assert(fabs(sum - parent) <= 1e-13 * fabs(parent),
                "the children of cell %lld measure %.17g, the parent %.17g", (long long)p, sum,
                parent);
  }
  /* No node twice. */
  double *x = sorted_coords(&f);
  for (fea_index v = 1; v < f.nn; v++) {
    double d = 0;
    for (int k = 0; k < f.dim; k++) d = fmax(d, fabs(x[v * f.dim + k] - x[(v - 1) * f.dim + k]));
    cr_assert(d > 1e-12, "two nodes at the same place");
  }
  free(x);
  OK(revalidate(ctx, &f));
  free(parents);
  free_arrays(&c);
  free_arrays(&f);
}

/* ---- structured meshes: closed forms -------------------------------------------------------- */

struct box_case {
  int dim, simplices;
};

static const struct box_case cases[] = {{1, 0}, {2, 0}, {2, 1}, {3, 0}};

Test(refine, boxes_twice) {
  fea_context *ctx = open_ref();
  const fea_index n[3] = {3, 2, 2};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int dim = cases[i].dim, simplices = cases[i].simplices;
    cr_log_info("dim %d simplices %d", dim, simplices);
    fea_mesh *m[3] = {box(ctx, dim, n, simplices), NULL, NULL};
    EXPECT_FAIL(fea_mesh_get_parents(m[0], 100, (fea_index[100]){0}), FEA_ERR_STATE, ctx,
                "not made by fea_mesh_refine_uniform");
    for (int level = 1; level <= 2; level++) {
      OK(fea_mesh_refine_uniform(m[level - 1], &m[level]));
      check_refinement(ctx, m[level - 1], m[level]);
      /* The refined box has the nodes of the box mesh with 2^level n cells. */
      fea_index fn[3], nodes = 1;
      for (int k = 0; k < 3; k++) fn[k] = n[k] << level;
      for (int k = 0; k < dim; k++) nodes *= fn[k] + 1;
      fea_mesh *direct = box(ctx, dim, fn, simplices);
      struct arrays a = get_arrays(m[level]), b = get_arrays(direct);
      cr_assert_eq(a.nn, nodes, "level %d: %lld nodes, the closed form says %lld", level,
                   (long long)a.nn, (long long)nodes);
      cr_assert_eq(a.nc, b.nc);
      double *xa = sorted_coords(&a), *xb = sorted_coords(&b);
      for (fea_index v = 0; v < a.nn * dim; v++)
        cr_assert(fabs(xa[v] - xb[v]) <= 1e-14 * 4, "level %d: node set differs: %.17g vs %.17g",
                  level, xa[v], xb[v]);
      free(xa);
      free(xb);
      cr_assert(fabs(total_measure(&a) - total_measure(&b)) <= 1e-13 * total_measure(&b));
      free_arrays(&a);
      free_arrays(&b);
      OK(fea_mesh_destroy(&direct));
    }
    for (int l = 2; l >= 0; l--) OK(fea_mesh_destroy(&m[l]));
  }
  OK(fea_context_destroy(&ctx));
}

/* ---- meshes from arrays --------------------------------------------------------------------- */

static fea_mesh *from_arrays(fea_context *ctx, int dim, fea_cell_type t, fea_index nn,
                             const double *x, fea_index nc, const fea_index *c) {
  fea_mesh *m = NULL;
  OK(fea_mesh_create_from_arrays(ctx, dim, t, nn, x, nc, c, &m));
  return m;
}

static void refine_and_check(fea_context *ctx, fea_mesh *coarse, fea_index want_nodes) {
  fea_mesh *fine = NULL;
  OK(fea_mesh_refine_uniform(coarse, &fine));
  check_refinement(ctx, coarse, fine);
  fea_index nn;
  OK(fea_mesh_get_info(fine, NULL, NULL, &nn, NULL));
  cr_assert_eq(nn, want_nodes, "%lld fine nodes, expected %lld", (long long)nn,
               (long long)want_nodes);
  OK(fea_mesh_destroy(&fine));
  OK(fea_mesh_destroy(&coarse));
}

Test(refine, unstructured_meshes) {
  fea_context *ctx = open_ref();
  /* Two distorted quads sharing an edge: 6 nodes + 7 edges + 2 centers. */
  const double qx[12] = {0, 0, 1.1, -0.1, 2, 0.2, -0.2, 1, 0.9, 1.3, 2.1, 0.8};
  const fea_index qc[8] = {0, 1, 4, 3, 1, 2, 5, 4};
  refine_and_check(ctx, from_arrays(ctx, 2, FEA_CELL_QUAD, 6, qx, 2, qc), 15);
  /* Three triangles around node 0, each listed from another node: 4 nodes + 6 edges. */
  const double tx[8] = {0, 0, 1, 0, 0, 1, -1, -0.5};
  const fea_index tc[9] = {1, 2, 0, 2, 3, 0, 3, 1, 0};
  refine_and_check(ctx, from_arrays(ctx, 2, FEA_CELL_TRIANGLE, 4, tx, 3, tc), 4 + 6);
  /* Two distorted hexahedra sharing a face: 12 nodes + 20 edges + 11 faces + 2 centers. */
  const double hx[36] = {0,   0, 0, 1, 0, 0.1, 2, 0.1, 0, 0, 1, 0,   1.2, 0.9, 0, 2,   1.1, 0.2,
                         0.1, 0, 1, 1, 0, 1.2, 2, 0,   1, 0, 1, 1.1, 1,   1.1, 1, 2.2, 1,   0.9};
  const fea_index hc[16] = {0, 1, 4, 3, 6, 7, 10, 9, 1, 2, 5, 4, 7, 8, 11, 10};
  refine_and_check(ctx, from_arrays(ctx, 3, FEA_CELL_HEXAHEDRON, 12, hx, 2, hc), 12 + 20 + 11 + 2);
  /* Segments in 2D sharing a node, and quads on a bent surface in 3D. */
  const double sx[6] = {0, 0, 1, 1, 2, 0};
  const fea_index sc[4] = {0, 1, 1, 2};
  refine_and_check(ctx, from_arrays(ctx, 2, FEA_CELL_INTERVAL, 3, sx, 2, sc), 5);
  const double bx[18] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1, 1, 1};
  const fea_index bc[8] = {0, 1, 2, 3, 1, 4, 5, 2};
  refine_and_check(ctx, from_arrays(ctx, 3, FEA_CELL_QUAD, 6, bx, 2, bc), 6 + 7 + 2);
  OK(fea_context_destroy(&ctx));
}

Test(refine, parents_of_the_second_level_are_cells_of_the_first) {
  fea_context *ctx = open_ref();
  const fea_index n[3] = {2, 1, 1};
  fea_mesh *m0 = box(ctx, 2, n, 1), *m1 = NULL, *m2 = NULL;
  OK(fea_mesh_refine_uniform(m0, &m1));
  OK(fea_mesh_refine_uniform(m1, &m2));
  fea_index parents[64];
  OK(fea_mesh_get_parents(m2, 64, parents));
  for (int e = 0; e < 64; e++) cr_assert_eq(parents[e], e / 4);
  OK(fea_mesh_destroy(&m2));
  OK(fea_mesh_destroy(&m1));
  OK(fea_mesh_destroy(&m0));
  OK(fea_context_destroy(&ctx));
}

Test(refine, errors) {
  fea_context *ctx = open_ref();
  const fea_index n[3] = {1, 1, 1};
  fea_mesh *tet = box(ctx, 3, n, 1), *fine = (fea_mesh *)&fine;
  EXPECT_FAIL(fea_mesh_refine_uniform(tet, &fine), FEA_ERR_UNSUPPORTED, ctx, "tetrahedra");
  cr_assert_null(fine);
  fine = (fea_mesh *)&fine;
  EXPECT_FAIL(fea_mesh_refine_uniform(NULL, &fine), FEA_ERR_INVALID_ARG, NULL, "coarse");
  cr_assert_null(fine);
  EXPECT_FAIL(fea_mesh_refine_uniform(tet, NULL), FEA_ERR_INVALID_ARG, ctx, "fine");
  OK(fea_mesh_destroy(&tet));
  OK(fea_context_destroy(&ctx));
}
