/* Linear elasticity on multipatch domains (vector-valued patches, C0 across
 * the interfaces), against independent references:
 * - Lame's thick-walled cylinder on the four-patch whole annulus (pressure
 *   inside, the exact displacement prescribed on the outer circle): L2 order
 *   p + 1 and H1 order p within 0.1 for p = 2..4;
 * - the quarter annulus split in two patches along theta = pi / 4 spans the
 *   space of the single quarter annulus with a C0 knot line there, so both
 *   solutions agree coefficient by coefficient (to 1e-10);
 * - a bar of two materials (a patch each, nu = 0) pulled at one end: the
 *   displacement is piecewise linear, in the space, so it is exact;
 * - the multipatch direct solver equals the dense LAPACK solve of the
 *   reference CSR system (rollers, pressure, a per-patch material);
 * - refusals: vector patches for Poisson, mixed component counts, free
 *   rigid-body modes of the domain (named), bad materials and sides. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-common.h"
#include "elasticity-common.h"
#include "ring-common.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The quarter annulus of ring-common.h turned by k quarter turns: patch k's
 * west side is the inner arc, east the outer, south and north interfaces. */
typedef struct annulus {
  ring q[4];
} annulus;

static void annulus_patches(fea_context *ctx, annulus *a, int p, fea_index n, fea_space **out) {
  for (int k = 0; k < 4; k++) {
    ring_init(&a->q[k], 2, 0);
    const double c = round(cos(k * M_PI / 2)), s = round(sin(k * M_PI / 2));
    for (int i = 0; i < 6; i++) {
      double *x = a->q[k].points + 2 * i;
      const double x0 = x[0], x1 = x[1];
      x[0] = c * x0 - s * x1;
      x[1] = s * x0 + c * x1;
    }
    out[k] = annulus_space(ctx, &a->q[k], 2, p, n, 0);
  }
}

/* The direct solve of a multipatch problem: every global coefficient. */
static double *solve_multipatch(fea_context *ctx, fea_multipatch *mp, fea_multipatch_problem *pb) {
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  OK(fea_multipatch_get_info(mp, &info));
  fea_index nf = 0;
  OK(fea_multipatch_problem_get_num_free_dofs(pb, &nf));
  fea_solver *s = NULL;
  OK(fea_solver_create_multipatch(ctx, pb, NULL, &s));
  OK(fea_solver_setup(s));
  double *x = malloc((size_t)(nf + 1) * sizeof *x), *u = malloc((size_t)info.num_dofs * 8);
  cr_assert(x && u);
  OK(fea_solver_solve(s, 1, NULL, 0, x, nf > 0 ? nf : 1));
  OK(fea_multipatch_problem_expand_solution(pb, x, u));
  fea_solver_destroy(&s);
  free(x);
  return u;
}

/* ---- Lame on the whole annulus ---------------------------------------------------------------- */

static void whole_annulus_errors(fea_context *ctx, int p, fea_index n, double *l2, double *h1) {
  annulus a;
  fea_space *patches[4];
  annulus_patches(ctx, &a, p, n, patches);
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 4, patches, NULL, &mp));
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  OK(fea_multipatch_get_info(mp, &info));
  cr_assert_eq(info.num_interfaces, 4);
  cr_assert_eq(info.num_boundary_sides, 8);
  /* Functions: 4 patches of (n + p)^2, the 4 shared sides counted once. */
  const fea_index m = n + p;
  cr_assert_eq(info.num_dofs, 2 * (4 * m * m - 4 * m), "%lld DoFs", (long long)info.num_dofs);
  lame l = lame_make(2, 1000.0, 0.3, 10.0);
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = l.E, d.nu = l.nu;
  d.displacement = lame_u, d.displacement_user = &l;
  /* Pressure on every inner arc; the outer arcs stay clamped to u = g. */
  fea_multipatch_elastic_bc bcs[4];
  for (int k = 0; k < 4; k++) {
    bcs[k] = (fea_multipatch_elastic_bc){.patch = k, .side = FEA_SIDE_WEST};
    bcs[k].bc.type = FEA_ELASTIC_PRESSURE;
    bcs[k].bc.pressure = l.P;
  }
  fea_multipatch_problem *pb = NULL;
  OK(fea_multipatch_problem_create_elasticity(mp, &d, NULL, 4, bcs, &pb));
  double *u = solve_multipatch(ctx, mp, pb);
  double e0[3], e1[3];
  OK(fea_multipatch_problem_error_norms_vector(pb, u, lame_u, lame_grad, &l, e0, e1));
  /* Together is the root of the sum of the squares of the components, and
   * the whole annulus is symmetric under the quarter turn: both components
   * err alike. */
  cr_expect(fabs(e0[2] - hypot(e0[0], e0[1])) <= 1e-12 * e0[2]);
  cr_expect(fabs(e0[0] - e0[1]) <= 1e-6 * e0[2], "p = %d: %.6e vs %.6e", p, e0[0], e0[1]);
  *l2 = e0[2], *h1 = e1[2];
  free(u);
  fea_multipatch_problem_destroy(&pb);
  fea_multipatch_destroy(&mp);
  for (int k = 0; k < 4; k++) fea_space_destroy(&patches[k]);
}

