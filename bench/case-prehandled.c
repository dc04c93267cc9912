/* The `prehandled` case: the prehandled Schur-complement solver (method M1,
 * docs/prehandled.md) on the manufactured problem -Laplace u = f on the unit
 * square, u = sin(pi x) sin(pi y), homogeneous Dirichlet, Q1 (or P1) on
 * n x n cells; against geometric multigrid on the same problem in the same
 * run (the baseline of Ruda et al. 2022, §5, and a stronger configuration).
 *
 * Per size and precision: |C|, |E|, |I|, the setup (FP64 factorizations and
 * inverses), the solve split into the O(N) prehandling transforms and the
 * dense M1 block solve, MDoF/s = N nrhs / solve, GFLOP/s under the exact
 * count (2|E|^2 + 4 blk |I| per right-hand side) and under the paper's model
 * (12 N^1.5 at l = 0), as fractions of the GEMM rate measured in the same run
 * (DGEMM for FP64, SGEMM for FP32 and the 16-bit precisions, whose CPU path
 * converts to FP32 and runs SGEMM), the dense bytes, the L2 error against the
 * exact solution and the relative difference from the FP64 M1 solution;
 * with --refine also the mixed-precision refinement. --kappa prints the
 * condition numbers of the paper's Table 1 for one (n, n0) instead, --model
 * the storage and FLOP model of its Tables 2 and 3 (no solve), --fig8 its
 * Fig. 8: per level the L2 error against an oscillatory exact solution of
 * FP64 M1, FP16 M1 and an FP16 Cholesky of the nodal system (no
 * prehandling). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <feaccel.h>
#include <feaccel/solver.h>

#include "discretization.h"
#include "peak.h"
#include "prehandled-table4.h"
#include "report.h"
#include "timing.h"

#define CASE_NAME "prehandled"

static const fea_precision all_precs[4] = {FEA_F64, FEA_F32, FEA_F16, FEA_BF16};
static const char *const prec_names[4] = {"f64", "f32", "f16", "bf16"};

typedef struct ph_params {
  long long n, n0, n_max, nrhs, mg_nrhs, gemm_n;
  int p1, sweep, refine, kappa, mg, reps, n_given;
  int model;                       /* --model: the paper's Tables 2 and 3 for this n, no solve */
  int fig8;                        /* --fig8: the paper's Fig. 8, level by level */
  int fig8_k;                      /* its exact solution's wavenumber: 1 = sine, else oscillatory */
  int table4;                      /* --table4: the paper's Table 4 (several macro cells) */
  long long fine_level;            /* its fine level L */
  long long lev0, lev1, nodal_max; /* --levels L0..L1, --nodal-max-level */
  unsigned precs;                  /* bit k: all_precs[k] */
  double mg_rtol;
  int gpu;             /* the context is a GPU one (/gpu/cuda) */
  fea_context *mg_ctx; /* where multigrid runs: ctx, or /cpu/threads beside a GPU */
} ph_params;

/* The GEMM rates of this run: [0] DGEMM, [1] SGEMM, [2] the library's
 * FP16 x FP16 -> FP32 GEMM (conversion + SGEMM on the CPU; cublasGemmEx on
 * tensor cores with FP32 accumulation on the GPU). */
typedef struct yardsticks {
  double gflops[3];
} yardsticks;

/* What one multigrid configuration gave on one size. */
typedef struct mg_result {
  int ok;
  long long nrhs;
  double setup_s, solve_s_per_rhs, iterations, converged, l2, conv_factor, memory_bytes,
      flops_est_per_rhs;
} mg_result;

static double sine_u(const double *x, void *user) {
  (void)user;
  return sin(3.14159265358979323846 * x[0]) * sin(3.14159265358979323846 * x[1]);
}

