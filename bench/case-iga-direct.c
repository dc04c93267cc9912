/* The `iga-direct` case: the IGA multifrontal direct solver on the
 * manufactured sine problem, -Laplace u = f on the unit box with an open
 * uniform B-spline space (or, with --components dim, linear elasticity on
 * it: plane strain in 2D, every side clamped, a manufactured sine
 * displacement), against SuiteSparse CHOLMOD on the same reduced matrix
 * when CHOLMOD was found.
 *
 * Per size: the solver's phase times (setup = integration + factorization,
 * solve), its counted flops and their rate as a fraction of the DGEMM rate
 * measured in the same run on the same context, the root's rate, factor and
 * peak memory, the L2 error; and CHOLMOD's analyze, factor and solve times,
 * memory, and the ratios ours / CHOLMOD. --sweep runs a range of n and fits
 * the time exponent over N (least squares in log-log). --cost prints the
 * cost model's strong scaling (the paper's Figs. 9-11) without solving. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel.h>
#include <feaccel/solver.h>

#include "discretization.h"
#include "peak.h"
#include "peer-cholmod.h"
#include "report.h"
#include "timing.h"

#define CASE_NAME "iga-direct"

typedef struct direct_params {
  long long dim, p, n, n_min, gemm_n;
  int sweep, cholmod, reps;
  int cpu;              /* on a GPU context: also time the CPU backend on the same problem */
  int gpu;              /* the context is a GPU's */
  int threads;          /* --threads, for the CPU comparison context */
  int levels;           /* --levels: one record per tree level as well */
  int annulus;          /* --domain annulus: the quarter annulus (2D) or thick ring (3D) */
  int cost;             /* --cost: only the cost model's strong-scaling records, no solve */
  long long components; /* --components: 1 (Poisson) or dim (elasticity) */
} direct_params;

/* What one size gave; the sweep fits exponents over these. */
typedef struct direct_point {
  double dofs, setup_s, solve_s, cholmod_s;
} direct_point;

static int sine_dim;

static double sine_u(const double *x, void *user) {
  (void)user;
  double u = 1;
  for (int k = 0; k < sine_dim; k++) u *= sin(3.14159265358979323846 * x[k]);
  return u;
}

/* --components dim: elasticity with lambda = mu = 1 and every component of
 * u the sine S = prod_k sin(pi x_k) (zero on the clamped boundary). */
#define BENCH_PI 3.14159265358979323846
#define RETURN_IF(expr)     \
  do {                      \
    fea_status r_ = (expr); \
    if (r_ < 0) return r_;  \
  } while (0)

static void elastic_u(const double *x, double *u, void *user) {
  (void)user;
  const double v = sine_u(x, NULL);
  for (int c = 0; c < sine_dim; c++) u[c] = v;
}

/* d_a d_c S: -pi^2 S for a = c, else pi^2 cos(pi x_a) cos(pi x_c) prod_(k != a, c) sin(pi x_k). */
static double sine_dd(const double *x, int a, int c) {
  if (a == c) return -BENCH_PI * BENCH_PI * sine_u(x, NULL);
  double v = BENCH_PI * BENCH_PI * cos(BENCH_PI * x[a]) * cos(BENCH_PI * x[c]);
  for (int k = 0; k < sine_dim; k++)
    if (k != a && k != c) v *= sin(BENCH_PI * x[k]);
  return v;
}

/* f = -(lambda + mu) grad div u - mu Laplace u, lambda = mu = 1. */
static void elastic_f(const double *x, double *f, void *user) {
  (void)user;
  const double lap = -sine_dim * BENCH_PI * BENCH_PI * sine_u(x, NULL);
  for (int a = 0; a < sine_dim; a++) {
    double gd = 0;
    for (int c = 0; c < sine_dim; c++) gd += sine_dd(x, a, c);
    f[a] = -2.0 * gd - lap;
  }
}

/* The space and problem of one size: the scalar sine problem, on the annulus
 * with --domain annulus; with --components dim the vector space and the
 * elasticity problem. */
