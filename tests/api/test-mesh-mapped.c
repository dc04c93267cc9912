/* Mapped structured meshes (fea_mesh_desc.map): the quarter annulus and the
 * thick quarter ring as Q1 meshes whose nodes lie on the curved domain,
 * solved by geometric multigrid on coarse levels made with the same map.
 * Judged by the convergence orders of the L2 and H1 errors, by agreement
 * with CG on the assembled operator, by iteration counts that stay bounded
 * as n doubles, by the identity map reproducing the box mesh (the assembled
 * level operators against the box stencil), and by the refusals of maps that
 * give NaN or invert cells, on the caller's mesh or on a coarse level. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mesh-common.h"
#include "ring-common.h"

#include <feaccel/operator.h>
#include <feaccel/solver.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- the domains: polar coordinates of [1, 2] x [0, pi/2] (x [0, 1]) ------------------------- */

static void annulus_map(const double *xi, double *x, void *user) {
  (void)user;
  x[0] = xi[0] * cos(xi[1]);
  x[1] = xi[0] * sin(xi[1]);
}

static void ring_map(const double *xi, double *x, void *user) {
  annulus_map(xi, x, user);
  x[2] = xi[2];
}

/* ---- the manufactured solution of the mapped tests (ring-common.h) -------------------------- */

typedef ring_exact exact;

/* The Robin data on the outer arc r = 2 (the box's east side): alpha u +
 * grad u . x / r, alpha = 1. */
static double robin_outer(const double *x, void *user) {
  double g[3];
  ring_grad(x, g, user);
  const double r = hypot(x[0], x[1]);
  return ring_u(x, user) + (g[0] * x[0] + g[1] * x[1]) / r;
}

/* ---- one discretization ---------------------------------------------------------------------- */

typedef struct ring_fe {
  exact e;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nf, ndofs;
} ring_fe;

/* Q1 on the quarter annulus (2D) or thick quarter ring (3D) with n cells per
 * direction; map NULL: the box itself; theta_max the angle the box spans;
 * c the reaction, robin: a Robin condition on the outer arc (east). */
static void ring_create_with(ring_fe *r, fea_context *ctx, int dim, fea_index n,
                             fea_point_map_fn map, double theta_max, double c, int robin) {
  r->e.dim = dim;
  r->e.c = c;
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  const double lower[3] = {1, 0, 0}, upper[3] = {2, theta_max, 1};
  for (int k = 0; k < 3; k++) md.n[k] = n, md.lower[k] = lower[k], md.upper[k] = upper[k];
  md.map = map;
  r->mesh = NULL;
  OK(fea_mesh_create_structured(ctx, &md, &r->mesh));
  OK(fea_space_create_lagrange(r->mesh, 1, FEA_NODES_EQUISPACED, &r->space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = ring_f;
  pd.source_user = &r->e;
  pd.dirichlet = ring_u;
  pd.dirichlet_user = &r->e;
  pd.reaction = c;
  if (robin) {
    pd.sides[FEA_SIDE_EAST].type = FEA_BC_ROBIN;
    pd.sides[FEA_SIDE_EAST].alpha = 1.0;
    pd.sides[FEA_SIDE_EAST].flux = robin_outer;
    pd.sides[FEA_SIDE_EAST].flux_user = &r->e;
  }
  OK(fea_problem_create_poisson(r->space, &pd, &r->pb));
  OK(fea_problem_get_num_free_dofs(r->pb, &r->nf));
  fea_space_info si = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(r->space, &si));
  r->ndofs = si.num_dofs;
}

static void ring_create(ring_fe *r, fea_context *ctx, int dim, fea_index n, fea_point_map_fn map,
                        double theta_max) {
  ring_create_with(r, ctx, dim, n, map, theta_max, 0.0, 0);
}

static void ring_destroy(ring_fe *r) {
  OK(fea_problem_destroy(&r->pb));
  OK(fea_space_destroy(&r->space));
  OK(fea_mesh_destroy(&r->mesh));
}

/* Multigrid with the Chebyshev(3) smoother, as CG's preconditioner (krylov
 * 1) or plain V-cycles (0), to a relative residual of 1e-12; x gets the
 * free values, the return value the iterations. */
static fea_index mg_solve(fea_context *ctx, const ring_fe *r, int krylov, fea_operator_kind kind,
                          double *x) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  d.krylov = krylov;
  d.operator_kind = kind;
  d.rtol = 1e-12;
  fea_solver *sv = NULL;
  OK(fea_solver_create_multigrid(ctx, r->pb, &d, &sv));
  OK(fea_solver_setup(sv));
  OK(fea_solver_solve(sv, 1, NULL, 0, x, r->nf));
  fea_multigrid_stats st = FEA_MULTIGRID_STATS_INIT;
  OK(fea_solver_get_multigrid_stats(sv, &st));
  cr_assert(st.converged && st.fine_dofs == r->nf && st.num_levels >= 3, "%d levels, %s",
            st.num_levels, st.converged ? "converged" : "not converged");
  cr_log_info("%dD, %lld free DoFs, %s: %d levels, %lld iterations, factor %.3g", r->e.dim,
              (long long)r->nf, krylov ? "Chebyshev-PCG" : "V-cycles", st.num_levels,
              (long long)st.iterations, st.convergence_factor);
  OK(fea_solver_destroy(&sv));
  return st.iterations;
}

