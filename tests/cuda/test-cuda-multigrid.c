/* Geometric multigrid on /gpu/cuda (docs/multigrid.md "On the GPU") against
 * the same solver on /cpu/threads: the paper's configuration (CSR levels,
 * Richardson) and Chebyshev(3)-PCG with sum-factorization levels, 2D and 3D
 * Q1, each converging in the CPU's iteration count (within one: the
 * device's lambda_max comes from Lanczos where the CPU's stencil levels know
 * it exactly) to the CPU's solution; several right-hand sides equal single
 * solves. Every test skips without a device. Compiled, not yet run on a GPU
 * (the cycle's device path runs on the host in tests/unit/test-multigrid.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel/solver.h>

#include "cuda-test.h"

static double sine_f(const double *x, void *user) {
  const int dim = *(const int *)user;
  double u = 1.0;
  for (int k = 0; k < dim; k++) u *= sin(3.14159265358979323846 * x[k]);
  return dim * 9.869604401089358 * u;
}

typedef struct box {
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nf;
} box;

static int dims[4] = {0, 1, 2, 3};

static box box_create(fea_context *ctx, int dim, fea_index n) {
  box b = {0};
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  for (int k = 0; k < dim; k++) md.n[k] = n;
  OK(fea_mesh_create_structured(ctx, &md, &b.mesh));
  OK(fea_space_create_lagrange(b.mesh, 1, FEA_NODES_EQUISPACED, &b.space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = sine_f;
  pd.source_user = &dims[dim];
  OK(fea_problem_create_poisson(b.space, &pd, &b.pb));
  OK(fea_problem_get_num_free_dofs(b.pb, &b.nf));
  return b;
}

static void box_destroy(box *b) {
  fea_problem_destroy(&b->pb);
  fea_space_destroy(&b->space);
  fea_mesh_destroy(&b->mesh);
}

static double rel_diff(fea_index n, const double *a, const double *b) {
  double num = 0, den = 0;
  for (fea_index i = 0; i < n; i++) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The problem's own load solved on ctx: the solution (malloc'd) and the
 * iteration count. */
static double *solve_load(fea_context *ctx, int dim, fea_index n, const fea_multigrid_desc *d,
                          fea_index *nf, fea_index *iterations) {
  box b = box_create(ctx, dim, n);
  fea_solver *sv = NULL;
  OK(fea_solver_create_multigrid(ctx, b.pb, d, &sv));
  OK(fea_solver_setup(sv));
  double *x = malloc((size_t)b.nf * sizeof *x + 8);
  cr_assert_not_null(x);
  OK(fea_solver_solve(sv, 1, NULL, 0, x, b.nf));
  fea_multigrid_stats st = FEA_MULTIGRID_STATS_INIT;
  OK(fea_solver_get_multigrid_stats(sv, &st));
  cr_assert(st.converged, "not converged in %lld iterations", (long long)st.iterations);
  *nf = b.nf;
  *iterations = st.iterations;
  fea_solver_destroy(&sv);
  box_destroy(&b);
  return x;
}

static void compare(const char *name, int dim, fea_index n, const fea_multigrid_desc *d) {
  fea_context *gpu = open_gpu();
  fea_context *cpu = NULL;
  OK(fea_context_create("/cpu/threads", &cpu));
  fea_index nf = 0, nf2 = 0, it_cpu = 0, it_gpu = 0;
  double *xc = solve_load(cpu, dim, n, d, &nf, &it_cpu);
  double *xg = solve_load(gpu, dim, n, d, &nf2, &it_gpu);
  cr_assert_eq(nf, nf2);
  const double e = rel_diff(nf, xg, xc);
  cr_log_info("%s n=%lld: %lld iterations on the CPU, %lld on the GPU, solutions differ by %.2g",
              name, (long long)n, (long long)it_cpu, (long long)it_gpu, e);
  cr_expect(llabs((long long)(it_cpu - it_gpu)) <= 1,
            "%s: %lld iterations on the CPU, %lld on "
            "the GPU",
            name, (long long)it_cpu, (long long)it_gpu);
  cr_expect(e <= 1e-8, "%s: the solutions differ by %g", name, e);
  free(xc), free(xg);
  fea_context_destroy(&cpu);
  fea_context_destroy(&gpu);
}

