/* The `assembly` case: concurrent CSR assembly of the Poisson system per
 * update strategy and thread count (1..the processors), on a 2D Q1 and a 3D
 * Q2 mesh by default. Per record: assembly time (median, the whole
 * fea_problem_assemble call into a reused pattern), speed-up over SERIAL,
 * updates per second, and the bytes the updates write per second (8 per
 * update) as a fraction of a STREAM triad measured in the same run on the
 * same thread count. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discretization.h"
#include "report.h"
#include "stream.h"
#include "timing.h"

#define CASE_NAME "assembly"

typedef struct mesh_case {
  int dim, p;
  long long n;
} mesh_case;

/* The thread counts measured: 1, 2, 4, ... and max itself (a sweep of every
 * count up to 16 took minutes of a lent machine for nothing new). */
static int next_threads(int t, int max) { return t >= max ? max + 1 : (2 * t < max ? 2 * t : max); }

static int measure(bench_report *rep, fea_context *ctx, const mesh_case *mc, int max_threads,
                   int reps, const double *stream) {
  const bench_family fam = {"Q", mc->dim, mc->p};
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_matrix *A = NULL;
  fea_status st = bench_make_space(ctx, &fam, (fea_index)mc->n, &mesh, &space);
  if (st == FEA_SUCCESS) st = bench_make_sine_problem(space, mc->dim, &pb);
  if (st == FEA_SUCCESS) st = fea_matrix_create_pattern(pb, &A);
  fea_index nf = 0, nnz = 0;
  if (st == FEA_SUCCESS) st = fea_problem_get_num_free_dofs(pb, &nf);
  if (st == FEA_SUCCESS) st = fea_matrix_get_size(A, NULL, NULL, &nnz);
  double *b = st == FEA_SUCCESS ? malloc((size_t)nf * sizeof *b + 1) : NULL;
  double *times = malloc((size_t)reps * sizeof *times);
  int rc = st == FEA_SUCCESS && b && times ? BENCH_OK : bench_fail("building the problem", st);
  double serial_s = 0;
  static const fea_update_strategy strategies[] = {FEA_UPDATE_SERIAL,
                                                   FEA_UPDATE_COLORING,
                                                   FEA_UPDATE_ATOMIC_CAS,
                                                   FEA_UPDATE_MUTEX,
                                                   FEA_UPDATE_PRIVATE_BUFFERS,
                                                   FEA_UPDATE_PRIVATE_COPIES,
                                                   FEA_UPDATE_TSX,
                                                   FEA_UPDATE_AUTO};
  for (size_t k = 0; k < sizeof strategies / sizeof *strategies && rc == BENCH_OK; k++)
    for (int s = strategies[k], t = 1;
         t <= (s == FEA_UPDATE_SERIAL ? 1 : max_threads) && rc == BENCH_OK;
         t = next_threads(t, max_threads)) {
      fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
      d.strategy = (fea_update_strategy)s;
      d.threads = t;
      fea_assembly_stats stats = FEA_ASSEMBLY_STATS_INIT;
      for (int r = -1; r < reps && st == FEA_SUCCESS; r++) {
        double t0 = bench_now();
        st = fea_problem_assemble(pb, A, b, &d, &stats);
        if (r >= 0) times[r] = bench_now() - t0;
      }
      if (st == FEA_ERR_UNSUPPORTED) {
        bench_machine m;
        (void)bench_machine_get(ctx, &m);
        char what[96];
        snprintf(what, sizeof what, "%s (%dD Q%d, %d threads)",
                 fea_update_strategy_name(d.strategy), mc->dim, mc->p, t);
        bench_report_skip(rep, CASE_NAME, what, fea_context_last_error(ctx), &m);
        st = FEA_SUCCESS;
        break;
      }
      if (st != FEA_SUCCESS) {
        rc = bench_fail("fea_problem_assemble", st);
        break;
      }
      double med = bench_median(times, reps);
      if (s == FEA_UPDATE_SERIAL) serial_s = med;
      bench_record rec;
      (void)bench_record_init(&rec, CASE_NAME, ctx);
      rec.threads = t;
      bench_param_str(&rec, "strategy", fea_update_strategy_name(d.strategy));
      bench_param_str(&rec, "ran", fea_update_strategy_name(stats.strategy_run));
      bench_param_int(&rec, "dim", mc->dim);
      bench_param_int(&rec, "p", mc->p);
      bench_param_int(&rec, "n", mc->n);
      bench_param_int(&rec, "dofs", nf);
      bench_param_int(&rec, "nnz", nnz);
      bench_param_int(&rec, "reps", reps);
      double ups = (double)stats.updates / med;
      bench_metric(&rec, "time_s", med);
      bench_metric(&rec, "speedup", serial_s / med);
      bench_metric(&rec, "updates_per_s", ups);
      bench_metric(&rec, "write_gbytes_per_s", 8.0 * ups * 1e-9);
      bench_metric(&rec, "stream_fraction", stream[t] > 0 ? 8.0 * ups * 1e-9 / stream[t] : 0.0);
      bench_metric(&rec, "retries", (double)stats.retries);
      bench_metric(&rec, "lock_contended", (double)stats.lock_contended);
      bench_metric(&rec, "elements_recomputed", (double)stats.elements_recomputed);
      bench_report_emit(rep, &rec);
    }
  free(times);
  free(b);
  fea_matrix_destroy(&A);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  return rc;
}