static fea_status make_problem(fea_context *ctx, const direct_params *prm, fea_index n,
                               fea_mesh **mesh, fea_space **space, fea_problem **pb) {
  const bench_family fam = {"bspline", (int)prm->dim, (int)prm->p};
  if (prm->annulus) {
    RETURN_IF(bench_make_ring_space(ctx, fam.dim, fam.p, n, space));
    return bench_make_sine_problem_dirichlet(*space, fam.dim, pb);
  }
  RETURN_IF(bench_make_space(ctx, &fam, n, mesh, space));
  if (prm->components == 1) return bench_make_sine_problem(*space, fam.dim, pb);
  sine_dim = fam.dim;
  RETURN_IF(fea_space_set_num_components(*space, (int)prm->components));
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.lambda = 1.0, d.mu = 1.0; /* plane strain in 2D; every side clamped */
  d.body_force = elastic_f;
  return fea_problem_create_elasticity(*space, &d, pb);
}

/* Least-squares slope of log y over log x (m >= 2 points). */
static double loglog_slope(int m, const double *x, const double *y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < m; i++) {
    double lx = log(x[i]), ly = log(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

#define TRY(expr)                          \
  do {                                     \
    fea_status try_status_ = (expr);       \
    if (try_status_ < 0) {                 \
      rc = bench_fail(#expr, try_status_); \
      goto done;                           \
    }                                      \
  } while (0)

/* Median setup and solve over reps (after one warm-up when reps > 1: a big
 * setup is long, and a single rep is what a demo wants). */
static int time_solver(fea_solver *s, fea_index nfree, double *x, int reps, double *setup_s,
                       double *solve_s) {
  int rc = BENCH_OK;
  double *ts = malloc((size_t)reps * sizeof *ts), *tv = malloc((size_t)reps * sizeof *tv);
  if (!ts || !tv) {
    fprintf(stderr, "feaccel-bench: %s: out of memory\n", CASE_NAME);
    rc = BENCH_FAILED;
    goto done;
  }
  for (int r = reps > 1 ? -1 : 0; r < reps; r++) {
    double t0 = bench_now();
    TRY(fea_solver_setup(s));
    double t1 = bench_now();
    TRY(fea_solver_solve(s, 1, NULL, 0, x, nfree));
    double t2 = bench_now();
    if (r >= 0) ts[r] = t1 - t0, tv[r] = t2 - t1;
  }
  *setup_s = bench_median(ts, reps);
  *solve_s = bench_median(tv, reps);
done:
  free(ts);
  free(tv);
  return rc;
}

/* The flops and factorization time of the root level, for its rate. */
static fea_status root_rate(const fea_solver *s, const fea_solver_stats *st, double *flops,
                            double *seconds) {
  fea_solver_level lv = {.size = sizeof lv};
  fea_status r = fea_solver_get_level(s, st->num_levels - 1, &lv);
  *flops = lv.flops;
  *seconds = lv.factor_s > 0 ? lv.factor_s : st->root_s;
  return r;
}

/* Level 0 (the leaves: element integration, and on a GPU their upload)
 * apart from the levels above it, whose rate is the dense kernels' alone. */
static fea_status level_split(const fea_solver *s, const fea_solver_stats *st, double *leaves_s,
                              double *upper_flops, double *upper_s) {
  *leaves_s = *upper_flops = *upper_s = 0;
  for (int L = 0; L < st->num_levels; L++) {
    fea_solver_level lv = {.size = sizeof lv};
    fea_status r = fea_solver_get_level(s, L, &lv);
    if (r < 0) return r;
    if (L == 0) {
      *leaves_s = lv.factor_s;
    } else {
      *upper_flops += lv.flops;
      *upper_s += lv.factor_s;
    }
  }
  return FEA_SUCCESS;
}

/* Every level's facts and time, read before the solver goes (--levels). */
static fea_status levels_read(const fea_solver *s, int num_levels, fea_solver_level **out) {
  *out = calloc((size_t)num_levels, sizeof **out);
  if (!*out) return FEA_ERR_OUT_OF_MEMORY;
  for (int L = 0; L < num_levels; L++) {
    fea_solver_level lv = FEA_SOLVER_LEVEL_INIT;
    fea_status r = fea_solver_get_level(s, L, &lv);
    if (r < 0) return r;
    (*out)[L] = lv;
  }
  return FEA_SUCCESS;
}

/* One record per level: its fronts' sizes, flops, time and rate against the
 * same run's DGEMM, so that where the factorization loses its rate shows. */
static void levels_emit(bench_report *rep, fea_context *ctx, const direct_params *prm, long long n,
                        const fea_solver_level *lv, int num_levels, double dgemm_gflops) {
  for (int L = 0; L < num_levels; L++) {
    bench_record rec;
    if (bench_record_init(&rec, CASE_NAME, ctx) != FEA_SUCCESS) return;
    bench_param_int(&rec, "dim", prm->dim);
    bench_param_int(&rec, "p", prm->p);
    bench_param_int(&rec, "n", n);
    bench_param_int(&rec, "level", L);
    bench_param_int(&rec, "nodes", lv[L].nodes);
    bench_param_int(&rec, "q_max", lv[L].q_max);
    bench_param_int(&rec, "r_max", lv[L].r_max);
    double gflops = lv[L].factor_s > 0 ? lv[L].flops / lv[L].factor_s * 1e-9 : 0.0;
    bench_metric(&rec, "flops", lv[L].flops);
    bench_metric(&rec, "factor_s", lv[L].factor_s);
    bench_metric(&rec, "gflops", gflops);
    bench_metric(&rec, "peak_fraction", gflops / dgemm_gflops);
    bench_report_emit(rep, &rec);
  }
}

/* The CPU backend on the same problem in the same run (GPU contexts only):
 * /cpu/threads with --threads, the same median of setups and solves; its
 * solution is compared with the GPU's. */
static int cpu_peer(bench_record *rec, const direct_params *prm, long long n, const double *xg,
                    fea_index nfree, double gpu_setup_s, double gpu_solve_s) {
  int rc = BENCH_OK;
  fea_context *cpu = NULL;
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_solver *solver = NULL;
  double *x = NULL;
  fea_index nf = 0;
  TRY(fea_context_create("/cpu/threads", &cpu));
  if (prm->threads > 0) TRY(fea_context_set_num_threads(cpu, prm->threads));
  TRY(make_problem(cpu, prm, (fea_index)n, &mesh, &space, &pb));
  TRY(fea_problem_get_num_free_dofs(pb, &nf));
  if (nf != nfree) {
    fprintf(stderr, "feaccel-bench: %s: the CPU problem has %lld free DoFs, the GPU's %lld\n",
            CASE_NAME, (long long)nf, (long long)nfree);
    rc = BENCH_FAILED;
    goto done;
  }
  x = malloc((size_t)nf * sizeof *x + 1);
  if (!x) {
    fprintf(stderr, "feaccel-bench: %s: out of memory for the CPU solution\n", CASE_NAME);
    rc = BENCH_FAILED;
    goto done;
  }
  TRY(fea_solver_create_multifrontal(cpu, space, pb, NULL, &solver));
  double setup_s = 0, solve_s = 0;
  rc = time_solver(solver, nf, x, prm->reps, &setup_s, &solve_s);
  if (rc != BENCH_OK) goto done;
  fea_solver_stats st = FEA_SOLVER_STATS_INIT;
  TRY(fea_solver_get_stats(solver, &st));
  fea_context_info info = {.size = sizeof info};
  TRY(fea_context_get_info(cpu, &info));
  double diff = 0, norm = 0;
  for (fea_index i = 0; i < nf; i++) {
    diff = fmax(diff, fabs(xg[i] - x[i]));
    norm = fmax(norm, fabs(x[i]));
  }
  int k = bench_peer(rec, "cpu_threads");
  bench_peer_metric(rec, k, "threads", info.num_threads);
  bench_peer_metric(rec, k, "setup_s", setup_s);
  bench_peer_metric(rec, k, "solve_s", solve_s);
  bench_peer_metric(rec, k, "integrate_s", st.integrate_s);
  bench_peer_metric(rec, k, "factor_s", st.factor_s);
  bench_peer_metric(rec, k, "gflops", st.flops / st.factor_s * 1e-9);
  /* ratio: GPU (setup + solve) / CPU (setup + solve), as for the other peers */
  bench_peer_metric(rec, k, "ratio", (gpu_setup_s + gpu_solve_s) / (setup_s + solve_s));
  bench_peer_metric(rec, k, "setup_ratio", gpu_setup_s / setup_s);
  bench_peer_metric(rec, k, "solve_ratio", gpu_solve_s / solve_s);
  bench_peer_metric(rec, k, "max_rel_diff", norm > 0 ? diff / norm : diff);
done:
  free(x);
  fea_solver_destroy(&solver);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&cpu);
  return rc;
}

static int run_size(bench_report *rep, fea_context *ctx, const direct_params *prm, long long n,
                    double dgemm_gflops, direct_point *pt) {
  int rc = BENCH_OK;
  const bench_family fam = {"bspline", (int)prm->dim, (int)prm->p};
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_solver *solver = NULL;
  fea_matrix *A = NULL;
  fea_solver_level *levels = NULL;
  double *x = NULL, *full = NULL, *b = NULL, *xc = NULL;
  fea_index nfree = 0, ndofs = 0;

  TRY(make_problem(ctx, prm, (fea_index)n, &mesh, &space, &pb));
  TRY(fea_problem_get_num_free_dofs(pb, &nfree));
  fea_space_info si = FEA_SPACE_INFO_INIT;
  TRY(fea_space_get_info(space, &si));
  ndofs = si.num_dofs;
  x = malloc((size_t)nfree * sizeof *x + 1);
  full = malloc((size_t)ndofs * sizeof *full + 1);
  if (!x || !full) {
    fprintf(stderr, "feaccel-bench: %s: out of memory for %lld DoFs\n", CASE_NAME,
            (long long)ndofs);
    rc = BENCH_FAILED;
    goto done;
  }

  double t0 = bench_now();
  TRY(fea_solver_create_multifrontal(ctx, space, pb, NULL, &solver));
  double symbolic_s = bench_now() - t0, setup_s = 0, solve_s = 0;
  rc = time_solver(solver, nfree, x, prm->reps, &setup_s, &solve_s);
  if (rc != BENCH_OK) goto done;
  fea_solver_stats st = FEA_SOLVER_STATS_INIT;
  TRY(fea_solver_get_stats(solver, &st));
  double root_flops = 0, root_s = 0;
  TRY(root_rate(solver, &st, &root_flops, &root_s));
  double leaves_s = 0, upper_flops = 0, upper_s = 0;
  TRY(level_split(solver, &st, &leaves_s, &upper_flops, &upper_s));
  if (prm->levels) TRY(levels_read(solver, st.num_levels, &levels));
  TRY(fea_problem_expand_solution(pb, x, full));
  double l2 = NAN;
  sine_dim = fam.dim;
  if (prm->components == 1) {
    TRY(fea_problem_error_norms(pb, full, sine_u, NULL, NULL, &l2, NULL));
  } else {
    double l2v[4];
    TRY(fea_problem_error_norms_vector(pb, full, elastic_u, NULL, NULL, l2v, NULL));
    l2 = l2v[prm->components];
  }
  fea_solver_destroy(&solver); /* its factors go before CHOLMOD's are made */

  bench_record rec;
  TRY(bench_record_init(&rec, CASE_NAME, ctx));
  bench_param_int(&rec, "dim", fam.dim);
  bench_param_int(&rec, "p", fam.p);
  if (prm->annulus) bench_param_str(&rec, "domain", fam.dim == 3 ? "ring" : "annulus");
  if (prm->components > 1) {
    bench_param_int(&rec, "components", prm->components);
    bench_param_str(&rec, "problem", fam.dim == 2 ? "elasticity, plane strain" : "elasticity");
  }
  bench_param_int(&rec, "n", n);
  bench_param_int(&rec, "dofs", nfree);
  bench_param_int(&rec, "reps", prm->reps);
  /* The rate over the whole factorization, the integration fused into the
   * leaves included: integrate_s is summed over the threads, so it cannot be
   * subtracted from the wall time. */
  double gflops = st.flops / st.factor_s * 1e-9, root_gflops = root_flops / root_s * 1e-9;
  bench_metric(&rec, "symbolic_s", symbolic_s);
  bench_metric(&rec, "setup_s", setup_s);
  bench_metric(&rec, "solve_s", solve_s);
  bench_metric(&rec, "integrate_s", st.integrate_s);
  bench_metric(&rec, "factor_s", st.factor_s);
  bench_metric(&rec, "root_s", st.root_s);
  bench_metric(&rec, "gflops", gflops);
  bench_metric(&rec, "peak_fraction", gflops / dgemm_gflops);
  bench_metric(&rec, "leaves_s", leaves_s);
  bench_metric(&rec, "upper_s", upper_s);
  bench_metric(&rec, "upper_gflops", upper_s > 0 ? upper_flops / upper_s * 1e-9 : 0.0);
  bench_metric(&rec, "upper_peak_fraction",
               upper_s > 0 ? upper_flops / upper_s * 1e-9 / dgemm_gflops : 0.0);
  bench_metric(&rec, "root_gflops", root_gflops);
  bench_metric(&rec, "root_peak_fraction", root_gflops / dgemm_gflops);
  bench_metric(&rec, "dgemm_gflops", dgemm_gflops);
  bench_metric(&rec, "factor_bytes", (double)st.factor_bytes);
  bench_metric(&rec, "peak_bytes", (double)st.peak_bytes);
  /* GPU: what the factorization reserved on the device (factors, the Schur
   * blocks of the worst level, maps, batches, one right-hand side). */
  if (prm->gpu) bench_metric(&rec, "device_bytes", (double)st.device_bytes);
  bench_metric(&rec, "forward_s", st.forward_s);
  bench_metric(&rec, "backward_s", st.backward_s);
  /* GPU: the copies of the right-hand sides and solutions within them. */
  if (prm->gpu) bench_metric(&rec, "transfer_s", st.transfer_s);
  bench_metric(&rec, "l2_error", l2);
  /* The accuracy report: smallest / largest pivot, 1 / condition number at most. */
  bench_metric(&rec, "pivot_ratio", st.pivot_ratio);
  pt->dofs = (double)nfree;
  pt->setup_s = setup_s;
  pt->solve_s = solve_s;
  pt->cholmod_s = NAN;

  if (prm->gpu && prm->cpu) {
    rc = cpu_peer(&rec, prm, n, x, nfree, setup_s, solve_s);
    if (rc != BENCH_OK) goto done;
  }

  if (prm->cholmod && bench_cholmod_available()) {
    /* The same reduced system, from the reference assembly (not timed: the
     * peer gets its matrix for free, our setup includes the integration). */
    b = malloc((size_t)nfree * sizeof *b + 1);
    xc = malloc((size_t)nfree * sizeof *xc + 1);
    if (!b || !xc) {
      fprintf(stderr, "feaccel-bench: %s: out of memory for CHOLMOD's vectors\n", CASE_NAME);
      rc = BENCH_FAILED;
      goto done;
    }
    TRY(fea_problem_assemble_reference(pb, b, &A));
    bench_cholmod_result cr;
    if (bench_cholmod_solve(A, b, xc, &cr) != 0) {
      rc = BENCH_FAILED;
      goto done;
    }
    double diff = 0, norm = 0;
    for (fea_index i = 0; i < nfree; i++) {
      diff = fmax(diff, fabs(x[i] - xc[i]));
      norm = fmax(norm, fabs(xc[i]));
    }
    double theirs = cr.analyze_s + cr.factor_s + cr.solve_s;
    int k = bench_peer(&rec, "cholmod");
    bench_peer_metric(&rec, k, "analyze_s", cr.analyze_s);
    bench_peer_metric(&rec, k, "factor_s", cr.factor_s);
    bench_peer_metric(&rec, k, "solve_s", cr.solve_s);
    bench_peer_metric(&rec, k, "gflops", cr.flops / cr.factor_s * 1e-9);
    bench_peer_metric(&rec, k, "flops", cr.flops);
    bench_peer_metric(&rec, k, "factor_bytes", cr.factor_bytes);
    bench_peer_metric(&rec, k, "peak_bytes", cr.peak_bytes);
    /* ratio: ours (setup + solve) / CHOLMOD's (analyze + factor + solve) */
    bench_peer_metric(&rec, k, "ratio", (setup_s + solve_s) / theirs);
    bench_peer_metric(&rec, k, "factor_ratio", setup_s / cr.factor_s);
    bench_peer_metric(&rec, k, "memory_ratio", (double)st.factor_bytes / cr.factor_bytes);
    bench_peer_metric(&rec, k, "max_rel_diff", norm > 0 ? diff / norm : diff);
    pt->cholmod_s = theirs;
    bench_report_emit(rep, &rec);
    bench_report_note(rep,
                      "  n = %lld: CHOLMOD chose the %s ordering; its flops %.4g (ours "
                      "%.4g), nnz(L) %.4g",
                      n, cr.ordering, cr.flops, st.flops, cr.lnz);
  } else {
    bench_report_emit(rep, &rec);
  }
  if (levels) levels_emit(rep, ctx, prm, n, levels, st.num_levels, dgemm_gflops);

done:
  free(levels);
  free(x);
  free(full);
  free(b);
  free(xc);
  fea_matrix_destroy(&A);
  fea_solver_destroy(&solver);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  return rc;
}

/* The sweep's last record: the fitted exponents of the time over N. */
static int emit_fit(bench_report *rep, fea_context *ctx, const direct_params *prm, int m,
                    const direct_point *pts) {
  int rc = BENCH_OK;
  double N[64], ours[64], setup[64], theirs[64];
  int have_peer = 1;
  for (int i = 0; i < m; i++) {
    N[i] = pts[i].dofs;
    ours[i] = pts[i].setup_s + pts[i].solve_s;
    setup[i] = pts[i].setup_s;
    theirs[i] = pts[i].cholmod_s;
    if (!(theirs[i] > 0)) have_peer = 0;
  }
  bench_record rec;
  TRY(bench_record_init(&rec, CASE_NAME, ctx));
  bench_param_str(&rec, "fit", "time ~ N^e, least squares in log-log");
  bench_param_int(&rec, "dim", prm->dim);
  bench_param_int(&rec, "p", prm->p);
  bench_param_int(&rec, "n_min", prm->n_min);
  bench_param_int(&rec, "n_max", prm->n);
  bench_param_int(&rec, "points", m);
  bench_metric(&rec, "time_exponent", loglog_slope(m, N, ours));
  bench_metric(&rec, "setup_exponent", loglog_slope(m, N, setup));
  if (have_peer) {
    int k = bench_peer(&rec, "cholmod");
    bench_peer_metric(&rec, k, "time_exponent", loglog_slope(m, N, theirs));
  }
  bench_report_emit(rep, &rec);
done:
  return rc;
}

/* --cost: the a-priori cost model of --dim, --p, --n on P = 1, 2, 4, ..., 4096
 * processors, one record each: the paper's closed forms (eq. 23, its speedup
 * and efficiency: Figs. 9-11) and the exact counts of the solver's own tree
 * (fea_cost_model_exact) with their speedup; P = 0 is eq. 24 (unlimited). */
static int cost_emit(bench_report *rep, fea_context *ctx, const direct_params *prm) {
  int rc = BENCH_OK;
  fea_cost_query q = FEA_COST_QUERY_INIT;
  q.dim = (int)prm->dim;
  q.p = (int)prm->p;
  q.n = (fea_index)prm->n;
  fea_cost exact1 = FEA_COST_INIT;
  q.nproc = 1;
  fea_status s = fea_cost_model_exact(ctx, &q, &exact1);
  if (s < 0) return bench_fail("fea_cost_model_exact", s);
  for (int P = 0; P <= 4096; P = P ? 2 * P : 1) {
    fea_cost paper = FEA_COST_INIT, exact = FEA_COST_INIT;
    double speedup = 0, efficiency = 0;
    q.nproc = P;
    s = fea_cost_model_paper(&q, &paper);
    if (s >= 0) s = fea_cost_model_exact(ctx, &q, &exact);
    if (s >= 0 && P > 0) s = fea_cost_strong_scaling_paper(&q, &speedup, &efficiency);
    if (s < 0) return bench_fail("the cost model", s);
    bench_record rec;
    TRY(bench_record_init(&rec, CASE_NAME, ctx));
    bench_param_str(&rec, "cost", "model");
    bench_param_int(&rec, "dim", prm->dim);
    bench_param_int(&rec, "p", prm->p);
    bench_param_int(&rec, "n", prm->n);
    bench_param_int(&rec, "nproc", P);
    bench_metric(&rec, "paper_flops", paper.flops);
    bench_metric(&rec, "paper_critical_path_flops", paper.critical_path_flops);
    bench_metric(&rec, "paper_memory_bytes", paper.memory_bytes);
    if (P > 0) {
      bench_metric(&rec, "paper_speedup", speedup);
      bench_metric(&rec, "paper_efficiency", efficiency);
    }
    bench_metric(&rec, "exact_flops", exact.flops);
    bench_metric(&rec, "exact_critical_path_flops", exact.critical_path_flops);
    bench_metric(&rec, "exact_memory_bytes", exact.memory_bytes);
    if (P > 0 && exact.critical_path_flops > 0) {
      double sp = exact1.critical_path_flops / exact.critical_path_flops;
      bench_metric(&rec, "exact_speedup", sp);
      bench_metric(&rec, "exact_efficiency", sp / P);
    }
    bench_metric(&rec, "num_levels", exact.num_levels);
    bench_metric(&rec, "root_front", (double)exact.root_front);
    bench_report_emit(rep, &rec);
  }
done:
  return rc;
}

static int parse(int argc, char **argv, direct_params *p) {
  static const struct {
    const char *name;
    long long min, max;
    size_t off;
  } opts[] = {
      {"--dim", 1, 3, offsetof(direct_params, dim)},
      {"--p", 1, 8, offsetof(direct_params, p)},
      {"--n", 1, 1 << 20, offsetof(direct_params, n)},
      {"--n-min", 1, 1 << 20, offsetof(direct_params, n_min)},
      {"--gemm-n", 64, 1 << 14, offsetof(direct_params, gemm_n)},
      {"--components", 1, 3, offsetof(direct_params, components)},
  };
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--sweep") == 0) {
      p->sweep = 1;
      continue;
    }
    if (strcmp(argv[i], "--no-cholmod") == 0) {
      p->cholmod = 0;
      continue;
    }
    if (strcmp(argv[i], "--no-cpu") == 0) {
      p->cpu = 0;
      continue;
    }
    if (strcmp(argv[i], "--levels") == 0) {
      p->levels = 1;
      continue;
    }
    if (strcmp(argv[i], "--cost") == 0) {
      p->cost = 1;
      continue;
    }
    if (strcmp(argv[i], "--domain") == 0 && i + 1 < argc &&
        (strcmp(argv[i + 1], "annulus") == 0 || strcmp(argv[i + 1], "box") == 0)) {
      p->annulus = strcmp(argv[++i], "annulus") == 0;
      continue;
    }
    int matched = 0;
    for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !matched; k++) {
      const char *v = NULL;
      int got = bench_option_value(argc, argv, &i, opts[k].name, &v);
      if (got < 0) return BENCH_USAGE;
      if (got == 0) continue;
      if (bench_parse_ll(CASE_NAME, opts[k].name, v, opts[k].min, opts[k].max,
                         (long long *)((char *)p + opts[k].off)) < 0)
        return BENCH_USAGE;
      matched = 1;
    }
    if (!matched) {
      fprintf(stderr, "feaccel-bench: %s: unknown option '%s' (see feaccel-bench %s --help)\n",
              CASE_NAME, argv[i], CASE_NAME);
      return BENCH_USAGE;
    }
  }
  if (p->components != 1 && (p->components != p->dim || p->annulus)) {
    fprintf(stderr,
            "feaccel-bench: %s: --components %lld: 1 (Poisson) or the dimension %lld "
            "(elasticity, on the box only)\n",
            CASE_NAME, p->components, p->dim);
    return BENCH_USAGE;
  }
  if (p->sweep && p->n_min >= p->n) {
    fprintf(stderr, "feaccel-bench: %s: --sweep needs --n-min %lld < --n %lld\n", CASE_NAME,
            p->n_min, p->n);
    return BENCH_USAGE;
  }
  return BENCH_OK;
}

