/* Cost-model API: the paper's closed forms against sums written out by hand,
 * the 3D memory example of the paper, the exact counts against the solver's
 * own tree and counted stats, and the fitted exponents of the exact counts
 * against the theory (Wozniak et al. 2014, §5; docs/multifrontal.md, "Costs"). */
#include <math.h>
#include <stdio.h>

#include "api-common.h"
#include "ring-common.h"

#include <feaccel/solver.h>

static fea_cost paper(int dim, int p, fea_index n, int nproc) {
  fea_cost_query q = FEA_COST_QUERY_INIT;
  q.dim = dim;
  q.p = p;
  q.n = n;
  q.nproc = nproc;
  fea_cost c = FEA_COST_INIT;
  OK(fea_cost_model_paper(&q, &c));
  return c;
}

static fea_cost exact(fea_context *ctx, int dim, int p, fea_index n, int nproc) {
  fea_cost_query q = FEA_COST_QUERY_INIT;
  q.dim = dim;
  q.p = p;
  q.n = n;
  q.nproc = nproc;
  fea_cost c = FEA_COST_INIT;
  OK(fea_cost_model_exact(ctx, &q, &c));
  return c;
}

static void expect_rel(double got, double want, double tol, const char *what) {
  cr_assert(fabs(got - want) <= tol * fabs(want), "%s = %.17g, expected %.17g (rel. tol %g)", what,
            got, want, tol);
}

/* ------------------------------------------------------------------------ */
/* The paper's model                                                         */

/* Section 7.3: 8 * 2 * 3^2 * (5e5)^(4/3) = 5.71e9 bytes, "5.5 GB". */
Test(cost, memory_3d_example) {
  double bytes = 0;
  OK(fea_cost_memory_3d_paper(3, 5e5, &bytes));
  expect_rel(bytes, 144.0 * 5e5 * cbrt(5e5), 1e-14, "8*2*p^2*N^(4/3)");
  cr_assert(fabs(bytes - 5.5e9) <= 0.05 * 5.5e9, "%.4g bytes is not about 5.5e9", bytes);
}

/* Eqs. (25)-(27) written out for s = 2 (4 leaf patches of p+1 elements per
 * direction), unit constants, 8 bytes per entry. */
Test(cost, paper_small_trees_by_hand) {
  /* 1D p = 2, n = 12: FLOPS 2^2 p^2 + 2^1 p^3, MFPC p + p^2, memory 2^2 p + 2^1 p^2 */
  fea_cost c = paper(1, 2, 12, 0);
  cr_assert_eq(c.flops, 4 * 4 + 2 * 8);
  cr_assert_eq(c.critical_path_flops, 2 + 4);
  cr_assert_eq(c.memory_bytes, 8.0 * (4 * 2 + 2 * 4));
  cr_assert_eq(c.num_levels, 3);
  cr_assert_eq(c.root_front, 2); /* 2^(0 s) p */
  /* 2D p = 1, n = 8: FLOPS 2^4 p^4 + 2^2 2^3 p^6 = 16 + 32, MFPC p^2 + 2^2 p^4 = 5,
   * memory 2^4 p^2 + 2^2 2^2 p^4 = 32 entries */
  c = paper(2, 1, 8, 0);
  cr_assert_eq(c.flops, 48);
  cr_assert_eq(c.critical_path_flops, 5);
  cr_assert_eq(c.memory_bytes, 8.0 * 32);
  cr_assert_eq(c.root_front, 4); /* 2^s p^2 */
  /* 2D p = 2, n = 12: 16 * 16 + 4 * 8 * 64; 4 + 4 * 16; 16 * 4 + 4 * 4 * 16 */
  c = paper(2, 2, 12, 0);
  cr_assert_eq(c.flops, 2304);
  cr_assert_eq(c.critical_path_flops, 68);
  cr_assert_eq(c.memory_bytes, 8.0 * 320);
  /* 3D p = 2, n = 12: FLOPS 2^6 p^6 + 2^3 2^6 p^9; MFPC and memory with the
   * leaf term p^3 (the paper prints p^4: erratum 5) */
  c = paper(3, 2, 12, 0);
  cr_assert_eq(c.flops, 64 * 64 + 8 * 64 * 512);
  cr_assert_eq(c.critical_path_flops, 8 + 16 * 64);
  cr_assert_eq(c.memory_bytes, 8.0 * (64 * 8 + 8 * 16 * 64));
}

