/* The M1 solve, eqs. (15)-(17) of Ruda et al. 2022, in the working precision: the
 * dense products (C_1^-1, Pi^-1, B, B^T) through the context's GEMM, the
 * sparse D and D^T by CSR loops. Right-hand sides are gathered from the
 * lexicographic order into separate C, E and I panels, so each panel is a
 * column-major matrix with one column per right-hand side, and the I panel
 * (ni x k) is at once the blk x (cells k) matrix of reshaped cell vectors.
 * Panels are in m->vprec (FP64, or FP32 for the FP32 and 16-bit solves); the
 * 16-bit solves round each GEMM operand panel to 16 bits after scaling it
 * (gemm_half). fea_ph_m1_refine, the mixed-precision iterative refinement, is at
 * the end. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/dense.h"
#include "internal/error.h"
#include "base/half.h"
#include "refine-rule.h"
#include "schur-m1-impl.h"

/* r(:, c) -= D y(:, c) and t(:, c) -= D^T x(:, c), for float and double. The
 * sums run in the working precision: that is the point of the FP32 solve. */
#define M1_SPARSE_KERNELS(T, SUF)                                                            \
  static void d_sub_##SUF(const fea_matrix *d, const T *v, fea_index k, const T *y, T *r) {  \
    for (fea_index c = 0; c < k; c++)                                                        \
      for (fea_index e = 0; e < d->rows; e++) {                                              \
        T sum = 0;                                                                           \
        for (fea_index p = d->row_ptr[e]; p < d->row_ptr[e + 1]; p++)                        \
          sum += v[p] * y[d->col_idx[p] + c * d->cols];                                      \
        r[e + c * d->rows] -= sum;                                                           \
      }                                                                                      \
  }                                                                                          \
  static void dt_sub_##SUF(const fea_matrix *d, const T *v, fea_index k, const T *x, T *t) { \
    for (fea_index c = 0; c < k; c++)                                                        \
      for (fea_index e = 0; e < d->rows; e++) {                                              \
        const T xe = x[e + c * d->rows];                                                     \
        for (fea_index p = d->row_ptr[e]; p < d->row_ptr[e + 1]; p++)                        \
          t[d->col_idx[p] + c * d->cols] -= v[p] * xe;                                       \
      }                                                                                      \
  }
M1_SPARSE_KERNELS(double, f64)
M1_SPARSE_KERNELS(float, f32)

static void d_sub(const fea_ph_m1 *m, fea_index k, const void *y, void *r) {
  if (m->vprec == FEA_F64)
    d_sub_f64(m->d, m->dval, k, y, r);
  else
    d_sub_f32(m->d, m->dval, k, y, r);
}

static void dt_sub(const fea_ph_m1 *m, fea_index k, const void *x, void *t) {
  if (m->vprec == FEA_F64)
    dt_sub_f64(m->d, m->dval, k, x, t);
  else
    dt_sub_f32(m->d, m->dval, k, x, t);
}

/* The 16-bit product C := alpha A op(B) + beta C, A (rows x inner after op)
 * in 16 bits, B (inner x cols) and C (rows x cols) FP32 panels. Column j of B
 * is scaled by 2^-e_j, max|B(:, j)| 2^-e_j in [1/2, 1) (exact), rounded to 16
 * bits, multiplied with FP32 output, and scaled back by 2^e_j in FP32
 * (schur-m1.h). With scaling off, e_j = 0. */