/* Jacobi-CG on the assembled (CSR) operator to a relative residual of 1e-12. */
static void cg_solve(fea_context *ctx, const ring_fe *r, double *x) {
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_CSR;
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, r->pb, &od, &op));
  fea_vector *b = NULL, *v = NULL;
  OK(fea_vector_create(ctx, r->nf, FEA_F64, &b));
  OK(fea_vector_create(ctx, r->nf, FEA_F64, &v));
  OK(fea_operator_get_rhs(op, b));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-12;
  OK(fea_cg_solve(op, b, v, &cd, NULL));
  OK(fea_vector_read(v, r->nf, FEA_F64, x));
  OK(fea_vector_destroy(&b));
  OK(fea_vector_destroy(&v));
  OK(fea_operator_destroy(&op));
}

static double rel_diff(fea_index n, const double *x, const double *y) {
  double num = 0, den = 0;
  for (fea_index i = 0; i < n; i++) num += (x[i] - y[i]) * (x[i] - y[i]), den += y[i] * y[i];
  return sqrt(num / den);
}

/* At n, 2n, 4n: both multigrid configurations converge with iteration counts
 * that grow by at most 2, agree with CG to the solvers' tolerance, and the
 * errors fall with order 2 (L2) and 1 (H1) within 0.1 at each doubling. */
static void check_ring(int dim, fea_index n0, double c, int robin) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  fea_index its[2][3];
  double l2[3], h1[3];
  for (int t = 0; t < 3; t++) {
    const fea_index n = n0 << t;
    ring_fe r;
    ring_create_with(&r, ctx, dim, n, dim == 2 ? annulus_map : ring_map, 0.5 * M_PI, c, robin);
    double *x = malloc((size_t)r.nf * sizeof *x), *xc = malloc((size_t)r.nf * sizeof *xc);
    double *u = malloc((size_t)r.ndofs * sizeof *u);
    cr_assert(x && xc && u);
    cg_solve(ctx, &r, xc);
    for (int krylov = 0; krylov <= 1; krylov++) {
      its[krylov][t] = mg_solve(ctx, &r, krylov, FEA_OPERATOR_CSR, x);
      const double dx = rel_diff(r.nf, x, xc);
      cr_assert(dx < 1e-8, "%dD n = %lld, krylov = %d: multigrid differs from CG by %.3g", dim,
                (long long)n, krylov, dx);
    }
    OK(fea_problem_expand_solution(r.pb, x, u));
    OK(fea_problem_error_norms(r.pb, u, ring_u, ring_grad, &r.e, &l2[t], &h1[t]));
    cr_log_info("%dD n = %lld: %lld free DoFs, V-cycles %lld, PCG %lld, L2 %.4g, H1 %.4g", dim,
                (long long)n, (long long)r.nf, (long long)its[0][t], (long long)its[1][t], l2[t],
                h1[t]);
    free(x), free(xc), free(u);
    ring_destroy(&r);
  }
  for (int t = 0; t < 2; t++) {
    const double r2 = log2(l2[t] / l2[t + 1]), r1 = log2(h1[t] / h1[t + 1]);
    cr_log_info("%dD n = %lld -> %lld: L2 order %.3f, H1 order %.3f", dim, (long long)(n0 << t),
                (long long)(n0 << (t + 1)), r2, r1);
    cr_assert(fabs(r2 - 2) <= 0.1, "%dD: L2 errors %.4g, %.4g give order %.3f", dim, l2[t],
              l2[t + 1], r2);
    cr_assert(fabs(r1 - 1) <= 0.1, "%dD: H1 errors %.4g, %.4g give order %.3f", dim, h1[t],
              h1[t + 1], r1);
  }
  for (int krylov = 0; krylov <= 1; krylov++)
    cr_assert(its[krylov][2] - its[krylov][0] <= 2,
              "%dD %s: iterations grow with the levels: %lld, %lld, %lld", dim,
              krylov ? "Chebyshev-PCG" : "V-cycles", (long long)its[krylov][0],
              (long long)its[krylov][1], (long long)its[krylov][2]);
  OK(fea_context_destroy(&ctx));
}