Test(cuda_multigrid, the_cpu_counts_and_solutions, .timeout = 600) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER; /* the paper's counts, then variants */
  compare("paper Q1 2D", 2, 256, &d);
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  d.krylov = 1;
  d.operator_kind = FEA_OPERATOR_MATFREE_SUMFACT;
  compare("Chebyshev(3)-PCG sumfact Q1 2D", 2, 256, &d);
  compare("Chebyshev(3)-PCG sumfact Q1 3D", 3, 32, &d);
  d.krylov = 0;
  d.coarsest_cells = 4;
  d.operator_kind = FEA_OPERATOR_CSR;
  compare("Chebyshev(3) CSR, dense coarsest, Q1 3D", 3, 32, &d);
}

/* Two right-hand sides at once equal two single solves. The solver runs
 * the columns one after the other through the same cycle, so the only
 * difference between a column and its single solve is the summation order
 * inside cuSPARSE's SpMV (level operators and transfers), whose default
 * algorithm is not documented as bitwise reproducible (CUSPARSE_SPMV_CSR_ALG2
 * is; the library keeps the default for its speed). The bound: each product
 * entry moves by at most gamma_k (|A| |x|)_i, k = 9 products per row of Q1
 * in 2D (u k ||A|| ||x|| in norm, u = 2^-53); a converging iteration damps
 * what each step adds, and what is left is at most that residual
 * perturbation through A^-1, so the columns differ by
 * C k u kappa(A) relative, with C = 100 for the iteration's accumulation
 * (1 / (1 - rho), rho < 0.5 for this cycle) and the norm conversions.
 * kappa(A) is known in closed form: Q1's stiffness matrix on the uniform
 * n x n grid has the eigenvalues (8 - 2 cos a - 2 cos b - 4 cos a cos b) / 3,
 * a, b in {j pi / n}, at most 4 and at least (8 - 4 c - 4 c^2) / 3 with
 * c = cos(pi / n): kappa = 830 for n = 64, so the bound is 8e-11. Bitwise
 * equality is what a deterministic SpMV gives (logged); a column that
 * reads the wrong right-hand side, or starts from another column's
 * solution, misses by far more (rtol 1e-10 times kappa, or O(1)). A column
 * whose residual ratio lands within the perturbation of rtol could stop one
 * cycle earlier or later than its single solve; for random data that has
 * probability of order 1e-12 and is not guarded against. */
Test(cuda_multigrid, many_right_hand_sides_equal_single_solves, .timeout = 300) {
  enum { n = 64, per_row = 9 };
  fea_context *gpu = open_gpu();
  box b = box_create(gpu, 2, n);
  fea_solver *sv = NULL;
  OK(fea_solver_create_multigrid(gpu, b.pb, NULL, &sv));
  OK(fea_solver_setup(sv));
  const fea_index nf = b.nf;
  const double c = cos(3.14159265358979323846 / n);
  const double kappa = 4.0 / ((8.0 - 4.0 * c - 4.0 * c * c) / 3.0);
  const double tol = 100.0 * per_row * ldexp(1.0, -53) * kappa;
  double *B = malloc(2 * (size_t)nf * sizeof *B), *X = malloc(2 * (size_t)nf * sizeof *X);
  double *x1 = malloc((size_t)nf * sizeof *x1);
  cr_assert(B && X && x1);
  for (fea_index i = 0; i < 2 * nf; i++) B[i] = sin(0.37 * (double)i) + 0.5;
  OK(fea_solver_solve(sv, 2, B, nf, X, nf));
  for (int j = 0; j < 2; j++) {
    OK(fea_solver_solve(sv, 1, B + j * nf, nf, x1, nf));
    const double e = rel_diff(nf, X + j * nf, x1);
    cr_log_info("column %d: differs from its single solve by %.3g (bound %.3g, kappa %.1f)", j, e,
                tol, kappa);
    cr_expect(e <= tol, "column %d: %g, more than %g", j, e, tol);
  }
  free(B), free(X), free(x1);
  fea_solver_destroy(&sv);
  box_destroy(&b);
  fea_context_destroy(&gpu);
}
