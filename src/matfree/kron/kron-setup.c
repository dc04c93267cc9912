/* The Kronecker operator's state (kron.h): the reduced 1D stiffness and mass
 * matrices of each direction of a B-spline box, the check that the free
 * DoFs form a tensor product in lexicographic order, and the operator's
 * implementation table.
 *
 * The 1D matrices are integrated with the problem's own rule (its points
 * per direction, Gauss), element by element over the knot spans, so the
 * operator is the assembled matrix of the same problem up to rounding:
 * a tensor Gauss rule on a box factors over the directions exactly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "base/thread-budget.h"
#include "disc/bspline.h"
#include "disc/quadrature.h"
#include "internal/error.h"
#include "kron.h"
#include "matfree/operator.h"
#include "matfree/sumfact/sumfact.h"

#define REFUSE(...) (snprintf(why, len, __VA_ARGS__), 0)

static const fea_kron_isa *const isas[] = {&fea_kron_isa_avx512, &fea_kron_isa_avx2,
                                           &fea_kron_isa_baseline};

fea_index fea_kron_dir_size(const fea_space *s, int k) {
  const fea_bspline_space *b = s->impl;
  return fea_knots_num_functions(&b->knots[k]);
}

int fea_kron_tensor_free_set(const fea_problem *pb, fea_index *red[3], fea_index m[3]) {
  const fea_space *s = pb->space;
  const int d = s->dim, nc = s->ncomp;
  fea_index n[3] = {1, 1, 1};
  for (int k = 0; k < d; k++) {
    n[k] = fea_kron_dir_size(s, k);
    for (fea_index i = 0; i < n[k]; i++) red[k][i] = -1;
  }
  for (fea_index node = 0; node < s->num_dofs; node++) {
    if (pb->free_index[(size_t)node * nc] < 0) continue;
    fea_index r = node;
    for (int k = 0; k < d; k++) {
      red[k][r % n[k]] = 0;
      r /= n[k];
    }
  }
  for (int k = 0; k < d; k++) {
    m[k] = 0;
    for (fea_index i = 0; i < n[k]; i++)
      if (red[k][i] == 0) red[k][i] = m[k]++;
  }
  for (int k = d; k < 3; k++) m[k] = 1;
  for (fea_index node = 0; node < s->num_dofs; node++) {
    fea_index r = node, row = 0, stride = 1;
    int free = 1;
    for (int k = 0; k < d; k++) {
      const fea_index j = red[k][r % n[k]];
      r /= n[k];
      if (j < 0) free = 0;
      row += j * stride;
      stride *= m[k];
    }
    for (int c = 0; c < nc; c++) {
      const fea_index fi = pb->free_index[(size_t)node * nc + c];
      if (free ? fi != c + nc * row : fi >= 0) return 0;
    }
  }
  return 1;
}

int fea_kron_supports(const fea_problem *pb, char *why, size_t len) {
  const fea_space *s = pb->space;
  if (s->kind != FEA_SPACE_BSPLINE)
    return REFUSE("the Kronecker operator serves B-spline spaces; this one is Lagrange");
  if (!fea_sf_supports(pb, why, len)) return 0;
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
        "the free DoFs are not a tensor product of each direction's functions (fixed DoFs "
        "other than whole sides)");
  return 1;
}

fea_status fea_kron_assemble_1d(const fea_problem *pb, int k, double *K, double *M, double *G) {
  const fea_space *s = pb->space;
  const fea_bspline_space *b = s->impl;
  const fea_knots *kn = &b->knots[k];
  const int p = kn->p, nb = p + 1;
  const fea_index n = fea_knots_num_functions(kn);
  const int nq = pb->desc.quad_points > 0 ? pb->desc.quad_points : s->degree[k] + 1;
  double g[20], w[20], ders[2 * (FEA_BSPLINE_MAX_DEGREE + 1)];
  fea_status st = fea_gauss_legendre(nq, g, w);
  if (st != FEA_SUCCESS)
    return FEA_ERROR(s->ctx, st, "no %d-point Gauss rule for direction %d", nq, k);
  const double scale = (b->upper[k] - b->lower[k]) / (kn->t[kn->m - 1] - kn->t[0]);
  memset(K, 0, (size_t)(2 * p + 1) * (size_t)n * sizeof *K);
  memset(M, 0, (size_t)(2 * p + 1) * (size_t)n * sizeof *M);
  if (G) memset(G, 0, (size_t)(2 * p + 1) * (size_t)n * sizeof *G);
  for (fea_index e = 0; e < kn->nelem; e++) {
    const fea_index sp = kn->span[e];
    const double a = kn->t[sp], h = kn->t[sp + 1] - a;
    for (int q = 0; q < nq; q++) {
      fea_bspline_basis_ders(kn, sp, a + h * g[q], 1, ders);
      const double dx = w[q] * h * scale; /* the rule is on [0, 1] */
      for (int i = 0; i < nb; i++)
        for (int j = 0; j < nb; j++) {
          const fea_index row = sp - p + i, o = j - i; /* column sp - p + j */
          const size_t at = (size_t)(o + p) * (size_t)n + (size_t)row;
          M[at] += dx * ders[i] * ders[j];
          K[at] += dx * (ders[nb + i] / scale) * (ders[nb + j] / scale);
          if (G) G[at] += dx * (ders[nb + i] / scale) * ders[j];
        }
    }
  }
  return FEA_SUCCESS;
}

