/* The sum-factorization matrix-free kernel (the thesis's tensor-product
 * method, section 2.3.3): y_e = K_e x_e without K_e, by contracting the
 * element coefficients with 1D tables direction by direction. This file is
 * the fea_matfree_kernel_ops table and its create: the restriction plan
 * (plan.c), the tables (sumfact-tables.c) broadcast into lanes, and the
 * choice of instruction set, tensor kernel and fused line batches. The
 * arithmetic is in sumfact-body.h, apply and apply_add in sumfact-apply.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "sumfact.h"

/* Best first: the first available one is the default. */
static const fea_sf_isa *const isas[] = {&fea_sf_isa_avx512, &fea_sf_isa_avx2,
                                         &fea_sf_isa_baseline};

int fea_sf_work_vectors(int dim, const int n[3]) {
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
double fea_sf_flops(int dim, const int n[3]) {
  double n0 = n[0], n1 = n[1], n2 = n[2];
  switch (dim) {
  case 1: return n0 * (2 * n0 - 1);
  case 2: return n0 * n1 * (2 * (2 * n0 - 1) + (4 * n1 - 1));
  default: return n0 * n1 * n2 * (2 * (2 * n0 - 1) + (4 * n1 - 1) + (2 * n1 - 1) + (4 * n2 - 1));
  }
}

/* Slot -> (direction, stiffness?, scaled by c of which direction, or -1). */
static const struct {
  int dir, stiff, cdir;
} slot_def[SF_NTAB] = {
    [SF_M0] = {0, 0, -1}, [SF_S0] = {0, 1, -1}, [SF_M1] = {1, 0, -1}, [SF_CM1] = {1, 0, 0},
    [SF_CS1] = {1, 1, 1}, [SF_M2] = {2, 0, -1}, [SF_CS2] = {2, 1, 2}, [SF_CS0] = {0, 1, 0},
};

int fea_sf_tables_used(int dim, int which[SF_NTAB]) {
  static const int used[3][SF_NTAB] = {
      [0] = {[SF_CS0] = 1},
      [1] = {[SF_M0] = 1, [SF_S0] = 1, [SF_CM1] = 1, [SF_CS1] = 1},
      [2] = {[SF_M0] = 1,
             [SF_S0] = 1,
             [SF_M1] = 1,
             [SF_CM1] = 1,
             [SF_CS1] = 1,
             [SF_M2] = 1,
             [SF_CS2] = 1},
  };
  int count = 0;
  for (int t = 0; t < SF_NTAB; t++) count += which[t] = used[dim - 1][t];
  return count;
}

/* Doubles of the lane tables of one batch (each used slot padded). */
fea_index fea_sf_lane_table_doubles(const fea_sf_state *s, int W) {
  int which[SF_NTAB];
  fea_sf_tables_used(s->dim, which);
  fea_index lt = 0;
  for (int t = 0; t < SF_NTAB; t++)
    if (which[t]) lt += fea_sf_pad((fea_index)s->n[slot_def[t].dir] * s->n[slot_def[t].dir] * W);
  return lt;
}

/* Fill lane l of every used slot from the element with direction indices
 * idx and geometry factors c (lanes at t, laid out as lane_table_doubles). */
void fea_sf_fill_lane(const fea_sf_state *s, int W, int l, const fea_index idx[3],
                      const double c[3], double *t) {
  int which[SF_NTAB];
  fea_sf_tables_used(s->dim, which);
  for (int k = 0; k < SF_NTAB; k++) {
    if (!which[k]) continue;
    const int d = slot_def[k].dir, n = s->n[d];
    const double *src = s->tab[d] + idx[d] * 2 * n * n + (slot_def[k].stiff ? n * n : 0);
    const double f = slot_def[k].cdir >= 0 ? c[slot_def[k].cdir] : 1.0;
    for (int j = 0; j < n * n; j++) t[j * W + l] = f * src[j];
    t += fea_sf_pad((fea_index)n * n * W);
  }
}

/* Point the batch's slots into lane tables laid out as lane_table_doubles. */
void fea_sf_point_tables(const fea_sf_state *s, int W, const double *t, fea_sf_batch *b) {
  int which[SF_NTAB];
  fea_sf_tables_used(s->dim, which);
  for (int k = 0; k < SF_NTAB; k++) {
    b->T[k] = NULL;
    if (!which[k]) continue;
    const int n = s->n[slot_def[k].dir];
    b->T[k] = t;
    t += fea_sf_pad((fea_index)n * n * W);
  }
}

int fea_sf_shared_tables(const fea_sf_state *s, fea_sf_batch *b) {
  if (!s->lane_tab) return 0;
  fea_sf_point_tables(s, s->lanes, s->lane_tab, b);
  return 1;
}

static int fea_sf_supports_op(const fea_problem *pb, char *why, size_t len) {
  return fea_sf_supports(pb, why, len);
}

static void fea_sf_destroy(void *state) {
  fea_sf_state *s = state;
  if (!s) return;
  free(s->w); /* the block of all scalar tables starts with w */
  free((double *)s->lane_tab);
  if (s->plan) fea_sf_plan_free(s->plan);
  free(s->plan);
  free(s);
}

static const fea_sf_isa *find_isa(const char *name) {
  for (size_t i = 0; i < sizeof isas / sizeof *isas; i++)
    if (isas[i]->available() && (!name || !strcmp(name, isas[i]->name))) return isas[i];
  return NULL;
}

/* The fixed-size kernel when every direction has N = p + 1 functions,
 * N = 2..9 (the rule is folded into the tables); else the generic one. */
static void choose_kernel(fea_sf_state *s, int generic) {
  int N = s->n[0], same = 1;
  for (int k = 0; k < s->dim; k++) same = same && s->n[k] == N;
  s->instantiated = !generic && same && N >= 2 && N <= SF_MAX_N;
  s->fn = s->instantiated ? s->isa->fixed[s->dim - 1][N] : s->isa->generic;
}

/* The shared lane tables by slot (fea_sf_state.qtab), for the fused line batches. */
static void fused_tables(fea_sf_state *s) {
  fea_sf_batch b;
  fea_sf_point_tables(s, s->lanes, s->lane_tab, &b);
  memcpy(s->qtab, b.T, sizeof s->qtab);
}

/* The fused line batches (fea_sf_state.qline) where the plan's line batches
 * have their shape: one free class of unit stride, chains of two DoFs
 * along direction 0, chain c holding DoFs 2c and 2c + 1 in that order. */
static void choose_qline(fea_sf_state *s) {
  const fea_sf_plan *P = s->plan;
  const int N = 2, nc = s->dim == 2 ? N : N * N;
  s->qline = NULL;
  if (!P->line_ok || !s->instantiated || s->per_span || s->n[0] != N || s->dim < 2 ||
      !s->isa->qline[s->dim - 1] || P->nfclass != 1 || P->lstride[0] != 1 || P->nchain != nc)
    return;
  for (int c = 0; c < nc; c++) {
    if (P->chain_start[c + 1] - P->chain_start[c] != N) return;
    for (int t = 0; t < N; t++)
      if (P->chain_dof[P->chain_start[c] + t] != c * N + t) return;
    s->qoff[c] = P->foff[c * N];
  }
  fused_tables(s);
  s->qline = s->isa->qline[s->dim - 1];
}

#include "sumfact-lines-gen.h" /* fea_sf_gline_sigs */

/* The generated fused line batch made from this plan's layout, if any. */
static void choose_gline(fea_sf_state *s) {
  const fea_sf_plan *P = s->plan;
  s->gline = NULL;
  const int N = s->n[0];
  if (!P->line_ok || !s->instantiated || s->per_span || s->dim < 2 || N > SF_MAX_N ||
      !s->isa->gline[s->dim - 1][N])
    return;
  for (size_t k = 0; k < sizeof fea_sf_gline_sigs / sizeof *fea_sf_gline_sigs; k++) {
    const fea_sf_line_sig *g = fea_sf_gline_sigs[k];
    if (g && g->dim == s->dim && g->n == N && fea_sf_plan_layout_is(P, g)) {
      for (int j = 0; j < g->noff; j++) s->goff[j] = fea_sf_plan_sig_offset(P, g->off_src[j]);
      fused_tables(s);
      s->gline = s->isa->gline[s->dim - 1][N];
      return;
    }
  }
}

static void describe(fea_sf_state *s) {
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
           s->per_span ? "b-spline" : "lagrange", p, q, s->isa->name, s->lanes,
           s->instantiated ? "instantiated" : "generic");
}

