/* STREAM-style triad for the assembly cases (see stream.h). Best of the
 * repetitions, as STREAM reports, because the assembly is compared with what
 * the memory system can do at best. Arrays are first touched by the threads
 * that stream them. */
#include <omp.h>
#include <stdlib.h>

#include "stream.h"
#include "timing.h"

double bench_stream_triad(long long n, int threads, int reps) {
  double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b),
         *c = malloc((size_t)n * sizeof *c);
  double best = 0;
  if (a && b && c) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long long i = 0; i < n; i++) a[i] = 0, b[i] = 1, c[i] = 2;
    for (int r = 0; r < reps; r++) {
      double t0 = bench_now();
#pragma omp parallel for schedule(static) num_threads(threads)
      for (long long i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
      double t = bench_now() - t0, gbs = 24.0 * (double)n / t * 1e-9;
      if (gbs > best) best = gbs;
    }
    if (a[n / 2] != 7.0) best = -1; /* the triad must have run */
  } else {
    best = -1;
  }
  free(a);
  free(b);
  free(c);
  return best;
}

double bench_device_axpy(fea_context *ctx, long long n, int reps) {
  enum { CALLS = 10 };
  fea_vector *x = NULL, *y = NULL;
  double best = -1, dot = 0;
  fea_status s = fea_vector_create(ctx, (fea_index)n, FEA_F64, &x);
  if (s == FEA_SUCCESS) s = fea_vector_create(ctx, (fea_index)n, FEA_F64, &y);
  if (s == FEA_SUCCESS) s = fea_vector_set_all(x, 1.0);
  if (s == FEA_SUCCESS) s = fea_vector_set_all(y, 0.0);
  for (int r = -1; r < reps && s == FEA_SUCCESS; r++) { /* r = -1: warm-up */
    s = fea_vector_dot(x, x, &dot);                     /* returns once the queue is empty */
    double t0 = bench_now();
    for (int k = 0; k < CALLS && s == FEA_SUCCESS; k++) s = fea_vector_axpy(y, 0.5, x);
    if (s == FEA_SUCCESS) s = fea_vector_dot(x, x, &dot);
    double t = (bench_now() - t0) / CALLS, gbs = 24.0 * (double)n / t * 1e-9;
    if (r >= 0 && s == FEA_SUCCESS && gbs > best) best = gbs;
  }
  /* The axpys must have run: every entry of y is 0.5 per call. */
  double sum = 0;
  if (s == FEA_SUCCESS) s = fea_vector_dot(x, y, &sum);
  if (s != FEA_SUCCESS || !(sum == 0.5 * CALLS * (reps + 1) * (double)n)) best = -1;
  fea_vector_destroy(&x);
  fea_vector_destroy(&y);
  return best;
}
