/* The lane kernels of sum factorization at quadrature points (qp.h), as a
 * template included once per instruction set by qp-isa-*.c with
 *   QP_W        lanes (elements per batch)
 *   QP_TARGET   the function attribute of that instruction set (or nothing)
 *   QP_ISA_NAME, QP_ISA_VAR, QP_ISA_AVAILABLE
 *
 * Every array here is lanes of QP_W elements (GCC vector extensions, lowered
 * to the target's registers): each operation serves QP_W elements, so the
 * short loops of one element (n, n_q <= 10) never need to vectorize. The
 * sizes are run-time values: one body for every degree and rule. */
#include <stdint.h>
#include <string.h>

#include "qp.h"

#if defined(__clang__)
#pragma clang fp contract(fast)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=fast")
#endif

typedef double fea_sf_qp_vd __attribute__((vector_size(QP_W * sizeof(double))));

#define QP_FN static QP_TARGET
/* Inlined into each instantiation: the fixed-size kernels pass constant
 * sizes, so the compiler sees fixed trip counts (unrolled, accumulators in
 * registers); the generic kernel passes the run-time sizes through the same
 * code. Left out of UBSan's instrumentation, as sumfact-body.h's are. */
#define QP_INLINE static inline __attribute__((always_inline, no_sanitize("undefined"))) QP_TARGET
#define QPM_T fea_sf_qp_vd
#define QPM_FN(f) f##_lanes
#define QPM_ATTR static inline QP_TARGET
#include "qp-metric.h"
#undef QPM_T
#undef QPM_FN
#undef QPM_ATTR

/* One pass along a direction of a tensor [outer][nin][inner] with the
 * table M (n_q x n, row a for point a): forward (points from functions)
 * out[o][a][j] = sum_i M[a][i] in[o][i][j], or backward (functions from
 * points) out[o][i][j] = sum_a M[a][i] in[o][a][j]; add: += into out. */
QP_INLINE void pass_fwd(const fea_sf_qp_vd *restrict M, int nq, int n, int outer, int inner,
                        const fea_sf_qp_vd *restrict in, fea_sf_qp_vd *restrict out, int add) {
  for (int o = 0; o < outer; o++)
    for (int a = 0; a < nq; a++)
      for (int j = 0; j < inner; j++) {
        const fea_sf_qp_vd *x = in + (size_t)o * n * inner + j;
        fea_sf_qp_vd acc = M[a * n] * x[0];
        for (int i = 1; i < n; i++) acc += M[a * n + i] * x[(size_t)i * inner];
        fea_sf_qp_vd *y = out + ((size_t)o * nq + a) * inner + j;
        *y = add ? *y + acc : acc;
      }
}

QP_INLINE void pass_bwd(const fea_sf_qp_vd *restrict M, int nq, int n, int outer, int inner,
                        const fea_sf_qp_vd *restrict in, fea_sf_qp_vd *restrict out, int add) {
  for (int o = 0; o < outer; o++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < inner; j++) {
        const fea_sf_qp_vd *x = in + (size_t)o * nq * inner + j;
        fea_sf_qp_vd acc = M[i] * x[0];
        for (int a = 1; a < nq; a++) acc += M[a * n + i] * x[(size_t)a * inner];
        fea_sf_qp_vd *y = out + ((size_t)o * n + i) * inner + j;
        *y = add ? *y + acc : acc;
      }
}

/* The sizes a kernel runs with: constants in the fixed-size instantiations. */
typedef struct fea_sf_qp_sizes {
  int dim, n[3], nq[3], nqt;
} fea_sf_qp_sizes;

static inline fea_sf_qp_sizes sizes_of(const fea_sf_qp_state *s) {
  fea_sf_qp_sizes z = {s->dim, {s->n[0], s->n[1], s->n[2]}, {s->nq[0], s->nq[1], s->nq[2]}, s->nqt};
  return z;
}

