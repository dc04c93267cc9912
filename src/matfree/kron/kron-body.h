/* The Kronecker operator's kernels (kron.h), written once and compiled per
 * instruction set: the including file defines KR_W (lanes of a vector),
 * KR_TARGET (the function attribute), KR_ISA_NAME, KR_ISA_VAR and
 * KR_ISA_AVAILABLE.
 *
 * Two loops make every apply. band_rows: Y (+)= sum_o B[o][i] X[row i + o]
 * over rows of length L (directions 1 and 2, a scalar coefficient per row,
 * vectors along the row); band_line: y[i] (+)= sum_o B1[o][i] x1[i + o] +
 * B2[o][i] x2[i + o] along direction 0 (vectors over i, the band tables
 * stored diagonal by diagonal so their loads are contiguous too). In 3D a
 * thread makes one output plane at a time: direction 2's pair a = M2 x,
 * e = K2 x (2p + 1 input planes, which stay in cache from one plane to
 * the next), direction 1's b = M1 a and h = K1 a + M1 e, direction 0's
 * y = K0 b + M0 h; in 2D one output row at a time the same way. Every
 * entry of y is summed in the same order whatever the thread count. */
#include <omp.h>
#include <string.h>

#include "kron.h"

typedef double kr_vd __attribute__((vector_size(KR_W * sizeof(double))));

#define KR_LOAD(v, p) memcpy(&(v), (p), sizeof(kr_vd))
#define KR_STORE(p, v) memcpy((p), &(v), sizeof(kr_vd))

/* Y[0, L) (+)= sum_o B1[o][i] X1[(i + o) L + l] (+ the same with B2, X2),
 * i the output row of a direction of n rows and half-bandwidth p. */
KR_TARGET static void band_rows(int p, fea_index n, fea_index i, const double *B1, const double *X1,
                                const double *B2, const double *X2, double *Y, fea_index L,
                                int add) {
  const int lo = i - p < 0 ? (int)-i : -p, hi = i + p >= n ? (int)(n - 1 - i) : p;
  fea_index l = 0;
  for (; l + KR_W <= L; l += KR_W) {
    kr_vd acc;
    if (add)
      KR_LOAD(acc, Y + l);
    else
      acc = (kr_vd){0};
    for (int o = lo; o <= hi; o++) {
      kr_vd xv;
      KR_LOAD(xv, X1 + (i + o) * L + l);
      acc += B1[(fea_index)(o + p) * n + i] * xv;
      if (B2) {
        KR_LOAD(xv, X2 + (i + o) * L + l);
        acc += B2[(fea_index)(o + p) * n + i] * xv;
      }
    }
    KR_STORE(Y + l, acc);
  }
  for (; l < L; l++) {
    double acc = add ? Y[l] : 0.0;
    for (int o = lo; o <= hi; o++) {
      acc += B1[(fea_index)(o + p) * n + i] * X1[(i + o) * L + l];
      if (B2) acc += B2[(fea_index)(o + p) * n + i] * X2[(i + o) * L + l];
    }
    Y[l] = acc;
  }
}

/* One entry of band_line, the edges' way (i + o checked). */
static inline double line_entry(int p, fea_index n, fea_index i, const double *B1, const double *x1,
                                const double *B2, const double *x2) {
  double acc = 0.0;
  for (int o = -p; o <= p; o++) {
    if (i + o < 0 || i + o >= n) continue;
    acc += B1[(fea_index)(o + p) * n + i] * x1[i + o];
    if (B2) acc += B2[(fea_index)(o + p) * n + i] * x2[i + o];
  }
  return acc;
}

/* y[i] (+)= sum_o B1[o][i] x1[i + o] + B2[o][i] x2[i + o] along a line of n. */
KR_TARGET static void band_line(int p, fea_index n, const double *B1, const double *x1,
                                const double *B2, const double *x2, double *y, int add) {
  fea_index i = 0;
  for (; i < p && i < n; i++) y[i] = (add ? y[i] : 0.0) + line_entry(p, n, i, B1, x1, B2, x2);
  for (; i + KR_W <= n - p; i += KR_W) {
    kr_vd acc;
    if (add)
      KR_LOAD(acc, y + i);
    else
      acc = (kr_vd){0};
    for (int o = -p; o <= p; o++) {
      kr_vd b, xv;
      KR_LOAD(b, B1 + (fea_index)(o + p) * n + i);
      KR_LOAD(xv, x1 + i + o);
      acc += b * xv;
      if (B2) {
        KR_LOAD(b, B2 + (fea_index)(o + p) * n + i);
        KR_LOAD(xv, x2 + i + o);
        acc += b * xv;
      }
    }
    KR_STORE(y + i, acc);
  }
  for (; i < n; i++) y[i] = (add ? y[i] : 0.0) + line_entry(p, n, i, B1, x1, B2, x2);
}

