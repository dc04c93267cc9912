/* Wall-clock timing for feaccel-bench: a monotonic clock and the median of
 * repetitions. Header-only (static inline) so that every case can use it. */
#ifndef FEA_BENCH_TIMING_H
#define FEA_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC: unaffected by changes of the system time. Only
 * differences mean something. */
static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of t[0..n-1] (n >= 1); sorts t in place. For even n, the mean of the
 * two middle values. */
static inline double bench_median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

#endif
