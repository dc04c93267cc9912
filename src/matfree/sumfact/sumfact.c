/* The sum-factorization matrix-free kernel (the thesis's tensor-product
 * method, section 2.3.3): y_e = K_e x_e without K_e, by contracting the
 * element coefficients with 1D tables direction by direction, scaling the
 * gradients at the quadrature points, and contracting back. This file is the
 * fea_matfree_kernel_ops table: choosing the instruction set and the kernel,
 * gathering batches of elements into SIMD lanes and scattering them back.
 * The arithmetic is in sumfact-body.h, the tables in sumfact-setup.c. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "error.h"
#include "sumfact.h"
#include "sort.h"

/* Best first: the first available one is the default. */
static const sf_isa *const isas[] = {&fea_sf_isa_avx512, &fea_sf_isa_avx2, &fea_sf_isa_baseline};

/* Round a count of doubles up so that the next array stays SF_ALIGN-aligned. */
static fea_index pad(fea_index n) {
  const fea_index a = SF_ALIGN / sizeof(double);
  return (n + a - 1) / a * a;
}

int sf_work_vectors(int dim, const int n[3]) {
  switch (dim) {
  case 1: return 1;
  case 2: return 2 * n[0] * n[1];
  default: return 4 * n[0] * n[1] * n[2];
  }
}

/* Counted as the kernels run: an output formed from one table of n entries
 * is one multiplication and n - 1 multiply-adds, 2 n - 1 flops; from two
 * tables 4 n - 1. Per element (N = n0 n1 n2):
 *   1D: n0 (2 n0 - 1)
 *   2D: 2 N (2 n0 - 1) + N (4 n1 - 1)
 *   3D: 2 N (2 n0 - 1) + N (4 n1 - 1) + N (2 n1 - 1) + N (4 n2 - 1). */
double sf_flops(int dim, const int n[3]) {
  double n0 = n[0], n1 = n[1], n2 = n[2];
  switch (dim) {
  case 1: return n0 * (2 * n0 - 1);
  case 2: return n0 * n1 * (2 * (2 * n0 - 1) + (4 * n1 - 1));
  default:
    return n0 * n1 * n2 * (2 * (2 * n0 - 1) + (4 * n1 - 1) + (2 * n1 - 1) + (4 * n2 - 1));
  }
}

/* Slot -> (direction, stiffness?, scaled by c of which direction, or -1). */
static const struct { int dir, stiff, cdir; } slot_def[SF_NTAB] = {
  [SF_M0] = {0, 0, -1}, [SF_S0] = {0, 1, -1}, [SF_M1] = {1, 0, -1}, [SF_CM1] = {1, 0, 0},
  [SF_CS1] = {1, 1, 1}, [SF_M2] = {2, 0, -1}, [SF_CS2] = {2, 1, 2}, [SF_CS0] = {0, 1, 0},
};

int sf_tables_used(int dim, int which[SF_NTAB]) {
  static const int used[3][SF_NTAB] = {
    [0] = {[SF_CS0] = 1},
    [1] = {[SF_M0] = 1, [SF_S0] = 1, [SF_CM1] = 1, [SF_CS1] = 1},
    [2] = {[SF_M0] = 1, [SF_S0] = 1, [SF_M1] = 1, [SF_CM1] = 1, [SF_CS1] = 1, [SF_M2] = 1,
           [SF_CS2] = 1},
  };
  int count = 0;
  for (int t = 0; t < SF_NTAB; t++) count += which[t] = used[dim - 1][t];
  return count;
}

/* Doubles of the lane tables of one batch (each used slot padded). */
static fea_index lane_table_doubles(const sf_state *s, int W) {
  int which[SF_NTAB];
  sf_tables_used(s->dim, which);
  fea_index lt = 0;
  for (int t = 0; t < SF_NTAB; t++)
    if (which[t]) lt += pad((fea_index)s->n[slot_def[t].dir] * s->n[slot_def[t].dir] * W);
  return lt;
}

/* Fill lane l of every used slot from the element with direction indices
 * idx and geometry factors c (lanes at t, laid out as lane_table_doubles). */
static void fill_lane(const sf_state *s, int W, int l, const fea_index idx[3], const double c[3],
                      double *t) {
  int which[SF_NTAB];
  sf_tables_used(s->dim, which);
  for (int k = 0; k < SF_NTAB; k++) {
    if (!which[k]) continue;
    const int d = slot_def[k].dir, n = s->n[d];
    const double *src = s->tab[d] + idx[d] * 2 * n * n + (slot_def[k].stiff ? n * n : 0);
    const double f = slot_def[k].cdir >= 0 ? c[slot_def[k].cdir] : 1.0;
    for (int j = 0; j < n * n; j++) t[j * W + l] = f * src[j];
    t += pad((fea_index)n * n * W);
  }
}