#define TRY(expr)                          \
  do {                                     \
    fea_status try_status_ = (expr);       \
    if (try_status_ < 0) {                 \
      rc = bench_fail(#expr, try_status_); \
      goto done;                           \
    }                                      \
  } while (0)

static double phys_memory_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

/* The manufactured problem on n x n cells. */
typedef struct square {
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nfree, ndofs;
} square;

static void square_free(square *s) {
  fea_problem_destroy(&s->pb);
  fea_space_destroy(&s->space);
  fea_mesh_destroy(&s->mesh);
}

static fea_status square_make(fea_context *ctx, int p1, long long n, square *s) {
  memset(s, 0, sizeof *s);
  const bench_family fam = {p1 ? "P" : "Q", 2, 1};
  fea_status st = bench_make_space(ctx, &fam, (fea_index)n, &s->mesh, &s->space);
  if (st >= 0) st = bench_make_sine_problem(s->space, 2, &s->pb);
  if (st >= 0) st = fea_problem_get_num_free_dofs(s->pb, &s->nfree);
  fea_space_info si = FEA_SPACE_INFO_INIT;
  if (st >= 0) st = fea_space_get_info(s->space, &si);
  s->ndofs = si.num_dofs;
  return st;
}

/* L2 error of the reduced solution x against the exact solution. */
static fea_status l2_error(const square *s, const double *x, double *full, double *l2) {
  fea_status st = fea_problem_expand_solution(s->pb, x, full);
  if (st >= 0) st = fea_problem_error_norms(s->pb, full, sine_u, NULL, NULL, l2, NULL);
  return st;
}

/* ||x - y|| / ||y|| over m values. */
static double rel_diff(size_t m, const double *x, const double *y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < m; i++) num += (x[i] - y[i]) * (x[i] - y[i]), den += y[i] * y[i];
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* ------------------------------------------------------------------------ */
/* Condition numbers (--kappa)                                               */

/* Table 1 of Ruda et al. 2022 (Q1): kappa(C_i), kappa(Pi) per (n, n0). */
static int table1(long long n, long long n0, double *kc, double *kpi) {
  static const struct {
    long long n, n0;
    double kc, kpi;
  } rows[] = {{256, 4, 23.9, 24.1},  {256, 8, 16.9, 19.5},   {256, 16, 11.1, 14.5},
              {256, 32, 6.6, 10.1},  {512, 4, 32.2, 30.7},   {512, 8, 23.9, 25.5},
              {512, 16, 16.9, 19.8}, {512, 32, 11.1, 14.6},  {1024, 4, 41.8, 37.9},
              {1024, 8, 32.2, 32.3}, {1024, 16, 23.9, 25.9}, {1024, 32, 16.9, 19.9}};
  for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
    if (rows[k].n == n && rows[k].n0 == n0) {
      *kc = rows[k].kc, *kpi = rows[k].kpi;
      return 1;
    }
  return 0;
}

static int run_kappa(bench_report *rep, fea_context *ctx, const ph_params *prm, const square *sq,
                     fea_solver *sv, const fea_prehandled_stats *st) {
  int rc = BENCH_OK;
  static const struct {
    fea_prehandled_matrix which;
    const char *key;
    int steps;
  } mats[] = {{FEA_PREHANDLED_NODAL, "kappa_nodal", 400},
              {FEA_PREHANDLED_HIERARCHICAL, "kappa_hierarchical", 200},
              {FEA_PREHANDLED_SCALED, "kappa_scaled", 200},
              {FEA_PREHANDLED_MACRO_BLOCK, "kappa_macro_block", 200},
              {FEA_PREHANDLED_SCHUR, "kappa_schur", 200}};
  double kappa[5] = {0}, secs[5] = {0};
  for (int k = 0; k < 5; k++) {
    double t0 = bench_now();
    TRY(fea_solver_prehandled_condition(sv, mats[k].which, mats[k].steps, &kappa[k]));
    secs[k] = bench_now() - t0;
  }
  bench_record rec;
  TRY(bench_record_init(&rec, CASE_NAME, ctx));
  bench_param_str(&rec, "element", prm->p1 ? "P1" : "Q1");
  bench_param_int(&rec, "n", (long long)st->n);
  bench_param_int(&rec, "n0", (long long)st->n0);
  bench_param_int(&rec, "dofs", (long long)sq->nfree);
  bench_param_int(&rec, "num_e", (long long)st->num_e);
  bench_param_int(&rec, "block", (long long)st->block);
  bench_param_str(&rec, "lanczos_steps", "400 (nodal), 200 (others)");
  for (int k = 0; k < 5; k++) bench_metric(&rec, mats[k].key, kappa[k]);
  double kc = NAN, kpi = NAN;
  if (!prm->p1 && table1(st->n, st->n0, &kc, &kpi)) {
    bench_metric(&rec, "table1_kappa_macro_block", kc);
    bench_metric(&rec, "table1_kappa_schur", kpi);
  }
  double total = 0;
  for (int k = 0; k < 5; k++) total += secs[k];
  bench_metric(&rec, "time_s", total);
  bench_metric(&rec, "schur_time_s", secs[4]);
  bench_report_emit(rep, &rec);
  bench_report_note(rep,
                    "  h=1/%lld h0=1/%lld: kappa(A_h) %.6g, kappa(S^T A_h S) %.5g, "
                    "kappa(prehandled) %.5g, kappa(C_i) %.4g, kappa(Pi) %.4g",
                    (long long)st->n, (long long)st->n0, kappa[0], kappa[1], kappa[2], kappa[3],
                    kappa[4]);
  if (!isnan(kc))
    bench_report_note(rep,
                      "  Table 1 (h=1/%lld h0=1/%lld): kappa(C_i) %.1f, kappa(Pi) %.1f "
                      "(the spec accepts +-0.1)",
                      (long long)st->n, (long long)st->n0, kc, kpi);
  if (!prm->p1 && st->n == 256)
    bench_report_note(rep,
                      "  spec §10.3 item 5 (h=1/256): kappa(A_h) = 13,280; at h0=1/16 "
                      "kappa(S^T A_h S) ~ 100 (99.86), kappa(prehandled) ~ 22 (22.38)");
done:
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Multigrid peers                                                           */

static int run_mg(bench_report *rep, fea_context *ctx, const ph_params *prm, const square *sq,
                  const fea_multigrid_desc *desc, const double *B, fea_index nnz, double *full,
                  mg_result *res, const char *name) {
  int rc = BENCH_OK;
  memset(res, 0, sizeof *res);
  const fea_index nf = sq->nfree;
  const long long k = prm->mg_nrhs < prm->nrhs ? prm->mg_nrhs : prm->nrhs;
  fea_solver *sv = NULL;
  double *X = malloc((size_t)(nf * k) * sizeof *X + 1), *t = malloc((size_t)prm->reps * sizeof *t);
  if (!X || !t) {
    fprintf(stderr, "feaccel-bench: %s: out of memory for the multigrid solutions\n", CASE_NAME);
    rc = BENCH_FAILED;
    goto done;
  }
  double t0 = bench_now();
  fea_status s = fea_solver_create_multigrid(ctx, sq->pb, desc, &sv);
  if (s >= 0) s = fea_solver_setup(sv);
  if (s < 0) {
    /* The baseline failing is reported, not fatal: the M1 figures stand alone. */
    bench_report_note(rep, "  %s: not measured: %s (%s)", name, fea_context_last_error(NULL),
                      fea_status_string(s));
    goto done;
  }
  res->setup_s = bench_now() - t0;
  TRY(fea_solver_solve(sv, (fea_index)k, B, nf, X, nf)); /* warm-up */
  for (int r = 0; r < prm->reps; r++) {
    double t1 = bench_now();
    TRY(fea_solver_solve(sv, (fea_index)k, B, nf, X, nf));
    t[r] = bench_now() - t1;
  }
  fea_multigrid_stats ms = FEA_MULTIGRID_STATS_INIT;
  TRY(fea_solver_get_multigrid_stats(sv, &ms));
  TRY(l2_error(sq, X, full, &res->l2));
  res->ok = 1;
  res->nrhs = k;
  res->solve_s_per_rhs = bench_median(t, prm->reps) / (double)k;
  res->iterations = (double)ms.iterations;
  res->converged = ms.converged;
  res->conv_factor = ms.convergence_factor;
  res->memory_bytes = (double)ms.memory_bytes;
  /* An estimate, not a count (the solver counts no flops): per cycle on each
   * level, pre + post smoothing steps and one residual, each a CSR product
   * (2 nnz) and ~4 N vector flops, plus the transfers (~16 N), over the
   * hierarchy (x 4/3 in 2D); per iteration also the stopping residual (and
   * CG's product and vector updates). */
  const double N = (double)nf, a = 2.0 * (double)nnz;
  const double cycle = 4.0 / 3.0 *
                       ((desc->pre_smooth + desc->post_smooth + 1) * (a + 4 * N) + 16 * N);
  res->flops_est_per_rhs = res->iterations * (cycle + a + (desc->krylov ? 10 * N : 2 * N));
  if (!ms.converged)
    bench_report_note(rep, "  %s: did not reach rtol %.1e in %lld iterations", name, desc->rtol,
                      (long long)ms.iterations);
done:
  fea_solver_destroy(&sv);
  free(X);
  free(t);
  return rc;
}

static void add_mg_peer(bench_record *rec, const char *name, const mg_result *m, double rtol,
                        double m1_s_per_rhs, double dofs) {
  int k = bench_peer(rec, name);
  bench_peer_metric(rec, k, "setup_s", m->setup_s);
  bench_peer_metric(rec, k, "solve_s", m->solve_s_per_rhs);
  bench_peer_metric(rec, k, "nrhs", (double)m->nrhs);
  bench_peer_metric(rec, k, "iterations", m->iterations);
  bench_peer_metric(rec, k, "converged", m->converged);
  bench_peer_metric(rec, k, "rtol", rtol);
  bench_peer_metric(rec, k, "convergence_factor", m->conv_factor);
  bench_peer_metric(rec, k, "dofs_per_s", dofs / m->solve_s_per_rhs);
  bench_peer_metric(rec, k, "l2_error", m->l2);
  bench_peer_metric(rec, k, "memory_bytes", m->memory_bytes);
  bench_peer_metric(rec, k, "flops_per_rhs_est", m->flops_est_per_rhs);
  /* ratio: ours / the peer's time per right-hand side (the schema's convention) */
  bench_peer_metric(rec, k, "ratio", m1_s_per_rhs / m->solve_s_per_rhs);
  bench_peer_metric(rec, k, "speedup", m->solve_s_per_rhs / m1_s_per_rhs);
}

/* ------------------------------------------------------------------------ */
/* M1                                                                         */

typedef struct m1_run {
  int skipped;
  fea_prehandled_stats st; /* last solve's */
  double setup_s, solve_s, transform_s, dense_s, iterations, relres;
} m1_run;

/* Create, set up (once: the FP64 inversion is the long part) and solve
 * (median of reps after one warm-up) one M1 configuration; X gets the
 * solutions. An FEA_ERR_OUT_OF_MEMORY setup becomes a skip line. */
static int run_m1(bench_report *rep, fea_context *ctx, const ph_params *prm, const square *sq,
                  int pk, int refine, const double *B, double *X, m1_run *out) {
  int rc = BENCH_OK;
  memset(out, 0, sizeof *out);
  out->st = (fea_prehandled_stats)FEA_PREHANDLED_STATS_INIT;
  const fea_index nf = sq->nfree;
  const int reps = prm->reps;
  fea_solver *sv = NULL;
  double *tw = malloc((size_t)reps * 4 * sizeof *tw);
  if (!tw) {
    fprintf(stderr, "feaccel-bench: %s: out of memory\n", CASE_NAME);
    return BENCH_FAILED;
  }
  double *tt = tw + reps, *td = tw + 2 * reps, *ti = tw + 3 * reps;
  fea_prehandled_desc d = FEA_PREHANDLED_DESC_INIT;
  d.coarse_cells = (fea_index)prm->n0;
  d.precision = all_precs[pk];
  d.refine = refine;
  TRY(fea_solver_create_prehandled(ctx, sq->pb, &d, &sv));
  double t0 = bench_now();
  fea_status s = fea_solver_setup(sv);
  if (s == FEA_ERR_OUT_OF_MEMORY) {
    char why[768];
    fea_context_info info = FEA_CONTEXT_INFO_INIT;
    bench_machine m;
    TRY(fea_context_get_info(ctx, &info));
    TRY(bench_machine_get(ctx, &m));
    snprintf(why, sizeof why, "%s %s%s: %s", prm->p1 ? "P1" : "Q1", prec_names[pk],
             refine ? " refined" : "", fea_context_last_error(NULL));
    bench_report_skip(rep, CASE_NAME, info.backend, why, &m);
    out->skipped = 1;
    goto done;
  }
  TRY(s);
  out->setup_s = bench_now() - t0;
  const fea_index k = (fea_index)prm->nrhs;
  TRY(fea_solver_solve(sv, k, B, nf, X, nf)); /* warm-up */
  for (int r = 0; r < reps; r++) {
    double t1 = bench_now();
    TRY(fea_solver_solve(sv, k, B, nf, X, nf));
    tw[r] = bench_now() - t1;
    TRY(fea_solver_get_prehandled_stats(sv, &out->st));
    tt[r] = out->st.transform_s, td[r] = out->st.dense_s, ti[r] = out->st.refine_iterations;
  }
  out->solve_s = bench_median(tw, reps);
  out->transform_s = bench_median(tt, reps);
  out->dense_s = bench_median(td, reps);
  out->iterations = bench_median(ti, reps);
  out->relres = out->st.relative_residual;
done:
  fea_solver_destroy(&sv);
  free(tw);
  return rc;
}

static int emit_m1(bench_report *rep, fea_context *ctx, const ph_params *prm, const square *sq,
                   int pk, int refine, const m1_run *m, const yardsticks *y, double l2, double diff,
                   const mg_result *mg, const mg_result *cheb, const mg_result *stencil,
                   const mg_result *gpu_mg) {
  int rc = BENCH_OK;
  const fea_prehandled_stats *st = &m->st;
  const double N = (double)sq->nfree, k = (double)prm->nrhs;
  const int half = pk >= 2;
  /* On the GPU the 16-bit products run on tensor cores: their yardstick is
   * the FP16 GemmEx; on the CPU they run as SGEMM. */
  const double peak = y->gflops[pk == 0 ? 0 : half && prm->gpu ? 2 : 1];
  bench_record rec;
  TRY(bench_record_init(&rec, CASE_NAME, ctx));
  bench_param_str(&rec, "element", prm->p1 ? "P1" : "Q1");
  bench_param_int(&rec, "n", (long long)st->n);
  bench_param_int(&rec, "n0", (long long)st->n0);
  bench_param_int(&rec, "dofs", (long long)sq->nfree);
  bench_param_int(&rec, "nrhs", prm->nrhs);
  bench_param_str(&rec, "precision", prec_names[pk]);
  bench_param_int(&rec, "refine", refine);
  bench_param_int(&rec, "num_c", (long long)st->num_c);
  bench_param_int(&rec, "num_e", (long long)st->num_e);
  bench_param_int(&rec, "num_i", (long long)st->num_i);
  bench_param_int(&rec, "block", (long long)st->block);
  bench_param_int(&rec, "flops_per_rhs", (long long)llround(st->flops_per_rhs));
  bench_param_int(&rec, "model_flops_per_rhs", (long long)llround(st->model_flops_per_rhs));
  bench_param_str(&rec, "yardstick",
                  pk == 0    ? "dgemm"
                  : !half    ? "sgemm"
                  : prm->gpu ? "fp16 tensor-core gemm (cublasGemmEx, fp32 accumulation)"
                             : "sgemm (16-bit runs as SGEMM)");
  bench_param_int(&rec, "reps", prm->reps);
  bench_metric(&rec, "setup_s", m->setup_s);
  bench_metric(&rec, "solve_s", m->solve_s);
  bench_metric(&rec, "dofs_per_s", N * k / m->solve_s);
  if (!refine) {
    const double g = st->flops_per_rhs * k / m->dense_s * 1e-9;
    const double gm = st->model_flops_per_rhs * k / m->dense_s * 1e-9;
    bench_metric(&rec, "transform_s", m->transform_s);
    bench_metric(&rec, "dense_s", m->dense_s);
    bench_metric(&rec, "gflops", g);
    bench_metric(&rec, "solve_gflops", st->flops_per_rhs * k / m->solve_s * 1e-9);
    bench_metric(&rec, "model_gflops", gm);
    bench_metric(&rec, "gemm_gflops", peak);
    bench_metric(&rec, "peak_fraction", g / peak);
    bench_metric(&rec, "model_peak_fraction", gm / peak);
  } else {
    /* Every correction is one M1 solve (and an FP64 residual). */
    const double g = m->iterations * st->flops_per_rhs * k / m->solve_s * 1e-9;
    bench_metric(&rec, "solve_gflops", g);
    bench_metric(&rec, "gemm_gflops", peak);
    bench_metric(&rec, "peak_fraction", g / peak);
    bench_metric(&rec, "refine_iterations", m->iterations);
    bench_metric(&rec, "rel_residual", m->relres);
  }
  bench_metric(&rec, "dense_bytes", (double)st->dense_bytes);
  if (prm->gpu) bench_metric(&rec, "device_bytes", (double)st->device_bytes);
  bench_metric(&rec, "l2_error", l2);
  bench_metric(&rec, "rel_diff_f64", diff);
  const double per_rhs = m->solve_s / k;
  /* Beside a GPU: the same multigrid on the GPU, and on the CPU as the baseline. */
  static const char *const gpu_names[3] = {"mg_gpu", "mg_cheb_pcg_gpu", "mg_sumfact_pcg_gpu"};
  for (int g = 0; gpu_mg && g < 3; g++)
    if (gpu_mg[g].ok) add_mg_peer(&rec, gpu_names[g], &gpu_mg[g], prm->mg_rtol, per_rhs, N);
  if (mg && mg->ok) add_mg_peer(&rec, prm->gpu ? "mg_cpu" : "mg", mg, prm->mg_rtol, per_rhs, N);
  if (cheb && cheb->ok)
    add_mg_peer(&rec, prm->gpu ? "mg_cheb_pcg_cpu" : "mg_cheb_pcg", cheb, prm->mg_rtol, per_rhs, N);
  if (stencil && stencil->ok)
    add_mg_peer(&rec, prm->gpu ? "mg_stencil_pcg_cpu" : "mg_stencil_pcg", stencil, prm->mg_rtol,
                per_rhs, N);
  bench_report_emit(rep, &rec);
done:
  return rc;
}

/* ------------------------------------------------------------------------ */
/* One size                                                                   */

static int run_size(bench_report *rep, fea_context *ctx, const ph_params *prm, long long n,
                    const yardsticks *y) {
  int rc = BENCH_OK;
  square sq = {0}, sq_mg = {0};
  fea_solver *probe = NULL;
  fea_matrix *A = NULL;
  double *B = NULL, *X = NULL, *X64 = NULL, *full = NULL;
  mg_result mg = {0}, cheb = {0}, stencil = {0};
  mg_result gpu_mg[3]; /* on the GPU context: paper, Chebyshev-PCG CSR, Chebyshev-PCG sumfact */
  memset(gpu_mg, 0, sizeof gpu_mg);

  TRY(square_make(ctx, prm->p1, n, &sq));
  const fea_index nf = sq.nfree;
  /* A probe solver (creation is cheap: checks and sizes) for n0, |E| and
   * the counts; a bad --n0 is a usage error. */
  fea_prehandled_desc pd = FEA_PREHANDLED_DESC_INIT;
  pd.coarse_cells = (fea_index)prm->n0;
  fea_status s = fea_solver_create_prehandled(ctx, sq.pb, &pd, &probe);
  if (s == FEA_ERR_INVALID_ARG || s == FEA_ERR_UNSUPPORTED) {
    fprintf(stderr, "feaccel-bench: %s: n = %lld, n0 = %lld: %s\n", CASE_NAME, n, prm->n0,
            fea_context_last_error(NULL));
    rc = BENCH_USAGE;
    goto done;
  }
  TRY(s);
  fea_prehandled_stats st = FEA_PREHANDLED_STATS_INIT;
  TRY(fea_solver_get_prehandled_stats(probe, &st));

  /* Memory guard: the FP64 setup holds Pi, its inverse and a copy (|E|^2 x
   * 24 bytes); the solves hold ~6 panels of N x nrhs doubles. */
  const double ne = (double)st.num_e, mem = phys_memory_bytes();
  const double need = ne * ne * 24.0 + 6.0 * 8.0 * (double)nf * (double)prm->nrhs;
  if (mem > 0 && need > mem) {
    fprintf(stderr,
            "feaccel-bench: %s: h=1/%lld h0=1/%lld nrhs=%lld needs about %.3g GB "
            "(|E| = %lld: the FP64 setup holds |E|^2 x 24 bytes, plus 6 x 8 x N x nrhs for the "
            "right-hand sides and solutions), more than this machine's %.3g GB; take a smaller "
            "n / n0 or fewer right-hand sides\n",
            CASE_NAME, n, (long long)st.n0, prm->nrhs, need * 1e-9, (long long)st.num_e,
            mem * 1e-9);
    rc = BENCH_USAGE;
    goto done;
  }

  if (prm->kappa) {
    rc = run_kappa(rep, ctx, prm, &sq, probe, &st);
    goto done;
  }
  fea_solver_destroy(&probe);

  /* The right-hand sides: column 0 is the problem's load (its L2 error is
   * the discretization error), column j the load times 1 + j / nrhs. */
  const size_t nk = (size_t)nf * (size_t)prm->nrhs;
  B = malloc(nk * sizeof *B + 1);
  X = malloc(nk * sizeof *X + 1);
  X64 = malloc(nk * sizeof *X64 + 1);
  full = malloc((size_t)sq.ndofs * sizeof *full + 1);
  if (!B || !X || !X64 || !full) {
    fprintf(stderr,
            "feaccel-bench: %s: out of memory for %lld right-hand sides of %lld "
            "unknowns\n",
            CASE_NAME, prm->nrhs, (long long)nf);
    rc = BENCH_FAILED;
    goto done;
  }
  TRY(fea_problem_assemble_reference(sq.pb, B, &A));
  fea_index nnz = 0;
  TRY(fea_matrix_get_size(A, NULL, NULL, &nnz));
  fea_matrix_destroy(&A);
  for (long long j = 1; j < prm->nrhs; j++)
    for (fea_index i = 0; i < nf; i++) B[i + j * nf] = B[i] * (1.0 + (double)j / (double)prm->nrhs);

  if (prm->mg) {
    /* Beside a GPU the same problem on the CPU context (host arrays B and full
     * serve both: the free DoFs are numbered alike). */
    const square *msq = &sq;
    if (prm->mg_ctx != ctx) {
      TRY(square_make(prm->mg_ctx, prm->p1, n, &sq_mg));
      msq = &sq_mg;
    }
    fea_multigrid_desc md = FEA_MULTIGRID_DESC_PAPER; /* V(4,4), Richardson 0.3, CSR */
    md.rtol = prm->mg_rtol;
    if (prm->p1) md.omega = 0.2; /* lambda_max = 8 for P1: 0.3 diverges */
    rc = run_mg(rep, prm->mg_ctx, prm, msq, &md, B, nnz, full, &mg,
                prm->gpu ? "mg_cpu (V(4,4) Richardson, /cpu/threads)" : "mg (V(4,4) Richardson)");
    if (rc != BENCH_OK) goto done;
    fea_multigrid_desc cd = FEA_MULTIGRID_DESC_PAPER; /* CSR levels, degree 4 before and after */
    cd.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
    cd.krylov = 1;
    cd.rtol = prm->mg_rtol;
    rc = run_mg(rep, prm->mg_ctx, prm, msq, &cd, B, nnz, full, &cheb,
                prm->gpu ? "mg_cheb_pcg_cpu (/cpu/threads)" : "mg_cheb_pcg");
    if (rc != BENCH_OK) goto done;
    /* The fastest multigrid the library has on this box (the multigrid
     * case's): the same PCG with the Q1 stencil swept over each level's grid
     * instead of CSR (src/multigrid/level-stencil-op.c). Q1 only. */
    if (!prm->p1) {
      fea_multigrid_desc sd = cd;
      sd.operator_kind = FEA_OPERATOR_MATFREE_SUMFACT;
      rc = run_mg(rep, prm->mg_ctx, prm, msq, &sd, B, nnz, full, &stencil,
                  prm->gpu ? "mg_stencil_pcg_cpu (/cpu/threads)" : "mg_stencil_pcg");
      if (rc != BENCH_OK) goto done;
    }
    /* The same three on the GPU: its own level operators (sum factorization
     * for the matrix-free one), transfers and smoothers (docs/multigrid.md). */
    if (prm->gpu) {
      rc = run_mg(rep, ctx, prm, &sq, &md, B, nnz, full, &gpu_mg[0], "mg_gpu (V(4,4) Richardson)");
      if (rc == BENCH_OK)
        rc = run_mg(rep, ctx, prm, &sq, &cd, B, nnz, full, &gpu_mg[1], "mg_cheb_pcg_gpu");
      if (rc == BENCH_OK && !prm->p1) {
        fea_multigrid_desc sd = cd;
        sd.operator_kind = FEA_OPERATOR_MATFREE_SUMFACT;
        rc = run_mg(rep, ctx, prm, &sq, &sd, B, nnz, full, &gpu_mg[2], "mg_sumfact_pcg_gpu");
      }
      if (rc != BENCH_OK) goto done;
    }
  }

  /* FP64 M1 first: every other precision is compared with its solution. */
  m1_run run64, run;
  int have64 = 0;
  rc = run_m1(rep, ctx, prm, &sq, 0, 0, B, X64, &run64);
  if (rc != BENCH_OK) goto done;
  have64 = !run64.skipped;
  for (int pk = 0; pk < 4; pk++) {
    if (!(prm->precs & (1u << pk))) continue;
    for (int refine = 0; refine <= (prm->refine && pk > 0); refine++) {
      const m1_run *m = &run;
      double *x = X;
      if (pk == 0 && !refine) {
        m = &run64, x = X64;
      } else {
        rc = run_m1(rep, ctx, prm, &sq, pk, refine, B, X, &run);
        if (rc != BENCH_OK) goto done;
      }
      if (m->skipped) continue;
      double l2 = NAN;
      TRY(l2_error(&sq, x, full, &l2));
      const double diff = have64 ? rel_diff(nk, x, X64) : NAN;
      rc = emit_m1(rep, ctx, prm, &sq, pk, refine, m, y, l2, diff, prm->mg ? &mg : NULL,
                   prm->mg ? &cheb : NULL, prm->mg ? &stencil : NULL,
                   prm->mg && prm->gpu ? gpu_mg : NULL);
      if (rc != BENCH_OK) goto done;
    }
  }

  /* The FLOP comparison of docs/prehandled.md, "Choosing h0", and
   * the multigrid rule of thumb of Ruda et al. 2022, §5. */
  const double N = (double)nf;
  bench_report_note(rep,
                    "  h=1/%lld h0=1/%lld: M1 %.3g FLOP per right-hand side (exact) = %.0f N "
                    "= %.2f N^1.5; model %.3g = %.2f N^1.5",
                    n, (long long)st.n0, st.flops_per_rhs, st.flops_per_rhs / N,
                    st.flops_per_rhs / pow(N, 1.5), st.model_flops_per_rhs,
                    st.model_flops_per_rhs / pow(N, 1.5));
  if (mg.ok)
    bench_report_note(
        rep,
        "  multigrid: the paper's rule of thumb ~1000 N = %.3g (M1 / that = "
        "%.1fx); estimated from the counts here: V(4,4) %.0f N (%.0f iterations), "
        "Chebyshev PCG %.0f N (%.0f iterations); M1 / MG time per rhs: %.3g (%s), "
        "%.3g (Chebyshev PCG), %.3g (stencil-level Chebyshev PCG)",
        1000 * N, st.flops_per_rhs / (1000 * N), mg.flops_est_per_rhs / N, mg.iterations,
        cheb.ok ? cheb.flops_est_per_rhs / N : NAN, cheb.iterations,
        have64 ? run64.solve_s / (double)prm->nrhs / mg.solve_s_per_rhs : NAN, "FP64 M1 vs V(4,4)",
        cheb.ok && have64 ? run64.solve_s / (double)prm->nrhs / cheb.solve_s_per_rhs : NAN,
        stencil.ok && have64 ? run64.solve_s / (double)prm->nrhs / stencil.solve_s_per_rhs : NAN);
done:
  fea_solver_destroy(&probe);
  fea_matrix_destroy(&A);
  free(B);
  free(X);
  free(X64);
  free(full);
  square_free(&sq_mg);
  square_free(&sq);
  return rc;
}

/* --model: the paper's asymptotic storage (31)/(34) and FLOPs per right-hand
 * side (Table 3) of M1 for h0 = 2^l sqrt(h), l = -1..3, Q1 and P1, with sqrt(N)
 * read as n - 1 as the paper's Table 2 does; for Q1 also the exact counts
 * (|E|^2 + blk^2 entries, 2|E|^2 + 4 blk |I| FLOPs) where n0 = sqrt(n) / 2^l is
 * a whole number of cells. One record per (element, l). */
static int model_emit(bench_report *rep, fea_context *ctx, const ph_params *prm) {
  int rc = BENCH_OK;
  const long long n = prm->n;
  long long root = (long long)llround(sqrt((double)n));
  if (root * root != n || (n & (n - 1)) != 0) {
    fprintf(stderr,
            "feaccel-bench: %s: --model needs --n an even power of two (h0 = 2^l sqrt(h)), "
            "not %lld\n",
            CASE_NAME, n);
    return BENCH_USAGE;
  }
  const double N = (double)(n - 1) * (double)(n - 1), sqrtN = (double)(n - 1);
  for (int p1 = 0; p1 <= 1; p1++) {
    for (int l = -1; l <= 3; l++) {
      const double f = pow(4.0, l);
      bench_record rec;
      TRY(bench_record_init(&rec, CASE_NAME, ctx));
      bench_param_str(&rec, "model", "tables 2-3: h0 = 2^l sqrt(h)");
      bench_param_str(&rec, "element", p1 ? "P1" : "Q1");
      bench_param_int(&rec, "n", n);
      bench_param_int(&rec, "l", l);
      const double pi_c = p1 ? 9.0 : 4.0, c_c = p1 ? 0.25 : 1.0;
      bench_metric(&rec, "storage_per_n", pi_c / f * sqrtN + c_c * f * f);
      bench_metric(&rec, "pi_flops_per_n15", (p1 ? 18.0 : 8.0) / f);
      bench_metric(&rec, "c_flops_per_n15", (p1 ? 2.0 : 4.0) * f);
      bench_metric(&rec, "flops_per_n15", (p1 ? 18.0 : 8.0) / f + (p1 ? 2.0 : 4.0) * f);
      const long long n0 = l >= 0 ? root >> l : root << -l;
      if (!p1 && n0 >= 1 && n0 < n && n % n0 == 0) {
        const double r = (double)(n / n0), blk = (r - 1) * (r - 1);
        const double E = 2.0 * (double)(n0 - 1) * (double)(n - n0);
        const double I = (double)(n - n0) * (double)(n - n0);
        bench_param_int(&rec, "n0", n0);
        bench_metric(&rec, "exact_storage_per_n", (E * E + blk * blk) / N);
        bench_metric(&rec, "exact_flops_per_n15", (2 * E * E + 4 * blk * I) / (N * sqrtN));
      }
      bench_report_emit(rep, &rec);
    }
  }
done:
  return rc;
}

/* ------------------------------------------------------------------------ */
/* The paper's Fig. 8 (--fig8)                                                */

/* u = sin(k pi x) sin(k pi y), f = 2 (k pi)^2 u; k = 1 is the sine problem. */
static double osc_u(const double *x, void *user) {
  const double kp = *(const int *)user * 3.14159265358979323846;
  return sin(kp * x[0]) * sin(kp * x[1]);
}

static double osc_f(const double *x, void *user) {
  const double kp = *(const int *)user * 3.14159265358979323846;
  return 2.0 * kp * kp * sin(kp * x[0]) * sin(kp * x[1]);
}

/* v rounded to the nearest FP16 value (ties to even, FP16 subnormals below
 * 2^-14, overflow to infinity), in double arithmetic: adding and subtracting
 * 2^(e+42) rounds to FP16's quantum 2^(e-10) at binade e. Bit for bit
 * (double)(_Float16)v (checked on 5e7 values incl. ties), ~10x faster than
 * GCC's soft-float conversion call, which made level 8 take minutes. */
static double to_half(double v) {
  const double a = fabs(v);
  double r;
  if (!(a < 65520.0)) return isnan(v) ? v : copysign(INFINITY, v);
  if (a < 0x1p-14) {
    r = (a + 0x1p28) - 0x1p28; /* subnormal quantum 2^-24 */
  } else {
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    const uint64_t mb = ((bits >> 52) + 42) << 52;
    double magic;
    memcpy(&magic, &mb, sizeof magic);
    r = (a + magic) - magic;
  }
  return copysign(r, v);
}

/* Banded Cholesky solve of A x = b in FP16 arithmetic, the nodal system
 * without prehandling: every product, sum, square root and division rounded
 * to FP16 (the same emulation as tests/api/test-prehandled.c, with L held in
 * float, where FP16 values are exact). x holds b on entry. Returns 0, or the
 * row + 1 where a pivot was not positive (breakdown). */
static long long half_cholesky_solve(fea_index n, fea_index kd, const fea_index *rp,
                                     const fea_index *ci, const double *v, float *l, double *x) {
  const size_t w = (size_t)kd + 1;
  memset(l, 0, (size_t)n * w * sizeof *l);
  for (fea_index i = 0; i < n; i++)
    for (fea_index k = rp[i]; k < rp[i + 1]; k++)
      if (ci[k] <= i && i - ci[k] <= kd)
        l[(size_t)i * w + (size_t)(i - ci[k])] = (float)to_half(v[k]);
  for (fea_index i = 0; i < n; i++) {
    float *li = l + (size_t)i * w;
    for (fea_index j = i - kd < 0 ? 0 : i - kd; j <= i; j++) {
      const float *lj = l + (size_t)j * w;
      double sum = li[i - j];
      for (fea_index k = i - kd < 0 ? 0 : i - kd; k < j; k++) /* i >= j: i - k <= kd bounds k */
        sum = to_half(sum - to_half((double)li[i - k] * (double)lj[j - k]));
      if (j == i) {
        if (!(sum > 0)) return (long long)i + 1;
        li[0] = (float)to_half(sqrt(sum));
      } else {
        li[i - j] = (float)to_half(sum / lj[0]);
      }
    }
  }
  for (fea_index i = 0; i < n; i++) x[i] = to_half(x[i]);
  for (fea_index i = 0; i < n; i++) { /* L y = b */
    double sum = x[i];
    for (fea_index k = i - kd < 0 ? 0 : i - kd; k < i; k++)
      sum = to_half(sum - to_half((double)l[(size_t)i * w + (size_t)(i - k)] * x[k]));
    x[i] = to_half(sum / l[(size_t)i * w]);
  }
  for (fea_index i = n - 1; i >= 0; i--) { /* L^T x = y */
    double sum = x[i];
    for (fea_index k = i + 1; k <= i + kd && k < n; k++)
      sum = to_half(sum - to_half((double)l[(size_t)k * w + (size_t)(k - i)] * x[k]));
    x[i] = to_half(sum / l[(size_t)i * w]);
  }
  return 0;
}

/* One M1 solve of the load b: FP64 or FP16, no refinement, h0 automatic. */
static fea_status fig8_m1(fea_context *ctx, const square *sq, fea_precision prec, const double *b,
                          double *x, long long *n0, double *secs) {
  fea_solver *sv = NULL;
  fea_prehandled_desc d = FEA_PREHANDLED_DESC_INIT;
  d.precision = prec;
  const double t0 = bench_now();
  fea_status s = fea_solver_create_prehandled(ctx, sq->pb, &d, &sv);
  fea_prehandled_stats st = FEA_PREHANDLED_STATS_INIT;
  if (s >= 0) s = fea_solver_get_prehandled_stats(sv, &st);
  *n0 = (long long)st.n0;
  /* The memory guard of run_size: the FP64 setup holds |E|^2 x 24 bytes. */
  const double ne = (double)st.num_e, mem = phys_memory_bytes();
  if (s >= 0 && mem > 0 && ne * ne * 24.0 > mem) s = FEA_ERR_OUT_OF_MEMORY;
  if (s >= 0) s = fea_solver_setup(sv);
  if (s >= 0) s = fea_solver_solve(sv, 1, b, sq->nfree, x, sq->nfree);
  *secs = bench_now() - t0;
  fea_solver_destroy(&sv);
  return s;
}

static void fig8_emit(bench_report *rep, fea_context *ctx, const ph_params *prm, int level,
                      const square *sq, const char *variant, const char *prec, int prehandled,
                      long long n0, double l2, double l2_64, double dev, double secs,
                      long long breakdown) {
  bench_record rec;
  if (bench_record_init(&rec, CASE_NAME, ctx) < 0) return;
  bench_param_str(&rec, "figure", "fig8");
  bench_param_str(&rec, "solution", prm->fig8_k == 1 ? "sine" : "oscillatory");
  bench_param_int(&rec, "wavenumber", prm->fig8_k);
  bench_param_int(&rec, "level", level);
  bench_param_int(&rec, "n", 1LL << level);
  if (n0 > 0) bench_param_int(&rec, "n0", n0);
  bench_param_int(&rec, "dofs", (long long)sq->nfree);
  bench_param_str(&rec, "variant", variant);
  bench_param_str(&rec, "precision", prec);
  bench_param_int(&rec, "prehandled", prehandled);
  if (breakdown) bench_param_int(&rec, "breakdown_row", breakdown - 1);
  bench_metric(&rec, "l2_error", l2);
  bench_metric(&rec, "l2_error_f64", l2_64);
  bench_metric(&rec, "rel_diff_f64", dev);
  bench_metric(&rec, "time_s", secs);
  bench_report_emit(rep, &rec);
}

/* Per level: the L2 error against the exact solution of FP64 M1 (the
 * discretization error: FP64 M1 equals a direct solve to 1e-10), FP16 M1
 * with prehandling, and an FP16 Cholesky of the nodal system (no
 * prehandling, up to --nodal-max-level: its cost grows like N^2). */
/* TRY for the level loop: cleans up the level, then stops. */
#define TRY_NEXT(expr)                     \
  do {                                     \
    fea_status try_status_ = (expr);       \
    if (try_status_ < 0) {                 \
      rc = bench_fail(#expr, try_status_); \
      goto next;                           \
    }                                      \
  } while (0)

static int run_fig8(bench_report *rep, fea_context *ctx, const ph_params *prm) {
  int rc = BENCH_OK;
  int last = 0;
  for (int level = (int)prm->lev0; level <= (int)prm->lev1 && rc == BENCH_OK && !last; level++) {
    square sq = {0};
    fea_matrix *A = NULL;
    double *b = NULL, *x64 = NULL, *x = NULL, *full = NULL, *v = NULL;
    fea_index *rp = NULL, *ci = NULL;
    float *l = NULL;
    const fea_index n = (fea_index)1 << level;
    const bench_family fam = {"Q", 2, 1};
    TRY_NEXT(bench_make_space(ctx, &fam, n, &sq.mesh, &sq.space));
    fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
    pd.source = osc_f;
    pd.source_user = (void *)&prm->fig8_k;
    TRY_NEXT(fea_problem_create_poisson(sq.space, &pd, &sq.pb));
    TRY_NEXT(fea_problem_get_num_free_dofs(sq.pb, &sq.nfree));
    fea_space_info si = FEA_SPACE_INFO_INIT;
    TRY_NEXT(fea_space_get_info(sq.space, &si));
    const fea_index nf = sq.nfree;
    b = malloc((size_t)nf * sizeof *b + 1);
    x64 = malloc((size_t)nf * sizeof *x64 + 1);
    x = malloc((size_t)nf * sizeof *x + 1);
    full = malloc((size_t)si.num_dofs * sizeof *full + 1);
    if (!b || !x64 || !x || !full) {
      fprintf(stderr, "feaccel-bench: %s: out of memory at level %d\n", CASE_NAME, level);
      rc = BENCH_FAILED;
      goto next;
    }
    TRY_NEXT(fea_problem_assemble_reference(sq.pb, b, &A));
    void *u = (void *)&prm->fig8_k;
    long long n0 = 0;
    double secs = 0, l2_64 = NAN, l2 = NAN;
    fea_status s64 = fig8_m1(ctx, &sq, FEA_F64, b, x64, &n0, &secs);
    if (s64 == FEA_ERR_OUT_OF_MEMORY) { /* this level and the finer ones do not fit */
      bench_report_note(rep,
                        "  level %d and finer: not run: M1's FP64 setup needs more memory "
                        "than this machine's %.3g GB",
                        level, phys_memory_bytes() * 1e-9);
      last = 1;
      goto next;
    }
    TRY_NEXT(s64);
    TRY_NEXT(fea_problem_expand_solution(sq.pb, x64, full));
    TRY_NEXT(fea_problem_error_norms(sq.pb, full, osc_u, NULL, u, &l2_64, NULL));
    fig8_emit(rep, ctx, prm, level, &sq, "f64_m1", "f64", 1, n0, l2_64, l2_64, 0.0, secs, 0);
    TRY_NEXT(fig8_m1(ctx, &sq, FEA_F16, b, x, &n0, &secs));
    TRY_NEXT(fea_problem_expand_solution(sq.pb, x, full));
    TRY_NEXT(fea_problem_error_norms(sq.pb, full, osc_u, NULL, u, &l2, NULL));
    const double dev16 = rel_diff((size_t)nf, x, x64);
    fig8_emit(rep, ctx, prm, level, &sq, "f16_m1_prehandled", "f16", 1, n0, l2, l2_64, dev16, secs,
              0);
    bench_report_note(rep,
                      "  level %d (h=1/%lld, h0=1/%lld): L2 error FP64 %.4g, FP16 M1 %.4g "
                      "(deviation %.3g)",
                      level, (long long)n, n0, l2_64, l2, dev16);
    if (level <= prm->nodal_max) {
      fea_index nr = 0, nnz = 0, kd = 0;
      TRY_NEXT(fea_matrix_get_size(A, &nr, NULL, &nnz));
      rp = malloc((size_t)(nr + 1) * sizeof *rp);
      ci = malloc((size_t)nnz * sizeof *ci + 1);
      v = malloc((size_t)nnz * sizeof *v + 1);
      if (!rp || !ci || !v) {
        fprintf(stderr, "feaccel-bench: %s: out of memory at level %d\n", CASE_NAME, level);
        rc = BENCH_FAILED;
        goto next;
      }
      TRY_NEXT(fea_matrix_get_csr(A, rp, ci, v));
      for (fea_index i = 0; i < nr; i++)
        for (fea_index k = rp[i]; k < rp[i + 1]; k++)
          if (ci[k] - i > kd) kd = ci[k] - i;
      l = malloc((size_t)nr * (size_t)(kd + 1) * sizeof *l + 1);
      if (!l) {
        fprintf(stderr, "feaccel-bench: %s: out of memory for the FP16 band (level %d)\n",
                CASE_NAME, level);
        rc = BENCH_FAILED;
        goto next;
      }
      memcpy(x, b, (size_t)nf * sizeof *x);
      const double t0 = bench_now();
      const long long bad = half_cholesky_solve(nr, kd, rp, ci, v, l, x);
      secs = bench_now() - t0;
      double dev = NAN;
      l2 = NAN;
      if (!bad) {
        TRY_NEXT(fea_problem_expand_solution(sq.pb, x, full));
        TRY_NEXT(fea_problem_error_norms(sq.pb, full, osc_u, NULL, u, &l2, NULL));
        dev = rel_diff((size_t)nf, x, x64);
      }
      fig8_emit(rep, ctx, prm, level, &sq, "f16_nodal_cholesky", "f16", 0, 0, l2, l2_64, dev, secs,
                bad);
      bench_report_note(rep,
                        "  level %d: FP16 nodal Cholesky (no prehandling) %s%.4g (deviation "
                        "%.3g)",
                        level, bad ? "broke down, " : "", l2, dev);
    }
  next:
    free(l), free(rp), free(ci), free(v);
    free(b), free(x64), free(x), free(full);
    fea_matrix_destroy(&A);
    square_free(&sq);
  }
  if (rc == BENCH_OK)
    bench_report_note(
        rep,
        "fig8: u = sin(%d pi x) sin(%d pi y), homogeneous Dirichlet, Q1, h = 2^-level; "
        "f64_m1 = FP64 M1 (the discretization error), f16_m1_prehandled = FP16 M1 "
        "without refinement (h0 automatic), f16_nodal_cholesky = banded Cholesky of "
        "the nodal system with every operation rounded to FP16 (no prehandling); "
        "rel_diff_f64 = ||x - x_f64|| / ||x_f64||; time_s includes setup.",
        prm->fig8_k, prm->fig8_k);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                    */

static int parse_precisions(const char *v, unsigned *mask) {
  *mask = 0;
  if (strcmp(v, "all") == 0) {
    *mask = 15;
    return 0;
  }
  const char *p = v;
  while (*p) {
    size_t len = strcspn(p, ",");
    int found = 0;
    for (int k = 0; k < 4; k++)
      if (strlen(prec_names[k]) == len && strncmp(p, prec_names[k], len) == 0)
        *mask |= 1u << k, found = 1;
    if (!found) {
      fprintf(stderr,
              "feaccel-bench: %s: --precision '%s': expected f64, f32, f16, bf16, a "
              "comma-separated list of them, or all\n",
              CASE_NAME, v);
      return -1;
    }
    p += len;
    if (*p == ',') p++;
  }
  return *mask ? 0 : -1;
}

static int parse(int argc, char **argv, ph_params *p) {
  static const struct {
    const char *name;
    long long min, max;
    size_t off;
  } opts[] = {
      {"--n", 4, 1 << 16, offsetof(ph_params, n)},
      {"--n0", 0, 1 << 15, offsetof(ph_params, n0)},
      {"--n-max", 64, 1 << 16, offsetof(ph_params, n_max)},
      {"--nrhs", 1, 1 << 20, offsetof(ph_params, nrhs)},
      {"--mg-nrhs", 1, 1 << 20, offsetof(ph_params, mg_nrhs)},
      {"--gemm-n", 64, 1 << 14, offsetof(ph_params, gemm_n)},
      {"--nodal-max-level", 0, 12, offsetof(ph_params, nodal_max)},
      {"--fine-level", 2, 9, offsetof(ph_params, fine_level)},
  };
  for (int i = 0; i < argc; i++) {
    const char *v = NULL;
    int got;
    if (strcmp(argv[i], "--sweep") == 0) {
      p->sweep = 1;
      continue;
    }
    if (strcmp(argv[i], "--refine") == 0) {
      p->refine = 1;
      continue;
    }
    if (strcmp(argv[i], "--kappa") == 0) {
      p->kappa = 1;
      continue;
    }
    if (strcmp(argv[i], "--model") == 0) {
      p->model = 1;
      continue;
    }
    if (strcmp(argv[i], "--mg") == 0) {
      p->mg = 1;
      continue;
    }
    if (strcmp(argv[i], "--fig8") == 0) {
      p->fig8 = 1;
      continue;
    }
    if (strcmp(argv[i], "--table4") == 0) {
      p->table4 = 1;
      continue;
    }
    if ((got = bench_option_value(argc, argv, &i, "--solution", &v)) != 0) {
      if (got < 0) return BENCH_USAGE;
      if (strcmp(v, "sine") == 0)
        p->fig8_k = 1;
      else if (strcmp(v, "oscillatory") == 0)
        p->fig8_k = p->fig8_k > 1 ? p->fig8_k : 8;
      else {
        fprintf(stderr, "feaccel-bench: %s: --solution '%s': expected sine or oscillatory\n",
                CASE_NAME, v);
        return BENCH_USAGE;
      }
      continue;
    }
    if ((got = bench_option_value(argc, argv, &i, "--wavenumber", &v)) != 0) {
      long long k = 0;
      if (got < 0 || bench_parse_ll(CASE_NAME, "--wavenumber", v, 2, 256, &k) < 0)
        return BENCH_USAGE;
      p->fig8_k = (int)k;
      continue;
    }
    if ((got = bench_option_value(argc, argv, &i, "--levels", &v)) != 0) {
      int used = 0;
      if (got < 0) return BENCH_USAGE;
      if (sscanf(v, "%lld..%lld%n", &p->lev0, &p->lev1, &used) != 2 || v[used] != '\0' ||
          p->lev0 < 2 || p->lev1 > 12 || p->lev0 > p->lev1) {
        fprintf(stderr,
                "feaccel-bench: %s: --levels '%s': expected L0..L1 with 2 <= L0 <= L1 <= 12\n",
                CASE_NAME, v);
        return BENCH_USAGE;
      }
      continue;
    }
    if (strcmp(argv[i], "--no-mg") == 0) {
      p->mg = 0;
      continue;
    }
    if ((got = bench_option_value(argc, argv, &i, "--element", &v)) != 0) {
      if (got < 0) return BENCH_USAGE;
      if (strcmp(v, "q1") == 0 || strcmp(v, "Q1") == 0)
        p->p1 = 0;
      else if (strcmp(v, "p1") == 0 || strcmp(v, "P1") == 0)
        p->p1 = 1;
      else {
        fprintf(stderr, "feaccel-bench: %s: --element '%s': expected q1 or p1\n", CASE_NAME, v);
        return BENCH_USAGE;
      }
      continue;
    }
    if ((got = bench_option_value(argc, argv, &i, "--precision", &v)) != 0) {
      if (got < 0 || parse_precisions(v, &p->precs) < 0) return BENCH_USAGE;
      continue;
    }
    if ((got = bench_option_value(argc, argv, &i, "--mg-rtol", &v)) != 0) {
      char *end = NULL;
      if (got < 0) return BENCH_USAGE;
      p->mg_rtol = strtod(v, &end);
      if (end == v || *end || !(p->mg_rtol > 0 && p->mg_rtol < 1)) {
        fprintf(stderr, "feaccel-bench: %s: --mg-rtol '%s' is not a number in (0, 1)\n", CASE_NAME,
                v);
        return BENCH_USAGE;
      }
      continue;
    }
    int matched = 0;
    for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !matched; k++) {
      got = bench_option_value(argc, argv, &i, opts[k].name, &v);
      if (got < 0) return BENCH_USAGE;
      if (got == 0) continue;
      if (bench_parse_ll(CASE_NAME, opts[k].name, v, opts[k].min, opts[k].max,
                         (long long *)((char *)p + opts[k].off)) < 0)
        return BENCH_USAGE;
      if (opts[k].off == offsetof(ph_params, n)) p->n_given = 1;
      matched = 1;
    }
    if (!matched) {
      fprintf(stderr, "feaccel-bench: %s: unknown option '%s' (see feaccel-bench %s --help)\n",
              CASE_NAME, argv[i], CASE_NAME);
      return BENCH_USAGE;
    }
  }
  if (p->sweep && p->n_given) {
    fprintf(stderr,
            "feaccel-bench: %s: --sweep runs n = 64, 128, ... up to --n-max; leave "
            "--n out\n",
            CASE_NAME);
    return BENCH_USAGE;
  }
  if (p->fig8 && (p->sweep || p->kappa || p->model || p->n_given)) {
    fprintf(stderr,
            "feaccel-bench: %s: --fig8 runs its own levels (--levels); leave --sweep, --kappa, "
            "--model and --n out\n",
            CASE_NAME);
    return BENCH_USAGE;
  }
  if (p->table4 && (p->sweep || p->kappa || p->model || p->fig8 || p->n_given)) {
    fprintf(stderr,
            "feaccel-bench: %s: --table4 runs its own mesh (--fine-level); leave --sweep, "
            "--kappa, --model, --fig8 and --n out\n",
            CASE_NAME);
    return BENCH_USAGE;
  }
  if (p->sweep && p->kappa) {
    fprintf(stderr, "feaccel-bench: %s: --kappa is for one (n, n0); leave --sweep out\n",
            CASE_NAME);
    return BENCH_USAGE;
  }
  return BENCH_OK;
}

static int run(const bench_options *o, int argc, char **argv) {
  ph_params prm = {.n = 256,
                   .n0 = 0,
                   .n_max = 512,
                   .nrhs = 1,
                   .mg_nrhs = 4,
                   .gemm_n = 2048,
                   .p1 = 0,
                   .sweep = 0,
                   .refine = 0,
                   .kappa = 0,
                   .mg = 1,
                   .reps = o->reps,
                   .n_given = 0,
                   .precs = 15,
                   .mg_rtol = 1e-8,
                   .fig8_k = 8,
                   .lev0 = 3,
                   .lev1 = 8,
                   .nodal_max = 8,
                   .fine_level = 7};
  int rc = parse(argc, argv, &prm);
  if (rc != BENCH_OK) return rc;
  fea_context *ctx = NULL;
  rc = bench_open_context(o, "/cpu/threads", &ctx);
  if (rc != BENCH_OK) return rc;
  prm.mg_ctx = ctx;
  {
    fea_context_info info = FEA_CONTEXT_INFO_INIT;
    fea_status s = fea_context_get_info(ctx, &info);
    prm.gpu = s >= 0 && strncmp(info.backend, "/gpu", 4) == 0;
    if (s < 0) rc = bench_fail("fea_context_get_info", s);
  }
  /* Multigrid has no GPU path yet: beside a GPU it runs on the CPU as the baseline. */
  if (rc == BENCH_OK && prm.gpu && prm.mg) {
    fea_status s = fea_context_create("/cpu/threads", &prm.mg_ctx);
    if (s < 0)
      rc = bench_fail("fea_context_create(\"/cpu/threads\") for the multigrid baseline", s);
  }
  if (rc != BENCH_OK) {
    if (prm.mg_ctx != ctx) fea_context_destroy(&prm.mg_ctx);
    fea_context_destroy(&ctx);
    return rc;
  }
  bench_report rep;
  bench_report_init(&rep, o);
  if (prm.model || prm.fig8 || prm.table4) {
    rc = prm.model  ? model_emit(&rep, ctx, &prm)
         : prm.fig8 ? run_fig8(&rep, ctx, &prm)
                    : prehandled_table4(&rep, ctx, (int)prm.fine_level, 200);
    if (prm.mg_ctx != ctx) fea_context_destroy(&prm.mg_ctx);
    fea_context_destroy(&ctx);
    return rc;
  }
  yardsticks y = {{NAN, NAN, NAN}};
  if (!prm.kappa) {
    static const fea_precision yp[3] = {FEA_F64, FEA_F32, FEA_F16};
    static const char *const yn[3] = {"DGEMM", "SGEMM", "FP16 GEMM"};
    for (int k = 0; k < 3 && rc == BENCH_OK; k++) {
      fea_status s = bench_gemm_peak(ctx, prm.gemm_n, yp[k], 3, &y.gflops[k]);
      if (s < 0) {
        char what[64];
        snprintf(what, sizeof what, "the %s yardstick (fea_dense_gemm)", yn[k]);
        rc = bench_fail(what, s);
      }
    }
  }
  if (rc == BENCH_OK && prm.sweep) {
    for (long long n = 64; n <= prm.n_max && rc == BENCH_OK; n *= 2)
      rc = run_size(&rep, ctx, &prm, n, &y);
  } else if (rc == BENCH_OK) {
    rc = run_size(&rep, ctx, &prm, prm.n, &y);
  }
  if (rc == BENCH_OK && !prm.kappa) {
    bench_machine m;
    if (bench_machine_get(ctx, &m) >= 0) bench_report_note(&rep, "\nBLAS: %s", m.blas);
    bench_report_note(&rep,
                      "yardsticks (order %lld, same context, this run): DGEMM %.4g, SGEMM "
                      "%.4g, FP16 x FP16 -> FP32 GEMM %.4g GFLOP/s (%s)",
                      prm.gemm_n, y.gflops[0], y.gflops[1], y.gflops[2],
                      prm.gpu ? "cuBLAS: cublasDgemm (FP64 tensor cores), cublasSgemm, "
                                "cublasGemmEx FP16 tensor cores with FP32 accumulation"
                              : "converts to FP32 + SGEMM on the CPU");
    bench_report_note(&rep,
                      "setup_s: one setup (FP64 factorizations, Pi^-1, conversion); "
                      "solve_s, transform_s, dense_s: median of %d solves of nrhs = %lld after "
                      "one warm-up; dofs_per_s = N nrhs / solve_s;",
                      prm.reps, prm.nrhs);
    bench_report_note(&rep,
                      "gflops = flops_per_rhs (2|E|^2 + 4 blk |I|) nrhs / dense_s, "
                      "solve_gflops the same over solve_s, model_gflops = model_flops_per_rhs "
                      "(paper: (8 4^-l + 4 4^l) N^1.5) nrhs / dense_s;");
    bench_report_note(&rep,
                      "peak_fraction = gflops / gemm_gflops (DGEMM for f64, SGEMM for f32, "
                      "%s); refined rows count refine_iterations M1 solves over solve_s;",
                      prm.gpu ? "the FP16 tensor-core GemmEx for f16 and bf16"
                              : "SGEMM for the 16-bit precisions, which the CPU runs as SGEMM");
    bench_report_note(&rep,
                      "l2_error: column 0 vs sin(pi x) sin(pi y); rel_diff_f64: "
                      "||X - X_f64|| / ||X_f64|| over all columns.");
    if (prm.mg)
      bench_report_note(&rep,
                        "peers: mg = V(4,4) Richardson omega %.1g, CSR, coarsest = one "
                        "element (the paper's); mg_cheb_pcg = CG preconditioned by a V-cycle "
                        "with degree-4 Chebyshev; mg_stencil_pcg (Q1) = the same on matrix-free "
                        "stencil levels, the multigrid case's fastest; all to rtol %.0e "
                        "(relative residual), zero "
                        "initial guess, min(nrhs, %lld) right-hand sides; solve_s is per right-"
                        "hand side, ratio = M1 / MG time per right-hand side, flops_per_rhs_est "
                        "an estimate from nnz (no counter).",
                        prm.p1 ? 0.2 : 0.3, prm.mg_rtol, prm.mg_nrhs);
    if (prm.mg && prm.gpu)
      bench_report_note(&rep,
                        "M1 ran on the GPU; mg_gpu, mg_cheb_pcg_gpu and mg_sumfact_pcg_gpu are "
                        "the same multigrid on the GPU (sum-factorization levels for the "
                        "last), mg_cpu, mg_cheb_pcg_cpu and mg_stencil_pcg_cpu on /cpu/threads "
                        "(the CPU baseline). M1's and the GPU multigrid's solve_s include the "
                        "host<->device copies of B and X.");
  }
  if (prm.mg_ctx != ctx) fea_context_destroy(&prm.mg_ctx);
  fea_context_destroy(&ctx);
  return rc;
}

const bench_case bench_case_prehandled = {
    .name = CASE_NAME,
    .description =
        "prehandled Schur-complement solver (M1) per precision: MDoF/s, GFLOP/s "
        "(exact and model) vs GEMM, L2 error; multigrid side by side",
    .usage =
        "usage: feaccel-bench [global options] prehandled [--n N | --sweep [--n-max M]] [--n0 N0]\n"
        "       [--element q1|p1] [--precision f64|f32|f16|bf16|all|LIST] [--nrhs K] [--refine]\n"
        "       [--kappa | --model] [--mg | --no-mg] [--mg-rtol R] [--mg-nrhs K] [--gemm-n G]\n"
        "   or: feaccel-bench [global options] prehandled --fig8 [--solution sine|oscillatory]\n"
        "       [--wavenumber K] [--levels L0..L1] [--nodal-max-level L]\n"
        "   or: feaccel-bench [global options] prehandled --table4 [--fine-level L]\n"
        "\n"
        "  --n N          fine cells per direction, h = 1/N (default 256)\n"
        "  --sweep        n = 64, 128, ... up to --n-max (default 512)\n"
        "  --n0 N0        coarse cells per direction, h0 = 1/N0, N / N0 a power of two >= 2;\n"
        "                 0: the FLOP-optimal one (default; 16 at n = 256 and 512)\n"
        "  --element E    q1 (default) or p1\n"
        "  --precision P  precision(s) of the dense products: f64, f32, f16, bf16, a comma list,\n"
        "                 or all (default)\n"
        "  --nrhs K       right-hand sides solved at once (default 1; 'many': e.g. 256)\n"
        "  --refine       also the mixed-precision iterative refinement of each precision < f64\n"
        "  --kappa        only the condition numbers for this (n, n0): nodal, hierarchical,\n"
        "                 scaled (prehandled), C_i and Pi (Lanczos), with Table 1's values\n"
        "  --model        only the storage and FLOP model of the paper's Tables 2 and 3 at this\n"
        "                 n (an even power of two), l = -1..3, Q1 and P1; exact Q1 counts beside\n"
        "  --mg, --no-mg  the multigrid peers on (default) or off\n"
        "  --mg-rtol R    their relative-residual target (default 1e-8)\n"
        "  --mg-nrhs K    right-hand sides multigrid solves per timing (default 4, at most nrhs)\n"
        "  --gemm-n G     order of the DGEMM / SGEMM yardsticks (default 2048)\n"
        "  --fig8         only the paper's Fig. 8: per level (h = 2^-level, Q1) the L2 error of\n"
        "                 FP64 M1, FP16 M1 (prehandled) and an FP16 Cholesky of the nodal system\n"
        "                 (no prehandling) against u = sin(k pi x) sin(k pi y)\n"
        "  --solution S   oscillatory (default, k = 8) or sine (k = 1)\n"
        "  --wavenumber K k of the oscillatory solution (2..256, default 8)\n"
        "  --levels L0..L1  the levels (default 3..8)\n"
        "  --nodal-max-level L  the FP16 nodal Cholesky (O(N^2) work) up to level L (default 8)\n"
        "  --table4       only the paper's Table 4: the flow-around-a-square mesh (28 macro\n"
        "                 triangles in 3 groups, docs/prehandled.md) refined L times, P1; per\n"
        "                 L0 = 0..3 |C|, |E|, |I|, max kappa(C_i), kappa(Pi), NNZ ratios beside\n"
        "                 the paper's, and which match\n"
        "  --fine-level L its fine level (2..9, default 7: the paper's first block)\n"
        "\n"
        "Default backend /cpu/threads. --reps R: median of R solves after one warm-up; setup\n"
        "runs once per precision (its FP64 Pi inversion is O(|E|^3)). Sizes whose FP64 setup\n"
        "(|E|^2 x 24 bytes) exceeds the machine's memory are refused.\n",
    .run = run,
};
