/* The Kronecker operator for linear elasticity on B-spline boxes (kron.h):
 * the terms of the blocks A_cd, the 1D bands K, M, G and G^T of each
 * direction, the check that every component has the same tensor-product
 * free set, the component-major copies around the kernels, and the
 * operator's implementation table.
 *
 * Why component-major inside: each term applies one direction's band to one
 * input component, and a contiguous component makes those loops the scalar
 * operator's; the interleaved reduced vectors (c + ncomp i) are gathered and
 * scattered once per apply, two passes over 2 ncomp N doubles, against the
 * 18 or so band applications per DoF of the terms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "base/thread-budget.h"
#include "disc/space.h"
#include "internal/error.h"
#include "kron.h"
#include "matfree/operator.h"
#include "matfree/sumfact/sumfact.h"

#define REFUSE(...) (snprintf(why, len, __VA_ARGS__), 0)

int fea_kron_elastic_supports(const fea_problem *pb, char *why, size_t len) {
  const fea_space *s = pb->space;
  if (!pb->elastic) return REFUSE("the problem is not linear elasticity");
  if (s->kind != FEA_SPACE_BSPLINE)
    return REFUSE("the Kronecker operator serves B-spline spaces; this one is Lagrange");
  if (s->dim < 2 || s->ncomp != s->dim)
    return REFUSE("%dD with %d components: elasticity has dim components in 2D or 3D", s->dim,
                  s->ncomp);
  const fea_elasticity_desc *e = pb->elastic;
  if (e->C_fn || e->E_fn || e->nu_fn)
    return REFUSE(
        "the material varies or is a tensor; the Kronecker operator serves a constant "
        "isotropic one");
  if (fea_problem_has_robin(pb)) return REFUSE("the problem has spring sides (face terms)");
  if (!fea_sf_box_supports(pb, why, len)) return 0;
  fea_index total = 0;
  for (int k = 0; k < s->dim; k++) total += fea_kron_dir_size(s, k);
  fea_index *buf = malloc((size_t)total * sizeof *buf + 1);
  if (!buf) return REFUSE("no memory for %lld 1D indices", (long long)total);
  fea_index *red[3] = {buf, buf, buf}, m[3];
  for (int k = 1; k < s->dim; k++) red[k] = red[k - 1] + fea_kron_dir_size(s, k - 1);
  const int ok = fea_kron_tensor_free_set(pb, red, m);
  free(buf);
  if (!ok)
    return REFUSE(
        "the components' free DoFs differ or are not a tensor product (a roller fixes one "
        "component)");
  return 1;
}

void fea_kron_elastic_destroy(fea_kron_elastic *e) {
  if (!e) return;
  for (int k = 0; k < 3; k++) free(e->B[k][0]); /* one block per direction */
  for (int t = 0; t < e->nterms; t++) free(e->term[t].B0);
  free(e->xs);
  free(e->work);
  free(e);
}

/* The terms, grouped by output component: the diagonal block's Laplacian-like
 * sum, then lambda G_c G^T_d + mu G^T_c G_d for every other input d. */
static void make_terms(fea_kron_elastic *e, double lambda, double mu) {
  const int dim = e->dim;
  e->nterms = 0;
  for (int c = 0; c < dim; c++)
    for (int d = 0; d < dim; d++) {
      if (c == d) {
        for (int k = 0; k < dim; k++) {
          fea_kron_term *T = &e->term[e->nterms++];
          *T = (fea_kron_term){.c = c, .d = d, .coef = k == c ? lambda + 2 * mu : mu};
          for (int j = 0; j < 3; j++) T->op[j] = j == k ? FEA_KRON_K : FEA_KRON_M;
        }
        continue;
      }
      for (int w = 0; w < 2; w++) {
        fea_kron_term *T = &e->term[e->nterms++];
        *T = (fea_kron_term){.c = c, .d = d, .coef = w == 0 ? lambda : mu};
        for (int j = 0; j < 3; j++) T->op[j] = FEA_KRON_M;
        T->op[c] = w == 0 ? FEA_KRON_G : FEA_KRON_GT;
        T->op[d] = w == 0 ? FEA_KRON_GT : FEA_KRON_G;
      }
    }
}

