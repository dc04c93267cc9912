/* The restriction plan (plan.h): from the element-DoF table and the
 * free-row numbering, the DoF classes and their bases, the line batches and
 * the kept rows of boundary elements. Pure data; no 1D tables, no
 * instruction set, no context (tools/gen-sumfact-lines.c links this file
 * alone). */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "base/sort.h"

/* Entry v of a table, through map where there is one (a DoF's free row). */
static inline fea_index mapped(const fea_index *map, fea_index v) { return map ? map[v] : v; }

/* Classes of the DoFs as find_classes defines them, checked on the used
 * elements of the list el (all from first on where el is NULL). */
static int classes_on(const fea_index *idx, const fea_index *map, const unsigned char *use,
                      fea_index first, fea_index ne, const fea_index *el, fea_index nel, int nb,
                      int *rep, int *cls, int *off) {
  const fea_index *d0 = idx + first * nb;
  int nc = 0;
  if (!el) nel = ne - first;
  for (int i = 0; i < nb; i++) {
    int c = 0;
    for (; c < nc; c++) {
      const int j = rep[c];
      const fea_index dd = mapped(map, d0[i]) - mapped(map, d0[j]);
      fea_index k = 0;
      for (; k < nel; k++) {
        const fea_index e = el ? el[k] : first + k;
        if ((!use || use[e]) && mapped(map, idx[e * nb + i]) - mapped(map, idx[e * nb + j]) != dd)
          break;
      }
      if (k == nel && dd >= INT32_MIN && dd <= INT32_MAX) break;
    }
    if (c == nc) rep[nc++] = i;
    cls[i] = c;
    off[i] = (int)(mapped(map, d0[i]) - mapped(map, d0[rep[c]]));
  }
  return nc;
}

/* Elements a first guess of the classes is made on (find_classes): the
 * first ones and others spread over the mesh (its other rows and layers,
 * where a structured numbering may differ from the first row's). */
#define SF_CLASS_PROBE 256

/* DoF classes of the table idx (ne x nb), its entries taken through map
 * where map is not NULL, over the elements with use[e] (all when use is
 * NULL): DoF i joins the first class whose representative j has idx(e, i)
 * - idx(e, j) equal in every such element, else starts one. The classes
 * are guessed on SF_CLASS_PROBE elements and checked in one pass over all
 * of them, every DoF of an element at once, the bases written in the same
 * pass (checking one DoF at a time, a strided pass over the table each,
 * was a sixth of a 2D Q1 operator's setup); where the guess fails, they
 * are found again on every element. Fills cls, off and *base (ne x
 * classes; rows of unused elements zero) and returns the class count, or
 * -1 without memory. */
static int find_classes(const fea_index *idx, const fea_index *map, const unsigned char *use,
                        fea_index ne, int nb, int threads, int *cls, int *off, fea_index **base) {
  fea_index first = 0;
  while (use && first < ne && !use[first]) first++;
  int rep[SF_MAX_NB];
  *base = NULL;
  if (first == ne) return 0;
  fea_index el[SF_CLASS_PROBE], nel = 0;
  const fea_index span = ne - first;
  for (int k = 0; k < SF_CLASS_PROBE && k < span; k++) /* half consecutive, half spread */
    el[nel++] = first + (k < SF_CLASS_PROBE / 2 ? k : span * k / SF_CLASS_PROBE);
  int nc = classes_on(idx, map, use, first, ne, el, nel, nb, rep, cls, off);
  fea_index *b = calloc((size_t)ne * (size_t)nc + 1, sizeof *b);
  if (!b) return -1;
  int repi[SF_MAX_NB]; /* each DoF's class representative */
  for (int i = 0; i < nb; i++) repi[i] = rep[cls[i]];
  int ok = 1;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(&& : ok) if (threads > 1)
  for (fea_index e = first; e < ne; e++) {
    if (use && !use[e]) continue;
    const fea_index *d = idx + e * nb;
    int eok = 1;
    for (int i = 0; i < nb; i++) eok &= mapped(map, d[i]) - mapped(map, d[repi[i]]) == off[i];
    for (int c = 0; c < nc; c++) b[e * nc + c] = mapped(map, d[rep[c]]);
    ok = ok && eok;
  }
  if (!ok) { /* the guess failed: the classes and bases again, from every element */
    free(b);
    nc = classes_on(idx, map, use, first, ne, NULL, 0, nb, rep, cls, off);
    b = calloc((size_t)ne * (size_t)nc + 1, sizeof *b);
    if (!b) return -1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (fea_index e = 0; e < ne; e++)
      if (!use || use[e])
        for (int c = 0; c < nc; c++) b[e * nc + c] = mapped(map, idx[e * nb + rep[c]]);
  }
  *base = b;
  return nc;
}

