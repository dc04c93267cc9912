/* The CPU BLAS (OpenBLAS) as the CPU backends use it. */
#ifndef FEA_INTERNAL_BLAS_H
#define FEA_INTERNAL_BLAS_H

#include <stddef.h>

#include <feaccel/types.h>

/* OpenBLAS keeps one process-wide thread count: set it to the calling
 * context's before each BLAS call (a no-op when it is already right). */
void fea_blas_use_threads(int nthreads);

/* On the calling thread, until the matching pop, fea_blas_use_threads uses
 * nthreads whatever it is asked: inside a parallel region whose threads each
 * run BLAS (push 1 there, after setting 1 before the region), a context's
 * own count must not switch OpenBLAS back to many threads (oversubscription).
 * Returns the previous override for fea_blas_pop_threads. */
int fea_blas_push_threads(int nthreads);
void fea_blas_pop_threads(int previous);

/* "OpenBLAS 0.3.21 ... (kernels: Haswell)": what ran, for info and benchmarks. */
void fea_blas_describe(char *buf, size_t len);

/* Largest length one BLAS call takes: Debian's OpenBLAS has 32-bit integers. */
#define FEA_BLAS_MAX_INT 2147483647LL

#endif
