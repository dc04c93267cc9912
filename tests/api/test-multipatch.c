/* Multipatch domains and their direct solver, against independent references:
 * - two boxes joined C0 span exactly the space of one box with a C0 knot
 *   line at the interface, so the multipatch solution must equal the
 *   single-patch multifrontal solution coefficient by coefficient;
 * - the reference CSR system of the whole domain (every patch's reference
 *   assembly, summed), solved by LAPACK, on a 4-patch annulus with Dirichlet,
 *   Neumann and Robin sides and caller right-hand sides;
 * - convergence of order p + 1 in L2 on the 4-patch annulus;
 * - orientations: a neighbour parametrized backwards (2D) or with its
 *   tangential directions swapped (3D) gives the same discrete solution;
 * - non-conforming interfaces and bad arguments are refused by name;
 * - overlapping patches (one space twice, two copies of a patch, a side
 *   matched by two others) are refused naming the patches. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "api-common.h"
#include "ring-common.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* u = sin(pi x / 2) e^y (+ z), -Laplace u = (pi^2 / 4 - 1) sin(pi x / 2) e^y. */
static double u_box(const double *x, void *user) {
  const int dim = *(const int *)user;
  return sin(M_PI * x[0] / 2) * exp(x[1]) + (dim == 3 ? x[2] : 0.0);
}

static double f_box(const double *x, void *user) {
  (void)user;
  return (M_PI * M_PI / 4 - 1) * sin(M_PI * x[0] / 2) * exp(x[1]);
}

/* A box patch [lo, hi] with n elements per direction, degree p. */
static fea_space *box_patch(fea_context *ctx, int dim, int p, const fea_index n[3],
                            const double lo[3], const double hi[3]) {
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < 3; k++) {
    d.degree[k] = p;
    d.n[k] = n[k];
    d.lower[k] = lo[k];
    d.upper[k] = hi[k];
  }
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  return s;
}

/* Direct solve of a multipatch problem: the full global coefficients. */
static double *solve_multipatch(fea_context *ctx, fea_multipatch *mp, fea_multipatch_problem *pb) {
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  OK(fea_multipatch_get_info(mp, &info));
  fea_index nf = 0;
  OK(fea_multipatch_problem_get_num_free_dofs(pb, &nf));
  fea_solver *s = NULL;
  OK(fea_solver_create_multipatch(ctx, pb, NULL, &s));
  OK(fea_solver_setup(s));
  double *x = malloc((size_t)(nf + 1) * sizeof *x), *u = malloc((size_t)info.num_dofs * 8);
  OK(fea_solver_solve(s, 1, NULL, 0, x, nf > 0 ? nf : 1));
  OK(fea_multipatch_problem_expand_solution(pb, x, u));
  fea_multipatch_stats st = FEA_MULTIPATCH_STATS_INIT;
  OK(fea_solver_get_multipatch_stats(s, &st));
  cr_assert_eq(st.num_patches, info.num_patches);
  cr_assert_eq(st.interior_dofs + st.interface_dofs <= info.num_dofs, 1);
  fea_solver_destroy(&s);
  free(x);
  return u;
}

/* Two boxes split at x = 1/2 against one box with a C0 knot line there. */
static void two_boxes_against_c0_patch(const char *resource, int dim, int p) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  const fea_index nh = 3, ny = 4;
  const fea_index na[3] = {nh, ny, 2};
  const double lo0[3] = {0, 0, 0}, hi0[3] = {0.5, 1, 1}, lo1[3] = {0.5, 0, 0}, hi1[3] = {1, 1, 1};
  fea_space *patches[2] = {box_patch(ctx, dim, p, na, lo0, hi0),
                           box_patch(ctx, dim, p, na, lo1, hi1)};
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 2, patches, NULL, &mp));
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  OK(fea_multipatch_get_info(mp, &info));
  cr_assert_eq(info.num_interfaces, 1);
  cr_assert_eq(info.num_boundary_sides, 2 * (2 * dim) - 2);
  fea_multipatch_interface itf = FEA_MULTIPATCH_INTERFACE_INIT;
  OK(fea_multipatch_get_interface(mp, 0, &itf));
  cr_assert(itf.patch[0] == 0 && itf.side[0] == FEA_SIDE_EAST && itf.patch[1] == 1 &&
            itf.side[1] == FEA_SIDE_WEST && !itf.flip[0] && !itf.flip[1] && !itf.swap);
  const fea_index m1 = ny + p, m2 = dim == 3 ? 2 + p : 1, mx = nh + p;
  cr_assert_eq(itf.num_dofs, m1 * m2);
  cr_assert_eq(info.num_dofs, (2 * mx - 1) * m1 * m2);

  /* The single patch: x knots with a C0 line at 1/2 (multiplicity p). */
  double kx[64];
  int m = 0;
  for (int i = 0; i <= p; i++) kx[m++] = 0;
  for (int i = 1; i < nh; i++) kx[m++] = 0.5 * i / nh;
  for (int i = 0; i < p; i++) kx[m++] = 0.5;
  for (int i = 1; i < nh; i++) kx[m++] = 0.5 + 0.5 * i / nh;
  for (int i = 0; i <= p; i++) kx[m++] = 1;
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < 3; k++) d.degree[k] = p, d.n[k] = na[k];
  d.knots[0] = kx;
  d.num_knots[0] = m;
  fea_space *whole = NULL;
  OK(fea_space_create_bspline(ctx, &d, &whole));

  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  int user = dim;
  pd.source = f_box, pd.dirichlet = u_box, pd.dirichlet_user = &user;
  fea_multipatch_problem *mpb = NULL;
  OK(fea_multipatch_problem_create_poisson(mp, &pd, 0, NULL, &mpb));
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(whole, &pd, &pb));
  double *u = solve_multipatch(ctx, mp, mpb), *v = solve_direct(ctx, whole, pb);

  /* Patch DoF (i, rest) is whole-space DoF (i + patch * (mx - 1), rest). */
  double err = 0, ref = 0;
  for (int q = 0; q < 2; q++) {
    fea_index *g = malloc((size_t)(mx * m1 * m2) * sizeof *g);
    OK(fea_multipatch_get_patch_dofs(mp, q, mx * m1 * m2, g));
    for (fea_index r = 0; r < m1 * m2; r++)
      for (fea_index i = 0; i < mx; i++) {
        const double a = u[g[i + r * mx]], b = v[i + q * (mx - 1) + r * (2 * mx - 1)];
        err = fmax(err, fabs(a - b));
        ref = fmax(ref, fabs(b));
      }
    free(g);
  }
  cr_assert_lt(err, 1e-11 * ref, "[%s] %dD p = %d: multipatch and C0 patch differ by %g (max %g)",
               resource, dim, p, err, ref);
  free(u);
  free(v);
  fea_problem_destroy(&pb);
  fea_space_destroy(&whole);
  fea_multipatch_problem_destroy(&mpb);
  fea_multipatch_destroy(&mp);
  for (int q = 0; q < 2; q++) fea_space_destroy(&patches[q]);
  fea_context_destroy(&ctx);
}