/* Shared tables (Lagrange) are broadcast into lanes once here, the
 * geometry factors folded in; per-span tables (B-splines) are copied into
 * lanes per batch in apply. */
static fea_status build_lanes(const fea_problem *pb, fea_sf_state *s) {
  const int W = s->lanes;
  const fea_index lt = fea_sf_lane_table_doubles(s, W);
  if (!s->per_span) {
    double *t = aligned_alloc(SF_ALIGN, (size_t)lt * sizeof(double));
    if (!t)
      return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld lane doubles",
                       (long long)lt);
    s->lane_tab = t;
    s->bytes += (uint64_t)lt * sizeof(double);
    fea_index idx[3] = {0, 0, 0};
    double c[3];
    fea_sf_geometry_factors(s, idx, c);
    for (int l = 0; l < W; l++) fea_sf_fill_lane(s, W, l, idx, c, t);
  }
  /* Scratch: alignment slack, x and y lanes, per-batch tables, work. */
  s->scratch = SF_ALIGN / sizeof(double) + 2 * fea_sf_pad((fea_index)s->nb * W) +
               (s->per_span ? lt : 0) +
               fea_sf_pad((fea_index)fea_sf_work_vectors(s->dim, s->n) * W);
  return FEA_SUCCESS;
}

/* The restriction plan (plan.h) of the caller's element-DoF table, else
 * the space's, else a copy, for this instruction set's lanes and tiles. */
