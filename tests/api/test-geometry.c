/* B-spline spaces on mapped patches (fea_geometry_desc): the quarter annulus
 * (an exact NURBS map) and the thick quarter ring in 3D, solved with a
 * manufactured solution. Judged by the convergence orders of the L2 and H1
 * errors, by the multifrontal solver against CG on the element-matrix
 * operator (independent paths from the same element values), by the area
 * and volume the map encloses, and by the refusals of bad geometries. */
#include "api-common.h"
#include "ring-common.h"
#include "solve-common.h"

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <feaccel/operator.h>
#include <feaccel/solver.h>

static fea_space *ring_space(fea_context *ctx, ring *q, int dim, int p, fea_index n) {
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < dim; k++) d.degree[k] = k == 1 && p < 2 ? 2 : p, d.n[k] = n;
  d.geometry = &q->g;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  return s;
}

typedef ring_exact exact;

static fea_problem *ring_problem(fea_space *s, exact *e) {
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = ring_f;
  pd.source_user = e;
  pd.dirichlet = ring_u;
  pd.dirichlet_user = e;
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(s, &pd, &pb));
  return pb;
}

/* L2 and H1 errors at n and 2n; orders p + 1 and p within 0.1. */
static void check_orders(int dim, int p, fea_index n) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  ring q;
  ring_init(&q, dim, 1.0);
  exact e = {dim, 0.0};
  double l2[2], h1[2];
  for (int i = 0; i < 2; i++) {
    fea_space *s = ring_space(ctx, &q, dim, p, n << i);
    fea_problem *pb = ring_problem(s, &e);
    double *u = solve_direct(ctx, s, pb);
    OK(fea_problem_error_norms(pb, u, ring_u, ring_grad, &e, &l2[i], &h1[i]));
    free(u);
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
  }
  const double r2 = log2(l2[0] / l2[1]), r1 = log2(h1[0] / h1[1]);
  cr_log_info("%dD p = %d, n = %lld, %lld: L2 %.3g %.3g (order %.2f), H1 %.3g %.3g (order %.2f)",
              dim, p, (long long)n, (long long)(2 * n), l2[0], l2[1], r2, h1[0], h1[1], r1);
  cr_assert(fabs(r2 - (p + 1)) <= 0.1, "%dD p = %d: L2 errors %.3g, %.3g give order %.2f", dim, p,
            l2[0], l2[1], r2);
  cr_assert(fabs(r1 - p) <= 0.1, "%dD p = %d: H1 errors %.3g, %.3g give order %.2f", dim, p, h1[0],
            h1[1], r1);
  OK(fea_context_destroy(&ctx));
}

/* p = 1 is degree 1 except along the arc, whose exact map needs 2 (the
 * space contains its geometry): the lower degree sets the orders. */
Test(geometry, annulus_p1_orders, .timeout = 120) { check_orders(2, 1, 32); }
Test(geometry, annulus_p2_orders, .timeout = 120) { check_orders(2, 2, 16); }
Test(geometry, annulus_p3_orders, .timeout = 120) { check_orders(2, 3, 16); }
Test(geometry, annulus_p4_orders, .timeout = 120) { check_orders(2, 4, 32); }
Test(geometry, annulus_p5_orders, .timeout = 120) { check_orders(2, 5, 32); }
/* 3D: the smallest n whose orders are within 0.1 with room (p = 1 at n = 8,
 * 16: 1.98 and 1.03; p = 2 at 12, 24: 3.06 and 2.02; p = 3 at 12, 24: 4.06 and
 * 3.07). Below, the higher-order terms show (p = 2 at 8, 16: 3.13; p = 3 at
 * 10, 20: 4.09, at 8, 16: 4.14). */
Test(geometry, ring_3d_p1_orders, .timeout = 180) { check_orders(3, 1, 8); }
Test(geometry, ring_3d_p2_orders, .timeout = 180) { check_orders(3, 2, 12); }
Test(geometry, ring_3d_p3_orders, .timeout = 180) { check_orders(3, 3, 12); }

/* A B-spline (not rational) map: the bilinear quadrilateral with corners
 * (0, 0), (2, 0.3), (-0.2, 1), (1.7, 1.6); p = 1 on it converges at 2 and 1. */
