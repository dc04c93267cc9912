/* feaccel-bench-mpi: the distributed multipatch solver (libfeaccel-petsc,
 * docs/distributed.md) under mpiexec, against the single-process
 * multifrontal solver of the same space in the same run (issue #25).
 *
 *   mpiexec -n R feaccel-bench-mpi multipatch --dim D --p P --n N --patches K
 *
 * The problem is bench/case-multipatch.c's (multipatch-grid.h): K^D box
 * patches of degree P with N elements per direction, Poisson with u = g on
 * the boundary; --weak instead takes a fixed number of patches per rank (a
 * grid of R x that many patches of side 1/2). Per configuration, rank 0
 * prints one record (bench/report.c: table or JSON lines) and one row of a
 * Markdown table: the interface size and its closed form, the maxima over
 * the ranks of the phases (local elimination, interface assembly and MUMPS
 * factorization, solve), memory per rank, the bytes PETSc sent, the single
 * patch with C0 knot lines on rank 0 (setup + solve, and the largest
 * difference of the two solutions), and the iterations of CG on the
 * interface (Jacobi, and --interface-pc NAME). --sweep doubles N and fits
 * the interface's growth exponent over the free DoFs. The run fails (exit 1)
 * when the interface size is not its closed form or the distributed and
 * single-process solutions differ by more than 1e-9 (relative). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <feaccel.h>
#include <feaccel/multipatch.h>
#include <feaccel/petsc.h>

#include "multipatch-grid.h"
#include "report.h"
#include "timing.h"

#define PROG "feaccel-bench-mpi"
#define CASE_NAME "multipatch-mpi"
#define MAX_POINTS 32

typedef struct params {
  long long dim, p, n, n_min, k, per_rank, reps, threads;
  int sweep, weak, single, cg, json;
  const char *pc;         /* --interface-pc: CG with this PC on the interface */
  const char *petsc_opts; /* --petsc-options: inserted into PETSc's database */
} params;

/* One interface KSP: NULL fields keep the solver's default (MUMPS LU). */
typedef struct iface {
  const char *name, *ksp, *pc, *rtol;
} iface;

/* The maxima over the ranks (medians over the repetitions) of one
 * distributed configuration. */
typedef struct drun {
  double create_s, setup_s, solve_s, local_s, local_min_s, interface_s, msolve_s;
  int iterations, converged, patches_max;
  double ni, local_dofs_max, bytes_max, bytes_sum, rss_max, petsc_sent;
} drun;

/* What the Markdown table and the sweep's fit need of one configuration. */
typedef struct point {
  mp_grid g;
  double free_dofs, predicted, single_s, single_setup_s, diff;
  drun mumps, cg, pc;
} point;

static int rank = 0, size = 1;