Test(multipatch_elasticity, lame_whole_annulus_orders, .timeout = 180) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  for (int p = 2; p <= 4; p++) {
    /* The coarsest pairs in the asymptotic range to 0.1. */
    const fea_index n0 = p == 2 ? 8 : 32;
    double l2a, h1a, l2b, h1b;
    whole_annulus_errors(ctx, p, n0, &l2a, &h1a);
    whole_annulus_errors(ctx, p, 2 * n0, &l2b, &h1b);
    const double ol2 = log2(l2a / l2b), oh1 = log2(h1a / h1b);
    cr_log_info(
        "whole annulus p = %d, n = %lld: L2 %.3e -> %.3e (order %.3f), H1 %.3e -> %.3e "
        "(order %.3f)",
        p, (long long)n0, l2a, l2b, ol2, h1a, h1b, oh1);
    expect_orders(p, ol2, oh1);
  }
  fea_context_destroy(&ctx);
}

/* ---- the quarter annulus in two patches against one ---------------------------------------- */

/* The quarter arc's NURBS (weights 1, s, 1) with 1/2 inserted twice: the
 * halves' homogeneous control points R0..R4, each half R0..R2 and R2..R4. */
static void half_ring(ring *q, int half) {
  ring_init(q, 2, 0);
  const double s = 1 / sqrt(2.0);
  /* Homogeneous (w x, w y, w) of the unit arc. */
  const double R[5][3] = {{1, 0, 1},
                          {(1 + s) / 2, s / 2, (1 + s) / 2},
                          {(1 + 2 * s) / 4, (1 + 2 * s) / 4, (1 + s) / 2},
                          {s / 2, (1 + s) / 2, (1 + s) / 2},
                          {0, 1, 1}};
  int i = 0;
  for (int b = 0; b < 3; b++)
    for (int a = 0; a < 2; a++, i++) {
      const double *h = R[2 * half + b], r = 1.0 + a;
      q->points[2 * i] = r * h[0] / h[2];
      q->points[2 * i + 1] = r * h[1] / h[2];
      q->weights[i] = h[2];
    }
}