/* The lane scratch of one call. */
typedef struct lanes {
  fea_sf_qp_vd *X, *Y;       /* nb */
  fea_sf_qp_vd *B[3], *D[3]; /* per direction nq x n */
  fea_sf_qp_vd *U;           /* nc x nqt: the channels at the points */
  fea_sf_qp_vd *Qv;          /* nqt x npack: gathered or formed here */
  const fea_sf_qp_vd *Q;     /* the batch's point matrices: Qv, or the stored batch itself */
  fea_sf_qp_vd *t[5];        /* intermediate tensors */
  fea_sf_qp_vd *G;           /* ngc x (1 + dim) x nqt: the geometry channels */
  fea_sf_qp_vd *E[3];        /* diagonal: products of two tables */
} lanes;

/* Lay out the scratch (aligned; fea_sf_qp_scratch_doubles counts the same). */
static void layout(const fea_sf_qp_state *s, double *scratch, lanes *L) {
  fea_sf_qp_vd *p = (fea_sf_qp_vd *)(((uintptr_t)scratch + QP_ALIGN - 1) &
                                     ~(uintptr_t)(QP_ALIGN - 1));
  fea_index T = 1;
  for (int k = 0; k < s->dim; k++) T *= s->n[k] > s->nq[k] ? s->n[k] : s->nq[k];
  L->X = p, p += s->nb;
  L->Y = p, p += s->nb;
  for (int k = 0; k < 3; k++) {
    const int sz = k < s->dim ? s->nq[k] * s->n[k] : 0;
    L->B[k] = p, p += sz;
    L->D[k] = p, p += sz;
    L->E[k] = p, p += sz;
  }
  L->U = p, p += (fea_index)s->nc * s->nqt;
  L->Qv = p, p += (fea_index)s->npack * s->nqt;
  L->Q = L->Qv;
  for (int i = 0; i < 5; i++) L->t[i] = p, p += T;
  L->G = p;
}

/* Outer and inner extents of the pass along direction k. */
QP_INLINE void extents(const fea_sf_qp_sizes z, int k, int *outer, int *inner) {
  int o = 1, in = 1;
  for (int j = 0; j < k; j++) in *= z.nq[j];
  for (int j = k + 1; j < z.dim && j < 3; j++) o *= z.n[j];
  *outer = o, *inner = in;
}

#define FWD(k, M, in, out, add)                         \
  do {                                                  \
    int o_, i_;                                         \
    extents(z, k, &o_, &i_);                            \
    pass_fwd(M, z.nq[k], z.n[k], o_, i_, in, out, add); \
  } while (0)
#define BWD(k, M, in, out, add)                         \
  do {                                                  \
    int o_, i_;                                         \
    extents(z, k, &o_, &i_);                            \
    pass_bwd(M, z.nq[k], z.n[k], o_, i_, in, out, add); \
  } while (0)

/* The channels of x at the points: U[0] the value (when value), then the
 * derivatives along r_0 .. r_{d-1}, each nqt lanes. */
QP_INLINE void interpolate(const fea_sf_qp_sizes z, const lanes *L, const fea_sf_qp_vd *x,
                           int value, fea_sf_qp_vd *U) {
  const fea_index nqt = z.nqt;
  fea_sf_qp_vd *u = value ? U : NULL, *d0 = U + (value ? nqt : 0), *d1 = d0 + nqt, *d2 = d1 + nqt;
  fea_sf_qp_vd *const *t = L->t;
  if (z.dim == 1) {
    if (u) FWD(0, L->B[0], x, u, 0);
    FWD(0, L->D[0], x, d0, 0);
  } else if (z.dim == 2) {
    FWD(0, L->B[0], x, t[0], 0);
    FWD(0, L->D[0], x, t[1], 0);
    if (u) FWD(1, L->B[1], t[0], u, 0);
    FWD(1, L->B[1], t[1], d0, 0);
    FWD(1, L->D[1], t[0], d1, 0);
  } else {
    FWD(0, L->B[0], x, t[0], 0);    /* v */
    FWD(0, L->D[0], x, t[1], 0);    /* d */
    FWD(1, L->B[1], t[0], t[2], 0); /* vv */
    FWD(1, L->D[1], t[0], t[3], 0); /* vd */
    FWD(1, L->B[1], t[1], t[4], 0); /* dv */
    if (u) FWD(2, L->B[2], t[2], u, 0);
    FWD(2, L->B[2], t[4], d0, 0);
    FWD(2, L->B[2], t[3], d1, 0);
    FWD(2, L->D[2], t[2], d2, 0);
  }
}

