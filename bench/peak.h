/* The GEMM rates of a context, measured in the same run as the figure they
 * are the yardstick for: a case's peak_fraction divides by one, so that a
 * machine that is busy or slowed (shared cores, OPENBLAS_CORETYPE) moves both. */
#ifndef FEA_BENCH_PEAK_H
#define FEA_BENCH_PEAK_H

#include <feaccel.h>

/* C = A B on square order n through the library's fea_dense_gemm on ctx (its
 * threads, its BLAS), median of reps timed runs after one warm-up; 2 n^3
 * flops. Returns the library's status; *gflops is set on success. */
fea_status bench_dgemm_peak(fea_context *ctx, long long n, int reps, double *gflops);

/* The same in another precision: FEA_F64 (= bench_dgemm_peak), FEA_F32 (A, B
 * and C in FP32: SGEMM), FEA_F16 or FEA_BF16 (A and B in 16 bits, C in FP32,
 * the library's mixed GEMM; on the CPU backends that converts the operands to
 * FP32 and runs SGEMM, so it measures the conversion too). */
fea_status bench_gemm_peak(fea_context *ctx, long long n, fea_precision prec, int reps,
                           double *gflops);

#endif
