/* The `limits` case: the best this machine does on dense arithmetic and on
 * memory bandwidth, the yardstick for every other case's figures.
 *
 * CPU (on /cpu/ref = 1 thread, and on /cpu/threads = all threads):
 *   dgemm         C = A B through the library's fea_dense_gemm (OpenBLAS),
 *                 square n x n, 2 n^3 flops.
 *   stream_triad  a[i] = b[i] + s c[i], the bench's own OpenMP loop run with
 *                 the context's thread count; counted as 3 x 8 bytes per entry
 *                 (STREAM's convention: the write-allocate read of a is not
 *                 counted, so the memory traffic is up to 4/3 of the figure).
 * GPU (on /gpu/cuda, where a context can be created):
 *   dgemm, sgemm  fea_dense_gemm on device-resident vectors (cuBLAS), FP64 and
 *                 FP32 with the default compute mode.
 *   axpy          y = y + s x through fea_vector_axpy, counted as 3 x 8 bytes
 *                 per entry (read x, read y, write y): an axpy bandwidth,
 *                 reported as axpy_gbytes_per_s, not a STREAM triad.
 *
 * Every figure is the median of R timed repetitions after one warm-up. GPU
 * work may be asynchronous, so each timed repetition starts and ends with a
 * fea_vector_dot of a 1-entry vector: dot returns its result to the host and
 * so waits for everything queued before it on the context. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel.h>

#include "linalg/dense.h"
#include "report.h"
#include "timing.h"

#define CASE_NAME "limits"

typedef struct limits_params {
  long long n;        /* CPU GEMM order */
  long long gpu_n;    /* GPU GEMM order */
  long long stream_n; /* entries per array of the CPU triad */
  long long axpy_n;   /* entries per vector of the GPU axpy */
  int reps;
} limits_params;

enum { AXPY_CALLS_PER_REP = 10, BYTES_PER_ENTRY = 3 * (int)sizeof(double) };

/* Return BENCH_FAILED with the library's message unless expr succeeded
 * (warnings, status > 0, pass). Needs `int rc` and a `done:` label. */
#define TRY(expr)                          \
  do {                                     \
    fea_status try_status_ = (expr);       \
    if (try_status_ < 0) {                 \
      rc = bench_fail(#expr, try_status_); \
      goto done;                           \
    }                                      \
  } while (0)

static void destroy_vector(fea_vector **v, int *rc) {
  fea_status s = fea_vector_destroy(v);
  if (s < 0 && *rc == BENCH_OK) *rc = bench_fail("fea_vector_destroy", s);
}

static void destroy_context(fea_context **ctx, int *rc) {
  fea_status s = fea_context_destroy(ctx);
  if (s < 0 && *rc == BENCH_OK) *rc = bench_fail("fea_context_destroy", s);
}

static int out_of_memory(const char *what, size_t bytes) {
  fprintf(stderr, "feaccel-bench: %s: cannot allocate %zu bytes of host memory\n", what, bytes);
  return BENCH_FAILED;
}

/* Wait for all work queued on the context of `probe` (see the file comment). */
static fea_status wait_idle(const fea_vector *probe) {
  double r;
  return fea_vector_dot(probe, probe, &r);
}

/* Reproducible values in [-1, 1): xorshift64*. Random data rather than a
 * constant keeps GPU power (and so clocks) at what real data costs. */
static void fill_random(double *h, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    h[i] = (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-52 - 1.0;
  }
}

/* ------------------------------------------------------------------------ */

static int measure_gemm(bench_report *rep, fea_context *ctx, fea_precision prec, long long n,
                        int reps) {
  int rc = BENCH_OK;
  const fea_index nn = (fea_index)n * n;
  const size_t host_bytes = (size_t)nn * sizeof(double);
  fea_vector *a = NULL, *b = NULL, *c = NULL, *probe = NULL;
  double *host = malloc(host_bytes), *t = malloc((size_t)reps * sizeof *t);
  if (!host || !t) {
    rc = out_of_memory("gemm operands", host_bytes);
    goto done;
  }
  TRY(fea_vector_create(ctx, nn, prec, &a));
  TRY(fea_vector_create(ctx, nn, prec, &b));
  TRY(fea_vector_create(ctx, nn, prec, &c));
  TRY(fea_vector_create(ctx, 1, FEA_F64, &probe));
  fill_random(host, (size_t)nn, 1);
  TRY(fea_vector_write(a, nn, FEA_F64, host)); /* converted to prec */
  fill_random(host, (size_t)nn, 2);
  TRY(fea_vector_write(b, nn, FEA_F64, host));
  free(host);
  host = NULL;

  fea_dmat A, B, C;
  TRY(fea_dmat_from_vector(a, n, n, n, &A));
  TRY(fea_dmat_from_vector(b, n, n, n, &B));
  TRY(fea_dmat_from_vector(c, n, n, n, &C));
  for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
    TRY(wait_idle(probe));
    double t0 = bench_now();
    TRY(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1.0, &A, &B, 0.0, &C, FEA_COMPUTE_DEFAULT));
    TRY(wait_idle(probe));
    if (r >= 0) t[r] = bench_now() - t0;
  }
  /* A GEMM that did nothing would be fast: C must be finite and non-zero. */
  double norm = 0.0;
  TRY(fea_vector_nrm2(c, &norm));
  if (!(isfinite(norm) && norm > 0.0)) {
    fprintf(stderr, "feaccel-bench: %s: gemm result has norm %g, expected finite and > 0\n",
            CASE_NAME, norm);
    rc = BENCH_FAILED;
    goto done;
  }

  double time_s = bench_median(t, reps);
  bench_record rec;
  TRY(bench_record_init(&rec, CASE_NAME, ctx));
  bench_param_str(&rec, "kernel", prec == FEA_F64 ? "dgemm" : "sgemm");
  bench_param_int(&rec, "n", n);
  bench_param_int(&rec, "reps", reps);
  bench_metric(&rec, "gflops", 2.0 * (double)n * (double)n * (double)n / time_s * 1e-9);
  bench_metric(&rec, "time_s", time_s);
  bench_report_emit(rep, &rec);

