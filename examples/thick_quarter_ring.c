/* thick_quarter_ring: the 3D companion of quarter_annulus. The thick quarter
 * ring 1 <= r <= 2, 0 <= theta <= pi/2, 0 <= z <= 1 is an exact NURBS patch
 * (radial degree 1, circular arcs of degree 2 with weights 1, 1/sqrt(2), 1,
 * z degree 1); solve -div(sigma grad u) + c u = f on it with B-splines of
 * degree p, Dirichlet on the inner face r = 1, the cut faces theta = 0 and
 * theta = pi/2 and the bottom z = 0, Neumann on the top z = 1 and Robin on the
 * outer face r = 2, once by the IGA multifrontal solver and once by Jacobi CG
 * on the sum-factorization operator. It prints the L2 and H1-seminorm errors
 * of both against the exact solution at n and 2n elements per direction with
 * the observed orders (p + 1, p), checks that the two solutions agree, and
 * writes the finer one to thick_quarter_ring.vtu for ParaView.
 *
 *   ./thick_quarter_ring [p] [n]
 *
 * p is the degree (2..8, default 2: the arc is quadratic), n the coarser
 * number of elements per direction (1..64, default 8). Exits 1 when a call
 * fails or the two solutions differ by more than 1e-8 relative.
 *
 *   cc thick_quarter_ring.c $(pkg-config --cflags --libs feaccel) -lm -o thick_quarter_ring */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <feaccel.h>
#include <feaccel/operator.h>
#include <feaccel/solver.h>

/* Constant coefficients that are not 1, so that a solver which dropped sigma
 * or c (or the Robin alpha) would show up in the errors, not only in the
 * agreement check. */
static const double SIGMA = 1.5, REACTION = 2.0, ALPHA = 1.0;

/* u = e^(x/2) sin(0.7 y) (1 + z) + x y: smooth, not polynomial, and varying
 * in z so the top face carries a nonzero flux. */
static double exact(const double *x, void *user) {
  (void)user;
  return exp(0.5 * x[0]) * sin(0.7 * x[1]) * (1.0 + x[2]) + x[0] * x[1];
}

static void exact_grad(const double *x, double *g, void *user) {
  (void)user;
  const double e = exp(0.5 * x[0]), s = sin(0.7 * x[1]), c = cos(0.7 * x[1]);
  g[0] = 0.5 * e * s * (1.0 + x[2]) + x[1];
  g[1] = 0.7 * e * c * (1.0 + x[2]) + x[0];
  g[2] = e * s;
}

/* -Laplace u = (0.49 - 0.25) e^(x/2) sin(0.7 y) (1 + z) (x y is harmonic and
 * u is linear in z), so f = sigma * that + c u. */
static double source(const double *x, void *user) {
  (void)user;
  return SIGMA * 0.24 * exp(0.5 * x[0]) * sin(0.7 * x[1]) * (1.0 + x[2]) +
         REACTION * exact(x, NULL);
}

/* Top face z = 1 (outward normal +z): h = sigma du/dz. */
static double top_flux(const double *x, void *user) {
  double g[3];
  exact_grad(x, g, user);
  return SIGMA * g[2];
}

/* Outer face r = 2 (outward normal (x, y, 0) / r): h = alpha u + sigma grad u . n. */
static double outer_robin(const double *x, void *user) {
  double g[3];
  exact_grad(x, g, user);
  const double r = hypot(x[0], x[1]);
  return ALPHA * exact(x, user) + SIGMA * (g[0] * x[0] + g[1] * x[1]) / r;
}

#define TRY(call)                                                          \
  do {                                                                     \
    fea_status s_ = (call);                                                \
    if (s_ != FEA_SUCCESS) {                                               \
      fprintf(stderr, "%s failed: %s: %s\n", #call, fea_status_string(s_), \
              fea_context_last_error(NULL));                               \
      goto done;                                                           \
    }                                                                      \
  } while (0)

static double seconds(void) {
  struct timespec t;
  return timespec_get(&t, TIME_UTC) ? (double)t.tv_sec + 1e-9 * (double)t.tv_nsec : 0.0;
}

/* Errors of one solver at one refinement. */
typedef struct result {
  double l2, h1;
} result;

/* One level: n x n x n elements of degree p, solved both ways. Returns 0 on
 * success, 1 when a call fails or the solutions disagree. */