void fea_kron_reduce_band(int p, fea_index n, const fea_index *red, fea_index m, const double *B,
                          double *R) {
  memset(R, 0, (size_t)(2 * p + 1) * (size_t)m * sizeof *R);
  for (fea_index i = 0; i < n; i++) {
    if (red[i] < 0) continue;
    for (int o = -p; o <= p; o++) {
      const fea_index j = i + o;
      if (j < 0 || j >= n || red[j] < 0) continue;
      const fea_index ro = red[j] - red[i];
      R[(size_t)(ro + p) * (size_t)m + (size_t)red[i]] = B[(size_t)(o + p) * (size_t)n + i];
    }
  }
}

void fea_kron_destroy(fea_kron_state *s) {
  if (!s) return;
  for (int k = 0; k < 3; k++) free(s->K[k]); /* K[k] and M[k] are one block */
  free(s->work);
  free(s);
}

const fea_kron_isa *fea_kron_find_isa(const char *name) {
  for (size_t i = 0; i < sizeof isas / sizeof *isas; i++)
    if (isas[i]->available() && (!name || !strcmp(name, isas[i]->name))) return isas[i];
  return NULL;
}

fea_status fea_kron_create_with(const fea_problem *pb, const char *isa, int threads,
                                fea_kron_state **out) {
  const fea_space *s = pb->space;
  fea_context *ctx = s->ctx;
  const fea_kron_isa *I = fea_kron_find_isa(isa);
  FEA_CHECK(I, ctx, FEA_ERR_UNSUPPORTED, "this CPU does not run the '%s' Kronecker kernels",
            isa ? isa : "(any)");
  FEA_CHECK(threads >= 1, ctx, FEA_ERR_INVALID_ARG, "threads is %d; it must be >= 1", threads);
  fea_kron_state *st = calloc(1, sizeof *st);
  fea_index n[3] = {1, 1, 1}, total = 0;
  for (int k = 0; k < s->dim; k++) total += n[k] = fea_kron_dir_size(s, k);
  fea_index *redbuf = st ? malloc((size_t)total * sizeof *redbuf) : NULL;
  if (!redbuf) {
    free(st);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the Kronecker operator's state");
  }
  st->dim = s->dim;
  st->isa = I;
  st->threads = threads;
  fea_index *red[3] = {redbuf, redbuf, redbuf};
  for (int k = 1; k < s->dim; k++) red[k] = red[k - 1] + n[k - 1];
  fea_status rc = FEA_SUCCESS;
  if (!fea_kron_tensor_free_set(pb, red, st->n))
    rc = FEA_ERROR(ctx, FEA_ERR_UNSUPPORTED,
                   "the free DoFs are not a tensor product of each direction's functions");
  st->num_free = st->n[0] * st->n[1] * st->n[2];
  for (int k = 0; k < s->dim && rc == FEA_SUCCESS; k++) {
    const int p = s->degree[k];
    const size_t full = (size_t)(2 * p + 1) * (size_t)n[k],
                 part = (size_t)(2 * p + 1) * (size_t)st->n[k];
    double *tmp = malloc(2 * full * sizeof *tmp);
    st->K[k] = malloc((2 * part + 1) * sizeof *st->K[k]);
    if (!tmp || !st->K[k]) {
      free(tmp);
      rc = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the 1D matrices of direction %d",
                     k);
      break;
    }
    st->M[k] = st->K[k] + part;
    st->p[k] = p;
    rc = fea_kron_assemble_1d(pb, k, tmp, tmp + full, NULL);
    if (rc == FEA_SUCCESS) {
      fea_kron_reduce_band(p, n[k], red[k], st->n[k], tmp, st->K[k]);
      fea_kron_reduce_band(p, n[k], red[k], st->n[k], tmp + full, st->M[k]);
    }
    free(tmp);
  }
  free(redbuf);
  if (rc == FEA_SUCCESS) { /* sigma into direction 0's pair */
    const double sigma = pb->desc.sigma;
    for (size_t q = 0; q < (size_t)(2 * st->p[0] + 1) * (size_t)st->n[0]; q++)
      st->K[0][q] *= sigma, st->M[0][q] *= sigma;
    /* per thread: 4 planes (3D) or 2 rows (2D) */
    const size_t per = s->dim == 3   ? 4 * (size_t)st->n[0] * (size_t)st->n[1]
                       : s->dim == 2 ? 2 * (size_t)st->n[0]
                                     : 1;
    st->work = malloc((size_t)threads * per * sizeof *st->work);
    if (!st->work)
      rc = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for %d threads' Kronecker buffers (%zu doubles each)", threads,
                     per);
  }
  if (rc != FEA_SUCCESS) {
    fea_kron_destroy(st);
    return rc;
  }
  /* flops: two per stored band entry and per entry of the other directions */
  double band[3], flops = 0;
  for (int k = 0; k < s->dim; k++) band[k] = (2.0 * st->p[k] + 1) * (double)st->n[k];
  const double N = (double)st->num_free;
  if (s->dim == 1) flops = 2 * band[0];
  if (s->dim == 2) flops = 2 * (2 * band[1] * N / st->n[1] + 2 * band[0] * N / st->n[0]);
  if (s->dim == 3)
    flops = 2 *
            (2 * band[2] * N / st->n[2] + 3 * band[1] * N / st->n[1] + 2 * band[0] * N / st->n[0]);
  st->flops = flops;
  *out = st;
  return FEA_SUCCESS;
}