KR_TARGET static void kr_apply(const fea_kron_state *s, const double *x, double *y, int add,
                               int threads) {
  const fea_index n0 = s->n[0];
  const int p0 = s->p[0];
  if (s->dim == 1) {
    band_line(p0, n0, s->K[0], x, NULL, NULL, y, add);
    return;
  }
  const fea_index n1 = s->n[1];
  const int p1 = s->p[1];
  if (threads < 1) threads = 1;
  if (threads > s->threads) threads = s->threads;
  if (s->dim == 2) {
#pragma omp parallel num_threads(threads)
    {
      double *a = s->work + (size_t)omp_get_thread_num() * 2 * (size_t)n0, *e = a + n0;
#pragma omp for schedule(static)
      for (fea_index i1 = 0; i1 < n1; i1++) {
        band_rows(p1, n1, i1, s->M[1], x, NULL, NULL, a, n0, 0);
        band_rows(p1, n1, i1, s->K[1], x, NULL, NULL, e, n0, 0);
        band_line(p0, n0, s->K[0], a, s->M[0], e, y + i1 * n0, add);
      }
    }
    return;
  }
  const fea_index n2 = s->n[2], P = n0 * n1;
  const int p2 = s->p[2];
#pragma omp parallel num_threads(threads)
  {
    double *a = s->work + (size_t)omp_get_thread_num() * 4 * (size_t)P, *e = a + P, *b = e + P,
           *h = b + P;
#pragma omp for schedule(static)
    for (fea_index i2 = 0; i2 < n2; i2++) {
      band_rows(p2, n2, i2, s->M[2], x, NULL, NULL, a, P, 0);
      band_rows(p2, n2, i2, s->K[2], x, NULL, NULL, e, P, 0);
      for (fea_index i1 = 0; i1 < n1; i1++) {
        band_rows(p1, n1, i1, s->M[1], a, NULL, NULL, b + i1 * n0, n0, 0);
        band_rows(p1, n1, i1, s->K[1], a, s->M[1], e, h + i1 * n0, n0, 0);
      }
      double *yp = y + i2 * P;
      for (fea_index i1 = 0; i1 < n1; i1++)
        band_line(p0, n0, s->K[0], b + i1 * n0, s->M[0], h + i1 * n0, yp + i1 * n0, add);
    }
  }
}

/* Elasticity, component-major: per output plane (3D) or row (2D) the
 * direction-2 (2D: direction-1) images of every input component under K,
 * M, G and G^T that some term needs, once; then per term its direction-1
 * image (3D) and the direction-0 band scaled by the term's coefficient,
 * added into the output component's plane (the first term of a component
 * writes, the others add). */
KR_TARGET static void kr_elastic(const fea_kron_elastic *e, const double *xs, double *ys,
                                 int threads) {
  const int nc = e->ncomp;
  const fea_index n0 = e->n[0], n1 = e->n[1], N = e->N;
  if (threads < 1) threads = 1;
  if (threads > e->threads) threads = e->threads;
  int need[8][4] = {{0}}; /* [input component][op] of the last direction */
  const int last = e->dim - 1;
  for (int t = 0; t < e->nterms; t++) need[e->term[t].d][e->term[t].op[last]] = 1;
  if (e->dim == 2) {
#pragma omp parallel num_threads(threads)
    {
      double *rows = e->work + (size_t)omp_get_thread_num() * 4 * (size_t)nc * (size_t)n0;
#pragma omp for schedule(static)
      for (fea_index i1 = 0; i1 < n1; i1++) {
        for (int d = 0; d < nc; d++)
          for (int o = 0; o < 4; o++)
            if (need[d][o])
              band_rows(e->p[1], n1, i1, e->B[1][o], xs + (size_t)d * N, NULL, NULL,
                        rows + (size_t)(4 * d + o) * n0, n0, 0);
        int prev = -1;
        for (int t = 0; t < e->nterms; t++) {
          const fea_kron_term *T = &e->term[t];
          band_line(e->p[0], n0, T->B0, rows + (size_t)(4 * T->d + T->op[1]) * n0, NULL, NULL,
                    ys + (size_t)T->c * N + i1 * n0, T->c == prev);
          prev = T->c;
        }
      }
    }
    return;
  }
  const fea_index n2 = e->n[2], P = n0 * n1;
#pragma omp parallel num_threads(threads)
  {
    double *planes = e->work + (size_t)omp_get_thread_num() * (4 * (size_t)nc + 1) * (size_t)P;
    double *q = planes + 4 * (size_t)nc * (size_t)P;
#pragma omp for schedule(static)
    for (fea_index i2 = 0; i2 < n2; i2++) {
      for (int d = 0; d < nc; d++)
        for (int o = 0; o < 4; o++)
          if (need[d][o])
            band_rows(e->p[2], n2, i2, e->B[2][o], xs + (size_t)d * N, NULL, NULL,
                      planes + (size_t)(4 * d + o) * P, P, 0);
      int prev = -1;
      for (int t = 0; t < e->nterms; t++) {
        const fea_kron_term *T = &e->term[t];
        const double *a = planes + (size_t)(4 * T->d + T->op[2]) * P;
        for (fea_index i1 = 0; i1 < n1; i1++)
          band_rows(e->p[1], n1, i1, e->B[1][T->op[1]], a, NULL, NULL, q + i1 * n0, n0, 0);
        double *yp = ys + (size_t)T->c * N + i2 * P;
        for (fea_index i1 = 0; i1 < n1; i1++)
          band_line(e->p[0], n0, T->B0, q + i1 * n0, NULL, NULL, yp + i1 * n0, T->c == prev);
        prev = T->c;
      }
    }
  }
}