static int solve(fea_context *ctx, const fea_geometry_desc *geometry, int p, fea_index n,
                 const char *vtu, result *mf, result *cg) {
  int rc = 1;
  fea_space *space = NULL;
  fea_problem *problem = NULL;
  fea_solver *solver = NULL;
  fea_operator *op = NULL;
  fea_vector *b = NULL, *x = NULL;
  double *u_free = NULL, *u_mf = NULL, *u_cg = NULL;

  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 3;
  bd.degree[0] = bd.degree[1] = bd.degree[2] = p;
  bd.n[0] = bd.n[1] = bd.n[2] = n; /* uniform knots over the geometry's parameter range */
  bd.geometry = geometry;
  TRY(fea_space_create_bspline(ctx, &bd, &space));

  /* Sides in G+Smo's order: west r = 1, east r = 2, south theta = 0,
   * north theta = pi/2, front z = 0, back z = 1. The rest stay Dirichlet
   * (u = exact, interpolated at the Greville points). */
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma = SIGMA;
  pd.reaction = REACTION;
  pd.source = source;
  pd.dirichlet = exact;
  pd.sides[FEA_SIDE_BACK].type = FEA_BC_NEUMANN;
  pd.sides[FEA_SIDE_BACK].flux = top_flux;
  pd.sides[FEA_SIDE_EAST].type = FEA_BC_ROBIN;
  pd.sides[FEA_SIDE_EAST].alpha = ALPHA;
  pd.sides[FEA_SIDE_EAST].flux = outer_robin;
  TRY(fea_problem_create_poisson(space, &pd, &problem));

  fea_index nfree = 0;
  TRY(fea_problem_get_num_free_dofs(problem, &nfree));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  TRY(fea_space_get_info(space, &info));
  u_free = malloc((size_t)nfree * sizeof *u_free);
  u_mf = malloc((size_t)info.num_dofs * sizeof *u_mf);
  u_cg = malloc((size_t)info.num_dofs * sizeof *u_cg);
  if (!u_free || !u_mf || !u_cg) {
    fprintf(stderr, "out of memory for %lld unknowns\n", (long long)info.num_dofs);
    goto done;
  }

  /* The direct solve: setup = element integration + factorization. */
  double t0 = seconds();
  TRY(fea_solver_create_multifrontal(ctx, space, problem, NULL, &solver));
  TRY(fea_solver_setup(solver));
  TRY(fea_solver_solve(solver, 1, NULL, 0, u_free, nfree));
  const double t_mf = seconds() - t0;
  TRY(fea_problem_expand_solution(problem, u_free, u_mf));
  TRY(fea_problem_error_norms(problem, u_mf, exact, exact_grad, NULL, &mf->l2, &mf->h1));

  /* The iterative solve. rtol 1e-12 rather than the default 1e-10: the
   * agreement check below asks for 1e-8 and the Jacobi-scaled condition
   * number at these sizes is around 1e3. */
  t0 = seconds();
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT; /* FEA_OPERATOR_MATFREE_SUMFACT */
  TRY(fea_operator_create(ctx, problem, &od, &op));
  fea_operator_info oi = FEA_OPERATOR_INFO_INIT;
  TRY(fea_operator_get_info(op, &oi));
  TRY(fea_vector_create(ctx, nfree, FEA_F64, &b));
  TRY(fea_vector_create(ctx, nfree, FEA_F64, &x));
  TRY(fea_operator_get_rhs(op, b));
  TRY(fea_vector_set_all(x, 0.0));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-12;
  fea_cg_stats cs = FEA_CG_STATS_INIT;
  TRY(fea_cg_solve(op, b, x, &cd, &cs)); /* FEA_WARN_NOT_CONVERGED counts as a failure */
  const double t_cg = seconds() - t0;
  TRY(fea_vector_read(x, nfree, FEA_F64, u_free));
  TRY(fea_problem_expand_solution(problem, u_free, u_cg));
  TRY(fea_problem_error_norms(problem, u_cg, exact, exact_grad, NULL, &cg->l2, &cg->h1));

  double diff = 0, norm = 0;
  for (fea_index i = 0; i < info.num_dofs; i++) {
    diff += (u_cg[i] - u_mf[i]) * (u_cg[i] - u_mf[i]);
    norm += u_mf[i] * u_mf[i];
  }
  const double rel = sqrt(diff / norm);

  printf("  n = %3lld: %lld unknowns (%lld free)\n", (long long)n, (long long)info.num_dofs,
         (long long)nfree);
  printf("    multifrontal:    L2 error %.3e, H1 error %.3e, %.3f s (setup + solve)\n", mf->l2,
         mf->h1, t_mf);
  /* info.kernel says what ran: on this mapped, reactive problem the
   * sum-factorization kernel falls back to element matrices, with the reason. */
  printf("    CG, operator \"%s\"\n", oi.kernel);
  printf("    CG:              L2 error %.3e, H1 error %.3e, %.3f s, %lld iterations\n", cg->l2,
         cg->h1, t_cg, (long long)cs.iterations);
  printf("    |u_cg - u_mf| / |u_mf| = %.1e\n", rel);
  if (!(rel <= 1e-8)) { /* also catches NaN */
    fprintf(stderr, "the multifrontal and CG solutions differ by %.3e relative (> 1e-8)\n", rel);
    goto done;
  }
  if (vtu) { /* drawn on the ring with 2 x 2 x 2 samples per element: 4 MB at
                * n = 16, where 4 x 4 x 4 would write 32 MB */
    TRY(fea_space_write_vtu(space, u_mf, 2, vtu));
    printf("    solution written to %s\n", vtu);
  }
  rc = 0;
done:
  free(u_free);
  free(u_mf);
  free(u_cg);
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  fea_solver_destroy(&solver);
  fea_problem_destroy(&problem);
  fea_space_destroy(&space);
  return rc;
}