/* Eq. (23) by hand, 2D p = 1, n = 8 (16 leaves, 4 patches at level 1). */
Test(cost, paper_eq23_by_hand) {
  /* P = 1: the sequential flops */
  cr_assert_eq(paper(2, 1, 8, 1).critical_path_flops, 48);
  /* P = 2: 16/2 rounds of 1 + 4/2 rounds of q^3 = 8 */
  cr_assert_eq(paper(2, 1, 8, 2).critical_path_flops, 8 + 2 * 8);
  /* P = 8: 2 rounds at the leaves; level 1: 1 round, N~ = 2 per patch: 8 / 2 */
  cr_assert_eq(paper(2, 1, 8, 8).critical_path_flops, 2 + 4);
  /* P >= every level's need: eq. (24) */
  cr_assert_eq(paper(2, 1, 8, 1 << 20).critical_path_flops, paper(2, 1, 8, 0).critical_path_flops);
}

/* The printed sums for deeper trees, summed independently here. */
Test(cost, paper_printed_sums) {
  for (int d = 1; d <= 3; d++) {
    for (int p = 1; p <= 4; p++) {
      const int s = 6;
      fea_index n = (fea_index)(p + 1) << s;
      double pd = pow(p, d), F = ldexp(pow(pd, 2), d * s), M = ldexp(pd, d * s), C = pd, root;
      for (int i = 1; i < s; i++) {
        double q = ldexp(pd, (d - 1) * i);
        F += ldexp(q * q * q, d * (s - i));
        M += ldexp(q * q, d * (s - i));
        C += q * q;
      }
      root = ldexp(pd, (d - 1) * s);
      fea_cost c = paper(d, p, n, 0);
      expect_rel(c.flops, F, 1e-14, "flops");
      expect_rel(c.memory_bytes, 8 * M, 1e-14, "memory");
      expect_rel(c.critical_path_flops, C, 1e-14, "MFPC");
      cr_assert_eq(c.num_levels, s + 1);
      cr_assert_eq(c.root_front, (fea_index)root);
      /* n not (p+1) 2^s: the depth of pairwise merges over ceil(n/(p+1)) leaves */
      cr_assert_eq(paper(d, p, n - (p + 1) + 1, 0).num_levels, s + 1);
      cr_assert_eq(paper(d, p, n + 1, 0).num_levels, s + 2);
    }
  }
}

/* Figs. 9-11: 1D, 2048 elements. p = 1 has 1024 leaves, s = 10, unit sizes. */
Test(cost, strong_scaling_1d) {
  fea_cost_query q = FEA_COST_QUERY_INIT;
  q.dim = 1;
  q.p = 1;
  q.n = 2048;
  double S = 0, E = 0;
  q.nproc = 1;
  OK(fea_cost_strong_scaling_paper(&q, &S, &E));
  cr_assert_eq(S, 1.0);
  cr_assert_eq(E, 1.0);
  q.nproc = 2; /* every level has an even number of patches: perfect */
  OK(fea_cost_strong_scaling_paper(&q, &S, &E));
  cr_assert_eq(S, 2.0);
  cr_assert_eq(E, 1.0);
  q.nproc = 2048; /* one round per level of cost 1: 2046 / 10 */
  OK(fea_cost_strong_scaling_paper(&q, &S, &E));
  expect_rel(S, 204.6, 1e-14, "speedup");
  expect_rel(E, 204.6 / 2048, 1e-14, "efficiency");
  for (q.p = 1; q.p <= 4; q.p++) {
    double last = 0;
    for (q.nproc = 1; q.nproc <= 4096; q.nproc *= 2) {
      OK(fea_cost_strong_scaling_paper(&q, &S, &E));
      cr_assert(S >= last && S <= q.nproc && E <= 1.0 && E > 0, "p %d P %d: S %g E %g", q.p,
                q.nproc, S, E);
      last = S;
    }
  }
}

