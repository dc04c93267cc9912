/* Geometric multigrid through the public solver API (the algorithm itself is
 * tested in tests/unit/test-multigrid.c): the defaults, the paper's preset
 * and Chebyshev-PCG on CSR levels solve the manufactured problem to the
 * direct solution, the defaults' stats say what ran, many right-hand sides
 * equal single solves, the iteration count does not grow with the levels,
 * stats are filled, and bad input is refused cleanly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solve-common.h"

#include <feaccel/solver.h>

static manufactured sine2 = {2};

typedef struct square {
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
} square;

static square square_create(fea_context *ctx, fea_index n, int p1) {
  square s = {0};
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = md.n[1] = n;
  md.simplices = p1;
  cr_assert_eq(fea_mesh_create_structured(ctx, &md, &s.mesh), FEA_SUCCESS);
  cr_assert_eq(fea_space_create_lagrange(s.mesh, 1, FEA_NODES_EQUISPACED, &s.space), FEA_SUCCESS);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = sine_f;
  pd.source_user = &sine2;
  cr_assert_eq(fea_problem_create_poisson(s.space, &pd, &s.pb), FEA_SUCCESS);
  return s;
}

static void square_destroy(square *s) {
  fea_problem_destroy(&s->pb);
  fea_space_destroy(&s->space);
  fea_mesh_destroy(&s->mesh);
}

static double rel_diff(fea_index n, const double *x, const double *y) {
  double num = 0, den = 0;
  for (fea_index i = 0; i < n; i++) num += (x[i] - y[i]) * (x[i] - y[i]), den += y[i] * y[i];
  return sqrt(num / den);
}

static fea_context *ctx_open(void) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/threads", &ctx), FEA_SUCCESS);
  return ctx;
}

/* strong 0: the paper's preset; 1: Chebyshev(3)-PCG on CSR levels; 2: the
 * defaults (FEA_MULTIGRID_DESC_INIT). */
Test(multigrid_api, paper_and_strong_configurations_equal_direct_solve) {
  fea_context *ctx = ctx_open();
  static const char *const config[3] = {"Richardson", "Chebyshev-PCG", "defaults"};
  for (int strong = 0; strong <= 2; strong++) {
    for (int p1 = 0; p1 <= 1; p1++) {
      fea_index its[3] = {0};
      const fea_index sizes[3] = {32, 64, 128};
      for (int t = 0; t < 3; t++) {
        square s = square_create(ctx, sizes[t], p1);
        fea_index nf;
        cr_assert_eq(fea_problem_get_num_free_dofs(s.pb, &nf), FEA_SUCCESS);
        double *b = malloc((size_t)nf * sizeof *b), *xr = malloc((size_t)nf * sizeof *xr);
        double *x = malloc((size_t)nf * sizeof *x);
        fea_matrix *A = NULL;
        cr_assert_eq(fea_problem_assemble_reference(s.pb, b, &A), FEA_SUCCESS);
        memcpy(xr, b, (size_t)nf * sizeof *b);
        lapack_solve_csr(A, xr);
        fea_matrix_destroy(&A);
        fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
        if (strong == 2) d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_INIT;
        d.rtol = 1e-11;
        if (p1 && !strong) d.omega = 0.2; /* 0.3 is unstable for unscaled P1 (lambda_max ~ 8) */
        if (strong == 1)
          d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV, d.krylov = 1, d.pre_smooth = 3, d.post_smooth = 3;
        fea_solver *sv = NULL;
        cr_assert_eq(fea_solver_create_multigrid(ctx, s.pb, &d, &sv), FEA_SUCCESS, "%s",
                     fea_context_last_error(ctx));
        cr_assert_eq(fea_solver_setup(sv), FEA_SUCCESS, "%s", fea_context_last_error(ctx));
        cr_assert_eq(fea_solver_solve(sv, 1, NULL, 0, x, nf), FEA_SUCCESS, "%s",
                     fea_context_last_error(ctx));
        fea_multigrid_stats st = FEA_MULTIGRID_STATS_INIT;
        cr_assert_eq(fea_solver_get_multigrid_stats(sv, &st), FEA_SUCCESS);
        const double e = rel_diff(nf, x, xr);
        cr_log_info("%s %s n=%lld: %d levels, %lld iterations, factor %.3g, vs LAPACK %.2g",
                    config[strong], p1 ? "P1" : "Q1", (long long)sizes[t], st.num_levels,
                    (long long)st.iterations, st.convergence_factor, e);
        cr_expect(e < 1e-9, "differs from the direct solve by %.3g", e);
        cr_expect(st.converged && st.fine_dofs == nf && st.num_levels >= 5);
        /* What ran: the descriptor's smoother and iteration, and the level
         * operators as they run (the defaults' sum factorization is the
         * matrix-free stencil on every Q1 level but the coarsest, element
         * matrices on P1; the paper's CSR levels are written from the
         * stencil). */
        cr_expect(st.smoother == d.smoother && st.krylov == d.krylov &&
                      st.pre_smooth == d.pre_smooth && st.post_smooth == d.post_smooth,
                  "stats: smoother %d (%d + %d steps), krylov %d", (int)st.smoother, st.pre_smooth,
                  st.post_smooth, st.krylov);
        const fea_operator_kind ran = strong < 2 ? FEA_OPERATOR_CSR
                                      : p1       ? FEA_OPERATOR_MATFREE_ELEMENT_MATRIX
                                                 : FEA_OPERATOR_MATFREE_SUMFACT;
        cr_expect_eq(st.operator_kind, ran, "%s %s: operator kind %d ran, not %d", config[strong],
                     p1 ? "P1" : "Q1", (int)st.operator_kind, (int)ran);
        cr_expect_eq(st.stencil_levels, p1 ? 0 : st.num_levels - 1,
                     "%s %s: %d stencil levels of %d", config[strong], p1 ? "P1" : "Q1",
                     st.stencil_levels, st.num_levels);
        its[t] = st.iterations;
        free(b), free(xr), free(x);
        fea_solver_destroy(&sv);
        square_destroy(&s);
      }
      cr_expect(its[2] - its[0] <= 2, "iterations grow with the levels: %lld, %lld, %lld",
                (long long)its[0], (long long)its[1], (long long)its[2]);
    }
  }
  fea_context_destroy(&ctx);
}

