/* The hierarchy of a mesh refined from macro triangles (src/prehandled/macro-mesh.c,
 * macro-groups.c) against definitions:
 * - the groups of the Table 4 mesh (docs/prehandled.md): 12 isosceles right,
 *   8 isosceles obtuse (outer and hole edges, similar), 8 scalene (mirror
 *   images), times 4^L0;
 * - S e_c (a coarse node's hierarchical coefficient) is the coarse hat
 *   function at the fine nodes: the barycentric coordinate of its vertex in
 *   the macro triangle holding the node, computed here from coordinates;
 * - the in-place S, S^T equal the explicit sparse S (fea_ph_build_s) and its
 *   transpose;
 * - the split is a permutation with C = the interior macro vertices;
 * - the P1 stiffness matcher finds similar and mirrored triangles and
 *   rejects others. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "disc/mesh.h"
#include "disc/problem.h"
#include "disc/space.h"
#include "linalg/matrix.h"
#include "prehandled/macro-mesh.h"
#include "prehandled/prehandle.h"

#define OK(expr)                                                               \
  do {                                                                         \
    fea_status ok_status_ = (expr);                                            \
    cr_assert_eq(ok_status_, FEA_SUCCESS, "%s returned %s: %s", #expr,         \
                 fea_status_string(ok_status_), fea_context_last_error(NULL)); \
  } while (0)

static fea_context *ctx;

static void setup(void) { OK(fea_context_create("/cpu/ref", &ctx)); }
static void teardown(void) { OK(fea_context_destroy(&ctx)); }

TestSuite(prehandle_macro, .init = setup, .fini = teardown);

static const double XY[21][2] = {{0, 0},        {1, 0},         {2, 0},          {3, 0},
                                 {4, 0},        {0, 1},         {1, 1},          {2, 1},
                                 {3, 1},        {4, 1},         {0.5, 0.5},      {2.5, 0.5},
                                 {3.5, 0.5},    {1.25, 0.25},   {1.75, 0.25},    {1.75, 0.75},
                                 {1.25, 0.75},  {1.5, 1.0 / 6}, {11.0 / 6, 0.5}, {1.5, 5.0 / 6},
                                 {7.0 / 6, 0.5}};

static void add_tri(fea_index *cells, int *nc, int a, int b, int c) {
  const double *p = XY[a], *q = XY[b], *r = XY[c];
  const double area = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]);
  cells[3 * *nc] = a, cells[3 * *nc + 1] = area > 0 ? b : c, cells[3 * *nc + 2] = area > 0 ? c : b;
  (*nc)++;
}

/* The Table 4 coarse mesh refined L times and a P1 problem on it. */
static fea_problem *t4_problem(int L, fea_mesh **coarse_out) {
  fea_index cells[28 * 3];
  int nc = 0;
  static const int sq[3][5] = {{0, 1, 6, 5, 10}, {2, 3, 8, 7, 11}, {3, 4, 9, 8, 12}};
  for (int s = 0; s < 3; s++)
    for (int k = 0; k < 4; k++) add_tri(cells, &nc, sq[s][k], sq[s][(k + 1) % 4], sq[s][4]);
  static const int side[4][5] = {{1, 2, 13, 14, 17},
                                 {2, 7, 14, 15, 18},
                                 {7, 6, 15, 16, 19},
                                 {6, 1, 16, 13, 20}};
  for (int s = 0; s < 4; s++) {
    add_tri(cells, &nc, side[s][0], side[s][1], side[s][4]);
    add_tri(cells, &nc, side[s][2], side[s][3], side[s][4]);
    add_tri(cells, &nc, side[s][0], side[s][2], side[s][4]);
    add_tri(cells, &nc, side[s][1], side[s][3], side[s][4]);
  }
  fea_mesh *m = NULL;
  OK(fea_mesh_create_from_arrays(ctx, 2, FEA_CELL_TRIANGLE, 21, &XY[0][0], 28, cells, &m));
  *coarse_out = m;
  for (int k = 0; k < L; k++) {
    fea_mesh *f = NULL;
    OK(fea_mesh_refine_uniform(m, &f));
    if (m != *coarse_out) fea_mesh_destroy(&m);
    m = f;
  }
  fea_space *sp = NULL;
  OK(fea_space_create_lagrange(m, 1, FEA_NODES_EQUISPACED, &sp));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(sp, &pd, &pb));
  fea_space_destroy(&sp);
  fea_mesh_destroy(&m);
  return pb;
}

Test(prehandle_macro, groups_of_the_table_4_mesh) {
  fea_mesh *coarse = NULL;
  fea_problem *pb = t4_problem(3, &coarse);
  for (int levels = 1; levels <= 3; levels++) {
    fea_ph_macro *h = NULL;
    OK(fea_ph_macro_create(ctx, pb, levels, &h));
    const fea_index scale = (fea_index)1 << (2 * (3 - levels)); /* 4^L0 */
    cr_assert_eq(h->groups, 3, "L0 = %d: %d groups", 3 - levels, h->groups);
    cr_expect_eq(h->group_cells[0], 12 * scale);
    cr_expect_eq(h->group_cells[1], 8 * scale);
    cr_expect_eq(h->group_cells[2], 8 * scale);
    cr_expect_eq(h->cells, 28 * scale);
    fea_ph_macro_destroy(&h);
  }
  fea_problem_destroy(&pb);
  fea_mesh_destroy(&coarse);
}

/* Barycentric coordinates of p in the triangle a, b, c. */
static void bary(const double *a, const double *b, const double *c, const double *p, double l[3]) {
  const double det = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
  l[1] = ((p[0] - a[0]) * (c[1] - a[1]) - (p[1] - a[1]) * (c[0] - a[0])) / det;
  l[2] = ((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])) / det;
  l[0] = 1 - l[1] - l[2];
}