/* The windows of 8 doubles that cover every lane address of a line batch,
 * class by class (fea_sf_plan.pf_start: one base per class, then its
 * windows' offsets: fewer instructions than a class index and a base per
 * window, 1.03 - 1.06x measured, within that day's noise); none when
 * there are more than
 * SF_MAX_PF. */
static void build_prefetch(fea_sf_plan *s) {
  const int W = s->lanes, nb = s->nb;
  fea_index a[SF_MAX_LANES * SF_MAX_NB];
  s->npf = 0;
  if (s->nfclass >= SF_MAX_PF) return; /* pf_start holds a start per class and the end */
  for (int c = 0; c < s->nfclass; c++) {
    s->pf_start[c] = s->npf;
    int na = 0;
    for (int i = 0; i < nb; i++)
      if (s->fcls[i] == c)
        for (int l = 0; l < W; l++) a[na++] = s->foff[i] + (fea_index)l * s->lstride[c];
    qsort(a, (size_t)na, sizeof *a, fea_index_cmp);
    const fea_index step = (fea_index)W * s->lstride[c]; /* from one batch to the next */
    const int first = s->npf;
    for (int j = 0; j < na;) {
      const fea_index w = a[j];
      while (j < na && a[j] < w + 8) j++;
      /* A window that the previous batch's windows of this class cover
       * is prefetched by the next batch's, one batch later. */
      int seen = 0;
      for (int k = first; k < s->npf && !seen; k++) {
        const fea_index d = w - step - (s->pf_off[k] - (fea_index)SF_PF_AHEAD * step);
        seen = d >= 0 && d < 8;
      }
      if (seen) continue;
      if (s->npf == SF_MAX_PF) {
        s->npf = 0;
        return;
      }
      s->pf_off[s->npf++] = w + (fea_index)SF_PF_AHEAD * step;
    }
  }
  s->pf_start[s->nfclass] = s->npf;
}

