/* B-spline and NURBS multigrid through the public solver API (issue #40):
 * CG preconditioned by h-multigrid on the quarter annulus (2D, p = 2..5)
 * and the thick quarter ring (3D, p = 2..4), exact NURBS patches, with the
 * overlapping Schwarz smoother. Checked against independent facts: the
 * solution equals the multifrontal solver's, the iteration counts stay
 * bounded as h halves and as p grows (the acceptance bounds on
 * smaller sizes), the point smoother (Chebyshev-Jacobi) needs several times
 * the Schwarz smoother's iterations at p = 5 (the reason for the blocks),
 * Neumann sides carry over, solves repeat to the last bit on two threads,
 * and bad input is refused cleanly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ring-common.h"

#include <feaccel/solver.h>

typedef struct ring_case {
  ring geo;
  ring_exact ex;
  fea_space *space;
  fea_problem *pb;
  fea_index nf;
} ring_case;

/* The ring of dimension dim with degree p and n elements per direction;
 * neumann: the arc's end (side north, theta = pi/2) natural with zero flux. */
static void ring_case_create(fea_context *ctx, ring_case *c, int dim, int p, fea_index n,
                             int neumann) {
  memset(c, 0, sizeof *c);
  ring_init(&c->geo, dim, 1.0);
  c->ex.dim = dim;
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = dim;
  for (int k = 0; k < dim; k++) bd.degree[k] = p, bd.n[k] = n;
  bd.geometry = &c->geo.g;
  OK(fea_space_create_bspline(ctx, &bd, &c->space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = ring_f;
  pd.source_user = &c->ex;
  pd.dirichlet = ring_u;
  pd.dirichlet_user = &c->ex;
  if (neumann) pd.sides[FEA_SIDE_NORTH].type = FEA_BC_NEUMANN;
  OK(fea_problem_create_poisson(c->space, &pd, &c->pb));
  OK(fea_problem_get_num_free_dofs(c->pb, &c->nf));
}

static void ring_case_destroy(ring_case *c) {
  fea_problem_destroy(&c->pb);
  fea_space_destroy(&c->space);
}

static fea_context *ctx_open(void) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  return ctx;
}

/* CG + multigrid with smoother sm to rtol; the solution (free DoFs) into x
 * unless NULL, the stats into st. */
static void mg_solve(fea_context *ctx, ring_case *c, fea_mg_smoother sm, double rtol, double *x,
                     fea_multigrid_stats *st) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  d.smoother = sm;
  d.rtol = rtol;
  d.max_iterations = 200;
  fea_solver *sv = NULL;
  OK(fea_solver_create_multigrid(ctx, c->pb, &d, &sv));
  OK(fea_solver_setup(sv));
  double *y = x ? x : malloc((size_t)c->nf * sizeof *y);
  OK(fea_solver_solve(sv, 1, NULL, 0, y, c->nf));
  *st = (fea_multigrid_stats)FEA_MULTIGRID_STATS_INIT;
  OK(fea_solver_get_multigrid_stats(sv, st));
  cr_assert(st->converged, "not converged in %lld iterations", (long long)st->iterations);
  if (!x) free(y);
  fea_solver_destroy(&sv);
}

/* max |u - v| / max |v| over every DoF (the multifrontal solution v). */
static double rel_max_diff(fea_index n, const double *u, const double *v) {
  double num = 0.0, den = 0.0;
  for (fea_index i = 0; i < n; i++) {
    num = fmax(num, fabs(u[i] - v[i]));
    den = fmax(den, fabs(v[i]));
  }
  return num / den;
}

/* The multigrid solution equals the multifrontal one (to the solver
 * tolerance), 2D and 3D, with a Neumann side and without; the stats say
 * what ran. */
Test(multigrid_bspline, equals_multifrontal_solution) {
  fea_context *ctx = ctx_open();
  /* 2D p = 3 on 24 elements: levels 24, 12, 6, 3 (odd: the coarsest, 3 x 3
   * elements, is factored densely with its free DoFs). */
  const int cases[4][4] = {{2, 3, 24, 0}, {2, 5, 16, 1}, {3, 2, 4, 0}, {3, 3, 4, 1}};
  for (int t = 0; t < 4; t++) {
    const int dim = cases[t][0], p = cases[t][1], neumann = cases[t][3];
    ring_case c;
    ring_case_create(ctx, &c, dim, p, cases[t][2], neumann);
    double *x = malloc((size_t)c.nf * sizeof *x);
    fea_space_info info = FEA_SPACE_INFO_INIT;
    OK(fea_space_get_info(c.space, &info));
    double *u = malloc((size_t)info.num_dofs * sizeof *u);
    fea_multigrid_stats st;
    mg_solve(ctx, &c, FEA_MG_SMOOTHER_SCHWARZ, 1e-12, x, &st);
    OK(fea_problem_expand_solution(c.pb, x, u));
    double *v = solve_direct(ctx, c.space, c.pb);
    const double e = rel_max_diff(info.num_dofs, u, v);
    cr_log_info("%dD p = %d%s: %lld iterations, %d levels, differs from multifrontal by %.2g", dim,
                p, neumann ? " (Neumann side)" : "", (long long)st.iterations, st.num_levels, e);
    cr_expect(e < 1e-9, "%dD p = %d: the solution differs from the multifrontal one by %.3g", dim,
              p, e);
    cr_expect_eq(st.smoother, FEA_MG_SMOOTHER_SCHWARZ);
    /* the default kind: the ring's levels are Kronecker terms, the blocks their entries */
    cr_expect_eq(st.operator_kind, FEA_OPERATOR_MATFREE_SUMFACT, "Schwarz levels are matrix-free");
    cr_expect_eq(st.krylov, 1);
    cr_expect(st.num_levels == (t == 0 ? 4 : t == 1 ? 5 : 3), "%d levels", st.num_levels);
    cr_expect(st.coarse_dofs > 0, "the coarsest level has free DoFs");
    cr_expect_eq(st.fine_dofs, c.nf);
    cr_expect(st.memory_bytes > 0);
    free(x), free(u), free(v);
    ring_case_destroy(&c);
  }
  fea_context_destroy(&ctx);
}