/* Sum-factorization levels on a Q1 box run as the matrix-free stencil: the
 * same iterations and answer as CSR levels, 2D and 3D, both smoothers. */
Test(multigrid_api, stencil_levels_equal_csr_levels) {
  fea_context *ctx = ctx_open();
  for (int dim = 2; dim <= 3; dim++)
    for (int strong = 0; strong <= 1; strong++) {
      fea_mesh_desc md = FEA_MESH_DESC_INIT;
      md.dim = dim;
      for (int k = 0; k < dim; k++) md.n[k] = dim == 2 ? 64 : 16, md.upper[k] = 1.0 + 0.5 * k;
      manufactured mf = {dim};
      square s = {0};
      cr_assert_eq(fea_mesh_create_structured(ctx, &md, &s.mesh), FEA_SUCCESS);
      cr_assert_eq(fea_space_create_lagrange(s.mesh, 1, FEA_NODES_EQUISPACED, &s.space),
                   FEA_SUCCESS);
      fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
      pd.source = sine_f;
      pd.source_user = &mf;
      pd.sigma = 1.7;
      cr_assert_eq(fea_problem_create_poisson(s.space, &pd, &s.pb), FEA_SUCCESS);
      fea_index nf;
      cr_assert_eq(fea_problem_get_num_free_dofs(s.pb, &nf), FEA_SUCCESS);
      double *x[2] = {malloc((size_t)nf * sizeof(double)), malloc((size_t)nf * sizeof(double))};
      fea_index its[2];
      for (int k = 0; k < 2; k++) {
        fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
        d.rtol = 1e-11;
        d.operator_kind = k ? FEA_OPERATOR_MATFREE_SUMFACT : FEA_OPERATOR_CSR;
        d.jacobi = 1; /* sigma 1.7 on unequal cells: unscaled omega = 0.3 is unstable */
        if (strong || dim == 3)
          d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV, d.krylov = 1, d.pre_smooth = 3, d.post_smooth = 3;
        fea_solver *sv = NULL;
        cr_assert_eq(fea_solver_create_multigrid(ctx, s.pb, &d, &sv), FEA_SUCCESS, "%s",
                     fea_context_last_error(ctx));
        cr_assert_eq(fea_solver_setup(sv), FEA_SUCCESS, "%s", fea_context_last_error(ctx));
        cr_assert_eq(fea_solver_solve(sv, 1, NULL, 0, x[k], nf), FEA_SUCCESS, "%s",
                     fea_context_last_error(ctx));
        fea_multigrid_stats st = FEA_MULTIGRID_STATS_INIT;
        cr_assert_eq(fea_solver_get_multigrid_stats(sv, &st), FEA_SUCCESS);
        its[k] = st.iterations;
        fea_solver_destroy(&sv);
      }
      const double e = rel_diff(nf, x[1], x[0]);
      cr_log_info("%dD %s: CSR %lld, stencil %lld iterations, answers differ by %.2g", dim,
                  strong || dim == 3 ? "Chebyshev-PCG" : "Richardson", (long long)its[0],
                  (long long)its[1], e);
      cr_expect_eq(its[0], its[1], "%dD: %lld iterations with CSR levels, %lld with the stencil",
                   dim, (long long)its[0], (long long)its[1]);
      cr_expect(e < 1e-10, "%dD: the answers differ by %.3g", dim, e);
      free(x[0]), free(x[1]);
      square_destroy(&s);
    }
  fea_context_destroy(&ctx);
}