void fea_kron_diagonal(const fea_kron_state *s, double *d) {
  const fea_index n0 = s->n[0], n1 = s->n[1], n2 = s->n[2];
  const double *K0 = s->K[0] + (size_t)s->p[0] * n0, *M0 = s->M[0] + (size_t)s->p[0] * n0;
  const double *K1 = s->dim > 1 ? s->K[1] + (size_t)s->p[1] * n1 : NULL;
  const double *M1 = s->dim > 1 ? s->M[1] + (size_t)s->p[1] * n1 : NULL;
  const double *K2 = s->dim > 2 ? s->K[2] + (size_t)s->p[2] * n2 : NULL;
  const double *M2 = s->dim > 2 ? s->M[2] + (size_t)s->p[2] * n2 : NULL;
  for (fea_index i2 = 0; i2 < n2; i2++)
    for (fea_index i1 = 0; i1 < n1; i1++)
      for (fea_index i0 = 0; i0 < n0; i0++) {
        double v;
        if (s->dim == 1)
          v = K0[i0];
        else if (s->dim == 2)
          v = K0[i0] * M1[i1] + M0[i0] * K1[i1];
        else
          v = K0[i0] * M1[i1] * M2[i2] + M0[i0] * K1[i1] * M2[i2] + M0[i0] * M1[i1] * K2[i2];
        d[(i2 * n1 + i1) * n0 + i0] = v;
      }
}

