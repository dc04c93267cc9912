/* The DGEMM rate of a context, measured in the same run as the figure it is
 * the yardstick for: a case's peak_fraction divides by it, so that a machine
 * that is busy or slowed (shared cores, OPENBLAS_CORETYPE) moves both. */
#ifndef FEA_BENCH_PEAK_H
#define FEA_BENCH_PEAK_H

#include <feaccel.h>

/* C = A B on square order n through the library's fea_dense_gemm on ctx (its
 * threads, its BLAS), median of reps timed runs after one warm-up; 2 n^3
 * flops. Returns the library's status; *gflops is set on success. */
fea_status bench_dgemm_peak(fea_context *ctx, long long n, int reps, double *gflops);

#endif