Test(mesh_mapped, annulus_q1_multigrid_orders_and_counts, .timeout = 60) {
  check_ring(2, 16, 0.0, 0);
}

/* -Laplace u + u = f with a Robin outer arc: the coarse levels keep c and the side. */
Test(mesh_mapped, annulus_q1_multigrid_reaction_and_robin, .timeout = 60) {
  check_ring(2, 16, 1.0, 1);
}

Test(mesh_mapped, ring_3d_q1_multigrid_orders_and_counts, .timeout = 60) {
  check_ring(3, 4, 0.0, 0);
}

/* The nodes are the map's images of the box nodes, the mesh covers the
 * annulus's area to O(h^2), and uniform refinement keeps the cells' own
 * geometry (its area is the coarse mesh's, not the annulus's). */
Test(mesh_mapped, nodes_area_and_refinement) {
  fea_context *ctx = open_ref();
  const double exact_area = 0.75 * M_PI;
  double err[2];
  for (int t = 0; t < 2; t++) {
    ring_fe r;
    ring_create(&r, ctx, 2, 8 << t, annulus_map, 0.5 * M_PI);
    struct arrays a = get_arrays(r.mesh);
    const fea_index n = 8 << t;
    for (fea_index v = 0; v < a.nn; v++) {
      const double rad = 1.0 + (double)(v % (n + 1)) / (double)n;
      const double th = 0.5 * M_PI * (double)(v / (n + 1)) / (double)n;
      cr_assert(fabs(a.x[2 * v] - rad * cos(th)) <= 4e-15 &&
                    fabs(a.x[2 * v + 1] - rad * sin(th)) <= 4e-15,
                "node %lld is at (%g, %g), not at polar (%g, %g)", (long long)v, a.x[2 * v],
                a.x[2 * v + 1], rad, th);
    }
    const double area = total_measure(&a);
    err[t] = exact_area - area;
    cr_assert(err[t] > 0, "the chords cut the outer arc: the area %.15g is below %.15g", area,
              exact_area);
    fea_mesh *fine = NULL;
    OK(fea_mesh_refine_uniform(r.mesh, &fine));
    struct arrays b = get_arrays(fine);
    cr_assert(fabs(total_measure(&b) - area) <= 1e-13, "refinement changed the area from %.15g",
              area);
    free_arrays(&b);
    OK(fea_mesh_destroy(&fine));
    free_arrays(&a);
    ring_destroy(&r);
  }
  const double order = log2(err[0] / err[1]);
  cr_assert(fabs(order - 2) <= 0.05, "area errors %.3g, %.3g give order %.3f", err[0], err[1],
            order);
  OK(fea_context_destroy(&ctx));
}

static void identity_map(const double *xi, double *x, void *user) {
  (void)user;
  x[0] = xi[0], x[1] = xi[1];
}

/* The identity map gives the box mesh's nodes; multigrid then assembles its
 * levels (the box stencil is not used on mapped meshes) and reaches the
 * box's solution in the same number of iterations. */
