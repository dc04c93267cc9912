/* apply and apply_add of the sum-factorization kernel: batches of elements
 * gathered into SIMD lanes (per-lane addressing through the plan's classes,
 * or a line batch's lane vectors), the tensor kernel of the chosen
 * instruction set, and the results handed back (apply) or added into the
 * caller's target (apply_add, fea_matfree_target: the rows the caller's
 * loop layer says this call writes). */
#include <stdint.h>
#include <string.h>

#include "sumfact.h"

/* Lanes of one batch: element l < m gathered, the rest zero (their results
 * are computed and dropped; zero factors keep them finite). */
static void gather(const fea_sf_state *s, const fea_index *elems, int m, const double *x_full,
                   fea_sf_batch *b, double *lt) {
  const int W = s->lanes, nb = s->nb;
  const fea_sf_plan *P = s->plan;
  double *X = (double *)b->x;
  const int nc = P->nclass, *cls = P->cls, *off = P->off;
  const double *xs[SF_MAX_LANES * SF_MAX_N * SF_MAX_N * SF_MAX_N];
  if (!x_full) goto tables;
  for (int l = 0; l < m; l++) {
    const fea_index *be = P->base + elems[l] * nc;
    for (int c = 0; c < nc; c++) xs[l * nc + c] = x_full + be[c];
  }
  if (m == W) {
    for (int i = 0; i < nb; i++)
      for (int l = 0; l < W; l++) X[i * W + l] = xs[l * nc + cls[i]][off[i]];
  } else {
    for (int i = 0; i < nb; i++)
      for (int l = 0; l < W; l++) X[i * W + l] = l < m ? xs[l * nc + cls[i]][off[i]] : 0.0;
  }
tables:
  if (!s->per_span) return;
  for (int l = 0; l < W; l++) {
    fea_index idx[3] = {0, 0, 0};
    double ck[3] = {0, 0, 0};
    if (l < m) {
      fea_sf_element_index(s, elems[l], idx);
      fea_sf_geometry_factors(s, idx, ck);
    }
    fea_sf_fill_lane(s, W, l, idx, ck, lt);
  }
}

/* The scratch laid out for one call: lanes of x and y, per-span tables, work. */
static void batch_init(const fea_sf_state *s, double *scratch, fea_sf_batch *b, double **lt) {
  const int W = s->lanes, nb = s->nb;
  double *p = (double *)(((uintptr_t)scratch + SF_ALIGN - 1) & ~(uintptr_t)(SF_ALIGN - 1));
  double *X = p;
  double *Y = X + fea_sf_pad((fea_index)nb * W);
  *lt = Y + fea_sf_pad((fea_index)nb * W);
  double *work = *lt + (s->per_span ? fea_sf_lane_table_doubles(s, W) : 0);
  memset(b, 0, sizeof *b);
  b->dim = s->dim;
  b->x = X;
  b->y = Y;
  b->work = work;
  for (int k = 0; k < 3; k++) b->n[k] = s->n[k];
  fea_sf_point_tables(s, W, s->per_span ? *lt : s->lane_tab, b);
}

void fea_sf_apply(const void *state, const fea_index *elems, int count, const double *x_full,
                  double *y, double *scratch) {
  const fea_sf_state *s = state;
  const int W = s->lanes, nb = s->nb;
  fea_sf_batch b;
  double *lt;
  batch_init(s, scratch, &b, &lt);
  /* Callers pass at most batch() elements, but more are served in chunks. */
  for (int start = 0; start < count; start += W) {
    int m = count - start < W ? count - start : W;
    gather(s, elems + start, m, x_full, &b, lt);
    s->fn(&b);
    for (int l = 0; l < m; l++)
      for (int i = 0; i < nb; i++) y[(size_t)(start + l) * nb + i] = b.y[i * W + l];
  }
}

/* The write class of element e in this call (fea_matfree_target.write):
 * 1 .. FEA_MATFREE_RUN_MAX a run of elements with every DoF written,
 * FEA_MATFREE_WRITE_ROWS every free row written, 0 test each row. */
static inline unsigned wclass(const fea_matfree_target *tg, fea_index e) {
  return tg->write[e - tg->write_first];
}

/* Whether every DoF of e is a free row this call writes. */
static inline int whole(const fea_matfree_target *tg, fea_index e) {
  const unsigned w = wclass(tg, e);
  return w != 0 && w < FEA_MATFREE_WRITE_ROWS;
}

/* apply_add's gather from the reduced vector x: lanes of elements with
 * every DoF free (and written) by their row classes, the others DoF by
 * DoF through the rows (Dirichlet DoFs zero). */
