/* The multifrontal kernels of /gpu/cuda (see multifrontal-launch.h): leaf upload
 * scatter, extend-add, the batched partial Cholesky of small panels, and the
 * gather / small-front / scatter steps of the forward and backward
 * substitutions.
 *
 * One thread block per front. Blocks loop over fronts with a stride of the
 * grid, so the grid stays bounded; the loop variable depends only on
 * blockIdx, so every __syncthreads() is reached by the whole block. A block
 * writes only its own front's storage (and, in the solve scatter, the rows of
 * y of its own eliminated DoFs, which no other front of the level owns). */
#include "multifrontal-launch.h"

#include <math.h>

/* fea_multifrontal_pivots_merge, host and device: the one pivot reduction. */
#include "../../src/internal/multifrontal.h"

namespace fea_cuda_multifrontal {

constexpr int threads = 256;
constexpr int64_t max_blocks = 1 << 20;

inline unsigned blocks_for(int64_t count) {
  return (unsigned)(count < max_blocks ? count : max_blocks);
}

__global__ void scatter_leaves_kernel(const fea_cuda_multifrontal_front *__restrict__ fronts,
                                      int64_t count, const double *__restrict__ values) {
  for (int64_t k = blockIdx.x; k < count; k += gridDim.x) {
    const fea_cuda_multifrontal_front fr = fronts[k];
    const int64_t m = fr.q + fr.r, np = m * fr.q, ns = fr.r * fr.r;
    const double *src = values + fr.src;
    for (int64_t i = threadIdx.x; i < np; i += blockDim.x) fr.P[i] = src[i];
    for (int64_t i = threadIdx.x; i < ns; i += blockDim.x) fr.S[i] = src[np + i];
  }
}

/* K_ij of one element from its record (see fea_cuda_leaf_shape): with
 * X_k = D_k,i D_k,j and Y_k = B_k,i B_k,j at 1D point a_k of direction k,
 *   K_ij = sum_c sum_b [ (sum_a W X_0) Y_1 Y_2 + (sum_a W Y_0) (X_1 Y_2 + Y_1 X_2) ],
 * about 4 nq + 6 m1 m2 operations; unused directions have one row {1, 0}
 * (X = 0, Y = 1), so 1D and 2D take the same loop. */
__device__ double leaf_pair_value(const double *__restrict__ rec, const fea_cuda_leaf_shape &sh,
                                  int i, int j) {
  const int n0 = sh.n[0], n1 = sh.n[1], n2 = sh.n[2];
  const int m0 = sh.m[0], m1 = sh.m[1], m2 = sh.m[2];
  const int i0 = i % n0, i1 = (i / n0) % n1, i2 = i / (n0 * n1);
  const int j0 = j % n0, j1 = (j / n0) % n1, j2 = j / (n0 * n1);
  const double *W = rec;
  const double *T0 = rec + sh.nq;
  const double *T1 = T0 + 2 * m0 * n0;
  const double *T2 = T1 + 2 * m1 * n1;
  double v = 0.0;
  for (int c = 0; c < m2; c++) {
    const double *r2 = T2 + 2 * n2 * c;
    const double y2 = r2[i2] * r2[j2], x2 = r2[n2 + i2] * r2[n2 + j2];
    for (int b = 0; b < m1; b++) {
      const double *r1 = T1 + 2 * n1 * b;
      const double y1 = r1[i1] * r1[j1], x1 = r1[n1 + i1] * r1[n1 + j1];
      const double *w = W + m0 * (b + m1 * c);
      double sx = 0.0, sy = 0.0;
      for (int a = 0; a < m0; a++) {
        const double *r0 = T0 + 2 * n0 * a;
        sx += w[a] * (r0[n0 + i0] * r0[n0 + j0]);
        sy += w[a] * (r0[i0] * r0[j0]);
      }
      v += sx * (y1 * y2) + sy * (x1 * y2 + y1 * x2);
    }
  }
  return v;
}

__global__ void integrate_leaves_kernel(const fea_cuda_multifrontal_front *__restrict__ fronts,
                                        int64_t count, const double *__restrict__ records,
                                        fea_cuda_leaf_shape sh) {
  extern __shared__ double leaf_smem[];
  double *rec = leaf_smem;
  int32_t *map = (int32_t *)(leaf_smem + sh.rec_len);
  const int nb = sh.nb;
  for (int64_t k = blockIdx.x; k < count; k += gridDim.x) {
    const fea_cuda_multifrontal_front fr = fronts[k];
    const int64_t q = fr.q, r = fr.r, m = q + r, np = m * q, ns = r * r;
    for (int64_t i = threadIdx.x; i < np; i += blockDim.x) fr.P[i] = 0.0;
    for (int64_t i = threadIdx.x; i < ns; i += blockDim.x) fr.S[i] = 0.0;
    for (int64_t e = 0; e < fr.elems; e++) {
      __syncthreads(); /* the zeroing, or the previous element, is done */
      const double *src = records + fr.src + e * sh.rec_len;
      for (int i = threadIdx.x; i < sh.rec_len; i += blockDim.x) rec[i] = src[i];
      for (int i = threadIdx.x; i < nb; i += blockDim.x) map[i] = fr.map[e * nb + i];
      __syncthreads();
      for (int idx = threadIdx.x; idx < nb * nb; idx += blockDim.x) {
        const int i = idx % nb, j = idx / nb;
        const int64_t a = map[i], b = map[j];
        if (a < 0 || b < 0 || a < b) continue;
        const double v = leaf_pair_value(rec, sh, i, j);
        if (b < q)
          fr.P[a + b * m] += v;
        else
          fr.S[(a - q) + (b - q) * r] += v;
      }
    }
    __syncthreads(); /* the next front reuses the shared record */
  }
}

/* Child entry (i, j), i >= j, lands at parent rows (a, b) = (map[i], map[j]);
 * the lower-triangle position (max, min) is in the panel when its column is
 * below q, else in the Schur block. One launch adds child number `slot` of
 * every front; within one child the map is injective, so all threads (of all
 * blocks along y) write distinct entries, and successive slots are ordered by
 * the stream. */
__global__ void extend_add_kernel(const fea_cuda_multifrontal_front *__restrict__ fronts,
                                  int64_t count,
                                  const fea_cuda_multifrontal_child *__restrict__ children,
                                  int64_t slot) {
  for (int64_t k = blockIdx.x; k < count; k += gridDim.x) {
    const fea_cuda_multifrontal_front fr = fronts[k];
    if (slot >= fr.num_children) continue;
    const int64_t q = fr.q, r = fr.r, m = q + r;
    const fea_cuda_multifrontal_child ch = children[fr.child_begin + slot];
    const int64_t rc = ch.r;
    const int64_t step = (int64_t)gridDim.y * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.y * blockDim.x + threadIdx.x; idx < rc * rc; idx += step) {
      const int64_t i = idx % rc, j = idx / rc;
      if (i < j) continue;
      const double v = ch.data[i + j * rc];
      const int64_t a = ch.map[i], b = ch.map[j];
      const int64_t row = a > b ? a : b, col = a > b ? b : a;
      if (col < q)
        fr.P[row + col * m] += v;
      else
        fr.S[(row - q) + (col - q) * r] += v;
    }
  }
}

