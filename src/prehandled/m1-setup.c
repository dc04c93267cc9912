/* Setup of method M1 (Ruda et al. 2022, §4.1): the blocks of the prehandled
 * matrix, the Schur complements Lambda and Pi in FP64, the explicit inverses
 * C_1^-1 and Pi^-1, and their conversion to the working precision (FP64,
 * FP32, or FP16/BF16 with D and the vectors in FP32). The solve and the
 * iterative refinement are in m1-solve.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "linalg/csr-product.h"
#include "linalg/dense.h"
#include "internal/error.h"
#include "base/half.h"
#include "base/progress.h"
#include "internal/prehandled-device.h"
#include "schur-m1-impl.h"
#include "spd-inverse.h"

/* Entries the method assumes to vanish (A_CI, couplings between macro cells)
 * or to repeat (the cell blocks) must do so up to this many times the largest
 * diagonal of S^T A_h S: round-off of the transform is ~1e-15 (measured). */
#define M1_STRUCTURE_TOL 1e-10

void fea_ph_m1_destroy(fea_ph_m1 **m) {
  if (!m || !*m) return;
  fea_ph_m1 *s = *m;
  free(s->perm);
  free(s->gfirst);
  free(s->cell_group);
  free(s->b);
  free(s->cinv);
  free(s->pinv);
  free(s->dval);
  FEA_OBJECT_DROP(s->d);
  fea_object_release(s->ctx);
  free(s);
  *m = NULL;
}

void fea_ph_m1_get_info(const fea_ph_m1 *m, fea_ph_m1_info *info) {
  *info = (fea_ph_m1_info){m->nc,   m->ne, m->ni,        m->cells, m->blk,
                           m->prec, 0,     m->scale_rhs, m->groups};
  info->dense_bytes = m->esize *
                      (size_t)(m->nc * m->ne + m->groups * m->blk * m->blk + m->ne * m->ne);
}

void fea_ph_m1_export(const fea_ph_m1 *m, fea_ph_m1_device_data *data) {
  data->nc = m->nc, data->ne = m->ne, data->ni = m->ni;
  data->cells = m->cells, data->blk = m->blk;
  data->prec = m->prec;
  data->vprec = m->vprec;
  data->scale_rhs = m->scale_rhs;
  data->perm = m->perm;
  data->b = m->b;
  data->cinv = m->cinv;
  data->pinv = m->pinv;
  data->d = m->d;
  data->dval = m->dval;
}

/* The FP64 blocks while setting up; freed once converted. */
typedef struct m1_setup {
  double *sd;      /* sqrt(diag At) per lexicographic node: the scaling of L */
  double *bt;      /* nc x ne: At_CE scaled, then B = L0^-1 (At_CE / sqrt(d_E)) */
  double *lambda;  /* ne x ne: E, then Lambda, Pi, and Pi's Cholesky factor */
  double *c1;      /* groups x blk x blk: each group's first cell's block, then its factor */
  double *cinv;    /* groups x blk x blk */
  double *pinv;    /* ne x ne */
  fea_matrix *dt;  /* ni x ne: D^T */
  int have_lambda; /* lambda is allocated (not in a C_1-only diagnostic) */
} m1_setup;

static void setup_free(m1_setup *w) {
  free(w->sd);
  free(w->bt);
  free(w->lambda);
  free(w->c1);
  free(w->cinv);
  free(w->pinv);
  FEA_OBJECT_DROP(w->dt);
}

