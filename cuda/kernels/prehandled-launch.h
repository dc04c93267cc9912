/* Launchers of the prehandled-solver kernels (kernels/prehandled.cu), callable
 * from cuda/prehandled-cuda.c. Vectors of k columns are column-major with the leading
 * dimension given; nodal vectors run over the (n - 1)^2 interior nodes of the
 * grid in lexicographic order, x fastest (src/prehandled/prehandle.h). Indices
 * are int64_t, precisions fea_precision values.
 *
 * No kernel here has two threads write one entry, and none reads an entry
 * that another thread of the same launch writes: each thread owns the
 * output entries it computes (a node of a column, a row of a column, or a
 * whole column with its own block). Each launcher returns the cudaError_t of
 * the launch as an int; empty sizes launch nothing and succeed. */
#ifndef FEA_CUDA_PH_LAUNCH_H
#define FEA_CUDA_PH_LAUNCH_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One level of x := S^T x with grid step s (level k: s = r >> k): every node
 * whose indices are both multiples of 2s gains the weighted values of the
 * nodes new on this level that have it as a parent (1/2 along edges and P1
 * diagonals, 1/4 from Q1 cell centres). Only the parents are written, only
 * the new nodes read. p1: P1 triangles cut along (0,0)-(1,1). */
int fea_cuda_ph_st_level(double *x, int64_t ld, int64_t k, int64_t n, int64_t s, int p1,
                         cudaStream_t stream);

/* One level of x := S x with grid step s: every node new on this level
 * gains the weighted values of its interior parents. Only new nodes are
 * written, only parents read. */
int fea_cuda_ph_s_level(double *x, int64_t ld, int64_t k, int64_t n, int64_t s, int p1,
                        cudaStream_t stream);

/* w(c, j) := x(coarse node c, j) (gather, nc x k, ld nc) or the reverse
 * (scatter): coarse node c of the (n0 - 1)^2 coarse interior nodes,
 * lexicographic, sits at grid indices ((c % (n0 - 1) + 1) r, (c / (n0 - 1) + 1) r). */
int fea_cuda_ph_coarse_gather(const double *x, int64_t ld, int64_t k, int64_t n, int64_t n0,
                              int64_t r, double *w, cudaStream_t stream);
int fea_cuda_ph_coarse_scatter(const double *w, int64_t k, int64_t n, int64_t n0, int64_t r,
                               double *x, int64_t ld, cudaStream_t stream);

/* x(i, j) /= sd(i) where sd(i) > 0 (the non-coarse part of L^-1 and L^-T). */
int fea_cuda_ph_scale_fine(double *x, int64_t ld, int64_t num, int64_t k, const double *sd,
                           cudaStream_t stream);

/* Split k nodal columns (FP64, ld num) into the C, E, I panels in vprec (FP64
 * or FP32): position p < nc goes to wc (nc x k, ld ldc >= nc), p < nc + ne to
 * we (ne x k, ld lde >= ne), else to wi, with the value of node perm[p].
 * The I panel holds the ni = num - nc - ne interior entries of a column as
 * ni / blk cell blocks of blk rows: interior entry q of column j sits at
 * (q / blk) ldblk + q % blk + j ldi (ldblk >= blk, ldi >= (ni / blk) ldblk),
 * i.e. the panel is blk x (cells k) with leading dimension ldblk. Rows past
 * nc, ne or blk of a column are neither read nor written. Scatter is the
 * reverse (widening). */
int fea_cuda_ph_gather(const double *x, int64_t num, int64_t k, const int64_t *perm, int64_t nc,
                       int64_t ne, int vprec, void *wc, int64_t ldc, void *we, int64_t lde,
                       void *wi, int64_t blk, int64_t ldblk, int64_t ldi, cudaStream_t stream);
int fea_cuda_ph_scatter(const void *wc, int64_t ldc, const void *we, int64_t lde, const void *wi,
                        int64_t blk, int64_t ldblk, int64_t ldi, int64_t num, int64_t k,
                        const int64_t *perm, int64_t nc, int64_t ne, int vprec, double *x,
                        cudaStream_t stream);

/* r(i, j) -= sum_p val[p] y(col[p], j) over row i of a CSR matrix of `rows`
 * rows; y has leading dimension ldy, r ldr; val, y, r in vprec (FP64 or
 * FP32), the sum in vprec (as the CPU's D products). One thread per (i, j).
 * rseg = 0: row i of column j is r[i + j ldr]; rseg > 0 (rows a multiple of
 * it): rows come in segments of rseg stored ldseg apart, row i at
 * (i / rseg) ldseg + i % rseg + j ldr (the I panel of gather with rseg =
 * blk, ldseg = ldblk, ldr = ldi). */
int fea_cuda_ph_csr_sub(int64_t rows, const int64_t *row_ptr, const int64_t *col, const void *val,
                        int vprec, int64_t k, const void *y, int64_t ldy, void *r, int64_t ldr,
                        int64_t rseg, int64_t ldseg, cudaStream_t stream);

/* The operand of a 16-bit GEMM (schur-m1.h): column j of the FP32 panel b
 * (inner x cols, ld ldb) is multiplied by 2^-e_j, e_j the exponent with
 * max|b(:, j)| 2^-e_j in [1/2, 1) (e_j = 0 when scale is 0 or the column is
 * zero or not finite), and rounded to prec16 (FEA_F16 or FEA_BF16) into h
 * (inner x cols, ld ldh); ex[j] := e_j. One thread block per column. */
int fea_cuda_ph_scale_to_half(const float *b, int64_t inner, int64_t cols, int64_t ldb, int prec16,
                              int scale, int *ex, void *h, int64_t ldh, cudaStream_t stream);

/* c(i, j) := beta c(i, j) + alpha 2^ex[j] t(i, j) (rows x cols, FP32; t with
 * ld ldt, c with ld ldc); beta == 0 does not read c. */
int fea_cuda_ph_scale_back(const float *t, int64_t rows, int64_t cols, int64_t ldt, const int *ex,
                           float alpha, float beta, float *c, int64_t ldc, cudaStream_t stream);

/* r(i, j) := b(i, j) - sum_p val[p] x(col[p], j), FP64, n rows, k columns, ld n. */
int fea_cuda_ph_residual(int64_t n, const int64_t *row_ptr, const int64_t *col, const double *val,
                         int64_t k, const double *b, const double *x, double *r,
                         cudaStream_t stream);

/* out[j] := sum_i x(i, j)^2 (n x k, ld n), one thread block per column, a
 * fixed reduction order (deterministic). */
int fea_cuda_ph_col_sumsq(const double *x, int64_t n, int64_t k, double *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
