/* Launchers of the operator kernels (operator.cu), callable from operator-cuda.c.
 * Each returns the cudaError_t of the launch as an int; count or n == 0
 * launches nothing and succeeds. */
#ifndef FEA_CUDA_OP_LAUNCH_H
#define FEA_CUDA_OP_LAUNCH_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "sumfact-stages.h"

/* Limits the kernels' launch geometry is checked against at compile time
 * (static_assert in operator.cu and sumfact.cu): threads per block on every
 * architecture since sm_20, and the dynamic shared memory a block may use
 * without raising cudaFuncAttributeMaxDynamicSharedMemorySize. */
#define FEA_CUDA_MAX_BLOCK_THREADS 1024
#define FEA_CUDA_DEFAULT_SHARED_BYTES (48 * 1024)

#ifdef __cplusplus
extern "C" {
#endif

/* Element-matrix product on free-DoF vectors, one thread per element:
 * for t < count, e = elems ? elems[t] : t, y[erow[e nb + i]] += sum_j
 * K_g[i][j] x[erow[e nb + j]] over rows >= 0 (-1: Dirichlet DoF, read as 0,
 * never written), K_g = K + group[e] nb^2 (group NULL: K). shared_K: the
 * single matrix is staged in shared memory (nb^2 doubles must fit a block's
 * opt-in limit). atomic: native FP64 atomicAdd; else plain adds (the caller
 * launches one color at a time). */
int fea_cuda_em_apply(int nb, int64_t count, const int64_t *elems, const int *erow,
                      const int *group, const double *K, int shared_K, int atomic, const double *x,
                      double *y, cudaStream_t stream);

/* Sum-factorization product on free-DoF vectors (sumfact.cu), p->n = 2..9,
 * p->dim = 1..3: for t < count, element e = elems ? elems[t] : t adds
 * K_e x_e into y at its rows (p->erow; -1: Dirichlet, read as 0, never
 * written). atomic: native FP64 atomicAdd; else plain adds (the caller
 * launches one color at a time, or accepts races: GPU_Max). Other sizes:
 * cudaErrorInvalidValue. */
int fea_cuda_sf_apply(const fea_sf_gpu_params *p, int64_t count, const int64_t *elems, int atomic,
                      const double *x, double *y, cudaStream_t stream);

/* y[i] = a[i] x[i]. */
int fea_cuda_pointwise_mul(const double *a, const double *x, double *y, int64_t n,
                           cudaStream_t stream);

/* STREAM triad a[i] = b[i] + s c[i] (bandwidth yardstick). */
int fea_cuda_triad(double *a, const double *b, const double *c, double s, int64_t n,
                   cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