/* The pivot range of each front with q > 0 (see the launcher). The test on
 * q depends only on the front, so a block skips or runs it whole. */
__global__ void pivots_kernel(const fea_cuda_multifrontal_front *__restrict__ fronts, int64_t count,
                              double *__restrict__ pivots) {
  __shared__ double lo[fea_cuda_multifrontal::threads], hi[fea_cuda_multifrontal::threads];
  for (int64_t k = blockIdx.x; k < count; k += gridDim.x) {
    const fea_cuda_multifrontal_front fr = fronts[k];
    if (fr.q == 0) continue;
    const int64_t m = fr.q + fr.r;
    double l = INFINITY, h = -INFINITY;
    for (int64_t j = threadIdx.x; j < fr.q; j += blockDim.x) {
      const double d = fr.P[j + j * m] * fr.P[j + j * m];
      fea_multifrontal_pivots_merge(&l, &h, d, d);
    }
    lo[threadIdx.x] = l;
    hi[threadIdx.x] = h;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
      if (threadIdx.x < s)
        fea_multifrontal_pivots_merge(&lo[threadIdx.x], &hi[threadIdx.x], lo[threadIdx.x + s],
                                      hi[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      pivots[2 * fr.node] = lo[0];
      pivots[2 * fr.node + 1] = hi[0];
    }
    __syncthreads(); /* lo[0], hi[0] are read before the next front writes them */
  }
}

/* Right-looking unblocked Cholesky of the m x q panel: column k is scaled by
 * its pivot's square root, then the columns k+1 .. q-1 of the panel get the
 * rank-1 update from column k (rows j .. m-1 of column j). Rows >= q of the
 * panel become L21 on the way: this is potrf and trsm in one sweep. */
__global__ void panel_kernel(const fea_cuda_multifrontal_front *__restrict__ fronts,
                             const int64_t *__restrict__ list, int64_t count, int *info) {
  for (int64_t t = blockIdx.x; t < count; t += gridDim.x) {
    const fea_cuda_multifrontal_front fr = fronts[list[t]];
    const int64_t q = fr.q, m = q + fr.r;
    double *P = fr.P;
    for (int64_t k = 0; k < q; k++) {
      __syncthreads(); /* column k is final */
      const double d = P[k + k * m];
      if (!(d > 0.0)) { /* every thread read the same d: the whole block leaves */
        if (threadIdx.x == 0) info[fr.info] = (int)(k + 1);
        break;
      }
      const double l = sqrt(d);
      __syncthreads(); /* everyone has read the pivot before it is overwritten */
      if (threadIdx.x == 0) P[k + k * m] = l;
      for (int64_t i = k + 1 + threadIdx.x; i < m; i += blockDim.x) P[i + k * m] /= l;
      __syncthreads();
      for (int64_t j = k + 1; j < q; j++) {
        const double pj = P[j + k * m];
        for (int64_t i = j + threadIdx.x; i < m; i += blockDim.x) P[i + j * m] -= P[i + k * m] * pj;
      }
    }
    __syncthreads(); /* the next front starts with every thread here */
  }
}

__global__ void forward_gather_kernel(const fea_cuda_multifrontal_sfront *__restrict__ fronts,
                                      int64_t count,
                                      const fea_cuda_multifrontal_child *__restrict__ children,
                                      const double *__restrict__ y, int64_t n, int64_t nrhs) {
  for (int64_t k = blockIdx.x; k < count; k += gridDim.x) {
    const fea_cuda_multifrontal_sfront fr = fronts[k];
    const int64_t q = fr.q, m = q + fr.r;
    for (int64_t idx = threadIdx.x; idx < q * nrhs; idx += blockDim.x) {
      const int64_t i = idx % q, j = idx / q;
      fr.W[i + j * m] = y[fr.dofs[i] + j * n];
    }
    __syncthreads();
    for (int64_t c = 0; c < fr.num_children; c++) {
      const fea_cuda_multifrontal_child ch = children[fr.child_begin + c];
      const int64_t rc = ch.r, mc = ch.q + ch.r;
      for (int64_t idx = threadIdx.x; idx < rc * nrhs; idx += blockDim.x) {
        const int64_t i = idx % rc, j = idx / rc;
        fr.W[ch.map[i] + j * m] += ch.data[ch.q + i + j * mc];
      }
      __syncthreads();
    }
  }
}

/* Column-oriented forward substitution over the q pivots: row k of W is
 * divided by L(k, k), then rows k+1 .. m-1 (the rest of L11 and all of L21)
 * lose L(i, k) times it. */
__global__ void forward_small_kernel(const fea_cuda_multifrontal_sfront *__restrict__ fronts,
                                     const int64_t *__restrict__ list, int64_t count,
                                     int64_t nrhs) {
  for (int64_t t = blockIdx.x; t < count; t += gridDim.x) {
    const fea_cuda_multifrontal_sfront fr = fronts[list[t]];
    const int64_t q = fr.q, m = q + fr.r;
    const double *P = fr.P;
    double *W = fr.W;
    for (int64_t k = 0; k < q; k++) {
      __syncthreads();
      const double dkk = P[k + k * m];
      for (int64_t j = threadIdx.x; j < nrhs; j += blockDim.x) W[k + j * m] /= dkk;
      __syncthreads();
      const int64_t rows = m - k - 1;
      for (int64_t idx = threadIdx.x; idx < rows * nrhs; idx += blockDim.x) {
        const int64_t i = k + 1 + idx % rows, j = idx / rows;
        W[i + j * m] -= P[i + k * m] * W[k + j * m];
      }
    }
    __syncthreads();
  }
}

__global__ void backward_gather_kernel(const fea_cuda_multifrontal_sfront *__restrict__ fronts,
                                       int64_t count, const double *__restrict__ y, int64_t n,
                                       int64_t nrhs) {
  for (int64_t k = blockIdx.x; k < count; k += gridDim.x) {
    const fea_cuda_multifrontal_sfront fr = fronts[k];
    const int64_t m = fr.q + fr.r;
    for (int64_t idx = threadIdx.x; idx < m * nrhs; idx += blockDim.x) {
      const int64_t i = idx % m, j = idx / m;
      fr.W[i + j * m] = y[fr.dofs[i] + j * n];
    }
  }
}

/* W_q -= L21^T W_r (one dot product per entry of W_q), then the column-
 * oriented back substitution with L11^T: row k is divided by L(k, k), rows
 * 0 .. k-1 lose L(k, i) times it. */
__global__ void backward_small_kernel(const fea_cuda_multifrontal_sfront *__restrict__ fronts,
                                      const int64_t *__restrict__ list, int64_t count,
                                      int64_t nrhs) {
  for (int64_t t = blockIdx.x; t < count; t += gridDim.x) {
    const fea_cuda_multifrontal_sfront fr = fronts[list[t]];
    const int64_t q = fr.q, m = q + fr.r;
    const double *P = fr.P;
    double *W = fr.W;
    __syncthreads();
    for (int64_t idx = threadIdx.x; idx < q * nrhs; idx += blockDim.x) {
      const int64_t k = idx % q, j = idx / q;
      double s = 0.0;
      for (int64_t i = q; i < m; i++) s += P[i + k * m] * W[i + j * m];
      W[k + j * m] -= s;
    }
    for (int64_t k = q - 1; k >= 0; k--) {
      __syncthreads();
      const double dkk = P[k + k * m];
      for (int64_t j = threadIdx.x; j < nrhs; j += blockDim.x) W[k + j * m] /= dkk;
      __syncthreads();
      for (int64_t idx = threadIdx.x; idx < k * nrhs; idx += blockDim.x) {
        const int64_t i = idx % k, j = idx / k;
        W[i + j * m] -= P[k + i * m] * W[k + j * m];
      }
    }
    __syncthreads();
  }
}

__global__ void scatter_solution_kernel(const fea_cuda_multifrontal_sfront *__restrict__ fronts,
                                        int64_t count, double *__restrict__ y, int64_t n,
                                        int64_t nrhs) {
  for (int64_t k = blockIdx.x; k < count; k += gridDim.x) {
    const fea_cuda_multifrontal_sfront fr = fronts[k];
    const int64_t q = fr.q, m = q + fr.r;
    for (int64_t idx = threadIdx.x; idx < q * nrhs; idx += blockDim.x) {
      const int64_t i = idx % q, j = idx / q;
      y[fr.dofs[i] + j * n] = fr.W[i + j * m];
    }
  }
}

}  // namespace fea_cuda_multifrontal

