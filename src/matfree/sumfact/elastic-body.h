/* The lane kernels of sum factorization for linear elasticity (elastic.h),
 * as a template included once per instruction set by elastic-isa-*.c with
 *   EL_W        lanes (elements per batch)
 *   EL_TARGET   the function attribute of that instruction set (or nothing)
 *   EL_ISA_NAME, EL_ISA_VAR, EL_ISA_AVAILABLE
 *
 * Every array is lanes of EL_W elements (GCC vector extensions), as in
 * qp-body.h, whose passes these are: the component loop runs the scalar
 * kernel's interpolation and integration once per component around the
 * point stage, which couples the components. */
#include <stdint.h>
#include <string.h>

#include "elastic.h"

#if defined(__clang__)
#pragma clang fp contract(fast)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=fast")
#endif

typedef double fea_sf_el_vd __attribute__((vector_size(EL_W * sizeof(double))));

#define EL_FN static EL_TARGET
#define EL_INLINE static inline __attribute__((always_inline, no_sanitize("undefined"))) EL_TARGET

/* One pass along a direction (qp-body.h's pass_fwd and pass_bwd). */
EL_INLINE void pass_fwd(const fea_sf_el_vd *restrict M, int nq, int n, int outer, int inner,
                        const fea_sf_el_vd *restrict in, fea_sf_el_vd *restrict out, int add) {
  for (int o = 0; o < outer; o++)
    for (int a = 0; a < nq; a++)
      for (int j = 0; j < inner; j++) {
        const fea_sf_el_vd *x = in + (size_t)o * n * inner + j;
        fea_sf_el_vd acc = M[a * n] * x[0];
        for (int i = 1; i < n; i++) acc += M[a * n + i] * x[(size_t)i * inner];
        fea_sf_el_vd *y = out + ((size_t)o * nq + a) * inner + j;
        *y = add ? *y + acc : acc;
      }
}

EL_INLINE void pass_bwd(const fea_sf_el_vd *restrict M, int nq, int n, int outer, int inner,
                        const fea_sf_el_vd *restrict in, fea_sf_el_vd *restrict out, int add) {
  for (int o = 0; o < outer; o++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < inner; j++) {
        const fea_sf_el_vd *x = in + (size_t)o * nq * inner + j;
        fea_sf_el_vd acc = M[i] * x[0];
        for (int a = 1; a < nq; a++) acc += M[a * n + i] * x[(size_t)a * inner];
        fea_sf_el_vd *y = out + ((size_t)o * n + i) * inner + j;
        *y = add ? *y + acc : acc;
      }
}

/* The sizes a kernel runs with: constants in the fixed-size instantiations. */
typedef struct el_sizes {
  int dim, n[3], nq[3], nqt;
} el_sizes;

static inline el_sizes sizes_of(const fea_sf_el_state *s) {
  el_sizes z = {s->dim, {s->n[0], s->n[1], s->n[2]}, {s->nq[0], s->nq[1], s->nq[2]}, s->nqt};
  return z;
}

/* The lane scratch of one call. */
typedef struct el_lanes {
  fea_sf_el_vd *X, *Y;       /* nbv each, component-major: [c ns + i] */
  fea_sf_el_vd *B[3], *D[3]; /* per direction nq x n */
  fea_sf_el_vd *E[3];        /* diagonal: products of two tables */
  fea_sf_el_vd *C[3];        /* collocation: d/dr at the points from values there, nq x nq */
  fea_sf_el_vd *U;           /* nc x nch x nqt: the channels at the points */
  fea_sf_el_vd *Pv;          /* STORED: nqt x npp gathered here */
  const fea_sf_el_vd *P;     /* the batch's point terms: Pv, or the stored batch itself */
  fea_sf_el_vd *t[5];        /* intermediate tensors */
  fea_sf_el_vd ih[3];        /* BOX: 1 / h_k per lane */
  fea_sf_el_vd det;          /* BOX: prod h_k per lane */
} el_lanes;

