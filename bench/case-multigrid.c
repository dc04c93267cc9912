/* The `multigrid` case: geometric multigrid on Q1 Poisson (the sine problem
 * of the other cases) on the unit square and cube, solved to a relative
 * residual of --rtol from a zero guess. Per configuration (the paper's
 * V(4,4) Richardson iteration in 2D, Chebyshev(4)-preconditioned CG in 2D
 * and 3D): the setup, the time of each of its phases (the internal timers of
 * fea_mg_create), the solve, iterations, the reported and the true final
 * relative residual, medians over --reps, with a STREAM triad measured in
 * the same run. The setup is fea_mg_create called directly (the internal
 * entry point behind fea_solver_create_multigrid) because its phases are not
 * public. --sweep measures the choice behind FEA_MULTIGRID_DESC_INIT instead
 * (docs/multigrid.md, "Default configuration"): the paper's preset, then
 * Chebyshev(2..4)-PCG on each level operator kind (--kind: one of them).
 *
 * Peers when hypre was found at configure time (peer-hypre.h): PCG + PFMG on
 * hypre's own finite-difference stencil for the same box and grid (not the
 * same matrix: 5/7-point FD against our 9/27-point Q1 FE matrix), and
 * PCG + BoomerAMG on our assembled CSR matrix (the same system).
 *
 * --space bspline (issue #40): the exact NURBS quarter annulus (2D) or thick
 * quarter ring (3D) of degree --p, CG + multigrid with the default descriptor
 * (Chebyshev-Jacobi on matrix-free Kronecker levels) against CG + Schwarz
 * multigrid on the same hierarchy, CG + Jacobi
 * on the CSR operator, the multifrontal solver, and the algebraic multigrid
 * peers on our assembled CSR matrix (PCG + hypre BoomerAMG, CG + PETSc GAMG:
 * peer-gamg.h) timed from the problem to the solution, the same problem in
 * the same run; --skip leaves out what does not fit.
 *
 * --elasticity (issue #39): linear elasticity on the unit box, Q2 in 3D by
 * default at n = 8, 16, 32: CG + multigrid with node-block Chebyshev on
 * sum-factorization levels against point Jacobi and CSR levels: iterations,
 * setup and solve. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discretization.h"
#include "multigrid/multigrid-impl.h"
#include "internal/operator-device.h"
#include "peer-gamg.h"
#include "peer-hypre.h"
#include "report.h"
#include "rss.h"
#include "stream.h"
#include "timing.h"

#define CASE_NAME "multigrid"
#define PI 3.14159265358979323846

static int load_dim; /* one problem at a time */

/* The first repetition of the B-spline and elasticity runs: -1 is the
 * warm-up, 0 with --no-warmup (a run at the largest size, where each
 * repetition takes minutes). */
static int first_rep = -1;

/* The sine problem's load, for hypre (the library gets the same function). */
static double sine_load(const double *x) {
  double u = load_dim * PI * PI;
  for (int k = 0; k < load_dim; k++) u *= sin(PI * x[k]);
  return u;
}

typedef struct mg_config {
  const char *name;
  fea_multigrid_desc desc;
} mg_config;

/* The phases of one setup, in the order they are reported. */
enum { PH_MESHES, PH_PROBLEMS, PH_OPERATORS, PH_TRANSFERS, PH_SMOOTHER, PH_COARSE, PH_OTHER, PH_N };
static const char *const phase_key[PH_N] = {"meshes_s",    "problems_s", "operators_s",
                                            "transfers_s", "smoother_s", "coarse_s",
                                            "other_s"};

typedef struct case_params {
  int dim;
  int p; /* Lagrange order: 1, or p-multigrid from Q_p */
  long long n;
  int reps;
  double rtol;
  int peers; /* 0: leave hypre out */
  int sweep; /* 1: a refused or unconverged configuration is noted, not fatal */
} case_params;

/* ||b - A x|| / ||b|| with the finest level's operator: the figure the solver
 * reports, recomputed (on a device, x goes up and A x comes down). */
static double true_rel_residual(fea_mg *mg, const double *b, const double *x, double *r) {
  const fea_mg_level *lv = &mg->levels[0];
  const fea_mg_kernels *k = mg->k;
  fea_status st = FEA_SUCCESS;
  if (k->host) {
    st = lv->op->impl->apply(lv->op, x, r, 0);
  } else {
    double *dx = NULL, *dr = NULL;
    st = k->alloc(mg->ctx, lv->n, &dx);
    if (st == FEA_SUCCESS) st = k->alloc(mg->ctx, lv->n, &dr);
    if (st == FEA_SUCCESS) st = k->upload(mg->ctx, lv->n, x, dx);
    if (st == FEA_SUCCESS) st = lv->op->impl->apply(lv->op, dx, dr, 0);
    if (st == FEA_SUCCESS) st = k->download(mg->ctx, lv->n, dr, r);
    if (dx) k->release(mg->ctx, dx);
    if (dr) k->release(mg->ctx, dr);
  }
  if (st != FEA_SUCCESS) return NAN;
  double rr = 0, bb = 0;
  for (fea_index i = 0; i < lv->n; i++) {
    const double d = b[i] - r[i];
    rr += d * d;
    bb += b[i] * b[i];
  }
  return sqrt(rr / bb);
}

static void add_hypre_peer(bench_record *rec, const char *name, bench_hypre_result *runs,
                           int reps) {
  double *t = malloc((size_t)reps * sizeof *t);
  if (!t) return;
  const int p = bench_peer(rec, name);
  const size_t offs[3] = {offsetof(bench_hypre_result, build_s),
                          offsetof(bench_hypre_result, setup_s),
                          offsetof(bench_hypre_result, solve_s)};
  const char *keys[3] = {"build_s", "setup_s", "solve_s"};
  double med[3];
  for (int k = 0; k < 3; k++) {
    for (int r = 0; r < reps; r++) t[r] = *(const double *)((const char *)&runs[r] + offs[k]);
    med[k] = bench_median(t, reps);
    bench_peer_metric(rec, p, keys[k], med[k]);
  }
  bench_peer_metric(rec, p, "setup_solve_s", med[1] + med[2]);
  bench_peer_metric(rec, p, "iterations", runs[reps - 1].iterations);
  bench_peer_metric(rec, p, "rel_residual", runs[reps - 1].rel_residual);
  free(t);
}

/* reps + 1 runs of one hypre solver (the first a warm-up); 0 or -1. */
static int run_hypre(const case_params *cp, const fea_matrix *A, const double *b,
                     bench_hypre_result *runs) {
  for (int r = -1; r < cp->reps; r++) {
    bench_hypre_result res;
    const int got = A ? bench_hypre_boomeramg(A, b, cp->rtol, 0, NULL, &res)
                      : bench_hypre_pfmg(cp->dim, cp->n, sine_load, cp->rtol, &res);
    if (got < 0) return -1;
    if (r >= 0) runs[r] = res;
  }
  return 0;
}

