/* The `progress` case: how long the library leaves the progress callback
 * without a call during its longest setups (docs/backends.md, "Progress and
 * cancelling"): the prehandled setup at h = 1/512 (h0 = 1/16, FP64) and the
 * multifrontal setup of the 2D p = 3 B-spline problem with 1,048,576
 * unknowns. The callback is installed with interval 0, so every report the
 * library makes is timed; the figure is the longest gap between two calls,
 * counting from the setup's start to the first call and from the last call
 * to the setup's return. */
#include <stdio.h>
#include <string.h>

#include <feaccel.h>
#include <feaccel/solver.h>

#include "discretization.h"
#include "progress.h"
#include "report.h"
#include "timing.h"

#define CASE_NAME "progress"

static int usage_error(const char *msg, const char *arg) {
  fprintf(stderr, "feaccel-bench: %s: %s%s%s\n", CASE_NAME, msg, arg ? " " : "", arg ? arg : "");
  return BENCH_USAGE;
}

/* One timed setup of sv on ctx, reported as a record. */
static int measure(bench_report *rep, fea_context *ctx, fea_solver *sv, const char *what,
                   long long n, long long dofs) {
  bench_progress_watch w;
  bench_progress_watch_begin(&w, ctx);
  const double t0 = bench_now();
  fea_status st = fea_solver_setup(sv);
  const double setup_s = bench_now() - t0;
  bench_progress_watch_end(&w, ctx);
  if (st < 0) return bench_fail("fea_solver_setup", st);
  bench_record r;
  (void)bench_record_init(&r, CASE_NAME, ctx);
  bench_param_str(&r, "setup", what);
  bench_param_int(&r, "n", n);
  bench_param_int(&r, "dofs", dofs);
  bench_param_str(&r, "longest_after", w.longest_after);
  bench_param_str(&r, "longest_before", w.longest_before);
  bench_metric(&r, "setup_s", setup_s);
  bench_metric(&r, "calls", (double)w.calls);
  bench_metric(&r, "longest_gap_s", w.longest);
  bench_metric(&r, "longest_gap_cpu_s", w.longest_cpu);
  bench_metric(&r, "longest_from", w.longest_from);
  bench_metric(&r, "longest_to", w.longest_to);
  bench_report_emit(rep, &r);
  return BENCH_OK;
}

static int run_prehandled(bench_report *rep, fea_context *ctx, long long n, long long n0) {
  bench_family f = {"Q", 2, 1};
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_solver *sv = NULL;
  fea_index nf = 0;
  fea_prehandled_desc d = FEA_PREHANDLED_DESC_INIT;
  d.coarse_cells = (fea_index)n0;
  d.precision = FEA_F64;
  fea_status st = bench_make_space(ctx, &f, (fea_index)n, &mesh, &space);
  if (st == FEA_SUCCESS) st = bench_make_sine_problem(space, 2, &pb);
  if (st == FEA_SUCCESS) st = fea_problem_get_num_free_dofs(pb, &nf);
  if (st == FEA_SUCCESS) st = fea_solver_create_prehandled(ctx, pb, &d, &sv);
  int rc = st == FEA_SUCCESS ? measure(rep, ctx, sv, "prehandled", n, nf)
                             : bench_fail("the prehandled solver", st);
  fea_solver_destroy(&sv);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  return rc;
}

static int run_multifrontal(bench_report *rep, fea_context *ctx, long long n, long long p) {
  bench_family f = {"bspline", 2, (int)p};
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_solver *sv = NULL;
  fea_index nf = 0;
  fea_status st = bench_make_space(ctx, &f, (fea_index)n, &mesh, &space);
  if (st == FEA_SUCCESS) st = bench_make_sine_problem(space, 2, &pb);
  if (st == FEA_SUCCESS) st = fea_problem_get_num_free_dofs(pb, &nf);
  if (st == FEA_SUCCESS) st = fea_solver_create_multifrontal(ctx, space, pb, NULL, &sv);
  int rc = st == FEA_SUCCESS ? measure(rep, ctx, sv, "multifrontal", n, nf)
                             : bench_fail("the multifrontal solver", st);
  fea_solver_destroy(&sv);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  return rc;
}

static int run(const bench_options *opts, int argc, char **argv) {
  long long n = 512, n0 = 16, mf_n = 1021, p = 3;
  const char *what = "all";
  for (int i = 0; i < argc; i++) {
    const char *v;
    int got;
    if ((got = bench_option_value(argc, argv, &i, "--setup", &v)) != 0) {
      if (got < 0) return BENCH_USAGE;
      if (strcmp(v, "all") && strcmp(v, "prehandled") && strcmp(v, "multifrontal"))
        return usage_error("--setup must be all, prehandled or multifrontal, not", v);
      what = v;
    } else if ((got = bench_option_value(argc, argv, &i, "--n", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--n", v, 4, 4096, &n) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--n0", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--n0", v, 1, 4096, &n0) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--mf-n", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--mf-n", v, 1, 100000, &mf_n) < 0)
        return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--p", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--p", v, 1, 8, &p) < 0) return BENCH_USAGE;
    } else {
      return usage_error("unknown option", argv[i]);
    }
  }
  fea_context *ctx = NULL;
  int rc = bench_open_context(opts, "/cpu/threads", &ctx);
  if (rc != BENCH_OK) return rc;
  bench_report rep;
  bench_report_init(&rep, opts);
  if (strcmp(what, "multifrontal") != 0) rc = run_prehandled(&rep, ctx, n, n0);
  if (rc == BENCH_OK && strcmp(what, "prehandled") != 0) rc = run_multifrontal(&rep, ctx, mf_n, p);
  if (rc == BENCH_OK)
    bench_report_note(&rep,
                      "\nlongest_gap_s: the longest time without a progress call during the "
                      "setup, from its start to its return (the callback takes every report); "
                      "longest_gap_cpu_s: the same in the calling thread's CPU time, without "
                      "what other processes took of the core");
  fea_context_destroy(&ctx);
  return rc;
}

const bench_case bench_case_progress = {
    .name = CASE_NAME,
    .description = "longest time between progress calls in the prehandled and multifrontal setups",
    .usage =
        "options:\n"
        "  --setup all|prehandled|multifrontal  which setups (default all)\n"
        "  --n N           prehandled: cells per direction, h = 1/N (default 512)\n"
        "  --n0 N0         prehandled: macro cells per direction (default 16)\n"
        "  --mf-n N        multifrontal: elements per direction of the 2D B-spline space\n"
        "                  (default 1021: 1,048,576 unknowns at p = 3)\n"
        "  --p P           multifrontal: degree (default 3)\n",
    .run = run,
};
