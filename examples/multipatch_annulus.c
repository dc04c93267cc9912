/* multipatch_annulus: the whole annulus 1 <= r <= 2 as four NURBS patches
 * read from a G+Smo XML file with its MultiPatch topology. libfeaccel finds
 * the interfaces from the geometry (and they are the file's), couples the
 * patches C0, and solves -Laplace u = f, u = g on the inner circle, the
 * exact flux on the outer one, by the multipatch direct solver: each
 * patch's interior by its own multifrontal tree, then the interface system.
 * Prints the L2 and H1 errors at n = 8, 16, 32 elements per patch
 * direction and their orders (p + 1 and p), and the solver's phases.
 *
 *   ./multipatch_annulus [p] [annulus.xml]
 *
 *   cc multipatch_annulus.c $(pkg-config --cflags --libs feaccel) -lm -o multipatch_annulus */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <feaccel.h>

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

/* On the outer circle n = x / 2: h = grad u . n. */
static double outer_flux(const double *x, void *user) {
  double g[2];
  exact_grad(x, g, user);
  return (g[0] * x[0] + g[1] * x[1]) / 2;
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

#define MAX_PATCHES 16

/* One solve at n x n elements per patch of degree p. */
static int solve(fea_context *ctx, const fea_geometry_file *file, int p, fea_index n, double *l2,
                 double *h1) {
  int np = 0;
  TRY(fea_geometry_file_get_num_patches(file, &np));
  if (np > MAX_PATCHES) return fprintf(stderr, "%d patches: at most %d\n", np, MAX_PATCHES), 1;
  fea_space *patches[MAX_PATCHES];
  for (int k = 0; k < np; k++) {
    int dim = 0;
    fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
    TRY(fea_geometry_file_get_patch(file, k, &dim, &g));
    fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
    bd.dim = dim;
    bd.degree[0] = bd.degree[1] = p;
    bd.n[0] = bd.n[1] = n;
    bd.geometry = &g;
    TRY(fea_space_create_bspline(ctx, &bd, &patches[k]));
  }
  fea_multipatch *mp = NULL;
  TRY(fea_multipatch_create(ctx, np, patches, NULL, &mp));
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  TRY(fea_multipatch_get_info(mp, &info));
  /* The boundary sides: the outer circle (radial direction high: east) Neumann. */
  fea_multipatch_bc bcs[2 * MAX_PATCHES];
  int nbc = 0;
  for (int i = 0; i < info.num_boundary_sides; i++) {
    int patch;
    fea_patch_side side;
    TRY(fea_multipatch_get_boundary_side(mp, i, &patch, &side));
    if (side == FEA_SIDE_EAST)
      bcs[nbc++] = (fea_multipatch_bc){patch, side, {FEA_BC_NEUMANN, 0.0, outer_flux, NULL}};
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = source;
  pd.dirichlet = exact;
  fea_multipatch_problem *pb = NULL;
  TRY(fea_multipatch_problem_create_poisson(mp, &pd, nbc, bcs, &pb));
  fea_index nf = 0;
  TRY(fea_multipatch_problem_get_num_free_dofs(pb, &nf));
  fea_solver *solver = NULL;
  TRY(fea_solver_create_multipatch(ctx, pb, NULL, &solver));
  TRY(fea_solver_setup(solver));
  double *x = malloc((size_t)nf * sizeof *x), *u = malloc((size_t)info.num_dofs * sizeof *u);
  if (!x || !u) return fprintf(stderr, "out of memory\n"), 1;
  TRY(fea_solver_solve(solver, 1, NULL, 0, x, nf));
  TRY(fea_multipatch_problem_expand_solution(pb, x, u));
  TRY(fea_multipatch_problem_error_norms(pb, u, exact, exact_grad, NULL, l2, h1));
  fea_multipatch_stats st = FEA_MULTIPATCH_STATS_INIT;
  TRY(fea_solver_get_multipatch_stats(solver, &st));
  printf(
      "n = %3lld: %d patches, %d interfaces, %8lld unknowns (%6lld on the interfaces); "
      "patches %.3f s, interface %.3f s, solve %.3f s; ",
      (long long)n, info.num_patches, info.num_interfaces, (long long)nf,
      (long long)st.interface_dofs, st.local_s, st.interface_s, st.solve_s);
  free(x);
  free(u);
  fea_solver_destroy(&solver);
  fea_multipatch_problem_destroy(&pb);
  fea_multipatch_destroy(&mp);
  for (int k = 0; k < np; k++) fea_space_destroy(&patches[k]);
  return 0;
}

int main(int argc, char **argv) {
  const int p = argc > 1 ? atoi(argv[1]) : 3;
  const char *path = argc > 2 ? argv[2] : "annulus.xml";
  if (p < 2 || p > 8) return fprintf(stderr, "degree %d: use 2..8\n", p), 1;
  fea_context *ctx = NULL;
  TRY(fea_context_create(NULL, &ctx));
  fea_geometry_file *file = NULL;
  TRY(fea_geometry_file_read(ctx, path, &file));
  double l2[3], h1[3];
  for (int level = 0; level < 3; level++) {
    if (solve(ctx, file, p, (fea_index)8 << level, &l2[level], &h1[level])) return 1;
    printf("L2 %.3e  H1 %.3e", l2[level], h1[level]);
    if (level > 0)
      printf("  orders %.2f, %.2f", log2(l2[level - 1] / l2[level]),
             log2(h1[level - 1] / h1[level]));
    printf("\n");
  }
  fea_geometry_file_destroy(&file);
  fea_context_destroy(&ctx);
  return 0;
}