Test(prehandle_macro, s_of_a_coarse_node_is_its_hat_function) {
  fea_mesh *coarse = NULL;
  const int L = 3;
  fea_problem *pb = t4_problem(L, &coarse);
  const fea_mesh *fine = pb->space->mesh;
  fea_ph_macro *h = NULL;
  OK(fea_ph_macro_create(ctx, pb, L, &h));
  cr_assert_eq(h->nc, 7);
  const fea_index n = h->num;
  double *x = calloc((size_t)n, sizeof *x);
  /* The free DoF of each fine node (P1: node = DoF). */
  fea_index *node_of = malloc((size_t)n * sizeof *node_of);
  for (fea_index d = 0; d < pb->space->num_dofs; d++)
    if (pb->free_index[d] >= 0) node_of[pb->free_index[d]] = d;
  for (fea_index c = 0; c < h->nc; c++) {
    const fea_index u = h->perm[c]; /* the coarse node's unknown */
    const double *v = fine->coords + 2 * node_of[u];
    memset(x, 0, (size_t)n * sizeof *x);
    x[u] = 1;
    fea_ph_macro_apply_s(h, x);
    /* Expected: at each fine node, the barycentric coordinate of v in the
     * coarse triangle holding it when v is one of its vertices, else 0. */
    double worst = 0;
    for (fea_index w = 0; w < n; w++) {
      const double *p = fine->coords + 2 * node_of[w];
      double want = 0;
      for (fea_index t = 0; t < coarse->num_cells; t++) {
        const fea_index *tv = coarse->cells + 3 * t;
        const double *a = coarse->coords + 2 * tv[0], *b = coarse->coords + 2 * tv[1],
                     *cc = coarse->coords + 2 * tv[2];
        double l[3];
        bary(a, b, cc, p, l);
        if (l[0] < -1e-12 || l[1] < -1e-12 || l[2] < -1e-12) continue;
        for (int k = 0; k < 3; k++) {
          const double *q = coarse->coords + 2 * tv[k];
          if (q[0] == v[0] && q[1] == v[1]) want = fmax(want, l[k]);
        }
      }
      worst = fmax(worst, fabs(x[w] - want));
    }
    cr_expect(worst < 1e-13, "coarse node %lld: S e_c differs from its hat by %g", (long long)c,
              worst);
  }
  /* In-place S and S^T against the explicit S, on a random vector. */
  fea_ph_grid g = {FEA_PH_P1, h->r, 1, h->r, L, n, h};
  fea_matrix *S = NULL;
  OK(fea_ph_build_s(ctx, &g, &S));
  double *y = malloc((size_t)n * sizeof *y), *z = malloc((size_t)n * sizeof *z);
  for (fea_index i = 0; i < n; i++) x[i] = sin(1.0 + 7.0 * (double)i);
  memcpy(y, x, (size_t)n * sizeof *y);
  fea_ph_apply_s(&g, y);
  fea_csr_multiply_vector(S, x, z);
  double ds = 0, dst = 0;
  for (fea_index i = 0; i < n; i++) ds = fmax(ds, fabs(y[i] - z[i]));
  memcpy(y, x, (size_t)n * sizeof *y);
  fea_ph_apply_st(&g, y);
  memset(z, 0, (size_t)n * sizeof *z);
  for (fea_index r = 0; r < n; r++) /* z = S^T x */
    for (fea_index k = S->row_ptr[r]; k < S->row_ptr[r + 1]; k++)
      z[S->col_idx[k]] += S->values[k] * x[r];
  for (fea_index i = 0; i < n; i++) dst = fmax(dst, fabs(y[i] - z[i]));
  cr_expect(ds < 1e-13 && dst < 1e-13, "sweeps against explicit S: %g (S), %g (S^T)", ds, dst);
  /* The split is a permutation; C holds the 7 interior macro vertices. */
  for (fea_index p = 0; p < n; p++) cr_assert_eq(h->pos[h->perm[p]], p);
  cr_expect_eq(h->nc + h->ne + h->ni, n);
  FEA_OBJECT_DROP(S);
  free(x), free(y), free(z), free(node_of);
  fea_ph_macro_destroy(&h);
  fea_problem_destroy(&pb);
  fea_mesh_destroy(&coarse);
}

Test(prehandle_macro, stiffness_matcher) {
  const double right[6] = {0, 0, 1, 0, 0, 1};
  const double right_big_turned[6] = {3, 3, 3, 1, 1, 3}; /* scaled by 2, vertices permuted */
  const double mirrored[6] = {0, 0, 0, 1, 1, 0};         /* clockwise: a mirror image */
  const double other[6] = {0, 0, 1, 0, 0.3, 1};
  double k0[9], k1[9];
  int perm[3];
  fea_ph_p1_stiffness(right, k0);
  fea_ph_p1_stiffness(right_big_turned, k1);
  cr_expect(fea_ph_p1_match(k1, k0, 1e-12, perm), "a scaled, renumbered copy matches");
  /* perm maps the reference's vertex i to the copy's: the right angle (vertex 0) */
  cr_expect_eq(perm[0], 0);
  fea_ph_p1_stiffness(mirrored, k1);
  cr_expect(fea_ph_p1_match(k1, k0, 1e-12, perm), "a mirror image matches");
  fea_ph_p1_stiffness(other, k1);
  cr_expect(!fea_ph_p1_match(k1, k0, 1e-6, perm), "another shape does not");
}
