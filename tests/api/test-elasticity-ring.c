/* Lame's thick-walled cylinder in 3D: the thick quarter ring (the exact NURBS
 * quarter annulus 1 <= r <= 2 extruded to 0 <= z <= 1/2) under an inner
 * pressure, with rollers on the cut planes (u_y = 0 on y = 0, u_x = 0 on
 * x = 0) and on the bottom and top (u_z = 0), so that the plane-strain
 * solution u_r = A r + B / r, u_z = 0 is exact in 3D. The displacement
 * converges at L2 order p + 1 and H1 order p (within 0.1) for p = 2, 3 with
 * the multifrontal solver and with CG on the CSR operator; the stresses at
 * points follow Lame's. */
#include <math.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include <feaccel.h>
#include <feaccel/solver.h>

#include "api-common.h"
#include "ring-common.h"

typedef struct lame {
  double E, nu, P, A, B;
} lame;

/* Inner radius 1, outer 2, pressure P inside, plane strain. */
static lame lame_make(double E, double nu, double P) {
  const double k = P / (E * 3.0);
  lame l = {E, nu, P, (1 + nu) * (1 - 2 * nu) * k, (1 + nu) * 4.0 * k};
  return l;
}

static void lame_u(const double *x, double *u, void *user) {
  const lame *l = user;
  const double s = l->A + l->B / (x[0] * x[0] + x[1] * x[1]);
  u[0] = s * x[0], u[1] = s * x[1], u[2] = 0.0;
}

static void lame_grad(const double *x, double *g, void *user) {
  const lame *l = user;
  const double r2 = x[0] * x[0] + x[1] * x[1], s = l->A + l->B / r2;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      g[i * 3 + j] = i < 2 && j < 2 ? (i == j ? s : 0.0) - 2 * l->B * x[i] * x[j] / (r2 * r2) : 0.0;
}

/* The free solution by Jacobi-preconditioned CG on the CSR operator, expanded. */
static double *solve_cg(fea_context *ctx, fea_space *s, fea_problem *pb) {
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_CSR;
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, pb, &od, &op));
  fea_vector *b = NULL, *x = NULL;
  OK(fea_vector_create(ctx, nf, FEA_F64, &b));
  OK(fea_vector_create(ctx, nf, FEA_F64, &x));
  OK(fea_operator_get_rhs(op, b));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-13;
  cd.max_iterations = 50000;
  cd.jacobi = 1;
  fea_cg_stats st = FEA_CG_STATS_INIT;
  OK(fea_cg_solve(op, b, x, &cd, &st));
  cr_assert(st.converged, "CG did not converge: %lld iterations", (long long)st.iterations);
  double *uf = malloc((size_t)nf * sizeof *uf), *u = malloc((size_t)info.num_dofs * sizeof *u);
  cr_assert(uf && u);
  OK(fea_vector_read(x, nf, FEA_F64, uf));
  OK(fea_problem_expand_solution(pb, uf, u));
  free(uf);
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  return u;
}

/* Degree p, n x n x nz elements: the L2 and H1 errors (together); with
 * check_stress, Lame's stress at a few points too. */