/* The DoFs of free class c by offset into order; returns their count. */
static int class_by_offset(const fea_sf_plan *s, int c, int *order) {
  int k = 0;
  for (int i = 0; i < s->nb; i++)
    if (s->fcls[i] == c) {
      int j = k++; /* insertion by offset */
      while (j > 0 && s->foff[order[j - 1]] > s->foff[i]) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
  return k;
}

/* The tiles of free class c (fea_sf_plan.tile_*): from its lowest offset o not
 * yet in one, the DoFs at o .. o + 2 ST - 1, when there are two or more.
 * Marks them in tiled (1; 2 in a full tile). */
static void build_tiles(fea_sf_plan *s, int c, int *order, unsigned char *tiled) {
  const int st = s->lstride[c], W = s->lanes;
  const int k = class_by_offset(s, c, order);
  for (int j = 0; j < k;) {
    const fea_index o = s->foff[order[j]];
    int j2 = j;
    while (j2 < k && s->foff[order[j2]] < o + 2 * st) j2++;
    if (j2 - j < 2 || s->ntile == SF_MAX_TILES) {
      j = j2;
      continue;
    }
    const int t = s->ntile++;
    int own[SF_TILE_MAX_ST] = {0}, next[SF_TILE_MAX_ST] = {0}; /* slot s at o + s, o + ST + s */
    for (int q = 0; q < 2 * SF_TILE_MAX_ST; q++) s->tile_sdof[t][q] = -1;
    for (; j < j2; j++) {
      const int i = order[j], sl = (int)(s->foff[i] - o);
      s->tile_sdof[t][sl] = (short)i;
      if (sl < st)
        own[sl] = 1;
      else
        next[sl - st] = 1;
    }
    int full = 1;
    for (int q = 0; q < st; q++) full &= own[q];
    /* Entry g = q + ST l of the tile is slot q of lane l: the lanes' own
     * where slot q has a DoF at o + q, or one at o + ST + q and l > 0
     * (lane 0's entry there belongs to the element before the batch). */
    for (int v = 0; v < st; v++) {
      unsigned m = 0;
      for (int b = 0; b < 8; b++) {
        const int g = 8 * v + b, q = g % st, l = g / st;
        if (l < W && (own[q] || (next[q] && l > 0))) m |= 1u << b;
      }
      s->tile_lmask[t][v] = (unsigned char)m;
    }
    s->tile_cls[t] = c;
    s->tile_st[t] = st;
    s->tile_off[t] = o;
    s->tile_full[t] = full;
    for (int q = 0; q < 2 * st; q++)
      if (s->tile_sdof[t][q] >= 0) tiled[s->tile_sdof[t][q]] = (unsigned char)(full ? 2 : 1);
  }
}

/* The blocks of free class c (fea_sf_plan.block_*) when no tile serves it
 * and its stride S is at least W: each run of M >= W untiled DoFs at
 * consecutive offsets o .. o + M - 1 (M <= S), by offset; the class's
 * untiled DoFs at o + S .. o + S + M - 1 join a block one lane on. Marks
 * them in tiled (2: gathered and added). */
static void build_block(fea_sf_plan *s, int c, int *order, unsigned char *tiled) {
  const int S = s->lstride[c], W = s->lanes;
  if (S < W) return;
  const int k = class_by_offset(s, c, order);
  for (int j0 = 0; j0 < k && s->nblock < SF_MAX_BLOCKS;) {
    if (tiled[order[j0]]) {
      j0++;
      continue;
    }
    const fea_index o = s->foff[order[j0]];
    int m = 1;
    while (m < S && j0 + m < k && !tiled[order[j0 + m]] && s->foff[order[j0 + m]] == o + m) m++;
    if (m < W) {
      j0 += m;
      continue;
    }
    const int b = s->nblock++;
    s->block_cls[b] = c;
    s->block_st[b] = S;
    s->block_m[b] = m;
    s->block_off[b] = o;
    for (int j = 0; j < m; j++) {
      s->block_dof[b][j] = (short)order[j0 + j];
      s->block_next[b][j] = -1;
      tiled[order[j0 + j]] = 2;
    }
    for (int j = j0 + m; j < k; j++) {
      const int i = order[j];
      if (!tiled[i] && s->foff[i] >= o + S && s->foff[i] < o + S + m) {
        s->block_next[b][s->foff[i] - o - S] = (short)i;
        tiled[i] = 2;
      }
    }
    j0 += m;
  }
}

/* The DoFs of classes with stride > 1 that tiled[] does not reach at
 * level `level` (1: in any tile, 2: in a full tile), by stride, in runs. */
static void build_singles(const fea_sf_plan *s, const unsigned char *tiled, int level,
                          fea_sf_singles *g) {
  g->n = 0;
  for (int i = 0; i < s->nb; i++) { /* by stride (insertion), then DoF */
    if (s->lstride[s->fcls[i]] == 1 || tiled[i] >= level) continue;
    int j = g->n++;
    while (j > 0 && s->lstride[s->fcls[g->dof[j - 1]]] > s->lstride[s->fcls[i]]) {
      g->dof[j] = g->dof[j - 1];
      j--;
    }
    g->dof[j] = i;
  }
  g->nrun = 0;
  for (int j = 0; j < g->n; j++) {
    const int st = s->lstride[s->fcls[g->dof[j]]];
    if (j == 0 || st != g->run_st[g->nrun - 1]) {
      g->run_start[g->nrun] = j;
      g->run_st[g->nrun++] = st;
    }
  }
  g->run_start[g->nrun] = g->n;
}

/* Line batches (see fea_sf_plan): each free class's stride from one
 * all-free element to the next, the elements that start W such elements in
 * a row, and the scatter's chains. use: the all-free elements. */
/* The tails of the chain ea .. eb (line steps of one kind): of W or more
 * elements, each e past the last full batch's start with r = eb - e + 1 >=
 * W / 2 elements left is served by the batch that ends at eb, its first
 * W - r lanes zeroed: SF_TAIL | kind << 4 | (W - r), so that apply_add
 * need not probe the lanes one by one to find it, nor to find that an
 * element (line_ok 0) takes the general path (measured 1.02 - 1.09x for 3D
 * Q1, 3D Q2 and 2D Q3, within that day's noise: docs/operators.md).
 * Elements that start a full batch of another chain keep that. */
static void chain_tails(fea_sf_plan *s, fea_index ea, fea_index eb, unsigned char kind) {
  const int W = s->lanes;
  if (eb - ea + 1 < W) return;
  for (fea_index t = eb - W + 2; t <= eb; t++) {
    const int r = (int)(eb - t + 1);
    if (r >= W / 2 && !s->line_ok[t])
      s->line_ok[t] = (unsigned char)(SF_TAIL | kind << 4 | (W - r));
  }
}

/* The batches of the elements lo .. hi - 1, from their steps (line_ok: the
 * kind of the step to the next element, 0 for none): line_ok[e] keeps its
 * kind where W - 1 steps of that kind follow from e on, and the chains'
 * tails are marked as each chain's start is found. Counted backwards, so
 * each element's run of steps is known when it is reached; the steps of
 * lo - 1 and hi - 1 are 0 (see build_line), so no chain crosses the ends.
 * Returns the count of batch starts. */
static fea_index chain_batches(fea_sf_plan *s, fea_index lo, fea_index hi) {
  const int W = s->lanes, nb = s->nb;
  fea_index run = 0, batches = 0; /* run: steps of the same kind from e on */
  unsigned char next = 0;
  for (fea_index e = hi - 1; e >= lo; e--) {
    const unsigned char kind = s->line_ok[e];
    int same = kind && kind == next;
    if (same && kind == 2) /* boundary steps: the same in every lane */
      same = !memcmp(s->brow + ((fea_index)s->brow_at[e] * 2 + 1) * nb,
                     s->brow + ((fea_index)s->brow_at[e + 1] * 2 + 1) * nb,
                     (size_t)nb * sizeof *s->brow);
    if (!same && run) chain_tails(s, e + 1, e + 1 + run, next); /* a chain starts at e + 1 */
    run = kind ? (same ? run + 1 : 1) : 0;
    next = kind;
    s->line_ok[e] = (unsigned char)(run >= W - 1 ? kind : 0);
    batches += s->line_ok[e] != 0;
  }
  if (run) chain_tails(s, lo, lo + run, next);
  return batches;
}

/* Where a thread's share of the chain pass starts: the first element from
 * ne * t / nth on whose predecessor has no step, so that shares hold whole
 * chains (every row end of a structured mesh is such a place; a mesh
 * without one leaves the other shares empty). */
static fea_index chain_share_start(const fea_sf_plan *s, fea_index ne, int t, int nth) {
  if (t >= nth) return ne;
  fea_index e = ne * t / nth;
  while (e > 0 && e < ne && s->line_ok[e - 1]) e++;
  return e;
}

/* Line steps and batches (see fea_sf_plan.line_ok) of the elements with
 * use[e] (all DoFs free), from the element-DoF table dofs. Each pass runs
 * on the context's threads: serial, the flags were a fifth of a 2D Q1
 * operator's setup. */
static fea_status build_line(fea_sf_plan *s, const fea_sf_plan_input *in, const unsigned char *use,
                             int threads) {
  const fea_index ne = s->ne, *dofs = in->edofs;
  const int W = s->lanes, nfc = s->nfclass, nb = s->nb;
  if (!nfc || ne < W) return FEA_SUCCESS;
  fea_index e1 = 0;
  while (e1 + 1 < ne && !(use[e1] && use[e1 + 1])) e1++;
  if (e1 + 1 >= ne) return FEA_SUCCESS;
  for (int c = 0; c < nfc; c++) {
    const fea_index st = s->fbase[(e1 + 1) * nfc + c] - s->fbase[e1 * nfc + c];
    if (st == 0 || st > INT32_MAX / SF_MAX_LANES || st < -(INT32_MAX / SF_MAX_LANES))
      return FEA_SUCCESS; /* lanes would not be distinct (or too far apart) */
    s->lstride[c] = (int)st;
  }
  s->line_ok = malloc((size_t)ne);
  if (!s->line_ok) return FEA_ERR_OUT_OF_MEMORY;
  s->bytes += (uint64_t)ne;
  /* line_ok[e] first as "e and e + 1 are both all-free and one stride
   * apart in every class" (or, below, a boundary step: 2), then as runs
   * of W - 1 such steps. Boundary elements (a Dirichlet DoF) keep their
   * rows, counted here. */
  fea_index nbd = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : nbd) if (threads > 1)
  for (fea_index e = 0; e < ne; e++) {
    int ok = e + 1 < ne && use[e] && use[e + 1];
    for (int c = 0; c < nfc && ok; c++)
      ok = s->fbase[(e + 1) * nfc + c] - s->fbase[e * nfc + c] == s->lstride[c];
    s->line_ok[e] = (unsigned char)ok;
    nbd += !use[e];
  }
  s->brow = malloc(((size_t)nbd * 2u * (size_t)nb + 1) * sizeof *s->brow);
  s->brow_at = malloc((size_t)ne * sizeof *s->brow_at);
  fea_index *share_bd = calloc((size_t)threads + 1, sizeof *share_bd);
  if (!s->brow || !s->brow_at || !share_bd) {
    free(share_bd);
    return FEA_ERR_OUT_OF_MEMORY;
  }
  s->bytes += ((uint64_t)nbd * 2u * (uint64_t)nb) * sizeof *s->brow + (uint64_t)ne * sizeof(int);
  fea_index batches = 0;
#pragma omp parallel num_threads(threads) reduction(+ : batches) if (threads > 1)
  {
    const int t = omp_get_thread_num(), nth = omp_get_num_threads();
    /* The boundary elements' slots in element order: each share counts
     * its own, then numbers them from the counts of the shares before. */
    const fea_index lo = ne * t / nth, hi = ne * (t + 1) / nth;
    fea_index k = 0;
    for (fea_index e = lo; e < hi; e++) k += !use[e];
    share_bd[t + 1] = k;
#pragma omp barrier
    k = 0;
    for (int u = 0; u <= t; u++) k += share_bd[u];
    for (fea_index e = lo; e < hi; e++) {
      s->brow_at[e] = -1;
      if (use[e]) continue;
      if (k <= INT32_MAX) { /* beyond an int: general path */
        s->brow_at[e] = (int)k;
        for (int i = 0; i < nb; i++) {
          s->brow[k * 2 * nb + i] = in->free_index[dofs[e * nb + i]];
          s->brow[(k * 2 + 1) * nb + i] = 0; /* its steps (below; none for the last element) */
        }
      }
      k++;
    }
#pragma omp barrier
    /* Per boundary element, after its rows, each DoF's step to the next
     * element (0 where Dirichlet; the pair is a step of a boundary line
     * batch when both have the same Dirichlet DoFs and the steps are not
     * 0): along a boundary the Dirichlet DoFs drop out of the free-row
     * numbering, so the steps differ from the classes' strides. */
    for (fea_index e = lo; e < hi && e + 1 < ne; e++) {
      if (s->brow_at[e] < 0) continue;
      fea_index *r0 = s->brow + (fea_index)s->brow_at[e] * 2 * nb, *d0 = r0 + nb;
      int ok = s->brow_at[e + 1] >= 0;
      const fea_index *r1 = ok ? s->brow + (fea_index)s->brow_at[e + 1] * 2 * nb : NULL;
      int anyfree = 0;
      for (int i = 0; i < nb; i++) {
        d0[i] = 0;
        if (!ok) continue;
        if (r0[i] < 0 && r1[i] < 0) continue;
        const fea_index d = r1[i] - r0[i];
        if (r0[i] < 0 || r1[i] < 0 || d == 0 || d > INT32_MAX / SF_MAX_LANES ||
            d < -(INT32_MAX / SF_MAX_LANES))
          ok = 0;
        else
          d0[i] = d, anyfree = 1;
      }
      s->line_ok[e] = (unsigned char)(ok && anyfree ? 2 : 0);
    }
#pragma omp barrier
    const fea_index c0 = chain_share_start(s, ne, t, nth);
    const fea_index c1 = chain_share_start(s, ne, t + 1, nth);
#pragma omp barrier
    if (c0 < c1) batches += chain_batches(s, c0, c1);
  }
  free(share_bd);
  s->line_batches = batches;
  /* Chains: unit-stride DoFs of one class by offset, split where an offset
   * is skipped; tiles of the other classes where the ISA has them; the
   * rest singles. */
  int order[SF_MAX_NB];
  s->nchain = 0;
  int nd = 0;
  for (int c = 0; c < nfc; c++) {
    if (s->lstride[c] != 1) continue;
    const int k = class_by_offset(s, c, order);
    for (int j = 0; j < k; j++) {
      if (j == 0 || s->foff[order[j]] != s->foff[order[j - 1]] + 1)
        s->chain_start[s->nchain++] = nd;
      s->chain_dof[nd++] = order[j];
    }
  }
  s->chain_start[s->nchain] = nd;
  unsigned char tiled[SF_MAX_NB] = {0}; /* 1: in a tile, 2: a full one */
  if (in->tiles && W == 8)
    for (int c = 0; c < nfc; c++)
      if (fea_sf_tile_stride(s->lstride[c])) build_tiles(s, c, order, tiled);
  s->nblock = 0;
  for (int c = 0; c < nfc; c++) build_block(s, c, order, tiled);
  build_singles(s, tiled, 1, &s->sg);
  build_singles(s, tiled, 2, &s->ss);
  build_prefetch(s);
  return FEA_SUCCESS;
}