Test(cost, bad_queries) {
  fea_cost_query q = FEA_COST_QUERY_INIT;
  fea_cost c = FEA_COST_INIT;
  q.dim = 4;
  EXPECT_FAIL(fea_cost_model_paper(&q, &c), FEA_ERR_INVALID_ARG, NULL, "query.dim is 4");
  q.dim = 2;
  q.p = 9;
  EXPECT_FAIL(fea_cost_model_paper(&q, &c), FEA_ERR_INVALID_ARG, NULL, "query.p is 9");
  q.p = 0;
  EXPECT_FAIL(fea_cost_model_paper(&q, &c), FEA_ERR_INVALID_ARG, NULL, "query.p is 0");
  q.p = 2;
  q.n = 0;
  EXPECT_FAIL(fea_cost_model_paper(&q, &c), FEA_ERR_INVALID_ARG, NULL, "query.n is 0");
  q.n = 4;
  q.nproc = -3;
  EXPECT_FAIL(fea_cost_model_paper(&q, &c), FEA_ERR_INVALID_ARG, NULL, "query.nproc is -3");
  q.nproc = 0;
  EXPECT_FAIL(fea_cost_strong_scaling_paper(&q, NULL, NULL), FEA_ERR_INVALID_ARG, NULL,
              "query.nproc is 0");
  q.size = 8;
  EXPECT_FAIL(fea_cost_model_paper(&q, &c), FEA_ERR_INVALID_ARG, NULL, "query.size is 8");
  q.size = sizeof q;
  c.size = 4;
  EXPECT_FAIL(fea_cost_model_paper(&q, &c), FEA_ERR_INVALID_ARG, NULL, "out.size is 4");
  EXPECT_FAIL(fea_cost_model_paper(NULL, &c), FEA_ERR_INVALID_ARG, NULL, "'q' is NULL");
  double b;
  EXPECT_FAIL(fea_cost_memory_3d_paper(0, 10, &b), FEA_ERR_INVALID_ARG, NULL, "p is 0");
  EXPECT_FAIL(fea_cost_memory_3d_paper(2, NAN, &b), FEA_ERR_INVALID_ARG, NULL, "N is nan");
  EXPECT_FAIL(fea_cost_memory_3d_paper(2, 0.5, &b), FEA_ERR_INVALID_ARG, NULL, "N is 0.5");

  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  c.size = sizeof c;
  q.n = 0;
  EXPECT_FAIL(fea_cost_model_exact(ctx, &q, &c), FEA_ERR_INVALID_ARG, ctx, "query.n is 0");
  int fits;
  EXPECT_FAIL(fea_cost_model_fits(ctx, &q, 1u << 30, &fits), FEA_ERR_INVALID_ARG, ctx,
              "query.n is 0");
  EXPECT_FAIL(fea_cost_model_exact(NULL, &q, &c), FEA_ERR_INVALID_ARG, NULL, "'ctx' is NULL");
  OK(fea_context_destroy(&ctx));
}

/* ------------------------------------------------------------------------ */
/* Exact counts                                                              */

static double node_flops(double q, double r) { /* the convention of solver.h's docs */
  return q * q * q / 3 + q * q / 2 + q / 6 + r * q * q + q * r * (r + 1);
}

static const double pi = 3.14159265358979323846;

static double sine_f(const double *x, void *user) {
  const int dim = *(const int *)user;
  double u = dim * pi * pi;
  for (int k = 0; k < dim; k++) u *= sin(pi * x[k]);
  return u;
}

/* The exact model equals the sum over the solver's tree and the counts a
 * real setup reports, for odd and even n, 1D to 3D. */
