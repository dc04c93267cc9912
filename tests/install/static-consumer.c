/* A program linked to the installed libfeaccel.a (test-install.sh builds it
 * with `pkg-config --static --libs feaccel`): checks that the library it
 * carries is the headers' version, solves -Laplace u = f with cubic B-splines
 * on /cpu/ref with the multifrontal solver (which reaches OpenBLAS and
 * LAPACKE) against the exact solution, and that /gpu/cuda, which only
 * libfeaccel.so's module serves, is refused with the reason.
 *
 *   static-consumer CUDA      CUDA: yes or no, feaccel.pc's cuda variable
 *
 * Exits 0 when all holds, 1 (with the reason on stderr) otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel.h>
#include <feaccel/solver.h>

static const double pi = 3.14159265358979323846;

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

/* The multifrontal solve on 8 x 8 cubic elements; its L2 error in *l2. */
static int solve_poisson(fea_context *ctx, double *l2) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 2;
  bd.degree[0] = bd.degree[1] = 3;
  bd.n[0] = bd.n[1] = 8;
  fea_space *space = NULL;
  TRY(fea_space_create_bspline(ctx, &bd, &space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = source;
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
    fprintf(stderr, "out of memory for %lld DoFs\n", (long long)info.num_dofs);
    return 1;
  }
  TRY(fea_solver_solve(solver, 1, NULL, 0, u_free, nfree));
  TRY(fea_problem_expand_solution(problem, u_free, u));
  TRY(fea_problem_error_norms(problem, u, exact, NULL, NULL, l2, NULL));
  free(u);
  free(u_free);
  fea_solver_destroy(&solver);
  fea_problem_destroy(&problem);
  fea_space_destroy(&space);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "yes") != 0 && strcmp(argv[1], "no") != 0)) {
    fputs("usage: static-consumer yes|no   (whether /gpu/cuda was built)\n", stderr);
    return 2;
  }
  const int cuda_built = strcmp(argv[1], "yes") == 0;
  int major = -1, minor = -1, patch = -1;
  (void)fea_version(&major, &minor, &patch);
  if (major != FEA_VERSION_MAJOR || minor != FEA_VERSION_MINOR || patch != FEA_VERSION_PATCH ||
      strcmp(fea_version_string(), FEA_VERSION_STRING) != 0) {
    fprintf(stderr, "the library is %s (%d.%d.%d), the headers %s\n", fea_version_string(), major,
            minor, patch, FEA_VERSION_STRING);
    return 1;
  }

  fea_context *ctx = NULL;
  TRY(fea_context_create("/cpu/ref", &ctx));
  double l2 = INFINITY;
  if (solve_poisson(ctx, &l2) != 0) return 1;
  fea_context_destroy(&ctx);
  /* Cubic splines on h = 1/8: the error is about 1e-5. */
  if (!(l2 < 1e-3)) {
    fprintf(stderr, "L2 error %.3e of the 8 x 8 cubic solve is not below 1e-3\n", l2);
    return 1;
  }

  /* /gpu/cuda: not built, or (built) not for a program that links
   * libfeaccel statically; either way FEA_ERR_UNSUPPORTED and a reason. */
  fea_status st = fea_context_create("/gpu/cuda", &ctx);
  const char *msg = fea_context_last_error(NULL);
  const char *expected = cuda_built ? "statically" : "not built";
  if (st != FEA_ERR_UNSUPPORTED || ctx || !strstr(msg, expected)) {
    fprintf(stderr, "/gpu/cuda gave %s, expected FEA_ERR_UNSUPPORTED saying '%s': %s\n",
            fea_status_string(st), expected, msg);
    return 1;
  }
  printf("libfeaccel %s linked statically: /cpu/ref solve L2 error %.2e; /gpu/cuda: %s\n",
         fea_version_string(), l2, msg);
  return 0;
}