Test(multipatch_elasticity, quarter_in_two_equals_single_patch, .timeout = 120) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  for (int p = 2; p <= 3; p++) {
    const fea_index nr = 3, nt = 2; /* elements: radial, and along each half arc */
    ring halves[2];
    fea_space *patches[2];
    for (int h = 0; h < 2; h++) {
      half_ring(&halves[h], h);
      fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
      bd.dim = 2;
      bd.degree[0] = bd.degree[1] = p;
      bd.n[0] = nr, bd.n[1] = nt;
      bd.geometry = &halves[h].g;
      OK(fea_space_create_bspline(ctx, &bd, &patches[h]));
      OK(fea_space_set_num_components(patches[h], 2));
    }
    fea_multipatch *mp = NULL;
    OK(fea_multipatch_create(ctx, 2, patches, NULL, &mp));
    fea_multipatch_interface itf = FEA_MULTIPATCH_INTERFACE_INIT;
    OK(fea_multipatch_get_interface(mp, 0, &itf));
    cr_assert(itf.patch[0] == 0 && itf.side[0] == FEA_SIDE_NORTH && itf.patch[1] == 1 &&
              itf.side[1] == FEA_SIDE_SOUTH);
    cr_assert_eq(itf.num_dofs, 2 * (nr + p), "components count: %lld", (long long)itf.num_dofs);

    /* The single quarter annulus: arc knots with a C0 line at 1/2. */
    ring q;
    ring_init(&q, 2, 0);
    double kt[64];
    int m = 0;
    for (int i = 0; i <= p; i++) kt[m++] = 0;
    for (int i = 1; i < nt; i++) kt[m++] = 0.5 * i / nt;
    for (int i = 0; i < p; i++) kt[m++] = 0.5;
    for (int i = 1; i < nt; i++) kt[m++] = 0.5 + 0.5 * i / nt;
    for (int i = 0; i <= p; i++) kt[m++] = 1;
    fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
    bd.dim = 2;
    bd.degree[0] = bd.degree[1] = p;
    bd.n[0] = nr, bd.n[1] = nt;
    bd.knots[1] = kt, bd.num_knots[1] = m;
    bd.geometry = &q.g;
    fea_space *whole = NULL;
    OK(fea_space_create_bspline(ctx, &bd, &whole));
    OK(fea_space_set_num_components(whole, 2));

    /* Lame's quarter (elasticity-common.h): pressure inside, free outside,
     * rollers on y = 0 (patch 0's south) and x = 0 (patch 1's north). */
    lame l = lame_make(2, 1000.0, 0.3, 10.0);
    fea_elasticity_desc d = lame_desc(&l);
    fea_problem *pb = NULL;
    OK(fea_problem_create_elasticity(whole, &d, &pb));
    double *v = solve_direct(ctx, whole, pb);
    fea_elasticity_desc md = FEA_ELASTICITY_DESC_INIT;
    md.E = l.E, md.nu = l.nu;
    fea_multipatch_elastic_bc bcs[6];
    int nb = 0;
    for (int h = 0; h < 2; h++) {
      bcs[nb] = (fea_multipatch_elastic_bc){.patch = h, .side = FEA_SIDE_WEST};
      bcs[nb].bc = d.sides[FEA_SIDE_WEST];
      nb++;
      bcs[nb] = (fea_multipatch_elastic_bc){.patch = h, .side = FEA_SIDE_EAST};
      bcs[nb].bc = d.sides[FEA_SIDE_EAST];
      nb++;
    }
    bcs[nb] = (fea_multipatch_elastic_bc){.patch = 0, .side = FEA_SIDE_SOUTH};
    bcs[nb++].bc = d.sides[FEA_SIDE_SOUTH];
    bcs[nb] = (fea_multipatch_elastic_bc){.patch = 1, .side = FEA_SIDE_NORTH};
    bcs[nb++].bc = d.sides[FEA_SIDE_NORTH];
    fea_multipatch_problem *mpb = NULL;
    OK(fea_multipatch_problem_create_elasticity(mp, &md, NULL, nb, bcs, &mpb));
    double *u = solve_multipatch(ctx, mp, mpb);

    /* Patch h's function (i, j) is the whole space's (i, j + h (mt - 1)). */
    const fea_index mr = nr + p, mt = nt + p, n2 = 2 * mr * mt;
    double err = 0, ref = 0;
    for (int h = 0; h < 2; h++) {
      fea_index *g = malloc((size_t)n2 * sizeof *g);
      OK(fea_multipatch_get_patch_dofs(mp, h, n2, g));
      for (fea_index j = 0; j < mt; j++)
        for (fea_index i = 0; i < mr; i++)
          for (int c = 0; c < 2; c++) {
            const double a = u[g[c + 2 * (i + j * mr)]];
            const double b = v[c + 2 * (i + (j + h * (mt - 1)) * mr)];
            err = fmax(err, fabs(a - b));
            ref = fmax(ref, fabs(b));
          }
      free(g);
    }
    cr_log_info("quarter in two, p = %d: max difference %.3e of %.3e", p, err, ref);
    cr_assert_lt(err, 1e-10 * ref, "p = %d: two patches and the C0 patch differ by %g (max %g)", p,
                 err, ref);
    free(u);
    free(v);
    fea_multipatch_problem_destroy(&mpb);
    fea_problem_destroy(&pb);
    fea_space_destroy(&whole);
    fea_multipatch_destroy(&mp);
    for (int h = 0; h < 2; h++) fea_space_destroy(&patches[h]);
  }
  fea_context_destroy(&ctx);
}

