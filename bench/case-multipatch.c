/* The `multipatch` case: the multipatch direct solver (docs/multipatch.md) on
 * a k x k (2D) or k x k x k (3D) grid of box patches covering the unit square
 * or cube, against the single-patch multifrontal solver on the same discrete
 * problem in the same run (issue #25).
 *
 * Every patch has degree p and n elements per direction. The problem is
 * -Laplace u = f with u = g on the whole boundary, u smooth and not zero
 * there. The single patch is the unit box with interior knots of
 * multiplicity p at i / k: C0 knot lines at the patch boundaries, so its
 * space is the multipatch space exactly and the two solutions must agree to
 * rounding.
 *
 * Per configuration: global, free, interface and interior DoFs, the closed
 * form of the interface size and its ratio to the measured one (exactly 1),
 * the phases (local_s, interface_s, solve_s), a dense Cholesky of the
 * interface's order timed alone (how much of interface_s is the
 * factorization), the memory, the L2 error, and the single patch's setup and
 * solve times, memory and the largest difference of the two solutions.
 * --sweep doubles n at fixed k and fits the growth exponents over N. */
#include <lapacke.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel.h>
#include <feaccel/multipatch.h>
#include <feaccel/solver.h>

#include "multipatch-grid.h"
#include "report.h"
#include "timing.h"

#define CASE_NAME "multipatch"

typedef struct mp_params {
  long long dim, p, n, n_min, k;
  int sweep, single, reps;
} mp_params;

/* What one configuration gave; the sweep fits exponents over these. */
typedef struct mp_point {
  double free_dofs, interface_dofs, predicted, local_s, interface_s, setup_s, single_setup_s;
} mp_point;

#define TRY(expr)                          \
  do {                                     \
    fea_status try_status_ = (expr);       \
    if (try_status_ < 0) {                 \
      rc = bench_fail(#expr, try_status_); \
      goto done;                           \
    }                                      \
  } while (0)

#define NOMEM(what)                                                                \
  do {                                                                             \
    fprintf(stderr, "feaccel-bench: %s: out of memory for %s\n", CASE_NAME, what); \
    rc = BENCH_FAILED;                                                             \
    goto done;                                                                     \
  } while (0)

/* A dense Cholesky (LAPACK dpotrf) of order ni alone, median of reps: the
 * factorization part of interface_s. The matrix is SPD, diagonally dominant. */
static int time_potrf(fea_index ni, int reps, double *seconds) {
  *seconds = 0;
  if (ni <= 0) return BENCH_OK;
  const size_t nn = (size_t)ni * (size_t)ni;
  double *A = malloc(nn * sizeof *A), *S = malloc(nn * sizeof *S);
  double *t = malloc((size_t)reps * sizeof *t);
  int rc = BENCH_OK;
  if (!A || !S || !t) NOMEM("the dense Cholesky yardstick");
  for (fea_index j = 0; j < ni; j++)
    for (fea_index i = 0; i < ni; i++)
      A[i + (size_t)j * ni] = i == j ? 2.0 * (double)ni
                                     : 1.0 / (1.0 + (double)(i > j ? i - j : j - i));
  for (int r = reps > 1 ? -1 : 0; r < reps; r++) {
    memcpy(S, A, nn * sizeof *S);
    const double t0 = bench_now();
    const lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)ni, S,
                                           (lapack_int)ni);
    const double t1 = bench_now();
    if (info != 0) {
      fprintf(stderr, "feaccel-bench: %s: the yardstick's dpotrf returned %d\n", CASE_NAME,
              (int)info);
      rc = BENCH_FAILED;
      goto done;
    }
    if (r >= 0) t[r] = t1 - t0;
  }
  *seconds = bench_median(t, reps);
done:
  free(A);
  free(S);
  free(t);
  return rc;
}

/* Per repetition: 0 setup wall, 1 solve wall, 2 local_s, 3 interface_s,
 * 4 solve_s (the solver's), 5 single setup, 6 single solve. */
enum { T_SETUP, T_SOLVE, T_LOCAL, T_IFACE, T_MSOLVE, T_SSETUP, T_SSOLVE, T_COUNT };