static double *dalloc(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

/* One pass over At: B's raw block, E, D^T (unsorted rows) and C_1, with the
 * checks of A_CI = 0 and of block-diagonal A_II. */
static fea_status extract(fea_ph_m1 *m, const fea_ph_split *s, const fea_matrix *At, m1_setup *w,
                          double tol) {
  fea_context *ctx = m->ctx;
  const fea_index nc = m->nc, ne = m->ne, i0 = nc + ne, blk = m->blk;
  fea_index dnnz = 0;
  for (fea_index l = 0; l < m->num; l++)
    if (s->pos[l] >= nc && s->pos[l] < i0)
      for (fea_index k = At->row_ptr[l]; k < At->row_ptr[l + 1]; k++)
        dnnz += s->pos[At->col_idx[k]] >= i0;
  /* D^T is filled by rows of At in the I part: count per I row first. */
  fea_matrix *dt;
  FEA_CALL(fea_matrix_alloc(ctx, m->ni, ne, dnnz, &dt));
  w->dt = dt;
  for (fea_index l = 0; l < m->num; l++) {
    const fea_index p = s->pos[l];
    if (p < i0) continue;
    for (fea_index k = At->row_ptr[l]; k < At->row_ptr[l + 1]; k++) {
      const fea_index q = s->pos[At->col_idx[k]];
      if (q >= nc && q < i0) dt->row_ptr[p - i0 + 1]++;
    }
  }
  for (fea_index r = 0; r < m->ni; r++) dt->row_ptr[r + 1] += dt->row_ptr[r];
  FEA_CHECK(dt->row_ptr[m->ni] == dnnz, ctx, FEA_ERR_INVALID_ARG,
            "S^T A_h S is not symmetric: %lld entries in A_EI, %lld in A_IE", (long long)dnnz,
            (long long)dt->row_ptr[m->ni]);
  fea_index *next = malloc((size_t)(m->ni ? m->ni : 1) * sizeof *next);
  FEA_CHECK(next, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld row pointers", (long long)m->ni);
  memcpy(next, dt->row_ptr, (size_t)m->ni * sizeof *next);
  fea_status st = FEA_SUCCESS;
  for (fea_index l = 0; l < m->num && st >= 0; l++) {
    const fea_index p = s->pos[l];
    for (fea_index k = At->row_ptr[l]; k < At->row_ptr[l + 1]; k++) {
      const fea_index col = At->col_idx[k], q = s->pos[col];
      const double v = At->values[k];
      if (p < nc) {
        if (q >= nc && q < i0)
          w->bt[p + (q - nc) * nc] = v / w->sd[col];
        else if (q >= i0 && fabs(v) > tol) {
          st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                         "A_CI(%lld, %lld) = %.3g is not zero: the grid is not one M1 covers",
                         (long long)p, (long long)(q - i0), v);
          break;
        }
      } else if (p < i0) {
        if (q >= nc && q < i0 && w->have_lambda)
          w->lambda[(p - nc) + (q - nc) * ne] = v / (w->sd[l] * w->sd[col]);
      } else if (q >= nc && q < i0) {
        const fea_index r = next[p - i0]++;
        dt->col_idx[r] = q - nc;
        dt->values[r] = v / (w->sd[l] * w->sd[col]);
      } else if (q >= i0) {
        const fea_index cp = (p - i0) / blk, cq = (q - i0) / blk;
        if (cp != cq && fabs(v) > tol) {
          st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                         "A_II couples macro cells %lld and %lld (entry %.3g)", (long long)cp,
                         (long long)cq, v);
          break;
        }
        const fea_index g = m->cell_group[cp];
        if (cp == cq && cp == m->gfirst[g])
          w->c1[(size_t)g * blk * blk + (p - cp * blk - i0) + (q - cq * blk - i0) * blk] =
              v / (w->sd[l] * w->sd[col]);
      }
    }
  }
  free(next);
  return st;
}

/* Every macro cell's block equals its group's first cell's: the reason one
 * C_i is stored per group. */
static fea_status check_cells(fea_ph_m1 *m, const fea_ph_split *s, const fea_matrix *At,
                              const m1_setup *w, double tol) {
  const fea_index i0 = m->nc + m->ne, blk = m->blk;
  for (fea_index l = 0; l < m->num; l++) {
    const fea_index p = s->pos[l];
    if (p < i0) continue;
    const fea_index cell = (p - i0) / blk, lp = (p - i0) % blk;
    for (fea_index k = At->row_ptr[l]; k < At->row_ptr[l + 1]; k++) {
      const fea_index col = At->col_idx[k], q = s->pos[col];
      if (q < i0 || (q - i0) / blk != cell) continue;
      const fea_index lq = (q - i0) % blk;
      const fea_index g = m->cell_group[cell];
      const double v = At->values[k] / (w->sd[l] * w->sd[col]);
      const double ref = w->c1[(size_t)g * blk * blk + lp + lq * blk];
      FEA_CHECK(fabs(v - ref) <= tol, m->ctx, FEA_ERR_INVALID_ARG,
                "block of macro cell %lld differs from cell %lld (its group's first) at (%lld, "
                "%lld): %.17g vs %.17g",
                (long long)cell, (long long)m->gfirst[g], (long long)lp, (long long)lq, v, ref);
    }
  }
  return FEA_SUCCESS;
}

