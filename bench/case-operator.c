/* The `operator` case: throughput of one application y = A x of the Poisson
 * stiffness operator, assembled (CSR SpMV) or matrix-free (element-matrix or
 * sum-factorization kernel), on the manufactured sine problem of the unit box.
 *
 * Per record: the median time of one apply, DoF/s (rows / time), GFLOP/s and
 * GB/s from the operator's own flop and byte counts per apply, their
 * fractions of a DGEMM and a STREAM triad measured in the same run on the
 * same threads, the roofline bound of the kernel
 *   min(DGEMM GFLOP/s / flops per DoF, STREAM GB/s / bytes per DoF)
 * in DoF/s and the fraction of it reached, setup time and memory; and, as the
 * peer "csr", the CSR operator on the same problem with the ratios. `--sweep`
 * runs p = 1..4 in 2D and 3D at a fixed DoF count and prints the crossover
 * table; `--cg` adds a Jacobi-PCG solve with the operator and its L2 error;
 * `--elasticity` measures linear elasticity (dim components, interleaved)
 * on Q_p, the B-spline box and the NURBS ring instead of Poisson. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel/operator.h>

#include "discretization.h"
#include "kernel-rate.h"
#include "peak.h"
#include "report.h"
#include "stream.h"
#include "timing.h"

#define CASE_NAME "operator"
#define NUM_KINDS 3
#define SAMPLE_MIN_S 0.05 /* one timed sample repeats the apply until it lasts this long */

static const char *const kind_names[NUM_KINDS] = {
    [FEA_OPERATOR_CSR] = "csr",
    [FEA_OPERATOR_MATFREE_ELEMENT_MATRIX] = "matfree-elemmat",
    [FEA_OPERATOR_MATFREE_SUMFACT] = "matfree-sumfact",
};

typedef struct op_params {
  long long dim, p, n;
  int kind;           /* -1: not given */
  int strategy;       /* fea_update_strategy */
  const char *space;  /* "lagrange" or "bspline" */
  int sweep, cg, csr; /* csr: measure the CSR peer */
  int mapped;         /* --mapped: box against ring, each way of holding the geometry */
  int elasticity;     /* --elasticity: the elasticity operators on Q_p, B-spline box, ring */
  long long dofs;     /* sweep / default size target; 0: 1M in 2D, 0.5M in 3D */
  long long gemm_n, stream_n;
  double rtol;
  int reps;
  int cpu_peer;     /* --cpu-peer: the same kind on /cpu/threads too (device backends) */
  fea_context *cpu; /* that context, opened by run() */
} op_params;

/* The machine's limits on the context's threads, measured in this run. */
typedef struct yardstick {
  double dgemm_gflops, stream_gbs;
  int threads;
  double fma_gflops; /* one core, the widest FMA (kernel-rate.h) */
  const char *fma_isa;
} yardstick;

/* One measured operator. */
typedef struct op_result {
  int measured; /* 0: not run or unsupported (why holds the reason) */
  char why[256];
  fea_operator_info info;
  double setup_s;       /* wall time of fea_operator_create */
  double apply_s;       /* median time of one apply */
  int per_sample;       /* applies per timed sample */
  double kernel_gflops; /* sum factorization: the batch kernel alone, one core (0: not measured) */
  double dgemm_gflops;  /* the DGEMM yardstick measured right before this operator (0: none) */
  int terms;            /* fea_geometry_terms asked for */
  const char *domain;   /* --mapped: "box" or "ring" (NULL: not reported) */
  int threads;          /* --cpu-peer: the CPU context's threads */
  double box_apply_s;   /* --mapped, ring AUTO: the box AUTO's time, same rows (0: none) */
} op_result;

/* The DGEMM rate a record is held against: the one measured next to it in
 * time where there is one (a shared machine's load drifts during a sweep),
 * else the run's. */
static double record_dgemm(const op_result *r, const yardstick *y) {
  return r->dgemm_gflops > 0 ? r->dgemm_gflops : y->dgemm_gflops;
}

static int sine_dim;

static double sine_u(const double *x, void *user) {
  (void)user;
  double u = 1;
  for (int k = 0; k < sine_dim; k++) u *= sin(3.14159265358979323846 * x[k]);
  return u;
}

static const char *family_name(const char *space) {
  return strcmp(space, "bspline") == 0 ? "bspline" : "Q";
}

/* Elements per direction that give about `dofs` unknowns. */
static long long n_for_dofs(const char *space, int dim, int p, long long dofs) {
  double side = pow((double)dofs, 1.0 / dim);
  long long n = strcmp(space, "bspline") == 0 ? llround(side) - p : llround((side - 1) / p);
  return n < 1 ? 1 : n;
}

static long long default_dofs(const op_params *prm, int dim) {
  return prm->dofs > 0 ? prm->dofs : (dim == 2 ? 1048576 : 524288);
}

/* ------------------------------------------------------------------------ */
/* Measuring                                                                 */

/* Create the operator of `kind` on pb, time `reps` samples of applies after a
 * warm-up. With keep != NULL the operator is handed back instead of destroyed.
 * Returns the library's status; FEA_ERR_UNSUPPORTED leaves r->measured = 0
 * with the reason. */