BACKEND_TEST(multipatch, two_boxes_2d) {
  two_boxes_against_c0_patch(resource, 2, 2);
  two_boxes_against_c0_patch(resource, 2, 3);
}

BACKEND_TEST(multipatch, two_boxes_3d) { two_boxes_against_c0_patch(resource, 3, 2); }

/* The quarter annulus of ring-common.h turned by k quarter turns. */
typedef struct annulus {
  ring q[4];
} annulus;

static void annulus_init(annulus *a) {
  for (int k = 0; k < 4; k++) {
    ring_init(&a->q[k], 2, 0);
    const double c = cos(k * M_PI / 2), s = sin(k * M_PI / 2);
    for (int i = 0; i < 6; i++) {
      double *x = a->q[k].points + 2 * i;
      const double x0 = x[0], x1 = x[1];
      x[0] = round(c) * x0 - round(s) * x1;
      x[1] = round(s) * x0 + round(c) * x1;
    }
  }
}

static void annulus_patches(fea_context *ctx, annulus *a, int p, fea_index n, fea_space **out) {
  annulus_init(a);
  for (int k = 0; k < 4; k++) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = 2;
    d.degree[0] = d.degree[1] = p;
    d.n[0] = d.n[1] = n;
    d.geometry = &a->q[k].g;
    OK(fea_space_create_bspline(ctx, &d, &out[k]));
  }
}

/* h = grad u . n on the outer circle (n = x / 2). */
static double outer_flux(const double *x, void *user) {
  double g[2];
  ring_grad_dim(2, x, g);
  (void)user;
  return (g[0] * x[0] + g[1] * x[1]) / 2;
}

static double robin_flux(const double *x, void *user) {
  return outer_flux(x, user) + 3.0 * ring_u_dim(2, x);
}