static int measure(bench_report *rep, fea_context *ctx, const case_params *cp, const mg_config *mc,
                   double stream) {
  const bench_family fam = {"Q", cp->dim, cp->p};
  const int reps = cp->reps;
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_mg *mg = NULL;
  double *b = NULL, *x = NULL, *r = NULL;
  double *t = calloc((size_t)reps * (PH_N + 2), sizeof *t);
  bench_hypre_result *hy = calloc(2 * (size_t)reps, sizeof *hy);
  int rc = BENCH_OK;
  load_dim = cp->dim;
  fea_status st = bench_make_space(ctx, &fam, (fea_index)cp->n, &mesh, &space);
  if (st == FEA_SUCCESS) st = bench_make_sine_problem(space, cp->dim, &pb);
  fea_index nf = 0;
  if (st == FEA_SUCCESS) st = fea_problem_get_num_free_dofs(pb, &nf);
  if (st != FEA_SUCCESS) {
    rc = bench_fail("building the problem", st);
    goto done;
  }
  b = malloc(((size_t)nf + 1) * sizeof *b);
  x = malloc(((size_t)nf + 1) * sizeof *x);
  r = malloc(((size_t)nf + 1) * sizeof *r);
  if (!b || !x || !r || !t || !hy) {
    rc = bench_fail("allocating", FEA_ERR_OUT_OF_MEMORY);
    goto done;
  }
  fea_multigrid_stats ms = FEA_MULTIGRID_STATS_INIT;
  double true_rel = 0;
  for (int k = -1; k < reps; k++) {
    fea_mg_destroy(&mg);
    st = fea_mg_create(ctx, pb, &mc->desc, &mg);
    if (cp->sweep && (st == FEA_ERR_INVALID_ARG || st == FEA_ERR_UNSUPPORTED)) {
      bench_report_note(rep, "%s, %dD Q%d: refused (%s)", mc->name, cp->dim, cp->p,
                        fea_status_string(st));
      goto done;
    }
    if (st == FEA_SUCCESS) st = fea_mg_get_rhs(mg, b);
    if (st == FEA_SUCCESS) {
      memset(x, 0, (size_t)nf * sizeof *x);
      st = fea_mg_solve(mg, b, x);
    }
    if (cp->sweep && st == FEA_WARN_NOT_CONVERGED) {
      fea_mg_get_stats(mg, &ms);
      bench_report_note(rep,
                        "%s, %dD Q%d: not converged in %lld iterations (setup %.2f s, "
                        "solve %.2f s, relative residual %.1e)",
                        mc->name, cp->dim, cp->p, (long long)ms.iterations, ms.setup_s, ms.solve_s,
                        ms.final_residual / ms.initial_residual);
      goto done;
    }
    if (st < 0) {
      rc = bench_fail("multigrid", st);
      goto done;
    }
    fea_mg_get_stats(mg, &ms);
    if (k < 0) continue;
    fea_mg_setup_phases ph;
    fea_mg_get_setup_phases(mg, &ph);
    const double v[PH_N + 2] = {ph.meshes, ph.problems, ph.operators, ph.transfers, ph.smoother,
                                ph.coarse, ph.other,    ms.setup_s,   ms.solve_s};
    for (int q = 0; q < PH_N + 2; q++) t[(size_t)q * reps + k] = v[q];
  }
  true_rel = true_rel_residual(mg, b, x, r);
  /* hypre: PFMG on its own grid, BoomerAMG on our finest matrix. */
  int have_pfmg = 0, have_amg = 0;
  if (cp->peers && bench_hypre_available()) {
    have_pfmg = run_hypre(cp, NULL, NULL, hy) == 0;
    const fea_matrix *A = fea_operator_csr_matrix(mg->levels[0].op);
    have_amg = A && run_hypre(cp, A, b, hy + reps) == 0;
  }
  bench_record rec;
  (void)bench_record_init(&rec, CASE_NAME, ctx);
  bench_param_str(&rec, "config", mc->name);
  bench_param_int(&rec, "dim", cp->dim);
  bench_param_int(&rec, "p", cp->p);
  bench_param_int(&rec, "n", cp->n);
  bench_param_int(&rec, "dofs", nf);
  bench_param_int(&rec, "levels", ms.num_levels);
  bench_param_int(&rec, "reps", reps);
  double med[PH_N + 2];
  for (int q = 0; q < PH_N + 2; q++) med[q] = bench_median(t + (size_t)q * reps, reps);
  const double setup = med[PH_N], solve = med[PH_N + 1];
  bench_metric(&rec, "setup_s", setup);
  for (int q = 0; q < PH_N; q++) bench_metric(&rec, phase_key[q], med[q]);
  bench_metric(&rec, "solve_s", solve);
  bench_metric(&rec, "setup_over_solve", setup / solve);
  bench_metric(&rec, "iterations", (double)ms.iterations);
  bench_metric(&rec, "rel_residual", ms.final_residual / ms.initial_residual);
  bench_metric(&rec, "true_rel_residual", true_rel);
  bench_metric(&rec, "lambda_max", ms.lambda_max);
  bench_metric(&rec, "stream_gbytes_per_s", stream);
  if (have_pfmg) add_hypre_peer(&rec, "hypre_pfmg_fd", hy, reps);
  if (have_amg) add_hypre_peer(&rec, "hypre_boomeramg", hy + reps, reps);
  bench_report_emit(rep, &rec);
done:
  fea_mg_destroy(&mg);
  free(b);
  free(x);
  free(r);
  free(t);
  free(hy);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  return rc;
}

/* ---- --space bspline: the NURBS quarter annulus / thick quarter ring --------------------- */

/* The exact NURBS patch of tests/api/ring-common.h: radial degree 1, the
 * arc degree 2 (weights 1, 1/sqrt 2, 1), in 3D extruded to 0 <= z <= 1. */
typedef struct ring_patch {
  double kr[4], kt[6], pts[36], w[12];
  fea_geometry_desc g;
} ring_patch;

static void ring_patch_init(ring_patch *q, int dim) {
  static const double kr[4] = {0, 0, 1, 1}, kt[6] = {0, 0, 0, 1, 1, 1};
  memcpy(q->kr, kr, sizeof kr);
  memcpy(q->kt, kt, sizeof kt);
  const double arc[3][2] = {{1, 0}, {1, 1}, {0, 1}}, w[3] = {1, 1 / sqrt(2.0), 1};
  int i = 0;
  for (int c = 0; c < (dim == 3 ? 2 : 1); c++)
    for (int b = 0; b < 3; b++)
      for (int a = 0; a < 2; a++, i++) {
        q->pts[i * dim + 0] = (1.0 + a) * arc[b][0];
        q->pts[i * dim + 1] = (1.0 + a) * arc[b][1];
        if (dim == 3) q->pts[i * dim + 2] = c;
        q->w[i] = w[b];
      }
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  g.degree[0] = 1, g.degree[1] = 2, g.degree[2] = 1;
  g.knots[0] = q->kr, g.num_knots[0] = 4;
  g.knots[1] = q->kt, g.num_knots[1] = 6;
  g.knots[2] = q->kr, g.num_knots[2] = 4;
  g.control_points = q->pts;
  g.num_control_points = i;
  g.weights = q->w;
  q->g = g;
}

