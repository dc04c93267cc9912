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
#include "elasticity-common.h"
#include "ring-common.h"

/* Degree p, n x n x nz elements: the L2 and H1 errors (together); with
 * check_stress, Lame's stress at a few points too. */
static void ring_errors(fea_context *ctx, int p, fea_index n, fea_index nz, int cg, double *l2,
                        double *h1, int check_stress) {
  ring q;
  ring_init(&q, 3, 0.5);
  const lame l = lame_make(3, 1000.0, 0.3, 10.0);
  fea_space *s = annulus_space(ctx, &q, 3, p, n, nz);
  /* Pressure on r = 1, r = 2 free, rollers on y = 0, x = 0, z = 0 and z = 1/2. */
  fea_elasticity_desc d = lame_desc(&l);
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  double *u = cg ? solve_cg_full(ctx, s, pb, 50000) : solve_direct(ctx, s, pb);
  double e0[4], e1[4];
  OK(fea_problem_error_norms_vector(pb, u, lame_u, lame_grad, (void *)&l, e0, e1));
  *l2 = e0[3], *h1 = e1[3];
  /* u_z is zero: the rollers and the solution agree. */
  cr_expect(e0[2] <= 1e-10 * e0[3] + 1e-15, "u_z error %.3e of %.3e", e0[2], e0[3]);
  if (check_stress) {
    /* Lame's stress (lame_stress), sigma_zz = nu (rr + tt) included. */
    const double t[9] = {0.0, 0.5, 0.25, 0.5, 0.25, 0.5, 1.0, 1.0, 0.0};
    double x[9], sig[18];
    OK(fea_problem_evaluate_stress(pb, u, 3, t, x, NULL, sig, NULL));
    for (int i = 0; i < 3; i++) {
      const double r = hypot(x[3 * i], x[3 * i + 1]);
      double want[6];
      lame_stress(&l, x + 3 * i, want);
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
  expect_orders(p, ol2, oh1);
  fea_context_destroy(&ctx);
}

Test(elasticity_ring, lame_3d_p2_multifrontal, .timeout = 120) { ring_orders(2, 0); }
Test(elasticity_ring, lame_3d_p3_multifrontal, .timeout = 180) { ring_orders(3, 0); }
Test(elasticity_ring, lame_3d_p2_cg, .timeout = 120) { ring_orders(2, 1); }
Test(elasticity_ring, lame_3d_p3_cg, .timeout = 180) { ring_orders(3, 1); }
