/* Paper I's N-body benchmark (Table III) for the `updates` case
 * (bench/updates-nbody.c). */
#ifndef FEA_BENCH_UPDATES_NBODY_H
#define FEA_BENCH_UPDATES_NBODY_H

#include <stdint.h>

#include "report.h"

/* Runs every N-body method on 1..max_threads threads (serial on one), emits a
 * record per method and thread count, and returns BENCH_FAILED if a method's
 * positions leave the serial run's by more than rounding. */
int updates_nbody(bench_report *rep, fea_context *ctx, int max_threads, int reps, int forced,
                  int particles);

/* Thesis Table 3.3's counters of a TSX record (bench/case-updates.c). */
void updates_tx_metrics(bench_record *r, uint64_t started, uint64_t committed, uint64_t fallback,
                        uint64_t conflict, uint64_t capacity, uint64_t other);

#endif