Test(cost, exact_equals_solver) {
  static const struct {
    int dim, p;
    fea_index n;
  } cases[] = {{1, 1, 7}, {1, 3, 40}, {2, 2, 24}, {2, 3, 17}, {3, 2, 6}, {3, 1, 9}};
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int dim = cases[k].dim, p = cases[k].p;
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = dim;
    for (int j = 0; j < 3; j++) {
      d.degree[j] = p;
      d.n[j] = cases[k].n;
    }
    fea_space *space = NULL;
    fea_problem *pb = NULL;
    fea_solver *s = NULL;
    OK(fea_space_create_bspline(ctx, &d, &space));
    fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
    pd.source = sine_f;
    pd.source_user = &dim;
    OK(fea_problem_create_poisson(space, &pd, &pb));
    OK(fea_solver_create_multifrontal(ctx, space, pb, NULL, &s));
    fea_solver_stats st = FEA_SOLVER_STATS_INIT;
    OK(fea_solver_get_stats(s, &st));

    fea_cost c = exact(ctx, dim, p, cases[k].n, 0), c1 = exact(ctx, dim, p, cases[k].n, 1);
    double sum = 0, crit1 = 0;
    fea_index root_front = 0;
    for (fea_index i = 0; i < st.num_nodes; i++) {
      fea_solver_node nd = {.size = sizeof nd};
      OK(fea_solver_get_node(s, i, &nd));
      sum += node_flops((double)nd.q, (double)nd.r);
      crit1 += node_flops((double)nd.q, (double)nd.r);
      if (nd.parent < 0) root_front = nd.q + nd.r;
    }
    cr_log_info("%dD p %d n %lld: %lld nodes, flops %.6g, crit(inf) %.6g", dim, p,
                (long long)cases[k].n, (long long)st.num_nodes, c.flops, c.critical_path_flops);
    expect_rel(c.flops, sum, 1e-12, "exact flops vs the sum over the nodes");
    expect_rel(c.flops, st.flops, 1e-12, "exact flops vs the solver's stats");
    expect_rel(c1.critical_path_flops, crit1, 1e-12, "critical path on 1 processor");
    cr_assert_eq(c.memory_bytes, (double)st.factor_bytes);
    cr_assert_eq(c.num_levels, st.num_levels);
    cr_assert_eq(c.root_front, root_front);
    cr_assert(c.critical_path_flops < c.flops || st.num_nodes == 1);

    /* After a real setup the counted figures are unchanged. */
    OK(fea_solver_setup(s));
    fea_solver_stats after = FEA_SOLVER_STATS_INIT;
    OK(fea_solver_get_stats(s, &after));
    expect_rel(c.flops, after.flops, 1e-12, "exact flops vs the solver after setup");
    int fits = -1;
    fea_cost_query q = FEA_COST_QUERY_INIT;
    q.dim = dim;
    q.p = p;
    q.n = cases[k].n;
    OK(fea_cost_model_fits(ctx, &q, after.peak_bytes, &fits));
    cr_assert_eq(fits, 1);
    OK(fea_cost_model_fits(ctx, &q, after.peak_bytes - 1, &fits));
    cr_assert_eq(fits, 0);
    OK(fea_solver_destroy(&s));
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&space));
  }
  OK(fea_context_destroy(&ctx));
}

/* Least-squares slope of log y over log x. */
static double loglog_slope(int m, const double *x, const double *y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < m; i++) {
    double lx = log(x[i]), ly = log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

static double free_dofs(int dim, int p, fea_index n) { return pow((double)(n + p - 2), dim); }

/* Spec §6.4: 1D flops ~ N p^2 and memory ~ N p; 2D flops ~ N^1.5 p^3 and
 * memory ~ p^2 N log N; fitted over n doubling, large n. */
Test(cost, exact_exponents) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  enum { M = 5, M2D = 4 };
  double N[M], F[M], Mem[M], MemLog[M];
  for (int p = 1; p <= 3; p++) {
    for (int i = 0; i < M; i++) {
      fea_index n = (fea_index)4096 << i;
      fea_cost c = exact(ctx, 1, p, n, 0);
      N[i] = free_dofs(1, p, n);
      F[i] = c.flops;
      Mem[i] = c.memory_bytes;
    }
    double ef = loglog_slope(M, N, F), em = loglog_slope(M, N, Mem);
    cr_log_info("1D p %d: flops ~ N^%.3f, memory ~ N^%.3f", p, ef, em);
    cr_assert(fabs(ef - 1.0) <= 0.1, "1D p %d: flops ~ N^%.3f, expected N^1", p, ef);
    cr_assert(fabs(em - 1.0) <= 0.1, "1D p %d: memory ~ N^%.3f, expected N^1", p, em);
  }
  for (int p = 1; p <= 3; p++) {
    /* From 128 x 128 elements: below, q = 4ap - 3p^2 is far from 4ap and the
     * local slope of the flops is still above 1.5 (1.62 over 32..512, p = 3). */
    for (int i = 0; i < M2D; i++) {
      fea_index n = (fea_index)128 << i; /* up to 1024 x 1024 elements */
      fea_cost c = exact(ctx, 2, p, n, 0);
      N[i] = free_dofs(2, p, n);
      F[i] = c.flops;
      Mem[i] = c.memory_bytes;
      MemLog[i] = c.memory_bytes / log(N[i] / p);
    }
    double ef = loglog_slope(M2D, N, F), em = loglog_slope(M2D, N, MemLog),
           eraw = loglog_slope(M2D, N, Mem);
    cr_log_info("2D p %d: flops ~ N^%.3f, memory/log(N/p) ~ N^%.3f (memory ~ N^%.3f)", p, ef, em,
                eraw);
    cr_assert(fabs(ef - 1.5) <= 0.1, "2D p %d: flops ~ N^%.3f, expected N^1.5", p, ef);
    cr_assert(fabs(em - 1.0) <= 0.1, "2D p %d: memory / log(N/p) ~ N^%.3f, expected N^1", p, em);
  }
  OK(fea_context_destroy(&ctx));
}

