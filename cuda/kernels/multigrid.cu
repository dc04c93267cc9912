/* The elementwise kernels of multigrid on /gpu/cuda (multigrid-cuda.c, the
 * table of src/internal/multigrid-kernels.h): one grid-stride loop each,
 * the same arithmetic in the same order as the host loops
 * (src/multigrid/kernels-host.c). */
#include "grid.cuh"
#include "multigrid-launch.h"

namespace fea_cuda {

__global__ void mg_sub_from_kernel(int64_t n, const double *__restrict__ b,
                                   double *__restrict__ r) {
  for (int64_t i = grid_first(); i < n; i += grid_stride()) r[i] = b[i] - r[i];
}

__global__ void mg_add_kernel(int64_t n, const double *__restrict__ c, double *__restrict__ x) {
  for (int64_t i = grid_first(); i < n; i += grid_stride()) x[i] += c[i];
}

__global__ void mg_scaled_update_kernel(int64_t n, double alpha, const double *__restrict__ dinv,
                                        const double *__restrict__ r, double *__restrict__ x,
                                        int zero) {
  for (int64_t i = grid_first(); i < n; i += grid_stride()) {
    const double z = alpha * (dinv ? dinv[i] : 1.0) * r[i];
    x[i] = zero ? z : x[i] + z;
  }
}

__global__ void mg_chebyshev_first_kernel(int64_t n, double theta, const double *__restrict__ dinv,
                                          const double *__restrict__ r, double *__restrict__ d,
                                          double *__restrict__ x, int zero) {
  for (int64_t i = grid_first(); i < n; i += grid_stride()) {
    const double di = dinv[i] * r[i] / theta;
    d[i] = di;
    x[i] = zero ? di : x[i] + di;
  }
}

__global__ void mg_chebyshev_step_kernel(int64_t n, double c1, double c2,
                                         const double *__restrict__ dinv,
                                         const double *__restrict__ r, double *__restrict__ d,
                                         double *__restrict__ x) {
  for (int64_t i = grid_first(); i < n; i += grid_stride()) {
    const double di = c1 * d[i] + c2 * dinv[i] * r[i];
    d[i] = di;
    x[i] += di;
  }
}

}  // namespace fea_cuda

using namespace fea_cuda;

extern "C" int fea_cuda_mg_sub_from(int64_t n, const double *b, double *r, cudaStream_t s) {
  if (n <= 0) return (int)cudaSuccess;
  mg_sub_from_kernel<<<grid_blocks(n), block_threads, 0, s>>>(n, b, r);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_mg_add(int64_t n, const double *c, double *x, cudaStream_t s) {
  if (n <= 0) return (int)cudaSuccess;
  mg_add_kernel<<<grid_blocks(n), block_threads, 0, s>>>(n, c, x);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_mg_scaled_update(int64_t n, double alpha, const double *dinv,
                                         const double *r, double *x, int zero, cudaStream_t s) {
  if (n <= 0) return (int)cudaSuccess;
  mg_scaled_update_kernel<<<grid_blocks(n), block_threads, 0, s>>>(n, alpha, dinv, r, x, zero);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_mg_chebyshev_first(int64_t n, double theta, const double *dinv,
                                           const double *r, double *d, double *x, int zero,
                                           cudaStream_t s) {
  if (n <= 0) return (int)cudaSuccess;
  mg_chebyshev_first_kernel<<<grid_blocks(n), block_threads, 0, s>>>(n, theta, dinv, r, d, x, zero);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_mg_chebyshev_step(int64_t n, double c1, double c2, const double *dinv,
                                          const double *r, double *d, double *x, cudaStream_t s) {
  if (n <= 0) return (int)cudaSuccess;
  mg_chebyshev_step_kernel<<<grid_blocks(n), block_threads, 0, s>>>(n, c1, c2, dinv, r, d, x);
  return (int)cudaGetLastError();
}