/* u = (e^(x/2) sin(0.7 y) + x y) (1 + z in 3D) and its -Laplace. */
static double ring_load(const double *x, void *user) {
  const double f = 0.24 * exp(0.5 * x[0]) * sin(0.7 * x[1]);
  return *(const int *)user == 3 ? f * (1.0 + x[2]) : f;
}
static double ring_g(const double *x, void *user) {
  const double u = exp(0.5 * x[0]) * sin(0.7 * x[1]) + x[0] * x[1];
  return *(const int *)user == 3 ? u * (1.0 + x[2]) : u;
}

/* One configuration's medians into rec (peer NULL: the record's own
 * metrics): multigrid with the options d through fea_mg_create for its
 * phases. */
static fea_status mg_record(bench_record *rec, fea_context *ctx, fea_problem *pb, int reps,
                            const fea_multigrid_desc *desc, const char *peer, double *b, double *x,
                            fea_index nf) {
  const fea_multigrid_desc d = *desc;
  double *t = calloc(3 * (size_t)reps, sizeof *t);
  if (!t) return FEA_ERR_OUT_OF_MEMORY;
  fea_multigrid_stats ms = FEA_MULTIGRID_STATS_INIT;
  fea_mg_setup_phases ph = {0};
  fea_status st = FEA_SUCCESS;
  for (int k = first_rep; k < reps && st >= 0; k++) {
    fea_mg *mg = NULL;
    st = fea_mg_create(ctx, pb, &d, &mg);
    if (st == FEA_SUCCESS) st = fea_mg_get_rhs(mg, b);
    if (st == FEA_SUCCESS) {
      memset(x, 0, (size_t)nf * sizeof *x);
      st = fea_mg_solve(mg, b, x);
    }
    if (mg) {
      fea_mg_get_stats(mg, &ms);
      fea_mg_get_setup_phases(mg, &ph);
    }
    fea_mg_destroy(&mg);
    if (k >= 0 && st >= 0) {
      t[k] = ms.setup_s;
      t[reps + k] = ms.solve_s;
      t[2 * reps + k] = ph.operators;
    }
  }
  if (st >= 0) {
    const int p = peer ? bench_peer(rec, peer) : -1;
    const double setup = bench_median(t, reps), solve = bench_median(t + reps, reps);
    const double ops = bench_median(t + 2 * reps, reps);
    if (p < 0) {
      bench_param_int(rec, "levels", ms.num_levels);
      bench_metric(rec, "setup_s", setup);
      bench_metric(rec, "operators_s", ops);
      bench_metric(rec, "solve_s", solve);
      bench_metric(rec, "setup_solve_s", setup + solve);
      bench_metric(rec, "iterations", (double)ms.iterations);
      bench_metric(rec, "rel_residual", ms.final_residual / ms.initial_residual);
      bench_metric(rec, "lambda_max", ms.lambda_max);
      bench_metric(rec, "memory_mb", (double)ms.memory_bytes * 1e-6);
    } else {
      bench_peer_metric(rec, p, "setup_s", setup);
      bench_peer_metric(rec, p, "solve_s", solve);
      bench_peer_metric(rec, p, "setup_solve_s", setup + solve);
      bench_peer_metric(rec, p, "iterations", (double)ms.iterations);
      bench_peer_metric(rec, p, "converged", ms.converged);
      bench_peer_metric(rec, p, "lambda_max", ms.lambda_max);
    }
  }
  free(t);
  return st;
}

/* Multigrid (smoother sm, Chebyshev degree 3, CG) on the default levels:
 * matrix-free Kronecker operators on the ring (the Schwarz blocks from
 * their entries). */
static fea_status bspline_mg(bench_record *rec, fea_context *ctx, fea_problem *pb, int reps,
                             double rtol, fea_mg_smoother sm, const char *peer, double *b,
                             double *x, fea_index nf) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  d.smoother = sm;
  d.rtol = rtol;
  d.max_iterations = 500;
  return mg_record(rec, ctx, pb, reps, &d, peer, b, x, nf);
}

/* What a B-spline run leaves out: --skip NAME,... and --no-peers. */
enum {
  SKIP_SCHWARZ = 1,
  SKIP_JACOBI = 2,
  SKIP_MULTIFRONTAL = 4,
  SKIP_HYPRE = 8,
  SKIP_GAMG = 16,
  SKIP_NO_PEERS = SKIP_JACOBI | SKIP_MULTIFRONTAL | SKIP_HYPRE | SKIP_GAMG
};
static const struct {
  const char *name;
  int bit;
} skip_names[] = {{"schwarz", SKIP_SCHWARZ},
                  {"jacobi", SKIP_JACOBI},
                  {"multifrontal", SKIP_MULTIFRONTAL},
                  {"hypre", SKIP_HYPRE},
                  {"gamg", SKIP_GAMG}};
enum { NUM_SKIP_NAMES = (int)(sizeof skip_names / sizeof skip_names[0]) };

/* "hypre,gamg" into *mask; -1 with a message naming the bad item. */
static int parse_skip(const char *v, int *mask) {
  const char *s = v;
  int m = 0;
  while (*s) {
    const char *e = strchr(s, ',');
    const size_t len = e ? (size_t)(e - s) : strlen(s);
    int k = 0;
    while (k < NUM_SKIP_NAMES &&
           (strlen(skip_names[k].name) != len || strncmp(skip_names[k].name, s, len) != 0))
      k++;
    if (k == NUM_SKIP_NAMES) {
      fprintf(stderr,
              "feaccel-bench: %s: --skip '%.*s' is not one of schwarz, jacobi, multifrontal, "
              "hypre, gamg\n",
              CASE_NAME, (int)len, s);
      return -1;
    }
    m |= skip_names[k].bit;
    s += len + (e ? 1 : 0);
  }
  *mask |= m;
  return 0;
}

/* ||y - x|| / ||x||: how far a peer's solution lies from ours. */
static double rel_diff(const double *y, const double *x, fea_index n) {
  double dd = 0, xx = 0;
  for (fea_index i = 0; i < n; i++) {
    dd += (y[i] - x[i]) * (y[i] - x[i]);
    xx += x[i] * x[i];
  }
  return xx > 0 ? sqrt(dd / xx) : sqrt(dd);
}