static int run_config(bench_report *rep, fea_context *ctx, const mp_params *prm, mp_point *pt) {
  int rc = BENCH_OK;
  const int dim = (int)prm->dim;
  const mp_grid grid = mp_grid_cube(dim, prm->p, prm->n, prm->k);
  const long long np = mp_grid_num_patches(&grid);
  fea_space **patches = calloc((size_t)np, sizeof *patches);
  fea_multipatch *mp = NULL;
  fea_multipatch_problem *mpb = NULL;
  fea_solver *ms = NULL, *ss = NULL;
  fea_space *whole = NULL;
  fea_problem *pb = NULL;
  double *x = NULL, *u = NULL, *y = NULL, *v = NULL, *t[T_COUNT] = {NULL};
  if (!patches) NOMEM("the patches");
  for (int q = 0; q < T_COUNT; q++)
    if (!(t[q] = malloc((size_t)prm->reps * sizeof *t[q]))) NOMEM("the timings");

  int user = dim;
  TRY(mp_grid_create_problem(ctx, &grid, &user, patches, &mp, &mpb));
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  TRY(fea_multipatch_get_info(mp, &info));
  fea_index nfree = 0;
  TRY(fea_multipatch_problem_get_num_free_dofs(mpb, &nfree));
  double t0 = bench_now();
  TRY(fea_solver_create_multipatch(ctx, mpb, NULL, &ms));
  const double create_s = bench_now() - t0;

  double single_create_s = NAN;
  fea_index sfree = 0;
  if (prm->single) {
    TRY(mp_grid_create_c0_patch(ctx, &grid, &whole));
    fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
    pd.source = mp_grid_exact_f, pd.source_user = &user;
    pd.dirichlet = mp_grid_exact_u, pd.dirichlet_user = &user;
    TRY(fea_problem_create_poisson(whole, &pd, &pb));
    TRY(fea_problem_get_num_free_dofs(pb, &sfree));
    fea_space_info si = FEA_SPACE_INFO_INIT;
    TRY(fea_space_get_info(whole, &si));
    if (sfree != nfree || si.num_dofs != info.num_dofs) {
      fprintf(stderr,
              "feaccel-bench: %s: the C0 patch has %lld DoFs (%lld free), the multipatch "
              "domain %lld (%lld free)\n",
              CASE_NAME, (long long)si.num_dofs, (long long)sfree, (long long)info.num_dofs,
              (long long)nfree);
      rc = BENCH_FAILED;
      goto done;
    }
    t0 = bench_now();
    TRY(fea_solver_create_multifrontal(ctx, whole, pb, NULL, &ss));
    single_create_s = bench_now() - t0;
  }

  x = malloc((size_t)nfree * sizeof *x + 1);
  y = malloc((size_t)nfree * sizeof *y + 1);
  u = calloc((size_t)info.num_dofs + 1, sizeof *u);
  v = calloc((size_t)info.num_dofs + 1, sizeof *v);
  if (!x || !y || !u || !v) NOMEM("the solutions");

  /* The two solvers alternate, so that each repetition compares them at one
   * moment of a shared machine. */
  fea_multipatch_stats st = FEA_MULTIPATCH_STATS_INIT;
  for (int r = prm->reps > 1 ? -1 : 0; r < prm->reps; r++) {
    double a = bench_now();
    TRY(fea_solver_setup(ms));
    double b = bench_now();
    TRY(fea_solver_solve(ms, 1, NULL, 0, x, nfree > 0 ? nfree : 1));
    double c = bench_now();
    TRY(fea_solver_get_multipatch_stats(ms, &st));
    if (r >= 0) {
      t[T_SETUP][r] = b - a, t[T_SOLVE][r] = c - b;
      t[T_LOCAL][r] = st.local_s, t[T_IFACE][r] = st.interface_s, t[T_MSOLVE][r] = st.solve_s;
    }
    if (!ss) continue;
    a = bench_now();
    TRY(fea_solver_setup(ss));
    b = bench_now();
    TRY(fea_solver_solve(ss, 1, NULL, 0, y, sfree > 0 ? sfree : 1));
    c = bench_now();
    if (r >= 0) t[T_SSETUP][r] = b - a, t[T_SSOLVE][r] = c - b;
  }
  fea_solver_stats sst = FEA_SOLVER_STATS_INIT;
  if (ss) TRY(fea_solver_get_stats(ss, &sst));
  fea_solver_destroy(&ms);
  fea_solver_destroy(&ss);

  double med[T_COUNT];
  for (int q = 0; q < T_COUNT; q++)
    med[q] = prm->single || q < T_SSETUP ? bench_median(t[q], prm->reps) : NAN;

  /* L2 error, relative to the L2 norm of u (the error of the zero vector). */
  TRY(fea_multipatch_problem_expand_solution(mpb, x, u));
  double l2 = NAN, unorm = NAN;
  TRY(fea_multipatch_problem_error_norms(mpb, u, mp_grid_exact_u, NULL, &user, &l2, NULL));
  memset(v, 0, (size_t)info.num_dofs * sizeof *v);
  TRY(fea_multipatch_problem_error_norms(mpb, v, mp_grid_exact_u, NULL, &user, &unorm, NULL));

  double diff = NAN, sl2 = NAN;
  if (pb) {
    TRY(fea_problem_expand_solution(pb, y, v));
    TRY(fea_problem_error_norms(pb, v, mp_grid_exact_u, NULL, &user, &sl2, NULL));
    TRY(mp_grid_max_rel_diff(mp, &grid, u, v, &diff));
  }

  double potrf_s = 0;
  rc = time_potrf(st.interface_dofs, prm->reps, &potrf_s);
  if (rc != BENCH_OK) goto done;

  const double predicted = mp_grid_predicted_interface(&grid);
  const double ni = (double)st.interface_dofs;
  bench_record rec;
  TRY(bench_record_init(&rec, CASE_NAME, ctx));
  bench_param_int(&rec, "dim", dim);
  bench_param_int(&rec, "p", prm->p);
  bench_param_int(&rec, "n", prm->n);
  bench_param_int(&rec, "patches", np);
  bench_param_int(&rec, "reps", prm->reps);
  bench_metric(&rec, "dofs", (double)info.num_dofs);
  bench_metric(&rec, "free_dofs", (double)nfree);
  bench_metric(&rec, "interface_dofs", ni);
  bench_metric(&rec, "predicted_interface_dofs", predicted);
  bench_metric(&rec, "interface_ratio", ni / predicted);
  bench_metric(&rec, "interior_dofs", (double)st.interior_dofs);
  bench_metric(&rec, "create_s", create_s);
  bench_metric(&rec, "setup_s", med[T_SETUP]);
  bench_metric(&rec, "local_s", med[T_LOCAL]);
  bench_metric(&rec, "interface_s", med[T_IFACE]);
  /* The same order's dense Cholesky alone: interface_s - potrf_s is the
   * assembly of the patches' Schur complements. */
  bench_metric(&rec, "potrf_s", potrf_s);
  bench_metric(&rec, "potrf_gflops", potrf_s > 0 ? ni * ni * ni / 3 / potrf_s * 1e-9 : 0.0);
  bench_metric(&rec, "solve_s", med[T_MSOLVE]);
  bench_metric(&rec, "patch_bytes", (double)st.patch_bytes);
  bench_metric(&rec, "interface_bytes", (double)st.interface_bytes);
  bench_metric(&rec, "l2_rel_error", unorm > 0 ? l2 / unorm : l2);
  if (prm->single) {
    int q = bench_peer(&rec, "multifrontal");
    bench_peer_metric(&rec, q, "create_s", single_create_s);
    bench_peer_metric(&rec, q, "setup_s", med[T_SSETUP]);
    bench_peer_metric(&rec, q, "solve_s", med[T_SSOLVE]);
    bench_peer_metric(&rec, q, "factor_bytes", (double)sst.factor_bytes);
    bench_peer_metric(&rec, q, "peak_bytes", (double)sst.peak_bytes);
    bench_peer_metric(&rec, q, "l2_rel_error", unorm > 0 ? sl2 / unorm : sl2);
    /* ratio: multipatch (setup + solve) / single patch (setup + solve) */
    bench_peer_metric(&rec, q, "ratio",
                      (med[T_SETUP] + med[T_SOLVE]) / (med[T_SSETUP] + med[T_SSOLVE]));
    bench_peer_metric(&rec, q, "setup_ratio", med[T_SETUP] / med[T_SSETUP]);
    bench_peer_metric(&rec, q, "memory_ratio",
                      ((double)st.patch_bytes + (double)st.interface_bytes) /
                          (double)sst.peak_bytes);
    bench_peer_metric(&rec, q, "max_rel_diff", diff);
  }
  bench_report_emit(rep, &rec);

  pt->free_dofs = (double)nfree;
  pt->interface_dofs = ni;
  pt->predicted = predicted;
  pt->local_s = med[T_LOCAL];
  pt->interface_s = med[T_IFACE];
  pt->setup_s = med[T_SETUP];
  pt->single_setup_s = med[T_SSETUP];

  /* The closed form and the solvers' agreement are checks, not only figures. */
  if (ni != predicted || (double)st.interior_dofs != mp_grid_predicted_interior(&grid)) {
    fprintf(stderr,
            "feaccel-bench: %s: %lld interface and %lld interior DoFs, the closed form says "
            "%.0f and %.0f\n",
            CASE_NAME, (long long)st.interface_dofs, (long long)st.interior_dofs, predicted,
            mp_grid_predicted_interior(&grid));
    rc = BENCH_FAILED;
  }
  if (prm->single && !(diff < 1e-9)) {
    fprintf(stderr,
            "feaccel-bench: %s: the multipatch and C0 single-patch solutions differ by %g "
            "(relative)\n",
            CASE_NAME, diff);
    rc = BENCH_FAILED;
  }

done:
  for (int q = 0; q < T_COUNT; q++) free(t[q]);
  free(x), free(y), free(u), free(v);
  fea_solver_destroy(&ms);
  fea_solver_destroy(&ss);
  fea_problem_destroy(&pb);
  fea_space_destroy(&whole);
  fea_multipatch_problem_destroy(&mpb);
  fea_multipatch_destroy(&mp);
  for (long long q = 0; patches && q < np; q++) fea_space_destroy(&patches[q]);
  free(patches);
  return rc;
}