static void gather_rows(const fea_sf_state *s, const fea_index *elems, int m, const double *x,
                        const fea_matfree_target *tg, fea_sf_batch *b, double *lt) {
  const fea_sf_plan *P = s->plan;
  const int W = s->lanes, nb = s->nb, nc = P->nclass, nfc = P->nfclass;
  double *X = (double *)b->x;
  for (int l = 0; l < W; l++) {
    if (l >= m) {
      for (int i = 0; i < nb; i++) X[i * W + l] = 0.0;
      continue;
    }
    const fea_index e = elems[l];
    if (nfc && tg->write && whole(tg, e)) {
      const double *xc[SF_MAX_NB];
      for (int c = 0; c < nfc; c++) xc[c] = x + P->fbase[e * nfc + c];
      for (int i = 0; i < nb; i++) X[i * W + l] = xc[P->fcls[i]][P->foff[i]];
    } else if (P->brow_at && P->brow_at[e] >= 0) { /* the rows kept for boundary lines */
      const fea_index *rows = P->brow + (fea_index)P->brow_at[e] * 2 * nb;
      /* Branch-free (a Dirichlet DoF reads a zero): the pattern of an
       * element's Dirichlet DoFs is too long for the branch predictor. */
      static const double zero = 0.0;
      for (int i = 0; i < nb; i++) X[i * W + l] = *(rows[i] >= 0 ? x + rows[i] : &zero);
    } else {
      const fea_index *be = P->base + e * nc;
      for (int i = 0; i < nb; i++) {
        const fea_index r = tg->row[be[P->cls[i]] + P->off[i]];
        X[i * W + l] = r >= 0 ? x[r] : 0.0;
      }
    }
  }
  if (s->per_span) gather(s, elems, m, NULL, b, lt); /* tables only */
}

/* One batch of m <= W elements of the general path: gather, kernel, and
 * each element's results added from its lane. Returns the adds done. */
static uint64_t general_batch(const fea_sf_state *s, const fea_index *elems, int m, const double *x,
                              const fea_matfree_target *tg, fea_sf_batch *b, double *lt) {
  const fea_sf_plan *P = s->plan;
  const int W = s->lanes, nb = s->nb, fr = tg->free_rows;
  double *yt = tg->y;
  const int nc = P->nclass, *cls = P->cls, *off = P->off;
  const int nfc = fr ? P->nfclass : nc, *fcls = fr ? P->fcls : cls, *foff = fr ? P->foff : off;
  const fea_index *fbase = fr ? P->fbase : P->base;
  const int *keep = tg->keep, key = tg->keep_key;
  uint64_t n = 0;
  /* Where Dirichlet DoFs' results go without a branch: one slot per DoF, so
   * that the adds into it form no chain from one DoF to the next. */
  double sink[SF_MAX_NB];
  if (fr && P->brow_at) memset(sink, 0, (size_t)nb * sizeof *sink);
  if (fr)
    gather_rows(s, elems, m, x, tg, b, lt);
  else
    gather(s, elems, m, x, b, lt);
  s->fn(b);
  const double *Y = b->y;
  for (int l = 0; l < m; l++) {
    const fea_index e = elems[l];
    const unsigned w = tg->write ? wclass(tg, e) : 0;
    if (nfc && w != 0 && w < FEA_MATFREE_WRITE_ROWS) { /* every DoF: no tests */
      const fea_index *be = fbase + e * nfc;
      double *yc[SF_MAX_NB];
      for (int c = 0; c < nfc; c++) yc[c] = yt + be[c];
      for (int i = 0; i < nb; i++) yc[fcls[i]][foff[i]] += Y[i * W + l];
      n += (uint64_t)nb;
      continue;
    }
    if (fr && P->brow_at && P->brow_at[e] >= 0) { /* the rows kept for boundary lines */
      const fea_index *rows = P->brow + (fea_index)P->brow_at[e] * 2 * nb;
      if (w == FEA_MATFREE_WRITE_ROWS || !keep) { /* branch-free, as in gather_rows: a Dirichlet
                                                DoF adds into a sink */
        for (int i = 0; i < nb; i++) {
          const fea_index r = rows[i];
          double *t = r >= 0 ? yt + r : &sink[i];
          *t += Y[i * W + l];
          n += r >= 0;
        }
        continue;
      }
      for (int i = 0; i < nb; i++) {
        const fea_index r = rows[i];
        if (r < 0 || keep[r] != key) continue;
        yt[r] += Y[i * W + l];
        n++;
      }
      continue;
    }
    const fea_index *be = P->base + e * nc;
    for (int i = 0; i < nb; i++) {
      const fea_index d = be[cls[i]] + off[i], r = tg->row[d];
      if (r < 0 || (keep && keep[r] != key)) continue;
      yt[fr ? r : d] += Y[i * W + l];
      n++;
    }
  }
  return n;
}