Test(mesh_mapped, identity_map_equals_the_box) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  ring_fe box, id;
  ring_create(&box, ctx, 2, 32, NULL, 0.5 * M_PI);
  ring_create(&id, ctx, 2, 32, identity_map, 0.5 * M_PI);
  struct arrays a = get_arrays(box.mesh), b = get_arrays(id.mesh);
  cr_assert_eq(a.nn, b.nn);
  cr_assert(memcmp(a.x, b.x, (size_t)(a.nn * 2) * sizeof *a.x) == 0, "coordinates differ");
  free_arrays(&a), free_arrays(&b);
  double *x = malloc((size_t)box.nf * sizeof *x), *y = malloc((size_t)box.nf * sizeof *y);
  for (int krylov = 0; krylov <= 1; krylov++) {
    const fea_index i0 = mg_solve(ctx, &box, krylov, FEA_OPERATOR_CSR, x);
    const fea_index i1 = mg_solve(ctx, &id, krylov, FEA_OPERATOR_CSR, y);
    cr_assert_eq(i0, i1, "krylov = %d: %lld iterations on the box, %lld mapped", krylov,
                 (long long)i0, (long long)i1);
    cr_assert(rel_diff(box.nf, y, x) < 1e-12, "krylov = %d: solutions differ by %.3g", krylov,
              rel_diff(box.nf, y, x));
  }
  free(x), free(y);
  ring_destroy(&box), ring_destroy(&id);
  OK(fea_context_destroy(&ctx));
}

/* Matrix-free level operators: element matrices serve mapped levels (the
 * same iterations as CSR); sum factorization, which needs one Jacobian for
 * all cells, falls back to them on the mapped mesh and says why. */
Test(mesh_mapped, matrix_free_levels) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  ring_fe r;
  ring_create(&r, ctx, 2, 32, annulus_map, 0.5 * M_PI);
  double *x = malloc((size_t)r.nf * sizeof *x), *y = malloc((size_t)r.nf * sizeof *y);
  const fea_index i0 = mg_solve(ctx, &r, 1, FEA_OPERATOR_CSR, x);
  const fea_index i1 = mg_solve(ctx, &r, 1, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, y);
  cr_assert_eq(i0, i1, "%lld iterations with CSR, %lld with element matrices", (long long)i0,
               (long long)i1);
  cr_assert(rel_diff(r.nf, y, x) < 1e-10, "solutions differ by %.3g", rel_diff(r.nf, y, x));
  /* Sum factorization at the quadrature points on every mapped level. */
  const fea_index i2 = mg_solve(ctx, &r, 1, FEA_OPERATOR_MATFREE_SUMFACT, y);
  cr_assert_eq(i0, i2, "%lld iterations with CSR, %lld with sum factorization", (long long)i0,
               (long long)i2);
  cr_assert(rel_diff(r.nf, y, x) < 1e-10, "solutions differ by %.3g", rel_diff(r.nf, y, x));
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_MATFREE_SUMFACT;
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, r.pb, &od, &op));
  fea_operator_info oi = FEA_OPERATOR_INFO_INIT;
  OK(fea_operator_get_info(op, &oi));
  cr_assert(oi.kind_run == FEA_OPERATOR_MATFREE_SUMFACT && strstr(oi.kernel, "at points"),
            "sum factorization on a mapped mesh runs %d: %s", (int)oi.kind_run, oi.kernel);
  cr_log_info("sum factorization asked for: %s", oi.kernel);
  OK(fea_operator_destroy(&op));
  free(x), free(y);
  ring_destroy(&r);
  OK(fea_context_destroy(&ctx));
}

/* A descriptor of the size before the map (a caller built against the older
 * header) is accepted, and the fields beyond its size are not read. */
Test(mesh_mapped, older_descriptor_size_has_no_map) {
  fea_context *ctx = open_ref();
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.size = offsetof(fea_mesh_desc, map);
  md.n[0] = md.n[1] = 2;
  md.map = (fea_point_map_fn)(uintptr_t)1; /* would crash if called */
  fea_mesh *m = NULL;
  OK(fea_mesh_create_structured(ctx, &md, &m));
  struct arrays a = get_arrays(m);
  cr_assert(a.x[2 * 8] == 1.0 && a.x[2 * 8 + 1] == 1.0, "the box's last node moved");
  free_arrays(&a);
  OK(fea_mesh_destroy(&m));
  OK(fea_context_destroy(&ctx));
}

