/* Runs of free rows cleared right before the batch that first writes them
 * (see first-touch.h for why, and when that is correct). */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "first-touch.h"

static int run_cmp(const void *a, const void *b) {
  const fea_first_touch_run *x = a, *y = b;
  if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
  return (x->row > y->row) - (x->row < y->row);
}

/* Cut rows 0 .. nf - 1 into runs (first writer f[r], -1: none) and count
 * them; with out, also write them. */
static fea_index cut(const fea_index *f, fea_index nf, const int *owner, fea_index window,
                     fea_first_touch_run *out) {
  fea_index n = 0;
  for (fea_index r = 0; r < nf;) {
    const fea_index r0 = r;
    fea_index lo = f[r], hi = f[r];
    if (lo < 0) {
      while (r < nf && f[r] < 0) r++;
    } else {
      const int o = owner ? owner[r] : 0;
      for (r++; r < nf && f[r] >= 0 && (!owner || owner[r] == o); r++) {
        const fea_index l = f[r] < lo ? f[r] : lo, h = f[r] > hi ? f[r] : hi;
        if (h - l >= window) break;
        lo = l;
        hi = h;
      }
    }
    if (out) out[n] = (fea_first_touch_run){lo, r0, r - r0};
    n++;
  }
  return n;
}

/* Rows' worth of elements a run's first writers may span: the first
 * window whose runs average FT_MIN_RUN rows or more. */
static const fea_index ft_ahead_rows[] = {8192, 65536};
#define FT_MIN_RUN 64

fea_status fea_first_touch_build(const fea_problem *pb, const fea_index *edofs, fea_index ne,
                                 int nb, const int *owner, fea_first_touch *ft) {
  memset(ft, 0, sizeof *ft);
  const fea_index nf = pb->num_free;
  const fea_index *fi = pb->free_index;
  if (nf == 0 || ne == 0) return FEA_SUCCESS;
  fea_index *f = malloc(((size_t)nf + 1) * sizeof *f);
  FEA_CHECK(f, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the first writers of %lld rows",
            (long long)nf);
  for (fea_index r = 0; r < nf; r++) f[r] = -1;
  for (fea_index e = 0; e < ne; e++) {
    const fea_index *ed = edofs + e * nb;
    for (int i = 0; i < nb; i++) {
      const fea_index r = fi[ed[i]];
      if (r >= 0 && f[r] < 0) f[r] = e;
    }
  }
  fea_index window = 0, n = 0;
  for (size_t k = 0; k < sizeof ft_ahead_rows / sizeof *ft_ahead_rows && !window; k++) {
    const double w = (double)ft_ahead_rows[k] * (double)ne / (double)nf;
    const fea_index wk = w < 1.0 ? 1 : (fea_index)w;
    n = cut(f, nf, owner, wk, NULL);
    if (n * FT_MIN_RUN <= nf) window = wk;
  }
  if (!window) { /* declined: the caller clears in a pass */
    free(f);
    return FEA_SUCCESS;
  }
  ft->run = malloc(((size_t)n + 1) * sizeof *ft->run);
  if (!ft->run) {
    free(f);
    return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld runs of rows",
                     (long long)n);
  }
  cut(f, nf, owner, window, ft->run);
  free(f);
  /* By key: the idle runs (key -1) first, then moved behind the others. */
  qsort(ft->run, (size_t)n, sizeof *ft->run, run_cmp);
  fea_index nidle = 0;
  while (nidle < n && ft->run[nidle].key < 0) nidle++;
  fea_first_touch_run *idle = malloc(((size_t)nidle + 1) * sizeof *idle);
  if (!idle) {
    fea_first_touch_free(ft);
    return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld runs of rows",
                     (long long)nidle);
  }
  memcpy(idle, ft->run, (size_t)nidle * sizeof *idle);
  memmove(ft->run, ft->run + nidle, (size_t)(n - nidle) * sizeof *ft->run);
  memcpy(ft->run + (n - nidle), idle, (size_t)nidle * sizeof *idle);
  free(idle);
  ft->nrun = n - nidle;
  ft->nidle = nidle;
  ft->window = window;
  ft->bytes = (uint64_t)n * sizeof *ft->run;
  return FEA_SUCCESS;
}

void fea_first_touch_free(fea_first_touch *ft) {
  free(ft->run);
  memset(ft, 0, sizeof *ft);
}

void fea_first_touch_clear(const fea_first_touch *ft, fea_index e0, fea_index e1,
                           const int *owner, int blk, double *y) {
  /* The first run keyed e0 or later (a thread's calls move forward, but
   * PRIVATE_BUFFERS threads start mid-way: a search per call is simplest
   * and costs ~log2(runs) loads per batch of many elements). */
  fea_index lo = 0, hi = ft->nrun;
  while (lo < hi) {
    const fea_index mid = lo + (hi - lo) / 2;
    if (ft->run[mid].key < e0)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (fea_index k = lo; k < ft->nrun && ft->run[k].key < e1; k++) {
    const fea_first_touch_run *u = ft->run + k;
    if (owner && owner[u->row] != blk) continue;
    memset(y + u->row, 0, (size_t)u->len * sizeof *y);
  }
}

void fea_first_touch_clear_idle(const fea_first_touch *ft, double *y) {
  for (fea_index k = ft->nrun; k < ft->nrun + ft->nidle; k++)
    memset(y + ft->run[k].row, 0, (size_t)ft->run[k].len * sizeof *y);
}
