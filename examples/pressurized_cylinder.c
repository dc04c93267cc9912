/* pressurized_cylinder: the first problem of every structural IGA course. A
 * long thick-walled cylinder (radii 1 and 2) under an inner pressure P, in
 * plane strain; by symmetry a quarter of its cross-section, the quarter
 * annulus as an exact NURBS patch, with symmetry rollers on the straight
 * sides (u_y = 0 on y = 0, u_x = 0 on x = 0), the pressure on the inner arc
 * and the outer arc free. Lame's solution is radial, u_r = a r + b / r with
 *   a = (1 + nu) (1 - 2 nu) P r_i^2 / (E (r_o^2 - r_i^2)),
 *   b = (1 + nu) P r_i^2 r_o^2 / (E (r_o^2 - r_i^2)).
 * The displacement is a vector space of B-splines of degree p (two
 * components per function, interleaved); each size is solved by the IGA
 * multifrontal solver and by CG on the CSR matrix, and the L2 and H1 errors
 * (per component and together) and their orders (p + 1, p) are printed.
 *
 *   ./pressurized_cylinder [p]
 *
 * p is the degree (2..4, default 3): n = 8, 16 for p = 2, 16, 32 for p = 3,
 * 32, 64 for p = 4 (the coarsest pair whose orders are within 0.1).
 *
 *   cc pressurized_cylinder.c $(pkg-config --cflags --libs feaccel) -lm -o pressurized_cylinder */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <feaccel.h>
#include <feaccel/solver.h>

typedef struct lame {
  double E, nu, P, a, b;
} lame;

/* u_i = (a + b / r^2) x_i. */
static void exact(const double *x, double *u, void *user) {
  const lame *l = user;
  const double s = l->a + l->b / (x[0] * x[0] + x[1] * x[1]);
  u[0] = s * x[0];
  u[1] = s * x[1];
}

/* d u_i / d x_j = (a + b / r^2) delta_ij - 2 b x_i x_j / r^4, row-major by component. */
static void exact_grad(const double *x, double *g, void *user) {
  const lame *l = user;
  const double r2 = x[0] * x[0] + x[1] * x[1], s = l->a + l->b / r2;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      g[i * 2 + j] = (i == j ? s : 0.0) - 2 * l->b * x[i] * x[j] / (r2 * r2);
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

/* The free solution by Jacobi-preconditioned CG on the CSR matrix; its iterations. */
static int solve_cg(fea_context *ctx, fea_problem *problem, fea_index nfree, double *u_free,
                    long long *iterations) {
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_CSR;
  fea_operator *op = NULL;
  TRY(fea_operator_create(ctx, problem, &od, &op));
  fea_vector *b = NULL, *x = NULL;
  TRY(fea_vector_create(ctx, nfree, FEA_F64, &b));
  TRY(fea_vector_create(ctx, nfree, FEA_F64, &x));
  TRY(fea_operator_get_rhs(op, b));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-13;
  cd.max_iterations = 100000;
  cd.jacobi = 1;
  fea_cg_stats st = FEA_CG_STATS_INIT;
  TRY(fea_cg_solve(op, b, x, &cd, &st));
  TRY(fea_vector_read(x, nfree, FEA_F64, u_free));
  *iterations = (long long)st.iterations;
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  return 0;
}

/* One size: both solvers; errors[solver][0..2] L2 (u_x, u_y, together), [3..5] H1. */
static int solve(fea_context *ctx, const fea_geometry_desc *geometry, const lame *l, int p,
                 fea_index n, double errors[2][6]) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 2;
  bd.degree[0] = bd.degree[1] = p;
  bd.n[0] = bd.n[1] = n;
  bd.geometry = geometry;
  fea_space *space = NULL;
  TRY(fea_space_create_bspline(ctx, &bd, &space));
  TRY(fea_space_set_num_components(space, 2)); /* the displacement (u_x, u_y) */

  /* Direction 0 is radial (west: the inner arc), direction 1 the arc (south: y = 0). */
  fea_elasticity_desc ed = FEA_ELASTICITY_DESC_INIT;
  ed.E = l->E;
  ed.nu = l->nu;
  ed.model = FEA_ELASTICITY_PLANE_STRAIN;
  ed.sides[FEA_SIDE_WEST].type = FEA_ELASTIC_PRESSURE;
  ed.sides[FEA_SIDE_WEST].pressure = l->P;
  ed.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_TRACTION;   /* no traction: free */
  ed.sides[FEA_SIDE_SOUTH].components = FEA_COMPONENT_Y; /* roller: u_y = 0 */
  ed.sides[FEA_SIDE_NORTH].components = FEA_COMPONENT_X; /* roller: u_x = 0 */
  fea_problem *problem = NULL;
  TRY(fea_problem_create_elasticity(space, &ed, &problem));

  fea_index nfree = 0;
  TRY(fea_problem_get_num_free_dofs(problem, &nfree));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  TRY(fea_space_get_info(space, &info));
  double *u_mf = malloc((size_t)nfree * sizeof *u_mf), *u_cg = malloc((size_t)nfree * sizeof *u_cg);
  double *u = malloc((size_t)info.num_dofs * sizeof *u);
  if (!u_mf || !u_cg || !u) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  fea_solver *solver = NULL;
  TRY(fea_solver_create_multifrontal(ctx, space, problem, NULL, &solver));
  TRY(fea_solver_setup(solver));
  TRY(fea_solver_solve(solver, 1, NULL, 0, u_mf, nfree));
  fea_solver_destroy(&solver);
  long long iterations = 0;
  if (solve_cg(ctx, problem, nfree, u_cg, &iterations)) return 1;
  double diff = 0, norm = 0;
  for (fea_index i = 0; i < nfree; i++) {
    diff += (u_cg[i] - u_mf[i]) * (u_cg[i] - u_mf[i]);
    norm += u_mf[i] * u_mf[i];
  }
  const char *names[2] = {"multifrontal", "cg"};
  for (int k = 0; k < 2; k++) {
    TRY(fea_problem_expand_solution(problem, k ? u_cg : u_mf, u));
    TRY(fea_problem_error_norms_vector(problem, u, exact, exact_grad, (void *)l, errors[k],
                                       errors[k] + 3));
    printf(
        "  %-12s n = %2lld: %6lld unknowns, L2 error %.3e (u_x %.3e, u_y %.3e), H1 error "
        "%.3e",
        names[k], (long long)n, (long long)nfree, errors[k][2], errors[k][0], errors[k][1],
        errors[k][5]);
    if (k)
      printf(", %lld iterations\n", iterations);
    else
      printf("\n");
  }
  printf("  n = %2lld: |u_cg - u_mf| / |u_mf| = %.1e\n", (long long)n, sqrt(diff / norm));
  free(u_mf);
  free(u_cg);
  free(u);
  TRY(fea_problem_destroy(&problem));
  TRY(fea_space_destroy(&space));
  return 0;
}