/* A mapped patch's terms (kron.h, fea_kron_mapped): per output plane (3D)
 * the last direction's distinct matrices C_c applied once each, per group
 * j the direction-1 band B_j on its C's plane, and along every row of the
 * plane y = sum_j A_j (that plane's row), two groups per band_line; in 2D
 * per output row the C_c rows and y = sum_c A_c (row c). */
KR_TARGET static void kr_mapped(const fea_kron_mapped *s, const double *x, double *y, int add,
                                int threads) {
  const fea_index n0 = s->n[0];
  const int p0 = s->p[0];
  if (s->dim == 1) {
    band_line(p0, n0, s->A[0], x, NULL, NULL, y, add);
    return;
  }
  const fea_index n1 = s->n[1];
  const int p1 = s->p[1];
  if (threads < 1) threads = 1;
  if (threads > s->threads) threads = s->threads;
  if (s->dim == 2) {
#pragma omp parallel num_threads(threads)
    {
      double *rows = s->work + (size_t)omp_get_thread_num() * (size_t)s->nc * (size_t)n0;
#pragma omp for schedule(static)
      for (fea_index i1 = 0; i1 < n1; i1++) {
        for (int c = 0; c < s->nc; c++)
          band_rows(p1, n1, i1, s->C[c], x, NULL, NULL, rows + (size_t)c * n0, n0, 0);
        for (int c = 0; c < s->nc; c += 2)
          band_line(p0, n0, s->A[c], rows + (size_t)c * n0, c + 1 < s->nc ? s->A[c + 1] : NULL,
                    c + 1 < s->nc ? rows + (size_t)(c + 1) * n0 : NULL, y + i1 * n0, add || c > 0);
      }
    }
    return;
  }
  const fea_index n2 = s->n[2], P = n0 * n1;
  const int p2 = s->p[2], nc = s->nc, ng = s->ng;
#pragma omp parallel num_threads(threads)
  {
    double *planes = s->work + (size_t)omp_get_thread_num() * (size_t)(nc + ng) * (size_t)P;
    double *bp = planes + (size_t)nc * (size_t)P;
#pragma omp for schedule(static)
    for (fea_index i2 = 0; i2 < n2; i2++) {
      for (int c = 0; c < nc; c++)
        band_rows(p2, n2, i2, s->C[c], x, NULL, NULL, planes + (size_t)c * P, P, 0);
      for (int j = 0; j < ng; j++) {
        const double *a = planes + (size_t)s->cof[j] * P;
        double *b = bp + (size_t)j * P;
        for (fea_index i1 = 0; i1 < n1; i1++)
          band_rows(p1, n1, i1, s->B[j], a, NULL, NULL, b + i1 * n0, n0, 0);
      }
      double *yp = y + i2 * P;
      for (fea_index i1 = 0; i1 < n1; i1++)
        for (int j = 0; j < ng; j += 2)
          band_line(p0, n0, s->A[j], bp + (size_t)j * P + i1 * n0, j + 1 < ng ? s->A[j + 1] : NULL,
                    j + 1 < ng ? bp + (size_t)(j + 1) * P + i1 * n0 : NULL, yp + i1 * n0,
                    add || j > 0);
    }
  }
}

const fea_kron_isa KR_ISA_VAR = {
    .name = KR_ISA_NAME,
    .available = KR_ISA_AVAILABLE,
    .apply = kr_apply,
    .elastic = kr_elastic,
    .mapped = kr_mapped,
};
