/* prehandled: solve -Laplace u = f on the unit square with Q1 elements and
 * the prehandled Schur-complement solver, once in FP64 and once in FP16 with
 * mixed-precision iterative refinement, and compare both with the exact
 * solution u = sin(pi x) sin(pi y).
 *
 *   ./prehandled [n]        (n x n cells, n a power of two >= 4; default 128)
 *
 *   cc prehandled.c $(pkg-config --cflags --libs feaccel) -lm -o prehandled */
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

/* Solve the problem with the prehandled solver in one precision; u_free
 * gets the reduced solution, u the full one, *l2 its L2 error. */
static int solve(fea_context *ctx, fea_problem *problem, fea_precision prec, int refine,
                 fea_index nfree, double *u_free, double *u, double *l2) {
  fea_prehandled_desc d = FEA_PREHANDLED_DESC_INIT;
  d.precision = prec; /* of the dense products; the setup always runs in FP64 */
  /* FP64 residuals, corrections in prec, to refine_rtol (1e-12) or FP64's floor */
  d.refine = refine;
  d.coarse_cells = 0; /* h0 with the fewest FLOPs per right-hand side */
  fea_solver *solver = NULL;
  TRY(fea_solver_create_prehandled(ctx, problem, &d, &solver));
  /* Setup: hierarchical basis, partial Cholesky, the C/E/I split, and the
   * inverses of the macro-cell block and of the Schur complement on E. */
  TRY(fea_solver_setup(solver));
  TRY(fea_solver_solve(solver, 1, NULL, 0, u_free, nfree)); /* NULL: the problem's load */
  fea_prehandled_stats st = FEA_PREHANDLED_STATS_INIT;
  TRY(fea_solver_get_prehandled_stats(solver, &st));
  TRY(fea_problem_expand_solution(problem, u_free, u));
  TRY(fea_problem_error_norms(problem, u, exact, NULL, NULL, l2, NULL));
  printf(
      "%s%s: h0 = 1/%lld, |C| = %lld, |E| = %lld, |I| = %lld, dense %.1f MB, setup %.2f s, "
      "solve %.4f s",
      fea_precision_name(prec), refine ? " with refinement" : "", (long long)st.n0,
      (long long)st.num_c, (long long)st.num_e, (long long)st.num_i, st.dense_bytes / 1e6,
      st.setup_s, st.solve_s);
  if (refine)
    printf(", %d corrections, relative residual %.2e", st.refine_iterations, st.relative_residual);
  printf("\n  L2 error %.6e\n", *l2);
  TRY(fea_solver_destroy(&solver));
  return 0;
}

int main(int argc, char **argv) {
  const fea_index n = argc > 1 ? atoll(argv[1]) : 128;
  if (n < 4 || (n & (n - 1)) != 0) {
    fprintf(stderr, "n = %s: need a power of two >= 4 cells per direction\n", argv[1]);
    return 2;
  }

  fea_context *ctx = NULL;
  TRY(fea_context_create("/cpu/threads", &ctx));

  /* Q1 on the unit square with n x n cells; u = 0 on the boundary. */
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = md.n[1] = n;
  fea_mesh *mesh = NULL;
  TRY(fea_mesh_create_structured(ctx, &md, &mesh));
  fea_space *space = NULL;
  TRY(fea_space_create_lagrange(mesh, 1, FEA_NODES_EQUISPACED, &space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = source;
  fea_problem *problem = NULL;
  TRY(fea_problem_create_poisson(space, &pd, &problem));

  fea_index nfree = 0;
  TRY(fea_problem_get_num_free_dofs(problem, &nfree));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  TRY(fea_space_get_info(space, &info));
  double *x64 = malloc((size_t)nfree * sizeof *x64), *x16 = malloc((size_t)nfree * sizeof *x16);
  double *u = malloc((size_t)info.num_dofs * sizeof *u);
  if (!x64 || !x16 || !u) {
    fprintf(stderr, "out of memory for %lld DoFs\n", (long long)info.num_dofs);
    return 1;
  }
  printf("h = 1/%lld, %lld unknowns\n", (long long)n, (long long)nfree);

  double l2_64 = 0, l2_16 = 0;
  if (solve(ctx, problem, FEA_F64, 0, nfree, x64, u, &l2_64) != 0) return 1;
  if (solve(ctx, problem, FEA_F16, 1, nfree, x16, u, &l2_16) != 0) return 1;

  double diff = 0, norm = 0;
  for (fea_index i = 0; i < nfree; i++) {
    diff += (x16[i] - x64[i]) * (x16[i] - x64[i]);
    norm += x64[i] * x64[i];
  }
  const double rel = sqrt(diff / norm);
  printf("FP16 + refinement vs FP64: relative difference %.3e, L2 errors differ by %.2e %%\n", rel,
         100 * fabs(l2_16 - l2_64) / l2_64);

  free(x64);
  free(x16);
  free(u);
  fea_problem_destroy(&problem);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
  /* Refined FP16 should reach the FP64 solution to about the refinement's
   * tolerance, far below the discretization error. */
  if (!(rel < 1e-8)) {
    fprintf(stderr, "FP16 with refinement is %.3e away from FP64\n", rel);
    return 1;
  }
  return 0;
}