/* CG + Jacobi on the CSR operator (setup: its assembly). */
static fea_status bspline_cg_jacobi(bench_record *rec, fea_context *ctx, fea_problem *pb, int reps,
                                    double rtol, fea_index nf) {
  double *t = calloc(2 * (size_t)reps, sizeof *t);
  if (!t) return FEA_ERR_OUT_OF_MEMORY;
  fea_status st = FEA_SUCCESS;
  fea_cg_stats cs = FEA_CG_STATS_INIT;
  for (int k = first_rep; k < reps && st >= 0; k++) {
    const double t0 = bench_now();
    fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
    od.kind = FEA_OPERATOR_CSR;
    fea_operator *op = NULL;
    fea_vector *vb = NULL, *vx = NULL;
    st = fea_operator_create(ctx, pb, &od, &op);
    if (st == FEA_SUCCESS) st = fea_vector_create(ctx, nf, FEA_F64, &vb);
    if (st == FEA_SUCCESS) st = fea_vector_create(ctx, nf, FEA_F64, &vx);
    if (st == FEA_SUCCESS) st = fea_operator_get_rhs(op, vb);
    const double t1 = bench_now();
    fea_cg_desc cd = FEA_CG_DESC_INIT;
    cd.rtol = rtol;
    cd.jacobi = 1;
    cd.max_iterations = 100000;
    if (st == FEA_SUCCESS) st = fea_cg_solve(op, vb, vx, &cd, &cs);
    const double t2 = bench_now();
    fea_vector_destroy(&vb);
    fea_vector_destroy(&vx);
    fea_operator_destroy(&op);
    if (k >= 0) t[k] = t1 - t0, t[reps + k] = t2 - t1;
  }
  if (st >= 0) {
    const int p = bench_peer(rec, "cg_jacobi_csr");
    const double a = bench_median(t, reps), b = bench_median(t + reps, reps);
    bench_peer_metric(rec, p, "setup_s", a);
    bench_peer_metric(rec, p, "solve_s", b);
    bench_peer_metric(rec, p, "setup_solve_s", a + b);
    bench_peer_metric(rec, p, "iterations", (double)cs.iterations);
  }
  free(t);
  return st;
}

/* The multifrontal solver (setup: symbolic + numeric factorization), its
 * peak memory and its distance from our solution xmg. */
static fea_status bspline_multifrontal(bench_record *rec, fea_context *ctx, fea_space *space,
                                       fea_problem *pb, int reps, fea_index nf, const double *xmg) {
  double *t = calloc(2 * (size_t)reps, sizeof *t);
  double *x = malloc(((size_t)nf + 1) * sizeof *x);
  fea_status st = t && x ? FEA_SUCCESS : FEA_ERR_OUT_OF_MEMORY;
  fea_solver_stats ss = FEA_SOLVER_STATS_INIT;
  for (int k = first_rep; k < reps && st >= 0; k++) {
    fea_solver *sv = NULL;
    const double t0 = bench_now();
    st = fea_solver_create_multifrontal(ctx, space, pb, NULL, &sv);
    if (st == FEA_SUCCESS) st = fea_solver_setup(sv);
    const double t1 = bench_now();
    if (st == FEA_SUCCESS) st = fea_solver_solve(sv, 1, NULL, 0, x, nf);
    const double t2 = bench_now();
    if (st >= 0) st = fea_solver_get_stats(sv, &ss);
    fea_solver_destroy(&sv);
    if (k >= 0) t[k] = t1 - t0, t[reps + k] = t2 - t1;
  }
  if (st >= 0) {
    const int p = bench_peer(rec, "multifrontal");
    const double c = bench_median(t, reps), d = bench_median(t + reps, reps);
    bench_peer_metric(rec, p, "setup_s", c);
    bench_peer_metric(rec, p, "solve_s", d);
    bench_peer_metric(rec, p, "setup_solve_s", c + d);
    bench_peer_metric(rec, p, "memory_mb", (double)ss.peak_bytes * 1e-6);
    bench_peer_metric(rec, p, "diff_vs_mg", rel_diff(x, xmg, nf));
  }
  free(t);
  free(x);
  return st;
}

/* One AMG peer's runs: the phases of each, its solution and whether it ran. */
typedef struct amg_runs {
  double *t; /* reps x {assembly, hand-over, setup, solve, memory} */
  double iterations, rel_residual, operator_complexity, levels;
  double *x;
  int ok;
} amg_runs;

/* The medians of one AMG peer into rec. Its time to solution is what a user
 * holding our problem would wait for: our CSR assembly (matrix and load),
 * the hand-over, the peer's setup and its solve. mg_s: our multigrid's
 * setup + solve, for the ratio the acceptance asks for. */
static void amg_record(bench_record *rec, const char *name, const amg_runs *a, int reps,
                       fea_index nf, const double *xmg, double mg_s, int gamg) {
  static const char *const keys[5] = {"assembly_s", "handover_s", "setup_s", "solve_s",
                                      "memory_mb"};
  double med[5];
  const int p = bench_peer(rec, name);
  for (int q = 0; q < 5; q++) {
    med[q] = bench_median(a->t + (size_t)q * reps, reps);
    if (q < 4) bench_peer_metric(rec, p, keys[q], med[q]);
  }
  const double own = med[1] + med[2] + med[3], total = med[0] + own;
  bench_peer_metric(rec, p, "setup_solve_s", own);
  bench_peer_metric(rec, p, "to_solution_s", total);
  bench_peer_metric(rec, p, "mg_over_peer", mg_s / total);
  bench_peer_metric(rec, p, "iterations", a->iterations);
  bench_peer_metric(rec, p, "rel_residual", a->rel_residual);
  bench_peer_metric(rec, p, "diff_vs_mg", rel_diff(a->x, xmg, nf));
  bench_peer_metric(rec, p, "memory_mb", med[4]);
  if (gamg) {
    bench_peer_metric(rec, p, "operator_complexity", a->operator_complexity);
    bench_peer_metric(rec, p, "levels", a->levels);
  }
}

/* hypre's strength threshold in 3D unless --hypre-threshold: its manual's
 * 0.5 for 3D problems against the 2D-tuned default 0.25 (docs/benchmarks.md
 * has the measurement behind it); 2D keeps the default. */
#define HYPRE_THRESHOLD_3D 0.5

/* PCG + BoomerAMG (hypre) and CG + GAMG (PETSc) on the CSR matrix and load
 * of our CSR operator, assembled once per repetition for both. A peer that
 * fails is reported absent (its message is on stderr); the run goes on. */