static fea_status gemm_half(fea_ph_m1 *m, fea_transpose ta, double alpha, const fea_dmat *A,
                            const float *b, fea_index inner, fea_index cols, double beta,
                            float *c) {
  const fea_index rows = ta ? A->cols : A->rows;
  uint16_t *h = malloc((size_t)(inner * cols) * sizeof *h + 1);
  float *t = malloc((size_t)(rows * cols) * sizeof *t + 1);
  int *ex = malloc((size_t)cols * sizeof *ex + 1);
  fea_status st = FEA_SUCCESS;
  if (!h || !t || !ex)
    st = FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a %lld x %lld 16-bit panel",
                   (long long)inner, (long long)cols);
  for (fea_index j = 0; j < cols && st >= 0; j++) {
    const float *bj = b + j * inner;
    float mx = 0;
    for (fea_index i = 0; i < inner; i++) mx = fmaxf(mx, fabsf(bj[i]));
    int e = 0;
    if (m->scale_rhs && mx > 0 && isfinite(mx)) frexpf(mx, &e); /* mx = f 2^e, f in [1/2, 1) */
    ex[j] = e;
    for (fea_index i = 0; i < inner; i++) {
      const float v = ldexpf(bj[i], -e);
      h[i + j * inner] = m->prec == FEA_F16 ? fea_f32_to_f16(v) : fea_f32_to_bf16(v);
    }
  }
  if (st >= 0) {
    fea_dmat Bm = {h, inner, cols, inner, m->prec}, T = {t, rows, cols, rows, FEA_F32};
    st = fea_dense_gemm(m->ctx, ta, FEA_NO_TRANS, 1.0, A, &Bm, 0.0, &T, FEA_COMPUTE_DEFAULT);
  }
  for (fea_index j = 0; j < cols && st >= 0; j++) {
    const float s = ldexpf((float)alpha, ex[j]);
    float *cj = c + j * rows;
    const float *tj = t + j * rows;
    if (beta == 0)
      for (fea_index i = 0; i < rows; i++) cj[i] = s * tj[i];
    else
      for (fea_index i = 0; i < rows; i++) cj[i] = (float)beta * cj[i] + s * tj[i];
  }
  free(h), free(t), free(ex);
  return st;
}

/* C := alpha op(A) op(B) + beta C with A a working-precision matrix and B, C
 * panels (vprec); empty inner dimensions (no C or E nodes) leave C as it is,
 * which every call here wants (beta = 1 there). */
static fea_status gemm(fea_ph_m1 *m, fea_transpose ta, double alpha, void *a, fea_index ar,
                       fea_index ac, void *b, fea_index br, fea_index bc, double beta, void *c) {
  const fea_index rows = ta ? ac : ar, inner = ta ? ar : ac;
  if (rows == 0 || bc == 0 || inner == 0) return FEA_SUCCESS;
  fea_dmat A = {a, ar, ac, ar, m->prec};
  if (m->prec != m->vprec) return gemm_half(m, ta, alpha, &A, b, br, bc, beta, c);
  fea_dmat B = {b, br, bc, br, m->prec}, C = {c, rows, bc, rows, m->prec};
  return fea_dense_gemm(m->ctx, ta, FEA_NO_TRANS, alpha, &A, &B, beta, &C, FEA_COMPUTE_DEFAULT);
}

static char *at(const fea_ph_m1 *m, void *base, fea_index i) {
  return (char *)base + (size_t)i * m->vsize;
}

/* Column c of b (lexicographic, FP64) into the C, E, I panels. */
static void gather(fea_ph_m1 *m, const double *b, fea_index c, double *tmp, void *wc, void *we,
                   void *wi) {
  for (fea_index p = 0; p < m->num; p++) tmp[p] = b[m->perm[p] + c * m->num];
  fea_convert(FEA_F64, tmp, m->vprec, at(m, wc, c * m->nc), m->nc);
  fea_convert(FEA_F64, tmp + m->nc, m->vprec, at(m, we, c * m->ne), m->ne);
  fea_convert(FEA_F64, tmp + m->nc + m->ne, m->vprec, at(m, wi, c * m->ni), m->ni);
}

static void scatter(fea_ph_m1 *m, void *wc, void *we, void *wi, fea_index c, double *tmp,
                    double *x) {
  fea_convert(m->vprec, at(m, wc, c * m->nc), FEA_F64, tmp, m->nc);
  fea_convert(m->vprec, at(m, we, c * m->ne), FEA_F64, tmp + m->nc, m->ne);
  fea_convert(m->vprec, at(m, wi, c * m->ni), FEA_F64, tmp + m->nc + m->ne, m->ni);
  for (fea_index p = 0; p < m->num; p++) x[m->perm[p] + c * m->num] = tmp[p];
}

/* y := C^-1 v on the I panel (ni x k): with one group a single GEMM with
 * cells k columns; with several, one GEMM per group and right-hand side on
 * the group's m_g cells (Ruda et al. 2022, eq. (25): V_i has m_i columns). */