/* ---- refusals -------------------------------------------------------------------------------- */

/* NaN at the box point (0.75, 0.5), node 3 + 5 * 2 = 13 of a 4 x 4 mesh. */
static void nan_map(const double *xi, double *x, void *user) {
  (void)user;
  x[0] = xi[0];
  x[1] = xi[0] == 0.75 && xi[1] == 0.5 ? NAN : xi[1];
}

/* Leaves x[1] unwritten. */
static void half_map(const double *xi, double *x, void *user) {
  (void)user;
  x[0] = xi[0];
}

/* x0 = xi0 + 0.3 sin(2 pi xi0) runs backwards for xi0 in about (0.3, 0.7):
 * on 4 x 4 cells the first folded cell is box cell (1, 0), x0 from 0.55
 * down to 0.5. */
static void fold_map(const double *xi, double *x, void *user) {
  (void)user;
  x[0] = xi[0] + 0.3 * sin(2 * M_PI * xi[0]);
  x[1] = xi[1];
}

Test(mesh_mapped, bad_maps_are_refused_naming_the_node_or_cell) {
  fea_context *ctx = open_ref();
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.n[0] = md.n[1] = 4;
  fea_mesh *m = (fea_mesh *)&m;
  md.map = nan_map;
  EXPECT_FAIL(fea_mesh_create_structured(ctx, &md, &m), FEA_ERR_INVALID_ARG, ctx,
              "the point map sends node 13 (box point (0.75, 0.5)) to (0.75, nan)");
  cr_assert_null(m);
  md.map = half_map;
  EXPECT_FAIL(fea_mesh_create_structured(ctx, &md, &m), FEA_ERR_INVALID_ARG, ctx,
              "node 0 (box point (0, 0)) to (0, nan): coordinate 1 is not finite");
  md.map = fold_map;
  EXPECT_FAIL(fea_mesh_create_structured(ctx, &md, &m), FEA_ERR_INVALID_ARG, ctx,
              "cell 1 (quad 1 2 7 6, box cell (1, 0)) is inverted: Jacobian determinant");
  cr_assert_null(m);
  /* Triangles: the affine cells are checked as well. */
  md.simplices = 1;
  EXPECT_FAIL(fea_mesh_create_structured(ctx, &md, &m), FEA_ERR_INVALID_ARG, ctx,
              "box cell (1, 0)) is inverted: signed area");
  cr_assert_null(m);
  OK(fea_context_destroy(&ctx));
}

/* An annulus of 1.9 pi: fine on 16 x 16 cells, but its one-cell level is
 * inverted (the chord from theta = 0 to 1.9 pi turns clockwise). Multigrid
 * refuses it naming the level and the way out; coarsest_cells = 2 solves. */
Test(mesh_mapped, inverted_coarse_level_is_refused) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  ring_fe r;
  ring_create(&r, ctx, 2, 16, annulus_map, 1.9 * M_PI);
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.krylov = 1;
  fea_solver *sv = (fea_solver *)&sv;
  EXPECT_FAIL(fea_solver_create_multigrid(ctx, r.pb, &d, &sv), FEA_ERR_INVALID_ARG, ctx,
              "multigrid level 4: cell 0 (quad 0 1 3 2, box cell (0, 0)) of the coarse mesh of "
              "1 x 1 cells is inverted");
  cr_assert_null(sv);
  cr_assert(strstr(fea_context_last_error(ctx), "a coarsest_cells above 1 (now 1)") != NULL, "%s",
            fea_context_last_error(ctx));
  d.coarsest_cells = 2;
  OK(fea_solver_create_multigrid(ctx, r.pb, &d, &sv));
  OK(fea_solver_setup(sv));
  double *x = malloc((size_t)r.nf * sizeof *x);
  OK(fea_solver_solve(sv, 1, NULL, 0, x, r.nf));
  free(x);
  OK(fea_solver_destroy(&sv));
  ring_destroy(&r);
  OK(fea_context_destroy(&ctx));
}
