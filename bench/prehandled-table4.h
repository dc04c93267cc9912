/* The paper's Table 4 for `feaccel-bench prehandled --table4`
 * (bench/prehandled-table4.c). */
#ifndef FEA_BENCH_PREHANDLED_TABLE4_H
#define FEA_BENCH_PREHANDLED_TABLE4_H

#include "report.h"

/* One record per coarse level L0 = 0..3 of the Table 4 mesh refined L times:
 * counts, max kappa(C_i) and kappa(Pi) (by `steps` Lanczos steps), NNZ
 * ratios, the paper's values beside. */
int prehandled_table4(bench_report *rep, fea_context *ctx, int L, int steps);

#endif