Test(geometry, bilinear_bspline_map_p1_orders) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  static const double kn[4] = {0, 0, 1, 1};
  static const double pts[8] = {0, 0, 2, 0.3, -0.2, 1, 1.7, 1.6};
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  g.degree[0] = g.degree[1] = 1;
  g.knots[0] = g.knots[1] = kn;
  g.num_knots[0] = g.num_knots[1] = 4;
  g.control_points = pts;
  g.num_control_points = 4;
  exact e = {2, 0.0};
  double l2[2], h1[2];
  for (int i = 0; i < 2; i++) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.degree[0] = d.degree[1] = 1;
    d.n[0] = d.n[1] = 32 << i;
    d.geometry = &g;
    fea_space *s = NULL;
    OK(fea_space_create_bspline(ctx, &d, &s));
    fea_problem *pb = ring_problem(s, &e);
    double *u = solve_direct(ctx, s, pb);
    OK(fea_problem_error_norms(pb, u, ring_u, ring_grad, &e, &l2[i], &h1[i]));
    free(u);
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
  }
  const double r2 = log2(l2[0] / l2[1]), r1 = log2(h1[0] / h1[1]);
  cr_assert(fabs(r2 - 2) <= 0.1 && fabs(r1 - 1) <= 0.1, "orders %.2f (L2) and %.2f (H1)", r2, r1);
  OK(fea_context_destroy(&ctx));
}

static double one(const double *x, void *user) {
  (void)x, (void)user;
  return 1.0;
}

/* The map is exact: the L2 norm of 1 is the square root of the area (3 pi / 4)
 * and of the volume (3 pi / 4 at depth 1); Gauss rules integrate the rational
 * Jacobian closely but not exactly (1e-12 at 3 points and 3 elements). */
Test(geometry, area_and_volume_are_exact) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  for (int dim = 2; dim <= 3; dim++) {
    ring q;
    ring_init(&q, dim, 1.0);
    fea_space *s = ring_space(ctx, &q, dim, 2, 3);
    exact e = {dim, 0.0};
    fea_problem *pb = ring_problem(s, &e);
    fea_space_info info = FEA_SPACE_INFO_INIT;
    OK(fea_space_get_info(s, &info));
    double *zero = calloc((size_t)info.num_dofs, sizeof *zero), l2 = 0;
    OK(fea_problem_error_norms(pb, zero, one, NULL, NULL, &l2, NULL));
    cr_assert(fabs(l2 * l2 - 0.75 * M_PI) <= 1e-10, "%dD: measure %.17g, expected 3 pi / 4", dim,
              l2 * l2);
    free(zero);
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
  }
  OK(fea_context_destroy(&ctx));
}

/* The rational basis reproduces constants and the coordinates (the geometry
 * is in the space): interpolating x + 2 y and evaluating at the quadrature
 * points through the error norm gives it back to rounding. */
static double linear_xy(const double *x, void *user) {
  (void)user;
  return x[0] + 2.0 * x[1];
}

Test(geometry, interpolant_reproduces_the_coordinates) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  ring_init(&q, 2, 1.0);
  fea_space *s = ring_space(ctx, &q, 2, 3, 5);
  exact e = {2, 0.0};
  fea_problem *pb = ring_problem(s, &e);
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  double *c = malloc((size_t)info.num_dofs * sizeof *c), l2 = 1;
  OK(fea_space_interpolate(s, linear_xy, NULL, c));
  OK(fea_problem_error_norms(pb, c, linear_xy, NULL, NULL, &l2, NULL));
  cr_assert(l2 <= 1e-13, "interpolant of x + 2y is off by %.3g in L2", l2);
  free(c);
  OK(fea_problem_destroy(&pb));
  OK(fea_space_destroy(&s));
  OK(fea_context_destroy(&ctx));
}