static fea_status measure_operator(fea_context *ctx, const fea_problem *pb, int kind, int strategy,
                                   int terms, int reps, op_result *r, fea_operator **keep) {
  memset(r, 0, sizeof *r);
  r->terms = terms;
  fea_operator_info init = FEA_OPERATOR_INFO_INIT;
  r->info = init;
  fea_operator *op = NULL;
  fea_vector *x = NULL, *y = NULL;
  double *host = NULL, *times = malloc((size_t)reps * sizeof *times);
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = (fea_operator_kind)kind;
  d.strategy = (fea_update_strategy)strategy;
  d.geometry_terms = (fea_geometry_terms)terms;
  fea_status s = times ? FEA_SUCCESS : FEA_ERR_OUT_OF_MEMORY;
  double t0 = bench_now();
  if (s == FEA_SUCCESS) s = fea_operator_create(ctx, pb, &d, &op);
  r->setup_s = bench_now() - t0;
  if (s == FEA_ERR_UNSUPPORTED) {
    snprintf(r->why, sizeof r->why, "%s", fea_context_last_error(ctx));
    free(times);
    return s;
  }
  if (s == FEA_SUCCESS) s = fea_operator_get_info(op, &r->info);
  fea_index rows = r->info.rows;
  if (s == FEA_SUCCESS) s = fea_vector_create(ctx, rows, FEA_F64, &x);
  if (s == FEA_SUCCESS) s = fea_vector_create(ctx, rows, FEA_F64, &y);
  if (s == FEA_SUCCESS) {
    host = malloc((size_t)rows * sizeof *host + 1);
    if (!host) s = FEA_ERR_OUT_OF_MEMORY;
  }
  if (s == FEA_SUCCESS) {
    /* A non-constant input: a constant is in the kernel of the Neumann part. */
    for (fea_index i = 0; i < rows; i++) host[i] = 1.0 + 0.125 * (double)(i % 13);
    s = fea_vector_write(x, rows, FEA_F64, host);
  }
  /* A device context queues the applies: the clock is read only once the
   * queue is empty (a dot returns its value to the host). */
  double idle = 0;
  double warm = 0;
  if (s == FEA_SUCCESS) { /* warm-up, and how many applies a sample needs */
    s = fea_vector_dot(x, x, &idle);
    t0 = bench_now();
    if (s == FEA_SUCCESS) s = fea_operator_apply(op, x, y);
    if (s == FEA_SUCCESS) s = fea_vector_dot(y, y, &idle);
    warm = bench_now() - t0;
  }
  int k = warm > 0 ? (int)ceil(SAMPLE_MIN_S / warm) : 1;
  if (k < 1) k = 1;
  if (k > 10000) k = 10000;
  r->per_sample = k;
  for (int rep = 0; rep < reps && s == FEA_SUCCESS; rep++) {
    t0 = bench_now();
    for (int j = 0; j < k && s == FEA_SUCCESS; j++) s = fea_operator_apply(op, x, y);
    if (s == FEA_SUCCESS) s = fea_vector_dot(y, y, &idle);
    times[rep] = (bench_now() - t0) / k;
  }
  if (s == FEA_SUCCESS) {
    r->apply_s = bench_median(times, reps);
    r->measured = 1;
  }
  fea_vector_destroy(&x);
  fea_vector_destroy(&y);
  free(host);
  free(times);
  if (keep && s == FEA_SUCCESS)
    *keep = op;
  else
    fea_operator_destroy(&op);
  return s;
}

static double dofs_per_s(const op_result *r) {
  return r->measured && r->apply_s > 0 ? (double)r->info.rows / r->apply_s : 0.0;
}

/* The roofline bound of a measured operator in DoF/s, and which side binds. */
static double roofline(const op_result *r, const yardstick *y, const char **bound) {
  double rows = (double)r->info.rows;
  double fpd = rows > 0 ? r->info.flops_per_apply / rows : 0,
         bpd = rows > 0 ? r->info.bytes_per_apply / rows : 0;
  double by_flops = fpd > 0 ? record_dgemm(r, y) * 1e9 / fpd : INFINITY;
  double by_bytes = bpd > 0 ? y->stream_gbs * 1e9 / bpd : INFINITY;
  if (bound) *bound = by_flops < by_bytes ? "dgemm" : "stream";
  return by_flops < by_bytes ? by_flops : by_bytes;
}

/* What a problem is: its dimensions, for every record of it. */
typedef struct problem_id {
  const char *space;
  int dim, p;
  long long n;
} problem_id;