int main(int argc, char **argv) {
  const int p = argc > 1 ? atoi(argv[1]) : 3;
  if (p < 2 || p > 4) {
    fprintf(stderr, "p = %s: the degree must be 2..4 (the arc is quadratic)\n", argv[1]);
    return 2;
  }
  /* The quarter annulus, control points numbered radial direction first. */
  static const double radial[4] = {0, 0, 1, 1}, arc[6] = {0, 0, 0, 1, 1, 1};
  const double s = sqrt(0.5);
  const double points[6 * 2] = {1, 0, 2, 0, 1, 1, 2, 2, 0, 1, 0, 2};
  const double weights[6] = {1, 1, s, s, 1, 1};
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  g.degree[0] = 1;
  g.degree[1] = 2;
  g.knots[0] = radial, g.num_knots[0] = 4;
  g.knots[1] = arc, g.num_knots[1] = 6;
  g.control_points = points;
  g.num_control_points = 6;
  g.weights = weights;

  /* Steel-like in units of GPa and mm, 100 MPa inside. */
  lame l = {.E = 200.0, .nu = 0.3, .P = 0.1};
  const double ri = 1.0, ro = 2.0, k = l.P * ri * ri / (l.E * (ro * ro - ri * ri));
  l.a = (1 + l.nu) * (1 - 2 * l.nu) * k;
  l.b = (1 + l.nu) * ro * ro * k;

  fea_context *ctx = NULL;
  TRY(fea_context_create(NULL, &ctx));
  printf(
      "pressurized cylinder (Lame), plane strain, E = %g, nu = %g, P = %g, NURBS quarter "
      "annulus, B-splines of degree %d\n",
      l.E, l.nu, l.P, p);
  const fea_index n0 = p == 2 ? 8 : p == 3 ? 16 : 32;
  double e0[2][6], e1[2][6];
  if (solve(ctx, &g, &l, p, n0, e0) || solve(ctx, &g, &l, p, 2 * n0, e1)) return 1;
  const char *names[2] = {"multifrontal", "cg"};
  for (int k2 = 0; k2 < 2; k2++)
    printf("  orders %-12s: L2 %.2f (expected %d), H1 %.2f (expected %d)\n", names[k2],
           log2(e0[k2][2] / e1[k2][2]), p + 1, log2(e0[k2][5] / e1[k2][5]), p);
  TRY(fea_context_destroy(&ctx));
  return 0;
}