/* Lay out the scratch (aligned; fea_sf_el_scratch_doubles counts the same). */
static void layout(const fea_sf_el_state *s, double *scratch, el_lanes *L) {
  fea_sf_el_vd *p = (fea_sf_el_vd *)(((uintptr_t)scratch + QP_ALIGN - 1) &
                                     ~(uintptr_t)(QP_ALIGN - 1));
  fea_index T = 1;
  for (int k = 0; k < s->dim; k++) T *= s->n[k] > s->nq[k] ? s->n[k] : s->nq[k];
  L->X = p, p += s->nbv;
  L->Y = p, p += s->nbv;
  for (int k = 0; k < 3; k++) {
    const int sz = k < s->dim ? s->nq[k] * s->n[k] : 0;
    L->B[k] = p, p += sz;
    L->D[k] = p, p += sz;
    L->E[k] = p, p += sz;
    const int cz = k < s->dim ? s->nq[k] * s->nq[k] : 0;
    L->C[k] = p, p += cz;
  }
  L->U = p, p += (fea_index)s->nc * s->nch * s->nqt;
  L->Pv = p, p += (fea_index)s->npp * s->nqt;
  L->P = L->Pv;
  for (int i = 0; i < 5; i++) L->t[i] = p, p += T;
}

/* Outer and inner extents of the pass along direction k. */
EL_INLINE void extents(const el_sizes z, int k, int *outer, int *inner) {
  int o = 1, in = 1;
  for (int j = 0; j < k; j++) in *= z.nq[j];
  for (int j = k + 1; j < z.dim && j < 3; j++) o *= z.n[j];
  *outer = o, *inner = in;
}

/* A pass along direction k with the sizes zz (FWD, BWD: the kernel's z). */
#define FWDZ(zz, k, M, in, out, add)                          \
  do {                                                        \
    int o_, i_;                                               \
    extents(zz, k, &o_, &i_);                                 \
    pass_fwd(M, (zz).nq[k], (zz).n[k], o_, i_, in, out, add); \
  } while (0)
#define BWDZ(zz, k, M, in, out, add)                          \
  do {                                                        \
    int o_, i_;                                               \
    extents(zz, k, &o_, &i_);                                 \
    pass_bwd(M, (zz).nq[k], (zz).n[k], o_, i_, in, out, add); \
  } while (0)
#define FWD(k, M, in, out, add) FWDZ(z, k, M, in, out, add)
#define BWD(k, M, in, out, add) BWDZ(z, k, M, in, out, add)

/* The sizes of a pass over the points in every direction (collocation). */
EL_INLINE el_sizes at_points(const el_sizes z) {
  el_sizes w = z;
  for (int k = 0; k < 3; k++) w.n[k] = w.nq[k];
  return w;
}

/* One component's channels at the points: U[0] the value (when value),
 * then the derivatives along r_0 .. r_{d-1}, each nqt lanes. colloc (n =
 * n_q in every direction): the values at the points by d passes of B, then
 * each derivative by one pass of the collocation matrix C over them: 2 d
 * passes instead of 8 (3D) or 5 (2D). */