/* The Schwarz blocks run in colors of disjoint blocks (no atomic adds in a
 * thread-dependent order): two solves on two threads give the same answer
 * to the last bit, and one thread the same iterations and the answer to
 * rounding (CG's dot products sum in another order there). */
Test(multigrid_bspline, repeatable_on_two_threads) {
  const char *res[2] = {"/cpu/threads:threads=2", "/cpu/threads:threads=1"};
  double *x[3] = {NULL, NULL, NULL};
  fea_index its[3] = {0, 0, 0}, nf = 0;
  for (int t = 0; t < 2; t++) {
    fea_context *ctx = NULL;
    OK(fea_context_create(res[t], &ctx));
    ring_case c;
    ring_case_create(ctx, &c, 3, 3, 8, 0);
    nf = c.nf;
    fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
    d.smoother = FEA_MG_SMOOTHER_SCHWARZ;
    fea_solver *sv = NULL;
    OK(fea_solver_create_multigrid(ctx, c.pb, &d, &sv));
    OK(fea_solver_setup(sv));
    for (int r = 0; r < (t == 0 ? 2 : 1); r++) {
      const int k = t == 0 ? r : 2;
      x[k] = malloc((size_t)nf * sizeof *x[k]);
      OK(fea_solver_solve(sv, 1, NULL, 0, x[k], nf));
      fea_multigrid_stats st = FEA_MULTIGRID_STATS_INIT;
      OK(fea_solver_get_multigrid_stats(sv, &st));
      its[k] = st.iterations;
    }
    fea_solver_destroy(&sv);
    ring_case_destroy(&c);
    fea_context_destroy(&ctx);
  }
  cr_expect(memcmp(x[0], x[1], (size_t)nf * sizeof *x[0]) == 0, "two solves on two threads differ");
  cr_expect_eq(its[0], its[2], "%lld iterations on two threads, %lld on one", (long long)its[0],
               (long long)its[2]);
  double e = 0.0, m = 0.0;
  for (fea_index i = 0; i < nf; i++)
    e = fmax(e, fabs(x[0][i] - x[2][i])), m = fmax(m, fabs(x[2][i]));
  cr_expect(e <= 1e-10 * m, "one and two threads differ by %.3g", e / m);
  free(x[0]), free(x[1]), free(x[2]);
}

/* Iterations of CG + Schwarz multigrid to 1e-8 at each (p, n). */
static void counts(fea_context *ctx, int dim, int plo, int phi, const fea_index *ns, int nn,
                   fea_index its[6][4]) {
  for (int p = plo; p <= phi; p++)
    for (int i = 0; i < nn; i++) {
      ring_case c;
      ring_case_create(ctx, &c, dim, p, ns[i], 0);
      fea_multigrid_stats st;
      mg_solve(ctx, &c, FEA_MG_SMOOTHER_SCHWARZ, 1e-8, NULL, &st);
      its[p][i] = st.iterations;
      cr_log_info("%dD p = %d n = %lld: %lld iterations (%lld DoFs, %d levels)", dim, p,
                  (long long)ns[i], (long long)st.iterations, (long long)c.nf, st.num_levels);
      ring_case_destroy(&c);
    }
}

/* The bounds: at most 1.3x from the coarsest to the finest n (p in
 * hlo..hhi), at most 2x from the lowest to the highest p at each n (p in
 * plo..phi; sizes where every such p ran). */
