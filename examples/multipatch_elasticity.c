/* multipatch_elasticity: Lame's thick-walled cylinder on the whole annulus
 * 1 <= r <= 2 as four NURBS patches read from a G+Smo XML file. The patches
 * get two components (the displacement), libfeaccel joins them C0 (a basis
 * function's components together across each interface) and solves plane
 * strain elasticity, E = 1000, nu = 0.3, with a pressure P = 10 on the
 * inner circle and Lame's displacement u = (A + B / r^2) x prescribed on
 * the outer one, by the multipatch direct solver. Prints the L2 and H1
 * errors at n = 8, 16, 32 elements per patch direction and their orders
 * (p + 1 and p), then solves once more with one quarter five times stiffer
 * (a material per patch) and prints the largest displacement on the inner
 * circle of each quarter.
 *
 *   ./multipatch_elasticity [p] [annulus.xml]
 *
 *   cc multipatch_elasticity.c $(pkg-config --cflags --libs feaccel) -lm -o multipatch_elasticity */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <feaccel.h>

/* u_r = A r + B / r with sigma_rr(1) = -P, sigma_rr(2) = 0 (plane strain). */
typedef struct lame {
  double E, nu, P, A, B;
} lame;

static lame lame_make(double E, double nu, double P) {
  const double k = P / (E * 3.0); /* P a^2 / (E (b^2 - a^2)), a = 1, b = 2 */
  lame l = {E, nu, P, (1 + nu) * (1 - 2 * nu) * k, (1 + nu) * 4.0 * k};
  return l;
}

static void lame_u(const double *x, double *u, void *user) {
  const lame *l = user;
  const double s = l->A + l->B / (x[0] * x[0] + x[1] * x[1]);
  u[0] = s * x[0];
  u[1] = s * x[1];
}

/* d u_i / d x_j = (A + B / r^2) delta_ij - 2 B x_i x_j / r^4. */
static void lame_grad(const double *x, double *g, void *user) {
  const lame *l = user;
  const double r2 = x[0] * x[0] + x[1] * x[1], s = l->A + l->B / r2;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      g[i * 2 + j] = (i == j ? s : 0.0) - 2 * l->B * x[i] * x[j] / (r2 * r2);
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

/* One solve at n x n elements per patch of degree p; stiff >= 0 gives that
 * patch five times the modulus and prints the inner displacements. */
static int solve(fea_context *ctx, const fea_geometry_file *file, int p, fea_index n, int stiff,
                 double *l2, double *h1) {
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
    TRY(fea_space_set_num_components(patches[k], 2)); /* before the domain holds it */
  }
  fea_multipatch *mp = NULL;
  TRY(fea_multipatch_create(ctx, np, patches, NULL, &mp));
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  TRY(fea_multipatch_get_info(mp, &info));
  lame l = lame_make(1000.0, 0.3, 10.0);
  /* The inner circle (radial direction low: west) under pressure; the outer
   * one, not listed, clamped to Lame's displacement. */
  fea_multipatch_elastic_bc bcs[2 * MAX_PATCHES];
  int nbc = 0;
  for (int i = 0; i < info.num_boundary_sides; i++) {
    int patch;
    fea_patch_side side;
    TRY(fea_multipatch_get_boundary_side(mp, i, &patch, &side));
    if (side != FEA_SIDE_WEST) continue;
    bcs[nbc] = (fea_multipatch_elastic_bc){.patch = patch, .side = side};
    bcs[nbc].bc.type = FEA_ELASTIC_PRESSURE;
    bcs[nbc++].bc.pressure = l.P;
  }
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = l.E, d.nu = l.nu;
  d.displacement = lame_u, d.displacement_user = &l;
  fea_elasticity_desc harder = FEA_ELASTICITY_DESC_INIT;
  harder.E = 5 * l.E, harder.nu = l.nu;
  const fea_elasticity_desc *materials[MAX_PATCHES] = {NULL};
  if (stiff >= 0) materials[stiff] = &harder;
  fea_multipatch_problem *pb = NULL;
  TRY(fea_multipatch_problem_create_elasticity(mp, &d, stiff >= 0 ? materials : NULL, nbc, bcs,
                                               &pb));
  fea_index nf = 0;
  TRY(fea_multipatch_problem_get_num_free_dofs(pb, &nf));
  fea_solver *solver = NULL;
  TRY(fea_solver_create_multipatch(ctx, pb, NULL, &solver));
  TRY(fea_solver_setup(solver));
  double *x = malloc((size_t)nf * sizeof *x), *u = malloc((size_t)info.num_dofs * sizeof *u);
  if (!x || !u) return fprintf(stderr, "out of memory\n"), 1;
  TRY(fea_solver_solve(solver, 1, NULL, 0, x, nf));
  TRY(fea_multipatch_problem_expand_solution(pb, x, u));
  double e0[3], e1[3];
  TRY(fea_multipatch_problem_error_norms_vector(pb, u, lame_u, lame_grad, &l, e0, e1));
  *l2 = e0[2], *h1 = e1[2];
  fea_multipatch_stats st = FEA_MULTIPATCH_STATS_INIT;
  TRY(fea_solver_get_multipatch_stats(solver, &st));
  printf(
      "n = %3lld: %d patches, %d interfaces, %8lld unknowns (%6lld on the interfaces); "
      "patches %.3f s, interface %.3f s, solve %.3f s; ",
      (long long)n, info.num_patches, info.num_interfaces, (long long)nf,
      (long long)st.interface_dofs, st.local_s, st.interface_s, st.solve_s);
  if (stiff >= 0) {
    /* The inner circle's coefficients (radial index 0) of each patch: the
     * largest displacement there, the stiff quarter's the smallest. */
    printf("patch %d five times stiffer; largest |u| on the inner circle per patch:", stiff);
    for (int k = 0; k < np; k++) {
      const fea_index m = n + p, cnt = 2 * m * m;
      fea_index *g = malloc((size_t)cnt * sizeof *g);
      if (!g) return fprintf(stderr, "out of memory\n"), 1;
      TRY(fea_multipatch_get_patch_dofs(mp, k, cnt, g));
      double umax = 0;
      for (fea_index j = 0; j < m; j++) /* function (0, j): component c at c + 2 (0 + j m) */
        umax = fmax(umax, hypot(u[g[2 * j * m]], u[g[1 + 2 * j * m]]));
      printf(" %.4e", umax);
      free(g);
    }
    printf(" (Lame: %.4e)\n", l.A + l.B);
  }
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
    if (solve(ctx, file, p, (fea_index)8 << level, -1, &l2[level], &h1[level])) return 1;
    printf("L2 %.3e  H1 %.3e", l2[level], h1[level]);
    if (level > 0)
      printf("  orders %.2f, %.2f", log2(l2[level - 1] / l2[level]),
             log2(h1[level - 1] / h1[level]));
    printf("\n");
  }
  double a, b;
  if (solve(ctx, file, p, 8, 0, &a, &b)) return 1;
  fea_geometry_file_destroy(&file);
  fea_context_destroy(&ctx);
  return 0;
}