/* Point the batch's slots into lane tables laid out as lane_table_doubles. */
static void point_tables(const sf_state *s, int W, const double *t, sf_batch *b) {
  int which[SF_NTAB];
  sf_tables_used(s->dim, which);
  for (int k = 0; k < SF_NTAB; k++) {
    b->T[k] = NULL;
    if (!which[k]) continue;
    const int n = s->n[slot_def[k].dir];
    b->T[k] = t;
    t += pad((fea_index)n * n * W);
  }
}

int fea_sf_shared_tables(const sf_state *s, sf_batch *b) {
  if (!s->lane_tab) return 0;
  point_tables(s, s->isa->lanes, s->lane_tab, b);
  return 1;
}

static int sf_supports_op(const fea_problem *pb, char *why, size_t len) {
  return sf_supports(pb, why, len);
}

static void sf_destroy(void *state) {
  sf_state *s = state;
  if (!s) return;
  free(s->w); /* the block of all scalar tables starts with w */
  free(s->lane_tab);
  free(s->base);
  free(s->fbase);
  free(s->line_ok);
  free(s->brow);
  free(s->brow_at);
  free(s);
}

static const sf_isa *find_isa(const char *name) {
  for (size_t i = 0; i < sizeof isas / sizeof *isas; i++)
    if (isas[i]->available() && (!name || !strcmp(name, isas[i]->name))) return isas[i];
  return NULL;
}

/* The fixed-size kernel when every direction has N = p + 1 functions,
 * N = 2..9 (the rule is folded into the tables); else the generic one. */
static void choose_kernel(sf_state *s, int generic) {
  int N = s->n[0], same = 1;
  for (int k = 0; k < s->dim; k++) same = same && s->n[k] == N;
  s->instantiated = !generic && same && N >= 2 && N <= SF_MAX_N;
  s->fn = s->instantiated ? s->isa->fixed[s->dim - 1][N] : s->isa->generic;
}

/* The shared lane tables by slot (sf_state.qtab), for the fused line batches. */
static void fused_tables(sf_state *s) {
  sf_batch b;
  point_tables(s, s->isa->lanes, s->lane_tab, &b);
  memcpy(s->qtab, b.T, sizeof s->qtab);
}

/* The fused line batches (sf_state.qline) where the space's line batches
 * have their shape: one free class of unit stride, chains of two DoFs
 * along direction 0, chain c holding DoFs 2c and 2c + 1 in that order. */
static void choose_qline(sf_state *s) {
  const int N = 2, nc = s->dim == 2 ? N : N * N;
  s->qline = NULL;
  if (!s->line_ok || !s->instantiated || s->per_span || s->n[0] != N || s->dim < 2 ||
      !s->isa->qline[s->dim - 1] || s->nfclass != 1 || s->lstride[0] != 1 || s->nchain != nc)
    return;
  for (int c = 0; c < nc; c++) {
    if (s->chain_start[c + 1] - s->chain_start[c] != N) return;
    for (int t = 0; t < N; t++)
      if (s->chain_dof[s->chain_start[c] + t] != c * N + t) return;
    s->qoff[c] = s->foff[c * N];
  }
  fused_tables(s);
  s->qline = s->isa->qline[s->dim - 1];
}

#include "sumfact-lines-gen.h" /* sf_gline_sigs */

static int same_ints(const int *a, const int *b, int n) {
  return !memcmp(a, b, (size_t)n * sizeof *a);
}

static int same_bytes(const void *a, const void *b, size_t n) { return !memcmp(a, b, n); }

/* Whether the state's line layout is g's: the same classes and strides,
 * chains, tiles (with their masks), blocks and singles; offsets aside. */