void fea_kron_block(const fea_kron_state *s, const fea_index *rows, int m, double *M) {
  const fea_index n0 = s->n[0], n1 = s->n[1], n2 = s->n[2];
  for (int a = 0; a < m; a++) {
    const fea_index r = rows[a], r0 = r % n0, r1 = (r / n0) % n1, r2 = r / (n0 * n1);
    for (int b = 0; b < m; b++) {
      const fea_index c = rows[b], c0 = c % n0, c1 = (c / n0) % n1, c2 = c / (n0 * n1);
      const double k0 = fea_kron_band_at(s->K[0], s->p[0], n0, r0, c0),
                   m0 = fea_kron_band_at(s->M[0], s->p[0], n0, r0, c0);
      double v = k0;
      if (s->dim == 2) {
        v = k0 * fea_kron_band_at(s->M[1], s->p[1], n1, r1, c1) +
            m0 * fea_kron_band_at(s->K[1], s->p[1], n1, r1, c1);
      } else if (s->dim == 3) {
        const double k1 = fea_kron_band_at(s->K[1], s->p[1], n1, r1, c1),
                     m1 = fea_kron_band_at(s->M[1], s->p[1], n1, r1, c1),
                     k2 = fea_kron_band_at(s->K[2], s->p[2], n2, r2, c2),
                     m2 = fea_kron_band_at(s->M[2], s->p[2], n2, r2, c2);
        v = k0 * m1 * m2 + m0 * k1 * m2 + m0 * m1 * k2;
      }
      M[a + (size_t)b * m] = v;
    }
  }
}

/* ---- the operator's implementation ------------------------------------------------------------ */

static fea_status kron_apply(fea_operator *op, const double *x, double *y, int add) {
  const fea_kron_state *s = op->data;
  s->isa->apply(s, x, y, add, fea_thread_budget(op->ctx));
  return FEA_SUCCESS;
}

static fea_status kron_diagonal(const fea_operator *op, double *d) {
  fea_kron_diagonal(op->data, d);
  return FEA_SUCCESS;
}

static void kron_destroy(void *data) { fea_kron_destroy(data); }

static fea_status kron_entries(const fea_operator *op, const fea_index *rows, int m, double *M) {
  fea_kron_block(op->data, rows, m, M);
  return FEA_SUCCESS;
}

static const fea_operator_impl kron_impl = {
    .apply = kron_apply,
    .diagonal = kron_diagonal,
    .destroy = kron_destroy,
    .entries = kron_entries,
};

fea_status fea_operator_kron_build(fea_operator *op) {
  const int threads = op->ctx->nthreads > 0 ? op->ctx->nthreads : 1;
  fea_kron_state *s;
  FEA_CALL(fea_kron_create_with(op->problem, NULL, threads, &s));
  op->impl = &kron_impl;
  op->data = s;
  op->info.kind_run = FEA_OPERATOR_MATFREE_SUMFACT;
  op->info.strategy_run = FEA_UPDATE_SERIAL; /* each thread writes its own planes */
  snprintf(op->info.kernel, sizeof op->info.kernel,
           "Kronecker sum of 1D band matrices (B-spline box, whole patch, %s)", s->isa->name);
  size_t tables = 0;
  for (int k = 0; k < s->dim; k++) tables += 2 * (size_t)(2 * s->p[k] + 1) * (size_t)s->n[k];
  const size_t per = s->dim == 3   ? 4 * (size_t)s->n[0] * (size_t)s->n[1]
                     : s->dim == 2 ? 2 * (size_t)s->n[0]
                                   : 1;
  op->info.memory_bytes = (tables + (size_t)threads * per) * sizeof(double);
  op->info.flops_per_apply = s->flops;
  op->info.bytes_per_apply = 2.0 * sizeof(double) * (double)s->num_free; /* x in, y out */
  return FEA_SUCCESS;
}