static int emit_result(bench_report *rep, fea_context *ctx, const problem_id *id, int kind,
                       int strategy, int reps, const op_result *r, const op_result *csr,
                       const op_result *cpu, const yardstick *y) {
  bench_record rec;
  fea_status s = bench_record_init(&rec, CASE_NAME, ctx);
  if (s != FEA_SUCCESS) return bench_fail("bench_record_init", s);
  const char *bound = "";
  double dps = dofs_per_s(r), roof = roofline(r, y, &bound), rows = (double)r->info.rows;
  double gflops = r->info.flops_per_apply / r->apply_s * 1e-9;
  double gbs = r->info.bytes_per_apply / r->apply_s * 1e-9;
  const char *ran = fea_update_strategy_name(r->info.strategy_run);
  bench_param_str(&rec, "kind", kind_names[kind]);
  if ((int)r->info.kind_run != kind && (int)r->info.kind_run >= 0 &&
      (int)r->info.kind_run < NUM_KINDS)
    bench_param_str(&rec, "kind_run", kind_names[r->info.kind_run]);
  bench_param_str(&rec, "strategy", fea_update_strategy_name((fea_update_strategy)strategy));
  bench_param_str(&rec, "ran", ran ? ran : "?");
  bench_param_str(&rec, "kernel", r->info.kernel);
  bench_param_str(&rec, "space", id->space);
  if (r->domain) {
    static const char *const terms[] = {"auto", "stored", "recomputed"};
    bench_param_str(&rec, "domain", r->domain);
    bench_param_str(&rec, "geometry_terms", terms[r->terms]);
  }
  bench_param_int(&rec, "dim", id->dim);
  bench_param_int(&rec, "p", id->p);
  bench_param_int(&rec, "n", id->n);
  bench_param_int(&rec, "dofs", (long long)r->info.rows);
  bench_param_int(&rec, "reps", reps);
  bench_param_int(&rec, "applies_per_rep", r->per_sample);
  bench_param_str(&rec, "bound", bound);
  bench_metric(&rec, "time_s", r->apply_s);
  bench_metric(&rec, "dofs_per_s", dps);
  bench_metric(&rec, "gflops", gflops);
  bench_metric(&rec, "gbytes_per_s", gbs);
  const double dgemm = record_dgemm(r, y);
  bench_metric(&rec, "peak_fraction", dgemm > 0 ? gflops / dgemm : 0.0);
  bench_metric(&rec, "stream_fraction", y->stream_gbs > 0 ? gbs / y->stream_gbs : 0.0);
  bench_metric(&rec, "flops_per_dof", r->info.flops_per_apply / rows);
  bench_metric(&rec, "bytes_per_dof", r->info.bytes_per_apply / rows);
  bench_metric(&rec, "roofline_dofs_per_s", roof);
  bench_metric(&rec, "roofline_fraction", isfinite(roof) && roof > 0 ? dps / roof : 0.0);
  bench_metric(&rec, "setup_s", r->setup_s);
  bench_metric(&rec, "memory_bytes", (double)r->info.memory_bytes);
  bench_metric(&rec, "memory_per_dof", (double)r->info.memory_bytes / rows);
  bench_metric(&rec, "dgemm_gflops", dgemm);
  bench_metric(&rec, "stream_gbytes_per_s", y->stream_gbs);
  if (r->kernel_gflops > 0) { /* the kernel alone, one core, in cache */
    bench_metric(&rec, "kernel_gflops", r->kernel_gflops);
    bench_metric(&rec, "kernel_dgemm_fraction", r->kernel_gflops * y->threads / dgemm);
    if (y->fma_gflops > 0) {
      bench_metric(&rec, "kernel_fma_fraction", r->kernel_gflops / y->fma_gflops);
      bench_metric(&rec, "fma_peak_gflops", y->fma_gflops);
    }
  }
  if (cpu && cpu->measured) { /* the same kind on the host's cores, same run */
    int k = bench_peer(&rec, "cpu");
    bench_peer_metric(&rec, k, "threads", (double)cpu->threads);
    bench_peer_metric(&rec, k, "dofs_per_s", dofs_per_s(cpu));
    bench_peer_metric(&rec, k, "time_s", cpu->apply_s);
    bench_peer_metric(&rec, k, "speedup", cpu->apply_s / r->apply_s);
  }
  if (r->box_apply_s > 0) { /* --mapped: the ring's rate against the box's (issue #40) */
    int k = bench_peer(&rec, "box");
    bench_peer_metric(&rec, k, "time_s", r->box_apply_s);
    bench_peer_metric(&rec, k, "dofs_per_s", rows / r->box_apply_s);
    bench_peer_metric(&rec, k, "rate_ratio", r->box_apply_s / r->apply_s);
  }
  if (csr && csr->measured && kind != FEA_OPERATOR_CSR) {
    int k = bench_peer(&rec, "csr");
    bench_peer_metric(&rec, k, "dofs_per_s", dofs_per_s(csr));
    bench_peer_metric(&rec, k, "time_s", csr->apply_s);
    bench_peer_metric(&rec, k, "setup_s", csr->setup_s);
    bench_peer_metric(&rec, k, "memory_bytes", (double)csr->info.memory_bytes);
    bench_peer_metric(&rec, k, "bytes_per_dof", csr->info.bytes_per_apply / (double)csr->info.rows);
    bench_peer_metric(&rec, k, "ratio", r->apply_s / csr->apply_s);
    bench_peer_metric(&rec, k, "speedup", csr->apply_s / r->apply_s);
    bench_peer_metric(&rec, k, "setup_speedup", csr->setup_s / r->setup_s);
    bench_peer_metric(&rec, k, "memory_ratio",
                      (double)r->info.memory_bytes / (double)csr->info.memory_bytes);
  }
  bench_report_emit(rep, &rec);
  return BENCH_OK;
}

static void emit_skip(bench_report *rep, fea_context *ctx, const problem_id *id, int kind,
                      const char *why) {
  bench_machine m;
  (void)bench_machine_get(ctx, &m);
  char what[64];
  snprintf(what, sizeof what, "%s %dD p=%d", kind_names[kind], id->dim, id->p);
  bench_report_skip(rep, CASE_NAME, what, why, &m);
}

/* ------------------------------------------------------------------------ */
/* PCG                                                                       */

