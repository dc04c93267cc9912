/* The sum-factorization operator kernel of /gpu/cuda (operator-cuda.c): the
 * stages of sumfact-stages.h with the block barriers between them. A block
 * holds several elements (fea_sf_gpu_shape::per_block, about 256 threads in all),
 * each with its own slice of shared memory; every thread of the block
 * reaches every barrier, those past the last element idle through them.
 * Compiled apart for every dimension and n = 2..9 (p = 1..8), so that the
 * contractions unroll and the line arrays live in registers. */
#include "operator-launch.h"

namespace fea_cuda {

/* The launch geometry of one instance, and its checks: every instance the
 * launcher below names is compiled, so a size that would not launch (too
 * many threads, more dynamic shared memory than a block gets without
 * cudaFuncAttributeMaxDynamicSharedMemorySize, which the launcher does not
 * set) stops the build. The expressions are the ones the kernel and the
 * launcher use; they must also agree with the host-side functions of
 * sumfact-stages.h (fea_sf_gpu_threads_per_element, ..._elements_per_block,
 * ..._shared_per_element), which the info string and the stage test use. */
template <int DIM, int N>
struct fea_sf_gpu_shape {
  static constexpr int threads = DIM == 3 ? N * N : N; /* per element */
  static constexpr int per_block = threads >= SFG_BLOCK_THREADS ? 1 : SFG_BLOCK_THREADS / threads;
  static constexpr int block = threads * per_block;
  static constexpr int shared = DIM == 3 ? 2 * N * N * N : (DIM == 2 ? N * N : N);
  static constexpr int nb = DIM == 3 ? N * N * N : (DIM == 2 ? N * N : N);
  static constexpr int line = DIM == 1 ? 1 : N;
  static constexpr size_t shared_bytes = (size_t)per_block * shared * sizeof(double);

  static_assert(DIM >= 1 && DIM <= 3, "the kernel exists in 1D, 2D and 3D");
  static_assert(N >= SFG_MIN_N && N <= SFG_MAX_N,
                "the stages' register arrays hold SFG_MAX_N values (sumfact-stages.h)");
  static_assert(block >= 1 && block <= FEA_CUDA_MAX_BLOCK_THREADS,
                "more threads per block than a launch accepts");
  static_assert(shared_bytes <= FEA_CUDA_DEFAULT_SHARED_BYTES,
                "the elements' shared slices exceed the default dynamic shared memory, and the "
                "launcher does not raise cudaFuncAttributeMaxDynamicSharedMemorySize");
};

/* ATOMIC: native FP64 atomicAdd; else plain adds (one color at a time, or
 * unprotected: GPU_Max, wrong where two elements of the launch share a DoF). */
template <int DIM, int N, bool ATOMIC>
__global__ void __launch_bounds__(fea_sf_gpu_shape<DIM, N>::block)
    fea_sf_gpu_kernel(fea_sf_gpu_params p, int64_t count, const int64_t *__restrict__ elems,
                      const double *__restrict__ x, double *__restrict__ y) {
  using S = fea_sf_gpu_shape<DIM, N>;
  extern __shared__ double smem[];
  const int slot = threadIdx.x / S::threads, lt = threadIdx.x % S::threads;
  const int64_t t = (int64_t)blockIdx.x * S::per_block + slot;
  const bool active = t < count;
  const int64_t e = active ? (elems ? elems[t] : t) : 0;
  double *X = smem + slot * S::shared;
  const int *r = p.erow + e * S::nb;
  fea_sf_gpu_element el;
  if (active) {
    fea_sf_gpu_element_setup(&p, DIM, e, &el);
    fea_sf_gpu_gather(DIM, N, lt, r, x, X);
  }
  __syncthreads();
  double v[S::line];
  if constexpr (DIM == 1) {
    if (active) fea_sf_gpu_stage_1d(N, lt, &el, X, v);
  } else if constexpr (DIM == 2) {
    if (active) fea_sf_gpu_stage_2d(N, lt, &el, X, v);
  } else {
    double a[N], b[N];
    if (active) fea_sf_gpu_stage1_3d(N, lt, &el, X, a, b);
    __syncthreads(); /* every line of X has been read */
    if (active) fea_sf_gpu_store_3d(N, lt, a, b, X, X + N * N * N);
    __syncthreads();
    if (active) fea_sf_gpu_stage2_3d(N, lt, &el, X, X + N * N * N, v);
  }
  if (!active) return;
#pragma unroll
  for (int i = 0; i < S::line; i++) {
    const int row = r[fea_sf_gpu_local_dof(DIM, N, lt, i)];
    if (row < 0) continue;
    if (ATOMIC)
      atomicAdd(y + row, v[i]);
    else
      y[row] += v[i];
  }
}

template <int DIM, int N>
static int fea_sf_gpu_launch(const fea_sf_gpu_params *p, int64_t count, const int64_t *elems,
                             int atomic, const double *x, double *y, cudaStream_t stream) {
  using S = fea_sf_gpu_shape<DIM, N>;
  const int64_t blocks = (count + S::per_block - 1) / S::per_block;
  if (blocks > 2147483647) return (int)cudaErrorInvalidConfiguration;
  constexpr size_t smem = S::shared_bytes; /* <= 35 KiB (3D n = 9), checked in S */
  if (atomic)
    fea_sf_gpu_kernel<DIM, N, true>
        <<<(unsigned)blocks, S::block, smem, stream>>>(*p, count, elems, x, y);
  else
    fea_sf_gpu_kernel<DIM, N, false>
        <<<(unsigned)blocks, S::block, smem, stream>>>(*p, count, elems, x, y);
  return (int)cudaGetLastError();
}

template <int DIM>
static int fea_sf_gpu_launch_dim(const fea_sf_gpu_params *p, int64_t count, const int64_t *elems,
                                 int atomic, const double *x, double *y, cudaStream_t stream) {
  switch (p->n) {
#define FEA_SFG_N(N) \
  case N: return fea_sf_gpu_launch<DIM, N>(p, count, elems, atomic, x, y, stream);
    FEA_SFG_N(2)
    FEA_SFG_N(3)
    FEA_SFG_N(4)
    FEA_SFG_N(5)
    FEA_SFG_N(6)
    FEA_SFG_N(7)
    FEA_SFG_N(8)
    FEA_SFG_N(9)
#undef FEA_SFG_N
  default: return (int)cudaErrorInvalidValue;
  }
}

}  // namespace fea_cuda

extern "C" int fea_cuda_sf_apply(const fea_sf_gpu_params *p, int64_t count, const int64_t *elems,
                                 int atomic, const double *x, double *y, cudaStream_t stream) {
  using namespace fea_cuda;
  if (count <= 0) return (int)cudaSuccess;
  switch (p->dim) {
  case 1: return fea_sf_gpu_launch_dim<1>(p, count, elems, atomic, x, y, stream);
  case 2: return fea_sf_gpu_launch_dim<2>(p, count, elems, atomic, x, y, stream);
  case 3: return fea_sf_gpu_launch_dim<3>(p, count, elems, atomic, x, y, stream);
  default: return (int)cudaErrorInvalidValue;
  }
}