/* y = the transposed passes of the channels U (the layout interpolate writes). */
QP_INLINE void integrate(const fea_sf_qp_sizes z, const lanes *L, const fea_sf_qp_vd *U, int value,
                         fea_sf_qp_vd *y) {
  const fea_index nqt = z.nqt;
  const fea_sf_qp_vd *u = value ? U : NULL, *d0 = U + (value ? nqt : 0), *d1 = d0 + nqt,
                     *d2 = d1 + nqt;
  fea_sf_qp_vd *const *t = L->t;
  if (z.dim == 1) {
    BWD(0, L->D[0], d0, y, 0);
    if (u) BWD(0, L->B[0], u, y, 1);
  } else if (z.dim == 2) {
    BWD(1, L->D[1], d1, t[0], 0);
    if (u) BWD(1, L->B[1], u, t[0], 1);
    BWD(1, L->B[1], d0, t[1], 0);
    BWD(0, L->B[0], t[0], y, 0);
    BWD(0, L->D[0], t[1], y, 1);
  } else {
    BWD(2, L->D[2], d2, t[2], 0); /* vv */
    if (u) BWD(2, L->B[2], u, t[2], 1);
    BWD(2, L->B[2], d1, t[3], 0);   /* vd */
    BWD(2, L->B[2], d0, t[4], 0);   /* dv */
    BWD(1, L->B[1], t[2], t[0], 0); /* v */
    BWD(1, L->D[1], t[3], t[0], 1);
    BWD(1, L->B[1], t[4], t[1], 0); /* d */
    BWD(0, L->B[0], t[0], y, 0);
    BWD(0, L->D[0], t[1], y, 1);
  }
}

/* The elements of the batch: lanes beyond m repeat elems[0]. */
static inline fea_index lane_element(const fea_index *elems, int m, int l) {
  return elems[l < m ? l : 0];
}

/* The 1D tables of the batch's elements, lane by lane. Where one table
 * serves every element (Lagrange) it is broadcast. */
QP_FN void gather_tables(const fea_sf_qp_state *s, const fea_index *elems, int m, lanes *L) {
  const fea_sf_qp_vd zero = {0};
  fea_index idx[QP_W][3]; /* each lane's element indices, once for every direction */
  for (int l = 0; l < QP_W; l++) fea_sf_qp_element_index(s, lane_element(elems, m, l), idx[l]);
  for (int k = 0; k < s->dim; k++) {
    const int sz = s->nq[k] * s->n[k];
    if (s->nel[k] == 1) {
      for (int i = 0; i < sz; i++) {
        L->B[k][i] = zero + s->tab[k][i];
        L->D[k][i] = zero + s->tab[k][sz + i];
      }
      continue;
    }
    for (int l = 0; l < QP_W; l++) {
      const double *T = s->tab[k] + (size_t)idx[l][k] * 2 * sz;
      for (int i = 0; i < sz; i++) {
        L->B[k][i][l] = T[i];
        L->D[k][i][l] = T[sz + i];
      }
    }
  }
}

/* X = x_full at the batch's DoFs; zero in unused lanes. */
static void gather_dofs(const fea_sf_qp_state *s, const fea_index *elems, int m,
                        const double *x_full, fea_sf_qp_vd *X) {
  const int nb = s->nb;
  for (int l = 0; l < QP_W; l++) {
    if (l >= m) {
      for (int i = 0; i < nb; i++) X[i][l] = 0.0;
      continue;
    }
    const fea_index *ed = s->edofs + (size_t)elems[l] * nb;
    for (int i = 0; i < nb; i++) X[i][l] = x_full[ed[i]];
  }
}