/* The sweep's last record: measured and modelled exponents over N. */
static int emit_fit(bench_report *rep, fea_context *ctx, const mp_params *prm, int m,
                    const mp_point *pts) {
  int rc = BENCH_OK;
  double N[64], ni[64], pred[64], loc[64], itf[64], set[64], single[64];
  for (int i = 0; i < m; i++) {
    N[i] = pts[i].free_dofs, ni[i] = pts[i].interface_dofs, pred[i] = pts[i].predicted;
    loc[i] = pts[i].local_s, itf[i] = pts[i].interface_s, set[i] = pts[i].setup_s;
    single[i] = pts[i].single_setup_s;
  }
  const double d = (double)prm->dim;
  bench_record rec;
  TRY(bench_record_init(&rec, CASE_NAME, ctx));
  bench_param_str(&rec, "fit", "y ~ N^e over free DoFs, least squares in log-log");
  bench_param_int(&rec, "dim", prm->dim);
  bench_param_int(&rec, "p", prm->p);
  bench_param_int(&rec, "patches", prm->dim == 3 ? prm->k * prm->k * prm->k : prm->k * prm->k);
  bench_param_int(&rec, "n_min", prm->n_min);
  bench_param_int(&rec, "n_max", prm->n);
  bench_param_int(&rec, "points", m);
  bench_metric(&rec, "interface_exponent", mp_grid_loglog_slope(m, N, ni));
  /* The closed form over the same sizes, and its limit (d - 1) / d. */
  bench_metric(&rec, "model_interface_exponent", mp_grid_loglog_slope(m, N, pred));
  bench_metric(&rec, "asymptotic_interface_exponent", (d - 1) / d);
  bench_metric(&rec, "local_exponent", mp_grid_loglog_slope(m, N, loc));
  bench_metric(&rec, "interface_time_exponent", mp_grid_loglog_slope(m, N, itf));
  /* Dense Cholesky of O(N^((d-1)/d)) rows: O(N^(3 (d-1) / d)). */
  bench_metric(&rec, "model_interface_time_exponent", 3 * (d - 1) / d);
  bench_metric(&rec, "setup_exponent", mp_grid_loglog_slope(m, N, set));
  if (prm->single) {
    int k = bench_peer(&rec, "multifrontal");
    bench_peer_metric(&rec, k, "setup_exponent", mp_grid_loglog_slope(m, N, single));
  }
  bench_report_emit(rep, &rec);
done:
  return rc;
}

