/* A monotonic clock, for the timings solvers report (src/base/clock.c). */
#ifndef FEA_INTERNAL_CLOCK_H
#define FEA_INTERNAL_CLOCK_H

/* Seconds on a monotonic clock. */
double fea_now(void);

#endif