static int run(const bench_options *o, int argc, char **argv) {
  direct_params prm = {.dim = 2,
                       .p = 3,
                       .n = 256,
                       .n_min = 32,
                       .gemm_n = 0,
                       .sweep = 0,
                       .cholmod = 1,
                       .reps = o->reps,
                       .cpu = 1,
                       .threads = o->threads,
                       .components = 1};
  int rc = parse(argc, argv, &prm);
  if (rc != BENCH_OK) return rc;
  fea_context *ctx = NULL;
  rc = bench_open_context(o, "/cpu/threads", &ctx);
  if (rc != BENCH_OK) return rc;
  fea_context_info cinfo = {.size = sizeof cinfo};
  if (fea_context_get_info(ctx, &cinfo) == FEA_SUCCESS)
    prm.gpu = strncmp(cinfo.backend, "/gpu/", 5) == 0;
  /* A GPU's DGEMM needs a larger order to reach its rate. */
  if (prm.gemm_n == 0) prm.gemm_n = prm.gpu ? 8192 : 2048;
  fea_status s;
  bench_report rep;
  bench_report_init(&rep, o);
  if (prm.cost) {
    rc = cost_emit(&rep, ctx, &prm);
    fea_context_destroy(&ctx);
    return rc;
  }
  double dgemm = 0;
  s = bench_dgemm_peak(ctx, prm.gemm_n, 3, &dgemm);
  if (s < 0) rc = bench_fail("the DGEMM yardstick (fea_dense_gemm)", s);

  direct_point pts[64];
  int m = 0;
  if (rc == BENCH_OK && prm.sweep) {
    /* n doubling from n_min, then n itself: the exponent wants a wide range. */
    for (long long n = prm.n_min; rc == BENCH_OK && m < 63; n *= 2) {
      if (n > prm.n) n = prm.n;
      rc = run_size(&rep, ctx, &prm, n, dgemm, &pts[m++]);
      if (n == prm.n) break;
    }
    if (rc == BENCH_OK && m >= 2) rc = emit_fit(&rep, ctx, &prm, m, pts);
  } else if (rc == BENCH_OK) {
    rc = run_size(&rep, ctx, &prm, prm.n, dgemm, &pts[0]);
  }
  if (rc == BENCH_OK) {
    bench_report_note(&rep,
                      "\nsetup = element integration + factorization (median of %d); "
                      "gflops = counted flops / factor_s (integration included);",
                      prm.reps);
    bench_report_note(&rep,
                      "peak_fraction = gflops / dgemm_gflops, DGEMM of order %lld on the "
                      "same context in the same run;",
                      prm.gemm_n);
    if (prm.gpu)
      bench_report_note(&rep,
                        "GPU: setup_s and solve_s include the host-device transfers (each "
                        "level waits for the device); integrate_s is the leaves' host "
                        "integration; device_bytes is what setup reserved on the device;%s",
                        prm.cpu ? " cpu_threads: /cpu/threads on the same problem in the same "
                                  "run, ratio = GPU / CPU (setup + solve)."
                                : "");
    if (prm.cholmod && !bench_cholmod_available())
      bench_report_note(&rep,
                        "CHOLMOD: not found when feaccel-bench was configured "
                        "(install libsuitesparse-dev and reconfigure).");
    else if (prm.cholmod)
      bench_report_note(&rep,
                        "cholmod: supernodal, default ordering, on the reference-assembled "
                        "reduced matrix (assembly not timed); ratio = (setup + solve) / "
                        "(analyze + factor + solve).");
  }
  fea_context_destroy(&ctx);
  return rc;
}