static int parse(int argc, char **argv, mp_params *p) {
  static const struct {
    const char *name;
    long long min, max;
    size_t off;
  } opts[] = {
      {"--dim", 2, 3, offsetof(mp_params, dim)},
      {"--p", 1, 8, offsetof(mp_params, p)},
      {"--n", 1, 1 << 16, offsetof(mp_params, n)},
      {"--n-min", 1, 1 << 16, offsetof(mp_params, n_min)},
      {"--patches", 1, 64, offsetof(mp_params, k)},
  };
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--sweep") == 0) {
      p->sweep = 1;
      continue;
    }
    if (strcmp(argv[i], "--no-single") == 0) {
      p->single = 0;
      continue;
    }
    int matched = 0;
    for (size_t q = 0; q < sizeof opts / sizeof opts[0] && !matched; q++) {
      const char *v = NULL;
      int got = bench_option_value(argc, argv, &i, opts[q].name, &v);
      if (got < 0) return BENCH_USAGE;
      if (got == 0) continue;
      if (bench_parse_ll(CASE_NAME, opts[q].name, v, opts[q].min, opts[q].max,
                         (long long *)((char *)p + opts[q].off)) < 0)
        return BENCH_USAGE;
      matched = 1;
    }
    if (!matched) {
      fprintf(stderr, "feaccel-bench: %s: unknown option '%s' (see feaccel-bench %s --help)\n",
              CASE_NAME, argv[i], CASE_NAME);
      return BENCH_USAGE;
    }
  }
  if (p->n == 0) p->n = p->dim == 3 ? 8 : 64;
  if (p->n_min == 0) p->n_min = p->dim == 3 ? 2 : 8;
  if (p->sweep && p->n_min >= p->n) {
    fprintf(stderr, "feaccel-bench: %s: --sweep needs --n-min %lld < --n %lld\n", CASE_NAME,
            p->n_min, p->n);
    return BENCH_USAGE;
  }
  return BENCH_OK;
}

