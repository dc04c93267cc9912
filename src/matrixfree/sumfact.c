/* The sum-factorization matrix-free kernel (the thesis's tensor-product
 * method, section 2.3.3): y_e = K_e x_e without K_e, by contracting the
 * element coefficients with 1D tables direction by direction, scaling the
 * gradients at the quadrature points, and contracting back. This file is the
 * fea_mf_kernel_ops table: choosing the instruction set and the kernel,
 * gathering batches of elements into SIMD lanes and scattering them back.
 * The arithmetic is in sumfact-body.h, the tables in sumfact-setup.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sumfact.h"

/* Best first: the first available one is the default. */
static const sf_isa *const isas[] = {&fea_sf_isa_avx512, &fea_sf_isa_avx2, &fea_sf_isa_baseline};

/* Round a count of doubles up so that the next array stays SF_ALIGN-aligned. */
static fea_index pad(fea_index n) {
  const fea_index a = SF_ALIGN / sizeof(double);
  return (n + a - 1) / a * a;
}

int sf_work_vectors(int dim, const int n[3], const int nq[3]) {
  switch (dim) {
  case 1: return nq[0];
  case 2: return 2 * nq[0] * n[1] + 2 * nq[0] * nq[1];
  default:
    return 2 * nq[0] * n[1] * n[2] + 3 * nq[0] * nq[1] * n[2] + 3 * nq[0] * nq[1] * nq[2];
  }
}

/* A contraction of nin into nout entries along a direction of a tensor with
 * `rest` entries in the other directions is nout * nin * rest multiply-adds;
 * the scaling is two multiplications per gradient component and point. The
 * transposed half repeats the forward contractions. */
double sf_flops(int dim, const int n[3], const int nq[3]) {
  double q0 = nq[0], q1 = nq[1], q2 = nq[2], n0 = n[0], n1 = n[1], n2 = n[2];
  switch (dim) {
  case 1: return 2 * (2 * q0 * n0) + 2 * q0;
  case 2: return 2 * 2 * (2 * q0 * n0 * n1 + 2 * q1 * n1 * q0) + 2 * 2 * q0 * q1;
  default:
    return 2 * 2 * (2 * q0 * n0 * n1 * n2 + 3 * q1 * n1 * q0 * n2 + 3 * q2 * n2 * q0 * q1) +
           3 * 2 * q0 * q1 * q2;
  }
}

static int sf_supports_op(const fea_problem *pb, char *why, size_t len) {
  return sf_supports(pb, why, len);
}

static void sf_destroy(void *state) {
  sf_state *s = state;
  if (!s) return;
  free(s->w); /* the block of all scalar tables starts with w */
  free(s->lane_tab);
  free(s);
}

static const sf_isa *find_isa(const char *name) {
  for (size_t i = 0; i < sizeof isas / sizeof *isas; i++)
    if (isas[i]->available() && (!name || !strcmp(name, isas[i]->name))) return isas[i];
  return NULL;
}

/* The fixed-size kernel when every direction has N = p + 1 functions and
 * points, N = 2..9; else the generic one. */
static void choose_kernel(sf_state *s, int generic) {
  int N = s->n[0], same = 1;
  for (int k = 0; k < s->dim; k++) same = same && s->n[k] == N && s->nq[k] == N;
  s->instantiated = !generic && same && N >= 2 && N <= SF_MAX_N;
  s->fn = s->instantiated ? s->isa->fixed[s->dim - 1][N] : s->isa->generic;
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

/* Shared tables (Lagrange) are broadcast into lanes once here; per-span
 * tables (B-splines) are copied into lanes per batch in apply. */
static fea_status build_lanes(const fea_problem *pb, sf_state *s) {
  const int W = s->isa->lanes;
  fea_index lt = 0;
  for (int k = 0; k < s->dim; k++) lt += pad(2 * s->nq[k] * s->n[k] * W);
  if (!s->per_span) {
    s->lane_tab = aligned_alloc(SF_ALIGN, (size_t)lt * sizeof(double));
    if (!s->lane_tab)
      return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld lane doubles",
                       (long long)lt);
    s->bytes += (uint64_t)lt * sizeof(double);
    double *t = s->lane_tab;
    for (int k = 0; k < s->dim; k++) {
      int m = 2 * s->nq[k] * s->n[k];
      for (int j = 0; j < m; j++)
        for (int l = 0; l < W; l++) t[j * W + l] = s->tab[k][j];
      t += pad(m * W);
    }
    fea_index idx[3] = {0, 0, 0};
    double c[3];
    sf_geometry_factors(s, idx, c);
    for (int k = 0; k < s->dim; k++)
      for (int l = 0; l < W; l++) s->lane_c[k * W + l] = c[k];
  }
  /* Scratch: alignment slack, x and y lanes, per-batch tables, factors, work. */
  s->scratch = SF_ALIGN / sizeof(double) + 2 * pad((fea_index)s->nb * W) +
               (s->per_span ? lt : 0) + pad(3 * W) +
               pad((fea_index)sf_work_vectors(s->dim, s->n, s->nq) * W);
  return FEA_SUCCESS;
}

