/* Set every entry of a device array to one value (vector set_all). */
#include <feaccel/types.h>

#include "grid.cuh"
#include "launch.h"
#include "round.cuh"

namespace fea_cuda {

template <typename T>
__global__ void fill_kernel(T *__restrict__ dst, int64_t n, double alpha) {
  /* Rounded on the device so that the value matches what a conversion kernel
   * would produce for the same double, bit for bit. */
  const T value = round_to<T>::from(alpha);
  for (int64_t i = grid_first(); i < n; i += grid_stride()) dst[i] = value;
}

template <typename T>
static int launch(void *dst, int64_t n, double alpha, cudaStream_t stream) {
  fill_kernel<T><<<grid_blocks(n), block_threads, 0, stream>>>(static_cast<T *>(dst), n, alpha);
  return (int)cudaGetLastError();
}

}  // namespace fea_cuda

extern "C" int fea_cuda_set_all(int prec, void *dst, int64_t n, double alpha, cudaStream_t stream) {
  using namespace fea_cuda;
  if (n <= 0) return (int)cudaSuccess;
  switch (prec) {
  case FEA_F64: return launch<double>(dst, n, alpha, stream);
  case FEA_F32: return launch<float>(dst, n, alpha, stream);
  case FEA_F16: return launch<__half>(dst, n, alpha, stream);
  case FEA_BF16: return launch<__nv_bfloat16>(dst, n, alpha, stream);
  default: return (int)cudaErrorInvalidValue;
  }
}
