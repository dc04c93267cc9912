/* The multipatch solver with its patches on /gpu/cuda against /cpu/ref:
 * the GPU multifrontal trees keep the patch boundaries, and the forward
 * substitution fetches the root's block for the condensed right-hand side
 * (cuda/multifrontal-cuda.c, kept_rows_fetch). Two boxes in 2D and 3D with
 * a Neumann side, the problem's own load and a caller's right-hand side. */
#include "cuda-test.h"

static double u_exact(const double *x, void *user) {
  (void)user;
  return sin(x[0]) * exp(x[1]) + x[0];
}

/* The global solution (free DoFs) on ctx for two boxes split at x = 1/2. */
static double *solve_on(fea_context *ctx, int dim, const double *b, fea_index *nf) {
  fea_space *patches[2];
  for (int q = 0; q < 2; q++) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = dim;
    for (int k = 0; k < 3; k++) d.degree[k] = 2, d.n[k] = dim == 2 ? 16 : 6;
    d.lower[0] = 0.5 * q, d.upper[0] = 0.5 * (q + 1);
    OK(fea_space_create_bspline(ctx, &d, &patches[q]));
  }
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 2, patches, NULL, &mp));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.dirichlet = u_exact;
  pd.reaction = 1.0;
  const fea_multipatch_bc bcs[1] = {{1, FEA_SIDE_NORTH, {FEA_BC_NEUMANN, 0.0, NULL, NULL}}};
  fea_multipatch_problem *pb = NULL;
  OK(fea_multipatch_problem_create_poisson(mp, &pd, 1, bcs, &pb));
  OK(fea_multipatch_problem_get_num_free_dofs(pb, nf));
  fea_solver *s = NULL;
  OK(fea_solver_create_multipatch(ctx, pb, NULL, &s));
  OK(fea_solver_setup(s));
  double *x = malloc((size_t)*nf * 2 * sizeof *x);
  OK(fea_solver_solve(s, 1, NULL, 0, x, *nf));
  if (b) OK(fea_solver_solve(s, 1, b, *nf, x + *nf, *nf));
  fea_solver_destroy(&s);
  fea_multipatch_problem_destroy(&pb);
  fea_multipatch_destroy(&mp);
  for (int q = 0; q < 2; q++) fea_space_destroy(&patches[q]);
  return x;
}

static void compare(int dim) {
  fea_context *gpu = open_gpu(), *ref = open_ref();
  fea_index nf = 0, nf_ref = 0;
  double *probe = solve_on(ref, dim, NULL, &nf_ref);
  double *b = malloc((size_t)nf_ref * sizeof *b);
  for (fea_index i = 0; i < nf_ref; i++) b[i] = cos(0.37 * (double)i);
  double *xr = solve_on(ref, dim, b, &nf_ref), *xg = solve_on(gpu, dim, b, &nf);
  cr_assert_eq(nf, nf_ref);
  double d = 0, m = 0;
  for (fea_index i = 0; i < 2 * nf; i++) {
    d = fmax(d, fabs(xg[i] - xr[i]));
    m = fmax(m, fabs(xr[i]));
  }
  cr_assert_lt(d, 1e-10 * m, "%dD: /gpu/cuda and /cpu/ref differ by %g (max %g)", dim, d, m);
  free(probe), free(b), free(xr), free(xg);
  fea_context_destroy(&gpu);
  fea_context_destroy(&ref);
}

Test(cuda_multipatch, two_boxes_2d) { compare(2); }
Test(cuda_multipatch, two_boxes_3d) { compare(3); }
