/* Precision conversion of device arrays (vector write/read/copy). */
#include <feaccel/types.h>

#include "grid.cuh"
#include "launch.h"
#include "round.cuh"

namespace fea_cuda {

template <typename From, typename To>
__global__ void convert_kernel(const From *__restrict__ src, To *__restrict__ dst, int64_t n) {
  for (int64_t i = grid_first(); i < n; i += grid_stride()) dst[i] = round_to<To>::from(src[i]);
}

template <typename From, typename To>
static int launch(const void *src, void *dst, int64_t n, cudaStream_t stream) {
  convert_kernel<From, To>
      <<<grid_blocks(n), block_threads, 0, stream>>>(static_cast<const From *>(src),
                                                     static_cast<To *>(dst), n);
  return (int)cudaGetLastError();
}

template <typename From>
static int launch_from(const void *src, int to_prec, void *dst, int64_t n, cudaStream_t stream) {
  switch (to_prec) {
  case FEA_F64: return launch<From, double>(src, dst, n, stream);
  case FEA_F32: return launch<From, float>(src, dst, n, stream);
  case FEA_F16: return launch<From, __half>(src, dst, n, stream);
  case FEA_BF16: return launch<From, __nv_bfloat16>(src, dst, n, stream);
  default: return (int)cudaErrorInvalidValue;
  }
}

}  // namespace fea_cuda

extern "C" int fea_cuda_convert(int from_prec, const void *src, int to_prec, void *dst, int64_t n,
                                cudaStream_t stream) {
  using namespace fea_cuda;
  if (n <= 0) return (int)cudaSuccess;
  switch (from_prec) {
  case FEA_F64: return launch_from<double>(src, to_prec, dst, n, stream);
  case FEA_F32: return launch_from<float>(src, to_prec, dst, n, stream);
  case FEA_F16: return launch_from<__half>(src, to_prec, dst, n, stream);
  case FEA_BF16: return launch_from<__nv_bfloat16>(src, to_prec, dst, n, stream);
  default: return (int)cudaErrorInvalidValue;
  }
}