/* inv := A^-1 from the potrf factor of A (the LAPACK potri result, through
 * potrs on the identity so only the library's dense ops are used), in
 * pieces that report progress (spd-inverse.c). */
static fea_status invert_spd(fea_context *ctx, double *a, double *inv, fea_index n,
                             const char *what, const char *phase) {
  return fea_ph_spd_inverse(ctx, a, inv, n, what, phase);
}

/* Columns per GEMM of Pi = Lambda - B^T B (ne x ne from nc x ne): all of
 * them unless one GEMM would exceed 4e9 flops, a progress report's share of
 * work (spd-inverse.c's pieces). A constant, so the digits do not follow
 * the machine; columns are independent in a GEMM anyway. */
static fea_index schur_panel(fea_index ne, fea_index nc) {
  const double per_column = 2.0 * (double)ne * (double)nc;
  const double w = 4e9 / (per_column > 1 ? per_column : 1);
  return w >= (double)ne ? ne : w < 64 ? 64 : (fea_index)w;
}

/* Lambda -= D C^-1 D^T, macro cell by macro cell: cell c couples only to the
 * E nodes on its boundary, so each cell is two small GEMMs on those rows. */
static fea_status schur_interior(fea_ph_m1 *m, m1_setup *w) {
  fea_context *ctx = m->ctx;
  const fea_index blk = m->blk, ne = m->ne;
  const fea_matrix *dt = w->dt;
  if (blk == 0 || ne == 0) return FEA_SUCCESS;
  fea_index *slot = malloc((size_t)ne * sizeof *slot), *rows = malloc((size_t)ne * sizeof *rows);
  fea_index kmax = 0;
  if (slot && rows) {
    for (fea_index e = 0; e < ne; e++) slot[e] = -1;
    for (fea_index c = 0; c < m->cells; c++) {
      fea_index k = 0;
      for (fea_index r = c * blk; r < (c + 1) * blk; r++)
        for (fea_index p = dt->row_ptr[r]; p < dt->row_ptr[r + 1]; p++)
          if (slot[dt->col_idx[p]] < 0) slot[dt->col_idx[p]] = k, rows[k++] = dt->col_idx[p];
      for (fea_index a = 0; a < k; a++) slot[rows[a]] = -1;
      if (k > kmax) kmax = k;
    }
  }
  double *dc = dalloc((size_t)(kmax * blk)), *wk = dalloc((size_t)(kmax * blk));
  double *g = dalloc((size_t)(kmax * kmax));
  fea_status st = FEA_SUCCESS;
  if (!slot || !rows || !dc || !wk || !g)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                   "no memory for the E rows of a macro cell (%lld x %lld)", (long long)kmax,
                   (long long)blk);
  for (fea_index c = 0; c < m->cells && st >= 0; c++) {
    if ((st = fea_progress_of(ctx, FEA_PROGRESS_PH_SCHUR, 0.5 * (double)c, (double)m->cells)) < 0)
      break;
    fea_index k = 0;
    for (fea_index r = c * blk; r < (c + 1) * blk; r++)
      for (fea_index p = dt->row_ptr[r]; p < dt->row_ptr[r + 1]; p++)
        if (slot[dt->col_idx[p]] < 0) slot[dt->col_idx[p]] = k, rows[k++] = dt->col_idx[p];
    if (k == 0) continue;
    memset(dc, 0, (size_t)(k * blk) * sizeof *dc);
    for (fea_index l = 0; l < blk; l++)
      for (fea_index p = dt->row_ptr[c * blk + l]; p < dt->row_ptr[c * blk + l + 1]; p++)
        dc[slot[dt->col_idx[p]] + l * k] = dt->values[p];
    fea_dmat D = {dc, k, blk, k, FEA_F64}, W = {wk, k, blk, k, FEA_F64};
    double *ci = w->cinv + (size_t)m->cell_group[c] * blk * blk;
    fea_dmat Ci = {ci, blk, blk, blk, FEA_F64}, G = {g, k, k, k, FEA_F64};
    st = fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1.0, &D, &Ci, 0.0, &W,
                        FEA_COMPUTE_DEFAULT);
    if (st >= 0)
      st = fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_TRANS, 1.0, &W, &D, 0.0, &G, FEA_COMPUTE_DEFAULT);
    for (fea_index b = 0; b < k && st >= 0; b++)
      for (fea_index a = 0; a < k; a++) w->lambda[rows[a] + rows[b] * ne] -= g[a + b * k];
    for (fea_index a = 0; a < k; a++) slot[rows[a]] = -1;
  }
  free(slot), free(rows), free(dc), free(wk), free(g);
  return st;
}

