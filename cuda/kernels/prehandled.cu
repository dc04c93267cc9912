/* Kernels of the prehandled solver on /gpu/cuda (prehandled-launch.h): the
 * hierarchical sweeps S and S^T level by level, the coarse gather/scatter
 * and fine scaling of the partial Cholesky L, the C/E/I panel split, the
 * sparse D and D^T products, the power-of-two column scaling of 16-bit GEMM
 * operands, and the FP64 residual and column norms of the refinement. All
 * element-wise kernels use grid-stride loops over (entry, column) pairs;
 * each output entry belongs to exactly one thread (prehandled-launch.h). */
#include <math.h>

#include <feaccel/types.h>

#include "grid.cuh"
#include "prehandled-launch.h"
#include "round.cuh"

namespace fea_cuda {

/* Lexicographic index of interior node (i, j), 1 <= i, j <= n - 1. */
__device__ inline int64_t ph_lex(int64_t n, int64_t i, int64_t j) {
  return (i - 1) + (j - 1) * (n - 1);
}

__device__ inline bool ph_interior(int64_t n, int64_t i, int64_t j) {
  return i > 0 && i < n && j > 0 && j < n;
}

/* S^T, one level: t runs over (parent, column); parent (i, j) = 2s (a + 1, b + 1). */
__global__ void st_level_kernel(double *__restrict__ x, int64_t ld, int64_t k, int64_t n, int64_t s,
                                int p1, int64_t m) {
  const int64_t total = m * m * k;
  for (int64_t t = grid_first(); t < total; t += grid_stride()) {
    const int64_t a = t % m, b = (t / m) % m, col = t / (m * m);
    const int64_t i = 2 * s * (a + 1), j = 2 * s * (b + 1);
    double *xc = x + col * ld;
    double add = 0.0;
    /* Children on the two coarse edges through (i, j): weight 1/2. */
    const int64_t ei[4] = {i - s, i + s, i, i};
    const int64_t ej[4] = {j, j, j - s, j + s};
    for (int c = 0; c < 4; c++)
      if (ph_interior(n, ei[c], ej[c])) add += 0.5 * xc[ph_lex(n, ei[c], ej[c])];
    if (p1) { /* diagonal children (i -+ s, j -+ s): weight 1/2 */
      if (ph_interior(n, i - s, j - s)) add += 0.5 * xc[ph_lex(n, i - s, j - s)];
      if (ph_interior(n, i + s, j + s)) add += 0.5 * xc[ph_lex(n, i + s, j + s)];
    } else { /* Q1 cell centres around (i, j): weight 1/4 */
      for (int c = 0; c < 4; c++) {
        const int64_t ci = i + ((c & 1) ? s : -s), cj = j + ((c & 2) ? s : -s);
        if (ph_interior(n, ci, cj)) add += 0.25 * xc[ph_lex(n, ci, cj)];
      }
    }
    xc[ph_lex(n, i, j)] += add;
  }
}

/* S, one level: t runs over (node with both indices multiples of s, column);
 * nodes with both indices multiples of 2s are not new and are skipped. */
__global__ void s_level_kernel(double *__restrict__ x, int64_t ld, int64_t k, int64_t n, int64_t s,
                               int p1, int64_t m) {
  const int64_t total = m * m * k, s2 = 2 * s;
  for (int64_t t = grid_first(); t < total; t += grid_stride()) {
    const int64_t a = t % m, b = (t / m) % m, col = t / (m * m);
    const int64_t i = s * (a + 1), j = s * (b + 1);
    if (i % s2 == 0 && j % s2 == 0) continue;
    double *xc = x + col * ld;
    int64_t pi[4], pj[4];
    double w;
    int np;
    if (j % s2 == 0) { /* on a horizontal coarse edge */
      pi[0] = i - s, pj[0] = j, pi[1] = i + s, pj[1] = j, np = 2, w = 0.5;
    } else if (i % s2 == 0) { /* on a vertical coarse edge */
      pi[0] = i, pj[0] = j - s, pi[1] = i, pj[1] = j + s, np = 2, w = 0.5;
    } else if (p1) { /* on the diagonal (0,0)-(1,1) of a coarse square */
      pi[0] = i - s, pj[0] = j - s, pi[1] = i + s, pj[1] = j + s, np = 2, w = 0.5;
    } else { /* Q1 cell centre */
      for (int c = 0; c < 4; c++) {
        pi[c] = i + ((c & 1) ? s : -s);
        pj[c] = j + ((c & 2) ? s : -s);
      }
      np = 4, w = 0.25;
    }
    double add = 0.0;
    for (int c = 0; c < np; c++)
      if (ph_interior(n, pi[c], pj[c])) add += w * xc[ph_lex(n, pi[c], pj[c])];
    xc[ph_lex(n, i, j)] += add;
  }
}

__device__ inline int64_t coarse_node(int64_t n, int64_t n0, int64_t r, int64_t c) {
  const int64_t ci = c % (n0 - 1) + 1, cj = c / (n0 - 1) + 1;
  return (ci * r - 1) + (cj * r - 1) * (n - 1);
}

__global__ void coarse_gather_kernel(const double *__restrict__ x, int64_t ld, int64_t k, int64_t n,
                                     int64_t n0, int64_t r, double *__restrict__ w) {
  const int64_t nc = (n0 - 1) * (n0 - 1), total = nc * k;
  for (int64_t t = grid_first(); t < total; t += grid_stride()) {
    const int64_t c = t % nc, col = t / nc;
    w[t] = x[coarse_node(n, n0, r, c) + col * ld];
  }
}

__global__ void coarse_scatter_kernel(const double *__restrict__ w, int64_t k, int64_t n,
                                      int64_t n0, int64_t r, double *__restrict__ x, int64_t ld) {
  const int64_t nc = (n0 - 1) * (n0 - 1), total = nc * k;
  for (int64_t t = grid_first(); t < total; t += grid_stride()) {
    const int64_t c = t % nc, col = t / nc;
    x[coarse_node(n, n0, r, c) + col * ld] = w[t];
  }
}

__global__ void scale_fine_kernel(double *__restrict__ x, int64_t ld, int64_t num, int64_t k,
                                  const double *__restrict__ sd) {
  const int64_t total = num * k;
  for (int64_t t = grid_first(); t < total; t += grid_stride()) {
    const int64_t i = t % num, col = t / num;
    const double d = sd[i];
    if (d > 0) x[i + col * ld] /= d;
  }
}

/* Where interior entry q of column col sits in the I panel (prehandled-launch.h). */
__device__ inline int64_t ph_interior_at(int64_t q, int64_t col, int64_t blk, int64_t ldblk,
                                         int64_t ldi) {
  return (q / blk) * ldblk + q % blk + col * ldi;
}

template <typename V>
__global__ void gather_kernel(const double *__restrict__ x, int64_t num, int64_t k,
                              const int64_t *__restrict__ perm, int64_t nc, int64_t ne,
                              V *__restrict__ wc, int64_t ldc, V *__restrict__ we, int64_t lde,
                              V *__restrict__ wi, int64_t blk, int64_t ldblk, int64_t ldi) {
  const int64_t total = num * k;
  for (int64_t t = grid_first(); t < total; t += grid_stride()) {
    const int64_t p = t % num, col = t / num;
    const V v = round_to<V>::from(x[perm[p] + col * num]);
    if (p < nc)
      wc[p + col * ldc] = v;
    else if (p < nc + ne)
      we[(p - nc) + col * lde] = v;
    else
      wi[ph_interior_at(p - nc - ne, col, blk, ldblk, ldi)] = v;
  }
}

template <typename V>
__global__ void scatter_kernel(const V *__restrict__ wc, int64_t ldc, const V *__restrict__ we,
                               int64_t lde, const V *__restrict__ wi, int64_t blk, int64_t ldblk,
                               int64_t ldi, int64_t num, int64_t k,
                               const int64_t *__restrict__ perm, int64_t nc, int64_t ne,
                               double *__restrict__ x) {
  const int64_t total = num * k;
  for (int64_t t = grid_first(); t < total; t += grid_stride()) {
    const int64_t p = t % num, col = t / num;
    V v;
    if (p < nc)
      v = wc[p + col * ldc];
    else if (p < nc + ne)
      v = we[(p - nc) + col * lde];
    else
      v = wi[ph_interior_at(p - nc - ne, col, blk, ldblk, ldi)];
    x[perm[p] + col * num] = (double)v;
  }
}

template <typename V>
__global__ void csr_sub_kernel(int64_t rows, const int64_t *__restrict__ row_ptr,
                               const int64_t *__restrict__ col, const V *__restrict__ val,
                               int64_t k, const V *__restrict__ y, int64_t ldy, V *__restrict__ r,
                               int64_t ldr, int64_t rseg, int64_t ldseg) {
  const int64_t total = rows * k;
  for (int64_t t = grid_first(); t < total; t += grid_stride()) {
    const int64_t i = t % rows, c = t / rows;
    const V *yc = y + c * ldy;
    V sum = 0;
    for (int64_t p = row_ptr[i]; p < row_ptr[i + 1]; p++) sum += val[p] * yc[col[p]];
    const int64_t ri = rseg > 0 ? (i / rseg) * ldseg + i % rseg : i;
    r[ri + c * ldr] -= sum;
  }
}

/* One block per column (grid-stride over columns); block_threads threads. */
template <typename H>
__global__ void scale_to_half_kernel(const float *__restrict__ b, int64_t inner, int64_t cols,
                                     int64_t ldb, int scale, int *__restrict__ ex,
                                     H *__restrict__ h, int64_t ldh) {
  __shared__ float part[block_threads];
  __shared__ int e_shared;
  for (int64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    const float *bj = b + j * ldb;
    float mx = 0.0f;
    for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) mx = fmaxf(mx, fabsf(bj[i]));
    part[threadIdx.x] = mx;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if ((int)threadIdx.x < w) part[threadIdx.x] = fmaxf(part[threadIdx.x], part[threadIdx.x + w]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      int e = 0;
      const float m = part[0];
      /* fmaxf drops NaN operands; a NaN-only or infinite column keeps e = 0. */
      if (scale && m > 0.0f && isfinite(m)) (void)frexpf(m, &e); /* m = f 2^e, f in [1/2, 1) */
      e_shared = e;
      ex[j] = e;
    }
    __syncthreads();
    const int e = e_shared;
    H *hj = h + j * ldh;
    for (int64_t i = threadIdx.x; i < inner; i += blockDim.x)
      hj[i] = round_to<H>::from(ldexpf(bj[i], -e));
    /* part and e_shared are rewritten for the next column only after every
     * thread has passed this barrier. */
    __syncthreads();
  }
}