/* ---- two materials ---------------------------------------------------------------------------- */

/* Box patches [lo, hi] of degree p with n elements per direction, dim components. */
static fea_space *box_patch(fea_context *ctx, int dim, int p, fea_index n, const double lo[3],
                            const double hi[3]) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = dim;
  for (int k = 0; k < 3; k++) {
    bd.degree[k] = p, bd.n[k] = n;
    bd.lower[k] = lo[k], bd.upper[k] = hi[k];
  }
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, dim));
  return s;
}

/* The bar [0, 2] x [0, 1] (x [0, 1]): E1 on x < 1, E2 beyond, nu = 0,
 * pulled by sigma on x = 2 with rollers on the faces x = 0, y = 0 (z = 0):
 * u_x = sigma x / E1, then sigma / E1 + sigma (x - 1) / E2; u_y = u_z = 0. */
typedef struct bimaterial {
  int dim;
  double E1, E2, sigma;
} bimaterial;

static void bimaterial_u(const double *x, double *u, void *user) {
  const bimaterial *b = user;
  u[0] = x[0] < 1 ? b->sigma * x[0] / b->E1 : b->sigma / b->E1 + b->sigma * (x[0] - 1) / b->E2;
  for (int k = 1; k < b->dim; k++) u[k] = 0;
}

static void bimaterial_grad(const double *x, double *g, void *user) {
  const bimaterial *b = user;
  for (int k = 0; k < b->dim * b->dim; k++) g[k] = 0;
  g[0] = b->sigma / (x[0] < 1 ? b->E1 : b->E2);
}

static void bimaterial_case(int dim) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  const double lo0[3] = {0, 0, 0}, hi0[3] = {1, 1, 1}, lo1[3] = {1, 0, 0}, hi1[3] = {2, 1, 1};
  fea_space *patches[2] = {box_patch(ctx, dim, 2, 2, lo0, hi0),
                           box_patch(ctx, dim, 2, 2, lo1, hi1)};
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 2, patches, NULL, &mp));
  bimaterial b = {dim, 1.0, 4.0, 0.5};
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT, m1 = FEA_ELASTICITY_DESC_INIT;
  d.E = b.E1, d.nu = 0.0;
  m1.E = b.E2, m1.nu = 0.0;
  const fea_elasticity_desc *materials[2] = {NULL, &m1};
  fea_multipatch_elastic_bc bcs[10];
  int nb = 0;
  bcs[nb] = (fea_multipatch_elastic_bc){.patch = 0, .side = FEA_SIDE_WEST};
  bcs[nb++].bc.components = FEA_COMPONENT_X;
  bcs[nb] = (fea_multipatch_elastic_bc){.patch = 1, .side = FEA_SIDE_EAST};
  bcs[nb].bc.type = FEA_ELASTIC_TRACTION;
  bcs[nb].bc.traction = traction_x;
  bcs[nb++].bc.traction_user = &b.sigma;
  for (int h = 0; h < 2; h++) {
    bcs[nb] = (fea_multipatch_elastic_bc){.patch = h, .side = FEA_SIDE_SOUTH};
    bcs[nb++].bc.components = FEA_COMPONENT_Y;
    bcs[nb] = (fea_multipatch_elastic_bc){.patch = h, .side = FEA_SIDE_NORTH};
    bcs[nb++].bc.type = FEA_ELASTIC_TRACTION;
    if (dim == 3) {
      bcs[nb] = (fea_multipatch_elastic_bc){.patch = h, .side = FEA_SIDE_FRONT};
      bcs[nb++].bc.components = FEA_COMPONENT_Z;
      bcs[nb] = (fea_multipatch_elastic_bc){.patch = h, .side = FEA_SIDE_BACK};
      bcs[nb++].bc.type = FEA_ELASTIC_TRACTION;
    }
  }
  fea_multipatch_problem *pb = NULL;
  OK(fea_multipatch_problem_create_elasticity(mp, &d, materials, nb, bcs, &pb));
  double *u = solve_multipatch(ctx, mp, pb);
  double e0[4], e1[4];
  OK(fea_multipatch_problem_error_norms_vector(pb, u, bimaterial_u, bimaterial_grad, &b, e0, e1));
  cr_log_info("%dD bimaterial bar: L2 %.3e, H1 %.3e", dim, e0[dim], e1[dim]);
  cr_expect_lt(e0[dim], 1e-10, "%dD: L2 error %g", dim, e0[dim]);
  cr_expect_lt(e1[dim], 1e-9, "%dD: H1 error %g", dim, e1[dim]);
  /* One material for both is another bar: the patch's own material counts. */
  fea_multipatch_problem *pb1 = NULL;
  OK(fea_multipatch_problem_create_elasticity(mp, &d, NULL, nb, bcs, &pb1));
  double *w = solve_multipatch(ctx, mp, pb1);
  OK(fea_multipatch_problem_error_norms_vector(pb1, w, bimaterial_u, bimaterial_grad, &b, e0,
                                               NULL));
  cr_expect_gt(e0[dim], 0.1, "%dD: one material matches the bimaterial solution (%g)", dim,
               e0[dim]);
  free(u);
  free(w);
  fea_multipatch_problem_destroy(&pb);
  fea_multipatch_problem_destroy(&pb1);
  fea_multipatch_destroy(&mp);
  for (int h = 0; h < 2; h++) fea_space_destroy(&patches[h]);
  fea_context_destroy(&ctx);
}