Test(multigrid_api, many_rhs_and_reuse) {
  fea_context *ctx = ctx_open();
  square s = square_create(ctx, 64, 0);
  fea_index nf;
  cr_assert_eq(fea_problem_get_num_free_dofs(s.pb, &nf), FEA_SUCCESS);
  fea_solver *sv = NULL;
  cr_assert_eq(fea_solver_create_multigrid(ctx, s.pb, NULL, &sv), FEA_SUCCESS);
  cr_assert_eq(fea_solver_setup(sv), FEA_SUCCESS);
  const fea_index k = 3;
  double *B = malloc((size_t)(nf * k) * sizeof *B), *X = malloc((size_t)(nf * k) * sizeof *X);
  double *x = malloc((size_t)nf * sizeof *x);
  for (fea_index i = 0; i < nf * k; i++) B[i] = sin(0.37 * (double)i);
  cr_assert_eq(fea_solver_solve(sv, k, B, nf, X, nf), FEA_SUCCESS);
  for (fea_index j = 0; j < k; j++) {
    cr_assert_eq(fea_solver_solve(sv, 1, B + j * nf, nf, x, nf), FEA_SUCCESS);
    cr_expect(rel_diff(nf, X + j * nf, x) < 1e-14, "column %lld", (long long)j);
  }
  /* In place: x may be b. */
  memcpy(x, B, (size_t)nf * sizeof *x);
  cr_assert_eq(fea_solver_solve(sv, 1, x, nf, x, nf), FEA_SUCCESS);
  cr_expect(rel_diff(nf, x, X) < 1e-14, "an in-place solve differs");
  /* In place with two columns (ldx = ldb); x just before b does not overlap it. */
  double *W = malloc((size_t)(2 * nf + 1) * sizeof *W);
  memcpy(W, B, (size_t)(2 * nf) * sizeof *W);
  cr_assert_eq(fea_solver_solve(sv, 2, W, nf, W, nf), FEA_SUCCESS);
  cr_expect(rel_diff(2 * nf, W, X) < 1e-14, "an in-place solve of two columns differs");
  cr_assert_eq(fea_solver_solve(sv, 1, B + nf, nf, B, nf), FEA_SUCCESS);
  cr_expect(rel_diff(nf, B, X + nf) < 1e-14, "x just before b: the solve differs");
  for (fea_index i = 0; i < nf; i++) B[i] = sin(0.37 * (double)i);
  /* Other overlaps are refused, naming both ranges; x is left alone. */
  for (fea_index i = 0; i < 2 * nf + 1; i++) W[i] = 1.0;
  cr_expect_eq(fea_solver_solve(sv, 2, W, nf, W + 1, nf), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(ctx), "overlap") != NULL, "%s",
            fea_context_last_error(ctx));
  cr_expect_eq(fea_solver_solve(sv, 1, W + 1, nf, W, nf), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_solver_solve(sv, 1, W, nf, W + nf - 1, nf), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_solver_solve(sv, 2, W, nf, W, nf + 1), FEA_ERR_INVALID_ARG);
  for (fea_index i = 0; i < 2 * nf + 1; i++) cr_assert_eq(W[i], 1.0, "a refused solve wrote x");
  free(W);
  /* A new problem (sigma = 1.5) divides the solution by 1.5. */
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma = 1.5;
  fea_problem *p2 = NULL;
  cr_assert_eq(fea_problem_create_poisson(s.space, &pd, &p2), FEA_SUCCESS);
  cr_assert_eq(fea_solver_set_problem(sv, p2), FEA_SUCCESS);
  cr_expect_eq(fea_solver_solve(sv, 1, B, nf, x, nf), FEA_ERR_STATE);
  cr_assert_eq(fea_solver_setup(sv), FEA_SUCCESS, "%s", fea_context_last_error(ctx));
  cr_assert_eq(fea_solver_solve(sv, 1, B, nf, x, nf), FEA_SUCCESS);
  for (fea_index i = 0; i < nf; i++) x[i] *= 1.5;
  cr_expect(rel_diff(nf, x, X) < 1e-9);
  fea_problem_destroy(&p2);
  free(B), free(X), free(x);
  fea_solver_destroy(&sv);
  square_destroy(&s);
  fea_context_destroy(&ctx);
}