EL_INLINE void interpolate(const el_sizes z, const el_lanes *L, const fea_sf_el_vd *x, int value,
                           int colloc, fea_sf_el_vd *U) {
  const fea_index nqt = z.nqt;
  fea_sf_el_vd *u = value ? U : NULL, *d0 = U + (value ? nqt : 0), *d1 = d0 + nqt, *d2 = d1 + nqt;
  fea_sf_el_vd *const *t = L->t;
  if (colloc) {
    fea_sf_el_vd *v = u ? u : t[2];
    if (z.dim == 2) {
      FWD(0, L->B[0], x, t[0], 0);
      FWD(1, L->B[1], t[0], v, 0);
    } else {
      FWD(0, L->B[0], x, t[0], 0);
      FWD(1, L->B[1], t[0], t[1], 0);
      FWD(2, L->B[2], t[1], v, 0);
    }
    const el_sizes w = at_points(z);
    FWDZ(w, 0, L->C[0], v, d0, 0);
    FWDZ(w, 1, L->C[1], v, d1, 0);
    if (z.dim == 3) FWDZ(w, 2, L->C[2], v, d2, 0);
    return;
  }
  if (z.dim == 2) {
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

/* y = the transposed passes of one component's channels U. */
EL_INLINE void integrate(const el_sizes z, const el_lanes *L, const fea_sf_el_vd *U, int value,
                         int colloc, fea_sf_el_vd *y) {
  const fea_index nqt = z.nqt;
  const fea_sf_el_vd *u = value ? U : NULL, *d0 = U + (value ? nqt : 0), *d1 = d0 + nqt,
                     *d2 = d1 + nqt;
  fea_sf_el_vd *const *t = L->t;
  if (colloc) {
    fea_sf_el_vd *v = t[2];
    const el_sizes w = at_points(z);
    BWDZ(w, 0, L->C[0], d0, v, 0);
    BWDZ(w, 1, L->C[1], d1, v, 1);
    if (z.dim == 3) BWDZ(w, 2, L->C[2], d2, v, 1);
    if (u)
      for (fea_index q = 0; q < nqt; q++) v[q] += u[q];
    if (z.dim == 2) {
      BWD(1, L->B[1], v, t[0], 0);
      BWD(0, L->B[0], t[0], y, 0);
    } else {
      BWD(2, L->B[2], v, t[0], 0);
      BWD(1, L->B[1], t[0], t[1], 0);
      BWD(0, L->B[0], t[1], y, 0);
    }
    return;
  }
  if (z.dim == 2) {
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

/* One lane vector from W addresses: built in registers, since W scalar
 * stores into a vector's lanes and a load of the whole vector right after
 * them stall on store forwarding (the gather was a third of the kernel's
 * time so). */
#if EL_W == 8
#define EL_LANES(p, c) \
  ((fea_sf_el_vd){p[0][c], p[1][c], p[2][c], p[3][c], p[4][c], p[5][c], p[6][c], p[7][c]})
#elif EL_W == 4
#define EL_LANES(p, c) ((fea_sf_el_vd){p[0][c], p[1][c], p[2][c], p[3][c]})
#else
#error "EL_W must be 4 or 8"
#endif

/* The 1D tables of the batch's elements, lane by lane (broadcast where one
 * serves all), and, BOX, each lane's 1 / h_k and prod h_k. */
EL_FN void gather_tables(const fea_sf_el_state *s, const fea_index *elems, int m, el_lanes *L) {
  const fea_sf_el_vd zero = {0};
  fea_index idx[EL_W][3];
  for (int l = 0; l < EL_W; l++) fea_sf_el_element_index(s, lane_element(elems, m, l), idx[l]);
  for (int k = 0; k < s->dim; k++) {
    const int sz = s->nq[k] * s->n[k];
    if (s->nel[k] == 1) {
      for (int i = 0; i < sz; i++) {
        L->B[k][i] = zero + s->tab[k][i];
        L->D[k][i] = zero + s->tab[k][sz + i];
      }
    } else { /* per lane, built in registers (EL_LANES) */
      const double *T[EL_W];
      for (int l = 0; l < EL_W; l++) T[l] = s->tab[k] + (size_t)idx[l][k] * 2 * sz;
      for (int i = 0; i < sz; i++) {
        L->B[k][i] = EL_LANES(T, i);
        L->D[k][i] = EL_LANES(T, sz + i);
      }
    }
  }
  if (s->colloc)
    for (int k = 0; k < s->dim; k++)
      for (int i = 0; i < s->nq[k] * s->nq[k]; i++) L->C[k][i] = zero + s->colloc_tab[k][i];
  if (!s->box) return;
  L->det = zero + 1.0;
  for (int k = 0; k < s->dim; k++) {
    fea_sf_el_vd h;
    for (int l = 0; l < EL_W; l++) h[l] = s->len[k][s->nel[k] == 1 ? 0 : idx[l][k]];
    L->ih[k] = 1.0 / h;
    L->det *= h;
  }
}

/* STORED: the batch's point terms, read in place where the batch is EL_W
 * consecutive elements that start a stored batch, else gathered. */
static void gather_points(const fea_sf_el_state *s, const fea_index *elems, int m, el_lanes *L) {
  const fea_index per = (fea_index)s->nqt * s->npp;
  const fea_index e0 = elems[0];
  int run = m == EL_W && e0 % EL_W == 0;
  for (int l = 1; l < m && run; l++) run = elems[l] == e0 + l;
  if (run) {
    L->P = (const fea_sf_el_vd *)(s->P + (size_t)e0 * per);
    return;
  }
  L->P = L->Pv;
  for (int l = 0; l < EL_W; l++) {
    const fea_index e = lane_element(elems, m, l);
    const double *Pe = s->P + (size_t)(e / EL_W) * EL_W * per + e % EL_W;
    for (fea_index i = 0; i < per; i++) L->Pv[i][l] = Pe[(size_t)i * EL_W];
  }
}

/* X[c ns + i] = x_full at vector DoF (c, i) of each lane's element; zero in
 * unused lanes. A function's components are consecutive DoFs (c + nc i,
 * space.h): one index per function. */
EL_INLINE void gather_dofs(const fea_sf_el_state *s, const fea_index *elems, int m,
                           const double *x_full, fea_sf_el_vd *X) {
  static const double zeros[FEA_MAX_COMPONENTS];
  const int nbv = s->nbv, nc = s->nc, ns = s->ns;
  if (s->base32) {
    const int32_t *ed[EL_W];
    for (int l = 0; l < EL_W; l++) ed[l] = s->base32 + (size_t)elems[l < m ? l : 0] * ns;
    for (int i = 0; i < ns; i++) {
      const double *p[EL_W];
      for (int l = 0; l < EL_W; l++) p[l] = l < m ? x_full + ed[l][i] : zeros;
      for (int c = 0; c < nc; c++) X[c * ns + i] = EL_LANES(p, c);
    }
    return;
  }
  const fea_index *ed[EL_W];
  for (int l = 0; l < EL_W; l++) ed[l] = s->edofs + (size_t)elems[l < m ? l : 0] * nbv;
  for (int i = 0; i < ns; i++) {
    const double *p[EL_W];
    for (int l = 0; l < EL_W; l++) p[l] = l < m ? x_full + ed[l][nc * i] : zeros;
    for (int c = 0; c < nc; c++) X[c * ns + i] = EL_LANES(p, c);
  }
}

/* The rule's weight at point q. */
static inline double point_weight(const fea_sf_el_state *s, fea_index q) {
  double w = 1.0;
  for (int k = 0; k < s->dim; k++) {
    w *= s->w1[k][q % s->nq[k]];
    q /= s->nq[k];
  }
  return w;
}

/* The stress stage at every point: the channels of every component in U
 * become the channels of the test functions (elastic.h). DIM is a constant
 * where the caller's sizes are. */
EL_INLINE void apply_points(const fea_sf_el_state *s, const el_sizes z, int box, el_lanes *L) {
  const int dim = z.dim, nch = s->nch, rat = s->rational, npp = s->npp;
  const fea_index nqt = z.nqt;
  const fea_sf_el_vd zero = {0};
  for (fea_index q = 0; q < nqt; q++) {
    fea_sf_el_vd wl, wm, K[9] = {zero}, kk[3] = {zero}, g[3][3];
    if (box) {
      const fea_sf_el_vd wd = L->det * point_weight(s, q);
      wl = wd * s->lambda, wm = wd * s->mu;
      for (int c = 0; c < dim; c++)
        for (int k = 0; k < dim; k++) g[c][k] = L->U[((size_t)c * nch + k) * nqt + q] * L->ih[k];
    } else {
      const fea_sf_el_vd *P = L->P + (size_t)q * npp;
      wl = P[0], wm = P[1];
      for (int i = 0; i < dim * dim; i++) K[i] = P[2 + i];
      for (int k = 0; k < dim; k++) kk[k] = rat ? P[2 + dim * dim + k] : zero;
      for (int c = 0; c < dim; c++) {
        const fea_sf_el_vd *u = L->U + (size_t)c * nch * nqt + q;
        const fea_sf_el_vd *d = u + (rat ? nqt : 0);
        fea_sf_el_vd dr[3];
        for (int j = 0; j < dim; j++) dr[j] = d[(size_t)j * nqt];
        for (int k = 0; k < dim; k++) {
          fea_sf_el_vd acc = K[k * dim] * dr[0];
          for (int j = 1; j < dim; j++) acc += K[k * dim + j] * dr[j];
          if (rat) acc += kk[k] * u[0];
          g[c][k] = acc;
        }
      }
    }
    fea_sf_el_vd tr = g[0][0];
    for (int c = 1; c < dim; c++) tr += g[c][c];
    const fea_sf_el_vd lt = wl * tr;
    fea_sf_el_vd S[3][3];
    for (int c = 0; c < dim; c++)
      for (int k = c; k < dim; k++) {
        const fea_sf_el_vd v = wm * (g[c][k] + g[k][c]);
        S[c][k] = c == k ? v + lt : v;
        S[k][c] = S[c][k];
      }
    for (int c = 0; c < dim; c++) {
      fea_sf_el_vd *u = L->U + (size_t)c * nch * nqt + q;
      fea_sf_el_vd *d = u + (rat ? nqt : 0);
      if (box) {
        for (int k = 0; k < dim; k++) d[(size_t)k * nqt] = S[c][k] * L->ih[k];
        continue;
      }
      for (int j = 0; j < dim; j++) {
        fea_sf_el_vd acc = K[j] * S[c][0];
        for (int k = 1; k < dim; k++) acc += K[k * dim + j] * S[c][k];
        d[(size_t)j * nqt] = acc;
      }
      if (rat) {
        fea_sf_el_vd acc = kk[0] * S[c][0];
        for (int k = 1; k < dim; k++) acc += kk[k] * S[c][k];
        u[0] = acc;
      }
    }
  }
}

/* box: a constant in every instantiation, so that each way's point stage
 * is its own straight code. */
/* The vector DoF of component 0 of element e's function i (the others
 * follow it). */
static inline fea_index fn_base(const fea_sf_el_state *s, fea_index e, int i) {
  return s->base32 ? (fea_index)s->base32[(size_t)e * s->ns + i]
                   : s->edofs[(size_t)e * s->nbv + s->nc * i];
}

/* apply_add's gather from the reduced vector x (tg->free_rows): a
 * function's components through their rows (consecutive where all are
 * free, as the rows follow the DoFs' order), a Dirichlet one as zero. */
EL_INLINE void gather_rows(const fea_sf_el_state *s, const fea_index *elems, int m, const double *x,
                           const fea_matfree_target *tg, fea_sf_el_vd *X) {
  static const double zeros[FEA_MAX_COMPONENTS];
  const int nc = s->nc, ns = s->ns;
  const fea_index *row = tg->row;
  double tmp[EL_W][FEA_MAX_COMPONENTS];
  for (int i = 0; i < ns; i++) {
    const double *p[EL_W];
    for (int l = 0; l < EL_W; l++) {
      p[l] = zeros;
      if (l >= m) continue;
      const fea_index *r = row + fn_base(s, elems[l], i); /* its components' rows */
      int all = 1;
      for (int c = 0; c < nc; c++) all &= r[c] >= 0;
      if (all) {
        p[l] = x + r[0];
        continue;
      }
      for (int c = 0; c < nc; c++) tmp[l][c] = r[c] >= 0 ? x[r[c]] : 0.0;
      p[l] = tmp[l];
    }
    for (int c = 0; c < nc; c++) X[c * ns + i] = EL_LANES(p, c);
  }
}

/* The batch's results added into the target, element by element in the
 * batch's order: every DoF at once where the write map says all are free
 * rows of this call, else row by row through the filter. */
static uint64_t scatter_target(const fea_sf_el_state *s, const fea_index *elems, int m,
                               const el_lanes *L, const fea_matfree_target *tg) {
  const int nc = s->nc, ns = s->ns, nbv = s->nbv, fr = tg->free_rows;
  const fea_index *row = tg->row;
  const int *keep = tg->keep, key = tg->keep_key;
  double *y = tg->y;
  uint64_t n = 0;
  for (int l = 0; l < m; l++) {
    const fea_index e = elems[l];
    const unsigned w = tg->write ? tg->write[e - tg->write_first] : 0;
    if (w != 0 && w < FEA_MATFREE_WRITE_ROWS) { /* every DoF a free row of this call */
      for (int i = 0; i < ns; i++) {
        const fea_index d0 = fn_base(s, e, i);
        double *yi = y + (fr ? row[d0] : d0);
        for (int c = 0; c < nc; c++) yi[c] += L->Y[c * ns + i][l];
      }
      n += (uint64_t)nbv;
      continue;
    }
    const int filter = keep && w != FEA_MATFREE_WRITE_ROWS;
    for (int i = 0; i < ns; i++)
      for (int c = 0; c < nc; c++) {
        const fea_index d = fn_base(s, e, i) + c, r = row[d];
        if (r < 0 || (filter && keep[r] != key)) continue;
        y[fr ? r : d] += L->Y[c * ns + i][l];
        n++;
      }
  }
  return n;
}

/* box and colloc: constants in every instantiation, so that each way's
 * point stage is its own straight code. */
EL_INLINE uint64_t apply_body(const fea_sf_el_state *s, const el_sizes z, int box, int colloc,
                              const fea_index *elems, int m, const double *x, double *y,
                              const fea_matfree_target *tg, double *scratch) {
  el_lanes L;
  layout(s, scratch, &L);
  gather_tables(s, elems, m, &L);
  if (!box) gather_points(s, elems, m, &L);
  if (tg && tg->free_rows)
    gather_rows(s, elems, m, x, tg, L.X);
  else
    gather_dofs(s, elems, m, x, L.X);
  const int ns = s->ns, nc = s->nc, nch = s->nch, nbv = s->nbv;
  const fea_index nqt = z.nqt;
  for (int c = 0; c < nc; c++)
    interpolate(z, &L, L.X + (size_t)c * ns, s->rational, colloc, L.U + (size_t)c * nch * nqt);
  apply_points(s, z, box, &L);
  for (int c = 0; c < nc; c++)
    integrate(z, &L, L.U + (size_t)c * nch * nqt, s->rational, colloc, L.Y + (size_t)c * ns);
  if (tg) return scatter_target(s, elems, m, &L, tg);
  for (int l = 0; l < m; l++) {
    double *ye = y + (size_t)l * nbv;
    for (int i = 0; i < ns; i++)
      for (int c = 0; c < nc; c++) ye[c + nc * i] = L.Y[c * ns + i][l];
  }
  return 0;
}

EL_FN uint64_t fea_sf_el_apply_box(const fea_sf_el_state *s, const fea_index *elems, int m,
                                   const double *x, double *y, const fea_matfree_target *tg,
                                   double *scratch) {
  return apply_body(s, sizes_of(s), 1, s->colloc, elems, m, x, y, tg, scratch);
}

EL_FN uint64_t fea_sf_el_apply_stored(const fea_sf_el_state *s, const fea_index *elems, int m,
                                      const double *x, double *y, const fea_matfree_target *tg,
                                      double *scratch) {
  return apply_body(s, sizes_of(s), 0, s->colloc, elems, m, x, y, tg, scratch);
}

/* Fixed sizes: N functions and N points in each of D directions (p = N - 1
 * with the default rule). */
#define EL_FIXED1(D, N, WAY, BOX)                                                              \
  EL_FN uint64_t fea_sf_el_##WAY##_##D##_##N(const fea_sf_el_state *s, const fea_index *elems, \
                                             int m, const double *x, double *y,                \
                                             const fea_matfree_target *tg, double *scratch) {  \
    const el_sizes z = {D,                                                                     \
                        {N, N, D > 2 ? N : 1},                                                 \
                        {N, N, D > 2 ? N : 1},                                                 \
                        D == 2 ? N * N : N * N * N};                                           \
    return apply_body(s, z, BOX, 1, elems, m, x, y, tg, scratch);                              \
  }
#define EL_FIXED(D, N) EL_FIXED1(D, N, box, 1) EL_FIXED1(D, N, stored, 0)
EL_FIXED(2, 2)
EL_FIXED(2, 3)
EL_FIXED(2, 4)
EL_FIXED(2, 5)
EL_FIXED(3, 2)
EL_FIXED(3, 3)
EL_FIXED(3, 4)

/* diag(K_e): for component c, the point's quadratic form in the channels of
 * one basis function, Q_c = (wl + wm) a_c a_c^T + wm sum_k a_k a_k^T where
 * a_k holds the channels' coefficients in du/dx_k (k_k, then row k of K),
 * integrated pair by pair against the products of the two channels' 1D
 * tables, as qp-body.h's diagonal does. */
EL_FN void fea_sf_el_diagonal(const fea_sf_el_state *s, const fea_index *elems, int m, double *d,
                              double *scratch) {
  const el_sizes z = sizes_of(s);
  el_lanes L;
  layout(s, scratch, &L);
  gather_tables(s, elems, m, &L);
  if (!s->box) gather_points(s, elems, m, &L);
  const int dim = s->dim, nch = s->nch, ns = s->ns, nc = s->nc, rat = s->rational;
  const fea_index nqt = s->nqt;
  const fea_sf_el_vd zero = {0};
  fea_sf_el_vd *Qc = L.U; /* per point the packed Q_c of one component, reused */
  for (int c = 0; c < nc; c++) {
    fea_sf_el_vd *Yc = L.Y + (size_t)c * ns;
    for (int i = 0; i < ns; i++) Yc[i] = zero;
    for (fea_index q = 0; q < nqt; q++) {
      fea_sf_el_vd wl, wm, a[3][EL_MAX_NCH];
      for (int k = 0; k < dim; k++)
        for (int h = 0; h < nch; h++) a[k][h] = zero;
      if (s->box) {
        const fea_sf_el_vd wd = L.det * point_weight(s, q);
        wl = wd * s->lambda, wm = wd * s->mu;
        for (int k = 0; k < dim; k++) a[k][k] = L.ih[k];
      } else {
        const fea_sf_el_vd *P = L.P + (size_t)q * s->npp;
        wl = P[0], wm = P[1];
        for (int k = 0; k < dim; k++) {
          if (rat) a[k][0] = P[2 + dim * dim + k];
          for (int j = 0; j < dim; j++) a[k][rat + j] = P[2 + k * dim + j];
        }
      }
      for (int h = 0; h < nch; h++)
        for (int g = h; g < nch; g++) {
          fea_sf_el_vd v = (wl + wm) * a[c][h] * a[c][g];
          for (int k = 0; k < dim; k++) v += wm * a[k][h] * a[k][g];
          Qc[(size_t)fea_sf_qp_pack(nch, h, g) * nqt + q] = h == g ? v : 2.0 * v;
        }
    }
    for (int h = 0; h < nch; h++)
      for (int g = h; g < nch; g++) {
        /* Channel h differentiates along dir(h), or not at all (-1). */
        const int dh = rat ? h - 1 : h, dg = rat ? g - 1 : g;
        for (int k = 0; k < dim; k++) {
          const fea_sf_el_vd *Ta = dh == k ? L.D[k] : L.B[k], *Tb = dg == k ? L.D[k] : L.B[k];
          for (int i = 0; i < s->nq[k] * s->n[k]; i++) L.E[k][i] = Ta[i] * Tb[i];
        }
        const fea_sf_el_vd *in = Qc + (size_t)fea_sf_qp_pack(nch, h, g) * nqt;
        for (int k = dim - 1; k >= 0; k--) {
          fea_sf_el_vd *out = k == 0 ? Yc : L.t[k % 2];
          BWD(k, L.E[k], in, out, k == 0);
          in = out;
        }
      }
  }
  for (int l = 0; l < m; l++)
    for (int i = 0; i < ns; i++)
      for (int c = 0; c < nc; c++) d[(size_t)l * s->nbv + c + nc * i] = L.Y[c * ns + i][l];
}

#define EL_CAT2(a, b) a##b
#define EL_CAT(a, b) EL_CAT2(a, b)

const fea_sf_el_isa EL_CAT(fea_sf_el_isa_, EL_ISA_VAR) = {
    .name = EL_ISA_NAME,
    .lanes = EL_W,
    .available = EL_ISA_AVAILABLE,
    .apply = {fea_sf_el_apply_stored, fea_sf_el_apply_box},
    .fixed = {{{NULL},
               {NULL, NULL, fea_sf_el_stored_2_2, fea_sf_el_stored_2_3, fea_sf_el_stored_2_4,
                fea_sf_el_stored_2_5},
               {NULL, NULL, fea_sf_el_stored_3_2, fea_sf_el_stored_3_3, fea_sf_el_stored_3_4}},
              {{NULL},
               {NULL, NULL, fea_sf_el_box_2_2, fea_sf_el_box_2_3, fea_sf_el_box_2_4,
                fea_sf_el_box_2_5},
               {NULL, NULL, fea_sf_el_box_3_2, fea_sf_el_box_3_3, fea_sf_el_box_3_4}}},
    .diagonal = fea_sf_el_diagonal,
};