/* Whether element e may be a lane of a line batch of this kind in this
 * call: kind 1, every DoF free and written; kind 2, a boundary element
 * whose free rows are all written and kept (brow_at, read only then: the
 * elements next to each line's ends would otherwise cost a cache miss
 * each). */
static int lane_ok(const fea_sf_plan *P, const fea_matfree_target *tg, fea_index e, int kind) {
  return kind == 1 ? whole(tg, e) : wclass(tg, e) == FEA_MATFREE_WRITE_ROWS && P->brow_at[e] >= 0;
}

/* Whether the W elements from e may be the lanes of a line batch of this
 * kind in this call (lane_ok for each; a kind-1 batch's lanes have every
 * DoF free, so without a row filter they are written, and with one the
 * run length of e tells at once). */
static int lanes_writable(const fea_sf_plan *P, const fea_matfree_target *tg, fea_index e,
                          int kind) {
  const int W = P->lanes;
  if (kind == 1) {
    const unsigned w = wclass(tg, e);
    return !tg->keep || (w >= (unsigned)W && w < FEA_MATFREE_WRITE_ROWS);
  }
  for (int l = 0; l < W; l++)
    if (!lane_ok(P, tg, e + l, kind)) return 0;
  return 1;
}

/* Elements ahead of a line batch whose flags (write, brow_at) it prefetches. */
#define SF_FLAGS_AHEAD 128

/* The flags that the elements at the ends of lines read, prefetched by the
 * line batch at e0 (no stream the hardware follows there: one element in
 * n): 3D Q1 1.05x. */
static inline void flags_prefetch(const fea_sf_plan *P, const fea_matfree_target *tg,
                                  fea_index e0) {
  if (e0 + SF_FLAGS_AHEAD < tg->write_end) {
    __builtin_prefetch(tg->write + (e0 + SF_FLAGS_AHEAD - tg->write_first), 0, 3);
    if (P->brow_at) __builtin_prefetch(P->brow_at + e0 + SF_FLAGS_AHEAD, 0, 3);
  }
}

/* Element k of an apply_add call: listed, or first + k. */
#define SF_ELEM(elems, first, k) ((elems) ? (elems)[k] : (first) + (k))

/* The line batch that serves the call's elements k, k + 1, ... next, or
 * 0: k .. k + W - 1 when they are consecutive from an element that starts
 * a line batch, each a valid lane (lane_ok); else, when only W / 2 <= r < W
 * such elements follow (the end of a line's run, or of the call), the
 * batch that ends with them, whose first W - r lanes are zeroed (*skip =
 * W - r): they must be valid lanes that this call has just served (its
 * elements k - j for j <= W - r), so that the zeros go only where this
 * thread adds anyway. Returns the batch's kind (line_ok). */
static int line_batch(const fea_sf_plan *P, const fea_index *elems, fea_index first, int k,
                      int count, const fea_matfree_target *tg, int *skip) {
  const int W = P->lanes, left = count - k;
  const fea_index e0 = SF_ELEM(elems, first, k);
  const unsigned char v = P->line_ok[e0];
  if (!elems && !(v == 1 && left >= W)) { /* ranges: what line_ok says, where it can */
    if (v == 0) return 0;
    const int kind = v & SF_TAIL ? (v >> 4) & 3 : v, sk = v & SF_TAIL ? v & 15 : 0;
    if (sk <= k && left >= W - sk && lanes_writable(P, tg, e0 - sk, kind)) {
      *skip = sk;
      return kind;
    } /* else a run cut by the call: the lanes probed below */
  }
  if (left >= W && v == 1) { /* the common case, tested without branches */
    /* Consecutive by construction, and line_ok 1 says that all W lanes
     * have every DoF free: lanes_writable checks that they are written. */
    if (!elems && lanes_writable(P, tg, e0, 1)) {
      *skip = 0;
      return 1;
    }
    int ok = 1;
    for (int r = 0; r < W; r++) ok &= (SF_ELEM(elems, first, k + r) == e0 + r) & whole(tg, e0 + r);
    if (ok) {
      *skip = 0;
      return 1;
    }
  }
  const int kind = whole(tg, e0) ? 1 : 2;
  int r = 0;
  while (r < W && r < left && SF_ELEM(elems, first, k + r) == e0 + r &&
         lane_ok(P, tg, e0 + r, kind))
    r++;
  if (r < W / 2)
    return 0; /* a short run (or none: COLORING's order) is cheaper in a general batch */
  const fea_index start = e0 - (W - r);
  if (start < 0 || W - r > k || P->line_ok[start] != kind) return 0;
  for (int j = 1; j <= W - r; j++) /* this call's elements just before: done by this thread */
    if (SF_ELEM(elems, first, k - j) != e0 - j || !lane_ok(P, tg, e0 - j, kind)) return 0;
  *skip = W - r;
  return kind;
}