/* The geometry channels at the points: G[(g * (1 + dim) + c) * nqt + q]. */
QP_INLINE void geometry_channels(const fea_sf_qp_state *s, const fea_sf_qp_sizes z,
                                 const fea_index *elems, int m, lanes *L) {
  const fea_index nqt = z.nqt;
  const int nb = s->nb;
  for (int g = 0; g < s->ngc; g++) {
    /* Unused lanes repeat elems[0]'s geometry: finite, never inverted. */
    for (int l = 0; l < QP_W; l++) {
      const fea_index *ed = s->edofs + (size_t)lane_element(elems, m, l) * nb;
      for (int i = 0; i < nb; i++) L->X[i][l] = s->geo[(size_t)ed[i] * s->ngc + g];
    }
    interpolate(z, L, L->X, 1, L->G + (size_t)g * (1 + z.dim) * nqt);
  }
}

/* Point q's x, J, W, dW from the geometry channels. */
QP_INLINE void point_geometry(const fea_sf_qp_state *s, const fea_sf_qp_sizes z, const lanes *L,
                              fea_index q, fea_sf_qp_vd *x, fea_sf_qp_vd *J, fea_sf_qp_vd *W,
                              fea_sf_qp_vd *dW) {
  const int dim = z.dim;
  const fea_index nqt = z.nqt, per = (1 + dim) * nqt;
  const fea_sf_qp_vd zero = {0};
  fea_sf_qp_vd w = zero + 1.0, dw[3] = {zero, zero, zero};
  if (s->rational) {
    const fea_sf_qp_vd *gw = L->G + (size_t)dim * per;
    w = gw[q];
    for (int b = 0; b < dim; b++) dw[b] = gw[(1 + b) * nqt + q];
  }
  const fea_sf_qp_vd r = 1.0 / w;
  for (int a = 0; a < dim; a++) {
    const fea_sf_qp_vd *ga = L->G + (size_t)a * per;
    x[a] = ga[q] * r;
    for (int b = 0; b < dim; b++) J[a * dim + b] = (ga[(1 + b) * nqt + q] - x[a] * dw[b]) * r;
  }
  *W = w;
  for (int b = 0; b < dim; b++) dW[b] = dw[b];
}

/* The rule's weight at point q. */
static inline double point_weight(const fea_sf_qp_state *s, fea_index q) {
  double w = 1.0;
  for (int k = 0; k < s->dim; k++) {
    w *= s->w1[k][q % s->nq[k]];
    q /= s->nq[k];
  }
  return w;
}

/* Qv: loaded (STORED: kept lane-interleaved by batches of QP_W consecutive
 * elements, so that such a batch loads whole vectors) or formed from the
 * geometry (RECOMPUTED). */
QP_INLINE void point_matrices(const fea_sf_qp_state *s, const fea_sf_qp_sizes z,
                              const fea_index *elems, int m, lanes *L) {
  const fea_index nqt = z.nqt, per = nqt * s->npack;
  const int dim = z.dim;
  if (!s->recompute) {
    const fea_index e0 = elems[0];
    int run = m == QP_W && e0 % QP_W == 0;
    for (int l = 1; l < m && run; l++) run = elems[l] == e0 + l;
    if (run) { /* read in place, not copied */
      L->Q = (const fea_sf_qp_vd *)(s->Q + (size_t)e0 * per);
      return;
    }
    for (int l = 0; l < QP_W; l++) {
      const fea_index e = lane_element(elems, m, l);
      const double *Qe = s->Q + (size_t)(e / QP_W) * QP_W * per + e % QP_W;
      for (fea_index i = 0; i < per; i++) L->Qv[i][l] = Qe[(size_t)i * QP_W];
    }
    return;
  }
  geometry_channels(s, z, elems, m, L);
  const fea_sf_qp_vd zero = {0};
  fea_sf_qp_vd A[9];
  for (int i = 0; i < dim * dim; i++) A[i] = zero + (i % (dim + 1) == 0 ? s->sigma : 0.0);
  for (fea_index q = 0; q < nqt; q++) {
    fea_sf_qp_vd x[3], J[9] = {0}, W, dW[3], det;
    point_geometry(s, z, L, q, x, J, &W, dW);
    const fea_sf_qp_vd c = zero + s->reaction, wq = zero + point_weight(s, q);
    fea_sf_qp_metric_lanes(dim, s->value, J, &W, dW, A, &c, &wq, L->Qv + (size_t)q * s->npack,
                           &det);
  }
}

