/* Launchers of multigrid's elementwise kernels (multigrid.cu), callable from
 * multigrid-cuda.c: the operations of src/internal/multigrid-kernels.h of
 * the same names, on device arrays of n doubles. Each returns the
 * cudaError_t of the launch as an int; n <= 0 launches nothing. */
#ifndef FEA_CUDA_MG_LAUNCH_H
#define FEA_CUDA_MG_LAUNCH_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

int fea_cuda_mg_sub_from(int64_t n, const double *b, double *r, cudaStream_t s);
int fea_cuda_mg_add(int64_t n, const double *c, double *x, cudaStream_t s);
int fea_cuda_mg_scaled_update(int64_t n, double alpha, const double *dinv, const double *r,
                              double *x, int zero, cudaStream_t s);
int fea_cuda_mg_chebyshev_first(int64_t n, double theta, const double *dinv, const double *r,
                                double *d, double *x, int zero, cudaStream_t s);
int fea_cuda_mg_chebyshev_step(int64_t n, double c1, double c2, const double *dinv, const double *r,
                               double *d, double *x, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