static fea_status bspline_amg_peers(bench_record *rec, fea_context *ctx, fea_problem *pb, int reps,
                                    double hypre_threshold, double rtol, fea_index nf,
                                    const double *xmg, double mg_s, int skip, char why[2][96]) {
  amg_runs runs[2] = {{0}, {0}};
  double *b = malloc(((size_t)nf + 1) * sizeof *b);
  fea_status st = b ? FEA_SUCCESS : FEA_ERR_OUT_OF_MEMORY;
  for (int j = 0; j < 2 && st == FEA_SUCCESS; j++) {
    runs[j].ok = !(skip & (j ? SKIP_GAMG : SKIP_HYPRE)) &&
                 (j ? bench_gamg_available() : bench_hypre_available());
    if (!runs[j].ok) continue;
    runs[j].t = calloc(5 * (size_t)reps, sizeof *runs[j].t);
    runs[j].x = malloc(((size_t)nf + 1) * sizeof *runs[j].x);
    if (!runs[j].t || !runs[j].x) st = FEA_ERR_OUT_OF_MEMORY;
  }
  for (int k = first_rep; k < reps && st == FEA_SUCCESS && (runs[0].ok || runs[1].ok); k++) {
    const double t0 = bench_now();
    fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
    od.kind = FEA_OPERATOR_CSR;
    fea_operator *op = NULL;
    fea_vector *vb = NULL;
    st = fea_operator_create(ctx, pb, &od, &op);
    if (st == FEA_SUCCESS) st = fea_vector_create(ctx, nf, FEA_F64, &vb);
    if (st == FEA_SUCCESS) st = fea_operator_get_rhs(op, vb);
    if (st == FEA_SUCCESS) st = fea_vector_read(vb, nf, FEA_F64, b);
    const double t1 = bench_now();
    fea_vector_destroy(&vb);
    const fea_matrix *A = st == FEA_SUCCESS ? fea_operator_csr_matrix(op) : NULL;
    if (st == FEA_SUCCESS && !A) st = FEA_ERR_STATE; /* a CSR operator holds its matrix */
    for (int j = 0; j < 2 && st == FEA_SUCCESS; j++) {
      if (!runs[j].ok) continue;
      double ph[4] = {0, 0, 0, 0}, mem = 0;
      int got;
      if (j == 0) {
        bench_hypre_result hr;
        got = bench_hypre_boomeramg(A, b, rtol, hypre_threshold, runs[j].x, &hr);
        ph[1] = hr.build_s, ph[2] = hr.setup_s, ph[3] = hr.solve_s, mem = hr.memory_mb;
        runs[j].iterations = hr.iterations, runs[j].rel_residual = hr.rel_residual;
      } else {
        bench_gamg_result gr;
        got = bench_gamg_solve(A, b, rtol, runs[j].x, &gr);
        ph[1] = gr.build_s, ph[2] = gr.setup_s, ph[3] = gr.solve_s, mem = gr.memory_mb;
        runs[j].iterations = gr.iterations, runs[j].rel_residual = gr.rel_residual;
        runs[j].operator_complexity = gr.operator_complexity, runs[j].levels = gr.levels;
      }
      if (got < 0) {
        runs[j].ok = 0;
        snprintf(why[j], 96, "absent: the run failed (message on stderr)");
        continue;
      }
      ph[0] = t1 - t0;
      if (k >= 0) {
        for (int q = 0; q < 4; q++) runs[j].t[(size_t)q * reps + k] = ph[q];
        runs[j].t[4 * (size_t)reps + k] = mem;
      }
    }
    fea_operator_destroy(&op);
  }
  for (int j = 0; j < 2 && st == FEA_SUCCESS; j++) {
    if (!runs[j].ok) continue;
    amg_record(rec, j ? "petsc_gamg" : "hypre_boomeramg", &runs[j], reps, nf, xmg, mg_s, j);
    snprintf(why[j], 96, "ran");
  }
  for (int j = 0; j < 2; j++) free(runs[j].t), free(runs[j].x);
  free(b);
  return st;
}

/* The first peer whose solution lies further than bound from ours (its
 * diff_vs_mg), or NULL: the run's check that every solver solved the same
 * system (the multifrontal solver's is exact). */
static const char *peer_disagrees(const bench_record *rec, double bound, double *diff) {
  for (int p = 0; p < rec->npeers; p++)
    for (int k = 0; k < rec->peer[p].count; k++)
      if (strcmp(rec->peer[p].f[k].key, "diff_vs_mg") == 0 && !(rec->peer[p].f[k].d <= bound)) {
        *diff = rec->peer[p].f[k].d;
        return rec->peer_name[p];
      }
  return NULL;
}

/* Why an AMG peer would not run, before anything ran. */
static void amg_absent_reason(int skip, int no_peers, int j, char *why, size_t len) {
  const int bit = j ? SKIP_GAMG : SKIP_HYPRE;
  if (no_peers)
    snprintf(why, len, "absent: --no-peers");
  else if (skip & bit)
    snprintf(why, len, "absent: --skip %s", j ? "gamg" : "hypre");
  else if (!(j ? bench_gamg_available() : bench_hypre_available()))
    snprintf(why, len, "absent: not built (no %s at configure time)", j ? "PETSc" : "hypre");
  else
    snprintf(why, len, "absent: not run");
}

/* B-spline multigrid on the ring: CG + the default multigrid, against CG +
 * Schwarz multigrid, CG + Jacobi, the multifrontal solver, and
 * PCG + BoomerAMG and CG + GAMG on our assembled matrix, the same problem in
 * the same run. */