__global__ void scale_back_kernel(const float *__restrict__ t, int64_t rows, int64_t cols,
                                  int64_t ldt, const int *__restrict__ ex, float alpha, float beta,
                                  float *__restrict__ c, int64_t ldc) {
  const int64_t total = rows * cols;
  for (int64_t q = grid_first(); q < total; q += grid_stride()) {
    const int64_t i = q % rows, j = q / rows;
    const float s = ldexpf(alpha, ex[j]), tv = t[i + j * ldt];
    float *cq = c + i + j * ldc;
    *cq = beta == 0.0f ? s * tv : beta * *cq + s * tv;
  }
}

__global__ void residual_kernel(int64_t n, const int64_t *__restrict__ row_ptr,
                                const int64_t *__restrict__ col, const double *__restrict__ val,
                                int64_t k, const double *__restrict__ b,
                                const double *__restrict__ x, double *__restrict__ r) {
  const int64_t total = n * k;
  for (int64_t t = grid_first(); t < total; t += grid_stride()) {
    const int64_t i = t % n, c = t / n;
    const double *xc = x + c * n;
    double sum = 0.0;
    for (int64_t p = row_ptr[i]; p < row_ptr[i + 1]; p++) sum += val[p] * xc[col[p]];
    r[t] = b[t] - sum;
  }
}