BACKEND_TEST(multipatch, annulus_reference_system) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  annulus a;
  fea_space *patches[4];
  annulus_patches(ctx, &a, 2, 3, patches);
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 4, patches, NULL, &mp));
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  OK(fea_multipatch_get_info(mp, &info));
  cr_assert_eq(info.num_interfaces, 4);
  cr_assert_eq(info.num_boundary_sides, 8);
  cr_assert_eq(info.num_dofs, 4 * 5 * 5 - 4 * 5);
  for (int i = 0; i < 8; i++) {
    int patch;
    fea_patch_side side;
    OK(fea_multipatch_get_boundary_side(mp, i, &patch, &side));
    cr_assert(patch == i / 2 && (side == FEA_SIDE_WEST || side == FEA_SIDE_EAST));
  }
  /* Outer circle: Neumann on patches 0, 1, Robin on 2; the rest Dirichlet. */
  ring_exact ex = {2, 0.0};
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = ring_f, pd.source_user = &ex, pd.dirichlet = ring_u, pd.dirichlet_user = &ex;
  const fea_multipatch_bc bcs[3] = {
      {0, FEA_SIDE_EAST, {FEA_BC_NEUMANN, 0.0, outer_flux, NULL}},
      {1, FEA_SIDE_EAST, {FEA_BC_NEUMANN, 0.0, outer_flux, NULL}},
      {2, FEA_SIDE_EAST, {FEA_BC_ROBIN, 3.0, robin_flux, NULL}},
  };
  fea_multipatch_problem *pb = NULL;
  OK(fea_multipatch_problem_create_poisson(mp, &pd, 3, bcs, &pb));
  fea_index nf = 0;
  OK(fea_multipatch_problem_get_num_free_dofs(pb, &nf));
  fea_matrix *A = NULL;
  double *b = malloc((size_t)nf * 2 * sizeof *b);
  OK(fea_multipatch_problem_assemble_reference(pb, b, &A));
  for (fea_index i = 0; i < nf; i++) b[nf + i] = sin(1.0 + i); /* a second, arbitrary one */

  /* LAPACK on the dense reference. */
  fea_index rows, cols, nnz;
  OK(fea_matrix_get_size(A, &rows, &cols, &nnz));
  cr_assert_eq(rows, nf);
  fea_index *rp = malloc((size_t)(nf + 1) * sizeof *rp), *ci = malloc((size_t)nnz * sizeof *ci);
  double *val = malloc((size_t)nnz * sizeof *val), *D = calloc((size_t)(nf * nf), sizeof *D);
  OK(fea_matrix_get_csr(A, rp, ci, val));
  for (fea_index r = 0; r < nf; r++)
    for (fea_index k = rp[r]; k < rp[r + 1]; k++) D[r + ci[k] * nf] = val[k];
  double *xr = malloc((size_t)nf * 2 * sizeof *xr);
  memcpy(xr, b, (size_t)nf * 2 * sizeof *xr);
  cr_assert_eq(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', (lapack_int)nf, 2, D, (lapack_int)nf, xr,
                             (lapack_int)nf),
               0);

  fea_solver *s = NULL;
  OK(fea_solver_create_multipatch(ctx, pb, NULL, &s));
  OK(fea_solver_setup(s));
  double *x = malloc((size_t)nf * 2 * sizeof *x), *x0 = malloc((size_t)nf * sizeof *x0);
  OK(fea_solver_solve(s, 2, b, nf, x, nf));
  OK(fea_solver_solve(s, 1, NULL, 0, x0, nf));
  double err = 0, ref = 0, err0 = 0;
  for (fea_index i = 0; i < 2 * nf; i++) {
    err = fmax(err, fabs(x[i] - xr[i]));
    ref = fmax(ref, fabs(xr[i]));
  }
  for (fea_index i = 0; i < nf; i++) err0 = fmax(err0, fabs(x0[i] - xr[i]));
  cr_assert_lt(err, 1e-10 * ref, "[%s] multipatch vs LAPACK on the reference: %g (max %g)",
               resource, err, ref);
  cr_assert_lt(err0, 1e-10 * ref, "[%s] own load vs the reference's: %g", resource, err0);
  /* x = b in place. */
  memcpy(x, b, (size_t)nf * sizeof *x);
  OK(fea_solver_solve(s, 1, x, nf, x, nf));
  for (fea_index i = 0; i < nf; i++) cr_assert_lt(fabs(x[i] - xr[i]), 1e-10 * ref);

  /* The solver's problem is fixed; kind-specific getters refuse. */
  fea_problem_desc sd = FEA_PROBLEM_DESC_INIT;
  fea_problem *single = NULL;
  OK(fea_problem_create_poisson(patches[0], &sd, &single));
  EXPECT_FAIL(fea_solver_set_problem(s, single), FEA_ERR_INVALID_ARG, ctx, "keeps the problem");
  fea_solver_stats ss = FEA_SOLVER_STATS_INIT;
  EXPECT_FAIL(fea_solver_get_stats(s, &ss), FEA_ERR_INVALID_ARG, ctx, "multipatch solver");
  fea_problem_destroy(&single);

  fea_solver_destroy(&s);
  free(x), free(x0), free(xr), free(D), free(val), free(ci), free(rp), free(b);
  fea_matrix_destroy(&A);
  fea_multipatch_problem_destroy(&pb);
  fea_multipatch_destroy(&mp);
  for (int k = 0; k < 4; k++) fea_space_destroy(&patches[k]);
  fea_context_destroy(&ctx);
}

Test(multipatch, annulus_convergence) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP("/cpu/threads", &ctx);
  ring_exact ex = {2, 0.0};
  const int p = 2;
  double e[3];
  for (int level = 0; level < 3; level++) {
    annulus a;
    fea_space *patches[4];
    annulus_patches(ctx, &a, p, (fea_index)4 << level, patches);
    fea_multipatch *mp = NULL;
    OK(fea_multipatch_create(ctx, 4, patches, NULL, &mp));
    fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
    pd.source = ring_f, pd.source_user = &ex, pd.dirichlet = ring_u, pd.dirichlet_user = &ex;
    const fea_multipatch_bc bcs[1] = {{3, FEA_SIDE_EAST, {FEA_BC_NEUMANN, 0.0, outer_flux, NULL}}};
    fea_multipatch_problem *pb = NULL;
    OK(fea_multipatch_problem_create_poisson(mp, &pd, 1, bcs, &pb));
    double *u = solve_multipatch(ctx, mp, pb), h1 = 0;
    OK(fea_multipatch_problem_error_norms(pb, u, ring_u, ring_grad, &ex, &e[level], &h1));
    cr_log_info("n = %d: L2 error %.3e, H1 seminorm error %.3e", 4 << level, e[level], h1);
    free(u);
    fea_multipatch_problem_destroy(&pb);
    fea_multipatch_destroy(&mp);
    for (int k = 0; k < 4; k++) fea_space_destroy(&patches[k]);
  }
  for (int level = 1; level < 3; level++) {
    const double order = log2(e[level - 1] / e[level]);
    cr_assert_gt(order, p + 1 - 0.25, "L2 order %.2f at level %d (errors %g, %g)", order, level,
                 e[level - 1], e[level]);
  }
  fea_context_destroy(&ctx);
}