/* The largest finite FP16 value: a matrix entry above it would be infinite. */
#define M1_F16_MAX 65504.0

/* A copy of n doubles in precision prec (the matrices: m->prec; D: m->vprec).
 * what names the matrix for the FP16 range check. */
static fea_status convert_copy(fea_ph_m1 *m, const double *src, size_t n, fea_precision prec,
                               const char *what, void **dst, double *done, double total) {
  if (prec == FEA_F16)
    for (size_t i = 0; i < n; i++)
      FEA_CHECK(fabs(src[i]) <= M1_F16_MAX, m->ctx, FEA_ERR_UNSUPPORTED,
                "%s has the entry %.6g, beyond FP16's range (65504): use BF16 or FP32", what,
                src[i]);
  const size_t es = prec == FEA_F64 ? 8 : prec == FEA_F32 ? 4 : 2;
  *dst = malloc((n ? n : 1) * es);
  FEA_CHECK(*dst, m->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %zu %s entries", n,
            fea_precision_name(prec));
  /* In chunks that report progress: Pi^-1 at h = 1/512 is 1.8 GB of fresh
   * pages, seconds of first touches on a virtual machine. */
  const size_t chunk = (size_t)1 << 22;
  for (size_t i = 0; i < n; i += chunk) {
    const size_t len = n - i < chunk ? n - i : chunk;
    fea_convert(FEA_F64, src + i, prec, (char *)*dst + i * es, (fea_index)len);
    *done += (double)len;
    FEA_CALL(fea_progress_of(m->ctx, FEA_PROGRESS_PH_ROUND, *done, total));
  }
  return FEA_SUCCESS;
}

/* Lanczos on a dense FP64 SPD block (column-major n x n) through GEMV. */
typedef struct dense_apply {
  fea_context *ctx;
  const double *a;
  fea_index n;
} dense_apply;

static fea_status apply_dense(void *user, const double *x, double *y) {
  const dense_apply *d = user;
  fea_dmat A = {(void *)d->a, d->n, d->n, d->n, FEA_F64};
  fea_dmat X = {(void *)x, d->n, 1, d->n, FEA_F64}, Y = {y, d->n, 1, d->n, FEA_F64};
  return fea_dense_gemm(d->ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1.0, &A, &X, 0.0, &Y,
                        FEA_COMPUTE_DEFAULT);
}

static fea_status dense_kappa(fea_context *ctx, const double *a, fea_index n, int steps,
                              double *kappa) {
  if (n <= 1) {
    *kappa = 1.0;
    return FEA_SUCCESS;
  }
  dense_apply d = {ctx, a, n};
  double lmin = 0, lmax = 0;
  FEA_CALL(fea_lanczos_extremes(ctx, n, apply_dense, &d, steps, 1, 12345, &lmin, &lmax));
  FEA_CHECK(lmin > 0, ctx, FEA_ERR_NOT_POSDEF,
            "Lanczos finds the eigenvalue %g in a %lld x %lld "
            "block that should be SPD",
            lmin, (long long)n, (long long)n);
  *kappa = lmax / lmin;
  return FEA_SUCCESS;
}

/* Pi = E - D C^-1 D^T - B^T B applied without forming it, for kappa(Pi) on
 * meshes of several macro cells (Table 4), where the dense Pi would take
 * 8 |E|^2 bytes (12.6 GB at L = 7, L0 = 3) and the dense C_i^-1 at L0 = 0
 * O(blk^3) flops per group: E x from the rows of At, C^-1 by the Cholesky
 * factors of the groups' blocks (two TRSMs per group), B x and B^T by GEMV. */
typedef struct pi_operator {
  fea_ph_m1 *m;
  const fea_ph_split *s;
  const fea_matrix *At;
  const m1_setup *w; /* sd, bt (B), dt (D^T), c1 (the groups' Cholesky factors) */
  double *t, *z;     /* ni and nc */
} pi_operator;