static fea_status apply_cinv(fea_ph_m1 *m, fea_index k, void *v, void *y) {
  const fea_index blk = m->blk;
  if (m->groups == 1)
    return gemm(m, FEA_NO_TRANS, 1.0, m->cinv, blk, blk, v, blk, m->cells * k, 0.0, y);
  for (fea_index c = 0; c < k; c++)
    for (int g = 0; g < m->groups; g++) {
      const fea_index off = c * m->ni + m->gfirst[g] * blk;
      void *cg = (char *)m->cinv + (size_t)g * (size_t)(blk * blk) * m->esize;
      FEA_CALL(gemm(m, FEA_NO_TRANS, 1.0, cg, blk, blk, at(m, v, off), blk,
                    m->gfirst[g + 1] - m->gfirst[g], 0.0, at(m, y, off)));
    }
  return FEA_SUCCESS;
}

/* Steps (15)-(17) on gathered panels: wc = b_C, we = b_E, wi = b_I in; x_C,
 * x_E in wc, we and x_I in yi out. */
static fea_status steps(fea_ph_m1 *m, fea_index k, void *wc, void *we, void *wi, void *yi,
                        void *re) {
  const fea_index nc = m->nc, ne = m->ne;
  /* y_I = C^-1 b_I: one GEMM over all cells and right-hand sides. */
  FEA_CALL(apply_cinv(m, k, wi, yi));
  /* r_E = b_E - B^T b_C - D y_I */
  memcpy(re, we, (size_t)(ne * k) * m->vsize);
  FEA_CALL(gemm(m, FEA_TRANS, -1.0, m->b, nc, ne, wc, nc, k, 1.0, re));
  d_sub(m, k, yi, re);
  /* x_E = Pi^-1 r_E (a GEMV when k = 1) */
  FEA_CALL(gemm(m, FEA_NO_TRANS, 1.0, m->pinv, ne, ne, re, ne, k, 0.0, we));
  /* x_C = b_C - B x_E */
  FEA_CALL(gemm(m, FEA_NO_TRANS, -1.0, m->b, nc, ne, we, ne, k, 1.0, wc));
  /* x_I = C^-1 (b_I - D^T x_E) */
  dt_sub(m, k, we, wi);
  return apply_cinv(m, k, wi, yi);
}