int main(int argc, char **argv) {
  const int p = argc > 1 ? atoi(argv[1]) : 2;
  const long n = argc > 2 ? atol(argv[2]) : 8;
  if (p < 2 || p > 8) {
    fprintf(stderr, "p = %s: the arc is quadratic, so the degree must be 2..8\n", argv[1]);
    return 2;
  }
  /* 64 caps the finer level at 128^3 elements: beyond that the direct solve
   * outgrows a workstation's memory. */
  if (n < 1 || n > 64) {
    fprintf(stderr, "n = %s: the number of elements per direction must be 1..64\n", argv[2]);
    return 2;
  }

  /* The geometry: 2 x 3 x 2 control points, radial direction fastest, then
   * the arc, then z; the same patch as the 2D quarter annulus, extruded. */
  static const double linear[4] = {0, 0, 1, 1}, quadratic[6] = {0, 0, 0, 1, 1, 1};
  const double arc[3][2] = {{1, 0}, {1, 1}, {0, 1}}, w[3] = {1, sqrt(0.5), 1};
  double points[12 * 3], weights[12];
  int i = 0;
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < 3; j++)
      for (int a = 0; a < 2; a++, i++) {
        points[3 * i + 0] = (1.0 + a) * arc[j][0];
        points[3 * i + 1] = (1.0 + a) * arc[j][1];
        points[3 * i + 2] = k;
        weights[i] = w[j];
      }
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  g.degree[0] = 1, g.degree[1] = 2, g.degree[2] = 1;
  g.knots[0] = linear, g.num_knots[0] = 4;
  g.knots[1] = quadratic, g.num_knots[1] = 6;
  g.knots[2] = linear, g.num_knots[2] = 4;
  g.control_points = points;
  g.num_control_points = i;
  g.weights = weights;

  fea_context *ctx = NULL;
  fea_status s = fea_context_create(NULL, &ctx);
  if (s != FEA_SUCCESS) {
    fprintf(stderr, "fea_context_create failed: %s: %s\n", fea_status_string(s),
            fea_context_last_error(NULL));
    return 1;
  }
  printf("thick quarter ring, NURBS geometry, B-splines of degree %d, sigma = %g, c = %g\n", p,
         SIGMA, REACTION);
  printf("  Dirichlet r = 1, theta = 0, theta = pi/2, z = 0; Neumann z = 1; Robin r = 2\n");
  result mf[2], cg[2];
  int rc = 0;
  const double t0 = seconds();
  for (int level = 0; level < 2 && rc == 0; level++)
    rc = solve(ctx, &g, p, (fea_index)n << level, level == 1 ? "thick_quarter_ring.vtu" : NULL,
               &mf[level], &cg[level]);
  if (rc == 0) {
    printf("  orders: multifrontal L2 %.2f, H1 %.2f; CG L2 %.2f, H1 %.2f (expected %d, %d)\n",
           log2(mf[0].l2 / mf[1].l2), log2(mf[0].h1 / mf[1].h1), log2(cg[0].l2 / cg[1].l2),
           log2(cg[0].h1 / cg[1].h1), p + 1, p);
    printf("  total %.2f s\n", seconds() - t0);
  }
  s = fea_context_destroy(&ctx);
  if (s != FEA_SUCCESS) {
    fprintf(stderr, "fea_context_destroy failed: %s\n", fea_status_string(s));
    return 1;
  }
  return rc;
}