Test(multigrid_api, bad_input_is_refused) {
  fea_context *ctx = ctx_open();
  square s = square_create(ctx, 16, 1);
  fea_solver *sv = NULL;
  /* The paper's omega = 0.3 diverges on unscaled P1 (lambda_max ~ 7.9). */
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  cr_expect_eq(fea_solver_create_multigrid(ctx, s.pb, &d, &sv), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(ctx), "lambda_max") != NULL, "%s",
            fea_context_last_error(ctx));
  cr_expect_null(sv);
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_INIT;
  d.cycle = (fea_mg_cycle)5;
  cr_expect_eq(fea_solver_create_multigrid(ctx, s.pb, &d, &sv), FEA_ERR_INVALID_ARG);
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_INIT;
  d.omega = -1;
  cr_expect_eq(fea_solver_create_multigrid(ctx, s.pb, &d, &sv), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(ctx), "omega") != NULL);
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_INIT;
  d.krylov = 1;
  d.jacobi = 1;
  d.omega = 0.6;
  d.post_smooth = 0; /* CG needs a symmetric cycle */
  cr_expect_eq(fea_solver_create_multigrid(ctx, s.pb, &d, &sv), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(ctx), "post_smooth 0") != NULL, "%s",
            fea_context_last_error(ctx));
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_INIT;
  d.size = 3;
  cr_expect_eq(fea_solver_create_multigrid(ctx, s.pb, &d, &sv), FEA_ERR_INVALID_ARG);
  cr_expect_null(sv);
  /* Over the memory budget: refused before any level is built. */
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_INIT;
  d.omega = 0.1;
  cr_expect_eq(fea_context_set_memory_limit(ctx, 1000), FEA_SUCCESS);
  cr_expect_eq(fea_solver_create_multigrid(ctx, s.pb, &d, &sv), FEA_ERR_OUT_OF_MEMORY);
  cr_expect(strstr(fea_context_last_error(ctx), "the finest multigrid level of") != NULL, "%s",
            fea_context_last_error(ctx));
  cr_expect_null(sv);
  cr_expect_eq(fea_context_set_memory_limit(ctx, 0), FEA_SUCCESS);
  /* B-spline spaces are served (tests/api/test-multigrid-bspline.c), the defaults included. */
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 2;
  bd.degree[0] = bd.degree[1] = 2;
  bd.n[0] = bd.n[1] = 8;
  fea_space *bs = NULL;
  fea_problem *bp = NULL;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &bs), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  cr_assert_eq(fea_problem_create_poisson(bs, &pd, &bp), FEA_SUCCESS);
  cr_expect_eq(fea_solver_create_multigrid(ctx, bp, NULL, &sv), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_solver_destroy(&sv);
  fea_problem_destroy(&bp);
  fea_space_destroy(&bs);
  /* Kind-specific getters refuse other kinds. */
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_INIT;
  d.jacobi = 1;
  d.omega = 0.6;
  cr_assert_eq(fea_solver_create_multigrid(ctx, s.pb, &d, &sv), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_prehandled_stats ps = FEA_PREHANDLED_STATS_INIT;
  cr_expect_eq(fea_solver_get_prehandled_stats(sv, &ps), FEA_ERR_INVALID_ARG);
  fea_solver_destroy(&sv);
  square_destroy(&s);
  fea_context_destroy(&ctx);
}