static int run_bspline(const bench_options *opts, int dim, int p, long long n, double rtol,
                       int peers, int skip, double hypre_threshold) {
  fea_context *ctx = NULL;
  int rc = bench_open_context(opts, "/cpu/threads", &ctx);
  if (rc != BENCH_OK) return rc;
  if (!peers) skip |= SKIP_NO_PEERS;
  if (hypre_threshold <= 0) hypre_threshold = dim == 3 ? HYPRE_THRESHOLD_3D : 0.25;
  bench_report rep;
  bench_report_init(&rep, opts);
  static int dims[2];
  ring_patch rp;
  ring_patch_init(&rp, dim);
  dims[0] = dim;
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = dim;
  for (int k = 0; k < dim; k++) bd.degree[k] = p, bd.n[k] = (fea_index)n;
  bd.geometry = &rp.g;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_index nf = 0;
  double *b = NULL, *x = NULL, *xmg = NULL;
  fea_status st = fea_space_create_bspline(ctx, &bd, &space);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = ring_load;
  pd.source_user = dims;
  pd.dirichlet = ring_g;
  pd.dirichlet_user = dims;
  if (st == FEA_SUCCESS) st = fea_problem_create_poisson(space, &pd, &pb);
  if (st == FEA_SUCCESS) st = fea_problem_get_num_free_dofs(pb, &nf);
  if (st == FEA_SUCCESS) {
    b = malloc(((size_t)nf + 1) * sizeof *b);
    x = malloc(((size_t)nf + 1) * sizeof *x);
    xmg = malloc(((size_t)nf + 1) * sizeof *xmg);
    if (!b || !x || !xmg) st = FEA_ERR_OUT_OF_MEMORY;
  }
  bench_record rec;
  (void)bench_record_init(&rec, CASE_NAME, ctx);
  bench_param_str(&rec, "config", "default: Chebyshev(3)-Jacobi PCG, Kronecker levels");
  bench_param_str(&rec, "space", dim == 2 ? "NURBS quarter annulus" : "NURBS thick quarter ring");
  bench_param_int(&rec, "dim", dim);
  bench_param_int(&rec, "p", p);
  bench_param_int(&rec, "n", n);
  bench_param_int(&rec, "dofs", nf);
  bench_param_int(&rec, "reps", opts->reps);
  if (st == FEA_SUCCESS)
    st = bspline_mg(&rec, ctx, pb, opts->reps, rtol, FEA_MG_SMOOTHER_CHEBYSHEV, NULL, b, x, nf);
  /* Our solution, the one every peer's is compared with, and our time to
   * solution (setup + solve), the one each AMG peer's is divided into. */
  double mg_s = NAN;
  if (st >= 0) {
    memcpy(xmg, x, (size_t)nf * sizeof *x);
    for (int k = 0; k < rec.metrics.count; k++)
      if (strcmp(rec.metrics.f[k].key, "setup_solve_s") == 0) mg_s = rec.metrics.f[k].d;
  }
  if (st >= 0 && !(skip & SKIP_SCHWARZ))
    st = bspline_mg(&rec, ctx, pb, opts->reps, rtol, FEA_MG_SMOOTHER_SCHWARZ, "mg_schwarz", b, x,
                    nf);
  if (st >= 0 && !(skip & SKIP_JACOBI)) st = bspline_cg_jacobi(&rec, ctx, pb, opts->reps, rtol, nf);
  if (st >= 0 && !(skip & SKIP_MULTIFRONTAL))
    st = bspline_multifrontal(&rec, ctx, space, pb, opts->reps, nf, xmg);
  char why[2][96];
  for (int j = 0; j < 2; j++) amg_absent_reason(skip, !peers, j, why[j], sizeof why[j]);
  if (st >= 0)
    st = bspline_amg_peers(&rec, ctx, pb, opts->reps, hypre_threshold, rtol, nf, xmg, mg_s, skip,
                           why);
  if (st < 0) {
    rc = bench_fail("B-spline multigrid", st);
  } else {
    bench_param_str(&rec, "hypre", why[0]);
    bench_param_str(&rec, "gamg", why[1]);
    for (int k = 0; k < 3; k++)
      if (skip & skip_names[k].bit)
        bench_param_str(&rec, skip_names[k].name,
                        peers || k == 0 ? "absent: --skip" : "absent: --no-peers");
    const double peak = bench_rss_peak_bytes();
    bench_metric(&rec, "process_peak_rss_mb", peak >= 0 ? peak * 1e-6 : NAN);
    bench_report_emit(&rep, &rec);
    bench_report_note(&rep,
                      "medians of %d setups and solves (%s) to a relative residual of %g; "
                      "mg_schwarz: the same hierarchy with the Schwarz smoother; "
                      "cg_jacobi_csr: CG + Jacobi on the CSR operator (setup: assembly); "
                      "multifrontal: fea_solver_create_multifrontal, setup = symbolic + "
                      "numeric factorization, memory_mb its peak",
                      opts->reps, first_rep < 0 ? "after a warm-up" : "no warm-up", rtol);
    bench_report_note(&rep,
                      "hypre_boomeramg: PCG + BoomerAMG (hypre defaults, strong threshold %g) and "
                      "petsc_gamg: CG + "
                      "GAMG (%s) on our CSR matrix and load, one MPI rank; assembly_s: our CSR "
                      "operator and load, handover_s: copying them into the peer; setup_solve_s "
                      "= handover + setup + solve, to_solution_s = assembly + setup_solve_s, "
                      "mg_over_peer = our setup_solve_s / its to_solution_s; memory_mb: malloc'd "
                      "bytes it holds after its solve; diff_vs_mg: ||x - x_mg|| / ||x_mg||",
                      hypre_threshold, strcmp(why[1], "ran") == 0 ? bench_gamg_options() : why[1]);
    /* Solutions to a relative residual rtol lie within cond(A) rtol of each
     * other; 1000 rtol holds on these problems with a wide margin (about
     * 40 rtol measured at 3D p = 3, n = 16). */
    double diff = 0;
    const char *bad = peer_disagrees(&rec, 1e3 * rtol, &diff);
    if (bad) {
      fprintf(stderr,
              "feaccel-bench: %s: the solution of %s differs from multigrid's by %.3g "
              "(relative), more than 1000 rtol = %.3g\n",
              CASE_NAME, bad, diff, 1e3 * rtol);
      rc = BENCH_FAILED;
    }
  }
  free(b);
  free(x);
  free(xmg);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_context_destroy(&ctx);
  return rc;
}

/* ---- --elasticity: linear elasticity on the unit box (issue #39) --------------------------- */

/* Gravity along -z (-y in 2D) and a sideways push: every component loaded. */
static void elastic_load(const double *x, double *f, void *user) {
  const int dim = *(const int *)user;
  f[0] = 0.3 * x[1];
  f[1] = dim == 2 ? -1.0 : 0.2 * x[0];
  if (dim == 3) f[2] = -1.0;
}

/* One mesh: E = 1000, nu = 0.3, clamped at x = 0, free elsewhere; CG +
 * multigrid with node-block Chebyshev(3) on sum-factorization levels (the
 * defaults), the same with point Jacobi, and node blocks on CSR levels (up
 * to csr_max cells per direction: the Q2 CSR matrix outgrows memory). */
static int elastic_one(const bench_options *opts, bench_report *rep, fea_context *ctx, int dim,
                       int p, long long n, double nu, double rtol, long long csr_max) {
  static int dims[4] = {0, 0, 2, 3};
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  for (int k = 0; k < dim; k++) md.n[k] = (fea_index)n;
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_index nf = 0;
  double *b = NULL, *x = NULL;
  fea_status st = fea_mesh_create_structured(ctx, &md, &mesh);
  if (st == FEA_SUCCESS) st = fea_space_create_lagrange(mesh, p, FEA_NODES_EQUISPACED, &space);
  if (st == FEA_SUCCESS) st = fea_space_set_num_components(space, dim);
  fea_elasticity_desc ed = FEA_ELASTICITY_DESC_INIT;
  ed.E = 1000.0;
  ed.nu = nu;
  for (int s = 1; s < 2 * dim; s++) ed.sides[s].type = FEA_ELASTIC_TRACTION;
  ed.body_force = elastic_load;
  ed.body_force_user = &dims[dim];
  if (st == FEA_SUCCESS) st = fea_problem_create_elasticity(space, &ed, &pb);
  if (st == FEA_SUCCESS) st = fea_problem_get_num_free_dofs(pb, &nf);
  if (st == FEA_SUCCESS) {
    b = malloc(((size_t)nf + 1) * sizeof *b);
    x = malloc(((size_t)nf + 1) * sizeof *x);
    if (!b || !x) st = FEA_ERR_OUT_OF_MEMORY;
  }
  bench_record rec;
  (void)bench_record_init(&rec, CASE_NAME, ctx);
  bench_param_str(&rec, "config", "node-block Chebyshev(3) PCG, sumfact levels");
  bench_param_str(&rec, "problem", "elasticity, unit box clamped at x = 0");
  char nus[32];
  snprintf(nus, sizeof nus, "%g", nu);
  bench_param_str(&rec, "nu", nus);
  bench_param_int(&rec, "dim", dim);
  bench_param_int(&rec, "p", p);
  bench_param_int(&rec, "n", n);
  bench_param_int(&rec, "dofs", nf);
  bench_param_int(&rec, "reps", opts->reps);
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  d.rtol = rtol;
  d.max_iterations = 500;
  if (st == FEA_SUCCESS) st = mg_record(&rec, ctx, pb, opts->reps, &d, NULL, b, x, nf);
  d.jacobi = 1;
  if (st >= 0) st = mg_record(&rec, ctx, pb, opts->reps, &d, "point_jacobi_sumfact", b, x, nf);
  d.jacobi = 0;
  d.operator_kind = FEA_OPERATOR_CSR;
  if (st >= 0 && n <= csr_max)
    st = mg_record(&rec, ctx, pb, opts->reps, &d, "node_blocks_csr", b, x, nf);
  int rc = BENCH_OK;
  if (st < 0)
    rc = bench_fail("elasticity multigrid", st);
  else
    bench_report_emit(rep, &rec);
  free(b);
  free(x);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  return rc;
}

