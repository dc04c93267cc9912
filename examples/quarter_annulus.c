/* quarter_annulus: the first example of every IGA course. The quarter annulus
 * 1 <= r <= 2, 0 <= theta <= pi/2 is described exactly by a NURBS patch
 * (radial degree 1, circular arcs of degree 2 with weights 1, 1/sqrt(2), 1);
 * solve -Laplace u = f on it with B-splines of degree p that refine the
 * geometry, by the IGA multifrontal solver, and print the L2 and H1 errors
 * against the exact solution for n = 8, 16, 32 and their orders (p + 1, p); the
 * solution at n = 32 goes to quarter_annulus.vtu for ParaView.
 *
 *   ./quarter_annulus [p] [geometry.xml]
 *
 * p is the degree (2..8, default 3). With a G+Smo XML file (for example
 * examples/data/quarter_annulus.xml) the geometry is read from its first
 * patch instead of the arrays below: the same numbers come out.
 *
 *   cc quarter_annulus.c $(pkg-config --cflags --libs feaccel) -lm -o quarter_annulus */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <feaccel.h>
#include <feaccel/solver.h>

/* u = e^(x/2) sin(0.7 y) + x y, so -Laplace u = 0.24 e^(x/2) sin(0.7 y). */
static double exact(const double *x, void *user) {
  (void)user;
  return exp(0.5 * x[0]) * sin(0.7 * x[1]) + x[0] * x[1];
}

static void exact_grad(const double *x, double *g, void *user) {
  (void)user;
  g[0] = 0.5 * exp(0.5 * x[0]) * sin(0.7 * x[1]) + x[1];
  g[1] = 0.7 * exp(0.5 * x[0]) * cos(0.7 * x[1]) + x[0];
}

static double source(const double *x, void *user) {
  (void)user;
  return 0.24 * exp(0.5 * x[0]) * sin(0.7 * x[1]);
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

/* One solve at n x n elements of degree p; the errors go to l2 and h1. */
static int solve(fea_context *ctx, const fea_geometry_desc *geometry, int p, fea_index n,
                 double *l2, double *h1) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 2;
  bd.degree[0] = bd.degree[1] = p;
  bd.n[0] = bd.n[1] = n; /* uniform knots over the geometry's parameter range */
  bd.geometry = geometry;
  fea_space *space = NULL;
  TRY(fea_space_create_bspline(ctx, &bd, &space));

  /* u = exact on the whole boundary (interpolated at the Greville points). */
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = source;
  pd.dirichlet = exact;
  fea_problem *problem = NULL;
  TRY(fea_problem_create_poisson(space, &pd, &problem));

  fea_solver *solver = NULL;
  TRY(fea_solver_create_multifrontal(ctx, space, problem, NULL, &solver));
  TRY(fea_solver_setup(solver));
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
  TRY(fea_solver_solve(solver, 1, NULL, 0, u_free, nfree));
  TRY(fea_problem_expand_solution(problem, u_free, u));
  TRY(fea_problem_error_norms(problem, u, exact, exact_grad, NULL, l2, h1));
  /* The finest solution for ParaView, drawn on the annulus (4 x 4 samples per element). */
  if (n == 32) TRY(fea_space_write_vtu(space, u, 4, "quarter_annulus.vtu"));
  printf("  n = %3lld: %7lld unknowns, L2 error %.3e, H1 error %.3e\n", (long long)n,
         (long long)nfree, *l2, *h1);
  free(u_free);
  free(u);
  fea_solver_destroy(&solver);
  TRY(fea_problem_destroy(&problem));
  TRY(fea_space_destroy(&space));
  return 0;
}

int main(int argc, char **argv) {
  const int p = argc > 1 ? atoi(argv[1]) : 3;
  if (p < 2 || p > 8) {
    fprintf(stderr, "p = %s: the arc is quadratic, so the degree must be 2..8\n", argv[1]);
    return 2;
  }
  /* The geometry: control points numbered radial direction first. */
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

  fea_context *ctx = NULL;
  TRY(fea_context_create(NULL, &ctx));
  fea_geometry_file *file = NULL;
  if (argc > 2) { /* the same patch from a G+Smo file */
    int dim = 0;
    TRY(fea_geometry_file_read(ctx, argv[2], &file));
    TRY(fea_geometry_file_get_patch(file, 0, &dim, &g));
    if (dim != 2) {
      fprintf(stderr, "%s: the first patch is %dD; this example is 2D\n", argv[2], dim);
      return 2;
    }
  }
  printf("quarter annulus, NURBS geometry%s%s, B-splines of degree %d, multifrontal solver\n",
         file ? " from " : "", file ? argv[2] : "", p);
  double l2[3], h1[3];
  for (int i = 0; i < 3; i++)
    if (solve(ctx, &g, p, (fea_index)8 << i, &l2[i], &h1[i])) return 1;
  printf("  orders: L2 %.2f (expected %d), H1 %.2f (expected %d)\n", log2(l2[1] / l2[2]), p + 1,
         log2(h1[1] / h1[2]), p);
  fea_geometry_file_destroy(&file);
  TRY(fea_context_destroy(&ctx));
  return 0;
}