/* Successive p at (nearly) fixed N: 1D flops/N grow like p^2, 2D flops/N^1.5
 * like p^3, 2D memory/(N log(N/p)) like p^2. Each ratio between successive p
 * within 15 % of the theory's and the fitted exponent of p over p = 2..5
 * within 0.4: leaf patches of p+1 elements and the boundary make small p
 * deviate (the paper's closed forms carry the same p/(p+1) factor), e.g. 1D
 * flops p = 4/3 is 1.63 against 1.78. */
Test(cost, exact_p_dependence) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  enum { NP = 4 };
  double P[NP], F1[NP], F2[NP], M2[NP];
  for (int k = 0; k < NP; k++) {
    int p = k + 2;
    P[k] = p;
    fea_index n1 = 60000, n2 = 360;
    fea_cost c1 = exact(ctx, 1, p, n1, 0), c2 = exact(ctx, 2, p, n2, 0);
    double N1 = free_dofs(1, p, n1), N2 = free_dofs(2, p, n2);
    F1[k] = c1.flops / N1;
    F2[k] = c2.flops / pow(N2, 1.5);
    M2[k] = c2.memory_bytes / (N2 * log(N2 / p));
    if (k > 0) {
      double t2 = pow(P[k] / P[k - 1], 2), t3 = pow(P[k] / P[k - 1], 3);
      double r1 = F1[k] / F1[k - 1], r2 = F2[k] / F2[k - 1], rm = M2[k] / M2[k - 1];
      cr_log_info(
          "p %d/%d: 1D flops %.3f (p^2: %.3f), 2D flops %.3f (p^3: %.3f), 2D memory "
          "%.3f (p^2)",
          p, p - 1, r1, t2, r2, t3, rm);
      cr_assert(fabs(r1 / t2 - 1) <= 0.15, "1D flops ratio p %d/%d: %.3f, p^2 gives %.3f", p, p - 1,
                r1, t2);
      cr_assert(fabs(r2 / t3 - 1) <= 0.15, "2D flops ratio p %d/%d: %.3f, p^3 gives %.3f", p, p - 1,
                r2, t3);
      cr_assert(fabs(rm / t2 - 1) <= 0.15, "2D memory ratio p %d/%d: %.3f, p^2 gives %.3f", p,
                p - 1, rm, t2);
    }
  }
  double e1 = loglog_slope(NP, P, F1), e2 = loglog_slope(NP, P, F2), em = loglog_slope(NP, P, M2);
  cr_log_info("p exponents: 1D flops %.3f, 2D flops %.3f, 2D memory %.3f", e1, e2, em);
  cr_assert(fabs(e1 - 2.0) <= 0.4, "1D flops/N ~ p^%.3f, expected p^2", e1);
  cr_assert(fabs(e2 - 3.0) <= 0.4, "2D flops/N^1.5 ~ p^%.3f, expected p^3", e2);
  cr_assert(fabs(em - 2.0) <= 0.4, "2D memory/(N log(N/p)) ~ p^%.3f, expected p^2", em);
  OK(fea_context_destroy(&ctx));
}

/* Problems far beyond the budget are answered "does not fit" from the
 * tree's lower bound, without the O(DoF) tree: 3D p = 3 with n = 1024 (1.1e9
 * DoFs; building its tree needed more than 8.5 GB) and n = 4096 (6.9e10
 * DoFs) against 8 GiB. The context's limit is set far below what the tree
 * would take, so that building it would fail with FEA_ERR_OUT_OF_MEMORY. */
Test(cost, fits_refused_without_the_tree) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  OK(fea_context_set_memory_limit(ctx, 256u << 20));
  fea_cost_query q = FEA_COST_QUERY_INIT;
  q.dim = 3;
  q.p = 3;
  const fea_index sizes[2] = {1024, 4096};
  for (int k = 0; k < 2; k++) {
    q.n = sizes[k];
    int fits = -1;
    OK(fea_cost_model_fits(ctx, &q, 8ull << 30, &fits));
    cr_assert_eq(fits, 0, "n = %lld", (long long)q.n);
  }
  /* The exact model needs the tree: refused with both figures, before it is
   * built. At n = 256 (1.7e7 DoFs, 524,287 nodes) the bound asks 3.5 GB, 13
   * times the limit, and takes 0.1 s; at n = 1024 (234 GB) the bound's
   * O(nodes) walk over 33,554,431 nodes took 9-15 s. */
  q.n = 256;
  fea_cost c = FEA_COST_INIT;
  EXPECT_FAIL(fea_cost_model_exact(ctx, &q, &c), FEA_ERR_OUT_OF_MEMORY, ctx,
              "the symbolic tree of 17373979 DoFs");
  OK(fea_context_destroy(&ctx));
}