static fea_status apply_pi(void *user, const double *x, double *y) {
  const pi_operator *o = user;
  fea_ph_m1 *m = o->m;
  const fea_index nc = m->nc, ne = m->ne, i0 = nc + ne, blk = m->blk;
  const fea_matrix *At = o->At, *dt = o->w->dt, *d = m->d;
  const double *sd = o->w->sd;
  for (fea_index l = 0; l < m->num; l++) { /* y = E x */
    const fea_index p = o->s->pos[l];
    if (p < nc || p >= i0) continue;
    double sum = 0;
    for (fea_index k = At->row_ptr[l]; k < At->row_ptr[l + 1]; k++) {
      const fea_index col = At->col_idx[k], q = o->s->pos[col];
      if (q >= nc && q < i0) sum += At->values[k] / (sd[l] * sd[col]) * x[q - nc];
    }
    y[p - nc] = sum;
  }
  for (fea_index r = 0; r < m->ni; r++) { /* t = D^T x */
    double sum = 0;
    for (fea_index k = dt->row_ptr[r]; k < dt->row_ptr[r + 1]; k++)
      sum += dt->values[k] * x[dt->col_idx[k]];
    o->t[r] = sum;
  }
  for (int g = 0; g < m->groups && blk > 0; g++) { /* t := C^-1 t, group by group */
    const fea_index cells = m->gfirst[g + 1] - m->gfirst[g];
    if (cells == 0) continue;
    fea_dmat L = {o->w->c1 + (size_t)g * blk * blk, blk, blk, blk, FEA_F64};
    fea_dmat T = {o->t + m->gfirst[g] * blk, blk, cells, blk, FEA_F64};
    FEA_CALL(fea_dense_trsm(m->ctx, FEA_LEFT, FEA_LOWER, FEA_NO_TRANS, FEA_NON_UNIT, 1.0, &L, &T));
    FEA_CALL(fea_dense_trsm(m->ctx, FEA_LEFT, FEA_LOWER, FEA_TRANS, FEA_NON_UNIT, 1.0, &L, &T));
  }
  for (fea_index e = 0; e < ne; e++) { /* y -= D t */
    double sum = 0;
    for (fea_index k = d->row_ptr[e]; k < d->row_ptr[e + 1]; k++)
      sum += d->values[k] * o->t[d->col_idx[k]];
    y[e] -= sum;
  }
  if (nc > 0 && ne > 0) { /* y -= B^T (B x) */
    fea_dmat Bm = {o->w->bt, nc, ne, nc, FEA_F64};
    fea_dmat X = {(void *)x, ne, 1, ne, FEA_F64}, Z = {o->z, nc, 1, nc, FEA_F64};
    fea_dmat Y = {y, ne, 1, ne, FEA_F64};
    FEA_CALL(fea_dense_gemm(m->ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1.0, &Bm, &X, 0.0, &Z,
                            FEA_COMPUTE_DEFAULT));
    FEA_CALL(fea_dense_gemm(m->ctx, FEA_TRANS, FEA_NO_TRANS, -1.0, &Bm, &Z, 1.0, &Y,
                            FEA_COMPUTE_DEFAULT));
  }
  return FEA_SUCCESS;
}

/* kappa(Pi) through apply_pi; c1 holds the groups' blocks and is factored here. */
static fea_status operator_kappa_pi(fea_ph_m1 *m, const fea_ph_split *s, const fea_matrix *At,
                                    m1_setup *w, int steps, double *kappa) {
  const fea_index blk = m->blk;
  for (int g = 0; g < m->groups && blk > 0; g++) {
    fea_dmat a = {w->c1 + (size_t)g * blk * blk, blk, blk, blk, FEA_F64};
    FEA_CALL(fea_dense_potrf(m->ctx, FEA_LOWER, &a));
  }
  if (m->ne <= 1) {
    *kappa = 1.0;
    return FEA_SUCCESS;
  }
  pi_operator o = {m, s, At, w, dalloc((size_t)m->ni), dalloc((size_t)m->nc)};
  fea_status st = o.t && o.z ? FEA_SUCCESS
                             : FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY,
                                         "no memory for the vectors of Pi's operator");
  double lmin = 0, lmax = 0;
  if (st >= 0)
    st = fea_lanczos_extremes(m->ctx, m->ne, apply_pi, &o, steps, 1, 12345, &lmin, &lmax);
  free(o.t), free(o.z);
  FEA_CALL(st);
  FEA_CHECK(lmin > 0, m->ctx, FEA_ERR_NOT_POSDEF,
            "Lanczos finds the eigenvalue %g in the Schur complement Pi, which should be SPD",
            lmin);
  *kappa = lmax / lmin;
  return FEA_SUCCESS;
}