done:
  free(host);
  free(t);
  destroy_vector(&a, &rc);
  destroy_vector(&b, &rc);
  destroy_vector(&c, &rc);
  destroy_vector(&probe, &rc);
  return rc;
}

/* Our own STREAM-style triad on the context's thread count (and its binding,
 * which is a property of the process's OpenMP threads). */
static int measure_triad(bench_report *rep, fea_context *ctx, long long n, int reps) {
  int rc = BENCH_OK;
  int nt = 1;
  const double s = 3.0;
  /* aligned_alloc wants a size that is a multiple of the alignment. */
  const size_t bytes = ((size_t)n * sizeof(double) + 63) / 64 * 64;
  double *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes),
         *c = aligned_alloc(64, bytes), *t = malloc((size_t)reps * sizeof *t);
  if (!a || !b || !c || !t) {
    rc = out_of_memory("triad arrays", 3 * bytes);
    goto done;
  }
  TRY(fea_context_get_num_threads(ctx, &nt));

  /* First touch with the same threads and schedule as the timed loop, so each
   * thread's pages sit on its own NUMA node. */
#pragma omp parallel for simd schedule(static) num_threads(nt)
  for (long long i = 0; i < n; i++) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
    double t0 = bench_now();
#pragma omp parallel for simd schedule(static) num_threads(nt)
    for (long long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
    if (r >= 0) t[r] = bench_now() - t0;
  }
  /* Check (and so use) the result: every a[i] is 1 + 3 * 2 exactly. */
  long long wrong = 0;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(+ : wrong)
  for (long long i = 0; i < n; i++) wrong += a[i] != 7.0;
  if (wrong) {
    fprintf(stderr, "feaccel-bench: %s: triad gave %lld wrong entries of %lld\n", CASE_NAME, wrong,
            n);
    rc = BENCH_FAILED;
    goto done;
  }

  double time_s = bench_median(t, reps);
  bench_record rec;
  TRY(bench_record_init(&rec, CASE_NAME, ctx));
  rec.threads = nt;
  bench_param_str(&rec, "kernel", "stream_triad");
  bench_param_int(&rec, "n", n);
  bench_param_int(&rec, "bytes_per_entry", BYTES_PER_ENTRY);
  bench_param_int(&rec, "reps", reps);
  bench_metric(&rec, "gbytes_per_s", (double)BYTES_PER_ENTRY * (double)n / time_s * 1e-9);
  bench_metric(&rec, "time_s", time_s);
  bench_report_emit(rep, &rec);

done:
  free(a);
  free(b);
  free(c);
  free(t);
  return rc;
}