/* A box patch on [lo, hi] through a trilinear (bilinear) geometry whose
 * parameter directions are permuted (perm[k]: the physical axis of
 * parameter direction k) and reversed where rev[k]. */
typedef struct box_map {
  double knots[3][4];
  double points[8 * 3];
  fea_geometry_desc g;
} box_map;

static fea_space *mapped_box(fea_context *ctx, int dim, int p, fea_index n, const double lo[3],
                             const double hi[3], const int perm[3], const int rev[3], box_map *bm) {
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  for (int k = 0; k < dim; k++) {
    const double kn[4] = {0, 0, 1, 1};
    memcpy(bm->knots[k], kn, sizeof kn);
    g.knots[k] = bm->knots[k];
    g.num_knots[k] = 4;
    g.degree[k] = 1;
  }
  int np = 0;
  for (int c = 0; c < (1 << dim); c++, np++)
    for (int k = 0; k < dim; k++) {
      const int a = perm[k], bit = ((c >> k) & 1) ^ rev[k];
      bm->points[np * dim + a] = bit ? hi[a] : lo[a];
    }
  g.control_points = bm->points;
  g.num_control_points = np;
  bm->g = g;
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < 3; k++) d.degree[k] = p, d.n[k] = n;
  d.geometry = &bm->g;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  return s;
}

/* The L2 error of two boxes, the second parametrized by perm / rev. */
static double oriented_error(fea_context *ctx, int dim, const int perm[3], const int rev[3],
                             fea_multipatch_interface *itf) {
  const double lo0[3] = {0, 0, 0}, hi0[3] = {0.5, 1, 1}, lo1[3] = {0.5, 0, 0}, hi1[3] = {1, 1, 1};
  const int id[3] = {0, 1, 2}, none[3] = {0, 0, 0};
  box_map m0, m1;
  fea_space *patches[2] = {mapped_box(ctx, dim, 2, 4, lo0, hi0, id, none, &m0),
                           mapped_box(ctx, dim, 2, 4, lo1, hi1, perm, rev, &m1)};
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 2, patches, NULL, &mp));
  OK(fea_multipatch_get_interface(mp, 0, itf));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  int user = dim;
  pd.source = f_box, pd.dirichlet = u_box, pd.dirichlet_user = &user;
  fea_multipatch_problem *pb = NULL;
  OK(fea_multipatch_problem_create_poisson(mp, &pd, 0, NULL, &pb));
  double *u = solve_multipatch(ctx, mp, pb), l2 = 0;
  OK(fea_multipatch_problem_error_norms(pb, u, u_box, NULL, &user, &l2, NULL));
  free(u);
  fea_multipatch_problem_destroy(&pb);
  fea_multipatch_destroy(&mp);
  for (int q = 0; q < 2; q++) fea_space_destroy(&patches[q]);
  return l2;
}

Test(multipatch, orientations) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP("/cpu/ref", &ctx);
  const int id[3] = {0, 1, 2}, none[3] = {0, 0, 0};
  fea_multipatch_interface itf = FEA_MULTIPATCH_INTERFACE_INIT;
  /* 2D: the neighbour turned by half a turn (a map must keep its orientation):
   * it meets the interface with its east side, running downwards. */
  const double e2 = oriented_error(ctx, 2, id, none, &itf);
  const int rev2[3] = {1, 1, 0};
  const double f2 = oriented_error(ctx, 2, id, rev2, &itf);
  cr_assert(itf.side[1] == FEA_SIDE_EAST && itf.flip[0] == 1 && itf.swap == 0,
            "side %d flip %d swap %d", (int)itf.side[1], itf.flip[0], itf.swap);
  cr_assert_lt(fabs(e2 - f2), 1e-10 * e2, "2D: %g against %g", e2, f2);
  /* 3D: the neighbour's y and z swapped and every direction reversed (an
   * orientation-keeping map), so it meets the interface with its east side. */
  const double e3 = oriented_error(ctx, 3, id, none, &itf);
  const int perm3[3] = {0, 2, 1}, rev3[3] = {1, 1, 1};
  const double f3 = oriented_error(ctx, 3, perm3, rev3, &itf);
  cr_assert(itf.side[1] == FEA_SIDE_EAST && itf.swap == 1 && itf.flip[0] && itf.flip[1],
            "side %d swap %d flips %d %d", (int)itf.side[1], itf.swap, itf.flip[0], itf.flip[1]);
  cr_assert_lt(fabs(e3 - f3), 1e-10 * e3, "3D: %g against %g", e3, f3);
  fea_context_destroy(&ctx);
}

