/* Paper I's N-body benchmark (Table III) for the `updates` case
 * (bench/updates-nbody.c). */
#ifndef FEA_BENCH_UPDATES_NBODY_H
#define FEA_BENCH_UPDATES_NBODY_H

#include "report.h"

/* Runs every N-body method on 1..max_threads threads (serial on one), emits a
 * record per method and thread count, and returns BENCH_FAILED if a method's
 * positions leave the serial run's by more than rounding. */
int updates_nbody(bench_report *rep, fea_context *ctx, int max_threads, int reps, int forced,
                  int particles);

#endif