static int run_elasticity(const bench_options *opts, int dim, int p, long long n, double nu,
                          double rtol) {
  fea_context *ctx = NULL;
  int rc = bench_open_context(opts, "/cpu/threads", &ctx);
  if (rc != BENCH_OK) return rc;
  bench_report rep;
  bench_report_init(&rep, opts);
  const long long sizes[3] = {8, 16, 32};
  for (int k = 0; k < (n ? 1 : 3) && rc == BENCH_OK; k++)
    rc = elastic_one(opts, &rep, ctx, dim, p, n ? n : sizes[k], nu, rtol, dim == 3 ? 16 : 1024);
  bench_report_note(&rep,
                    "medians of %d setups (fea_mg_create) and solves to a relative residual of "
                    "%g from a zero guess; point_jacobi_sumfact: the same with jacobi = 1 (the "
                    "point diagonal); node_blocks_csr: node blocks on CSR levels (3D: n <= 16)",
                    opts->reps, rtol);
  fea_context_destroy(&ctx);
  return rc;
}

static int run(const bench_options *opts, int argc, char **argv) {
  long long dim = 0, n = 0, p = 1;
  double rtol = 1e-8;
  int peers = 1, sweep = 0, bspline = 0, elasticity = 0, p_given = 0, skip = 0;
  double hypre_threshold = 0;
  double nu = 0.3;
  long long only_kind = -1;
  for (int i = 0; i < argc; i++) {
    const char *v;
    int got;
    if ((got = bench_option_value(argc, argv, &i, "--dim", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--dim", v, 2, 3, &dim) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--p", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--p", v, 1, 6, &p) < 0) return BENCH_USAGE;
      p_given = 1;
    } else if ((got = bench_option_value(argc, argv, &i, "--n", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--n", v, 2, 100000, &n) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--rtol", &v)) != 0) {
      char *end = NULL;
      rtol = got < 0 ? 0 : strtod(v, &end);
      if (got < 0 || end == v || *end || !(rtol > 0 && rtol < 1)) {
        fprintf(stderr, "feaccel-bench: %s: --rtol '%s' is not a number in (0, 1)\n", CASE_NAME,
                got < 0 ? "" : v);
        return BENCH_USAGE;
      }
    } else if ((got = bench_option_value(argc, argv, &i, "--space", &v)) != 0) {
      if (got < 0 || (strcmp(v, "lagrange") != 0 && strcmp(v, "bspline") != 0)) {
        fprintf(stderr, "feaccel-bench: %s: --space '%s' is not lagrange or bspline\n", CASE_NAME,
                got < 0 ? "" : v);
        return BENCH_USAGE;
      }
      bspline = strcmp(v, "bspline") == 0;
    } else if ((got = bench_option_value(argc, argv, &i, "--nu", &v)) != 0) {
      char *end = NULL;
      nu = got > 0 ? strtod(v, &end) : 0.0;
      if (got < 0 || !end || *end || !(nu > -1.0 && nu < 0.5)) {
        fprintf(stderr, "feaccel-bench: %s: --nu '%s' is not a number in (-1, 0.5)\n", CASE_NAME,
                got > 0 ? v : "");
        return BENCH_USAGE;
      }
    } else if (strcmp(argv[i], "--elasticity") == 0) {
      elasticity = 1;
    } else if ((got = bench_option_value(argc, argv, &i, "--hypre-threshold", &v)) != 0) {
      char *end = NULL;
      hypre_threshold = got > 0 ? strtod(v, &end) : 0.0;
      if (got < 0 || !end || end == v || *end || !(hypre_threshold > 0 && hypre_threshold < 1)) {
        fprintf(stderr, "feaccel-bench: %s: --hypre-threshold '%s' is not a number in (0, 1)\n",
                CASE_NAME, got > 0 ? v : "");
        return BENCH_USAGE;
      }
    } else if ((got = bench_option_value(argc, argv, &i, "--skip", &v)) != 0) {
      if (got < 0 || parse_skip(v, &skip) < 0) return BENCH_USAGE;
    } else if (strcmp(argv[i], "--no-warmup") == 0) {
      first_rep = 0;
    } else if (strcmp(argv[i], "--no-peers") == 0) {
      peers = 0;
    } else if (strcmp(argv[i], "--sweep") == 0) {
      sweep = 1;
    } else if ((got = bench_option_value(argc, argv, &i, "--kind", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--kind", v, 0, 2, &only_kind) < 0)
        return BENCH_USAGE;
    } else {
      fprintf(stderr, "feaccel-bench: %s: unknown option '%s'\n", CASE_NAME, argv[i]);
      return BENCH_USAGE;
    }
  }
  /* Elasticity: 3D Q2 n = 8, 16, 32 unless --dim, --p, --n say otherwise. */
  if (elasticity)
    return run_elasticity(opts, dim ? (int)dim : 3, p_given ? (int)p : 2, n, nu, rtol);
  /* B-splines: one patch, default 2D p = 3 n = 256 (66k DoFs). */
  if (bspline)
    return run_bspline(opts, dim ? (int)dim : 2, p > 1 ? (int)p : 3, n ? n : (dim == 3 ? 16 : 256),
                       rtol, peers, skip, hypre_threshold);
  /* 1023^2 = 1.05M and 103^3 = 1.09M free DoFs; 104 = 8 x 13 coarsens to a
   * 13^3-cell level with 1728 free DoFs, solved densely. */
  /* hypre's peers discretize Q1 (PFMG's stencil, or our Q1 matrix): p = 1 only. */
  case_params cases[2] = {{2, (int)p, 1024, opts->reps, rtol, peers && p == 1, sweep},
                          {3, (int)p, 104, opts->reps, rtol, peers && p == 1, sweep}};
  int ncases = 2;
  if (dim || n) {
    cases[0] = dim == 3 ? cases[1] : cases[0];
    if (n) cases[0].n = n;
    ncases = 1;
  }
  fea_context *ctx = NULL;
  int rc = bench_open_context(opts, "/cpu/threads", &ctx);
  if (rc != BENCH_OK) return rc;
  int threads = 1;
  if (fea_context_get_num_threads(ctx, &threads) != FEA_SUCCESS) threads = 1;
  const double stream = bench_stream_triad(20000000, threads, 5);
  bench_report rep;
  bench_report_init(&rep, opts);
  for (int k = 0; k < ncases && rc == BENCH_OK; k++) {
    /* The paper's preset, and Chebyshev(4)-PCG on its CSR levels. */
    mg_config paper = {"V(4,4) Richardson 0.3", FEA_MULTIGRID_DESC_PAPER};
    mg_config cheb = {"Chebyshev(4) PCG", FEA_MULTIGRID_DESC_PAPER};
    cheb.desc.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
    cheb.desc.krylov = 1;
    paper.desc.rtol = cheb.desc.rtol = rtol;
    /* The same with matrix-free levels: on the box, the Q1 stencil swept over
     * the grid (src/multigrid/level-stencil-op.c) instead of CSR (and on a
     * host; a device's own sum factorization, and a Q_p level's). */
    mg_config cheb_mf = cheb;
    cheb_mf.name = cases[k].p == 1 ? "Chebyshev(4) PCG, stencil levels"
                                   : "Chebyshev(4) PCG, matrix-free levels";
    cheb_mf.desc.operator_kind = FEA_OPERATOR_MATFREE_SUMFACT;
    /* Unscaled Richardson is h-dependent in 3D (docs/multigrid.md) and
     * unstable on Q_p levels: 2D Q1 only. */
    if (sweep) {
      /* The choice behind the default (docs/multigrid.md): the paper's
       * configuration wherever it runs, then Chebyshev(2..4)-PCG with each
       * level operator kind. The paper's takes 7 cycles in 2D Q1: 30 bound
       * its trial elsewhere. */
      paper.desc.max_iterations = 30;
      if (only_kind < 0 || only_kind == FEA_OPERATOR_CSR)
        rc = measure(&rep, ctx, &cases[k], &paper, stream);
      static const fea_operator_kind kinds[3] = {FEA_OPERATOR_CSR, FEA_OPERATOR_MATFREE_SUMFACT,
                                                 FEA_OPERATOR_MATFREE_ELEMENT_MATRIX};
      static const char *const kind_name[3] = {"CSR", "sumfact/stencil", "element-matrix"};
      char names[3][3][64];
      for (int deg = 2; deg <= 4 && rc == BENCH_OK; deg++)
        for (int q = 0; q < 3 && rc == BENCH_OK; q++) {
          if (only_kind >= 0 && kinds[q] != (fea_operator_kind)only_kind) continue;
          mg_config c = cheb;
          snprintf(names[deg - 2][q], sizeof names[deg - 2][q], "Chebyshev(%d) PCG, %s levels", deg,
                   kind_name[q]);
          c.name = names[deg - 2][q];
          c.desc.pre_smooth = c.desc.post_smooth = deg;
          c.desc.operator_kind = kinds[q];
          rc = measure(&rep, ctx, &cases[k], &c, stream);
        }
      continue;
    }
    if (cases[k].dim == 2 && cases[k].p == 1) rc = measure(&rep, ctx, &cases[k], &paper, stream);
    if (rc == BENCH_OK) rc = measure(&rep, ctx, &cases[k], &cheb, stream);
    if (rc == BENCH_OK) rc = measure(&rep, ctx, &cases[k], &cheb_mf, stream);
  }
  bench_report_note(&rep, "STREAM triad on %d thread%s: %.1f GB/s", threads, threads > 1 ? "s" : "",
                    stream);
  bench_report_note(&rep,
                    "medians of %d setups (fea_mg_create, its phases from internal timers) and "
                    "solves to a relative residual of %g from a zero guess",
                    opts->reps, rtol);
  if (!peers || p > 1)
    bench_report_note(&rep, "hypre: left out (%s)", peers ? "Q1 peers, --p > 1" : "--no-peers");
  else if (!bench_hypre_available())
    bench_report_note(&rep,
                      "hypre: skipped, not found when feaccel-bench was configured "
                      "(libhypre-dev)");
  else
    bench_report_note(&rep,
                      "hypre_pfmg_fd: PCG + PFMG (1+1 red-black GS) on hypre's 5/7-point "
                      "finite-difference Laplacian of the same grid, a different matrix "
                      "from our Q1 one; hypre_boomeramg: PCG + BoomerAMG (defaults) on our "
                      "CSR matrix, the same system; build_s is handing hypre the matrix, "
                      "outside its setup_s; hypre runs on one MPI rank.");
  fea_context_destroy(&ctx);
  return rc;
}

const bench_case bench_case_multigrid = {
    .name = CASE_NAME,
    .description =
        "geometric multigrid setup phases and solve, Q1 (hypre peers), Q_p or "
        "B-spline Poisson, Lagrange elasticity",
    .usage =
        "options:\n"
        "  --dim D      2 or 3: one mesh only (default: 2D n=1024 and 3D n=104, about 1M\n"
        "               free DoFs each)\n"
        "  --n N        cells per direction (coarsening halves while the count is even)\n"
        "  --p P        Lagrange order 1..6 (default 1); P > 1: p-multigrid to Q1 on the same\n"
        "               mesh first, Chebyshev configurations only, no hypre peers\n"
        "  --rtol R     relative residual to reach (default 1e-8)\n"
        "  --no-peers   leave hypre out even when it was found\n"
        "  --sweep      the paper's configuration and Chebyshev(2..4)-PCG on each level operator\n"
        "               kind, instead of the three fixed configurations (a refused or\n"
        "               unconverged one is a note)\n"
        "  --space S    lagrange (default) or bspline: the NURBS quarter annulus (2D) or\n"
        "               thick quarter ring (3D) of degree --p (default 3, 2..6) with --n\n"
        "               elements per direction (default 256 in 2D, 16 in 3D); CG + the default\n"
        "               multigrid (Kronecker levels) against CG + Schwarz multigrid, CG + Jacobi, the\n"
        "               multifrontal solver, and (where built) PCG + hypre BoomerAMG and\n"
        "               CG + PETSc GAMG on our CSR matrix (--no-peers: all but the first\n"
        "               left out)\n"
        "  --skip LIST  with --space bspline: leave out the comma-separated peers of LIST\n"
        "               (schwarz, jacobi, multifrontal, hypre, gamg), e.g. what does not\n"
        "               fit in memory at the largest size\n"
        "  --no-warmup  with --space bspline or --elasticity: no warm-up run before the timed\n"
        "               ones (a single run at the largest size)\n"
        "  --hypre-threshold T  with --space bspline: BoomerAMG's strength threshold (default\n"
        "               0.5 in 3D, hypre's 0.25 in 2D); PETSC_OPTIONS retunes GAMG (-gamg_...)\n"
        "  --kind K     with --sweep: only level operator kind K (fea_operator_kind: 0 CSR,\n"
        "               1 element matrices, 2 sum factorization; the paper's configuration\n"
        "               with 0 only)\n"
        "  --elasticity linear elasticity (nu = 0.3, unit box clamped at x = 0, body force),\n"
        "               default 3D Q2 with n = 8, 16, 32 (--dim, --p, --n: one mesh): CG +\n"
        "               multigrid with node-block Chebyshev on sum-factorization levels,\n"
        "               against point Jacobi and (3D n <= 16) CSR levels\n"
        "  --nu NU      with --elasticity: Poisson's ratio (default 0.3)\n",
    .run = run,
};