static int run_cg(bench_report *rep, fea_context *ctx, const fea_problem *pb, fea_operator *op,
                  const problem_id *id, fea_index ndofs, int kind, double rtol) {
  int rc = BENCH_OK;
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  fea_vector *b = NULL, *x = NULL;
  double *u = NULL, *full = NULL;
  fea_index nfree = 0;
  fea_cg_stats st = FEA_CG_STATS_INIT;
  fea_status s = fea_operator_get_info(op, &info);
  if (s == FEA_SUCCESS) s = fea_problem_get_num_free_dofs(pb, &nfree);
  if (s == FEA_SUCCESS) s = fea_vector_create(ctx, info.rows, FEA_F64, &b);
  if (s == FEA_SUCCESS) s = fea_vector_create(ctx, info.rows, FEA_F64, &x);
  if (s == FEA_SUCCESS) s = fea_operator_get_rhs(op, b);
  if (s == FEA_SUCCESS) s = fea_vector_set_all(x, 0.0);
  if (s < 0) return bench_fail("setting up the PCG solve", s);
  fea_cg_desc d = FEA_CG_DESC_INIT;
  d.rtol = rtol;
  d.atol = 0;
  d.max_iterations = 100000;
  d.jacobi = 1;
  s = fea_cg_solve(op, b, x, &d, &st);
  if (s < 0) {
    rc = bench_fail("fea_cg_solve", s);
    goto done;
  }
  /* The error: the solution read back to the host and expanded with the
   * boundary values (an operator over all DoFs hands back full coefficients). */
  u = malloc((size_t)info.rows * sizeof *u + 1);
  full = malloc((size_t)ndofs * sizeof *full + 1);
  s = u && full ? fea_vector_read(x, info.rows, FEA_F64, u) : FEA_ERR_OUT_OF_MEMORY;
  double l2 = NAN;
  if (s == FEA_SUCCESS && info.rows == nfree)
    s = fea_problem_expand_solution(pb, u, full);
  else if (s == FEA_SUCCESS && info.rows == ndofs)
    memcpy(full, u, (size_t)ndofs * sizeof *full);
  else if (s == FEA_SUCCESS)
    s = FEA_ERR_DIMENSION;
  sine_dim = id->dim;
  if (s == FEA_SUCCESS) s = fea_problem_error_norms(pb, full, sine_u, NULL, NULL, &l2, NULL);
  if (s < 0) {
    rc = bench_fail("computing the L2 error", s);
    goto done;
  }
  bench_record rec;
  (void)bench_record_init(&rec, CASE_NAME, ctx);
  bench_param_str(&rec, "kind", kind_names[kind]);
  bench_param_str(&rec, "solver", "pcg-jacobi");
  bench_param_str(&rec, "kernel", info.kernel);
  bench_param_str(&rec, "space", id->space);
  bench_param_int(&rec, "dim", id->dim);
  bench_param_int(&rec, "p", id->p);
  bench_param_int(&rec, "n", id->n);
  bench_param_int(&rec, "dofs", (long long)info.rows);
  bench_param_int(&rec, "converged", st.converged);
  bench_metric(&rec, "rtol", rtol);
  bench_metric(&rec, "iterations", (double)st.iterations);
  bench_metric(&rec, "solve_s", st.solve_s);
  bench_metric(&rec, "apply_s", st.apply_s);
  bench_metric(&rec, "iteration_s", st.iterations > 0 ? st.solve_s / (double)st.iterations : 0.0);
  bench_metric(&rec, "dofs_per_s",
               st.solve_s > 0 ? (double)info.rows * (double)st.iterations / st.solve_s : 0.0);
  bench_metric(&rec, "rel_residual",
               st.initial_residual > 0 ? st.final_residual / st.initial_residual
                                       : st.final_residual);
  bench_metric(&rec, "l2_error", l2);
  bench_report_emit(rep, &rec);
done:
  free(u);
  free(full);
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* One problem: every kind asked for, the CSR peer first                     */

/* --cpu-peer: the same problem and kind on prm->cpu (its strategy AUTO:
 * the device's strategies need not exist there). */
static fea_status measure_on_cpu(const op_params *prm, const problem_id *id, int kind,
                                 op_result *r) {
  const bench_family fam = {family_name(id->space), id->dim, id->p};
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_status s = bench_make_space(prm->cpu, &fam, (fea_index)id->n, &mesh, &space);
  if (s == FEA_SUCCESS) s = bench_make_sine_problem(space, id->dim, &pb);
  if (s == FEA_SUCCESS)
    s = measure_operator(prm->cpu, pb, kind, FEA_UPDATE_AUTO, FEA_GEOMETRY_TERMS_AUTO, prm->reps, r,
                         NULL);
  if (fea_context_get_num_threads(prm->cpu, &r->threads) != FEA_SUCCESS) r->threads = 0;
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  return s;
}

typedef struct sweep_row {
  problem_id id;
  op_result r[NUM_KINDS];
} sweep_row;

static int run_problem(bench_report *rep, fea_context *ctx, const op_params *prm,
                       const problem_id *id, const int *kinds, int nkinds, const yardstick *y,
                       sweep_row *row) {
  const bench_family fam = {family_name(id->space), id->dim, id->p};
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_operator *keep = NULL;
  op_result *res = row->r;
  int rc = BENCH_OK;
  row->id = *id;
  for (int k = 0; k < NUM_KINDS; k++) res[k].measured = 0;
  fea_status s = bench_make_space(ctx, &fam, (fea_index)id->n, &mesh, &space);
  if (s == FEA_SUCCESS) s = bench_make_sine_problem(space, id->dim, &pb);
  if (s != FEA_SUCCESS) {
    rc = bench_fail("building the problem", s);
    goto done;
  }
  int want_csr = prm->csr;
  for (int j = 0; j < nkinds; j++) want_csr |= kinds[j] == FEA_OPERATOR_CSR;
  /* CSR first, destroyed before the matrix-free operators are made. */
  if (want_csr) {
    s = measure_operator(ctx, pb, FEA_OPERATOR_CSR, prm->strategy, FEA_GEOMETRY_TERMS_AUTO,
                         prm->reps, &res[FEA_OPERATOR_CSR], NULL);
    if (s == FEA_SUCCESS) /* the yardstick next to the figure; the run's if it fails */
      (void)bench_dgemm_peak(ctx, prm->gemm_n, 3, &res[FEA_OPERATOR_CSR].dgemm_gflops);
    if (s == FEA_ERR_OUT_OF_MEMORY) { /* the matrix does not fit: matrix-free still runs */
      snprintf(res[FEA_OPERATOR_CSR].why, sizeof res[0].why, "CSR out of memory: %s",
               fea_context_last_error(ctx));
      s = FEA_ERR_UNSUPPORTED;
    }
    if (s == FEA_ERR_UNSUPPORTED) {
      emit_skip(rep, ctx, id, FEA_OPERATOR_CSR, res[FEA_OPERATOR_CSR].why);
    } else if (s < 0) {
      rc = bench_fail("the CSR operator", s);
      goto done;
    }
  }
  for (int j = 0; j < nkinds && rc == BENCH_OK; j++) {
    int kind = kinds[j];
    if (kind != FEA_OPERATOR_CSR) {
      s = measure_operator(ctx, pb, kind, prm->strategy, FEA_GEOMETRY_TERMS_AUTO, prm->reps,
                           &res[kind], prm->cg ? &keep : NULL);
      if (s == FEA_SUCCESS) (void)bench_dgemm_peak(ctx, prm->gemm_n, 3, &res[kind].dgemm_gflops);
      if (s == FEA_ERR_UNSUPPORTED) {
        emit_skip(rep, ctx, id, kind, res[kind].why);
        continue;
      }
      if (s < 0) {
        rc = bench_fail(kind == FEA_OPERATOR_MATFREE_SUMFACT ? "the sum-factorization operator"
                                                             : "the element-matrix operator",
                        s);
        break;
      }
    } else if (!res[kind].measured) {
      continue;
    }
    if (kind == FEA_OPERATOR_MATFREE_SUMFACT && res[kind].measured && !prm->cpu)
      res[kind].kernel_gflops = bench_sumfact_kernel_gflops(pb);
    op_result cpu = {0};
    if (prm->cpu && res[kind].measured) {
      s = measure_on_cpu(prm, id, kind, &cpu);
      if (s < 0 && s != FEA_ERR_UNSUPPORTED) {
        rc = bench_fail("the operator on /cpu/threads (--cpu-peer)", s);
        break;
      }
    }
    rc = emit_result(rep, ctx, id, kind, prm->strategy, prm->reps, &res[kind],
                     &res[FEA_OPERATOR_CSR], &cpu, y);
    if (rc == BENCH_OK && prm->cg) {
      if (kind == FEA_OPERATOR_CSR) /* the CSR operator was not kept: make it again */
        s = measure_operator(ctx, pb, kind, prm->strategy, FEA_GEOMETRY_TERMS_AUTO, 1, &res[kind],
                             &keep);
      if (s < 0) {
        rc = bench_fail("the CSR operator", s);
        break;
      }
      fea_space_info si = FEA_SPACE_INFO_INIT;
      s = fea_space_get_info(space, &si);
      rc = s < 0 ? bench_fail("fea_space_get_info", s)
                 : run_cg(rep, ctx, pb, keep, id, si.num_dofs, kind, prm->rtol);
    }
    fea_operator_destroy(&keep);
  }
done:
  fea_operator_destroy(&keep);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* --mapped: the same degree on the box and on the thick quarter ring        */

/* B-splines of degree p, n elements per direction: on the box the 1D
 * factorization (AUTO) and the point kernel with stored terms; on the ring
 * (NURBS) the point kernel with stored and recomputed terms, element
 * matrices and CSR, each with its memory per DoF. */
static int run_mapped(bench_report *rep, fea_context *ctx, const op_params *prm, int dim, int p,
                      long long n, const yardstick *y) {
  static const struct {
    const char *domain;
    int kind, terms;
  } runs[] = {
      {"box", FEA_OPERATOR_MATFREE_SUMFACT, FEA_GEOMETRY_TERMS_AUTO},
      {"box", FEA_OPERATOR_MATFREE_SUMFACT, FEA_GEOMETRY_TERMS_STORED},
      {"ring", FEA_OPERATOR_CSR, FEA_GEOMETRY_TERMS_AUTO},
      {"ring", FEA_OPERATOR_MATFREE_SUMFACT, FEA_GEOMETRY_TERMS_AUTO},
      {"ring", FEA_OPERATOR_MATFREE_SUMFACT, FEA_GEOMETRY_TERMS_STORED},
      {"ring", FEA_OPERATOR_MATFREE_SUMFACT, FEA_GEOMETRY_TERMS_RECOMPUTED},
      {"ring", FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, FEA_GEOMETRY_TERMS_AUTO},
  };
  int rc = BENCH_OK;
  op_result csr = {0};
  double box_auto_s = 0; /* the box's AUTO time: the ring's AUTO row carries it */
  for (int d = 0; d < 2 && rc == BENCH_OK; d++) {
    const char *domain = d ? "ring" : "box";
    const problem_id id = {d ? "bspline-ring" : "bspline-box", dim, p, n};
    const bench_family fam = {"bspline", dim, p};
    fea_mesh *mesh = NULL;
    fea_space *space = NULL;
    fea_problem *pb = NULL;
    fea_status s = d ? bench_make_ring_space(ctx, dim, p, (fea_index)n, &space)
                     : bench_make_space(ctx, &fam, (fea_index)n, &mesh, &space);
    if (s == FEA_SUCCESS) s = bench_make_sine_problem(space, dim, &pb);
    if (s != FEA_SUCCESS) rc = bench_fail("building the problem", s);
    for (size_t r = 0; r < sizeof runs / sizeof *runs && rc == BENCH_OK; r++) {
      if (strcmp(runs[r].domain, domain) != 0) continue;
      if (runs[r].kind == FEA_OPERATOR_CSR && !prm->csr) continue;
      op_result res;
      s = measure_operator(ctx, pb, runs[r].kind, prm->strategy, runs[r].terms, prm->reps, &res,
                           NULL);
      res.domain = domain;
      if (s == FEA_ERR_UNSUPPORTED || s == FEA_ERR_OUT_OF_MEMORY) {
        emit_skip(rep, ctx, &id, runs[r].kind, res.why[0] ? res.why : fea_context_last_error(ctx));
        continue;
      }
      if (s < 0) {
        rc = bench_fail("an operator on the mapped problem", s);
        break;
      }
      (void)bench_dgemm_peak(ctx, prm->gemm_n, 3, &res.dgemm_gflops);
      if (runs[r].kind == FEA_OPERATOR_CSR) csr = res;
      if (runs[r].kind == FEA_OPERATOR_MATFREE_SUMFACT &&
          runs[r].terms == FEA_GEOMETRY_TERMS_AUTO) {
        if (d)
          res.box_apply_s = box_auto_s;
        else
          box_auto_s = res.apply_s;
      }
      rc = emit_result(rep, ctx, &id, runs[r].kind, prm->strategy, prm->reps, &res,
                       runs[r].kind == FEA_OPERATOR_CSR ? NULL : &csr, NULL, y);
    }
    fea_problem_destroy(&pb);
    fea_space_destroy(&space);
    fea_mesh_destroy(&mesh);
  }
  bench_report_note(rep,
                    "--mapped: B-splines p = %d, %lld elements per direction, on the box (sum "
                    "factorization AUTO = the Kronecker operator, and STORED = the point kernel) "
                    "and on the NURBS thick quarter ring / quarter annulus (AUTO = the mapped "
                    "Kronecker terms, STORED, RECOMPUTED geometry terms, element matrices; peer "
                    "csr on the ring, peer box = the box's AUTO, same rows); memory_per_dof = "
                    "what the operator keeps / rows",
                    p, n);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* --elasticity: linear elasticity, every kind against CSR in the same run   */

/* Degree p in dim dimensions, about `dofs` vector DoFs (dim per node): Q_p
 * on a structured mesh and B-splines on the box (sum factorization's box
 * way) and on the NURBS thick quarter ring (its stored point terms); E = 1,
 * nu = 0.3, every side clamped. Each matrix-free record carries the CSR
 * operator of its own problem as peer "csr", with memory per DoF. */
static int run_elastic(bench_report *rep, fea_context *ctx, const op_params *prm, int dim, int p,
                       const yardstick *y) {
  static const char *const spaces[] = {"lagrange", "bspline", "bspline-ring"};
  int rc = BENCH_OK;
  const long long dofs = default_dofs(prm, dim) / dim; /* nodes: dim DoFs each */
  for (int d = 0; d < 3 && rc == BENCH_OK; d++) {
    const int ring = d == 2;
    const char *scalar = ring ? "bspline" : spaces[d];
    const long long n = prm->n ? prm->n : n_for_dofs(scalar, dim, p, dofs);
    char label[32];
    snprintf(label, sizeof label, "elasticity-%s", spaces[d]);
    const problem_id id = {label, dim, p, n};
    const bench_family fam = {family_name(scalar), dim, p};
    fea_mesh *mesh = NULL;
    fea_space *space = NULL;
    fea_problem *pb = NULL;
    fea_status s = ring ? bench_make_ring_space(ctx, dim, p, (fea_index)n, &space)
                        : bench_make_space(ctx, &fam, (fea_index)n, &mesh, &space);
    if (s == FEA_SUCCESS) s = fea_space_set_num_components(space, dim);
    fea_elasticity_desc ed = FEA_ELASTICITY_DESC_INIT;
    if (s == FEA_SUCCESS) s = fea_problem_create_elasticity(space, &ed, &pb);
    if (s != FEA_SUCCESS) rc = bench_fail("building the elasticity problem", s);
    op_result csr = {0};
    for (int k = 0; k < NUM_KINDS && rc == BENCH_OK; k++) {
      if (k == FEA_OPERATOR_CSR ? !prm->csr : prm->kind >= 0 && prm->kind != k) continue;
      op_result res;
      s = measure_operator(ctx, pb, k, prm->strategy, FEA_GEOMETRY_TERMS_AUTO, prm->reps, &res,
                           NULL);
      if (s == FEA_ERR_UNSUPPORTED || s == FEA_ERR_OUT_OF_MEMORY) {
        emit_skip(rep, ctx, &id, k, res.why[0] ? res.why : fea_context_last_error(ctx));
        continue;
      }
      if (s < 0) {
        rc = bench_fail("an elasticity operator", s);
        break;
      }
      (void)bench_dgemm_peak(ctx, prm->gemm_n, 3, &res.dgemm_gflops);
      if (k == FEA_OPERATOR_CSR) csr = res;
      rc = emit_result(rep, ctx, &id, k, prm->strategy, prm->reps, &res,
                       k == FEA_OPERATOR_CSR ? NULL : &csr, NULL, y);
    }
    fea_problem_destroy(&pb);
    fea_space_destroy(&space);
    fea_mesh_destroy(&mesh);
  }
  bench_report_note(rep,
                    "--elasticity: %dD p = %d, E = 1, nu = 0.3, every side clamped, about %lld "
                    "vector DoFs: Q%d on a structured box mesh, B-splines on the box (sum "
                    "factorization's box way) and on the NURBS thick quarter ring (stored point "
                    "terms); peer csr = the CSR operator of the same problem; memory_per_dof = "
                    "what the operator keeps / rows",
                    dim, p, (long long)default_dofs(prm, dim), p);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* The crossover table of --sweep                                           */

static void print_crossover(bench_report *rep, const sweep_row *rows, int nrows, const int *kinds,
                            int nkinds, const yardstick *y) {
  bench_report_note(&rep[0],
                    "\ncrossover: DoF/s of one apply in millions (speed-up over CSR); "
                    "roof = fraction of the kernel's roofline bound");
  char line[512];
  int len = snprintf(line, sizeof line, "%-3s %-3s %-9s", "d", "p", "dofs");
  for (int j = 0; j < nkinds; j++)
    len += snprintf(line + len, sizeof line - (size_t)len, " %-24s", kind_names[kinds[j]]);
  bench_report_note(rep, "%s", line);
  for (int i = 0; i < nrows; i++) {
    const sweep_row *w = &rows[i];
    fea_index dofs = 0;
    for (int k = 0; k < NUM_KINDS; k++)
      if (w->r[k].measured) dofs = w->r[k].info.rows;
    len = snprintf(line, sizeof line, "%-3d %-3d %-9lld", w->id.dim, w->id.p, (long long)dofs);
    const op_result *c = &w->r[FEA_OPERATOR_CSR];
    for (int j = 0; j < nkinds; j++) {
      const op_result *r = &w->r[kinds[j]];
      char cell[64];
      if (!r->measured) {
        snprintf(cell, sizeof cell, "-");
      } else {
        double roof = roofline(r, y, NULL);
        char sp[24] = "";
        if (kinds[j] != FEA_OPERATOR_CSR && c->measured)
          snprintf(sp, sizeof sp, " (%.2fx)", c->apply_s / r->apply_s);
        snprintf(cell, sizeof cell, "%.1f%s roof %.0f%%", dofs_per_s(r) * 1e-6, sp,
                 isfinite(roof) && roof > 0 ? 100 * dofs_per_s(r) / roof : 0.0);
      }
      len += snprintf(line + len, sizeof line - (size_t)len, " %-24s", cell);
    }
    bench_report_note(rep, "%s", line);
  }
  /* Setup: the matrix-free operator against CSR assembly, per kind. */
  for (int j = 0; j < nkinds; j++) {
    if (kinds[j] == FEA_OPERATOR_CSR) continue;
    len = snprintf(line, sizeof line,
                   "setup speed-up over CSR assembly, %s:", kind_names[kinds[j]]);
    for (int i = 0; i < nrows; i++) {
      const op_result *r = &rows[i].r[kinds[j]], *c = &rows[i].r[FEA_OPERATOR_CSR];
      if (r->measured && c->measured && len < (int)sizeof line - 32)
        len += snprintf(line + len, sizeof line - (size_t)len, " %dD p%d %.3gx", rows[i].id.dim,
                        rows[i].id.p, c->setup_s / r->setup_s);
    }
    bench_report_note(rep, "%s", line);
  }
}

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

static int parse(int argc, char **argv, op_params *prm) {
  for (int i = 0; i < argc; i++) {
    const char *v;
    int got;
    if ((got = bench_option_value(argc, argv, &i, "--dim", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--dim", v, 2, 3, &prm->dim) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--p", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--p", v, 1, 8, &prm->p) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--n", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--n", v, 1, 100000, &prm->n) < 0)
        return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--dofs", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--dofs", v, 16, 1LL << 40, &prm->dofs) < 0)
        return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--gemm-n", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--gemm-n", v, 64, 1 << 14, &prm->gemm_n) < 0)
        return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--kind", &v)) != 0) {
      if (got < 0) return BENCH_USAGE;
      prm->kind = -1;
      for (int k = 0; k < NUM_KINDS; k++)
        if (strcmp(v, kind_names[k]) == 0) prm->kind = k;
      if (prm->kind < 0) {
        fprintf(
            stderr,
            "feaccel-bench: %s: --kind must be csr, matfree-elemmat or matfree-sumfact, not '%s'\n",
            CASE_NAME, v);
        return BENCH_USAGE;
      }
    } else if ((got = bench_option_value(argc, argv, &i, "--strategy", &v)) != 0) {
      if (got < 0) return BENCH_USAGE;
      prm->strategy = -1;
      for (int k = 0; fea_update_strategy_name((fea_update_strategy)k); k++)
        if (strcmp(v, fea_update_strategy_name((fea_update_strategy)k)) == 0) prm->strategy = k;
      if (prm->strategy < 0) {
        fprintf(stderr,
                "feaccel-bench: %s: unknown --strategy '%s' (serial, coloring, atomic-cas, "
                "mutex, private-buffers, tsx, auto)\n",
                CASE_NAME, v);
        return BENCH_USAGE;
      }
    } else if ((got = bench_option_value(argc, argv, &i, "--space", &v)) != 0) {
      if (got < 0) return BENCH_USAGE;
      if (strcmp(v, "lagrange") != 0 && strcmp(v, "bspline") != 0) {
        fprintf(stderr, "feaccel-bench: %s: --space must be lagrange or bspline, not '%s'\n",
                CASE_NAME, v);
        return BENCH_USAGE;
      }
      prm->space = v;
    } else if ((got = bench_option_value(argc, argv, &i, "--rtol", &v)) != 0) {
      char *end;
      if (got < 0) return BENCH_USAGE;
      prm->rtol = strtod(v, &end);
      if (*end || !(prm->rtol > 0 && prm->rtol < 1)) {
        fprintf(stderr, "feaccel-bench: %s: --rtol must be a number in (0, 1), not '%s'\n",
                CASE_NAME, v);
        return BENCH_USAGE;
      }
    } else if (strcmp(argv[i], "--sweep") == 0) {
      prm->sweep = 1;
    } else if (strcmp(argv[i], "--mapped") == 0) {
      prm->mapped = 1;
    } else if (strcmp(argv[i], "--elasticity") == 0) {
      prm->elasticity = 1;
    } else if (strcmp(argv[i], "--cg") == 0) {
      prm->cg = 1;
    } else if (strcmp(argv[i], "--cpu-peer") == 0) {
      prm->cpu_peer = 1;
    } else if (strcmp(argv[i], "--no-csr") == 0) {
      prm->csr = 0;
    } else {
      fprintf(stderr, "feaccel-bench: %s: unknown option '%s'\n", CASE_NAME, argv[i]);
      return BENCH_USAGE;
    }
  }
  if (prm->elasticity && (prm->sweep || prm->mapped || prm->cg)) {
    fprintf(stderr, "feaccel-bench: %s: --elasticity takes no --sweep, --mapped or --cg\n",
            CASE_NAME);
    return BENCH_USAGE;
  }
  if (prm->sweep && (prm->dim || prm->p || prm->n || prm->cg)) {
    fprintf(stderr,
            "feaccel-bench: %s: --sweep sets d, p and n itself (size: --dofs); it takes "
            "no --dim, --p, --n or --cg\n",
            CASE_NAME);
    return BENCH_USAGE;
  }
  return BENCH_OK;
}

static int run(const bench_options *o, int argc, char **argv) {
  op_params prm = {.dim = 0,
                   .p = 0,
                   .n = 0,
                   .kind = -1,
                   .strategy = FEA_UPDATE_AUTO,
                   .space = "lagrange",
                   .sweep = 0,
                   .cg = 0,
                   .csr = 1,
                   .dofs = 0,
                   .gemm_n = 2048,
                   .stream_n = 20000000,
                   .rtol = 1e-10,
                   .reps = o->reps};
  int rc = parse(argc, argv, &prm);
  if (rc != BENCH_OK) return rc;

  fea_context *ctx = NULL;
  rc = bench_open_context(o, "/cpu/threads", &ctx);
  if (rc != BENCH_OK) return rc;
  fea_status s;
  yardstick y = {0, 0, 1, 0, ""};
  if (fea_context_get_num_threads(ctx, &y.threads) != FEA_SUCCESS || y.threads < 1) y.threads = 1;
  s = bench_dgemm_peak(ctx, prm.gemm_n, 3, &y.dgemm_gflops);
  if (s < 0) {
    rc = bench_fail("the DGEMM yardstick (fea_dense_gemm)", s);
    fea_context_destroy(&ctx);
    return rc;
  }
  /* On a GPU the bytes move through device memory: its bandwidth binds. */
  fea_context_info cinfo = FEA_CONTEXT_INFO_INIT;
  int gpu = fea_context_get_info(ctx, &cinfo) == FEA_SUCCESS &&
            strncmp(cinfo.backend, "/gpu/", 5) == 0;
  y.stream_gbs = gpu ? bench_device_axpy(ctx, prm.stream_n, 5)
                     : bench_stream_triad(prm.stream_n, y.threads, 5);
  y.fma_gflops = bench_fma_peak_gflops(&y.fma_isa);
  if (prm.cpu_peer && !gpu) {
    fprintf(stderr,
            "feaccel-bench: %s: --cpu-peer compares a device backend with the CPU; "
            "the backend is %s\n",
            CASE_NAME, cinfo.backend);
    fea_context_destroy(&ctx);
    return BENCH_USAGE;
  }
  if (prm.cpu_peer) {
    fea_status cs = fea_context_create("/cpu/threads", &prm.cpu);
    if (cs == FEA_SUCCESS && o->threads > 0) cs = fea_context_set_num_threads(prm.cpu, o->threads);
    if (cs < 0) {
      rc = bench_fail("the --cpu-peer context /cpu/threads", cs);
      fea_context_destroy(&prm.cpu);
      fea_context_destroy(&ctx);
      return rc;
    }
  }

  bench_report rep;
  bench_report_init(&rep, o);
  int kinds[NUM_KINDS], nkinds = 0;
  if (prm.kind >= 0) {
    kinds[nkinds++] = prm.kind;
  } else if (prm.sweep) {
    for (int k = 0; k < NUM_KINDS; k++) kinds[nkinds++] = k;
  } else {
    kinds[nkinds++] = FEA_OPERATOR_MATFREE_SUMFACT;
  }
  if (prm.elasticity) {
    rc = run_elastic(&rep, ctx, &prm, prm.dim ? (int)prm.dim : 3, prm.p ? (int)prm.p : 2, &y);
  } else if (prm.mapped) {
    int dim = prm.dim ? (int)prm.dim : 3, p = prm.p ? (int)prm.p : 2;
    rc = run_mapped(&rep, ctx, &prm, dim, p,
                    prm.n ? prm.n : n_for_dofs("bspline", dim, p, default_dofs(&prm, dim)), &y);
  } else if (prm.sweep) {
    sweep_row rows[8];
    int nrows = 0;
    int kinds_all[NUM_KINDS + 1], nall = 0; /* the table always shows CSR */
    kinds_all[nall++] = FEA_OPERATOR_CSR;
    for (int j = 0; j < nkinds; j++)
      if (kinds[j] != FEA_OPERATOR_CSR) kinds_all[nall++] = kinds[j];
    for (int dim = 2; dim <= 3 && rc == BENCH_OK; dim++)
      for (int p = 1; p <= 4 && rc == BENCH_OK; p++) {
        problem_id id = {prm.space, dim, p, n_for_dofs(prm.space, dim, p, default_dofs(&prm, dim))};
        rc = run_problem(&rep, ctx, &prm, &id, kinds, nkinds, &y, &rows[nrows]);
        if (rc == BENCH_OK) nrows++;
      }
    if (nrows > 0) print_crossover(&rep, rows, nrows, kinds_all, nall, &y);
  } else {
    int dim = prm.dim ? (int)prm.dim : 3, p = prm.p ? (int)prm.p : 2;
    problem_id id = {prm.space, dim, p,
                     prm.n ? prm.n : n_for_dofs(prm.space, dim, p, default_dofs(&prm, dim))};
    sweep_row row;
    rc = run_problem(&rep, ctx, &prm, &id, kinds, nkinds, &y, &row);
  }
  bench_report_note(&rep,
                    "\nsame run, %d thread%s: DGEMM (order %lld, fea_dense_gemm) %.1f GFLOP/s "
                    "at the start, and again right after each operator's timing (its record's "
                    "dgemm_gflops, the one its roofline uses); %s %.1f GB/s",
                    y.threads, y.threads > 1 ? "s" : "", prm.gemm_n, y.dgemm_gflops,
                    gpu ? "device axpy bandwidth" : "STREAM triad", y.stream_gbs);
  if (y.fma_gflops > 0)
    bench_report_note(&rep,
                      "one core: %s FMA throughput %.1f GFLOP/s (DGEMM per thread above: "
                      "%.1f); kernel_gflops: the sum-factorization batch kernel alone on one core, "
                      "one batch in cache",
                      y.fma_isa, y.fma_gflops, y.dgemm_gflops / y.threads);
  bench_report_note(&rep,
                    "time_s: median over %d samples of one apply (a sample repeats the apply "
                    "to last >= %.2f s, after one warm-up); dofs_per_s = rows / time_s;",
                    prm.reps, SAMPLE_MIN_S);
  bench_report_note(&rep,
                    "gflops and gbytes_per_s from the operator's own flops and bytes per "
                    "apply (CSR: 12 B per nonzero plus the vectors); roofline_dofs_per_s = "
                    "min(dgemm / flops_per_dof, stream / bytes_per_dof);");
  bench_report_note(&rep,
                    "setup_s: wall time of fea_operator_create (CSR: pattern and assembly); "
                    "peer csr: the CSR operator on the same problem, ratio = our time / its time, "
                    "speedup = its time / ours.");
  if (prm.cpu)
    bench_report_note(&rep,
                      "peer cpu: the same kind on /cpu/threads (strategy auto) in this run, "
                      "speedup = its time / the device's.");
  fea_context_destroy(&prm.cpu);
  fea_context_destroy(&ctx);
  return rc;
}

const bench_case bench_case_operator = {
    .name = CASE_NAME,
    .description =
        "operator apply: CSR SpMV vs matrix-free (element matrix, sum factorization), "
        "roofline, PCG",
    .usage =
        "options:\n"
        "  --dim D          2 or 3 (default 3)\n"
        "  --p P            polynomial degree 1..8 (default 2)\n"
        "  --n N            elements per direction (default: about 1M DoFs in 2D, 0.5M in 3D)\n"
        "  --kind K         csr, matfree-elemmat or matfree-sumfact (default matfree-sumfact; --sweep: all)\n"
        "  --strategy S     update strategy of the scatter: serial, coloring, atomic-cas, mutex,\n"
        "                   private-buffers, tsx, auto (default auto)\n"
        "  --space S        lagrange (Q_p on a structured mesh, default) or bspline\n"
        "  --sweep          p = 1..4 in 2D and 3D at a fixed DoF count: the crossover table\n"
        "  --dofs M         DoFs of the default size and of the sweep's problems\n"
        "                   (default 1048576 in 2D, 524288 in 3D)\n"
        "  --mapped         B-splines of --dim and --p on the box and on the NURBS thick quarter\n"
        "                   ring: the 1D factorization against the point kernel with stored and\n"
        "                   recomputed geometry terms, element matrices and CSR, memory per DoF\n"
        "  --elasticity     linear elasticity of --dim and --p (dim components) instead of\n"
        "                   Poisson: Q_p, B-spline box and NURBS ring, every kind (or --kind)\n"
        "                   against CSR, memory per DoF (--dofs: vector DoFs)\n"
        "  --cg             also solve with Jacobi PCG: iterations, time, DoF/s, L2 error\n"
        "  --rtol R         relative tolerance of --cg (default 1e-10)\n"
        "  --no-csr         skip the CSR peer (problems whose matrix does not fit)\n"
        "  --cpu-peer       with a device backend: the same kind on /cpu/threads (--threads, else\n"
        "                   every core) in the same run, peer \"cpu\"\n"
        "  --gemm-n G       order of the same-run DGEMM yardstick (default 2048)\n"
        "Default backend /cpu/threads. Every run also measures the CSR operator on the same\n"
        "problem, a DGEMM and a STREAM triad on the same threads.\n",
    .run = run,
};
