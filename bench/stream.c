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
