/* The CPU BLAS as the CPU backends use it: the one meson's -Dblas chose
 * (FEA_BLAS in fea-config.h, whose values base/blas-kernels.h names), its
 * thread count and its description. */
#ifndef FEA_INTERNAL_BLAS_H
#define FEA_INTERNAL_BLAS_H

#include <stddef.h>

#include <feaccel/types.h>

/* OpenBLAS, BLIS, FlexiBLAS and MKL keep one process-wide thread count: set
 * it to the calling context's before each BLAS call (a no-op when it is
 * already right). */
void fea_blas_use_threads(int nthreads);

/* On the calling thread, until the matching pop, fea_blas_use_threads uses
 * nthreads whatever it is asked: inside a parallel region whose threads each
 * run BLAS (push 1 there, after setting 1 before the region), a context's
 * own count must not switch OpenBLAS back to many threads (oversubscription).
 * Returns the previous override for fea_blas_pop_threads. */
int fea_blas_push_threads(int nthreads);
void fea_blas_pop_threads(int previous);

/* Which BLAS and which kernels ran, for info and benchmarks: "OpenBLAS
 * 0.3.21 ... (kernels: Haswell)", "BLIS 0.9.0 (kernels: zen3)", "FlexiBLAS
 * 3.3.1 (backend: OPENBLAS-OPENMP, kernels: unknown)". */
void fea_blas_describe(char *buf, size_t len);

/* Largest length one BLAS call takes: Debian's OpenBLAS has 32-bit integers. */
#define FEA_BLAS_MAX_INT 2147483647LL

#endif