Test(multipatch, refusals) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP("/cpu/ref", &ctx);
  const double lo0[3] = {0, 0, 0}, hi0[3] = {0.5, 1, 1}, lo1[3] = {0.5, 0, 0}, hi1[3] = {1, 1, 1};
  const fea_index n8[3] = {4, 8, 1}, n6[3] = {4, 6, 1};
  fea_space *a = box_patch(ctx, 2, 2, n8, lo0, hi0), *b = box_patch(ctx, 2, 2, n6, lo1, hi1);
  fea_space *c = box_patch(ctx, 2, 3, n8, lo1, hi1), *e = box_patch(ctx, 2, 2, n8, lo1, hi1);
  fea_space *d3 = box_patch(ctx, 3, 2, n8, lo1, hi1);
  fea_multipatch *mp = NULL;
  fea_space *ab[2] = {a, b}, *ac[2] = {a, c}, *ad[2] = {a, d3}, *an[2] = {a, NULL}, *ae[2] = {a, e};
  EXPECT_FAIL(fea_multipatch_create(ctx, 2, ab, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "not conforming");
  cr_assert_null(mp);
  EXPECT_FAIL(fea_multipatch_create(ctx, 2, ac, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "not conforming");
  EXPECT_FAIL(fea_multipatch_create(ctx, 2, ad, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "patches[1] is 3D");
  EXPECT_FAIL(fea_multipatch_create(ctx, 2, an, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "patches[1] is NULL");
  EXPECT_FAIL(fea_multipatch_create(ctx, 0, ab, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "num_patches = 0");
  fea_multipatch_desc md = FEA_MULTIPATCH_DESC_INIT;
  md.tolerance = 0.5;
  EXPECT_FAIL(fea_multipatch_create(ctx, 2, ae, &md, &mp), FEA_ERR_INVALID_ARG, ctx,
              "tolerance = 0.5");

  OK(fea_multipatch_create(ctx, 2, ae, NULL, &mp));
  fea_multipatch_interface itf = FEA_MULTIPATCH_INTERFACE_INIT;
  EXPECT_FAIL(fea_multipatch_get_interface(mp, 1, &itf), FEA_ERR_INVALID_ARG, ctx, "interface 1");
  fea_index g[4];
  EXPECT_FAIL(fea_multipatch_get_patch_dofs(mp, 0, 4, g), FEA_ERR_DIMENSION, ctx, "capacity = 4");
  EXPECT_FAIL(fea_multipatch_get_patch_dofs(mp, 2, 4, g), FEA_ERR_INVALID_ARG, ctx, "patch 2");
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_multipatch_problem *pb = NULL;
  const fea_multipatch_bc on_interface[1] = {{0, FEA_SIDE_EAST, {FEA_BC_NEUMANN, 0, NULL, NULL}}};
  EXPECT_FAIL(fea_multipatch_problem_create_poisson(mp, &pd, 1, on_interface, &pb),
              FEA_ERR_INVALID_ARG, ctx, "is an interface");
  const fea_multipatch_bc twice[2] = {{0, FEA_SIDE_WEST, {FEA_BC_NEUMANN, 0, NULL, NULL}},
                                      {0, FEA_SIDE_WEST, {FEA_BC_DIRICHLET, 0, NULL, NULL}}};
  EXPECT_FAIL(fea_multipatch_problem_create_poisson(mp, &pd, 2, twice, &pb), FEA_ERR_INVALID_ARG,
              ctx, "both name patch 0 side west");
  const fea_multipatch_bc bad_robin[1] = {{1, FEA_SIDE_NORTH, {FEA_BC_ROBIN, -1, NULL, NULL}}};
  EXPECT_FAIL(fea_multipatch_problem_create_poisson(mp, &pd, 1, bad_robin, &pb),
              FEA_ERR_INVALID_ARG, ctx, "alpha = -1");
  fea_multipatch_bc all_natural[6];
  for (int i = 0; i < 6; i++) {
    int patch;
    fea_patch_side side;
    OK(fea_multipatch_get_boundary_side(mp, i, &patch, &side));
    all_natural[i] = (fea_multipatch_bc){patch, side, {FEA_BC_NEUMANN, 0, NULL, NULL}};
  }
  EXPECT_FAIL(fea_multipatch_problem_create_poisson(mp, &pd, 6, all_natural, &pb),
              FEA_ERR_INVALID_ARG, ctx, "up to a constant");
  fea_problem_desc sides = FEA_PROBLEM_DESC_INIT;
  sides.sides[1].type = FEA_BC_NEUMANN;
  EXPECT_FAIL(fea_multipatch_problem_create_poisson(mp, &sides, 0, NULL, &pb), FEA_ERR_INVALID_ARG,
              ctx, "desc.sides[1]");
  cr_assert_null(pb);
  /* One Dirichlet side: 36 interface DoFs, 10368 bytes densely, while each
   * patch's factorization needs about 3 kB. */
  all_natural[0].bc.type = FEA_BC_DIRICHLET;
  OK(fea_multipatch_problem_create_poisson(mp, &pd, 6, all_natural, &pb));
  fea_solver_desc sd = FEA_SOLVER_DESC_INIT;
  sd.keep_boundary = 1;
  fea_solver *s = NULL;
  EXPECT_FAIL(fea_solver_create_multipatch(ctx, pb, &sd, &s), FEA_ERR_INVALID_ARG, ctx,
              "keep_boundary = 1");
  sd.keep_boundary = 0;
  sd.memory_limit_bytes = 8000;
  EXPECT_FAIL(fea_solver_create_multipatch(ctx, pb, &sd, &s), FEA_ERR_OUT_OF_MEMORY, ctx,
              "interface system of 36 DoFs");
  OK(fea_solver_create_multipatch(ctx, pb, NULL, &s));
  double x[1];
  EXPECT_FAIL(fea_solver_solve(s, 1, NULL, 0, x, 1), FEA_ERR_STATE, ctx, "not set up");
  fea_multipatch_stats st = FEA_MULTIPATCH_STATS_INIT;
  OK(fea_solver_get_multipatch_stats(s, &st));
  cr_assert_eq(st.local_s, 0.0);
  fea_solver_destroy(&s);
  fea_multipatch_problem_destroy(&pb);
  fea_multipatch_destroy(&mp);
  fea_space *spaces[5] = {a, b, c, e, d3};
  for (int i = 0; i < 5; i++) fea_space_destroy(&spaces[i]);
  fea_context_destroy(&ctx);
}

/* Overlapping patches: one space listed twice, or two copies of one patch,
 * would make every side an interface, leave the domain without boundary
 * and drop the default Dirichlet condition (-Laplace u + u = 1 would give
 * u = 1 with success); a side matched by two others means two patches
 * overlap along it. Each is refused naming the patches. */
Test(multipatch, overlapping_patches) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP("/cpu/ref", &ctx);
  const double lo0[3] = {0, 0, 0}, hi0[3] = {0.5, 1, 1}, lo1[3] = {0.5, 0, 0}, hi1[3] = {1, 1, 1};
  const double hi2[3] = {0.75, 1, 1};
  const fea_index n[3] = {3, 4, 2};
  fea_space *a = box_patch(ctx, 2, 2, n, lo0, hi0), *b = box_patch(ctx, 2, 2, n, lo1, hi1);
  fea_space *b2 = box_patch(ctx, 2, 2, n, lo1, hi1), *c = box_patch(ctx, 2, 2, n, lo1, hi2);
  fea_multipatch *mp = NULL;
  fea_space *same[2] = {a, a}, *copies[2] = {b, b2}, *three[3] = {a, b, b2}, *thin[3] = {a, b, c};
  EXPECT_FAIL(fea_multipatch_create(ctx, 2, same, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "patches[0] and patches[1] are the same space");
  cr_assert_null(mp);
  EXPECT_FAIL(fea_multipatch_create(ctx, 2, copies, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "patches 0 and 1 cover the same region");
  EXPECT_FAIL(fea_multipatch_create(ctx, 3, three, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "patches 1 and 2 cover the same region");
  /* c = [0.5, 0.75] x [0, 1] lies inside b: its west side is the side a and b share. */
  EXPECT_FAIL(fea_multipatch_create(ctx, 3, thin, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "patch 2 side west would meet patch 0 side east, which already meets patch 1 side "
              "west");
  cr_assert_null(mp);
  /* 3D: two copies of a mapped box whose directions are permuted and reversed. */
  const int id[3] = {0, 1, 2}, none[3] = {0, 0, 0}, perm[3] = {0, 2, 1}, rev[3] = {1, 1, 1};
  box_map m0, m1;
  fea_space *d0 = mapped_box(ctx, 3, 2, 2, lo1, hi1, id, none, &m0);
  fea_space *d1 = mapped_box(ctx, 3, 2, 2, lo1, hi1, perm, rev, &m1);
  fea_space *turned[2] = {d0, d1};
  EXPECT_FAIL(fea_multipatch_create(ctx, 2, turned, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "patches 0 and 1 cover the same region");
  fea_space *spaces[6] = {a, b, b2, c, d0, d1};
  for (int i = 0; i < 6; i++) fea_space_destroy(&spaces[i]);
  fea_context_destroy(&ctx);
}

/* grad u . grad v + u v and f v with f = f_box: a user's form with its own
 * mass term, so the problem is well posed with every side natural. */
static fea_status mass_stiffness_form(const fea_element_data *e, double *Ke, double *fe,
                                      void *user) {
  for (int q = 0; q < e->nq; q++) {
    const double w = e->w[q], *phi = e->phi + (size_t)q * e->nb;
    const double *g = e->dphi + (size_t)q * e->nb * e->dim, f = f_box(e->x + q * e->dim, user);
    for (int i = 0; i < e->nb; i++) {
      fe[i] += w * f * phi[i];
      for (int j = 0; j < e->nb; j++) {
        double s = phi[i] * phi[j];
        for (int k = 0; k < e->dim; k++) s += g[i * e->dim + k] * g[j * e->dim + k];
        Ke[i * e->nb + j] += w * s;
      }
    }
  }
  return FEA_SUCCESS;
}

/* Every global coefficient of pb's solution: the reference system solved
 * by LAPACK's Cholesky (which fails on a singular matrix), expanded. */
static double *reference_solution(fea_multipatch *mp, fea_multipatch_problem *pb) {
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  OK(fea_multipatch_get_info(mp, &info));
  fea_index nf = 0, nnz = 0;
  OK(fea_multipatch_problem_get_num_free_dofs(pb, &nf));
  fea_matrix *A = NULL;
  double *b = malloc((size_t)nf * sizeof *b), *u = malloc((size_t)info.num_dofs * sizeof *u);
  OK(fea_multipatch_problem_assemble_reference(pb, b, &A));
  OK(fea_matrix_get_size(A, NULL, NULL, &nnz));
  fea_index *rp = malloc((size_t)(nf + 1) * sizeof *rp), *ci = malloc((size_t)nnz * sizeof *ci);
  double *val = malloc((size_t)nnz * sizeof *val), *D = calloc((size_t)(nf * nf), sizeof *D);
  OK(fea_matrix_get_csr(A, rp, ci, val));
  for (fea_index r = 0; r < nf; r++)
    for (fea_index k = rp[r]; k < rp[r + 1]; k++) D[r + ci[k] * nf] = val[k];
  cr_assert_eq(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', (lapack_int)nf, 1, D, (lapack_int)nf, b,
                             (lapack_int)nf),
               0, "the reference system is not positive definite");
  OK(fea_multipatch_problem_expand_solution(pb, b, u));
  free(rp), free(ci), free(val), free(D), free(b);
  fea_matrix_destroy(&A);
  return u;
}

/* The check "no Dirichlet or Robin side and c = 0" cannot see into an
 * element form, which replaces c: a form with its own mass term on a
 * domain whose boundary sides are all Neumann is accepted, and solves to
 * the solution of the same problem posed with reaction = 1 and no form. */
Test(multipatch, element_form_with_mass_term_needs_no_dirichlet_side) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP("/cpu/ref", &ctx);
  const double lo0[3] = {0, 0, 0}, hi0[3] = {0.5, 1, 1}, lo1[3] = {0.5, 0, 0}, hi1[3] = {1, 1, 1};
  const fea_index n[3] = {3, 4, 1};
  fea_space *patches[2] = {box_patch(ctx, 2, 2, n, lo0, hi0), box_patch(ctx, 2, 2, n, lo1, hi1)};
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 2, patches, NULL, &mp));
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  OK(fea_multipatch_get_info(mp, &info));
  fea_multipatch_bc natural[6];
  for (int i = 0; i < info.num_boundary_sides; i++) {
    int patch;
    fea_patch_side side;
    OK(fea_multipatch_get_boundary_side(mp, i, &patch, &side));
    natural[i] = (fea_multipatch_bc){patch, side, {FEA_BC_NEUMANN, 0, NULL, NULL}};
  }
  fea_problem_desc with_form = FEA_PROBLEM_DESC_INIT, with_c = FEA_PROBLEM_DESC_INIT;
  with_form.element_form = mass_stiffness_form;
  with_c.source = f_box;
  with_c.reaction = 1.0;
  fea_multipatch_problem *pb[2] = {NULL, NULL};
  OK(fea_multipatch_problem_create_poisson(mp, &with_c, info.num_boundary_sides, natural, &pb[0]));
  OK(fea_multipatch_problem_create_poisson(mp, &with_form, info.num_boundary_sides, natural,
                                           &pb[1]));
  fea_index nf = 0;
  OK(fea_multipatch_problem_get_num_free_dofs(pb[1], &nf));
  cr_assert_eq(nf, info.num_dofs, "every DoF is free without a Dirichlet side");
  double *u[2] = {reference_solution(mp, pb[0]), reference_solution(mp, pb[1])}, du = 0, su = 0;
  for (fea_index i = 0; i < info.num_dofs; i++) {
    du = fmax(du, fabs(u[0][i] - u[1][i]));
    su = fmax(su, fabs(u[0][i]));
  }
  cr_assert(su > 0.1 && du <= 1e-12 * su, "form and reaction = 1 differ by %.3g (max %.3g)", du,
            su);
  for (int k = 0; k < 2; k++) {
    free(u[k]);
    fea_multipatch_problem_destroy(&pb[k]);
  }
  fea_multipatch_destroy(&mp);
  for (int k = 0; k < 2; k++) fea_space_destroy(&patches[k]);
  fea_context_destroy(&ctx);
}

/* The 4-patch annulus of a G+Smo file: the interfaces found from the
 * geometry are the ones its MultiPatch element lists, and its boundary
 * sides are the domain's. */
Test(multipatch, gismo_file_topology) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP("/cpu/ref", &ctx);
  const char *dir = getenv("FEA_TEST_DATA");
  cr_assert(dir, "FEA_TEST_DATA is not set");
  char path[1024];
  snprintf(path, sizeof path, "%s/gismo/four_patch_annulus.xml", dir);
  fea_geometry_file *file = NULL;
  OK(fea_geometry_file_read(ctx, path, &file));
  int np = 0;
  OK(fea_geometry_file_get_num_patches(file, &np));
  cr_assert_eq(np, 4);
  fea_space *patches[4];
  for (int k = 0; k < np; k++) {
    int dim = 0;
    fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
    OK(fea_geometry_file_get_patch(file, k, &dim, &g));
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = dim;
    d.degree[0] = d.degree[1] = 2;
    d.n[0] = d.n[1] = 4;
    d.geometry = &g;
    OK(fea_space_create_bspline(ctx, &d, &patches[k]));
  }
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, np, patches, NULL, &mp));
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  OK(fea_multipatch_get_info(mp, &info));
  int nfile = 0, nb = 0;
  OK(fea_geometry_file_get_num_interfaces(file, &nfile));
  OK(fea_geometry_file_get_num_boundary_sides(file, &nb));
  cr_assert_eq(info.num_interfaces, nfile);
  cr_assert_eq(info.num_boundary_sides, nb);
  for (int i = 0; i < nfile; i++) {
    fea_geometry_interface fi = FEA_GEOMETRY_INTERFACE_INIT;
    OK(fea_geometry_file_get_interface(file, i, &fi));
    int found = 0;
    for (int j = 0; j < info.num_interfaces && !found; j++) {
      fea_multipatch_interface mi = FEA_MULTIPATCH_INTERFACE_INIT;
      OK(fea_multipatch_get_interface(mp, j, &mi));
      for (int s = 0; s < 2 && !found; s++)
        found = mi.patch[0] == fi.patch[s] && mi.side[0] == fi.side[s] &&
                mi.patch[1] == fi.patch[1 - s] && mi.side[1] == fi.side[1 - s];
    }
    cr_assert(found, "the file's interface %d (patch %d side %d, patch %d side %d) was not found",
              i, fi.patch[0], (int)fi.side[0], fi.patch[1], (int)fi.side[1]);
  }
  fea_multipatch_destroy(&mp);
  for (int k = 0; k < np; k++) fea_space_destroy(&patches[k]);
  fea_geometry_file_destroy(&file);
  fea_context_destroy(&ctx);
}

/* Two unit squares 1e-6 apart: beyond the default tolerance (1e-9 of the
 * diameter), so two patches with four boundary sides each, but so close
 * that an interface was most likely meant: one warning naming both sides
 * and the distance. Touching squares join without a warning, and so do
 * thin stacked patches (close, but not close against their own size). */
Test(multipatch, nearly_matching_sides_are_logged) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP("/cpu/ref", &ctx);
  warnings w = {0, "", ""};
  OK(fea_context_set_log_callback(ctx, FEA_LOG_WARN, keep_warning, &w));
  const fea_index n[3] = {2, 2, 1};
  const double lo0[3] = {0, 0, 0}, hi0[3] = {1, 1, 1};
  const double lo1[3] = {1 + 1e-6, 0, 0}, hi1[3] = {2 + 1e-6, 1, 1};
  const double lo2[3] = {1, 0, 0}, hi2[3] = {2, 1, 1};
  fea_space *a = box_patch(ctx, 2, 2, n, lo0, hi0), *b = box_patch(ctx, 2, 2, n, lo1, hi1);
  fea_space *c = box_patch(ctx, 2, 2, n, lo2, hi2);
  fea_space *gap[2] = {a, b}, *touch[2] = {a, c};
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 2, gap, NULL, &mp));
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  OK(fea_multipatch_get_info(mp, &info));
  cr_assert_eq(info.num_interfaces, 0);
  cr_assert_eq(info.num_boundary_sides, 8);
  cr_assert_eq(w.count, 1, "%d warnings, the first: %s", w.count, w.first);
  cr_assert(strstr(w.first, "patch 0 side east and patch 1 side west nearly coincide, 1e-06 apart"),
            "the warning: %s", w.first);
  cr_assert(strstr(w.first, "treated as boundary sides"), "the warning: %s", w.first);
  fea_multipatch_destroy(&mp);
  w.count = 0;
  OK(fea_multipatch_create(ctx, 2, touch, NULL, &mp));
  OK(fea_multipatch_get_info(mp, &info));
  cr_assert_eq(info.num_interfaces, 1);
  cr_assert_eq(w.count, 0, "%d warnings, the first: %s", w.count, w.first);
  fea_multipatch_destroy(&mp);
  /* Layers 1e-4 thick, 1e-4 apart: a gap as large as the patches are thin. */
  const double lo3[3] = {0, 0, 0}, hi3[3] = {1, 1e-4, 1}, lo4[3] = {0, 2e-4, 0},
               hi4[3] = {1, 3e-4, 1};
  fea_space *d = box_patch(ctx, 2, 2, n, lo3, hi3), *e = box_patch(ctx, 2, 2, n, lo4, hi4);
  fea_space *layers[2] = {d, e};
  OK(fea_multipatch_create(ctx, 2, layers, NULL, &mp));
  cr_assert_eq(w.count, 0, "%d warnings, the first: %s", w.count, w.first);
  fea_multipatch_destroy(&mp);
  fea_space *spaces[5] = {a, b, c, d, e};
  for (int i = 0; i < 5; i++) fea_space_destroy(&spaces[i]);
  fea_context_destroy(&ctx);
}