/* Gather, kernel and scatter in one. On the reduced vectors (free_rows),
 * runs of W consecutive elements that start a line batch (fea_sf_plan) are
 * gathered and added with lane vectors (the last r < W of a run in the
 * batch that ends with them, its other lanes zero: adding their zero
 * results changes nothing); the other elements are collected, in order,
 * into general batches, whose results are added element by element from
 * their lanes (elements whose every DoF the call writes without a test per
 * DoF). The adds of different batches come in another order than elems
 * then: the strategies that call this (SERIAL, COLORING, PRIVATE_BUFFERS)
 * let no other thread write the rows meanwhile, so only the rounding can
 * change. */
void fea_sf_apply_add(const void *state, const fea_index *elems, int count, const double *x_full,
                      const fea_matfree_target *tg, double *scratch) {
  const fea_sf_state *s = state;
  const fea_sf_plan *P = s->plan;
  const int W = s->lanes, nfc = P->nfclass, nb = s->nb;
  fea_sf_batch b;
  double *lt;
  batch_init(s, scratch, &b, &lt);
  uint64_t n = 0;
  const int line = tg->free_rows && P->line_ok && tg->write;
  fea_index pend[SF_MAX_LANES];
  int np = 0;
  const fea_index first = tg->first;
  for (int k = 0; k < count;) {
    int skip, kind;
    if (line && (kind = line_batch(P, elems, first, k, count, tg, &skip)) != 0) {
      const fea_index e0 = SF_ELEM(elems, first, k) - skip;
      const fea_index *base = P->fbase + e0 * nfc;
      if (kind == 1 && (s->qline || s->gline)) { /* fused: gather, kernel and add in one */
        if (s->qline)
          s->qline(s, base[0], skip, x_full, tg->y);
        else
          s->gline(s, base, skip, x_full, tg->y);
        flags_prefetch(P, tg, e0);
        n += (uint64_t)(W - skip) * (uint64_t)nb;
        k += W - skip;
        continue;
      }
      const fea_index *rows = kind == 2 ? P->brow + (fea_index)P->brow_at[e0] * 2 * nb : NULL;
      double *X = (double *)b.x;
      if (kind == 1)
        s->isa->line_gather(P, base, x_full, X);
      else
        s->isa->bline_gather(nb, rows, x_full, X);
      if (skip)
        for (int i = 0; i < nb; i++)
          for (int l = 0; l < skip; l++) X[i * W + l] = 0.0;
      if (s->per_span) { /* tables only */
        fea_index el[SF_MAX_LANES];
        for (int l = 0; l < W; l++) el[l] = e0 + l;
        gather(s, el, W, NULL, &b, lt);
      }
      s->fn(&b);
      int nfree = nb;
      if (kind == 1) {
        s->isa->line_scatter(P, base, b.y, tg->y);
        flags_prefetch(P, tg, e0);
      } else {
        s->isa->bline_scatter(nb, rows, b.y, tg->y);
        for (int i = 0; i < nb; i++) nfree -= rows[i] < 0;
      }
      n += (uint64_t)(W - skip) * (uint64_t)nfree;
      k += W - skip;
      continue;
    }
    pend[np++] = SF_ELEM(elems, first, k);
    k++;
    if (P->brow_at && P->brow_at[pend[np - 1]] >= 0) { /* its rows, for general_batch */
      const char *p = (const char *)(P->brow + (fea_index)P->brow_at[pend[np - 1]] * 2 * nb);
      for (int q = 0; q < nb * (int)sizeof *P->brow; q += 64) __builtin_prefetch(p + q, 0, 3);
    }
    if (np == W) {
      n += general_batch(s, pend, np, x_full, tg, &b, lt);
      np = 0;
    }
  }
  if (np) n += general_batch(s, pend, np, x_full, tg, &b, lt);
  *tg->updates += n;
}
