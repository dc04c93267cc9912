/* Launch geometry shared by the element-wise kernels. */
#ifndef FEA_CUDA_GRID_CUH
#define FEA_CUDA_GRID_CUH

#include <stdint.h>

namespace fea_cuda {

constexpr int block_threads = 256;

/* Enough blocks to fill any current GPU several times over; larger arrays are
 * covered by the grid-stride loops rather than by more blocks. */
constexpr int64_t max_blocks = 8192;

inline unsigned grid_blocks(int64_t n) {
  int64_t blocks = (n + block_threads - 1) / block_threads;
  return (unsigned)(blocks < max_blocks ? blocks : max_blocks);
}

__device__ inline int64_t grid_first() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ inline int64_t grid_stride() { return (int64_t)gridDim.x * blockDim.x; }

}  // namespace fea_cuda

#endif
