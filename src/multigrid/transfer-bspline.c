/* B-spline multigrid transfers as Kronecker products (multigrid-impl.h):
 * P = T2 (x) T1 (x) T0 restricted to the free functions, applied direction
 * by direction instead of stored as a CSR matrix.
 *
 * Why: P has up to (p + 2)^d entries per fine row; stored twice (P and P^T,
 * 12 bytes per entry) it was most of a 3D p = 3 hierarchy's memory once the
 * level operators were Kronecker operators (about 500 of 660 bytes per DoF
 * at 9.1M DoFs), and each product streamed it. The knot-insertion matrix of
 * each direction T_k (n_fine x n_coarse, at most p + 2 entries per row) is
 * small; where the free functions of both levels are tensor products (whole
 * Dirichlet sides), P's restriction to them is the Kronecker product of the
 * T_k restricted to free rows and columns, and three passes apply it:
 * prolongation xf += (T2 T1 T0) xc contracts direction 0 first (the coarse
 * vector grows to nf0 x nc1 x nc2), then 1, then 2 into xf; restriction
 * bc = P^T rf runs the transposes in the reverse order. Every output entry
 * is summed in the same order whatever the thread count. */
#include <stdlib.h>
#include <string.h>

#include "disc/bspline.h"
#include "internal/error.h"
#include "matfree/kron/kron.h"
#include "multigrid-impl.h"

/* One direction's reduced T: row i (a free fine function) has cnt[i]
 * entries from column first[i] (free coarse functions), val[i * w ..]. */
typedef struct kt_dir {
  fea_index nf, nc;
  int w; /* entries per row, at most */
  fea_index *first;
  int *cnt;
  double *val;
} kt_dir;

struct fea_mg_ktransfer {
  int dim;
  kt_dir d[3];
  double *t1, *t2; /* nf0 nc1 nc2 and nf0 nf1 nc2 */
};

void fea_mg_ktransfer_free(fea_mg_ktransfer *t) {
  if (!t) return;
  for (int k = 0; k < 3; k++) free(t->d[k].first), free(t->d[k].cnt), free(t->d[k].val);
  free(t->t1);
  free(t->t2);
  free(t);
}

uint64_t fea_mg_ktransfer_bytes(const fea_mg_ktransfer *t) {
  if (!t) return 0;
  uint64_t b = 0;
  for (int k = 0; k < t->dim; k++) b += (uint64_t)t->d[k].nf * (16 + 8 * (uint64_t)t->d[k].w);
  const kt_dir *d = t->d;
  return b + 8 * ((uint64_t)d[0].nf * d[1].nc * d[2].nc + (uint64_t)d[0].nf * d[1].nf * d[2].nc);
}

/* Direction k's T (full, from the knots) reduced to the free rows and columns. */
static fea_status dir_build(fea_context *ctx, const fea_knots *kc, const fea_knots *kf,
                            const fea_index *redf, fea_index nff, const fea_index *redc,
                            fea_index ncf, kt_dir *d) {
  const fea_index nf = fea_knots_num_functions(kf), nc = fea_knots_num_functions(kc);
  double *T = malloc((size_t)nf * (size_t)nc * sizeof *T);
  FEA_CHECK(T, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a %lld x %lld knot-insertion matrix",
            (long long)nf, (long long)nc);
  fea_status st = fea_knots_transfer_matrix(ctx, kc, kf, T);
  /* row i's free coarse columns [lo, hi] (consecutive: fixed ones sit at
   * the ends), their widest run the storage's width */
  fea_index *lo = malloc((size_t)nf * 2 * sizeof *lo), *hi = lo ? lo + nf : NULL;
  if (st == FEA_SUCCESS && !lo)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a transfer of %lld rows",
                   (long long)nf);
  d->nf = nff, d->nc = ncf, d->w = 1;
  for (fea_index i = 0; i < nf && st == FEA_SUCCESS; i++) {
    lo[i] = hi[i] = -1;
    for (fea_index j = 0; j < nc; j++)
      if (T[i + j * nf] != 0.0 && redc[j] >= 0) {
        if (lo[i] < 0) lo[i] = j;
        hi[i] = j;
      }
    if (redf[i] >= 0 && lo[i] >= 0 && hi[i] - lo[i] + 1 > d->w) d->w = (int)(hi[i] - lo[i] + 1);
  }
  d->first = calloc((size_t)nff + 1, sizeof *d->first);
  d->cnt = calloc((size_t)nff + 1, sizeof *d->cnt);
  d->val = calloc((size_t)nff * (size_t)d->w + 1, sizeof *d->val);
  if (st == FEA_SUCCESS && (!d->first || !d->cnt || !d->val))
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a transfer of %lld rows",
                   (long long)nff);
  for (fea_index i = 0; i < nf && st == FEA_SUCCESS; i++) {
    const fea_index r = redf[i];
    if (r < 0 || lo[i] < 0) continue;
    d->first[r] = redc[lo[i]];
    d->cnt[r] = (int)(hi[i] - lo[i] + 1);
    for (fea_index j = lo[i]; j <= hi[i]; j++)
      d->val[(size_t)r * d->w + (j - lo[i])] = T[i + j * nf];
  }
  free(lo);
  free(T);
  return st;
}

