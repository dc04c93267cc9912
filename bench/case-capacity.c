/* The `capacity` case: how large a problem each operator kind can run within
 * one memory budget -- "matrix-free runs problems 10x larger than CSR fits in
 * the same memory" measured, not estimated from the operator's own bytes.
 *
 * Every measurement runs in a child process that builds everything a user
 * needs for one operator application -- mesh, space, problem, operator, the
 * vectors x and y -- applies the operator once and reports its peak resident
 * memory (VmHWM) above the memory it started with. The parent never creates
 * a context (no OpenMP or BLAS threads exist when it forks). Per kind: two
 * small runs fit bytes = a + b * DoFs, the largest size the budget admits is
 * predicted from the fit and then run; a run that fits is refitted and the
 * size grows while more fits, a run over the budget shrinks it
 * (find_capacity). The record reports the largest DoF
 * count that ran within the budget per kind, its measured peak, bytes per
 * DoF, the apply time there, and the ratio matrix-free / CSR. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <feaccel/operator.h>

#include "discretization.h"
#include "report.h"
#include "timing.h"

#define CASE_NAME "capacity"

typedef struct cap_params {
  long long dim, p, budget_mb;
  const char *space; /* "lagrange" or "bspline" */
} cap_params;

/* What one child run measured. */
typedef struct cap_run {
  int ok;
  long long n, dofs;
  double peak_bytes, apply_s;
  char why[200];
} cap_run;

/* Resident memory fields of /proc/self/status in bytes (VmRSS or VmHWM). */
static double proc_status_bytes(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  double kb = -1;
  const size_t len = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, len) == 0 && line[len] == ':') {
      kb = strtod(line + len + 1, NULL);
      break;
    }
  fclose(f);
  return kb < 0 ? -1 : kb * 1024.0;
}

/* In the child: build, apply once, measure. */
static void child_measure(const bench_options *opts, const cap_params *prm, int kind, long long n,
                          cap_run *out) {
  memset(out, 0, sizeof *out);
  out->n = n;
  const double base = proc_status_bytes("VmRSS");
  fea_context *ctx = NULL;
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_operator *op = NULL;
  fea_vector *x = NULL, *y = NULL;
  const bench_family fam = {strcmp(prm->space, "bspline") == 0 ? "bspline" : "Q", (int)prm->dim,
                            (int)prm->p};
  fea_status s = bench_open_context(opts, "/cpu/threads", &ctx) == BENCH_OK ? FEA_SUCCESS
                                                                            : FEA_ERR_BACKEND;
  if (s == FEA_SUCCESS) s = bench_make_space(ctx, &fam, (fea_index)n, &mesh, &space);
  if (s == FEA_SUCCESS) s = bench_make_sine_problem(space, fam.dim, &pb);
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = (fea_operator_kind)kind;
  if (s == FEA_SUCCESS) s = fea_operator_create(ctx, pb, &d, &op);
  fea_index rows = 0;
  if (s == FEA_SUCCESS) {
    fea_operator_info info = FEA_OPERATOR_INFO_INIT;
    s = fea_operator_get_info(op, &info);
    rows = info.rows;
  }
  /* What an application needs is there; the problem description is not. */
  if (s == FEA_SUCCESS) s = fea_vector_create(ctx, rows, FEA_F64, &x);
  if (s == FEA_SUCCESS) s = fea_vector_create(ctx, rows, FEA_F64, &y);
  if (s == FEA_SUCCESS) s = fea_vector_set_all(x, 1.0);
  if (s == FEA_SUCCESS) {
    double t0 = bench_now();
    s = fea_operator_apply(op, x, y);
    out->apply_s = bench_now() - t0;
  }
  if (s == FEA_SUCCESS) {
    out->ok = 1;
    out->dofs = rows;
    out->peak_bytes = proc_status_bytes("VmHWM") - base;
  } else {
    snprintf(out->why, sizeof out->why, "%s", fea_context_last_error(ctx));
  }
  fea_vector_destroy(&x);
  fea_vector_destroy(&y);
  fea_operator_destroy(&op);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
}