/* The DoF classes of the table and of the free rows of the elements whose
 * DoFs are all free, then the line batches. The loops over the elements run
 * on in->threads: a 2D Q1 operator's setup on two threads had them as a
 * third of its time. The free rows are read through free_index where needed
 * rather than kept in a table of their own (2D Q1, 1M elements: 32 MB
 * written and read back, a fifth of the setup on one thread). */
fea_status fea_sf_plan_build(const fea_sf_plan_input *in, fea_sf_plan *s) {
  memset(s, 0, sizeof *s);
  const fea_index ne = in->ne, *table = in->edofs, *fi = in->free_index;
  const int nb = in->nb, T = in->threads > 1 ? in->threads : 1;
  s->nb = nb;
  s->lanes = in->lanes;
  s->ne = ne;
  unsigned char *use = malloc((size_t)ne + 1);
  fea_status st = FEA_ERR_OUT_OF_MEMORY;
  if (!use) goto done;
  s->nclass = find_classes(table, NULL, NULL, ne, nb, T, s->cls, s->off, &s->base);
  if (s->nclass < 0) goto done;
  s->bytes += (uint64_t)ne * (uint64_t)s->nclass * sizeof *s->base;
#pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
  for (fea_index e = 0; e < ne; e++) {
    unsigned char all = 1;
    for (int i = 0; i < nb; i++) all &= fi[table[e * nb + i]] >= 0;
    use[e] = all;
  }
  s->nfclass = find_classes(table, fi, use, ne, nb, T, s->fcls, s->foff, &s->fbase);
  if (s->nfclass < 0) goto done;
  s->bytes += (uint64_t)ne * (uint64_t)s->nfclass * sizeof *s->fbase;
  st = build_line(s, in, use, T);
done:
  free(use);
  if (st != FEA_SUCCESS) fea_sf_plan_free(s);
  return st;
}