static fea_status build_plan(const fea_problem *pb, const fea_index *edofs, fea_sf_state *s) {
  const fea_space *sp = s->space;
  const fea_index ne = sp->num_elements;
  const int nb = s->nb;
  const fea_index *given = edofs ? edofs : sp->element_dof_table;
  fea_index *dofs = NULL;
  if (!given) {
    dofs = malloc(((size_t)ne * (size_t)nb + 1) * sizeof *dofs);
    if (!dofs)
      return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld element DoF indices",
                       (long long)ne * nb);
    for (fea_index e = 0; e < ne; e++) sp->ops->element_dofs(sp, e, dofs + e * nb);
  }
  fea_sf_plan *P = aligned_alloc(SF_ALIGN, (sizeof *P + SF_ALIGN - 1) / SF_ALIGN * SF_ALIGN);
  const fea_sf_plan_input in = {.edofs = given ? given : dofs,
                                .free_index = pb->free_index,
                                .ne = ne,
                                .nb = nb,
                                .lanes = s->isa->lanes,
                                .tiles = s->isa->tiles,
                                .threads = pb->ctx->nthreads};
  const fea_status st = P ? fea_sf_plan_build(&in, P) : FEA_ERR_OUT_OF_MEMORY;
  free(dofs);
  if (st != FEA_SUCCESS) {
    free(P);
    return FEA_ERROR(pb->ctx, st,
                     "no memory for the DoF classes and line batches of %lld "
                     "elements",
                     (long long)ne);
  }
  s->plan = P;
  s->bytes += sizeof *P + P->bytes;
  return FEA_SUCCESS;
}