static int line_layout_is(const sf_state *s, const sf_line_sig *g) {
  if (g->dim != s->dim || g->n != s->n[0] || g->nfclass != s->nfclass || g->nchain != s->nchain ||
      g->ntile != s->ntile || g->nblock != s->nblock || g->nsingle != s->sg.n)
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

/* The generated fused line batch made from this state's layout, if any. */
static void choose_gline(sf_state *s) {
  s->gline = NULL;
  const int N = s->n[0];
  if (!s->line_ok || !s->instantiated || s->per_span || s->dim < 2 || N > SF_MAX_N ||
      !s->isa->gline[s->dim - 1][N])
    return;
  for (size_t k = 0; k < sizeof sf_gline_sigs / sizeof *sf_gline_sigs; k++)
    if (sf_gline_sigs[k] && line_layout_is(s, sf_gline_sigs[k])) {
      const sf_line_sig *g = sf_gline_sigs[k];
      for (int j = 0; j < g->noff; j++) {
        const int src = g->off_src[j];
        s->goff[j] = src >= 0              ? s->foff[src]
                     : src >= -SF_MAX_TILES ? s->tile_off[-(src + 1)]
                                            : s->block_off[-(src + 1) - SF_MAX_TILES];
      }
      fused_tables(s);
      s->gline = s->isa->gline[s->dim - 1][N];
      return;
    }
}

static void describe(sf_state *s) {
  char p[48], q[48];
  if (s->dim == 1 || (s->n[0] == s->n[1] && (s->dim == 2 || s->n[1] == s->n[2])))
    snprintf(p, sizeof p, "%d", s->n[0] - 1);
  else if (s->dim == 2)
    snprintf(p, sizeof p, "(%d,%d)", s->n[0] - 1, s->n[1] - 1);
  else
    snprintf(p, sizeof p, "(%d,%d,%d)", s->n[0] - 1, s->n[1] - 1, s->n[2] - 1);
  if (s->dim == 1 || (s->nq[0] == s->nq[1] && (s->dim == 2 || s->nq[1] == s->nq[2])))
    snprintf(q, sizeof q, "%d", s->nq[0]);
  else if (s->dim == 2)
    snprintf(q, sizeof q, "(%d,%d)", s->nq[0], s->nq[1]);
  else
    snprintf(q, sizeof q, "(%d,%d,%d)", s->nq[0], s->nq[1], s->nq[2]);
  snprintf(s->desc, sizeof s->desc, "sum-factorization %dD %s p=%s nq=%s %s x%d %s", s->dim,
           s->per_span ? "b-spline" : "lagrange", p, q, s->isa->name, s->isa->lanes,
           s->instantiated ? "instantiated" : "generic");
}

/* Shared tables (Lagrange) are broadcast into lanes once here, the
 * geometry factors folded in; per-span tables (B-splines) are copied into
 * lanes per batch in apply. */
static fea_status build_lanes(const fea_problem *pb, sf_state *s) {
  const int W = s->isa->lanes;
  const fea_index lt = lane_table_doubles(s, W);
  if (!s->per_span) {
    s->lane_tab = aligned_alloc(SF_ALIGN, (size_t)lt * sizeof(double));
    if (!s->lane_tab)
      return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld lane doubles",
                       (long long)lt);
    s->bytes += (uint64_t)lt * sizeof(double);
    fea_index idx[3] = {0, 0, 0};
    double c[3];
    sf_geometry_factors(s, idx, c);
    for (int l = 0; l < W; l++) fill_lane(s, W, l, idx, c, s->lane_tab);
  }
  /* Scratch: alignment slack, x and y lanes, per-batch tables, work. */
  s->scratch = SF_ALIGN / sizeof(double) + 2 * pad((fea_index)s->nb * W) +
               (s->per_span ? lt : 0) + pad((fea_index)sf_work_vectors(s->dim, s->n) * W);
  return FEA_SUCCESS;
}

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
        if ((!use || use[e]) &&
            mapped(map, idx[e * nb + i]) - mapped(map, idx[e * nb + j]) != dd)
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
  int rep[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  *base = NULL;
  if (first == ne) return 0;
  fea_index el[SF_CLASS_PROBE], nel = 0;
  const fea_index span = ne - first;
  for (int k = 0; k < SF_CLASS_PROBE && k < span; k++) /* half consecutive, half spread */
    el[nel++] = first + (k < SF_CLASS_PROBE / 2 ? k : span * k / SF_CLASS_PROBE);
  int nc = classes_on(idx, map, use, first, ne, el, nel, nb, rep, cls, off);
  fea_index *b = calloc((size_t)ne * (size_t)nc + 1, sizeof *b);
  if (!b) return -1;
  int repi[SF_MAX_N * SF_MAX_N * SF_MAX_N]; /* each DoF's class representative */
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
 * class by class (sf_state.pf_start: one base per class, then its
 * windows' offsets: fewer instructions than a class index and a base per
 * window, 1.03 - 1.06x measured, within that day's noise); none when
 * there are more than
 * SF_MAX_PF. */
static void build_prefetch(sf_state *s) {
  const int W = s->isa->lanes, nb = s->nb;
  fea_index a[SF_MAX_LANES * SF_MAX_N * SF_MAX_N * SF_MAX_N];
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
static int class_by_offset(const sf_state *s, int c, int *order) {
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

/* The tiles of free class c (sf_state.tile_*): from its lowest offset o not
 * yet in one, the DoFs at o .. o + 2 ST - 1, when there are two or more.
 * Marks them in tiled (1; 2 in a full tile). */
static void build_tiles(sf_state *s, int c, int *order, unsigned char *tiled) {
  const int st = s->lstride[c], W = s->isa->lanes;
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

/* The blocks of free class c (sf_state.block_*) when no tile serves it
 * and its stride S is at least W: each run of M >= W untiled DoFs at
 * consecutive offsets o .. o + M - 1 (M <= S), by offset; the class's
 * untiled DoFs at o + S .. o + S + M - 1 join a block one lane on. Marks
 * them in tiled (2: gathered and added). */
static void build_block(sf_state *s, int c, int *order, unsigned char *tiled) {
  const int S = s->lstride[c], W = s->isa->lanes;
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
static void build_singles(const sf_state *s, const unsigned char *tiled, int level,
                          sf_singles *g) {
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

/* Line batches (see sf_state): each free class's stride from one
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
static void chain_tails(sf_state *s, fea_index ea, fea_index eb, unsigned char kind) {
  const int W = s->isa->lanes;
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
static fea_index chain_batches(sf_state *s, fea_index lo, fea_index hi) {
  const int W = s->isa->lanes, nb = s->nb;
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
static fea_index chain_share_start(const sf_state *s, fea_index ne, int t, int nth) {
  if (t >= nth) return ne;
  fea_index e = ne * t / nth;
  while (e > 0 && e < ne && s->line_ok[e - 1]) e++;
  return e;
}

/* Line steps and batches (see sf_state.line_ok) of the elements with
 * use[e] (all DoFs free), from the element-DoF table dofs. Each pass runs
 * on the context's threads: serial, the flags were a fifth of a 2D Q1
 * operator's setup. */
static fea_status build_line(const fea_problem *pb, sf_state *s, const unsigned char *use,
                             const fea_index *dofs, int threads) {
  const fea_index ne = s->space->num_elements;
  const int W = s->isa->lanes, nfc = s->nfclass, nb = s->nb;
  if (!nfc || !s->isa->line_gather || ne < W) return FEA_SUCCESS;
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
  if (!s->line_ok)
    return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld line flags",
                     (long long)ne);
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
    return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the rows of %lld boundary "
                     "elements", (long long)nbd);
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
          s->brow[k * 2 * nb + i] = pb->free_index[dofs[e * nb + i]];
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
  int order[SF_MAX_N * SF_MAX_N * SF_MAX_N];
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
  unsigned char tiled[SF_MAX_N * SF_MAX_N * SF_MAX_N] = {0}; /* 1: in a tile, 2: a full one */
  if (s->isa->tiles && W == 8)
    for (int c = 0; c < nfc; c++)
      if (sf_tile_stride(s->lstride[c])) build_tiles(s, c, order, tiled);
  s->nblock = 0;
  for (int c = 0; c < nfc; c++) build_block(s, c, order, tiled);
  build_singles(s, tiled, 1, &s->sg);
  build_singles(s, tiled, 2, &s->ss);
  build_prefetch(s);
  return FEA_SUCCESS;
}

/* The DoF classes of the space's numbering, and of the free rows of the
 * elements whose DoFs are all free (see sf_state). */
static fea_status build_base(const fea_problem *pb, const fea_index *edofs, sf_state *s) {
  const fea_space *sp = s->space;
  const fea_index ne = sp->num_elements;
  const int nb = s->nb;
  /* The caller's element-DoF table, else the space's, else a copy. */
  const fea_index *given = edofs ? edofs : sp->element_dof_table;
  fea_index *dofs = NULL;
  if (!given) dofs = malloc(((size_t)ne * (size_t)nb + 1) * sizeof *dofs);
  unsigned char *use = malloc((size_t)ne + 1);
  fea_status st = FEA_SUCCESS;
  if ((!given && !dofs) || !use) {
    st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld element DoF indices",
                   (long long)ne * nb);
    goto done;
  }
  const fea_index *table = given ? given : dofs;
  if (!given)
    for (fea_index e = 0; e < ne; e++) sp->ops->element_dofs(sp, e, dofs + e * nb);
  /* The loops over the elements below on the context's threads: a 2D Q1
   * operator's setup on two threads had them as a third of its time. The
   * free rows are read through free_index where needed rather than kept
   * in a table of their own (2D Q1, 1M elements: 32 MB written and read
   * back, a fifth of the setup on one thread). */
  const int T = pb->ctx->nthreads > 1 ? pb->ctx->nthreads : 1;
  s->nclass = find_classes(table, NULL, NULL, ne, nb, T, s->cls, s->off, &s->base);
  if (s->nclass < 0) {
    s->nclass = 0;
    st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the element bases");
    goto done;
  }
  s->bytes += (uint64_t)ne * (uint64_t)s->nclass * sizeof *s->base;
#pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
  for (fea_index e = 0; e < ne; e++) {
    unsigned char all = 1;
    for (int i = 0; i < nb; i++) all &= pb->free_index[table[e * nb + i]] >= 0;
    use[e] = all;
  }
  s->nfclass = find_classes(table, pb->free_index, use, ne, nb, T, s->fcls, s->foff, &s->fbase);
  if (s->nfclass < 0) {
    s->nfclass = 0;
    st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the element row bases");
    goto done;
  }
  s->bytes += (uint64_t)ne * (uint64_t)s->nfclass * sizeof *s->fbase;
  st = build_line(pb, s, use, table, T);
done:
  free(dofs);
  free(use);
  return st;
}

/* fea_sumfact_create_with, with the caller's element-DoF table (or NULL). */
static fea_status create_state(const fea_problem *pb, const char *isa, int generic,
                               const fea_index *edofs, void **state) {
  char why[256];
  *state = NULL;
  if (!sf_supports(pb, why, sizeof why))
    return FEA_ERROR(pb->ctx, FEA_ERR_UNSUPPORTED, "sum factorization: %s", why);
  /* Aligned like the lane arrays (it used to hold some). */
  size_t state_bytes = (sizeof(sf_state) + SF_ALIGN - 1) / SF_ALIGN * SF_ALIGN;
  sf_state *s = aligned_alloc(SF_ALIGN, state_bytes);
  if (!s) return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a kernel state");
  memset(s, 0, sizeof *s);
  s->bytes = sizeof *s;
  s->isa = find_isa(isa);
  fea_status st = s->isa ? FEA_SUCCESS
                         : FEA_ERROR(pb->ctx, FEA_ERR_UNSUPPORTED,
                                     "instruction set \"%s\" is not built or not on this CPU", isa);
  if (st == FEA_SUCCESS) st = sf_build_tables(pb, s);
  if (st == FEA_SUCCESS) st = build_lanes(pb, s);
  if (st == FEA_SUCCESS) st = build_base(pb, edofs, s);
  if (st != FEA_SUCCESS) {
    sf_destroy(s);
    return st;
  }
  choose_kernel(s, generic);
  choose_qline(s);
  choose_gline(s);
  describe(s);
  if (s->line_ok) {
    const size_t used = strlen(s->desc);
    snprintf(s->desc + used, sizeof s->desc - used, ", %slines: %d/%d DoFs stride 1%s",
             s->qline || s->gline ? "fused " : "", s->chain_start[s->nchain], s->nb,
             s->nblock ? ", blocks" : "");
  }
  *state = s;
  return FEA_SUCCESS;
}

fea_status fea_sumfact_create_with(const fea_problem *pb, const char *isa, int generic,
                                   void **state) {
  return create_state(pb, isa, generic, NULL, state);
}

static fea_status sf_create(const fea_problem *pb, const fea_index *edofs, void **state) {
  return create_state(pb, NULL, 0, edofs, state);
}

/* Up to 32 lane batches per call (256 elements with AVX-512, the
 * operator's limit): enough consecutive elements for apply_add to find line
 * batches that do not start where a call does, few runs cut by a call's
 * end, and the per-call costs (the strategy's visit, the batch set-up)
 * spread thin: 64 -> 256 measured 6 - 8 % faster for 3D Q1 / Q2. Fewer for
 * large elements, whose results (nb per element) the non-direct strategies
 * keep for the whole call: about 32k doubles (256 KB) at most, and at
 * least 8 batches. */
static int sf_batch_size(const void *state) {
  const sf_state *s = state;
  int k = 4096 / s->nb;
  k = k < 8 ? 8 : k > 32 ? 32 : k;
  return k * s->isa->lanes;
}

/* Lanes of one batch: element l < m gathered, the rest zero (their results
 * are computed and dropped; zero factors keep them finite). */
static void gather(const sf_state *s, const fea_index *elems, int m, const double *x_full,
                   sf_batch *b, double *lt) {
  const int W = s->isa->lanes, nb = s->nb;
  double *X = (double *)b->x;
  const int nc = s->nclass, *cls = s->cls, *off = s->off;
  const double *xs[SF_MAX_LANES * SF_MAX_N * SF_MAX_N * SF_MAX_N];
  if (!x_full) goto tables;
  for (int l = 0; l < m; l++) {
    const fea_index *be = s->base + elems[l] * nc;
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
      sf_element_index(s, elems[l], idx);
      sf_geometry_factors(s, idx, ck);
    }
    fill_lane(s, W, l, idx, ck, lt);
  }
}

/* The scratch laid out for one call: lanes of x and y, per-span tables, work. */
static void batch_init(const sf_state *s, double *scratch, sf_batch *b, double **lt) {
  const int W = s->isa->lanes, nb = s->nb;
  double *p = (double *)(((uintptr_t)scratch + SF_ALIGN - 1) & ~(uintptr_t)(SF_ALIGN - 1));
  double *X = p;
  double *Y = X + pad((fea_index)nb * W);
  *lt = Y + pad((fea_index)nb * W);
  double *work = *lt + (s->per_span ? lane_table_doubles(s, W) : 0);
  memset(b, 0, sizeof *b);
  b->dim = s->dim;
  b->x = X;
  b->y = Y;
  b->work = work;
  for (int k = 0; k < 3; k++) b->n[k] = s->n[k];
  point_tables(s, W, s->per_span ? *lt : s->lane_tab, b);
}

static void sf_apply(const void *state, const fea_index *elems, int count, const double *x_full,
                     double *y, double *scratch) {
  const sf_state *s = state;
  const int W = s->isa->lanes, nb = s->nb;
  sf_batch b;
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

/* apply_add's gather from the reduced vector x: lanes of elements with
 * every DoF free (and writable) by their row classes, the others DoF by
 * DoF through the rows (Dirichlet DoFs zero). */
static void gather_rows(const sf_state *s, const fea_index *elems, int m, const double *x,
                        const fea_matfree_target *tg, sf_batch *b, double *lt) {
  const int W = s->isa->lanes, nb = s->nb, nc = s->nclass, nfc = s->nfclass;
  double *X = (double *)b->x;
  for (int l = 0; l < W; l++) {
    if (l >= m) {
      for (int i = 0; i < nb; i++) X[i * W + l] = 0.0;
      continue;
    }
    const fea_index e = elems[l];
    if (nfc && tg->elem_blk && tg->elem_blk[e] == tg->blk) {
      const double *xc[SF_MAX_N * SF_MAX_N * SF_MAX_N];
      for (int c = 0; c < nfc; c++) xc[c] = x + s->fbase[e * nfc + c];
      for (int i = 0; i < nb; i++) X[i * W + l] = xc[s->fcls[i]][s->foff[i]];
    } else if (s->brow_at && s->brow_at[e] >= 0) { /* the rows kept for boundary lines */
      const fea_index *rows = s->brow + (fea_index)s->brow_at[e] * 2 * nb;
      /* Branch-free (a Dirichlet DoF reads a zero): the pattern of an
       * element's Dirichlet DoFs is too long for the branch predictor. */
      static const double zero = 0.0;
      for (int i = 0; i < nb; i++) X[i * W + l] = *(rows[i] >= 0 ? x + rows[i] : &zero);
    } else {
      const fea_index *be = s->base + e * nc;
      for (int i = 0; i < nb; i++) {
        const fea_index r = tg->row[be[s->cls[i]] + s->off[i]];
        X[i * W + l] = r >= 0 ? x[r] : 0.0;
      }
    }
  }
  if (s->per_span) gather(s, elems, m, NULL, b, lt); /* tables only */
}

/* One batch of m <= W elements of the general path: gather, kernel, and
 * each element's results added from its lane. Returns the adds done. */
static uint64_t general_batch(const sf_state *s, const fea_index *elems, int m, const double *x,
                              const fea_matfree_target *tg, sf_batch *b, double *lt) {
  const int W = s->isa->lanes, nb = s->nb, fr = tg->free_rows;
  double *yt = tg->y;
  const int nc = s->nclass, *cls = s->cls, *off = s->off;
  const int nfc = fr ? s->nfclass : nc, *fcls = fr ? s->fcls : cls, *foff = fr ? s->foff : off;
  const fea_index *fbase = fr ? s->fbase : s->base;
  uint64_t n = 0;
  /* Where Dirichlet DoFs' results go without a branch: one slot per DoF, so
   * that the adds into it form no chain from one DoF to the next. */
  double sink[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  if (fr && s->brow_at) memset(sink, 0, (size_t)nb * sizeof *sink);
  if (fr)
    gather_rows(s, elems, m, x, tg, b, lt);
  else
    gather(s, elems, m, x, b, lt);
  s->fn(b);
  const double *Y = b->y;
  for (int l = 0; l < m; l++) {
    const fea_index e = elems[l];
    if (nfc && tg->elem_blk && tg->elem_blk[e] == tg->blk) { /* every DoF: no tests */
      const fea_index *be = fbase + e * nfc;
      double *yc[SF_MAX_N * SF_MAX_N * SF_MAX_N];
      for (int c = 0; c < nfc; c++) yc[c] = yt + be[c];
      for (int i = 0; i < nb; i++) yc[fcls[i]][foff[i]] += Y[i * W + l];
      n += (uint64_t)nb;
      continue;
    }
    if (fr && s->brow_at && s->brow_at[e] >= 0) { /* the rows kept for boundary lines */
      const fea_index *rows = s->brow + (fea_index)s->brow_at[e] * 2 * nb;
      /* elem_blk -(blk + 2): every free row is this block's, no owner to look up */
      const int *own = tg->elem_blk && tg->elem_blk[e] == -(tg->blk + 2) ? NULL : tg->owner;
      if (!own) { /* branch-free, as in gather_rows: a Dirichlet DoF adds into a sink */
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
        if (r < 0 || (own && own[r] != tg->blk)) continue;
        yt[r] += Y[i * W + l];
        n++;
      }
      continue;
    }
    const fea_index *be = s->base + e * nc;
    for (int i = 0; i < nb; i++) {
      const fea_index d = be[cls[i]] + off[i], r = tg->row[d];
      if (r < 0 || (tg->owner && tg->owner[r] != tg->blk)) continue;
      yt[fr ? r : d] += Y[i * W + l];
      n++;
    }
  }
  return n;
}

/* Whether element e may be a lane of a line batch of this kind under
 * this call's target: kind 1, every DoF free and writable (elem_blk);
 * kind 2, a boundary element whose free rows are all writable (elem_blk
 * -(blk + 2): no ownership, or one block owns them all) and kept (brow_at,
 * read only then: the elements next to each line's ends would otherwise
 * cost a cache miss each). */
static int lane_ok(const sf_state *s, const fea_matfree_target *tg, fea_index e, int kind) {
  return kind == 1 ? tg->elem_blk[e] == tg->blk
                   : tg->elem_blk[e] == -(tg->blk + 2) && s->brow_at[e] >= 0;
}

/* Whether the W elements from e may be the lanes of a line batch of this
 * kind under this call's target (lane_ok for each; without owners every
 * lane of a kind-1 batch is, and with them blk_run tells at once). */
static int lanes_writable(const sf_state *s, const fea_matfree_target *tg, fea_index e, int kind) {
  const int W = s->isa->lanes;
  if (kind == 1) {
    if (!tg->owner) return tg->blk == 0;
    if (tg->blk_run) return tg->blk_run[e] >= W && tg->elem_blk[e] == tg->blk;
  }
  for (int l = 0; l < W; l++)
    if (!lane_ok(s, tg, e + l, kind)) return 0;
  return 1;
}

/* Elements ahead of a line batch whose flags (elem_blk, brow_at) it prefetches. */
#define SF_FLAGS_AHEAD 128

/* The flags that the elements at the ends of lines read, prefetched by the
 * line batch at e0 (no stream the hardware follows there: one element in
 * n): 3D Q1 1.05x. */
static inline void flags_prefetch(const sf_state *s, const fea_matfree_target *tg, fea_index e0) {
  if (e0 + SF_FLAGS_AHEAD < s->space->num_elements) {
    __builtin_prefetch(tg->elem_blk + e0 + SF_FLAGS_AHEAD, 0, 3);
    if (s->brow_at) __builtin_prefetch(s->brow_at + e0 + SF_FLAGS_AHEAD, 0, 3);
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
static int line_batch(const sf_state *s, const fea_index *elems, fea_index first, int k,
                      int count, const fea_matfree_target *tg, int *skip) {
  const int W = s->isa->lanes, left = count - k;
  const fea_index e0 = SF_ELEM(elems, first, k);
  const unsigned char v = s->line_ok[e0];
  if (!elems && !(v == 1 && left >= W)) { /* ranges: what line_ok says, where it can */
    if (v == 0) return 0;
    const int kind = v & SF_TAIL ? (v >> 4) & 3 : v, sk = v & SF_TAIL ? v & 15 : 0;
    if (sk <= k && left >= W - sk && lanes_writable(s, tg, e0 - sk, kind)) {
      *skip = sk;
      return kind;
    } /* else a run cut by the call: the lanes probed below */
  }
  if (left >= W && v == 1) { /* the common case, tested without branches */
    /* Consecutive by construction, and line_ok 1 says that all W lanes
     * have every DoF free: lanes_writable checks the ownership. */
    if (!elems && lanes_writable(s, tg, e0, 1)) {
      *skip = 0;
      return 1;
    }
    int ok = 1;
    for (int r = 0; r < W; r++)
      ok &= (SF_ELEM(elems, first, k + r) == e0 + r) & (tg->elem_blk[e0 + r] == tg->blk);
    if (ok) {
      *skip = 0;
      return 1;
    }
  }
  const int kind = tg->elem_blk[e0] == tg->blk ? 1 : 2;
  int r = 0;
  while (r < W && r < left && SF_ELEM(elems, first, k + r) == e0 + r &&
         lane_ok(s, tg, e0 + r, kind))
    r++;
  if (r < W / 2) return 0; /* a short run (or none: COLORING's order) is cheaper in a general batch */
  const fea_index start = e0 - (W - r);
  if (start < 0 || W - r > k || s->line_ok[start] != kind) return 0;
  for (int j = 1; j <= W - r; j++) /* this call's elements just before: done by this thread */
    if (SF_ELEM(elems, first, k - j) != e0 - j || !lane_ok(s, tg, e0 - j, kind)) return 0;
  *skip = W - r;
  return kind;
}

/* Gather, kernel and scatter in one. On the reduced vectors (free_rows),
 * runs of W consecutive elements that start a line batch (sf_state) are
 * gathered and added with lane vectors (the last r < W of a run in the
 * batch that ends with them, its other lanes zero: adding their zero
 * results changes nothing); the other elements are collected,
 * in order, into general batches, whose results are added element by
 * element from their lanes (elements whose every DoF the caller may write,
 * elem_blk[e] == blk, without a test per DoF). The adds of different
 * batches come in another order than elems then: the strategies that call
 * this (SERIAL, COLORING, PRIVATE_BUFFERS) let no other thread write the
 * rows meanwhile, so only the rounding can change. */
static void sf_apply_add(const void *state, const fea_index *elems, int count,
                         const double *x_full, const fea_matfree_target *tg, double *scratch) {
  const sf_state *s = state;
  const int W = s->isa->lanes, nfc = s->nfclass;
  sf_batch b;
  double *lt;
  batch_init(s, scratch, &b, &lt);
  uint64_t n = 0;
  const int line = tg->free_rows && s->line_ok && tg->elem_blk;
  fea_index pend[SF_MAX_LANES];
  int np = 0;
  const fea_index first = tg->first;
  for (int k = 0; k < count;) {
    int skip, kind;
    if (line && (kind = line_batch(s, elems, first, k, count, tg, &skip)) != 0) {
      const fea_index e0 = SF_ELEM(elems, first, k) - skip;
      const fea_index *base = s->fbase + e0 * nfc;
      if (kind == 1 && (s->qline || s->gline)) { /* fused: gather, kernel and add in one */
        if (s->qline)
          s->qline(s, base[0], skip, x_full, tg->y);
        else
          s->gline(s, base, skip, x_full, tg->y);
        flags_prefetch(s, tg, e0);
        n += (uint64_t)(W - skip) * (uint64_t)s->nb;
        k += W - skip;
        continue;
      }
      const fea_index *rows = kind == 2 ? s->brow + (fea_index)s->brow_at[e0] * 2 * s->nb : NULL;
      double *X = (double *)b.x;
      if (kind == 1)
        s->isa->line_gather(s, base, x_full, X);
      else
        s->isa->bline_gather(s, rows, x_full, X);
      if (skip)
        for (int i = 0; i < s->nb; i++)
          for (int l = 0; l < skip; l++) X[i * W + l] = 0.0;
      if (s->per_span) { /* tables only */
        fea_index el[SF_MAX_LANES];
        for (int l = 0; l < W; l++) el[l] = e0 + l;
        gather(s, el, W, NULL, &b, lt);
      }
      s->fn(&b);
      int nfree = s->nb;
      if (kind == 1) {
        s->isa->line_scatter(s, base, b.y, tg->y);
        flags_prefetch(s, tg, e0);
      } else {
        s->isa->bline_scatter(s, rows, b.y, tg->y);
        for (int i = 0; i < s->nb; i++) nfree -= rows[i] < 0;
      }
      n += (uint64_t)(W - skip) * (uint64_t)nfree;
      k += W - skip;
      continue;
    }
    pend[np++] = SF_ELEM(elems, first, k);
    k++;
    if (s->brow_at && s->brow_at[pend[np - 1]] >= 0) { /* its rows, for general_batch */
      const char *p = (const char *)(s->brow + (fea_index)s->brow_at[pend[np - 1]] * 2 * s->nb);
      for (int q = 0; q < s->nb * (int)sizeof *s->brow; q += 64) __builtin_prefetch(p + q, 0, 3);
    }
    if (np == W) {
      n += general_batch(s, pend, np, x_full, tg, &b, lt);
      np = 0;
    }
  }
  if (np) n += general_batch(s, pend, np, x_full, tg, &b, lt);
  *tg->updates += n;
}

static fea_index sf_scratch(const void *state) { return ((const sf_state *)state)->scratch; }

/* Bytes per element that must come from memory beyond the vectors (which
 * the operator counts once per DoF): the element's DoF addressing, one base
 * index per DoF class. The 1D tables
 * (and B-spline spans' tables, nel_k per direction) stay in cache; element
 * values x_e, y_e are gathered from and added into the vectors, which the
 * caches serve after the first touch. */
static void sf_cost(const void *state, double *flops, double *bytes) {
  const sf_state *s = state;
  *flops = sf_flops(s->dim, s->n);
  *bytes = (double)(s->nfclass ? s->nfclass : s->nclass) * (double)sizeof(fea_index);
}

static uint64_t sf_memory(const void *state) { return ((const sf_state *)state)->bytes; }

static const char *sf_describe(const void *state) { return ((const sf_state *)state)->desc; }

const fea_matfree_kernel_ops fea_matfree_kernel_sumfact = {
  .name = "sum-factorization",
  .supports = sf_supports_op,
  .create = sf_create,
  .destroy = sf_destroy,
  .batch = sf_batch_size,
  .apply = sf_apply,
  .apply_add = sf_apply_add,
  .diagonal = sf_diagonal,
  .scratch_doubles = sf_scratch,
  .cost = sf_cost,
  .memory = sf_memory,
  .describe = sf_describe,
};
