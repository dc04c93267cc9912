/* pressurized_ring: Lame's thick-walled cylinder in 3D. A slice 0 <= z <= 1/2
 * of a long cylinder (radii 1 and 2) under an inner pressure P; by symmetry a
 * quarter of it, the thick quarter ring as an exact NURBS patch (the quarter
 * annulus extruded), with symmetry rollers on the cut planes (u_y = 0 on
 * y = 0, u_x = 0 on x = 0) and on the bottom and top (u_z = 0: the slice of a
 * long cylinder, so that Lame's plane-strain solution is exact in 3D), the
 * pressure on the inner face and the outer face free. Lame's solution:
 *   u_r = a r + b / r, u_z = 0,
 *   a = (1 + nu) (1 - 2 nu) P r_i^2 / (E (r_o^2 - r_i^2)),
 *   b = (1 + nu) P r_i^2 r_o^2 / (E (r_o^2 - r_i^2)),
 *   sigma_rr = C - D / r^2, sigma_tt = C + D / r^2, sigma_zz = nu (sigma_rr + sigma_tt),
 *   C = P r_i^2 / (r_o^2 - r_i^2), D = P r_i^2 r_o^2 / (r_o^2 - r_i^2).
 * The displacement is a vector space of B-splines of degree p (three
 * components per function, interleaved), solved by the IGA multifrontal
 * solver at two sizes; the L2 and H1 errors and their orders (p + 1, p), the
 * stresses on the inner face against Lame's and the von Mises stress there
 * are printed, and the coarser solution is written to
 * pressurized_ring.vtu (displacement, stress, von Mises: in ParaView, "Warp
 * By Vector" on the displacement shows the deformed ring).
 *
 *   ./pressurized_ring [p]
 *
 * p is the degree (2 or 3, default 2): n x n x 2 elements with n = 8, 16 for
 * p = 2 and 16, 32 for p = 3 (the coarsest pairs whose orders are within 0.1).
 *
 *   cc pressurized_ring.c $(pkg-config --cflags --libs feaccel) -lm -o pressurized_ring */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <feaccel.h>
#include <feaccel/solver.h>

typedef struct lame {
  double E, nu, P, a, b, C, D;
} lame;

/* u_i = (a + b / r^2) x_i for i = x, y; u_z = 0. */
static void exact(const double *x, double *u, void *user) {
  const lame *l = user;
  const double s = l->a + l->b / (x[0] * x[0] + x[1] * x[1]);
  u[0] = s * x[0];
  u[1] = s * x[1];
  u[2] = 0.0;
}

/* d u_i / d x_j, row-major by component (3 x 3). */
static void exact_grad(const double *x, double *g, void *user) {
  const lame *l = user;
  const double r2 = x[0] * x[0] + x[1] * x[1], s = l->a + l->b / r2;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      g[i * 3 + j] = i < 2 && j < 2 ? (i == j ? s : 0.0) - 2 * l->b * x[i] * x[j] / (r2 * r2) : 0.0;
}

#define TRY(call)                                                          \
  do {                                                                     \
    fea_status s_ = (call);                                                \
    if (s_ != FEA_SUCCESS) {                                               \
      fprintf(stderr, "%s failed: %s: %s\n", #call, fea_status_string(s_), \
              fea_context_last_error(NULL));                               \
      return 1;                                                            \
    }                                                                      \
  } while (0)

/* One size: errors[0] L2, errors[1] H1 (together); with stresses, the
 * stresses on the inner face; with vtu, the file. */
