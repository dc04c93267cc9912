/* Rates of one core that put the operator case's figures in context: the
 * sum-factorization batch kernel alone (one batch, in cache: what the
 * gather and scatter around it dilute) and the FMA throughput of the widest
 * vectors the CPU runs, next to the DGEMM yardstick (whose OpenBLAS kernels
 * may be narrower: OPENBLAS_CORETYPE=Haswell runs AVX2 on AVX-512 CPUs). */
#ifndef FEA_BENCH_KERNEL_RATE_H
#define FEA_BENCH_KERNEL_RATE_H

#include <feaccel.h>

/* GFLOP/s of the problem's sum-factorization batch kernel (the kernel's own
 * flop count) on the calling thread, best of 5 timings of about 20 ms;
 * 0 when the kernel does not serve the problem or has per-element tables
 * (B-splines: filled per batch, so the kernel alone is not what runs). */
double bench_sumfact_kernel_gflops(const fea_problem *pb);

/* GFLOP/s of independent FMAs on the calling thread with the widest vectors
 * this CPU has (*isa: "avx512", "avx2", or "" and 0 when neither). */
double bench_fma_peak_gflops(const char **isa);

#endif
