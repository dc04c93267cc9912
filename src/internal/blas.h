/* The CPU BLAS (OpenBLAS) as the CPU backends use it. */
#ifndef FEA_INTERNAL_BLAS_H
#define FEA_INTERNAL_BLAS_H

#include <stddef.h>

#include <feaccel/types.h>

/* OpenBLAS keeps one process-wide thread count: set it to the calling
 * context's before each BLAS call (a no-op when it is already right). */
void fea_blas_use_threads(int nthreads);

/* "OpenBLAS 0.3.21 ... (kernels: Haswell)": what ran, for info and benchmarks. */
void fea_blas_describe(char *buf, size_t len);

/* Largest length one BLAS call takes: Debian's OpenBLAS has 32-bit integers. */
#define FEA_BLAS_MAX_INT 2147483647LL

#endif
