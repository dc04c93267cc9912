/* Launchers of the CUDA kernels, callable from the C host code. Precisions are
 * fea_precision values. Each returns the cudaError_t of the launch as an int;
 * a fault inside a kernel surfaces at the next synchronization of the stream.
 * n == 0 launches nothing and succeeds. */
#ifndef FEA_CUDA_LAUNCH_H
#define FEA_CUDA_LAUNCH_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] := src[i] rounded to nearest even into to_prec; src and dst are device
 * arrays of n values that must not overlap. */
int fea_cuda_convert(int from_prec, const void *src, int to_prec, void *dst, int64_t n,
                     cudaStream_t stream);

/* dst[i] := alpha rounded to nearest even into prec. */
int fea_cuda_set_all(int prec, void *dst, int64_t n, double alpha, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