/* What a diagnostic build computes instead of the inverses. */
typedef struct m1_condition {
  int steps;
  int want_pi; /* 0: stop after C_1 (Pi's setup is the costly part) */
  double kappa_c, kappa_pi;
} m1_condition;

/* Who inverts Pi when the host does not. */
typedef struct m1_pi_elsewhere {
  fea_ph_m1_pi_fn fn;
  void *user;
} m1_pi_elsewhere;

/* The FP64 setup; with cond, the condition numbers of C_1 and Pi instead of
 * the inverses and conversions (a diagnostic: no solver results). */
static fea_status build(fea_ph_m1 *m, const fea_ph_split *s, const fea_matrix *At,
                        const fea_ph_factor *f, m1_setup *w, m1_condition *cond,
                        const m1_pi_elsewhere *pi) {
  fea_context *ctx = m->ctx;
  const fea_index nc = m->nc, ne = m->ne, blk = m->blk;
  fea_index ncf = 0;
  const double *l0 = fea_ph_factor_coarse(f, &ncf);
  FEA_CHECK(ncf == nc, ctx, FEA_ERR_INVALID_ARG,
            "the partial Cholesky has %lld coarse nodes, the split %lld", (long long)ncf,
            (long long)nc);
  w->sd = dalloc((size_t)m->num);
  w->bt = dalloc((size_t)(nc * ne));
  /* A diagnostic build needs no inverse of Pi (nor Lambda for C_1 alone);
   * on several groups of macro cells it applies Pi as an operator instead. */
  const int pi_operator_only = cond && cond->want_pi && m->groups > 1;
  const int need_pi = (!cond || cond->want_pi) && !pi_operator_only;
  w->lambda = need_pi ? dalloc((size_t)(ne * ne)) : dalloc(1);
  w->have_lambda = need_pi;
  w->c1 = dalloc((size_t)m->groups * (size_t)(blk * blk));
  w->cinv = dalloc((size_t)m->groups * (size_t)(blk * blk));
  w->pinv = cond || pi ? dalloc(1) : dalloc((size_t)(ne * ne));
  FEA_CHECK(w->sd && w->bt && w->lambda && w->c1 && w->cinv && w->pinv, ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the FP64 blocks (|E| = %lld, block %lld)", (long long)ne,
            (long long)blk);
  double dmax = 0;
  for (fea_index l = 0; l < m->num; l++)
    for (fea_index k = At->row_ptr[l]; k < At->row_ptr[l + 1]; k++)
      if (At->col_idx[k] == l) {
        const double d = At->values[k];
        FEA_CHECK(d > 0 && isfinite(d), ctx, FEA_ERR_NOT_POSDEF,
                  "diagonal %g of S^T A_h S at node %lld is not positive", d, (long long)l);
        w->sd[l] = sqrt(d);
        dmax = fmax(dmax, d);
      }
  const double tol = M1_STRUCTURE_TOL * dmax;
  FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_BLOCKS, 0.0));
  FEA_CALL(extract(m, s, At, w, tol));
  FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_BLOCKS, 0.3));
  FEA_CALL(check_cells(m, s, At, w, tol));
  /* D rows sorted (the CSR invariant) by transposing D^T back. */
  FEA_CALL(fea_csr_transpose(ctx, w->dt, &m->d));
  FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_BLOCKS, 0.5));
  /* B = L0^-1 (At_CE / sqrt(d_E)): the C rows of L^-1 S^T A_h S L^-T. */
  if (nc > 0 && ne > 0) {
    fea_dmat L0 = {(void *)l0, nc, nc, nc, FEA_F64}, Bm = {w->bt, nc, ne, nc, FEA_F64};
    FEA_CALL(fea_dense_trsm(ctx, FEA_LEFT, FEA_LOWER, FEA_NO_TRANS, FEA_NON_UNIT, 1.0, &L0, &Bm));
  }
  FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_BLOCKS, 0.8));
  if (cond) {
    cond->kappa_c = 0;
    for (int g = 0; g < m->groups; g++) {
      double kg = 0;
      FEA_CALL(dense_kappa(ctx, w->c1 + (size_t)g * blk * blk, blk, cond->steps, &kg));
      cond->kappa_c = fmax(cond->kappa_c, kg);
    }
    if (!cond->want_pi) return fea_progress(ctx, FEA_PROGRESS_PH_BLOCKS, 1.0);
    if (pi_operator_only) {
      FEA_CALL(operator_kappa_pi(m, s, At, w, cond->steps, &cond->kappa_pi));
      return fea_progress(ctx, FEA_PROGRESS_PH_BLOCKS, 1.0);
    }
  }
  for (int g = 0; g < m->groups; g++) {
    char what[64];
    snprintf(what, sizeof what, "the macro-cell block C_%d", g + 1);
    FEA_CALL(invert_spd(ctx, w->c1 + (size_t)g * blk * blk, w->cinv + (size_t)g * blk * blk, blk,
                        what, FEA_PROGRESS_PH_BLOCKS));
  }
  FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_BLOCKS, 1.0));
  FEA_CALL(schur_interior(m, w));
  if (nc > 0 && ne > 0) { /* Pi = Lambda - B^T B, in column panels (progress) */
    const fea_index pw = schur_panel(ne, nc);
    fea_dmat Bm = {w->bt, nc, ne, nc, FEA_F64};
    for (fea_index j0 = 0; j0 < ne; j0 += pw) {
      const fea_index jw = ne - j0 < pw ? ne - j0 : pw;
      fea_dmat Bj = {w->bt + j0 * nc, nc, jw, nc, FEA_F64};
      fea_dmat P = {w->lambda + j0 * ne, ne, jw, ne, FEA_F64};
      FEA_CALL(fea_dense_gemm(ctx, FEA_TRANS, FEA_NO_TRANS, -1.0, &Bm, &Bj, 1.0, &P,
                              FEA_COMPUTE_DEFAULT));
      FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_SCHUR,
                            0.5 + 0.5 * (double)(j0 + jw) / (double)ne));
    }
  }
  FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_SCHUR, 1.0));
  if (cond) return dense_kappa(ctx, w->lambda, ne, cond->steps, &cond->kappa_pi);
  FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_INVERSE, 0.0));
  if (pi)
    FEA_CALL(pi->fn(pi->user, w->lambda, ne, m->prec));
  else
    FEA_CALL(invert_spd(ctx, w->lambda, w->pinv, ne, "the Schur complement Pi",
                        FEA_PROGRESS_PH_INVERSE));
  FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_INVERSE, 1.0));
  /* The copies in the working precision. */
  double done = 0;
  const double total = (pi ? 0.0 : (double)ne * (double)ne) + (double)nc * (double)ne +
                       (double)m->groups * (double)blk * (double)blk + (double)m->d->nnz;
  FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_ROUND, 0.0));
  if (!pi)
    FEA_CALL(convert_copy(m, w->pinv, (size_t)(ne * ne), m->prec, "Pi^-1", &m->pinv, &done, total));
  FEA_CALL(convert_copy(m, w->bt, (size_t)(nc * ne), m->prec, "B", &m->b, &done, total));
  FEA_CALL(convert_copy(m, w->cinv, (size_t)m->groups * (size_t)(blk * blk), m->prec, "C_i^-1",
                        &m->cinv, &done, total));
  FEA_CALL(convert_copy(m, m->d->values, (size_t)m->d->nnz, m->vprec, "D", &m->dval, &done, total));
  return fea_progress(ctx, FEA_PROGRESS_PH_ROUND, 1.0);
}