fea_status fea_sumfact_create_with(const fea_problem *pb, const char *isa, int generic,
                                   void **state) {
  char why[256];
  *state = NULL;
  if (!sf_supports(pb, why, sizeof why))
    return FEA_ERROR(pb->ctx, FEA_ERR_UNSUPPORTED, "sum factorization: %s", why);
  /* aligned_alloc, not calloc: lane_c is read as 64-byte vectors. */
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
  if (st != FEA_SUCCESS) {
    sf_destroy(s);
    return st;
  }
  choose_kernel(s, generic);
  describe(s);
  *state = s;
  return FEA_SUCCESS;
}

static fea_status sf_create(const fea_problem *pb, void **state) {
  return fea_sumfact_create_with(pb, NULL, 0, state);
}

static int sf_batch_size(const void *state) { return ((const sf_state *)state)->isa->lanes; }

/* Lanes of one batch: element l < m gathered, the rest zero (their results
 * are computed and dropped; zero factors keep them finite). */
static void gather(const sf_state *s, const fea_index *elems, int m, const double *x_full,
                   sf_batch *b, double *lt, double *c) {
  const int W = s->isa->lanes, nb = s->nb;
  double *X = (double *)b->x;
  fea_index dofs[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  for (int l = 0; l < W; l++) {
    if (l < m) {
      s->space->ops->element_dofs(s->space, elems[l], dofs);
      for (int i = 0; i < nb; i++) X[i * W + l] = x_full[dofs[i]];
    } else {
      for (int i = 0; i < nb; i++) X[i * W + l] = 0.0;
    }
    if (!s->per_span) continue;
    fea_index idx[3] = {0, 0, 0};
    double ck[3] = {0, 0, 0};
    if (l < m) {
      sf_element_index(s, elems[l], idx);
      sf_geometry_factors(s, idx, ck);
    }
    double *t = lt;
    for (int k = 0; k < s->dim; k++) {
      int mk = 2 * s->nq[k] * s->n[k];
      const double *src = s->tab[k] + idx[k] * mk;
      for (int j = 0; j < mk; j++) t[j * W + l] = src[j];
      t += pad(mk * W);
      c[k * W + l] = ck[k];
    }
  }
}

static void sf_apply(const void *state, const fea_index *elems, int count, const double *x_full,
                     double *y, double *scratch) {
  const sf_state *s = state;
  const int W = s->isa->lanes, nb = s->nb;
  double *p = (double *)(((uintptr_t)scratch + SF_ALIGN - 1) & ~(uintptr_t)(SF_ALIGN - 1));
  double *X = p;
  double *Y = X + pad((fea_index)nb * W);
  double *lt = Y + pad((fea_index)nb * W);
  fea_index lt_size = 0;
  if (s->per_span)
    for (int k = 0; k < s->dim; k++) lt_size += pad(2 * s->nq[k] * s->n[k] * W);
  double *c = lt + lt_size;
  double *work = c + pad(3 * W);
  sf_batch b = {.dim = s->dim, .w = s->w, .x = X, .y = Y, .work = work};
  const double *tables = s->per_span ? lt : s->lane_tab;
  for (int k = 0; k < 3; k++) {
    b.n[k] = s->n[k];
    b.nq[k] = s->nq[k];
  }
  for (int k = 0; k < s->dim; k++) {
    b.B[k] = tables;
    b.D[k] = tables + s->nq[k] * s->n[k] * W;
    tables += pad(2 * s->nq[k] * s->n[k] * W);
  }
  b.c = s->per_span ? c : s->lane_c;
  /* Callers pass at most batch() elements, but more are served in chunks. */
  for (int start = 0; start < count; start += W) {
    int m = count - start < W ? count - start : W;
    gather(s, elems + start, m, x_full, &b, lt, c);
    s->fn(&b);
    for (int l = 0; l < m; l++)
      for (int i = 0; i < nb; i++) y[(size_t)(start + l) * nb + i] = Y[i * W + l];
  }
}

static fea_index sf_scratch(const void *state) { return ((const sf_state *)state)->scratch; }

/* Bytes: the gathered x_e and the y_e handed back, and for Lagrange spaces
 * the element's DoF indices read from the space's table (B-spline DoFs are
 * computed from the element index). The 1D tables stay in cache. */
static void sf_cost(const void *state, double *flops, double *bytes) {
  const sf_state *s = state;
  *flops = sf_flops(s->dim, s->n, s->nq);
  *bytes = 2.0 * s->nb * sizeof(double) + (s->per_span ? 0.0 : s->nb * (double)sizeof(fea_index));
}

static uint64_t sf_memory(const void *state) { return ((const sf_state *)state)->bytes; }

static const char *sf_describe(const void *state) { return ((const sf_state *)state)->desc; }

const fea_mf_kernel_ops fea_mf_kernel_sumfact = {
  .name = "sum-factorization",
  .supports = sf_supports_op,
  .create = sf_create,
  .destroy = sf_destroy,
  .batch = sf_batch_size,
  .apply = sf_apply,
  .diagonal = sf_diagonal,
  .scratch_doubles = sf_scratch,
  .cost = sf_cost,
  .memory = sf_memory,
  .describe = sf_describe,
};