fea_status fea_kron_elastic_create_with(const fea_problem *pb, const char *isa, int threads,
                                        fea_kron_elastic **out) {
  const fea_space *s = pb->space;
  fea_context *ctx = s->ctx;
  const fea_kron_isa *I = fea_kron_find_isa(isa);
  FEA_CHECK(I, ctx, FEA_ERR_UNSUPPORTED, "this CPU does not run the '%s' Kronecker kernels",
            isa ? isa : "(any)");
  FEA_CHECK(threads >= 1, ctx, FEA_ERR_INVALID_ARG, "threads is %d; it must be >= 1", threads);
  double lambda, mu;
  const double x0[3] = {0, 0, 0}; /* a constant material: its value anywhere */
  FEA_CALL(fea_form_elastic_lame(pb, x0, &lambda, &mu));
  fea_kron_elastic *e = calloc(1, sizeof *e);
  fea_index n[3] = {1, 1, 1}, total = 0;
  for (int k = 0; k < s->dim; k++) total += n[k] = fea_kron_dir_size(s, k);
  fea_index *redbuf = e ? malloc((size_t)total * sizeof *redbuf) : NULL;
  if (!redbuf) {
    free(e);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the Kronecker operator's state");
  }
  e->dim = s->dim;
  e->ncomp = s->ncomp;
  e->isa = I;
  e->threads = threads;
  fea_index *red[3] = {redbuf, redbuf, redbuf};
  for (int k = 1; k < s->dim; k++) red[k] = red[k - 1] + n[k - 1];
  fea_status rc = FEA_SUCCESS;
  if (!fea_kron_tensor_free_set(pb, red, e->n))
    rc = FEA_ERROR(ctx, FEA_ERR_UNSUPPORTED,
                   "the components' free DoFs differ or are not a tensor product");
  e->N = e->n[0] * e->n[1] * e->n[2];
  for (int k = 0; k < s->dim && rc == FEA_SUCCESS; k++) {
    const int p = s->degree[k];
    const size_t full = (size_t)(2 * p + 1) * (size_t)n[k],
                 part = (size_t)(2 * p + 1) * (size_t)e->n[k];
    double *tmp = malloc(3 * full * sizeof *tmp);
    e->B[k][0] = malloc((4 * part + 1) * sizeof *e->B[k][0]);
    if (!tmp || !e->B[k][0]) {
      free(tmp);
      rc = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the 1D matrices of direction %d",
                     k);
      break;
    }
    for (int o = 1; o < 4; o++) e->B[k][o] = e->B[k][0] + o * part;
    e->p[k] = p;
    rc = fea_kron_assemble_1d(pb, k, tmp, tmp + full, tmp + 2 * full);
    if (rc == FEA_SUCCESS) {
      for (int o = 0; o < 3; o++) /* K, M, G */
        fea_kron_reduce_band(p, n[k], red[k], e->n[k], tmp + o * full, e->B[k][o]);
      /* G^T(i, i + o) = G(i + o, i): entry (o, i) from G's (-o, i + o) */
      const fea_index m = e->n[k];
      for (int o = -p; o <= p; o++)
        for (fea_index i = 0; i < m; i++)
          e->B[k][FEA_KRON_GT][(size_t)(o + p) * m + i] =
              i + o >= 0 && i + o < m ? e->B[k][FEA_KRON_G][(size_t)(-o + p) * m + i + o] : 0.0;
    }
    free(tmp);
  }
  free(redbuf);
  if (rc == FEA_SUCCESS) {
    make_terms(e, lambda, mu);
    const size_t band0 = (size_t)(2 * e->p[0] + 1) * (size_t)e->n[0];
    for (int t = 0; t < e->nterms && rc == FEA_SUCCESS; t++) {
      fea_kron_term *T = &e->term[t];
      T->B0 = malloc(band0 * sizeof *T->B0);
      if (!T->B0) {
        rc = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the Kronecker terms");
        break;
      }
      for (size_t q = 0; q < band0; q++) T->B0[q] = T->coef * e->B[0][T->op[0]][q];
    }
  }
  if (rc == FEA_SUCCESS) {
    const size_t per = e->dim == 3 ? (4 * (size_t)e->ncomp + 1) * (size_t)e->n[0] * (size_t)e->n[1]
                                   : 4 * (size_t)e->ncomp * (size_t)e->n[0];
    e->xs = malloc(2 * (size_t)e->ncomp * (size_t)e->N * sizeof *e->xs + 8);
    e->ys = e->xs ? e->xs + (size_t)e->ncomp * (size_t)e->N : NULL;
    e->work = malloc((size_t)threads * per * sizeof *e->work);
    if (!e->xs || !e->work)
      rc = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the Kronecker elasticity buffers (%d threads)", threads);
  }
  if (rc != FEA_SUCCESS) {
    fea_kron_elastic_destroy(e);
    return rc;
  }
  /* flops: per term the bands of directions 1..dim-1 it applies, plus the
   * last direction's images once per (input, op) */
  double flops = 0;
  int need[8][4] = {{0}};
  const int last = e->dim - 1;
  for (int t = 0; t < e->nterms; t++) {
    need[e->term[t].d][e->term[t].op[last]] = 1;
    for (int k = 0; k < last; k++) flops += 2.0 * (2 * e->p[k] + 1) * (double)e->N;
  }
  for (int d = 0; d < e->ncomp; d++)
    for (int o = 0; o < 4; o++)
      if (need[d][o]) flops += 2.0 * (2 * e->p[last] + 1) * (double)e->N;
  e->flops = flops;
  *out = e;
  return FEA_SUCCESS;
}