/* y = y + s x with the library's vector op, in the context's memory. */
static int measure_axpy(bench_report *rep, fea_context *ctx, long long n, int reps) {
  int rc = BENCH_OK;
  fea_vector *x = NULL, *y = NULL, *probe = NULL;
  double *t = malloc((size_t)reps * sizeof *t);
  if (!t) {
    rc = out_of_memory("timings", (size_t)reps * sizeof *t);
    goto done;
  }
  TRY(fea_vector_create(ctx, n, FEA_F64, &x));
  TRY(fea_vector_create(ctx, n, FEA_F64, &y));
  TRY(fea_vector_create(ctx, 1, FEA_F64, &probe));
  TRY(fea_vector_set_all(x, 1.0));
  for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
    TRY(wait_idle(probe));
    double t0 = bench_now();
    for (int k = 0; k < AXPY_CALLS_PER_REP; k++) TRY(fea_vector_axpy(y, 0.5, x));
    TRY(wait_idle(probe));
    if (r >= 0) t[r] = (bench_now() - t0) / AXPY_CALLS_PER_REP;
  }
  /* Every entry of y is 0.5 per call: (reps + 1) * calls / 2. */
  double sum = 0.0, expect = 0.5 * (reps + 1) * AXPY_CALLS_PER_REP * (double)n;
  TRY(fea_vector_dot(x, y, &sum));
  if (!(fabs(sum - expect) <= 1e-9 * expect)) {
    fprintf(stderr, "feaccel-bench: %s: axpy gave sum %.17g, expected %.17g\n", CASE_NAME, sum,
            expect);
    rc = BENCH_FAILED;
    goto done;
  }

  double time_s = bench_median(t, reps);
  bench_record rec;
  TRY(bench_record_init(&rec, CASE_NAME, ctx));
  bench_param_str(&rec, "kernel", "axpy");
  bench_param_int(&rec, "n", n);
  bench_param_int(&rec, "bytes_per_entry", BYTES_PER_ENTRY);
  bench_param_int(&rec, "calls_per_rep", AXPY_CALLS_PER_REP);
  bench_param_int(&rec, "reps", reps);
  bench_metric(&rec, "axpy_gbytes_per_s", (double)BYTES_PER_ENTRY * (double)n / time_s * 1e-9);
  bench_metric(&rec, "time_s", time_s);
  bench_report_emit(rep, &rec);

done:
  free(t);
  destroy_vector(&x, &rc);
  destroy_vector(&y, &rc);
  destroy_vector(&probe, &rc);
  return rc;
}

/* Every figure of `limits` that the context's kind of backend has. */
static int measure_context(bench_report *rep, fea_context *ctx, const limits_params *p) {
  int rc = BENCH_OK;
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  TRY(fea_context_get_info(ctx, &info));
  if (strncmp(info.backend, "/gpu/", 5) == 0) {
    rc = measure_gemm(rep, ctx, FEA_F64, p->gpu_n, p->reps);
    if (rc == BENCH_OK) rc = measure_gemm(rep, ctx, FEA_F32, p->gpu_n, p->reps);
    if (rc == BENCH_OK) rc = measure_axpy(rep, ctx, p->axpy_n, p->reps);
  } else {
    /* The triad first: after a multithreaded GEMM, OpenBLAS's worker threads
     * keep spinning for a while and would take cores from the triad. */
    rc = measure_triad(rep, ctx, p->stream_n, p->reps);
    if (rc == BENCH_OK) rc = measure_gemm(rep, ctx, FEA_F64, p->n, p->reps);
  }
done:
  return rc;
}

/* Create a context on `resource`, with `threads` (> 0) applied, and measure.
 * A resource or thread count the library rejects as invalid came from the
 * command line: that is a usage error. */
static int measure_resource(bench_report *rep, const char *resource, int threads,
                            const limits_params *p, bench_machine *machine) {
  int rc = BENCH_OK;
  fea_context *ctx = NULL;
  fea_status s = fea_context_create(resource, &ctx);
  if (s == FEA_SUCCESS && threads > 0) s = fea_context_set_num_threads(ctx, threads);
  if (s < 0) {
    rc = bench_fail(ctx ? "fea_context_set_num_threads" : "fea_context_create", s);
    if (s == FEA_ERR_INVALID_ARG) rc = BENCH_USAGE;
    goto done;
  }
  if (machine) TRY(bench_machine_get(ctx, machine));
  rc = measure_context(rep, ctx, p);
done:
  destroy_context(&ctx, &rc);
  return rc;
}