#define OK(expr)                               \
  do {                                         \
    fea_status ok_st_ = (expr);                \
    if (ok_st_ < 0) {                          \
      fprintf(stderr, "[rank %d] ", rank);     \
      bench_fail(#expr, ok_st_);               \
      MPI_Abort(MPI_COMM_WORLD, BENCH_FAILED); \
    }                                          \
  } while (0)

#define NOMEM(ptr)                                                               \
  do {                                                                           \
    if (!(ptr)) {                                                                \
      fprintf(stderr, "[rank %d] " PROG ": out of memory for %s\n", rank, #ptr); \
      MPI_Abort(MPI_COMM_WORLD, BENCH_FAILED);                                   \
    }                                                                            \
  } while (0)

/* A barrier that sleeps instead of spinning: while rank 0 runs the
 * single-process solver alone, the other ranks must not take its core (Open
 * MPI's blocking waits poll, which on an oversubscribed machine halves rank
 * 0's speed). */
static void quiet_barrier(void) {
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  int done = 0;
  for (;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) break;
    const struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

static double petsc_bytes_sent(void) {
#if defined(PETSC_USE_LOG)
  return petsc_isend_len + petsc_send_len;
#else
  return NAN;
#endif
}

static double peak_rss_bytes(void) {
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) == 0 ? 1024.0 * (double)ru.ru_maxrss : NAN;
}

static void set_options(const iface *f, int on) {
  const char *keys[3] = {"-feaccel_ksp_type", "-feaccel_pc_type", "-feaccel_ksp_rtol"};
  const char *vals[3] = {f->ksp, f->pc, f->rtol};
  for (int i = 0; i < 3; i++) {
    if (!vals[i]) continue;
    PetscErrorCode e = on ? PetscOptionsSetValue(NULL, keys[i], vals[i])
                          : PetscOptionsClearValue(NULL, keys[i]);
    if (e) {
      fprintf(stderr, "[rank %d] " PROG ": PETSc option %s failed\n", rank, keys[i]);
      MPI_Abort(MPI_COMM_WORLD, BENCH_FAILED);
    }
  }
}

/* reps timed create + setup + solve + destroy cycles (after one warm-up when
 * reps > 1), all ranks starting together; x receives the solution. */
static void run_distributed(fea_context *ctx, fea_multipatch_problem *pb, const iface *f, int reps,
                            double *x, drun *out) {
  enum { CREATE, SETUP, SOLVE, LOCAL, NEG_LOCAL, IFACE, MSOLVE, NT };
  double *t[NT];
  for (int q = 0; q < NT; q++) NOMEM(t[q] = malloc((size_t)reps * sizeof *t[q]));
  set_options(f, 1);
  fea_petsc_multipatch_stats st = FEA_PETSC_MULTIPATCH_STATS_INIT;
  double sent = 0;
  int converged = 1;
  for (int r = reps > 1 ? -1 : 0; r < reps; r++) {
    fea_petsc_multipatch *s = NULL;
    quiet_barrier();
    const double s0 = petsc_bytes_sent();
    const double a = bench_now();
    OK(fea_petsc_multipatch_create(PETSC_COMM_WORLD, ctx, pb, NULL, &s));
    const double b = bench_now();
    OK(fea_petsc_multipatch_setup(s));
    const double c = bench_now();
    const fea_status solved = fea_petsc_multipatch_solve(s, NULL, x);
    OK(solved);
    const double d = bench_now();
    sent = petsc_bytes_sent() - s0;
    converged = solved == FEA_SUCCESS;
    OK(fea_petsc_multipatch_get_stats(s, &st));
    OK(fea_petsc_multipatch_destroy(&s));
    double mine[NT] = {b - a, c - b, d - c, st.local_s, -st.local_s, st.interface_s, st.solve_s};
    double all[NT];
    MPI_Allreduce(mine, all, NT, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r >= 0)
      for (int q = 0; q < NT; q++) t[q][r] = all[q];
  }
  set_options(f, 0);
  memset(out, 0, sizeof *out);
  out->create_s = bench_median(t[CREATE], reps);
  out->setup_s = bench_median(t[SETUP], reps);
  out->solve_s = bench_median(t[SOLVE], reps);
  out->local_s = bench_median(t[LOCAL], reps);
  out->local_min_s = -bench_median(t[NEG_LOCAL], reps);
  out->interface_s = bench_median(t[IFACE], reps);
  out->msolve_s = bench_median(t[MSOLVE], reps);
  for (int q = 0; q < NT; q++) free(t[q]);
  out->iterations = st.iterations;
  out->ni = (double)st.interface_dofs;
  /* Per rank: patches, DoFs, the patches' memory estimate, peak RSS, bytes
   * PETSc sent (MUMPS's own messages are not counted). */
  double mine[4] = {(double)st.local_patches, (double)st.local_dofs, (double)st.local_bytes,
                    peak_rss_bytes()};
  double mx[4], sum[2], add[2] = {(double)st.local_bytes, sent};
  int conv_all = 0;
  MPI_Allreduce(mine, mx, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(add, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&converged, &conv_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  out->patches_max = (int)mx[0];
  out->local_dofs_max = mx[1];
  out->bytes_max = mx[2];
  out->rss_max = mx[3];
  out->bytes_sum = sum[0];
  out->petsc_sent = sum[1];
  out->converged = conv_all;
}

/* Rank 0: the C0 single patch's multifrontal setup + solve (medians of reps
 * after one warm-up when reps > 1); u_full receives its global solution. */
static void run_single(fea_context *ctx, const mp_grid *g, int *user, int reps, double *u_full,
                       double *setup_s, double *solve_s, double *peak_bytes) {
  fea_space *whole = NULL;
  fea_problem *pb = NULL;
  fea_solver *ss = NULL;
  OK(mp_grid_create_c0_patch(ctx, g, &whole));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = mp_grid_exact_f, pd.source_user = user;
  pd.dirichlet = mp_grid_exact_u, pd.dirichlet_user = user;
  OK(fea_problem_create_poisson(whole, &pd, &pb));
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  double *y = malloc((size_t)nf * sizeof *y + 1), *ts = malloc((size_t)reps * sizeof *ts),
         *tv = malloc((size_t)reps * sizeof *tv);
  NOMEM(y);
  NOMEM(ts);
  NOMEM(tv);
  const double c0 = bench_now();
  OK(fea_solver_create_multifrontal(ctx, whole, pb, NULL, &ss));
  const double create_s = bench_now() - c0;
  for (int r = reps > 1 ? -1 : 0; r < reps; r++) {
    const double a = bench_now();
    OK(fea_solver_setup(ss));
    const double b = bench_now();
    OK(fea_solver_solve(ss, 1, NULL, 0, y, nf > 0 ? nf : 1));
    const double c = bench_now();
    if (r >= 0) ts[r] = b - a, tv[r] = c - b;
  }
  fea_solver_stats sst = FEA_SOLVER_STATS_INIT;
  OK(fea_solver_get_stats(ss, &sst));
  OK(fea_problem_expand_solution(pb, y, u_full));
  *setup_s = create_s + bench_median(ts, reps);
  *solve_s = bench_median(tv, reps);
  *peak_bytes = (double)sst.peak_bytes;
  free(y), free(ts), free(tv);
  fea_solver_destroy(&ss);
  fea_problem_destroy(&pb);
  fea_space_destroy(&whole);
}

static double max_rel_diff(const double *a, const double *b, fea_index n) {
  double d = 0, m = 0;
  for (fea_index i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i])), m = fmax(m, fabs(b[i]));
  return m > 0 ? d / m : d;
}

static void grid_name(const mp_grid *g, char *buf, size_t len) {
  if (g->dim == 3)
    snprintf(buf, len, "%lldx%lldx%lld", g->k[0], g->k[1], g->k[2]);
  else
    snprintf(buf, len, "%lldx%lld", g->k[0], g->k[1]);
}

/* One configuration: every rank takes part; rank 0 reports. Returns
 * BENCH_OK or BENCH_FAILED (the checks) on every rank. */
static int run_config(bench_report *rep, fea_context *ctx, const params *prm, const mp_grid *g,
                      point *pt) {
  const long long np = mp_grid_num_patches(g);
  fea_space **patches = calloc((size_t)np, sizeof *patches);
  NOMEM(patches);
  fea_multipatch *mp = NULL;
  fea_multipatch_problem *mpb = NULL;
  int user = g->dim;
  OK(mp_grid_create_problem(ctx, g, &user, patches, &mp, &mpb));
  fea_multipatch_info info = FEA_MULTIPATCH_INFO_INIT;
  OK(fea_multipatch_get_info(mp, &info));
  fea_index nf = 0;
  OK(fea_multipatch_problem_get_num_free_dofs(mpb, &nf));
  double *x = malloc((size_t)nf * sizeof *x + 1), *xi = malloc((size_t)nf * sizeof *xi + 1);
  NOMEM(x);
  NOMEM(xi);
  memset(pt, 0, sizeof *pt);
  pt->g = *g;
  pt->free_dofs = (double)nf;
  pt->predicted = mp_grid_predicted_interface(g);
  pt->single_s = pt->single_setup_s = pt->diff = NAN;

  const iface mumps = {"mumps", NULL, NULL, NULL};
  run_distributed(ctx, mpb, &mumps, (int)prm->reps, x, &pt->mumps);

  /* The single process on rank 0, the others asleep. */
  double single_setup = NAN, single_solve = NAN, single_peak = NAN;
  if (prm->single) {
    if (rank == 0) {
      double *u = calloc((size_t)info.num_dofs + 1, sizeof *u),
             *v = calloc((size_t)info.num_dofs + 1, sizeof *v);
      NOMEM(u);
      NOMEM(v);
      run_single(ctx, g, &user, (int)prm->reps, v, &single_setup, &single_solve, &single_peak);
      OK(fea_multipatch_problem_expand_solution(mpb, x, u));
      OK(mp_grid_max_rel_diff(mp, g, u, v, &pt->diff));
      pt->single_setup_s = single_setup;
      pt->single_s = single_setup + single_solve;
      free(u), free(v);
    }
    quiet_barrier();
  }

  /* Iterative interface solves, once each: iterations and agreement. */
  double cg_diff = NAN, pc_diff = NAN;
  if (prm->cg) {
    const iface cg = {"cg_jacobi", "cg", "jacobi", "1e-10"};
    run_distributed(ctx, mpb, &cg, 1, xi, &pt->cg);
    cg_diff = max_rel_diff(xi, x, nf);
  }
  char pc_name[64] = "";
  if (prm->pc) {
    snprintf(pc_name, sizeof pc_name, "cg_%s", prm->pc);
    const iface pc = {pc_name, "cg", prm->pc, "1e-10"};
    run_distributed(ctx, mpb, &pc, 1, xi, &pt->pc);
    pc_diff = max_rel_diff(xi, x, nf);
  }

  int rc = BENCH_OK;
  if (rank == 0) {
    char gname[48];
    grid_name(g, gname, sizeof gname);
    const drun *m = &pt->mumps;
    bench_record rec;
    OK(bench_record_init(&rec, CASE_NAME, ctx));
    bench_param_int(&rec, "dim", g->dim);
    bench_param_int(&rec, "p", g->p);
    bench_param_int(&rec, "n", g->n);
    bench_param_str(&rec, "grid", gname);
    bench_param_int(&rec, "patches", np);
    bench_param_int(&rec, "ranks", size);
    if (prm->weak) bench_param_int(&rec, "patches_per_rank", prm->per_rank);
    bench_param_int(&rec, "reps", prm->reps);
    bench_metric(&rec, "dofs", (double)info.num_dofs);
    bench_metric(&rec, "free_dofs", (double)nf);
    bench_metric(&rec, "interface_dofs", m->ni);
    bench_metric(&rec, "predicted_interface_dofs", pt->predicted);
    bench_metric(&rec, "interface_ratio", m->ni / pt->predicted);
    bench_metric(&rec, "local_patches_max", m->patches_max);
    bench_metric(&rec, "local_dofs_max", m->local_dofs_max);
    bench_metric(&rec, "create_s", m->create_s);
    bench_metric(&rec, "setup_s", m->setup_s);
    bench_metric(&rec, "local_s", m->local_s);
    bench_metric(&rec, "local_min_s", m->local_min_s);
    bench_metric(&rec, "interface_s", m->interface_s);
    bench_metric(&rec, "solve_s", m->msolve_s);
    bench_metric(&rec, "local_bytes_max", m->bytes_max);
    bench_metric(&rec, "local_bytes_sum", m->bytes_sum);
    bench_metric(&rec, "rss_max_bytes", m->rss_max);
    bench_metric(&rec, "petsc_sent_bytes", m->petsc_sent);
    bench_metric(&rec, "replicated_bytes", 8.0 * (double)nf * size);
    if (prm->single) {
      const int q = bench_peer(&rec, "multifrontal");
      bench_peer_metric(&rec, q, "setup_s", single_setup);
      bench_peer_metric(&rec, q, "solve_s", single_solve);
      bench_peer_metric(&rec, q, "peak_bytes", single_peak);
      bench_peer_metric(&rec, q, "ratio", (m->create_s + m->setup_s + m->solve_s) / pt->single_s);
      bench_peer_metric(&rec, q, "max_rel_diff", pt->diff);
    }
    const drun *its[2] = {prm->cg ? &pt->cg : NULL, prm->pc ? &pt->pc : NULL};
    const char *names[2] = {"cg_jacobi", pc_name};
    const double diffs[2] = {cg_diff, pc_diff};
    for (int i = 0; i < 2; i++) {
      if (!its[i]) continue;
      const int q = bench_peer(&rec, names[i]);
      bench_peer_metric(&rec, q, "iterations", its[i]->iterations);
      bench_peer_metric(&rec, q, "converged", its[i]->converged);
      bench_peer_metric(&rec, q, "interface_s", its[i]->interface_s);
      bench_peer_metric(&rec, q, "solve_s", its[i]->msolve_s);
      bench_peer_metric(&rec, q, "max_rel_diff", diffs[i]);
    }
    bench_report_emit(rep, &rec);

    /* The closed form and the agreement are checks, not only figures. */
    if (m->ni != pt->predicted) {
      fprintf(stderr, PROG ": %.0f interface DoFs, the closed form says %.0f\n", m->ni,
              pt->predicted);
      rc = BENCH_FAILED;
    }
    if (prm->single && !(pt->diff <= 1e-9)) {
      fprintf(stderr,
              PROG ": the distributed and single-process solutions differ by %g (relative)\n",
              pt->diff);
      rc = BENCH_FAILED;
    }
    for (int i = 0; i < 2; i++)
      if (its[i] && !(its[i]->converged && diffs[i] <= 1e-6)) {
        fprintf(stderr, PROG ": %s: %s, %g from the MUMPS solution (relative)\n", names[i],
                its[i]->converged ? "converged" : "not converged", diffs[i]);
        rc = BENCH_FAILED;
      }
  }
  (void)MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(x), free(xi);
  fea_multipatch_problem_destroy(&mpb);
  fea_multipatch_destroy(&mp);
  for (long long q = 0; q < np; q++) fea_space_destroy(&patches[q]);
  free(patches);
  return rc;
}

static void print_table(const params *prm, int m, const point *pts) {
  printf(
      "\n| ranks | patches | free DoFs | interface DoFs | closed form | local_s max (min) | "
      "interface_s | solve_s | local MB max / sum | RSS MB max | PETSc sent MB | "
      "total s | single s | max_rel_diff | CG+Jacobi its |%s\n",
      prm->pc ? " CG+PC its |" : "");
  printf(
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
      "---: | ---: | ---: |%s\n",
      prm->pc ? " ---: |" : "");
  for (int i = 0; i < m; i++) {
    const point *p = &pts[i];
    const drun *d = &p->mumps;
    char gname[48];
    grid_name(&p->g, gname, sizeof gname);
    printf(
        "| %d | %s | %.0f | %.0f | %.0f | %.3g (%.3g) | %.3g | %.3g | %.3g / %.3g | %.0f | "
        "%.3g | %.3g | %.3g | %.1e |",
        size, gname, p->free_dofs, d->ni, p->predicted, d->local_s, d->local_min_s, d->interface_s,
        d->msolve_s, d->bytes_max * 1e-6, d->bytes_sum * 1e-6, d->rss_max * 1e-6,
        d->petsc_sent * 1e-6, d->create_s + d->setup_s + d->solve_s, p->single_s, p->diff);
    if (prm->cg)
      printf(" %d |", p->cg.iterations);
    else
      printf(" - |");
    if (prm->pc) printf(" %d |", p->pc.iterations);
    printf("\n");
  }
}

/* The sweep's fit: exponents over the free DoFs. */
static void emit_fit(bench_report *rep, fea_context *ctx, const params *prm, int m,
                     const point *pts) {
  double N[MAX_POINTS], ni[MAX_POINTS], pred[MAX_POINTS], loc[MAX_POINTS], itf[MAX_POINTS],
      single[MAX_POINTS];
  for (int i = 0; i < m; i++) {
    N[i] = pts[i].free_dofs, ni[i] = pts[i].mumps.ni, pred[i] = pts[i].predicted;
    loc[i] = pts[i].mumps.local_s, itf[i] = pts[i].mumps.interface_s;
    single[i] = pts[i].single_setup_s;
  }
  const double d = (double)prm->dim;
  bench_record rec;
  OK(bench_record_init(&rec, CASE_NAME, ctx));
  bench_param_str(&rec, "fit", "y ~ N^e over free DoFs, least squares in log-log");
  bench_param_int(&rec, "dim", prm->dim);
  bench_param_int(&rec, "p", prm->p);
  bench_param_int(&rec, "patches", mp_grid_num_patches(&pts[0].g));
  bench_param_int(&rec, "ranks", size);
  bench_param_int(&rec, "n_min", pts[0].g.n);
  bench_param_int(&rec, "n_max", pts[m - 1].g.n);
  bench_param_int(&rec, "points", m);
  const double e = mp_grid_loglog_slope(m, N, ni), em = mp_grid_loglog_slope(m, N, pred);
  bench_metric(&rec, "interface_exponent", e);
  bench_metric(&rec, "model_interface_exponent", em);
  bench_metric(&rec, "asymptotic_interface_exponent", (d - 1) / d);
  bench_metric(&rec, "local_exponent", mp_grid_loglog_slope(m, N, loc));
  bench_metric(&rec, "interface_time_exponent", mp_grid_loglog_slope(m, N, itf));
  if (prm->single) {
    const int q = bench_peer(&rec, "multifrontal");
    bench_peer_metric(&rec, q, "setup_exponent", mp_grid_loglog_slope(m, N, single));
  }
  bench_report_emit(rep, &rec);
  if (!prm->json)
    printf(
        "\ninterface DoFs ~ N^e over n = %lld .. %lld: measured e = %.4f, closed form at the "
        "same sizes %.4f, asymptotic (d-1)/d = %.4f\n",
        pts[0].g.n, pts[m - 1].g.n, e, em, (d - 1) / d);
}

static const char usage[] =
    "usage: mpiexec -n R " PROG
    " multipatch [--dim D] [--p P] [--n N] [--patches K]\n"
    "         [--weak [--patches-per-rank Q]] [--sweep [--n-min M]] [--reps R] [--threads T]\n"
    "         [--no-single] [--no-cg] [--interface-pc NAME] [--petsc-options 'OPTS'] [--json]\n"
    "\n"
    "  --dim D               2 or 3 (default 2)\n"
    "  --p P                 B-spline degree 1..8 of every patch (default 3)\n"
    "  --n N                 elements per direction of every patch (default 64 in 2D, 8 in 3D)\n"
    "  --patches K           K x K (x K) patches on the unit box (default 2; at least R patches)\n"
    "  --weak                Q patches per rank instead: a grid of R Q patches of side 1/2\n"
    "  --patches-per-rank Q  (default 2)\n"
    "  --sweep               n = M, 2M, ... up to N; fits the interface's growth exponent\n"
    "  --n-min M             the sweep's first n (default 8 in 2D, 2 in 3D)\n"
    "  --reps R              timed repetitions after one warm-up (default 3)\n"
    "  --threads T           threads of each rank's /cpu/threads context (default 1)\n"
    "  --no-single           leave out the single-process multifrontal solve on rank 0\n"
    "  --no-cg               leave out CG + Jacobi on the interface\n"
    "  --interface-pc NAME   also CG with -feaccel_pc_type NAME (e.g. bddc) on the interface\n"
    "  --petsc-options OPTS  more PETSc options (every run)\n"
    "  --json                JSON lines instead of the tables\n"
    "\n"
    "The interface KSP (prefix feaccel_) is MUMPS's LU by default; the iterative runs use\n"
    "-feaccel_ksp_type cg -feaccel_ksp_rtol 1e-10. Exit 1 when the interface size is not\n"
    "its closed form or the distributed and single-process solutions differ by more than\n"
    "1e-9 (relative).\n";

static int parse(int argc, char **argv, params *p) {
  static const struct {
    const char *name;
    long long min, max;
    size_t off;
  } opts[] = {
      {"--dim", 2, 3, offsetof(params, dim)},
      {"--p", 1, 8, offsetof(params, p)},
      {"--n", 1, 1 << 16, offsetof(params, n)},
      {"--n-min", 1, 1 << 16, offsetof(params, n_min)},
      {"--patches", 1, 64, offsetof(params, k)},
      {"--patches-per-rank", 1, 64, offsetof(params, per_rank)},
      {"--reps", 1, 100, offsetof(params, reps)},
      {"--threads", 1, 1024, offsetof(params, threads)},
  };
  if (argc < 2 || strcmp(argv[1], "multipatch") != 0) {
    if (rank == 0) fputs(usage, argc >= 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr);
    return argc >= 2 && strcmp(argv[1], "--help") == 0 ? -1 : BENCH_USAGE;
  }
  for (int i = 2; i < argc; i++) {
    const char *v = NULL;
    if (strcmp(argv[i], "--help") == 0) {
      if (rank == 0) fputs(usage, stdout);
      return -1;
    }
    if (strcmp(argv[i], "--sweep") == 0) {
      p->sweep = 1;
      continue;
    }
    if (strcmp(argv[i], "--weak") == 0) {
      p->weak = 1;
      continue;
    }
    if (strcmp(argv[i], "--no-single") == 0) {
      p->single = 0;
      continue;
    }
    if (strcmp(argv[i], "--no-cg") == 0) {
      p->cg = 0;
      continue;
    }
    if (strcmp(argv[i], "--json") == 0) {
      p->json = 1;
      continue;
    }
    int got = bench_option_value(argc, argv, &i, "--interface-pc", &v);
    if (got == 0) {
      got = bench_option_value(argc, argv, &i, "--petsc-options", &v);
      if (got > 0) got = 2;
    }
    if (got < 0) return BENCH_USAGE;
    if (got == 1) {
      p->pc = v;
      continue;
    }
    if (got == 2) {
      p->petsc_opts = v;
      continue;
    }
    int matched = 0;
    for (size_t q = 0; q < sizeof opts / sizeof opts[0] && !matched; q++) {
      got = bench_option_value(argc, argv, &i, opts[q].name, &v);
      if (got < 0) return BENCH_USAGE;
      if (got == 0) continue;
      if (bench_parse_ll(PROG, opts[q].name, v, opts[q].min, opts[q].max,
                         (long long *)((char *)p + opts[q].off)) < 0)
        return BENCH_USAGE;
      matched = 1;
    }
    if (!matched) {
      if (rank == 0)
        fprintf(stderr, PROG ": unknown option '%s' (see " PROG " multipatch --help)\n", argv[i]);
      return BENCH_USAGE;
    }
  }
  if (p->n == 0) p->n = p->dim == 3 ? 8 : 64;
  if (p->n_min == 0) p->n_min = p->dim == 3 ? 2 : 8;
  if (p->sweep && p->n_min >= p->n) {
    if (rank == 0)
      fprintf(stderr, PROG ": --sweep needs --n-min %lld < --n %lld\n", p->n_min, p->n);
    return BENCH_USAGE;
  }
  const long long np = p->weak ? p->per_rank * size
                               : (p->dim == 3 ? p->k * p->k * p->k : p->k * p->k);
  if (np < 2 || np < size) {
    if (rank == 0)
      fprintf(stderr, PROG ": %lld patches on %d ranks: need at least 2 patches and one per rank\n",
              np, size);
    return BENCH_USAGE;
  }
  return BENCH_OK;
}

int main(int argc, char **argv) {
  if (PetscInitializeNoArguments()) return BENCH_FAILED;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  params prm = {
      .dim = 2, .p = 3, .k = 2, .per_rank = 2, .reps = 3, .threads = 1, .single = 1, .cg = 1};
  int rc = parse(argc, argv, &prm);
  if (rc != BENCH_OK) {
    PetscFinalize();
    return rc < 0 ? BENCH_OK : rc;
  }
  if (prm.petsc_opts && PetscOptionsInsertString(NULL, prm.petsc_opts)) {
    PetscFinalize();
    return BENCH_USAGE;
  }
  bench_options o = {.json = prm.json,
                     .threads = (int)prm.threads,
                     .reps = (int)prm.reps,
                     .out = stdout};
  fea_context *ctx = NULL;
  rc = bench_open_context(&o, "/cpu/threads", &ctx);
  if (rc != BENCH_OK) MPI_Abort(MPI_COMM_WORLD, rc);
  bench_report rep;
  bench_report_init(&rep, &o); /* only rank 0 writes */

  point pts[MAX_POINTS];
  int m = 0;
  const long long n_max = prm.n;
  for (long long n = prm.sweep ? prm.n_min : n_max; m < MAX_POINTS; n *= 2) {
    const long long nn = n > n_max ? n_max : n;
    const mp_grid g = prm.weak ? mp_grid_block((int)prm.dim, prm.p, nn, prm.per_rank * size)
                               : mp_grid_cube((int)prm.dim, prm.p, nn, prm.k);
    const int r = run_config(&rep, ctx, &prm, &g, &pts[m++]);
    if (r != BENCH_OK) rc = r;
    if (nn == n_max) break;
  }
  if (rank == 0) {
    if (prm.sweep && m >= 2) emit_fit(&rep, ctx, &prm, m, pts);
    if (!prm.json) {
      print_table(&prm, m, pts);
      printf(
          "\ntimes: maxima over the ranks, medians of %lld after one warm-up when > 1; "
          "interface_s: interface assembly + KSP setup (MUMPS LU); MB = 1e6 bytes; local MB: "
          "the patches' peak setup estimates; RSS: peak resident set; PETSc sent: bytes of "
          "PETSc's own messages, all ranks, one cycle (MUMPS's not counted); total: create + "
          "setup + solve; single: the C0 patch's multifrontal create + setup + solve on rank 0, "
          "one thread; max_rel_diff: "
          "max |u_mpi - u_single| / max |u|; CG its: -feaccel_ksp_rtol 1e-10.\n",
          prm.reps);
    }
  }
  fea_context_destroy(&ctx);
  PetscFinalize();
  return rc;
}