fea_status fea_ph_m1_solve(fea_ph_m1 *m, fea_index k, const double *b, double *x) {
  FEA_CHECK_NULL(m, NULL);
  FEA_CHECK(k >= 0, m->ctx, FEA_ERR_INVALID_ARG, "%lld right-hand sides", (long long)k);
  if (k == 0) return FEA_SUCCESS;
  FEA_CHECK_NULL(b, m->ctx);
  FEA_CHECK_NULL(x, m->ctx);
  FEA_CHECK(m->pinv || m->ne == 0, m->ctx, FEA_ERR_STATE,
            "this M1 was set up for a device, which holds Pi^-1: it solves there");
  const size_t es = m->vsize, nk = (size_t)k;
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

fea_status fea_ph_m1_solve_nodal(fea_ph_m1 *m, fea_ph_factor *f, fea_index k, double *bh) {
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
  FEA_CALL(fea_ph_forward_many(f, k, bh));
  FEA_CALL(fea_ph_m1_solve(m, k, bh, bh));
  FEA_CALL(fea_ph_backward_many(f, k, bh));
  return FEA_SUCCESS;
}

void fea_ph_m1_set_rhs_scaling(fea_ph_m1 *m, int enabled) {
  if (m) m->scale_rhs = enabled != 0;
}

static double norm2(fea_index n, const double *x) {
  double s = 0;
  for (fea_index i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

/* r := b - A x per column, FP64; relres := max over columns with b != 0 of
 * ||r|| / ||b||; *done: every column meets refine-rule.h's rule. */
static fea_status residual(const fea_matrix *A, fea_index n, fea_index k, const double *b,
                           const double *x, const double *bnorm, double anorm, double rtol,
                           double *r, double *relres, int *done) {
  *relres = 0;
  *done = 1;
  for (fea_index c = 0; c < k; c++) {
    fea_csr_multiply_vector(A, x + c * n, r + c * n);
    for (fea_index i = 0; i < n; i++) r[i + c * n] = b[i + c * n] - r[i + c * n];
    const double rn = norm2(n, r + c * n);
    if (bnorm[c] > 0) *relres = fmax(*relres, rn / bnorm[c]);
    if (!fea_ph_refine_column_done(rn, norm2(n, x + c * n), bnorm[c], anorm, rtol)) *done = 0;
  }
  return FEA_SUCCESS;
}

fea_status fea_ph_m1_refine(fea_ph_m1 *m, fea_ph_factor *f, const fea_matrix *A, fea_index k,
                            const double *bh, double *xh, double rtol, int max_iter, int *iters,
                            double *relres) {
  FEA_CHECK_NULL(m, NULL);
  FEA_CHECK_NULL(f, m->ctx);
  FEA_CHECK_NULL(A, m->ctx);
  FEA_CHECK(k >= 0, m->ctx, FEA_ERR_INVALID_ARG, "%lld right-hand sides", (long long)k);
  FEA_CHECK(rtol > 0 && isfinite(rtol), m->ctx, FEA_ERR_INVALID_ARG,
            "refinement tolerance %g is not positive", rtol);
  FEA_CHECK(max_iter >= 1, m->ctx, FEA_ERR_INVALID_ARG, "refinement limit %d < 1", max_iter);
  FEA_CHECK(A->rows == m->num && A->cols == m->num, m->ctx, FEA_ERR_DIMENSION,
            "nodal matrix is %lld x %lld, the solver has %lld unknowns", (long long)A->rows,
            (long long)A->cols, (long long)m->num);
  if (iters) *iters = 0;
  if (relres) *relres = 0;
  if (k == 0) return FEA_SUCCESS;
  FEA_CHECK_NULL(bh, m->ctx);
  FEA_CHECK_NULL(xh, m->ctx);
  const fea_index n = m->num;
  double *r = malloc((size_t)(n * k) * sizeof *r), *bn = malloc((size_t)k * sizeof *bn);
  fea_status st = FEA_SUCCESS;
  if (!r || !bn)
    st = FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld residuals of %lld unknowns",
                   (long long)k, (long long)n);
  double rel = 0, prev = INFINITY;
  int it = 0, done = 1, slow = 0;
  if (st >= 0) {
    const double anorm = fea_ph_csr_norm_inf(A);
    for (fea_index c = 0; c < k; c++) bn[c] = norm2(n, bh + c * n);
    memset(xh, 0, (size_t)(n * k) * sizeof *xh);
    memcpy(r, bh, (size_t)(n * k) * sizeof *r); /* r_0 = b - A 0 */
    for (fea_index c = 0; c < k; c++)
      if (bn[c] > 0) rel = 1.0, done = 0;
    /* Stop when every column is done (refine-rule.h), at the limit, or when
     * two corrections in a row failed to halve the residual. */
    while (st >= 0 && !done && it < max_iter && slow < 2) {
      st = fea_ph_m1_solve_nodal(m, f, k, r); /* r := correction */
      if (st < 0) break;
      for (fea_index i = 0; i < n * k; i++) xh[i] += r[i];
      it++;
      st = residual(A, n, k, bh, xh, bn, anorm, rtol, r, &rel, &done);
      slow = rel > FEA_PH_REFINE_MIN_REDUCTION * prev ? slow + 1 : 0;
      prev = rel;
    }
  }
  free(r), free(bn);
  if (st < 0) return st;
  if (iters) *iters = it;
  if (relres) *relres = rel;
  if (!done) {
    fea_log(m->ctx, FEA_LOG_WARN,
            "M1 refinement in %s: relative residual %.3g > %.3g after %d corrections%s",
            fea_precision_name(m->prec), rel, rtol, it,
            slow >= 2 ? " (stagnated: the last two did not halve it)" : "");
    return FEA_WARN_NOT_CONVERGED;
  }
  if (rel > rtol)
    fea_log(m->ctx, FEA_LOG_INFO,
            "M1 refinement in %s stopped at FP64's rounding floor after %d corrections: "
            "relative residual %.3g above refine_rtol %.3g, backward error below %g eps",
            fea_precision_name(m->prec), it, rel, rtol, FEA_PH_REFINE_FLOOR_FACTOR);
  return FEA_SUCCESS;
}