void fea_kron_elastic_apply(const fea_kron_elastic *e, const double *x, double *y, int add,
                            int threads) {
  const int nc = e->ncomp;
  const fea_index N = e->N;
  double *xs = e->xs, *ys = e->ys;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (fea_index r = 0; r < N; r++)
    for (int c = 0; c < nc; c++) xs[(size_t)c * N + r] = x[(size_t)r * nc + c];
  e->isa->elastic(e, xs, ys, threads);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (fea_index r = 0; r < N; r++)
    for (int c = 0; c < nc; c++) {
      const double v = ys[(size_t)c * N + r];
      y[(size_t)r * nc + c] = add ? y[(size_t)r * nc + c] + v : v;
    }
}

void fea_kron_elastic_diagonal(const fea_kron_elastic *e, double *diag) {
  const int nc = e->ncomp, dim = e->dim;
  const fea_index n0 = e->n[0], n1 = e->n[1], n2 = e->n[2];
  for (fea_index i2 = 0; i2 < n2; i2++)
    for (fea_index i1 = 0; i1 < n1; i1++)
      for (fea_index i0 = 0; i0 < n0; i0++) {
        const fea_index r = (i2 * n1 + i1) * n0 + i0, idx[3] = {i0, i1, i2};
        for (int c = 0; c < nc; c++) diag[(size_t)r * nc + c] = 0.0;
        for (int t = 0; t < e->nterms; t++) {
          const fea_kron_term *T = &e->term[t];
          if (T->c != T->d) continue;
          double v = T->coef;
          for (int k = 0; k < dim; k++) v *= e->B[k][T->op[k]][(size_t)e->p[k] * e->n[k] + idx[k]];
          diag[(size_t)r * nc + T->c] += v;
        }
      }
}

/* ---- the operator's implementation ------------------------------------------------------------ */

static fea_status elastic_apply(fea_operator *op, const double *x, double *y, int add) {
  const fea_kron_elastic *e = op->data;
  int threads = fea_thread_budget(op->ctx);
  if (threads > e->threads) threads = e->threads;
  fea_kron_elastic_apply(e, x, y, add, threads < 1 ? 1 : threads);
  return FEA_SUCCESS;
}

static fea_status elastic_diagonal(const fea_operator *op, double *d) {
  fea_kron_elastic_diagonal(op->data, d);
  return FEA_SUCCESS;
}

static void elastic_destroy(void *data) { fea_kron_elastic_destroy(data); }

static const fea_operator_impl elastic_impl = {
    .apply = elastic_apply,
    .diagonal = elastic_diagonal,
    .destroy = elastic_destroy,
};

fea_status fea_operator_kron_elastic_build(fea_operator *op) {
  const int threads = op->ctx->nthreads > 0 ? op->ctx->nthreads : 1;
  fea_kron_elastic *e;
  FEA_CALL(fea_kron_elastic_create_with(op->problem, NULL, threads, &e));
  op->impl = &elastic_impl;
  op->data = e;
  op->info.kind_run = FEA_OPERATOR_MATFREE_SUMFACT;
  op->info.strategy_run = FEA_UPDATE_SERIAL; /* each thread writes its own planes */
  snprintf(op->info.kernel, sizeof op->info.kernel,
           "Kronecker sums of 1D band matrices, elasticity (B-spline box, whole patch, %s)",
           e->isa->name);
  size_t tables = 0;
  for (int k = 0; k < e->dim; k++) tables += 4 * (size_t)(2 * e->p[k] + 1) * (size_t)e->n[k];
  tables += (size_t)e->nterms * (size_t)(2 * e->p[0] + 1) * (size_t)e->n[0];
  const size_t per = e->dim == 3 ? (4 * (size_t)e->ncomp + 1) * (size_t)e->n[0] * (size_t)e->n[1]
                                 : 4 * (size_t)e->ncomp * (size_t)e->n[0];
  op->info.memory_bytes = (tables + (size_t)threads * per + 2 * (size_t)e->ncomp * (size_t)e->N) *
                          sizeof(double);
  op->info.flops_per_apply = e->flops;
  op->info.bytes_per_apply = 2.0 * sizeof(double) * (double)e->ncomp * (double)e->N;
  return FEA_SUCCESS;
}