static void tensor_2(const double *x, double *A, void *user) {
  const int dim = *(const int *)user;
  for (int i = 0; i < dim * dim; i++) A[i] = i % (dim + 1) == 0 ? 2.0 + x[0] : 0.0;
  A[1] = A[dim] = 0.4;
}

/* The terms a problem may add (a NURBS map, c u, A(x)) change the elements'
 * integration, not the tree, and its Neumann and Robin sides add their DoFs
 * as unknowns: the solver's factorization of such a problem counts exactly
 * what the model gives for the box with the same degree, element counts and
 * sides. */
Test(cost, mapped_problems_factor_as_the_box) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  for (int dim = 2; dim <= 3; dim++) {
    const int p = dim == 2 ? 3 : 2;
    const fea_index n = dim == 2 ? 17 : 6;
    ring q;
    ring_init(&q, dim, 1.0);
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = dim;
    for (int j = 0; j < dim; j++) d.degree[j] = p, d.n[j] = n;
    d.geometry = &q.g;
    fea_space *space = NULL;
    fea_problem *pb = NULL;
    fea_solver *s = NULL;
    OK(fea_space_create_bspline(ctx, &d, &space));
    ring_exact e = {dim, 2.0};
    fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
    pd.source = ring_f;
    pd.source_user = &e;
    pd.reaction = 2.0;
    pd.sigma_tensor = tensor_2;
    pd.sigma_tensor_user = &e.dim;
    pd.sides[FEA_SIDE_EAST].type = FEA_BC_ROBIN;
    pd.sides[FEA_SIDE_EAST].alpha = 1.5;
    pd.sides[FEA_SIDE_NORTH].type = FEA_BC_NEUMANN;
    OK(fea_problem_create_poisson(space, &pd, &pb));
    OK(fea_solver_create_multifrontal(ctx, space, pb, NULL, &s));
    OK(fea_solver_setup(s));
    fea_solver_stats st = FEA_SOLVER_STATS_INIT;
    OK(fea_solver_get_stats(s, &st));
    /* The query names the natural sides; the geometry and the terms are not its business. */
    const fea_bc_type sides[6] = {FEA_BC_DIRICHLET, FEA_BC_ROBIN,     FEA_BC_DIRICHLET,
                                  FEA_BC_NEUMANN,   FEA_BC_DIRICHLET, FEA_BC_DIRICHLET};
    fea_cost_query cq = FEA_COST_QUERY_INIT;
    cq.dim = dim, cq.p = p, cq.n = n, cq.sides = sides;
    fea_cost c = FEA_COST_INIT;
    OK(fea_cost_model_exact(ctx, &cq, &c));
    cr_log_info(
        "%dD p %d n %lld, NURBS, c, A(x), Robin east, Neumann north: %.6g flops (box, all "
        "Dirichlet: %.6g)",
        dim, p, (long long)n, st.flops, exact(ctx, dim, p, n, 0).flops);
    expect_rel(c.flops, st.flops, 1e-12, "the model's flops vs the mapped problem's");
    cr_assert_eq(c.memory_bytes, (double)st.factor_bytes);
    cr_assert_eq(c.num_levels, st.num_levels);
    cr_assert(exact(ctx, dim, p, n, 0).flops < c.flops, "natural sides add unknowns");
    fea_solver_destroy(&s);
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&space));
  }
  OK(fea_context_destroy(&ctx));
}

Test(cost, bad_sides_are_named) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  const fea_bc_type sides[4] = {FEA_BC_DIRICHLET, FEA_BC_NEUMANN, (fea_bc_type)7, FEA_BC_ROBIN};
  fea_cost_query q = FEA_COST_QUERY_INIT;
  q.p = 2, q.n = 4, q.sides = sides;
  fea_cost c = FEA_COST_INIT;
  EXPECT_FAIL(fea_cost_model_exact(ctx, &q, &c), FEA_ERR_INVALID_ARG, ctx, "query.sides[2] is 7");
  int fits = -1;
  EXPECT_FAIL(fea_cost_model_fits(ctx, &q, 1 << 30, &fits), FEA_ERR_INVALID_ARG, ctx,
              "query.sides[2] is 7");
  cr_assert_eq(fits, -1);
  OK(fea_context_destroy(&ctx));
}