/* fea_sf_create_with, with the caller's element-DoF table (or NULL). */
static fea_status create_state(const fea_problem *pb, const char *isa, int generic,
                               const fea_index *edofs, void **state) {
  char why[256];
  *state = NULL;
  if (!fea_sf_supports(pb, why, sizeof why))
    return FEA_ERROR(pb->ctx, FEA_ERR_UNSUPPORTED, "sum factorization: %s", why);
  /* Aligned like the lane arrays (it used to hold some). */
  size_t state_bytes = (sizeof(fea_sf_state) + SF_ALIGN - 1) / SF_ALIGN * SF_ALIGN;
  fea_sf_state *s = aligned_alloc(SF_ALIGN, state_bytes);
  if (!s) return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a kernel state");
  memset(s, 0, sizeof *s);
  s->bytes = sizeof *s;
  s->isa = find_isa(isa);
  s->lanes = s->isa ? s->isa->lanes : 0;
  fea_status st = s->isa ? FEA_SUCCESS
                         : FEA_ERROR(pb->ctx, FEA_ERR_UNSUPPORTED,
                                     "instruction set \"%s\" is not built or not on this CPU", isa);
  if (st == FEA_SUCCESS) st = fea_sf_build_tables(pb, s);
  if (st == FEA_SUCCESS) st = build_lanes(pb, s);
  if (st == FEA_SUCCESS) st = build_plan(pb, edofs, s);
  if (st != FEA_SUCCESS) {
    fea_sf_destroy(s);
    return st;
  }
  choose_kernel(s, generic);
  choose_qline(s);
  choose_gline(s);
  describe(s);
  const fea_sf_plan *P = s->plan;
  if (P->line_ok) {
    const size_t used = strlen(s->desc);
    snprintf(s->desc + used, sizeof s->desc - used, ", %slines: %d/%d DoFs stride 1%s",
             s->qline || s->gline ? "fused " : "", P->chain_start[P->nchain], s->nb,
             P->nblock ? ", blocks" : "");
  }
  *state = s;
  return FEA_SUCCESS;
}

fea_status fea_sf_create_with(const fea_problem *pb, const char *isa, int generic, void **state) {
  return create_state(pb, isa, generic, NULL, state);
}

void fea_matfree_sumfact_view(const void *state, fea_sf_view *view) {
  const fea_sf_state *s = state;
  view->dim = s->dim;
  view->per_span = s->per_span;
  view->sigma = s->sigma;
  for (int k = 0; k < 3; k++) {
    view->n[k] = s->n[k];
    view->nel[k] = s->nel[k];
    view->tab[k] = k < s->dim ? s->tab[k] : NULL;
    view->len[k] = k < s->dim ? s->len[k] : NULL;
  }
}

static fea_status fea_sf_create(const fea_problem *pb, const fea_index *edofs, void **state) {
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
static int fea_sf_batch_size(const void *state) {
  const fea_sf_state *s = state;
  int k = 4096 / s->nb;
  k = k < 8 ? 8 : k > 32 ? 32 : k;
  return k * s->lanes;
}

static fea_index fea_sf_scratch(const void *state) {
  return ((const fea_sf_state *)state)->scratch;
}

/* Bytes per element that must come from memory beyond the vectors (which
 * the operator counts once per DoF): the element's DoF addressing, one base
 * index per DoF class. The 1D tables
 * (and B-spline spans' tables, nel_k per direction) stay in cache; element
 * values x_e, y_e are gathered from and added into the vectors, which the
 * caches serve after the first touch. */
static void fea_sf_cost(const void *state, double *flops, double *bytes) {
  const fea_sf_state *s = state;
  *flops = fea_sf_flops(s->dim, s->n);
  *bytes = (double)(s->plan->nfclass ? s->plan->nfclass : s->plan->nclass) *
           (double)sizeof(fea_index);
}

static uint64_t fea_sf_memory(const void *state) { return ((const fea_sf_state *)state)->bytes; }

static const char *fea_sf_describe(const void *state) {
  return ((const fea_sf_state *)state)->desc;
}

const fea_matfree_kernel_ops fea_matfree_kernel_sumfact = {
    .name = "sum-factorization",
    .supports = fea_sf_supports_op,
    .create = fea_sf_create,
    .destroy = fea_sf_destroy,
    .batch = fea_sf_batch_size,
    .apply = fea_sf_apply,
    .apply_add = fea_sf_apply_add,
    .diagonal = fea_sf_diagonal,
    .scratch_doubles = fea_sf_scratch,
    .cost = fea_sf_cost,
    .memory = fea_sf_memory,
    .describe = fea_sf_describe,
};