fea_status fea_mg_ktransfer_build(fea_context *ctx, const fea_problem *fine,
                                  const fea_problem *coarse, fea_mg_ktransfer **out) {
  *out = NULL;
  const fea_space *sf = fine->space, *sc = coarse->space;
  const int dim = sf->dim;
  const fea_bspline_space *bf = sf->impl, *bc = sc->impl;
  fea_index tf = 0, tc = 0;
  for (int k = 0; k < dim; k++) tf += fea_kron_dir_size(sf, k), tc += fea_kron_dir_size(sc, k);
  fea_index *buf = malloc(((size_t)tf + (size_t)tc) * sizeof *buf);
  FEA_CHECK(buf, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld 1D indices", (long long)(tf + tc));
  fea_index *rf[3] = {buf, buf, buf}, *rc[3] = {buf + tf, buf + tf, buf + tf}, mf[3], mc[3];
  for (int k = 1; k < dim; k++) {
    rf[k] = rf[k - 1] + fea_kron_dir_size(sf, k - 1);
    rc[k] = rc[k - 1] + fea_kron_dir_size(sc, k - 1);
  }
  /* both levels' free DoFs tensor products, lexicographic: else CSR serves */
  if (!fea_kron_tensor_free_set(fine, rf, mf) || !fea_kron_tensor_free_set(coarse, rc, mc)) {
    free(buf);
    return FEA_SUCCESS;
  }
  fea_mg_ktransfer *t = calloc(1, sizeof *t);
  fea_status st = t ? FEA_SUCCESS
                    : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a transfer");
  if (t) {
    t->dim = dim;
    for (int k = 0; k < 3; k++) t->d[k].nf = t->d[k].nc = 1;
  }
  for (int k = 0; k < dim && st == FEA_SUCCESS; k++)
    st = dir_build(ctx, &bc->knots[k], &bf->knots[k], rf[k], mf[k], rc[k], mc[k], &t->d[k]);
  for (int k = dim; k < 3 && st == FEA_SUCCESS; k++) { /* identity */
    t->d[k].w = 1;
    t->d[k].first = calloc(1, sizeof *t->d[k].first);
    t->d[k].cnt = malloc(sizeof *t->d[k].cnt);
    t->d[k].val = malloc(sizeof *t->d[k].val);
    if (!t->d[k].first || !t->d[k].cnt || !t->d[k].val)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a transfer");
    else
      t->d[k].cnt[0] = 1, t->d[k].val[0] = 1.0;
  }
  free(buf);
  if (st == FEA_SUCCESS) {
    const kt_dir *d = t->d;
    t->t1 = malloc((size_t)d[0].nf * d[1].nc * d[2].nc * sizeof *t->t1 + 8);
    t->t2 = malloc((size_t)d[0].nf * d[1].nf * d[2].nc * sizeof *t->t2 + 8);
    if (!t->t1 || !t->t2)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the transfer's work vectors");
  }
  if (st != FEA_SUCCESS) {
    fea_mg_ktransfer_free(t);
    return st;
  }
  *out = t;
  return FEA_SUCCESS;
}

void fea_mg_ktransfer_prolong(const fea_mg_ktransfer *t, int threads, const double *xc,
                              double *xf) {
  const kt_dir *d0 = &t->d[0], *d1 = &t->d[1], *d2 = &t->d[2];
  const fea_index nf0 = d0->nf, nc0 = d0->nc, nf1 = d1->nf, nc1 = d1->nc, nf2 = d2->nf;
  const fea_index lines1 = nc1 * d2->nc;
  double *t1 = t->t1, *t2 = t->t2;
#pragma omp parallel num_threads(threads)
  {
    /* direction 0: t1[(c2 nc1 + c1) nf0 + i0] */
#pragma omp for schedule(static)
    for (fea_index line = 0; line < lines1; line++) {
      const double *src = xc + line * nc0;
      double *dst = t1 + line * nf0;
      for (fea_index i = 0; i < nf0; i++) {
        const double *v = d0->val + (size_t)i * d0->w, *s = src + d0->first[i];
        double sum = 0.0;
        for (int j = 0; j < d0->cnt[i]; j++) sum += v[j] * s[j];
        dst[i] = sum;
      }
    }
    /* direction 1: t2[(c2 nf1 + i1) nf0 + i0] */
#pragma omp for schedule(static)
    for (fea_index line = 0; line < nf1 * d2->nc; line++) {
      const fea_index i1 = line % nf1, c2 = line / nf1;
      double *dst = t2 + line * nf0;
      const double *v = d1->val + (size_t)i1 * d1->w;
      const double *s = t1 + (c2 * nc1 + d1->first[i1]) * nf0;
      for (fea_index i = 0; i < nf0; i++) dst[i] = 0.0;
      for (int j = 0; j < d1->cnt[i1]; j++)
        for (fea_index i = 0; i < nf0; i++) dst[i] += v[j] * s[(fea_index)j * nf0 + i];
    }
    /* direction 2 into xf (added) */
    const fea_index P = nf0 * nf1;
#pragma omp for schedule(static)
    for (fea_index i2 = 0; i2 < nf2; i2++) {
      const double *v = d2->val + (size_t)i2 * d2->w;
      const double *s = t2 + d2->first[i2] * P;
      double *dst = xf + i2 * P;
      for (int j = 0; j < d2->cnt[i2]; j++)
        for (fea_index i = 0; i < P; i++) dst[i] += v[j] * s[(fea_index)j * P + i];
    }
  }
}

void fea_mg_ktransfer_restrict(const fea_mg_ktransfer *t, int threads, const double *rf,
                               double *bc) {
  const kt_dir *d0 = &t->d[0], *d1 = &t->d[1], *d2 = &t->d[2];
  const fea_index nf0 = d0->nf, nc0 = d0->nc, nf1 = d1->nf, nc1 = d1->nc, nc2 = d2->nc;
  const fea_index P = nf0 * nf1;
  double *t1 = t->t1, *t2 = t->t2;
  /* The transposes gather over the fine rows of each coarse column: the
   * rows of T_k touching column c are a consecutive run (lo[c] .. hi[c]),
   * found by a scan per call (cheap against the passes). */
#pragma omp parallel num_threads(threads)
  {
    /* direction 2: t2[(c2 nf1 + i1) nf0 + i0] = sum_i2 T2(i2, c2) rf[i2 P + ..] */
#pragma omp for schedule(static)
    for (fea_index c2 = 0; c2 < nc2; c2++) {
      double *dst = t2 + c2 * P;
      for (fea_index i = 0; i < P; i++) dst[i] = 0.0;
      for (fea_index i2 = 0; i2 < d2->nf; i2++) {
        const fea_index j = c2 - d2->first[i2];
        if (j < 0 || j >= d2->cnt[i2]) continue;
        const double w = d2->val[(size_t)i2 * d2->w + j];
        const double *s = rf + i2 * P;
        for (fea_index i = 0; i < P; i++) dst[i] += w * s[i];
      }
    }
    /* direction 1: t1[(c2 nc1 + c1) nf0 + i0] */
#pragma omp for schedule(static)
    for (fea_index line = 0; line < nc1 * nc2; line++) {
      const fea_index c1 = line % nc1, c2 = line / nc1;
      double *dst = t1 + line * nf0;
      for (fea_index i = 0; i < nf0; i++) dst[i] = 0.0;
      for (fea_index i1 = 0; i1 < nf1; i1++) {
        const fea_index j = c1 - d1->first[i1];
        if (j < 0 || j >= d1->cnt[i1]) continue;
        const double w = d1->val[(size_t)i1 * d1->w + j];
        const double *s = t2 + (c2 * nf1 + i1) * nf0;
        for (fea_index i = 0; i < nf0; i++) dst[i] += w * s[i];
      }
    }
    /* direction 0 into bc (written) */
#pragma omp for schedule(static)
    for (fea_index line = 0; line < nc1 * nc2; line++) {
      const double *s = t1 + line * nf0;
      double *dst = bc + line * nc0;
      for (fea_index c = 0; c < nc0; c++) dst[c] = 0.0;
      for (fea_index i = 0; i < nf0; i++) {
        const double *v = d0->val + (size_t)i * d0->w;
        for (int j = 0; j < d0->cnt[i]; j++) dst[d0->first[i] + j] += v[j] * s[i];
      }
    }
  }
}