const bench_case bench_case_iga_direct = {
    .name = CASE_NAME,
    .description =
        "IGA multifrontal direct solver: phases, GFLOP/s vs DGEMM, memory, L2 error; "
        "CHOLMOD side by side",
    .usage =
        "usage: feaccel-bench [global options] iga-direct [--dim D] [--p P] [--n N] "
        "[--sweep [--n-min M]] [--gemm-n G] [--no-cholmod] [--no-cpu] [--levels]\n"
        "       [--domain box|annulus] [--components C] [--cost]\n"
        "\n"
        "  --dim D      1, 2 or 3 (default 2)\n"
        "  --p P        B-spline degree 1..8 (default 3)\n"
        "  --n N        elements per direction, open uniform knots (default 256)\n"
        "  --sweep      n = M, 2M, 4M, ... up to N; fits the time exponent over N\n"
        "  --n-min M    the sweep's first n (default 32)\n"
        "  --gemm-n G   order of the DGEMM yardstick (default 2048, 8192 on a GPU)\n"
        "  --no-cholmod leave the CHOLMOD peer out\n"
        "  --no-cpu     on a GPU backend, leave out the /cpu/threads run of the same problem\n"
        "  --levels     also one record per tree level: nodes, largest q and r, flops, time,\n"
        "               GFLOP/s and its fraction of the DGEMM yardstick\n"
        "  --domain D   box (default: the unit square or cube) or annulus: the quarter annulus\n"
        "               (2D) or thick quarter ring (3D), exact NURBS geometry, u = g on it\n"
        "  --components C  1 (default: Poisson) or D: linear elasticity on the box (plane\n"
        "               strain in 2D, lambda = mu = 1, every side clamped, every component of\n"
        "               u the sine); dofs counts every component\n"
        "  --cost       only the cost model of --dim, --p, --n on P = 0 (unlimited), 1, 2, 4, ..,\n"
        "               4096 processors: the paper's eqs. 23-27 with the speedup and efficiency\n"
        "               of its Figs. 9-11, and the exact counts of the solver's tree; no solve\n"
        "\n"
        "Default backend /cpu/threads. --reps R: median of R setups and solves, after one\n"
        "warm-up when R > 1 (use --reps 1 for big sizes). With --backend /gpu/cuda the\n"
        "record adds device_bytes and a cpu_threads peer (the same problem on /cpu/threads\n"
        "in the same run, --threads applies to it). leaves_s is level 0 (integration and\n"
        "upload), upper_s / upper_gflops the levels above it (the dense kernels alone).\n",
    .run = run,
};