void fea_sf_plan_free(fea_sf_plan *s) {
  free(s->base);
  free(s->fbase);
  free(s->line_ok);
  free(s->brow);
  free(s->brow_at);
  s->base = s->fbase = s->brow = NULL;
  s->line_ok = NULL;
  s->brow_at = NULL;
  s->nclass = s->nfclass = 0;
}

static int same_ints(const int *a, const int *b, int n) {
  return !memcmp(a, b, (size_t)n * sizeof *a);
}

static int same_bytes(const void *a, const void *b, size_t n) { return !memcmp(a, b, n); }

/* Whether the plan's line layout is g's: the same classes and strides,
 * chains, tiles (with their masks), blocks and singles; offsets aside. */
int fea_sf_plan_layout_is(const fea_sf_plan *s, const fea_sf_line_sig *g) {
  if (g->nfclass != s->nfclass || g->nchain != s->nchain || g->ntile != s->ntile ||
      g->nblock != s->nblock || g->nsingle != s->sg.n)
    return 0;
  if (!same_ints(g->lstride, s->lstride, s->nfclass) || !same_ints(g->fcls, s->fcls, s->nb) ||
      !same_ints(g->chain_start, s->chain_start, s->nchain + 1) ||
      !same_ints(g->chain_dof, s->chain_dof, s->chain_start[s->nchain]) ||
      !same_ints(g->tile_cls, s->tile_cls, s->ntile) ||
      !same_ints(g->tile_st, s->tile_st, s->ntile) ||
      !same_ints(g->tile_full, s->tile_full, s->ntile) ||
      !same_ints(g->block_cls, s->block_cls, s->nblock) ||
      !same_ints(g->block_st, s->block_st, s->nblock) ||
      !same_ints(g->block_m, s->block_m, s->nblock) ||
      !same_ints(g->single_dof, s->sg.dof, s->sg.n))
    return 0;
  for (int k = 0; k < s->ntile; k++)
    if (!same_bytes(g->tile_sdof[k], s->tile_sdof[k], 2 * (size_t)s->tile_st[k] * sizeof(short)) ||
        !same_bytes(g->tile_lmask[k], s->tile_lmask[k], (size_t)s->tile_st[k]))
      return 0;
  for (int k = 0; k < s->nblock; k++)
    if (!same_bytes(g->block_dof[k], s->block_dof[k], (size_t)s->block_m[k] * sizeof(short)) ||
        !same_bytes(g->block_next[k], s->block_next[k], (size_t)s->block_m[k] * sizeof(short)))
      return 0;
  return 1;
}

fea_index fea_sf_plan_sig_offset(const fea_sf_plan *s, int src) {
  return src >= 0               ? s->foff[src]
         : src >= -SF_MAX_TILES ? s->tile_off[-(src + 1)]
                                : s->block_off[-(src + 1) - SF_MAX_TILES];
}