/* The multifrontal solver and CG on the element-matrix operator agree. */
Test(geometry, direct_and_cg_agree) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  ring q;
  ring_init(&q, 2, 1.0);
  fea_space *s = ring_space(ctx, &q, 2, 3, 9);
  exact e = {2, 0.0};
  fea_problem *pb = ring_problem(s, &e);
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  fea_solver *sv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, NULL, &sv));
  OK(fea_solver_setup(sv));
  double *xd = malloc((size_t)nf * sizeof *xd), *xc = malloc((size_t)nf * sizeof *xc);
  OK(fea_solver_solve(sv, 1, NULL, 0, xd, nf));
  fea_solver_destroy(&sv);
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, pb, &od, &op));
  fea_vector *b = NULL, *x = NULL;
  OK(fea_vector_create(ctx, nf, FEA_F64, &b));
  OK(fea_vector_create(ctx, nf, FEA_F64, &x));
  OK(fea_operator_get_rhs(op, b));
  OK(fea_vector_set_all(x, 0.0));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-12;
  cd.jacobi = 1;
  fea_cg_stats cs = FEA_CG_STATS_INIT;
  OK(fea_cg_solve(op, b, x, &cd, &cs));
  OK(fea_vector_read(x, nf, FEA_F64, xc));
  double diff = 0, norm = 0;
  for (fea_index i = 0; i < nf; i++) {
    diff = fmax(diff, fabs(xd[i] - xc[i]));
    norm = fmax(norm, fabs(xd[i]));
  }
  cr_assert(diff <= 1e-9 * norm, "direct and CG differ by %.3g (max %.3g)", diff, norm);
  /* The sum-factorization kind runs as Kronecker terms on this separable
   * map by default (tests/unit/test-kron-mapped.c compares it with the
   * assembled matrix) and at the quadrature points with stored geometry
   * terms (test-operator-mapped.c compares it with element matrices). */
  od.kind = FEA_OPERATOR_MATFREE_SUMFACT;
  fea_operator *sf = NULL;
  OK(fea_operator_create(ctx, pb, &od, &sf));
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  OK(fea_operator_get_info(sf, &info));
  cr_assert_eq(info.kind_run, FEA_OPERATOR_MATFREE_SUMFACT);
  cr_assert(strstr(info.kernel, "Kronecker terms") != NULL, "%s", info.kernel);
  fea_operator_destroy(&sf);
  od.geometry_terms = FEA_GEOMETRY_TERMS_STORED;
  OK(fea_operator_create(ctx, pb, &od, &sf));
  OK(fea_operator_get_info(sf, &info));
  cr_assert(strstr(info.kernel, "at points") != NULL, "%s", info.kernel);
  fea_operator_destroy(&sf);
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  free(xd);
  free(xc);
  OK(fea_problem_destroy(&pb));
  OK(fea_space_destroy(&s));
  OK(fea_context_destroy(&ctx));
}

/* ------------------------------------------------------------------ errors */

/* What *out holds before a call that must fail and leave it NULL. */
#define SPACE_SENTINEL ((fea_space *)(uintptr_t)0x1)

static void expect_refused(fea_context *ctx, const fea_bspline_desc *d, fea_status want,
                           const char *needle) {
  fea_space *s = SPACE_SENTINEL;
  EXPECT_FAIL(fea_space_create_bspline(ctx, d, &s), want, ctx, needle);
  cr_assert_null(s, "*out is not NULL after a failure (%s)", needle);
}

Test(geometry_errors, bad_geometries_are_named) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  ring_init(&q, 2, 1.0);
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.degree[0] = d.degree[1] = 2;
  d.n[0] = d.n[1] = 2;
  d.geometry = &q.g;
  q.weights[2] = 0;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "geometry: weight 2 is 0");
  q.weights[2] = -1;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "geometry: weight 2 is -1");
  q.weights[2] = 1 / sqrt(2.0);
  q.points[3 * 2 + 1] = NAN;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "geometry: control point 3 has coordinate 1 = nan");
  q.points[3 * 2 + 1] = 0;
  q.g.num_control_points = 5;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG,
                 "num_control_points is 5 but the knot vectors give 6 functions");
  q.g.num_control_points = 6;
  q.knots_t[3] = 0.5; /* 0 0 0 0.5 1 1: not open at the end */
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "direction 1");
  q.knots_t[3] = 1;
  q.g.control_points = NULL;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "geometry: control_points is NULL");
  q.g.control_points = q.points;
  q.g.degree[1] = 9;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "geometry: degree 9 in direction 1");
  q.g.degree[1] = 2;
  /* Degree 1 in the arc's direction cannot hold the circle. */
  d.degree[1] = 1;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "do not refine its geometry");
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "fine degree 1 is below coarse degree 2");
  d.degree[1] = 2;
  /* Knots over another parameter range. */
  const double other[] = {0, 0, 0, 2, 2, 2};
  d.knots[1] = other;
  d.num_knots[1] = 6;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "parameter ranges [0, 1] and [0, 2] differ");
  d.knots[1] = NULL;
  d.num_knots[1] = 0;
  d.upper[0] = 2;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "leave lower and upper at their defaults");
  d.upper[0] = 1;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  OK(fea_space_destroy(&s));
  OK(fea_context_destroy(&ctx));
}

