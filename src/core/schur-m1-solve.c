/* The M1 solve, steps (15)-(17) of the spec, in the working precision: the
 * dense products (C_1^-1, Pi^-1, B, B^T) through the context's GEMM, the
 * sparse D and D^T by CSR loops. Right-hand sides are gathered from the
 * lexicographic order into separate C, E and I panels, so each panel is a
 * column-major matrix with one column per right-hand side, and the I panel
 * (ni x k) is at once the blk x (cells k) matrix of reshaped cell vectors. */
#include <stdlib.h>
#include <string.h>

#include "dense.h"
#include "error.h"
#include "half.h"
#include "schur-m1-impl.h"

/* r(:, c) -= D y(:, c) and t(:, c) -= D^T x(:, c), for float and double. The
 * sums run in the working precision: that is the point of the FP32 solve. */
#define M1_SPARSE_KERNELS(T, SUF)                                                                 \
  static void d_sub_##SUF(const fea_matrix *d, const T *v, fea_index k, const T *y, T *r) {       \
    for (fea_index c = 0; c < k; c++)                                                             \
      for (fea_index e = 0; e < d->rows; e++) {                                                   \
        T sum = 0;                                                                                \
        for (fea_index p = d->row_ptr[e]; p < d->row_ptr[e + 1]; p++)                             \
          sum += v[p] * y[d->col_idx[p] + c * d->cols];                                           \
        r[e + c * d->rows] -= sum;                                                                \
      }                                                                                           \
  }                                                                                               \
  static void dt_sub_##SUF(const fea_matrix *d, const T *v, fea_index k, const T *x, T *t) {      \
    for (fea_index c = 0; c < k; c++)                                                             \
      for (fea_index e = 0; e < d->rows; e++) {                                                   \
        const T xe = x[e + c * d->rows];                                                          \
        for (fea_index p = d->row_ptr[e]; p < d->row_ptr[e + 1]; p++)                             \
          t[d->col_idx[p] + c * d->cols] -= v[p] * xe;                                            \
      }                                                                                           \
  }
M1_SPARSE_KERNELS(double, f64)
M1_SPARSE_KERNELS(float, f32)

static void d_sub(const fea_m1 *m, fea_index k, const void *y, void *r) {
  if (m->prec == FEA_F64) d_sub_f64(m->d, m->dval, k, y, r);
  else d_sub_f32(m->d, m->dval, k, y, r);
}

static void dt_sub(const fea_m1 *m, fea_index k, const void *x, void *t) {
  if (m->prec == FEA_F64) dt_sub_f64(m->d, m->dval, k, x, t);
  else dt_sub_f32(m->d, m->dval, k, x, t);
}

/* C := alpha op(A) op(B) + beta C on working-precision panels; empty inner
 * dimensions (no C or E nodes) leave C as it is, which every call here wants
 * (beta = 1 there). */
static fea_status gemm(fea_m1 *m, fea_transpose ta, double alpha, void *a, fea_index ar,
                       fea_index ac, void *b, fea_index br, fea_index bc, double beta, void *c) {
  const fea_index rows = ta ? ac : ar, inner = ta ? ar : ac;
  if (rows == 0 || bc == 0 || inner == 0) return FEA_SUCCESS;
  fea_dmat A = {a, ar, ac, ar, m->prec}, B = {b, br, bc, br, m->prec};
  fea_dmat C = {c, rows, bc, rows, m->prec};
  return fea_dense_gemm(m->ctx, ta, FEA_NO_TRANS, alpha, &A, &B, beta, &C, FEA_COMPUTE_DEFAULT);
}

static char *at(const fea_m1 *m, void *base, fea_index i) {
  return (char *)base + (size_t)i * m->esize;
}

/* Column c of b (lexicographic, FP64) into the C, E, I panels. */
static void gather(fea_m1 *m, const double *b, fea_index c, double *tmp, void *wc, void *we,
                   void *wi) {
  for (fea_index p = 0; p < m->num; p++) tmp[p] = b[m->perm[p] + c * m->num];
  fea_convert(FEA_F64, tmp, m->prec, at(m, wc, c * m->nc), m->nc);
  fea_convert(FEA_F64, tmp + m->nc, m->prec, at(m, we, c * m->ne), m->ne);
  fea_convert(FEA_F64, tmp + m->nc + m->ne, m->prec, at(m, wi, c * m->ni), m->ni);
}