/* U(q) = Q(q) U(q) at every point. */
QP_INLINE void apply_points(const fea_sf_qp_state *s, const fea_sf_qp_sizes z, lanes *L) {
  const int nc = s->nc, np = s->npack;
  const fea_index nqt = z.nqt;
  for (fea_index q = 0; q < nqt; q++) {
    const fea_sf_qp_vd *Q = L->Q + (size_t)q * np;
    fea_sf_qp_vd u[QP_MAX_NC], v[QP_MAX_NC];
    for (int c = 0; c < nc; c++) u[c] = L->U[(size_t)c * nqt + q];
    for (int i = 0; i < nc; i++) {
      fea_sf_qp_vd acc = Q[fea_sf_qp_pack(nc, 0, i)] * u[0]; /* (i, 0) = (0, i) */
      for (int j = 1; j < nc; j++)
        acc += Q[i <= j ? fea_sf_qp_pack(nc, i, j) : fea_sf_qp_pack(nc, j, i)] * u[j];
      v[i] = acc;
    }
    for (int c = 0; c < nc; c++) L->U[(size_t)c * nqt + q] = v[c];
  }
}

/* y_e += R_e x_e for the batch's elements with a Robin face. */
static void robin_add(const fea_sf_qp_state *s, const fea_index *elems, int m, const lanes *L,
                      double *y) {
  const int nb = s->nb;
  for (int l = 0; l < m; l++) {
    const int32_t r = s->robin_of[elems[l]];
    if (r < 0) continue;
    const double *R = s->R + (size_t)r * nb * nb;
    double *ye = y + (size_t)l * nb;
    for (int i = 0; i < nb; i++) {
      double acc = 0.0;
      for (int j = 0; j < nb; j++) acc += R[(size_t)i * nb + j] * L->X[j][l];
      ye[i] += acc;
    }
  }
}

QP_INLINE void apply_body(const fea_sf_qp_state *s, const fea_sf_qp_sizes z, const fea_index *elems,
                          int m, const double *x_full, double *y, double *scratch) {
  lanes L;
  layout(s, scratch, &L);
  gather_tables(s, elems, m, &L);
  point_matrices(s, z, elems, m, &L);
  gather_dofs(s, elems, m, x_full, L.X);
  interpolate(z, &L, L.X, s->value, L.U);
  apply_points(s, z, &L);
  integrate(z, &L, L.U, s->value, L.Y);
  const int nb = s->nb;
  for (int l = 0; l < m; l++)
    for (int i = 0; i < nb; i++) y[(size_t)l * nb + i] = L.Y[i][l];
  if (s->robin_of) robin_add(s, elems, m, &L, y);
}

QP_FN void fea_sf_qp_apply(const fea_sf_qp_state *s, const fea_index *elems, int m,
                           const double *x_full, double *y, double *scratch) {
  apply_body(s, sizes_of(s), elems, m, x_full, y, scratch);
}

/* Fixed sizes: N functions and N points in each of D directions (p = N - 1
 * with the default rule). */
#define QP_FIXED(D, N)                                                                          \
  QP_FN void fea_sf_qp_apply_##D##_##N(const fea_sf_qp_state *s, const fea_index *elems, int m, \
                                       const double *x_full, double *y, double *scratch) {      \
    const fea_sf_qp_sizes z = {D,                                                               \
                               {N, D > 1 ? N : 1, D > 2 ? N : 1},                               \
                               {N, D > 1 ? N : 1, D > 2 ? N : 1},                               \
                               D == 1   ? N                                                     \
                               : D == 2 ? N * N                                                 \
                                        : N * N * N};                                           \
    apply_body(s, z, elems, m, x_full, y, scratch);                                             \
  }
QP_FIXED(2, 2)
QP_FIXED(2, 3)
QP_FIXED(2, 4)
QP_FIXED(2, 5)
QP_FIXED(2, 6)
QP_FIXED(3, 2)
QP_FIXED(3, 3)
QP_FIXED(3, 4)
QP_FIXED(3, 5)

/* diag(K_e): for each pair of channels (a, b), the point values Q_ab
 * integrated against the products of the two channels' 1D tables
 * (direction k: D_k where the channel differentiates along r_k, else B_k),
 * counted twice off the diagonal of Q. */