static void ring_errors(fea_context *ctx, int p, fea_index n, fea_index nz, int cg, double *l2,
                        double *h1, int check_stress) {
  ring q;
  ring_init(&q, 3, 0.5);
  const lame l = lame_make(1000.0, 0.3, 10.0);
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 3;
  bd.degree[0] = bd.degree[1] = bd.degree[2] = p;
  bd.n[0] = bd.n[1] = n, bd.n[2] = nz;
  bd.geometry = &q.g;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, 3));
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = l.E, d.nu = l.nu;
  d.sides[FEA_SIDE_WEST].type = FEA_ELASTIC_PRESSURE; /* r = 1 */
  d.sides[FEA_SIDE_WEST].pressure = l.P;
  d.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_TRACTION;   /* r = 2, free */
  d.sides[FEA_SIDE_SOUTH].components = FEA_COMPONENT_Y; /* y = 0 */
  d.sides[FEA_SIDE_NORTH].components = FEA_COMPONENT_X; /* x = 0 */
  d.sides[FEA_SIDE_FRONT].components = FEA_COMPONENT_Z; /* z = 0 */
  d.sides[FEA_SIDE_BACK].components = FEA_COMPONENT_Z;  /* z = 1/2 */
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  double *u = cg ? solve_cg(ctx, s, pb) : solve_direct(ctx, s, pb);
  double e0[4], e1[4];
  OK(fea_problem_error_norms_vector(pb, u, lame_u, lame_grad, (void *)&l, e0, e1));
  *l2 = e0[3], *h1 = e1[3];
  /* u_z is zero: the rollers and the solution agree. */
  cr_expect(e0[2] <= 1e-10 * e0[3] + 1e-15, "u_z error %.3e of %.3e", e0[2], e0[3]);
  if (check_stress) {
    /* sigma_rr = C1 - C2 / r^2, sigma_tt = C1 + C2 / r^2, sigma_zz = nu (rr + tt). */
    const double t[9] = {0.0, 0.5, 0.25, 0.5, 0.25, 0.5, 1.0, 1.0, 0.0};
    double x[9], sig[18];
    OK(fea_problem_evaluate_stress(pb, u, 3, t, x, NULL, sig, NULL));
    for (int i = 0; i < 3; i++) {
      const double r = hypot(x[3 * i], x[3 * i + 1]), c = x[3 * i] / r, sn = x[3 * i + 1] / r;
      const double srr = l.P / 3 - 4 * l.P / (3 * r * r), stt = l.P / 3 + 4 * l.P / (3 * r * r);
      const double want[6] = {
          srr * c * c + stt * sn * sn, srr * sn * sn + stt * c * c, l.nu * (srr + stt), 0, 0,
          (srr - stt) * c * sn};
      for (int k = 0; k < 6; k++)
        cr_expect(fabs(sig[6 * i + k] - want[k]) <= 1e-2 * l.P,
                  "point %d (r = %g): stress[%d] = %.6g, Lame %.6g", i, r, k, sig[6 * i + k],
                  want[k]);
    }
  }
  free(u);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

/* The solution is constant in z (and in the space): one element across suffices at every n. */
static void ring_orders(int p, int cg) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  const fea_index n0 = p == 2 ? 8 : 16;
  double l2a, h1a, l2b, h1b;
  ring_errors(ctx, p, n0, 1, cg, &l2a, &h1a, 0);
  ring_errors(ctx, p, 2 * n0, 1, cg, &l2b, &h1b, !cg);
  const double ol2 = log2(l2a / l2b), oh1 = log2(h1a / h1b);
  cr_log_info("3D %s p = %d: L2 %.3e -> %.3e (order %.3f), H1 %.3e -> %.3e (order %.3f)",
              cg ? "cg" : "multifrontal", p, l2a, l2b, ol2, h1a, h1b, oh1);
  cr_expect(fabs(ol2 - (p + 1)) <= 0.1, "p = %d: L2 order %.3f, expected %d", p, ol2, p + 1);
  cr_expect(fabs(oh1 - p) <= 0.1, "p = %d: H1 order %.3f, expected %d", p, oh1, p);
  fea_context_destroy(&ctx);
}

Test(elasticity_ring, lame_3d_p2_multifrontal, .timeout = 120) { ring_orders(2, 0); }
Test(elasticity_ring, lame_3d_p3_multifrontal, .timeout = 180) { ring_orders(3, 0); }
Test(elasticity_ring, lame_3d_p2_cg, .timeout = 120) { ring_orders(2, 1); }
Test(elasticity_ring, lame_3d_p3_cg, .timeout = 180) { ring_orders(3, 1); }