__global__ void col_sumsq_kernel(const double *__restrict__ x, int64_t n, int64_t k,
                                 double *__restrict__ out) {
  __shared__ double part[block_threads];
  for (int64_t j = blockIdx.x; j < k; j += gridDim.x) {
    const double *xj = x + j * n;
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += xj[i] * xj[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[j] = part[0];
    __syncthreads();
  }
}

static unsigned column_blocks(int64_t cols) {
  return (unsigned)(cols < max_blocks ? cols : max_blocks);
}

}  // namespace fea_cuda

using namespace fea_cuda;

extern "C" int fea_cuda_ph_st_level(double *x, int64_t ld, int64_t k, int64_t n, int64_t s, int p1,
                                    cudaStream_t stream) {
  if (s <= 0 || n % (2 * s) != 0) return (int)cudaErrorInvalidValue;
  const int64_t m = n / (2 * s) - 1, total = m * m * k;
  if (total <= 0) return (int)cudaSuccess;
  st_level_kernel<<<grid_blocks(total), block_threads, 0, stream>>>(x, ld, k, n, s, p1, m);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_ph_s_level(double *x, int64_t ld, int64_t k, int64_t n, int64_t s, int p1,
                                   cudaStream_t stream) {
  if (s <= 0 || n % (2 * s) != 0) return (int)cudaErrorInvalidValue;
  const int64_t m = n / s - 1, total = m * m * k;
  if (total <= 0) return (int)cudaSuccess;
  s_level_kernel<<<grid_blocks(total), block_threads, 0, stream>>>(x, ld, k, n, s, p1, m);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_ph_coarse_gather(const double *x, int64_t ld, int64_t k, int64_t n,
                                         int64_t n0, int64_t r, double *w, cudaStream_t stream) {
  const int64_t total = (n0 - 1) * (n0 - 1) * k;
  if (total <= 0) return (int)cudaSuccess;
  coarse_gather_kernel<<<grid_blocks(total), block_threads, 0, stream>>>(x, ld, k, n, n0, r, w);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_ph_coarse_scatter(const double *w, int64_t k, int64_t n, int64_t n0,
                                          int64_t r, double *x, int64_t ld, cudaStream_t stream) {
  const int64_t total = (n0 - 1) * (n0 - 1) * k;
  if (total <= 0) return (int)cudaSuccess;
  coarse_scatter_kernel<<<grid_blocks(total), block_threads, 0, stream>>>(w, k, n, n0, r, x, ld);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_ph_scale_fine(double *x, int64_t ld, int64_t num, int64_t k,
                                      const double *sd, cudaStream_t stream) {
  const int64_t total = num * k;
  if (total <= 0) return (int)cudaSuccess;
  scale_fine_kernel<<<grid_blocks(total), block_threads, 0, stream>>>(x, ld, num, k, sd);
  return (int)cudaGetLastError();
}

/* The I panel's layout holds the ni = num - nc - ne interior entries of a
 * column: no interior, or blk > 0 dividing ni, ldblk >= blk and ldi >= the
 * ni / blk cell blocks of ldblk rows. */
static bool interior_layout_ok(int64_t num, int64_t nc, int64_t ne, int64_t blk, int64_t ldblk,
                               int64_t ldi) {
  const int64_t ni = num - nc - ne;
  if (ni == 0) return true;
  return blk > 0 && ldblk >= blk && ni % blk == 0 && ldi >= (ni / blk) * ldblk;
}

extern "C" int fea_cuda_ph_gather(const double *x, int64_t num, int64_t k, const int64_t *perm,
                                  int64_t nc, int64_t ne, int vprec, void *wc, int64_t ldc,
                                  void *we, int64_t lde, void *wi, int64_t blk, int64_t ldblk,
                                  int64_t ldi, cudaStream_t stream) {
  const int64_t total = num * k;
  if (total <= 0) return (int)cudaSuccess;
  if (ldc < nc || lde < ne || !interior_layout_ok(num, nc, ne, blk, ldblk, ldi))
    return (int)cudaErrorInvalidValue;
  if (vprec == FEA_F64)
    gather_kernel<double>
        <<<grid_blocks(total), block_threads, 0, stream>>>(x, num, k, perm, nc, ne, (double *)wc,
                                                           ldc, (double *)we, lde, (double *)wi,
                                                           blk, ldblk, ldi);
  else if (vprec == FEA_F32)
    gather_kernel<float>
        <<<grid_blocks(total), block_threads, 0, stream>>>(x, num, k, perm, nc, ne, (float *)wc,
                                                           ldc, (float *)we, lde, (float *)wi, blk,
                                                           ldblk, ldi);
  else
    return (int)cudaErrorInvalidValue;
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_ph_scatter(const void *wc, int64_t ldc, const void *we, int64_t lde,
                                   const void *wi, int64_t blk, int64_t ldblk, int64_t ldi,
                                   int64_t num, int64_t k, const int64_t *perm, int64_t nc,
                                   int64_t ne, int vprec, double *x, cudaStream_t stream) {
  const int64_t total = num * k;
  if (total <= 0) return (int)cudaSuccess;
  if (ldc < nc || lde < ne || !interior_layout_ok(num, nc, ne, blk, ldblk, ldi))
    return (int)cudaErrorInvalidValue;
  if (vprec == FEA_F64)
    scatter_kernel<double>
        <<<grid_blocks(total), block_threads, 0, stream>>>((const double *)wc, ldc,
                                                           (const double *)we, lde,
                                                           (const double *)wi, blk, ldblk, ldi, num,
                                                           k, perm, nc, ne, x);
  else if (vprec == FEA_F32)
    scatter_kernel<float><<<grid_blocks(total), block_threads, 0, stream>>>((const float *)wc, ldc,
                                                                            (const float *)we, lde,
                                                                            (const float *)wi, blk,
                                                                            ldblk, ldi, num, k,
                                                                            perm, nc, ne, x);
  else
    return (int)cudaErrorInvalidValue;
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_ph_csr_sub(int64_t rows, const int64_t *row_ptr, const int64_t *col,
                                   const void *val, int vprec, int64_t k, const void *y,
                                   int64_t ldy, void *r, int64_t ldr, int64_t rseg, int64_t ldseg,
                                   cudaStream_t stream) {
  const int64_t total = rows * k;
  if (total <= 0) return (int)cudaSuccess;
  if (rseg < 0 || (rseg > 0 && (ldseg < rseg || rows % rseg != 0 || ldr < (rows / rseg) * ldseg)) ||
      (rseg == 0 && ldr < rows))
    return (int)cudaErrorInvalidValue;
  if (vprec == FEA_F64)
    csr_sub_kernel<double>
        <<<grid_blocks(total), block_threads, 0, stream>>>(rows, row_ptr, col, (const double *)val,
                                                           k, (const double *)y, ldy, (double *)r,
                                                           ldr, rseg, ldseg);
  else if (vprec == FEA_F32)
    csr_sub_kernel<float>
        <<<grid_blocks(total), block_threads, 0, stream>>>(rows, row_ptr, col, (const float *)val,
                                                           k, (const float *)y, ldy, (float *)r,
                                                           ldr, rseg, ldseg);
  else
    return (int)cudaErrorInvalidValue;
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_ph_scale_to_half(const float *b, int64_t inner, int64_t cols, int64_t ldb,
                                         int prec16, int scale, int *ex, void *h, int64_t ldh,
                                         cudaStream_t stream) {
  if (cols <= 0) return (int)cudaSuccess;
  if (ldb < inner || ldh < inner) return (int)cudaErrorInvalidValue;
  if (prec16 == FEA_F16)
    scale_to_half_kernel<__half>
        <<<column_blocks(cols), block_threads, 0, stream>>>(b, inner, cols, ldb, scale, ex,
                                                            (__half *)h, ldh);
  else if (prec16 == FEA_BF16)
    scale_to_half_kernel<__nv_bfloat16>
        <<<column_blocks(cols), block_threads, 0, stream>>>(b, inner, cols, ldb, scale, ex,
                                                            (__nv_bfloat16 *)h, ldh);
  else
    return (int)cudaErrorInvalidValue;
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_ph_scale_back(const float *t, int64_t rows, int64_t cols, int64_t ldt,
                                      const int *ex, float alpha, float beta, float *c, int64_t ldc,
                                      cudaStream_t stream) {
  const int64_t total = rows * cols;
  if (total <= 0) return (int)cudaSuccess;
  if (ldt < rows || ldc < rows) return (int)cudaErrorInvalidValue;
  scale_back_kernel<<<grid_blocks(total), block_threads, 0, stream>>>(t, rows, cols, ldt, ex, alpha,
                                                                      beta, c, ldc);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_ph_residual(int64_t n, const int64_t *row_ptr, const int64_t *col,
                                    const double *val, int64_t k, const double *b, const double *x,
                                    double *r, cudaStream_t stream) {
  const int64_t total = n * k;
  if (total <= 0) return (int)cudaSuccess;
  residual_kernel<<<grid_blocks(total), block_threads, 0, stream>>>(n, row_ptr, col, val, k, b, x,
                                                                    r);
  return (int)cudaGetLastError();
}

extern "C" int fea_cuda_ph_col_sumsq(const double *x, int64_t n, int64_t k, double *out,
                                     cudaStream_t stream) {
  if (k <= 0) return (int)cudaSuccess;
  col_sumsq_kernel<<<column_blocks(k), block_threads, 0, stream>>>(x, n, k, out);
  return (int)cudaGetLastError();
}