QP_FN void fea_sf_qp_diagonal(const fea_sf_qp_state *s, const fea_index *elems, int m, double *d,
                              double *scratch) {
  const fea_sf_qp_sizes z = sizes_of(s);
  lanes L;
  layout(s, scratch, &L);
  gather_tables(s, elems, m, &L);
  point_matrices(s, z, elems, m, &L);
  const int nc = s->nc, dim = s->dim, nb = s->nb;
  const fea_index nqt = s->nqt;
  const fea_sf_qp_vd zero = {0};
  for (int i = 0; i < nb; i++) L.Y[i] = zero;
  for (int a = 0; a < nc; a++)
    for (int b = a; b < nc; b++) {
      /* Channel c differentiates along dir(c), or not at all (-1). */
      const int da = s->value ? a - 1 : a, db = s->value ? b - 1 : b;
      for (int k = 0; k < dim; k++) {
        const fea_sf_qp_vd *Ta = da == k ? L.D[k] : L.B[k], *Tb = db == k ? L.D[k] : L.B[k];
        for (int i = 0; i < s->nq[k] * s->n[k]; i++) L.E[k][i] = Ta[i] * Tb[i];
      }
      const int p = fea_sf_qp_pack(nc, a, b);
      const double f = a == b ? 1.0 : 2.0;
      for (fea_index q = 0; q < nqt; q++) L.U[q] = f * L.Q[(size_t)q * s->npack + p];
      fea_sf_qp_vd *in = L.U;
      for (int k = dim - 1; k >= 0; k--) {
        fea_sf_qp_vd *out = k == 0 ? L.Y : L.t[k % 2];
        BWD(k, L.E[k], in, out, k == 0);
        in = out;
      }
    }
  for (int l = 0; l < m; l++)
    for (int i = 0; i < nb; i++) d[(size_t)l * nb + i] = L.Y[i][l];
  for (int l = 0; l < m && s->robin_of; l++) {
    const int32_t r = s->robin_of[elems[l]];
    if (r >= 0)
      for (int i = 0; i < nb; i++) d[(size_t)l * nb + i] += s->R[((size_t)r * nb + i) * nb + i];
  }
}

QP_FN void fea_sf_qp_geometry(const fea_sf_qp_state *s, const fea_index *elems, int m, double *g,
                              double *scratch) {
  const fea_sf_qp_sizes z = sizes_of(s);
  lanes L;
  layout(s, scratch, &L);
  gather_tables(s, elems, m, &L);
  geometry_channels(s, z, elems, m, &L);
  const int dim = s->dim;
  for (fea_index q = 0; q < s->nqt; q++) {
    fea_sf_qp_vd x[3], J[9] = {0}, W, dW[3];
    point_geometry(s, z, &L, q, x, J, &W, dW);
    for (int l = 0; l < m; l++) {
      double *o = g + ((size_t)l * s->nqt + q) * QP_GEO_PER_POINT;
      for (int a = 0; a < dim; a++) o[a] = x[a][l];
      for (int a = 0; a < dim * dim; a++) o[3 + a] = J[a][l];
      o[12] = W[l];
      for (int a = 0; a < dim; a++) o[13 + a] = dW[a][l];
    }
  }
}

#define QP_CAT2(a, b) a##b
#define QP_CAT(a, b) QP_CAT2(a, b)

const fea_sf_qp_isa QP_CAT(fea_sf_qp_isa_, QP_ISA_VAR) = {
    .name = QP_ISA_NAME,
    .lanes = QP_W,
    .available = QP_ISA_AVAILABLE,
    .apply = fea_sf_qp_apply,
    .fixed = {{NULL},
              {NULL, NULL, fea_sf_qp_apply_2_2, fea_sf_qp_apply_2_3, fea_sf_qp_apply_2_4,
               fea_sf_qp_apply_2_5, fea_sf_qp_apply_2_6},
              {NULL, NULL, fea_sf_qp_apply_3_2, fea_sf_qp_apply_3_3, fea_sf_qp_apply_3_4,
               fea_sf_qp_apply_3_5}},
    .diagonal = fea_sf_qp_diagonal,
    .geometry = fea_sf_qp_geometry,
};