/* A map that turns the orientation (x mirrored) is refused where its
 * elements are first integrated, naming the element and the point; point
 * location is refused on mapped spaces; a transfer between a mapped and a
 * box space is refused. */
Test(geometry_errors, inverted_map_location_and_transfer) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  ring_init(&q, 2, 1.0);
  for (int i = 0; i < 6; i++) q.points[2 * i] = -q.points[2 * i];
  fea_space *s = ring_space(ctx, &q, 2, 2, 2);
  exact e = {2, 0.0};
  fea_problem *pb = ring_problem(s, &e);
  fea_solver *sv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, NULL, &sv));
  EXPECT_FAIL(fea_solver_setup(sv), FEA_ERR_INVALID_ARG, ctx,
              "not invertible with positive orientation in element");
  fea_solver_destroy(&sv);
  const double pt[2] = {0.0, 1.5};
  double v = 0, c[16] = {0};
  EXPECT_FAIL(fea_space_evaluate(s, c, 1, pt, &v, NULL), FEA_ERR_UNSUPPORTED, ctx,
              "mapped by a geometry is not supported");
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.degree[0] = d.degree[1] = 2;
  d.n[0] = d.n[1] = 4;
  fea_space *box = NULL;
  OK(fea_space_create_bspline(ctx, &d, &box));
  double fine[64];
  EXPECT_FAIL(fea_space_transfer(s, c, box, fine), FEA_ERR_INVALID_ARG, ctx,
              "one is mapped by a geometry and the other is not");
  OK(fea_space_destroy(&box));
  OK(fea_problem_destroy(&pb));
  OK(fea_space_destroy(&s));
  OK(fea_context_destroy(&ctx));
}

/* The VTU picture of a function on the mapped annulus: s^2 samples and
 * (s - 1)^2 cells per element, points on the annulus (1 <= r <= 2), and the
 * values of the interpolant of x + 2y equal to x + 2y at the drawn points. */
static const char *after(const char *text, const char *key) {
  const char *p = strstr(text, key);
  cr_assert(p, "'%s' is not in the file", key);
  p = strchr(p, '>');
  cr_assert(p);
  return p + 1;
}

Test(geometry, vtu_of_a_mapped_function) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  ring_init(&q, 2, 1.0);
  fea_space *s = ring_space(ctx, &q, 2, 2, 3);
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  double *c = malloc((size_t)info.num_dofs * sizeof *c);
  OK(fea_space_interpolate(s, linear_xy, NULL, c));
  char path[] = "/tmp/fea-vtu-XXXXXX";
  const int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  const int samples = 4;
  OK(fea_space_write_vtu(s, c, samples, path));
  FILE *f = fopen(path, "r");
  cr_assert(f);
  static char text[1 << 20];
  const size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  const long long npts = 9 * samples * samples, ncells = 9 * (samples - 1) * (samples - 1);
  char want[96];
  snprintf(want, sizeof want, "NumberOfPoints=\"%lld\" NumberOfCells=\"%lld\"", npts, ncells);
  cr_assert(strstr(text, want), "no '%s'", want);
  const char *pu = after(text, "Name=\"u\""), *px = after(after(text, "<Points>"), "<DataArray");
  for (long long i = 0; i < npts; i++) {
    char *end = NULL;
    const double u = strtod(pu, &end);
    pu = end;
    double x[3];
    for (int k = 0; k < 3; k++) {
      x[k] = strtod(px, &end);
      px = end;
    }
    const double r = hypot(x[0], x[1]);
    cr_assert(r >= 1 - 1e-12 && r <= 2 + 1e-12, "point %lld at r = %g", i, r);
    cr_assert(fabs(u - (x[0] + 2 * x[1])) <= 1e-12, "point %lld: u = %.17g, x + 2y = %.17g", i, u,
              x[0] + 2 * x[1]);
  }
  unlink(path);
  EXPECT_FAIL(fea_space_write_vtu(s, c, 1, path), FEA_ERR_INVALID_ARG, ctx,
              "samples = 1 is outside 2..16");
  c[4] = NAN;
  EXPECT_FAIL(fea_space_write_vtu(s, c, 3, path), FEA_ERR_INVALID_ARG, ctx,
              "the function is nan at sample");
  free(c);
  OK(fea_space_destroy(&s));
  OK(fea_context_destroy(&ctx));
}