Test(multipatch_elasticity, bimaterial_bar_2d_exact) { bimaterial_case(2); }
Test(multipatch_elasticity, bimaterial_bar_3d_exact) { bimaterial_case(3); }

/* ---- the direct solver against the reference system ----------------------------------------- */

BACKEND_TEST(multipatch_elasticity, solver_equals_reference_system) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  annulus a;
  fea_space *patches[4];
  annulus_patches(ctx, &a, 2, 3, patches);
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 4, patches, NULL, &mp));
  lame l = lame_make(2, 1000.0, 0.3, 10.0);
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT, stiff = FEA_ELASTICITY_DESC_INIT;
  d.E = l.E, d.nu = l.nu;
  stiff.E = 5 * l.E, stiff.nu = 0.2;
  const fea_elasticity_desc *materials[4] = {NULL, &stiff, NULL, NULL};
  /* Pressure inside; outside: clamped (patch 0), a roller fixing u_x
   * (patch 1), a spring (patch 2) and a pressure (patch 3). */
  fea_multipatch_elastic_bc bcs[7];
  int nb = 0;
  for (int k = 0; k < 4; k++) {
    bcs[nb] = (fea_multipatch_elastic_bc){.patch = k, .side = FEA_SIDE_WEST};
    bcs[nb].bc.type = FEA_ELASTIC_PRESSURE;
    bcs[nb++].bc.pressure = l.P;
  }
  bcs[nb] = (fea_multipatch_elastic_bc){.patch = 1, .side = FEA_SIDE_EAST};
  bcs[nb++].bc.components = FEA_COMPONENT_X;
  bcs[nb] = (fea_multipatch_elastic_bc){.patch = 2, .side = FEA_SIDE_EAST};
  bcs[nb].bc.type = FEA_ELASTIC_SPRING; /* an elastic support: a face term in the matrix */
  bcs[nb++].bc.pressure = 50.0;
  bcs[nb] = (fea_multipatch_elastic_bc){.patch = 3, .side = FEA_SIDE_EAST};
  bcs[nb].bc.type = FEA_ELASTIC_PRESSURE;
  bcs[nb++].bc.pressure = -2.0;
  fea_multipatch_problem *pb = NULL;
  OK(fea_multipatch_problem_create_elasticity(mp, &d, materials, nb, bcs, &pb));
  fea_index nf = 0;
  OK(fea_multipatch_problem_get_num_free_dofs(pb, &nf));
  double *b = malloc((size_t)nf * sizeof *b), *x = malloc((size_t)nf * sizeof *x);
  fea_matrix *A = NULL;
  OK(fea_multipatch_problem_assemble_reference(pb, b, &A));
  fea_index rows = 0, cols = 0, nnz = 0;
  OK(fea_matrix_get_size(A, &rows, &cols, &nnz));
  cr_assert_eq(rows, nf);
  fea_index *rp = malloc((size_t)(nf + 1) * sizeof *rp), *ci = malloc((size_t)nnz * sizeof *ci);
  double *val = malloc((size_t)nnz * sizeof *val);
  cr_assert(rp && ci && val);
  OK(fea_matrix_get_csr(A, rp, ci, val));
  double *D = calloc((size_t)(nf * nf), sizeof *D), *y = malloc((size_t)nf * sizeof *y);
  for (fea_index r = 0; r < nf; r++)
    for (fea_index k = rp[r]; k < rp[r + 1]; k++) D[r + ci[k] * nf] = val[k];
  memcpy(y, b, (size_t)nf * sizeof *y);
  cr_assert_eq(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', (lapack_int)nf, 1, D, (lapack_int)nf, y,
                             (lapack_int)nf),
               0);
  fea_solver *s = NULL;
  OK(fea_solver_create_multipatch(ctx, pb, NULL, &s));
  OK(fea_solver_setup(s));
  OK(fea_solver_solve(s, 1, NULL, 0, x, nf));
  double err = 0, ref = 0;
  for (fea_index i = 0; i < nf; i++)
    err = fmax(err, fabs(x[i] - y[i])), ref = fmax(ref, fabs(y[i]));
  cr_assert_lt(err, 1e-10 * ref, "[%s] multipatch vs dense reference: %g (max %g)", resource, err,
               ref);
  /* And a caller's right-hand side. */
  for (fea_index i = 0; i < nf; i++) b[i] = cos(0.3 * (double)i);
  memcpy(y, b, (size_t)nf * sizeof *y);
  cr_assert_eq(LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', (lapack_int)nf, 1, D, (lapack_int)nf, y,
                              (lapack_int)nf),
               0);
  OK(fea_solver_solve(s, 1, b, nf, x, nf));
  err = ref = 0;
  for (fea_index i = 0; i < nf; i++)
    err = fmax(err, fabs(x[i] - y[i])), ref = fmax(ref, fabs(y[i]));
  cr_assert_lt(err, 1e-10 * ref, "[%s] caller rhs: %g (max %g)", resource, err, ref);
  fea_solver_destroy(&s);
  fea_matrix_destroy(&A);
  free(rp), free(ci), free(val);
  free(D);
  free(y);
  free(b);
  free(x);
  fea_multipatch_problem_destroy(&pb);
  fea_multipatch_destroy(&mp);
  for (int k = 0; k < 4; k++) fea_space_destroy(&patches[k]);
  fea_context_destroy(&ctx);
}

