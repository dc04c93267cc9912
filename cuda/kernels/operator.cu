/* Operator kernels of /gpu/cuda (operator-cuda.c): the element-matrix product of
 * the thesis (one thread per element, the reference local matrix shared by a
 * block, conflicts by FP64 atomicAdd or by colors) and the elementwise
 * product of the Jacobi step. */
#include "grid.cuh"
#include "operator-launch.h"

namespace fea_cuda {

/* Elements up to this many DoFs keep x_e in registers / local memory (Q4 3D:
 * 125); larger ones read x again for every row. */
constexpr int em_max_nb = 128;
constexpr int em_threads = 128;
static_assert(em_threads <= FEA_CUDA_MAX_BLOCK_THREADS &&
                  block_threads <= FEA_CUDA_MAX_BLOCK_THREADS,
              "more threads per block than a launch accepts");

/* NB > 0: the element size known at compile time (the common Lagrange and
 * B-spline sizes, em_launch_sized), so that the row and column loops unroll
 * and x_e can live in registers instead of an indexed local-memory array;
 * NB = 0 takes nb at run time. Same arithmetic, same order, either way. */
template <bool ATOMIC, bool SHARED, bool LOCAL, int NB>
__global__ void __launch_bounds__(em_threads)
    em_kernel(int nb_run, int64_t count, const int64_t *__restrict__ elems,
              const int *__restrict__ erow, const int *__restrict__ group,
              const double *__restrict__ K, const double *__restrict__ x, double *__restrict__ y) {
  extern __shared__ double sK[];
  const int nb = NB > 0 ? NB : nb_run;
  const int64_t nb2 = (int64_t)nb * nb;
  if (SHARED) {
    for (int64_t i = threadIdx.x; i < nb2; i += blockDim.x) sK[i] = K[i];
    __syncthreads();
  }
  for (int64_t t = grid_first(); t < count; t += grid_stride()) {
    const int64_t e = elems ? elems[t] : t;
    const int *r = erow + e * nb;
    const double *Ke = SHARED ? sK : K + (group ? (int64_t)group[e] * nb2 : 0);
    double xe[LOCAL ? (NB > 0 ? NB : em_max_nb) : 1];
    if (LOCAL) {
#pragma unroll
      for (int j = 0; j < (NB > 0 ? NB : nb); j++) {
        const int rj = r[j];
        xe[j] = rj >= 0 ? x[rj] : 0.0;
      }
    }
#pragma unroll 1
    for (int i = 0; i < nb; i++) {
      const int ri = r[i];
      if (ri < 0) continue;
      double s = 0.0;
#pragma unroll
      for (int j = 0; j < (NB > 0 ? NB : nb); j++) {
        double xj;
        if (LOCAL) {
          xj = xe[j];
        } else {
          const int rj = r[j];
          xj = rj >= 0 ? x[rj] : 0.0;
        }
        s += Ke[(int64_t)i * nb + j] * xj;
      }
      if (ATOMIC)
        atomicAdd(y + ri, s);
      else
        y[ri] += s;
    }
  }
}

/* The sizes compiled apart (NB > 0) are checked here, per instance: x_e
 * fits its array, and their shared matrix fits the default dynamic shared
 * memory (no attribute call on their path). Run-time sizes (NB = 0) raise
 * the block's limit when the matrix needs more; operator-cuda.c stages it in
 * shared memory only where the device's opt-in limit holds it. */
template <bool ATOMIC, bool SHARED, bool LOCAL, int NB>
static int em_launch(int nb, int64_t count, const int64_t *elems, const int *erow, const int *group,
                     const double *K, const double *x, double *y, cudaStream_t stream) {
  static_assert(NB >= 0 && NB <= em_max_nb, "x_e of a sized instance lives in an array of NB");
  static_assert(!SHARED || NB == 0 ||
                    (size_t)NB * NB * sizeof(double) <= FEA_CUDA_DEFAULT_SHARED_BYTES,
                "a sized instance's matrix exceeds the default dynamic shared memory");
  const size_t smem = SHARED ? (size_t)nb * nb * sizeof(double) : 0;
  if (smem > FEA_CUDA_DEFAULT_SHARED_BYTES) {
    cudaError_t e = cudaFuncSetAttribute(em_kernel<ATOMIC, SHARED, LOCAL, NB>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;
  }
  int64_t blocks = (count + em_threads - 1) / em_threads;
  if (blocks > max_blocks) blocks = max_blocks;
  em_kernel<ATOMIC, SHARED, LOCAL, NB>
      <<<(unsigned)blocks, em_threads, smem, stream>>>(nb, count, elems, erow, group, K, x, y);
  return (int)cudaGetLastError();
}

/* The sizes compiled apart: Q1-Q4 in 2D (4, 9, 16, 25) and Q1-Q3 or
 * B-splines p = 1-3 in 3D (8, 27, 64); Q4 3D (125) and the rest at run time. */
template <bool ATOMIC, bool SHARED>
static int em_launch_local(int nb, int64_t count, const int64_t *elems, const int *erow,
                           const int *group, const double *K, const double *x, double *y,
                           cudaStream_t stream) {
  switch (nb) {
#define FEA_EM_SIZED(N) \
  case N: return em_launch<ATOMIC, SHARED, true, N>(nb, count, elems, erow, group, K, x, y, stream);
    FEA_EM_SIZED(4)
    FEA_EM_SIZED(8)
    FEA_EM_SIZED(9)
    FEA_EM_SIZED(16)
    FEA_EM_SIZED(25)
    FEA_EM_SIZED(27)
    FEA_EM_SIZED(64)
#undef FEA_EM_SIZED
  default: break;
  }
  if (nb <= em_max_nb)
    return em_launch<ATOMIC, SHARED, true, 0>(nb, count, elems, erow, group, K, x, y, stream);
  return em_launch<ATOMIC, SHARED, false, 0>(nb, count, elems, erow, group, K, x, y, stream);
}

__global__ void pointwise_mul_kernel(const double *__restrict__ a, const double *__restrict__ x,
                                     double *__restrict__ y, int64_t n) {
  for (int64_t i = grid_first(); i < n; i += grid_stride()) y[i] = a[i] * x[i];
}

__global__ void triad_kernel(double *__restrict__ a, const double *__restrict__ b,
                             const double *__restrict__ c, double s, int64_t n) {
  for (int64_t i = grid_first(); i < n; i += grid_stride()) a[i] = b[i] + s * c[i];
}

}  // namespace fea_cuda

extern "C" int fea_cuda_em_apply(int nb, int64_t count, const int64_t *elems, const int *erow,
                                 const int *group, const double *K, int shared_K, int atomic,
                                 const double *x, double *y, cudaStream_t stream) {
  using namespace fea_cuda;
  if (count <= 0) return (int)cudaSuccess;
  if (atomic && shared_K)
    return em_launch_local<true, true>(nb, count, elems, erow, nullptr, K, x, y, stream);
  if (atomic) return em_launch_local<true, false>(nb, count, elems, erow, group, K, x, y, stream);
  if (shared_K)
    return em_launch_local<false, true>(nb, count, elems, erow, nullptr, K, x, y, stream);
  return em_launch_local<false, false>(nb, count, elems, erow, group, K, x, y, stream);
}

extern "C" int fea_cuda_pointwise_mul(const double *a, const double *x, double *y, int64_t n,
                                      cudaStream_t stream) {
  using namespace fea_cuda;
  if (n <= 0) return (int)cudaSuccess;
  pointwise_mul_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(a, x, y, n);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_triad(double *a, const double *b, const double *c, double s, int64_t n,
                              cudaStream_t stream) {
  using namespace fea_cuda;
  if (n <= 0) return (int)cudaSuccess;
  triad_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(a, b, c, s, n);
  return (int)cudaGetLastError();
}
