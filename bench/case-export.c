/* The `export` case: write the reference system of the manufactured Poisson
 * problem (boundary DoFs eliminated) as Matrix Market files A.mtx and b.mtx,
 * so that other tools can solve the very system libfeaccel solves. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "discretization.h"
#include "report.h"
#include "timing.h"

#define CASE_NAME "export"

static int usage_error(const char *msg, const char *arg) {
  fprintf(stderr, "feaccel-bench: %s: %s%s%s\n", CASE_NAME, msg, arg ? " " : "", arg ? arg : "");
  return BENCH_USAGE;
}

static int run(const bench_options *opts, int argc, char **argv) {
  long long dim = 2, p = 2, n = 8;
  const char *space_kind = "bspline", *outdir = NULL;
  for (int i = 0; i < argc; i++) {
    const char *v;
    int got;
    if ((got = bench_option_value(argc, argv, &i, "--dim", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--dim", v, 1, 3, &dim) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--p", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--p", v, 1, 8, &p) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--n", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--n", v, 1, 1000000, &n) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--space", &v)) != 0) {
      if (got < 0) return BENCH_USAGE;
      if (strcmp(v, "bspline") && strcmp(v, "lagrange"))
        return usage_error("--space must be bspline or lagrange, not", v);
      space_kind = v;
    } else if ((got = bench_option_value(argc, argv, &i, "--out", &v)) != 0) {
      if (got < 0) return BENCH_USAGE;
      outdir = v;
    } else {
      return usage_error("unknown option", argv[i]);
    }
  }
  if (!outdir) return usage_error("--out DIR is required", NULL);
  if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "feaccel-bench: %s: cannot create %s: %s\n", CASE_NAME, outdir,
            strerror(errno));
    return BENCH_FAILED;
  }
  bench_family f = {strcmp(space_kind, "bspline") == 0 ? "bspline" : "Q", (int)dim, (int)p};
  fea_context *ctx = NULL;
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_matrix *A = NULL;
  double *b = NULL;
  int rc = BENCH_OK;
  fea_status st = fea_context_create(opts->backend ? opts->backend : "/cpu/ref", &ctx);
  if (st == FEA_SUCCESS) st = bench_make_space(ctx, &f, n, &mesh, &space);
  if (st == FEA_SUCCESS) st = bench_make_sine_problem(space, (int)dim, &pb);
  fea_index nf = 0, nnz = 0;
  if (st == FEA_SUCCESS) st = fea_problem_get_num_free_dofs(pb, &nf);
  double t0 = bench_now(), assemble_s = 0;
  if (st == FEA_SUCCESS) {
    b = malloc((size_t)nf * sizeof *b + 1);
    st = fea_problem_assemble_reference(pb, b, &A);
    assemble_s = bench_now() - t0;
  }
  char path[4096];
  if (st == FEA_SUCCESS) {
    snprintf(path, sizeof path, "%s/A.mtx", outdir);
    st = fea_matrix_write_mtx(A, path);
  }
  if (st == FEA_SUCCESS) {
    snprintf(path, sizeof path, "%s/b.mtx", outdir);
    st = fea_array_write_mtx(ctx, nf, b, path);
  }
  if (st == FEA_SUCCESS) st = fea_matrix_get_size(A, NULL, NULL, &nnz);
  if (st != FEA_SUCCESS) {
    rc = bench_fail("exporting the reference system", st);
  } else {
    bench_report rep;
    bench_report_init(&rep, opts);
    bench_record r;
    (void)bench_record_init(&r, CASE_NAME, ctx);
    bench_param_str(&r, "space", space_kind);
    bench_param_int(&r, "dim", dim);
    bench_param_int(&r, "p", p);
    bench_param_int(&r, "n", n);
    bench_param_int(&r, "dofs", nf);
    bench_param_str(&r, "out", outdir);
    bench_metric(&r, "nnz", (double)nnz);
    bench_metric(&r, "assemble_s", assemble_s);
    bench_report_emit(&rep, &r);
    bench_report_note(&rep,
                      "\nwrote %s/A.mtx and %s/b.mtx: -Laplace u = f for u = prod sin(pi x_i) "
                      "on the unit box, boundary DoFs eliminated (u = 0 there)",
                      outdir, outdir);
  }
  free(b);
  fea_matrix_destroy(&A);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
  return rc;
}

const bench_case bench_case_export = {
    .name = CASE_NAME,
    .description = "write the reference system A.mtx, b.mtx of the manufactured Poisson problem",
    .usage =
        "options:\n  --dim D                 1, 2 or 3 (default 2)\n"
        "  --space bspline|lagrange  B-splines or Q_p Lagrange (default bspline)\n"
        "  --p P                   degree (default 2)\n"
        "  --n N                   elements per direction (default 8)\n"
        "  --out DIR               where A.mtx and b.mtx go (created if missing)\n",
    .run = run,
};