static int run(const bench_options *o, int argc, char **argv) {
  mp_params prm = {
      .dim = 2, .p = 3, .n = 0, .n_min = 0, .k = 2, .sweep = 0, .single = 1, .reps = o->reps};
  int rc = parse(argc, argv, &prm);
  if (rc != BENCH_OK) return rc;
  fea_context *ctx = NULL;
  rc = bench_open_context(o, "/cpu/threads", &ctx);
  if (rc != BENCH_OK) return rc;
  bench_report rep;
  bench_report_init(&rep, o);
  mp_point pts[64];
  int m = 0;
  if (prm.sweep) {
    /* n doubling from n_min, then n itself, at fixed k. */
    const long long n_max = prm.n;
    for (long long n = prm.n_min; rc == BENCH_OK && m < 63; n *= 2) {
      prm.n = n > n_max ? n_max : n;
      rc = run_config(&rep, ctx, &prm, &pts[m++]);
      if (prm.n == n_max) break;
    }
    prm.n = n_max;
    if (rc == BENCH_OK && m >= 2) rc = emit_fit(&rep, ctx, &prm, m, pts);
  } else {
    rc = run_config(&rep, ctx, &prm, &pts[0]);
  }
  if (rc == BENCH_OK) {
    bench_report_note(&rep,
                      "\nsetup_s, local_s (patch factorizations), interface_s (Schur assembly + "
                      "dense Cholesky), solve_s: medians of %d, after one warm-up when > 1;",
                      prm.reps);
    bench_report_note(&rep,
                      "predicted_interface_dofs = (k (n+p-1) - 1)^d - (k (n+p-2))^d, "
                      "interface_ratio = measured / predicted (exactly 1);");
    bench_report_note(&rep,
                      "potrf_s: LAPACK dpotrf of the interface's order alone, same run "
                      "(potrf_gflops = n^3 / 3 / potrf_s); patch_bytes: the patches' peak setup "
                      "estimates; interface_bytes: the dense factor;");
    if (prm.single)
      bench_report_note(&rep,
                        "multifrontal: one patch with C0 knot lines at i/k (the same space), "
                        "alternating with the multipatch solver; ratio = multipatch (setup + "
                        "solve) / its (setup + solve); memory_ratio = (patch + interface bytes) "
                        "/ its peak_bytes; max_rel_diff: max |u_mp - u_single| / max |u|.");
  }
  fea_context_destroy(&ctx);
  return rc;
}

const bench_case bench_case_multipatch = {
    .name = CASE_NAME,
    .description =
        "multipatch direct solver on k^d box patches: interface size vs its closed form, "
        "phases, memory; the C0 single patch side by side",
    .usage =
        "usage: feaccel-bench [global options] multipatch [--dim D] [--p P] [--n N] "
        "[--patches K] [--sweep [--n-min M]] [--no-single]\n"
        "\n"
        "  --dim D      2 or 3 (default 2)\n"
        "  --p P        B-spline degree 1..8 of every patch (default 3)\n"
        "  --n N        elements per direction of every patch (default 64 in 2D, 8 in 3D)\n"
        "  --patches K  K x K (2D) or K x K x K (3D) box patches on the unit box (default 2)\n"
        "  --sweep      n = M, 2M, 4M, ... up to N at fixed K; fits the interface size's and\n"
        "               the times' exponents over the free DoFs N\n"
        "  --n-min M    the sweep's first n (default 8 in 2D, 2 in 3D)\n"
        "  --no-single  leave out the single-patch multifrontal solve of the same problem\n"
        "\n"
        "Poisson, u = sin(pi x / 2) e^y (2D; times cos z in 3D), u = g on the boundary.\n"
        "Default backend /cpu/threads. The single patch is the unit box with C0 knot lines\n"
        "at i / K (the same space); the run fails when the two solutions differ by more\n"
        "than 1e-9 (relative) or the interface size is not its closed form.\n",
    .run = run,
};