static void scatter(fea_m1 *m, void *wc, void *we, void *wi, fea_index c, double *tmp, double *x) {
  fea_convert(m->prec, at(m, wc, c * m->nc), FEA_F64, tmp, m->nc);
  fea_convert(m->prec, at(m, we, c * m->ne), FEA_F64, tmp + m->nc, m->ne);
  fea_convert(m->prec, at(m, wi, c * m->ni), FEA_F64, tmp + m->nc + m->ne, m->ni);
  for (fea_index p = 0; p < m->num; p++) x[m->perm[p] + c * m->num] = tmp[p];
}

/* Steps (15)-(17) on gathered panels: wc = b_C, we = b_E, wi = b_I in; x_C,
 * x_E in wc, we and x_I in yi out. */
static fea_status steps(fea_m1 *m, fea_index k, void *wc, void *we, void *wi, void *yi, void *re) {
  const fea_index nc = m->nc, ne = m->ne, blk = m->blk, cols = m->cells * k;
  /* y_I = C^-1 b_I: one GEMM over all cells and right-hand sides. */
  FEA_CALL(gemm(m, FEA_NO_TRANS, 1.0, m->cinv, blk, blk, wi, blk, cols, 0.0, yi));
  /* r_E = b_E - B^T b_C - D y_I */
  memcpy(re, we, (size_t)(ne * k) * m->esize);
  FEA_CALL(gemm(m, FEA_TRANS, -1.0, m->b, nc, ne, wc, nc, k, 1.0, re));
  d_sub(m, k, yi, re);
  /* x_E = Pi^-1 r_E (a GEMV when k = 1) */
  FEA_CALL(gemm(m, FEA_NO_TRANS, 1.0, m->pinv, ne, ne, re, ne, k, 0.0, we));
  /* x_C = b_C - B x_E */
  FEA_CALL(gemm(m, FEA_NO_TRANS, -1.0, m->b, nc, ne, we, ne, k, 1.0, wc));
  /* x_I = C^-1 (b_I - D^T x_E) */
  dt_sub(m, k, we, wi);
  return gemm(m, FEA_NO_TRANS, 1.0, m->cinv, blk, blk, wi, blk, cols, 0.0, yi);
}

fea_status fea_m1_solve(fea_m1 *m, fea_index k, const double *b, double *x) {
  FEA_CHECK_NULL(m, NULL);
  FEA_CHECK(k >= 0, m->ctx, FEA_ERR_INVALID_ARG, "%lld right-hand sides", (long long)k);
  if (k == 0) return FEA_SUCCESS;
  FEA_CHECK_NULL(b, m->ctx);
  FEA_CHECK_NULL(x, m->ctx);
  const size_t es = m->esize, nk = (size_t)k;
  void *wc = malloc(es * nk * (size_t)m->nc + 1), *we = malloc(es * nk * (size_t)m->ne + 1);
  void *wi = malloc(es * nk * (size_t)m->ni + 1), *yi = malloc(es * nk * (size_t)m->ni + 1);
  void *re = malloc(es * nk * (size_t)m->ne + 1);
  double *tmp = malloc((size_t)m->num * sizeof *tmp);
  fea_status st = FEA_SUCCESS;
  if (!wc || !we || !wi || !yi || !re || !tmp)
    st = FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY,
                   "no memory for the workspace of %lld right-hand sides of %lld unknowns",
                   (long long)k, (long long)m->num);
  if (st >= 0) {
    for (fea_index c = 0; c < k; c++) gather(m, b, c, tmp, wc, we, wi);
    st = steps(m, k, wc, we, wi, yi, re);
  }
  if (st >= 0)
    for (fea_index c = 0; c < k; c++) scatter(m, wc, we, yi, c, tmp, x);
  free(wc), free(we), free(wi), free(yi), free(re), free(tmp);
  return st;
}

fea_status fea_m1_solve_nodal(fea_m1 *m, fea_ph_factor *f, fea_index k, double *bh) {
  FEA_CHECK_NULL(m, NULL);
  FEA_CHECK_NULL(f, m->ctx);
  FEA_CHECK(k >= 0, m->ctx, FEA_ERR_INVALID_ARG, "%lld right-hand sides", (long long)k);
  if (k == 0) return FEA_SUCCESS;
  FEA_CHECK_NULL(bh, m->ctx);
  fea_index nc = 0;
  fea_ph_factor_coarse(f, &nc);
  FEA_CHECK(nc == m->nc, m->ctx, FEA_ERR_INVALID_ARG,
            "factor with %lld coarse nodes, the solver was set up with %lld", (long long)nc,
            (long long)m->nc);
  for (fea_index c = 0; c < k; c++) FEA_CALL(fea_ph_forward(f, bh + c * m->num));
  FEA_CALL(fea_m1_solve(m, k, bh, bh));
  for (fea_index c = 0; c < k; c++) FEA_CALL(fea_ph_backward(f, bh + c * m->num));
  return FEA_SUCCESS;
}