/* One measurement in a fresh process (its peak memory is its own). */
static int run_child(const bench_options *opts, const cap_params *prm, int kind, long long n,
                     cap_run *out) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    close(fd[0]);
    cap_run r;
    child_measure(opts, prm, kind, n, &r);
    ssize_t w = write(fd[1], &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fd[1]);
  memset(out, 0, sizeof *out);
  ssize_t got = read(fd[0], out, sizeof *out);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != (ssize_t)sizeof *out) {
    snprintf(out->why, sizeof out->why, "the child for n = %lld died (status %d; out of memory?)",
             n, status);
    out->ok = 0;
  }
  return 0;
}

/* The n at which the line through two runs' (DoFs, peak bytes) reaches the
 * budget; `fallback` where the line does not rise. DoFs ~ (p n)^dim for
 * Q_p, (n + p)^dim for B-splines. */
static long long predict_n(const cap_params *prm, double budget, const cap_run *u, const cap_run *v,
                           long long fallback) {
  if (v->dofs == u->dofs) return fallback;
  const double per_dof = (v->peak_bytes - u->peak_bytes) / (double)(v->dofs - u->dofs);
  const double fixed = v->peak_bytes - per_dof * (double)v->dofs;
  const double dofs_max = (budget - fixed) / per_dof;
  const double side = pow(dofs_max, 1.0 / (double)prm->dim);
  if (!(per_dof > 0 && dofs_max > 1 && isfinite(side))) return fallback;
  return strcmp(prm->space, "bspline") == 0 ? (long long)floor(side) - prm->p
                                            : (long long)floor(side / (double)prm->p);
}

/* Largest n whose run stays within the budget: fit, predict, verify. The
 * first prediction extrapolates from two small runs, whose cost per DoF is
 * not the large runs' (3D Q2 sum factorization: it stopped at 1.54 of 2
 * GiB, CSR at 2.14); so a run that fits is refitted with the larger small
 * run and the size grows while the new line says more fits, and a run over
 * the budget shrinks the size by 5 %, or halfway back to the largest that
 * fitted. */
static int find_capacity(const bench_options *opts, const cap_params *prm, int kind,
                         cap_run *best) {
  const double budget = (double)prm->budget_mb * 1048576.0;
  const long long n_a = prm->dim == 3 ? 8 : 64, n_b = 2 * n_a;
  cap_run a, b;
  if (run_child(opts, prm, kind, n_a, &a) || run_child(opts, prm, kind, n_b, &b)) return -1;
  if (!a.ok || !b.ok) {
    *best = a.ok ? b : a;
    return 0;
  }
  /* a noisy fit (no growth per DoF) keeps the calibration size */
  long long n = predict_n(prm, budget, &a, &b, n_b), over = 0; /* over: smallest n too large */
  if (n < n_b) n = n_b;
  cap_run fit;
  int have = 0;
  for (int tries = 0; tries < 10 && n >= 1; tries++) {
    cap_run r;
    if (run_child(opts, prm, kind, n, &r)) return -1;
    long long next;
    if (r.ok && r.peak_bytes <= budget) {
      if (!have || r.dofs > fit.dofs) fit = r;
      have = 1;
      next = predict_n(prm, budget, &b, &r, n);
      if (over && next >= over) next = n + (over - n) / 2;
      if (next <= n) break;
    } else {
      over = n;
      next = (long long)floor((double)n * 0.95);
      if (have && next <= fit.n) next = fit.n + (n - fit.n) / 2;
      if (have && next <= fit.n) break;
    }
    n = next;
  }
  if (have) {
    *best = fit;
    return 0;
  }
  *best = b;
  snprintf(best->why, sizeof best->why, "no size near the prediction fits the budget");
  best->ok = 0;
  return 0;
}

static void usage_options(FILE *f) {
  fputs(
      "  --dim D         2 or 3 (default 3)\n"
      "  --p P           degree 1..8 (default 2)\n"
      "  --space S       lagrange (Q_p, default) or bspline\n"
      "  --budget-mb M   the memory both kinds get, in MiB (default 2048)\n",
      f);
}