static void check_bounds(int dim, int hlo, int hhi, int plo, int phi, const fea_index *ns, int nn,
                         fea_index its[6][4]) {
  for (int p = hlo; p <= hhi; p++)
    cr_expect(its[p][nn - 1] <= 1.3 * its[p][0],
              "%dD p = %d: %lld iterations at n = %lld, %lld at n = %lld (more than 1.3x)", dim, p,
              (long long)its[p][nn - 1], (long long)ns[nn - 1], (long long)its[p][0],
              (long long)ns[0]);
  for (int i = 0; i < nn; i++) {
    fea_index lo = its[plo][i], hi = its[plo][i];
    for (int p = plo; p <= phi; p++) {
      if (its[p][i] == 0) break; /* not run at this size */
      lo = its[p][i] < lo ? its[p][i] : lo;
      hi = its[p][i] > hi ? its[p][i] : hi;
    }
    cr_expect(hi <= 2 * lo, "%dD n = %lld: from %lld to %lld iterations over p = %d..%d", dim,
              (long long)ns[i], (long long)lo, (long long)hi, plo, phi);
  }
}

/* Measured on the shared 2-core machine (docs/multigrid.md): 6-7 iterations
 * for p = 2..5 at n = 16..256. */
Test(multigrid_bspline, counts_bounded_in_h_and_p_2d) {
  fea_context *ctx = ctx_open();
  const fea_index ns[2] = {16, 64};
  fea_index its[6][4] = {{0}};
  counts(ctx, 2, 2, 5, ns, 2, its);
  check_bounds(2, 2, 5, 2, 5, ns, 2, its);
  fea_context_destroy(&ctx);
}

/* n = 4 is below the asymptotic range (3 levels); p = 4 at n = 16 takes
 * 20 s of assembly on a busy machine, so p = 4 runs at n = 8 only and
 * enters the bound in p there. Measured: p = 2 8, 9, 9 and p = 3 8, 9 at
 * n = 8, 16, 32; p = 4 11, 12 at n = 8, 16. */
Test(multigrid_bspline, counts_bounded_in_h_and_p_3d) {
  fea_context *ctx = ctx_open();
  const fea_index ns[2] = {8, 16};
  fea_index its[6][4] = {{0}};
  counts(ctx, 3, 2, 3, ns, 2, its);
  counts(ctx, 3, 4, 4, ns, 1, its);
  check_bounds(3, 2, 3, 2, 4, ns, 2, its);
  fea_context_destroy(&ctx);
}

/* Chebyshev-Jacobi also runs on B-spline levels (any operator kind), but its
 * counts grow with p: at p = 5 it needs at least twice the Schwarz
 * smoother's iterations, the reason the blocks exist. */
Test(multigrid_bspline, point_smoother_degrades_with_p) {
  fea_context *ctx = ctx_open();
  ring_case c;
  ring_case_create(ctx, &c, 2, 5, 16, 0);
  fea_multigrid_stats jac, sch;
  mg_solve(ctx, &c, FEA_MG_SMOOTHER_CHEBYSHEV, 1e-8, NULL, &jac);
  mg_solve(ctx, &c, FEA_MG_SMOOTHER_SCHWARZ, 1e-8, NULL, &sch);
  cr_log_info("2D p = 5, n = 16: Chebyshev-Jacobi %lld, Schwarz %lld iterations",
              (long long)jac.iterations, (long long)sch.iterations);
  cr_expect(jac.iterations >= 2 * sch.iterations, "Chebyshev-Jacobi %lld, Schwarz %lld",
            (long long)jac.iterations, (long long)sch.iterations);
  ring_case_destroy(&c);
  fea_context_destroy(&ctx);
}

/* Refusals: the Schwarz smoother on a Lagrange space, a 1D patch. */
Test(multigrid_bspline, refuses_cleanly) {
  fea_context *ctx = ctx_open();
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = md.n[1] = 8;
  fea_mesh *mesh = NULL;
  fea_space *lag = NULL;
  fea_problem *pb = NULL;
  OK(fea_mesh_create_structured(ctx, &md, &mesh));
  OK(fea_space_create_lagrange(mesh, 1, FEA_NODES_EQUISPACED, &lag));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  OK(fea_problem_create_poisson(lag, &pd, &pb));
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  d.smoother = FEA_MG_SMOOTHER_SCHWARZ;
  fea_solver *sv = NULL;
  EXPECT_FAIL(fea_solver_create_multigrid(ctx, pb, &d, &sv), FEA_ERR_UNSUPPORTED, ctx,
              "Lagrange space");
  cr_expect_null(sv);
  d.smoother = (fea_mg_smoother)7;
  EXPECT_FAIL(fea_solver_create_multigrid(ctx, pb, &d, &sv), FEA_ERR_INVALID_ARG, ctx,
              "smoother is 7");
  fea_problem_destroy(&pb);
  fea_space_destroy(&lag);
  fea_mesh_destroy(&mesh);
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 1;
  bd.degree[0] = 2;
  bd.n[0] = 16;
  fea_space *line = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &line));
  OK(fea_problem_create_poisson(line, &pd, &pb));
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_INIT;
  EXPECT_FAIL(fea_solver_create_multigrid(ctx, pb, &d, &sv), FEA_ERR_UNSUPPORTED, ctx, "1D");
  fea_problem_destroy(&pb);
  fea_space_destroy(&line);
  fea_context_destroy(&ctx);
}