static int run(const bench_options *opts, int argc, char **argv) {
  long long dim = 0, p = 0, n = 0;
  for (int i = 0; i < argc; i++) {
    const char *v;
    int got;
    if ((got = bench_option_value(argc, argv, &i, "--dim", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--dim", v, 2, 3, &dim) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--p", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--p", v, 1, 4, &p) < 0) return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--n", &v)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--n", v, 1, 100000, &n) < 0) return BENCH_USAGE;
    } else {
      fprintf(stderr, "feaccel-bench: %s: unknown option '%s'\n", CASE_NAME, argv[i]);
      return BENCH_USAGE;
    }
  }
  mesh_case cases[2] = {{2, 1, 700}, {3, 2, 24}};
  int ncases = 2;
  if (dim || p || n) { /* one mesh: defaults from the matching standard one */
    cases[0] = dim == 3 ? cases[1] : cases[0];
    if (p) cases[0].p = (int)p;
    if (n) cases[0].n = n;
    ncases = 1;
  }
  int max_threads = opts->threads > 0 ? opts->threads : omp_get_num_procs();
  double *stream = calloc((size_t)max_threads + 1, sizeof *stream);
  if (!stream) return bench_fail("allocating", FEA_ERR_OUT_OF_MEMORY);
  for (int t = 1; t <= max_threads; t = next_threads(t, max_threads))
    stream[t] = bench_stream_triad(20000000, t, 5);
  fea_context *ctx = NULL;
  fea_status st = fea_context_create("/cpu/ref", &ctx);
  if (st != FEA_SUCCESS) {
    free(stream);
    return bench_fail("fea_context_create", st);
  }
  bench_report rep;
  bench_report_init(&rep, opts);
  int rc = BENCH_OK;
  for (int k = 0; k < ncases && rc == BENCH_OK; k++)
    rc = measure(&rep, ctx, &cases[k], max_threads, opts->reps, stream);
  for (int t = 1; t <= max_threads; t = next_threads(t, max_threads))
    bench_report_note(&rep, "STREAM triad on %d thread%s: %.1f GB/s", t, t > 1 ? "s" : "",
                      stream[t]);
  bench_report_note(&rep,
                    "time_s: median of %d fea_problem_assemble calls into a reused pattern "
                    "(scratch, strategy setup, integration, updates); speedup over SERIAL; "
                    "write_gbytes_per_s counts 8 bytes per update.",
                    opts->reps);
  fea_context_destroy(&ctx);
  free(stream);
  return rc;
}

const bench_case bench_case_assembly = {
    .name = CASE_NAME,
    .description = "concurrent CSR assembly per update strategy and thread count (2D Q1, 3D Q2)",
    .usage =
        "options:\n"
        "  --dim D   2 or 3: one mesh only (default: 2D Q1 n=700 and 3D Q2 n=24)\n"
        "  --p P     Lagrange order 1..4\n"
        "  --n N     elements per direction\n",
    .run = run,
};