using namespace fea_cuda_multifrontal;

extern "C" int fea_cuda_multifrontal_scatter_leaves(const fea_cuda_multifrontal_front *fronts,
                                                    int64_t count, const double *values,
                                                    cudaStream_t stream) {
  if (count <= 0) return (int)cudaSuccess;
  scatter_leaves_kernel<<<blocks_for(count), threads, 0, stream>>>(fronts, count, values);
  return (int)cudaGetLastError();
}

extern "C" size_t fea_cuda_multifrontal_leaf_smem(const fea_cuda_leaf_shape *shape) {
  return (size_t)shape->rec_len * sizeof(double) + (size_t)shape->nb * sizeof(int32_t);
}

extern "C" int fea_cuda_multifrontal_integrate_leaves(const fea_cuda_multifrontal_front *fronts,
                                                      int64_t count, const double *records,
                                                      const fea_cuda_leaf_shape *shape,
                                                      cudaStream_t stream) {
  if (count <= 0) return (int)cudaSuccess;
  integrate_leaves_kernel<<<blocks_for(count), threads, fea_cuda_multifrontal_leaf_smem(shape),
                            stream>>>(fronts, count, records, *shape);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_multifrontal_extend_add(const fea_cuda_multifrontal_front *fronts,
                                                int64_t count,
                                                const fea_cuda_multifrontal_child *children,
                                                int64_t max_children, int64_t max_child_entries,
                                                cudaStream_t stream) {
  if (count <= 0 || max_children <= 0) return (int)cudaSuccess;
  /* Blocks along y share a child's entries: enough for one large child to
   * fill the GPU, few when there are many fronts. */
  int64_t tiles = (max_child_entries + threads * 8 - 1) / (threads * 8);
  int64_t cap = ((int64_t)1 << 22) / count;
  if (tiles > cap) tiles = cap;
  if (tiles > 65535) tiles = 65535;
  if (tiles < 1) tiles = 1;
  const dim3 grid(blocks_for(count), (unsigned)tiles);
  for (int64_t slot = 0; slot < max_children; slot++) {
    extend_add_kernel<<<grid, threads, 0, stream>>>(fronts, count, children, slot);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return (int)e;
  }
  return (int)cudaSuccess;
}

extern "C" int fea_cuda_multifrontal_panel(const fea_cuda_multifrontal_front *fronts,
                                           const int64_t *list, int64_t count, int *info,
                                           cudaStream_t stream) {
  if (count <= 0) return (int)cudaSuccess;
  panel_kernel<<<blocks_for(count), threads, 0, stream>>>(fronts, list, count, info);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_multifrontal_pivots(const fea_cuda_multifrontal_front *fronts,
                                            int64_t count, double *pivots, cudaStream_t stream) {
  if (count <= 0) return (int)cudaSuccess;
  /* The reduction halves blockDim: a power of two. */
  static_assert((threads & (threads - 1)) == 0, "threads is a power of two");
  pivots_kernel<<<blocks_for(count), threads, 0, stream>>>(fronts, count, pivots);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_multifrontal_forward_gather(const fea_cuda_multifrontal_sfront *fronts,
                                                    int64_t count,
                                                    const fea_cuda_multifrontal_child *children,
                                                    const double *y, int64_t n, int64_t nrhs,
                                                    cudaStream_t stream) {
  if (count <= 0) return (int)cudaSuccess;
  forward_gather_kernel<<<blocks_for(count), threads, 0, stream>>>(fronts, count, children, y, n,
                                                                   nrhs);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_multifrontal_forward_small(const fea_cuda_multifrontal_sfront *fronts,
                                                   const int64_t *list, int64_t count, int64_t nrhs,
                                                   cudaStream_t stream) {
  if (count <= 0) return (int)cudaSuccess;
  forward_small_kernel<<<blocks_for(count), threads, 0, stream>>>(fronts, list, count, nrhs);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_multifrontal_backward_gather(const fea_cuda_multifrontal_sfront *fronts,
                                                     int64_t count, const double *y, int64_t n,
                                                     int64_t nrhs, cudaStream_t stream) {
  if (count <= 0) return (int)cudaSuccess;
  backward_gather_kernel<<<blocks_for(count), threads, 0, stream>>>(fronts, count, y, n, nrhs);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_multifrontal_backward_small(const fea_cuda_multifrontal_sfront *fronts,
                                                    const int64_t *list, int64_t count,
                                                    int64_t nrhs, cudaStream_t stream) {
  if (count <= 0) return (int)cudaSuccess;
  backward_small_kernel<<<blocks_for(count), threads, 0, stream>>>(fronts, list, count, nrhs);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_multifrontal_scatter_solution(const fea_cuda_multifrontal_sfront *fronts,
                                                      int64_t count, double *y, int64_t n,
                                                      int64_t nrhs, cudaStream_t stream) {
  if (count <= 0) return (int)cudaSuccess;
  scatter_solution_kernel<<<blocks_for(count), threads, 0, stream>>>(fronts, count, y, n, nrhs);
  return (int)cudaGetLastError();
}
