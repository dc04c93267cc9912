/* iga_poisson: solve -Laplace u = f on the unit square with cubic B-splines
 * and the IGA multifrontal direct solver, print the L2 error against the
 * exact solution u = sin(pi x) sin(pi y), and write u_h to a .vtu file.
 *
 *   ./iga_poisson [n] [out.vtu]      (n elements per direction, default 64)
 *
 *   cc iga_poisson.c $(pkg-config --cflags --libs feaccel) -lm -o iga_poisson */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <feaccel.h>
#include <feaccel/solver.h>

static const double pi = 3.14159265358979323846;

/* The load that makes u = sin(pi x) sin(pi y) the exact solution. */
static double source(const double *x, void *user) {
  (void)user;
  return 2 * pi * pi * sin(pi * x[0]) * sin(pi * x[1]);
}

static double exact(const double *x, void *user) {
  (void)user;
  return sin(pi * x[0]) * sin(pi * x[1]);
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

int main(int argc, char **argv) {
  const fea_index n = argc > 1 ? atoll(argv[1]) : 64;
  const char *path = argc > 2 ? argv[2] : "iga_poisson.vtu";
  if (n < 1) {
    fprintf(stderr, "n = %s: need at least one element per direction\n", argv[1]);
    return 2;
  }

  /* NULL: the best backend here (or the one FEACCEL_BACKEND names). */
  fea_context *ctx = NULL;
  TRY(fea_context_create(NULL, &ctx));

  /* Cubic B-splines (C2) on n x n elements: open uniform knots on [0,1]^2. */
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 2;
  bd.degree[0] = bd.degree[1] = 3;
  bd.n[0] = bd.n[1] = n;
  fea_space *space = NULL;
  TRY(fea_space_create_bspline(ctx, &bd, &space));

  /* Poisson with u = 0 on the boundary (the default Dirichlet data). */
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = source;
  fea_problem *problem = NULL;
  TRY(fea_problem_create_poisson(space, &pd, &problem));

  /* Create builds the elimination tree from the patch structure (no
   * ordering, no global matrix); setup integrates the elements inside the
   * tree's leaves and factors; solve uses the factors. */
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
    fprintf(stderr, "out of memory for %lld DoFs\n", (long long)info.num_dofs);
    return 1;
  }
  TRY(fea_solver_solve(solver, 1, NULL, 0, u_free, nfree)); /* b = NULL: the problem's load */

  /* The solver works on the free DoFs; expand adds the boundary values. */
  TRY(fea_problem_expand_solution(problem, u_free, u));
  double l2 = 0;
  TRY(fea_problem_error_norms(problem, u, exact, NULL, NULL, &l2, NULL));
  fea_solver_stats st = FEA_SOLVER_STATS_INIT;
  TRY(fea_solver_get_stats(solver, &st));
  printf("%lld unknowns, %d tree levels, largest front %lld\n", (long long)nfree, st.num_levels,
         (long long)st.max_front);
  printf("setup %.3f s (integration %.3f s), solve %.4f s, %.3g GFLOP, factors %.1f MB\n",
         st.factor_s, st.integrate_s, st.forward_s + st.backward_s, st.flops * 1e-9,
         st.factor_bytes / 1e6);
  printf("L2 error %.3e\n", l2);

  /* A .vtu needs a mesh: a structured quad mesh on the same n x n elements,
   * with u_h evaluated at its nodes as a node field. */
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = md.n[1] = n;
  fea_mesh *mesh = NULL;
  TRY(fea_mesh_create_structured(ctx, &md, &mesh));
  fea_index nodes = 0;
  TRY(fea_mesh_get_info(mesh, NULL, NULL, &nodes, NULL));
  double *xy = malloc((size_t)nodes * 2 * sizeof *xy), *uh = malloc((size_t)nodes * sizeof *uh);
  if (!xy || !uh) {
    fprintf(stderr, "out of memory for %lld mesh nodes\n", (long long)nodes);
    return 1;
  }
  TRY(fea_mesh_get_coordinates(mesh, nodes * 2, xy));
  TRY(fea_space_evaluate(space, u, nodes, xy, uh, NULL));
  fea_field field = {"u_h", FEA_FIELD_NODE, 1, uh};
  TRY(fea_mesh_write_vtu(mesh, path, 1, &field));
  printf("wrote %s\n", path);

  free(xy);
  free(uh);
  free(u);
  free(u_free);
  fea_mesh_destroy(&mesh);
  fea_solver_destroy(&solver);
  fea_problem_destroy(&problem);
  fea_space_destroy(&space);
  fea_context_destroy(&ctx);
  return 0;
}