static fea_status create(fea_context *ctx, const fea_ph_grid *g, const fea_ph_split *s,
                         const fea_matrix *At, const fea_ph_factor *f, fea_precision prec,
                         m1_condition *cond, const m1_pi_elsewhere *pi, fea_ph_m1 **out) {
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(g, ctx);
  FEA_CHECK_NULL(s, ctx);
  FEA_CHECK_NULL(At, ctx);
  FEA_CHECK_NULL(f, ctx);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK(!ctx->backend->m1, ctx, FEA_ERR_INVALID_ARG,
            "M1 sets up on a host context; backend '%s' has an M1 of its own, whose setup "
            "context is the one to use",
            ctx->backend->prefix);
  FEA_CHECK(prec == FEA_F64 || prec == FEA_F32 || prec == FEA_F16 || prec == FEA_BF16, ctx,
            FEA_ERR_UNSUPPORTED, "M1 works in FP64, FP32, FP16 or BF16, not precision %d",
            (int)prec);
  FEA_CHECK(At->rows == g->num && At->cols == g->num, ctx, FEA_ERR_INVALID_ARG,
            "transformed matrix is %lld x %lld, the grid has %lld interior nodes",
            (long long)At->rows, (long long)At->cols, (long long)g->num);
  FEA_CHECK(s->nc + s->ne + s->ni == g->num && s->num_cells * s->block == s->ni, ctx,
            FEA_ERR_INVALID_ARG, "split %lld + %lld + %lld does not fit %lld nodes",
            (long long)s->nc, (long long)s->ne, (long long)s->ni, (long long)g->num);
  fea_ph_m1 *m = calloc(1, sizeof *m);
  FEA_CHECK(m, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for an M1 solver");
  m->ctx = ctx;
  fea_object_retain(ctx);
  m->prec = prec;
  m->vprec = prec == FEA_F64 ? FEA_F64 : FEA_F32;
  m->esize = prec == FEA_F64 ? sizeof(double) : prec == FEA_F32 ? sizeof(float) : 2;
  m->vsize = m->vprec == FEA_F64 ? sizeof(double) : sizeof(float);
  m->scale_rhs = 1;
  m->num = g->num, m->nc = s->nc, m->ne = s->ne, m->ni = s->ni;
  m->cells = s->num_cells, m->blk = s->block;
  m->perm = malloc((size_t)g->num * sizeof *m->perm);
  m->groups = s->groups > 1 ? s->groups : 1;
  m->gfirst = malloc((size_t)(m->groups + 1) * sizeof *m->gfirst);
  m->cell_group = malloc((size_t)(m->cells + 1) * sizeof *m->cell_group);
  fea_status st = m->perm && m->gfirst && m->cell_group
                      ? FEA_SUCCESS
                      : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld indices",
                                  (long long)g->num);
  if (st >= 0) {
    m->gfirst[0] = 0;
    for (int q = 0; q < m->groups; q++)
      m->gfirst[q + 1] = m->gfirst[q] + (s->group_cells ? s->group_cells[q] : m->cells);
    if (m->gfirst[m->groups] != m->cells)
      st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG, "groups of %lld cells in all, the split has %lld",
                     (long long)m->gfirst[m->groups], (long long)m->cells);
    for (int q = 0; q < m->groups && st >= 0; q++)
      for (fea_index c = m->gfirst[q]; c < m->gfirst[q + 1]; c++) m->cell_group[c] = q;
  }
  m1_setup w = {0};
  if (st >= 0) {
    memcpy(m->perm, s->perm, (size_t)g->num * sizeof *m->perm);
    st = build(m, s, At, f, &w, cond, pi);
  }
  setup_free(&w);
  if (st < 0) {
    fea_ph_m1_destroy(&m);
    return st;
  }
  *out = m;
  return FEA_SUCCESS;
}

