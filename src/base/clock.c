/* Seconds on a monotonic clock, for the timings solvers report. */
#include <time.h>

#include "clock.h"

double fea_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