static int parse_options(int argc, char **argv, limits_params *p) {
  static const struct {
    const char *name;
    long long min, max;
    size_t offset;
  } opts[] = {
      {"--n", 1, 1 << 16, offsetof(limits_params, n)},
      {"--gpu-n", 1, 1 << 16, offsetof(limits_params, gpu_n)},
      {"--stream-n", 1, 1ll << 34, offsetof(limits_params, stream_n)},
      {"--axpy-n", 1, 1ll << 34, offsetof(limits_params, axpy_n)},
  };
  for (int i = 0; i < argc; i++) {
    int matched = 0;
    for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !matched; k++) {
      const char *value = NULL;
      int got = bench_option_value(argc, argv, &i, opts[k].name, &value);
      if (got < 0) return BENCH_USAGE;
      if (got == 0) continue;
      long long *field = (long long *)((char *)p + opts[k].offset);
      if (bench_parse_ll(CASE_NAME, opts[k].name, value, opts[k].min, opts[k].max, field) < 0)
        return BENCH_USAGE;
      matched = 1;
    }
    if (!matched) {
      fprintf(stderr,
              "feaccel-bench: %s: unknown option '%s' (see feaccel-bench %s --help; global "
              "options such as --json go before the case name)\n",
              CASE_NAME, argv[i], CASE_NAME);
      return BENCH_USAGE;
    }
  }
  return BENCH_OK;
}

static int run_limits(const bench_options *o, int argc, char **argv) {
  limits_params p = {
      .n = 2048, .gpu_n = 8192, .stream_n = 1ll << 24, .axpy_n = 1ll << 27, .reps = o->reps};
  int rc = parse_options(argc, argv, &p);
  if (rc != BENCH_OK) return rc;
  bench_report rep;
  bench_report_init(&rep, o);

  if (o->backend) {
    /* Only the backend asked for; a failure to create it is an error. */
    rc = measure_resource(&rep, o->backend, o->threads, &p, NULL);
  } else {
    bench_machine cpu_machine;
    rc = measure_resource(&rep, "/cpu/ref", 0, &p, &cpu_machine);
    if (rc == BENCH_OK) rc = measure_resource(&rep, "/cpu/threads", o->threads, &p, &cpu_machine);
    if (rc != BENCH_OK) return rc;
    /* The GPU is optional: where no context can be made, say so and why. */
    fea_context *gpu = NULL;
    fea_status s = fea_context_create("/gpu/cuda", &gpu);
    if (s < 0) {
      bench_report_skip(&rep, CASE_NAME, "/gpu/cuda", fea_context_last_error(NULL), &cpu_machine);
    } else {
      rc = measure_context(&rep, gpu, &p);
      destroy_context(&gpu, &rc);
    }
  }
  if (rc != BENCH_OK) return rc;
  bench_report_note(&rep, "\nmedian of %d timed repetitions after one warm-up; gemm: 2 n^3 flops;",
                    p.reps);
  bench_report_note(&rep,
                    "stream_triad a = b + s c: 3 x 8 bytes per entry (STREAM convention, "
                    "write-allocate not counted);");
  bench_report_note(&rep, "axpy y = y + s x (GPU, fea_vector_axpy): 3 x 8 bytes per entry.");
  return BENCH_OK;
}

/* Declared here as well as in main.c's case table (BENCH_CASES). */
extern const bench_case bench_case_limits;
const bench_case bench_case_limits = {
    .name = CASE_NAME,
    .description = "peak DGEMM/SGEMM GFLOP/s and memory bandwidth (STREAM triad, GPU axpy)",
    .usage =
        "usage: feaccel-bench [global options] limits [--n N] [--gpu-n N] [--stream-n N] "
        "[--axpy-n N]\n"
        "\n"
        "  --n N          order of the square CPU DGEMM (default 2048)\n"
        "  --gpu-n N      order of the square GPU DGEMM and SGEMM (default 8192)\n"
        "  --stream-n N   entries per array of the CPU STREAM triad (default 2^24)\n"
        "  --axpy-n N     entries per vector of the GPU axpy (default 2^27)\n"
        "\n"
        "Without --backend: /cpu/ref (1 thread), /cpu/threads (all threads, or\n"
        "--threads N), and /gpu/cuda where a context can be created.\n",
    .run = run_limits,
};