fea_status fea_ph_m1_create(fea_context *ctx, const fea_ph_grid *g, const fea_ph_split *s,
                            const fea_matrix *At, const fea_ph_factor *f, fea_precision prec,
                            fea_ph_m1 **out) {
  return create(ctx, g, s, At, f, prec, NULL, NULL, out);
}

fea_status fea_ph_m1_create_pi_elsewhere(fea_context *ctx, const fea_ph_grid *g,
                                         const fea_ph_split *s, const fea_matrix *At,
                                         const fea_ph_factor *f, fea_precision prec,
                                         fea_ph_m1_pi_fn invert_pi, void *user, fea_ph_m1 **out) {
  const m1_pi_elsewhere pi = {invert_pi, user};
  return create(ctx, g, s, At, f, prec, NULL, invert_pi ? &pi : NULL, out);
}

fea_status fea_ph_m1_condition(fea_context *ctx, const fea_ph_grid *g, const fea_ph_split *s,
                               const fea_matrix *At, const fea_ph_factor *f, int steps,
                               double *kappa_c, double *kappa_pi) {
  FEA_CHECK(steps >= 2, ctx, FEA_ERR_INVALID_ARG, "%d Lanczos steps are too few", steps);
  m1_condition cond = {steps, kappa_pi != NULL, 0, 0};
  fea_ph_m1 *m = NULL;
  FEA_CALL(create(ctx, g, s, At, f, FEA_F64, &cond, NULL, &m));
  fea_ph_m1_destroy(&m);
  if (kappa_c) *kappa_c = cond.kappa_c;
  if (kappa_pi) *kappa_pi = cond.kappa_pi;
  return FEA_SUCCESS;
}