static int run(const bench_options *opts, int argc, char **argv) {
  cap_params prm = {3, 2, 2048, "lagrange"};
  for (int i = 0; i < argc; i++) {
    const char *v = NULL;
    long long ll;
    int m;
    if (strcmp(argv[i], "--help") == 0) {
      usage_options(stdout);
      return BENCH_OK;
    }
    if ((m = bench_option_value(argc, argv, &i, "--dim", &v)) != 0) {
      if (m < 0 || bench_parse_ll(CASE_NAME, "--dim", v, 2, 3, &ll) < 0) return BENCH_USAGE;
      prm.dim = ll;
    } else if ((m = bench_option_value(argc, argv, &i, "--p", &v)) != 0) {
      if (m < 0 || bench_parse_ll(CASE_NAME, "--p", v, 1, 8, &ll) < 0) return BENCH_USAGE;
      prm.p = ll;
    } else if ((m = bench_option_value(argc, argv, &i, "--budget-mb", &v)) != 0) {
      if (m < 0 || bench_parse_ll(CASE_NAME, "--budget-mb", v, 64, 1 << 20, &ll) < 0)
        return BENCH_USAGE;
      prm.budget_mb = ll;
    } else if ((m = bench_option_value(argc, argv, &i, "--space", &v)) != 0) {
      if (m < 0 || (strcmp(v, "lagrange") != 0 && strcmp(v, "bspline") != 0)) {
        fprintf(stderr, "feaccel-bench: %s: --space is lagrange or bspline\n", CASE_NAME);
        return BENCH_USAGE;
      }
      prm.space = v;
    } else {
      fprintf(stderr, "feaccel-bench: %s: unknown option '%s'\n", CASE_NAME, argv[i]);
      return BENCH_USAGE;
    }
  }
  cap_run csr, matfree;
  if (find_capacity(opts, &prm, FEA_OPERATOR_CSR, &csr) ||
      find_capacity(opts, &prm, FEA_OPERATOR_MATFREE_SUMFACT, &matfree)) {
    fprintf(stderr, "feaccel-bench: %s: fork or pipe failed\n", CASE_NAME);
    return BENCH_FAILED;
  }
  bench_report rep;
  bench_report_init(&rep, opts);
  /* The machine facts come from a context of the parent's own child-free
   * moment: open one only now, after every fork. */
  fea_context *ctx = NULL;
  int rc = bench_open_context(opts, "/cpu/threads", &ctx);
  if (rc != BENCH_OK) return rc;
  bench_record rec;
  fea_status s = bench_record_init(&rec, CASE_NAME, ctx);
  if (s < 0) {
    fea_context_destroy(&ctx);
    return bench_fail("bench_record_init", s);
  }
  bench_param_str(&rec, "space", prm.space);
  bench_param_int(&rec, "dim", prm.dim);
  bench_param_int(&rec, "p", prm.p);
  bench_param_int(&rec, "budget_mb", prm.budget_mb);
  bench_param_str(&rec, "kind", "matfree-sumfact");
  if (matfree.ok) {
    bench_metric(&rec, "dofs", (double)matfree.dofs);
    bench_metric(&rec, "peak_bytes", matfree.peak_bytes);
    bench_metric(&rec, "bytes_per_dof", matfree.peak_bytes / (double)matfree.dofs);
    bench_metric(&rec, "apply_s", matfree.apply_s);
  }
  int k = bench_peer(&rec, "csr");
  if (csr.ok) {
    bench_peer_metric(&rec, k, "dofs", (double)csr.dofs);
    bench_peer_metric(&rec, k, "peak_bytes", csr.peak_bytes);
    bench_peer_metric(&rec, k, "bytes_per_dof", csr.peak_bytes / (double)csr.dofs);
    bench_peer_metric(&rec, k, "apply_s", csr.apply_s);
    if (matfree.ok)
      bench_peer_metric(&rec, k, "ratio_dofs", (double)matfree.dofs / (double)csr.dofs);
  }
  bench_report_emit(&rep, &rec);
  if (!csr.ok) bench_report_note(&rep, "csr: %s", csr.why);
  if (!matfree.ok) bench_report_note(&rep, "matfree-sumfact: %s", matfree.why);
  bench_report_note(&rep,
                    "peak_bytes: VmHWM of a fresh process above its start, with mesh, "
                    "space, problem, operator, x and y built and one apply done");
  fea_context_destroy(&ctx);
  return BENCH_OK;
}

const bench_case bench_case_capacity = {
    "capacity",
    "largest problem per operator kind within one memory budget (measured peak RSS)",
    "[--dim D] [--p P] [--space lagrange|bspline] [--budget-mb M]",
    run,
};