/* ---- refusals --------------------------------------------------------------------------------- */

Test(multipatch_elasticity, refusals) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  annulus a;
  fea_space *patches[4];
  annulus_patches(ctx, &a, 2, 2, patches);
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 4, patches, NULL, &mp));
  fea_multipatch_problem *pb = NULL;

  /* Poisson takes scalar patches. */
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  EXPECT_FAIL(fea_multipatch_problem_create_poisson(mp, &pd, 0, NULL, &pb), FEA_ERR_INVALID_ARG,
              ctx, "2 components");
  cr_assert_null(pb);

  /* A pure traction problem: every boundary side loaded or free. */
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  fea_multipatch_elastic_bc bcs[8];
  for (int k = 0; k < 4; k++) {
    bcs[2 * k] = (fea_multipatch_elastic_bc){.patch = k, .side = FEA_SIDE_WEST};
    bcs[2 * k].bc.type = FEA_ELASTIC_PRESSURE;
    bcs[2 * k].bc.pressure = 1.0;
    bcs[2 * k + 1] = (fea_multipatch_elastic_bc){.patch = k, .side = FEA_SIDE_EAST};
    bcs[2 * k + 1].bc.type = FEA_ELASTIC_TRACTION;
  }
  EXPECT_FAIL(fea_multipatch_problem_create_elasticity(mp, &d, NULL, 8, bcs, &pb),
              FEA_ERR_INVALID_ARG, ctx, "translation in x, translation in y, rotation about z");
  cr_assert_null(pb);
  /* u_x fixed on one outer arc only: translation in y and rotation free...
   * the roller holds u_x along a whole quarter arc, which removes the
   * translation in x and (its points at different y) the rotation, not
   * the translation in y. */
  bcs[1].bc.type = FEA_ELASTIC_DISPLACEMENT;
  bcs[1].bc.components = FEA_COMPONENT_X;
  EXPECT_FAIL(fea_multipatch_problem_create_elasticity(mp, &d, NULL, 8, bcs, &pb),
              FEA_ERR_INVALID_ARG, ctx, "(translation in y)");
  /* Clamping that arc holds everything, and so does a spring there. */
  bcs[1].bc.components = 0;
  OK(fea_multipatch_problem_create_elasticity(mp, &d, NULL, 8, bcs, &pb));
  fea_multipatch_problem_destroy(&pb);
  bcs[1].bc.type = FEA_ELASTIC_SPRING;
  bcs[1].bc.pressure = 1.0;
  OK(fea_multipatch_problem_create_elasticity(mp, &d, NULL, 8, bcs, &pb));
  /* Only the spring's face terms make that system nonsingular: without
   * them the factorization would meet the rigid-body modes. */
  fea_solver *sv = NULL;
  OK(fea_solver_create_multipatch(ctx, pb, NULL, &sv));
  OK(fea_solver_setup(sv));
  fea_solver_destroy(&sv);
  fea_multipatch_problem_destroy(&pb);
  bcs[1].bc.type = FEA_ELASTIC_DISPLACEMENT;
  bcs[1].bc.pressure = 0.0;

  /* A component the space lacks; an interface named as a side. */
  bcs[1].bc.components = FEA_COMPONENT_Z;
  EXPECT_FAIL(fea_multipatch_problem_create_elasticity(mp, &d, NULL, 8, bcs, &pb),
              FEA_ERR_INVALID_ARG, ctx, "bcs[1] (patch 0 side east) fixes component 2");
  bcs[1].bc.components = 0;
  fea_multipatch_elastic_bc itf = {.patch = 2, .side = FEA_SIDE_SOUTH};
  EXPECT_FAIL(fea_multipatch_problem_create_elasticity(mp, &d, NULL, 1, &itf, &pb),
              FEA_ERR_INVALID_ARG, ctx, "patch 2 side south, which is an interface");
  fea_multipatch_elastic_bc beyond = {.patch = 0, .side = FEA_SIDE_FRONT};
  EXPECT_FAIL(fea_multipatch_problem_create_elasticity(mp, &d, NULL, 1, &beyond, &pb),
              FEA_ERR_INVALID_ARG, ctx, "bcs[0].side = 4");

  /* Materials: desc's and a patch's own, each named. */
  d.nu = 0.5;
  EXPECT_FAIL(fea_multipatch_problem_create_elasticity(mp, &d, NULL, 0, NULL, &pb),
              FEA_ERR_INVALID_ARG, ctx, "nu = 0.5 is outside (-1, 0.5)");
  d.nu = 0.3;
  fea_elasticity_desc bad = FEA_ELASTICITY_DESC_INIT;
  bad.E = -1.0;
  const fea_elasticity_desc *materials[4] = {NULL, NULL, &bad, NULL};
  EXPECT_FAIL(fea_multipatch_problem_create_elasticity(mp, &d, materials, 0, NULL, &pb),
              FEA_ERR_INVALID_ARG, ctx, "materials[2] (patch 2): Young's modulus E = -1");
  d.sides[FEA_SIDE_NORTH].components = FEA_COMPONENT_X;
  EXPECT_FAIL(fea_multipatch_problem_create_elasticity(mp, &d, NULL, 0, NULL, &pb),
              FEA_ERR_INVALID_ARG, ctx, "desc.sides[3] (north) is not the default");
  cr_assert_null(pb);
  fea_multipatch_destroy(&mp);

  /* Scalar patches are not a displacement; mixed component counts. */
  OK(fea_space_set_num_components(patches[3], 1));
  EXPECT_FAIL(fea_multipatch_create(ctx, 4, patches, NULL, &mp), FEA_ERR_INVALID_ARG, ctx,
              "patches[3] has 1 components but patches[0] has 2");
  for (int k = 0; k < 3; k++) OK(fea_space_set_num_components(patches[k], 1));
  OK(fea_multipatch_create(ctx, 4, patches, NULL, &mp));
  fea_elasticity_desc d0 = FEA_ELASTICITY_DESC_INIT;
  EXPECT_FAIL(fea_multipatch_problem_create_elasticity(mp, &d0, NULL, 0, NULL, &pb),
              FEA_ERR_INVALID_ARG, ctx, "elasticity needs patches with 2 components");
  fea_multipatch_destroy(&mp);
  for (int k = 0; k < 4; k++) fea_space_destroy(&patches[k]);
  fea_context_destroy(&ctx);
}