static int solve(fea_context *ctx, const fea_geometry_desc *geometry, const lame *l, int p,
                 fea_index n, double errors[2], int stresses, const char *vtu) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 3;
  bd.degree[0] = bd.degree[1] = bd.degree[2] = p;
  bd.n[0] = bd.n[1] = n;
  bd.n[2] = 2;
  bd.geometry = geometry;
  fea_space *space = NULL;
  TRY(fea_space_create_bspline(ctx, &bd, &space));
  TRY(fea_space_set_num_components(space, 3)); /* the displacement (u_x, u_y, u_z) */

  /* Direction 0 is radial (west: the inner face), 1 the arc (south: y = 0), 2 is z. */
  fea_elasticity_desc ed = FEA_ELASTICITY_DESC_INIT;
  ed.E = l->E;
  ed.nu = l->nu;
  ed.sides[FEA_SIDE_WEST].type = FEA_ELASTIC_PRESSURE;
  ed.sides[FEA_SIDE_WEST].pressure = l->P;
  ed.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_TRACTION;   /* no traction: free */
  ed.sides[FEA_SIDE_SOUTH].components = FEA_COMPONENT_Y; /* roller: u_y = 0 */
  ed.sides[FEA_SIDE_NORTH].components = FEA_COMPONENT_X; /* roller: u_x = 0 */
  ed.sides[FEA_SIDE_FRONT].components = FEA_COMPONENT_Z; /* roller: u_z = 0 (bottom) */
  ed.sides[FEA_SIDE_BACK].components = FEA_COMPONENT_Z;  /* roller: u_z = 0 (top) */
  fea_problem *problem = NULL;
  TRY(fea_problem_create_elasticity(space, &ed, &problem));

  fea_index nfree = 0;
  TRY(fea_problem_get_num_free_dofs(problem, &nfree));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  TRY(fea_space_get_info(space, &info));
  double *u_free = malloc((size_t)nfree * sizeof *u_free);
  double *u = malloc((size_t)info.num_dofs * sizeof *u);
  if (!u_free || !u) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  fea_solver *solver = NULL;
  TRY(fea_solver_create_multifrontal(ctx, space, problem, NULL, &solver));
  TRY(fea_solver_setup(solver));
  TRY(fea_solver_solve(solver, 1, NULL, 0, u_free, nfree));
  fea_solver_destroy(&solver);
  TRY(fea_problem_expand_solution(problem, u_free, u));
  double l2[4], h1[4];
  TRY(fea_problem_error_norms_vector(problem, u, exact, exact_grad, (void *)l, l2, h1));
  errors[0] = l2[3];
  errors[1] = h1[3];
  printf("  n = %2lld: %6lld unknowns, L2 error %.3e (u_z %.1e), H1 error %.3e\n", (long long)n,
         (long long)nfree, l2[3], l2[2], h1[3]);
  if (stresses) {
    /* Stresses at parameters: the inner face (t0 = 0) halfway up, at 0, 45
     * and 90 degrees along the arc (the arc's parameter is not the angle;
     * the points come back with their coordinates). */
    const double t[9] = {0, 0, 0.5, 0, 0.5, 0.5, 0, 1, 0.5};
    double x[9], sig[18], vm[3];
    TRY(fea_problem_evaluate_stress(problem, u, 3, t, x, NULL, sig, vm));
    for (int i = 0; i < 3; i++) {
      const double r = hypot(x[3 * i], x[3 * i + 1]), c = x[3 * i] / r, s = x[3 * i + 1] / r;
      /* sigma_tt = n_t . sigma n_t with n_t = (-s, c). */
      const double stt = s * s * sig[6 * i] + c * c * sig[6 * i + 1] - 2 * s * c * sig[6 * i + 5];
      const double srr = c * c * sig[6 * i] + s * s * sig[6 * i + 1] + 2 * s * c * sig[6 * i + 5];
      printf(
          "  inner face at (%.3f, %.3f, %.2f): sigma_rr %.6f (Lame %.6f), sigma_tt %.6f (Lame "
          "%.6f), sigma_zz %.6f (Lame %.6f), von Mises %.6f\n",
          x[3 * i], x[3 * i + 1], x[3 * i + 2], srr, l->C - l->D, stt, l->C + l->D, sig[6 * i + 2],
          l->nu * 2 * l->C, vm[i]);
    }
  }
  if (vtu) {
    /* 3 samples per element and direction: the coarse solution's file is a
     * few MB of ASCII (the finer one's would be eight times that). */
    TRY(fea_problem_write_vtu(problem, u, 3, vtu));
    printf("  n = %2lld: wrote %s (displacement, stress, von_mises)\n", (long long)n, vtu);
  }
  free(u_free);
  free(u);
  TRY(fea_problem_destroy(&problem));
  TRY(fea_space_destroy(&space));
  return 0;
}

int main(int argc, char **argv) {
  const int p = argc > 1 ? atoi(argv[1]) : 2;
  if (p < 2 || p > 3) {
    fprintf(stderr, "p = %s: the degree must be 2 or 3\n", argv[1]);
    return 2;
  }
  /* The thick quarter ring: radial (degree 1), arc (degree 2), z (degree 1),
   * control points numbered radial direction first, then the arc, then z. */
  static const double linear[4] = {0, 0, 1, 1}, arc[6] = {0, 0, 0, 1, 1, 1};
  const double h = sqrt(0.5), depth = 0.5;
  double points[12 * 3], weights[12];
  const double ax[3][2] = {{1, 0}, {1, 1}, {0, 1}}, aw[3] = {1, h, 1};
  int i = 0;
  for (int c = 0; c < 2; c++)
    for (int b = 0; b < 3; b++)
      for (int a = 0; a < 2; a++, i++) {
        points[3 * i] = (1.0 + a) * ax[b][0];
        points[3 * i + 1] = (1.0 + a) * ax[b][1];
        points[3 * i + 2] = c * depth;
        weights[i] = aw[b];
      }
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  g.degree[0] = 1, g.degree[1] = 2, g.degree[2] = 1;
  g.knots[0] = linear, g.num_knots[0] = 4;
  g.knots[1] = arc, g.num_knots[1] = 6;
  g.knots[2] = linear, g.num_knots[2] = 4;
  g.control_points = points;
  g.num_control_points = 12;
  g.weights = weights;

  /* Steel-like in units of GPa and mm, 100 MPa inside. */
  lame l = {.E = 200.0, .nu = 0.3, .P = 0.1};
  const double ri = 1.0, ro = 2.0, k = l.P * ri * ri / (l.E * (ro * ro - ri * ri));
  l.a = (1 + l.nu) * (1 - 2 * l.nu) * k;
  l.b = (1 + l.nu) * ro * ro * k;
  l.C = l.P * ri * ri / (ro * ro - ri * ri);
  l.D = l.C * ro * ro;

  fea_context *ctx = NULL;
  TRY(fea_context_create(NULL, &ctx));
  printf(
      "pressurized ring (Lame) in 3D, E = %g, nu = %g, P = %g, NURBS thick quarter ring, "
      "B-splines of degree %d, multifrontal\n",
      l.E, l.nu, l.P, p);
  const fea_index n0 = p == 2 ? 8 : 16;
  double e0[2], e1[2];
  if (solve(ctx, &g, &l, p, n0, e0, 0, "pressurized_ring.vtu") ||
      solve(ctx, &g, &l, p, 2 * n0, e1, 1, NULL))
    return 1;
  printf("  orders: L2 %.2f (expected %d), H1 %.2f (expected %d)\n", log2(e0[0] / e1[0]), p + 1,
         log2(e0[1] / e1[1]), p);
  TRY(fea_context_destroy(&ctx));
  return 0;
}
