/* The Kronecker operator of a mapped B-spline or NURBS patch (kron.h): the
 * coefficients at the patch's Gauss points, their rank-one terms, the 1D
 * band matrices of the terms shared where they coincide, and the operator's
 * implementation.
 *
 * Why it exists (issue #40): on a curved patch the element-wise kernels
 * stream or recompute a metric tensor at every Gauss point of every element
 * and repeat each B-spline DoF's work in its (p + 1)^d elements: the NURBS
 * ring ran at a third of a CSR product. The IGA literature's answer is to
 * work at the level of the patch: when the pulled-back coefficients
 * G = sigma det J J^-1 J^-T separate into sums of products of 1D functions
 * (exactly, for the polar, cylindrical and extruded maps of annuli, rings and
 * pipes; approximately, with few terms, for smooth maps: Mantzaflaris,
 * Juettler, Khoromskij and Langer's low-rank IGA, 2017), the stiffness
 * matrix is a short sum of Kronecker products of 1D band matrices and costs
 * what the box's costs. Here the terms are exact up to a relative 1e-12 of
 * the coefficients (the tensor Gauss rule factors over the directions, so
 * the 1D matrices integrate the terms exactly as the assembly does); a map
 * that needs more terms than the caps is left to the element-wise kernel.
 *
 * Cost of the setup: one pass over the patch's Gauss points per coefficient
 * (the Jacobian by sum factorization of the geometry's control net, about
 * 30 flops a point) and one pass per rank of the cross approximation;
 * memory for one coefficient at every point (8 bytes x points, freed
 * before the operator runs). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "base/thread-budget.h"
#include "disc/bspline.h"
#include "disc/geometry-map.h"
#include "disc/quadrature.h"
#include "internal/error.h"
#include "kron.h"
#include "matfree/operator.h"

#define REFUSE(...) (snprintf(why, len, __VA_ARGS__), 0)
#define MAP_TOL 1e-12                     /* relative truncation of every coefficient */
#define SEPARABLE 1e-13                   /* relative test of the weights' tensor product */
#define MAX_PG 16                         /* geometry degree */
#define MAP_BATCH_BYTES ((size_t)4 << 30) /* coefficient tensors held at once */

/* ---- which problems ----------------------------------------------------------------------- */

/* The weights' factors per direction: fac[k][i] with w_ijk = fac0_i fac1_j fac2_k, or 0. */
int fea_kron_weight_factors(const fea_geometry_map *g, double *fac[3]) {
  const fea_index n0 = g->n[0], n1 = g->dim > 1 ? g->n[1] : 1, n2 = g->dim > 2 ? g->n[2] : 1;
  const double *w = g->weights, w0 = w ? w[0] : 1.0;
  if (w && !(w0 > 0)) return 0;
  for (int k = 0; k < g->dim; k++)
    for (fea_index i = 0; i < g->n[k]; i++) {
      if (!w) {
        fac[k][i] = 1.0;
        continue;
      }
      const fea_index stride = k == 0 ? 1 : k == 1 ? n0 : n0 * n1;
      fac[k][i] = w[i * stride] / (k == 0 ? 1.0 : w0);
    }
  if (!w) return 1;
  for (fea_index c = 0; c < n2; c++)
    for (fea_index b = 0; b < n1; b++)
      for (fea_index a = 0; a < n0; a++) {
        double v = fac[0][a];
        if (g->dim > 1) v *= fac[1][b];
        if (g->dim > 2) v *= fac[2][c];
        const double wa = w[(c * n1 + b) * n0 + a];
        if (!(fabs(wa - v) <= SEPARABLE * fabs(wa))) return 0;
      }
  return 1;
}

int fea_kron_mapped_supports(const fea_problem *pb, char *why, size_t len) {
  const fea_space *s = pb->space;
  const fea_problem_desc *d = &pb->desc;
  if (s->kind != FEA_SPACE_BSPLINE) return REFUSE("the space is not a B-spline space");
  const fea_bspline_space *b = s->impl;
  if (!b->geo) return REFUSE("the patch has no geometry map (the box's operator serves it)");
  if (s->ncomp != 1) return REFUSE("the space has %d components", s->ncomp);
  if (d->element_form) return REFUSE("the problem has the user's element form");
  if (d->sigma_fn || d->sigma_tensor || d->reaction_fn)
    return REFUSE("the coefficients vary in space (sigma(x), A(x) or c(x))");
  if (fea_problem_has_robin(pb)) return REFUSE("the problem has Robin sides (face terms)");
  for (int k = 0; k < s->dim; k++)
    if (b->geo->knots[k].p > MAX_PG)
      return REFUSE("the geometry's degree %d in direction %d is above %d", b->geo->knots[k].p, k,
                    MAX_PG);
  fea_index total = 0, gtotal = 0;
  for (int k = 0; k < s->dim; k++) total += fea_kron_dir_size(s, k), gtotal += b->geo->n[k];
  fea_index *buf = malloc((size_t)total * sizeof *buf + 1);
  double *fbuf = malloc((size_t)gtotal * sizeof *fbuf + 1);
  if (!buf || !fbuf) {
    free(buf);
    free(fbuf);
    return REFUSE("no memory for %lld 1D indices", (long long)total);
  }
  fea_index *red[3] = {buf, buf, buf}, m[3];
  double *fac[3] = {fbuf, fbuf, fbuf};
  for (int k = 1; k < s->dim; k++) {
    red[k] = red[k - 1] + fea_kron_dir_size(s, k - 1);
    fac[k] = fac[k - 1] + b->geo->n[k - 1];
  }
  const int tensor = fea_kron_tensor_free_set(pb, red, m);
  const int separable = fea_kron_weight_factors(b->geo, fac);
  free(buf);
  free(fbuf);
  if (!tensor)
    return REFUSE(
        "the free DoFs are not a tensor product of each direction's functions (fixed DoFs "
        "other than whole sides)");
  if (!separable) return REFUSE("the NURBS weights are not a product of one factor per direction");
  return 1;
}

/* ---- the 1D tables at the patch's Gauss points --------------------------------------------- */

void fea_kron_tables_free(fea_kron_dir_tables *t) {
  free(t->w);
  free(t->first);
  free(t->phi);
  free(t->gfirst);
  free(t->r);
}

fea_status fea_kron_tables_build(const fea_problem *pb, int k, const double *fac,
                                 fea_kron_dir_tables *t) {
  const fea_space *s = pb->space;
  const fea_bspline_space *b = s->impl;
  const fea_knots *kn = &b->knots[k], *gk = &b->geo->knots[k];
  const int nq = pb->desc.quad_points > 0 ? pb->desc.quad_points : s->degree[k] + 1;
  const int p = kn->p, pg = gk->p;
  double g[32], wg[32];
  fea_status st = fea_gauss_legendre(nq, g, wg);
  if (st != FEA_SUCCESS)
    return FEA_ERROR(s->ctx, st, "no %d-point Gauss rule for direction %d", nq, k);
  t->p = p;
  t->pg = pg;
  t->m = kn->nelem * nq;
  t->w = malloc((size_t)t->m * sizeof *t->w);
  t->first = malloc((size_t)t->m * sizeof *t->first);
  t->phi = malloc((size_t)t->m * 2 * (size_t)(p + 1) * sizeof *t->phi);
  t->gfirst = malloc((size_t)t->m * sizeof *t->gfirst);
  t->r = malloc((size_t)t->m * 2 * (size_t)(pg + 1) * sizeof *t->r);
  if (!t->w || !t->first || !t->phi || !t->gfirst || !t->r)
    return FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the 1D tables of direction %d (%lld points)", k,
                     (long long)t->m);
  double d[2 * (FEA_BSPLINE_MAX_DEGREE + 1)], dg[2 * (MAX_PG + 1)];
  for (fea_index e = 0; e < kn->nelem; e++) {
    const fea_index sp = kn->span[e];
    const double a = kn->t[sp], h = kn->t[sp + 1] - a;
    const fea_index gs = fea_knots_find_span(gk, a + 0.5 * h);
    for (int q = 0; q < nq; q++) {
      const fea_index at = e * nq + q;
      const double x = a + h * g[q];
      t->w[at] = wg[q] * h;
      t->first[at] = sp - p;
      t->gfirst[at] = gs - pg;
      fea_bspline_basis_ders(kn, sp, x, 1, d);
      fea_bspline_basis_ders(gk, gs, x, 1, dg);
      double A = 1.0, dA = 0.0;
      if (b->geo->weights) {
        A = dA = 0.0;
        for (int l = 0; l <= pg; l++) {
          A += fac[gs - pg + l] * dg[l];
          dA += fac[gs - pg + l] * dg[pg + 1 + l];
        }
      }
      double *ph = t->phi + (size_t)at * 2 * (size_t)(p + 1), *r = t->r + (size_t)at * 2 * (pg + 1);
      for (int l = 0; l <= p; l++) {
        ph[l] = d[l] / A;
        ph[p + 1 + l] = (d[p + 1 + l] * A - d[l] * dA) / (A * A);
      }
      for (int l = 0; l <= pg; l++) {
        const double f = b->geo->weights ? fac[gs - pg + l] : 1.0;
        r[l] = f * dg[l] / A;
        r[pg + 1 + l] = f * (dg[pg + 1 + l] * A - dg[l] * dA) / (A * A);
      }
    }
  }
  return FEA_SUCCESS;
}

/* ---- the coefficients at the Gauss points --------------------------------------------------- */

/* Entries (a, b) of G = sigma det J J^-1 J^-T, or (dim, dim): c det J,
 * a batch of them per pass over the points (the Jacobian once for all). */
#define MAX_ENTRIES 7
typedef struct entry_args {
  const fea_geometry_map *g;
  const fea_kron_dir_tables *t;
  int dim;
  int count;              /* entries in this pass */
  int ab[MAX_ENTRIES][2]; /* their (a, b) */
  double *T[MAX_ENTRIES]; /* their tensors */
  double sigma, c;
  int threads;
  /* the first point whose Jacobian is not invertible with positive orientation */
  fea_index bad;
  double bad_det;
} entry_args;

/* The batch's entries at one point from J (row-major dx_c / dxi_d); 0
 * where det J is not positive and finite. */
static int entries_at(const entry_args *E, const double *J, fea_index at, double *det_out) {
  const int dim = E->dim;
  /* sigma det J J^-1 J^-T = sigma (C^T C) / det J with C the cofactors of J
   * (J^-1 = C^T / det J): rows of C^T are det J grad xi_a */
  double Ct[9], det;
  if (dim == 1) {
    det = J[0];
    Ct[0] = 1.0;
  } else if (dim == 2) {
    det = J[0] * J[3] - J[1] * J[2];
    Ct[0] = J[3], Ct[1] = -J[1], Ct[2] = -J[2], Ct[3] = J[0];
  } else {
    Ct[0] = J[4] * J[8] - J[5] * J[7], Ct[1] = J[2] * J[7] - J[1] * J[8];
    Ct[2] = J[1] * J[5] - J[2] * J[4], Ct[3] = J[5] * J[6] - J[3] * J[8];
    Ct[4] = J[0] * J[8] - J[2] * J[6], Ct[5] = J[2] * J[3] - J[0] * J[5];
    Ct[6] = J[3] * J[7] - J[4] * J[6], Ct[7] = J[1] * J[6] - J[0] * J[7];
    Ct[8] = J[0] * J[4] - J[1] * J[3];
    det = J[0] * Ct[0] + J[1] * Ct[3] + J[2] * Ct[6];
  }
  *det_out = det;
  if (!(det > 0) || !isfinite(det)) return 0;
  const double sd = E->sigma / det;
  for (int e = 0; e < E->count; e++) {
    const int a = E->ab[e][0], b = E->ab[e][1];
    double v;
    if (a == dim) {
      v = E->c * det;
    } else {
      double sum = 0.0;
      for (int c = 0; c < dim; c++) sum += Ct[a * dim + c] * Ct[b * dim + c];
      v = sd * sum;
    }
    E->T[e][at] = v;
  }
  return 1;
}

/* The map at every Gauss point of the patch, row by row (kron.h). J by sum
 * factorization over the geometry's control net: direction 2 contracted
 * first (value and derivative), then direction 1, then direction 0 (about
 * 3 dim (pg + 1) flops a point for J, dim (pg + 1) more for x). Rows of one
 * q2 go to one thread, in q1 order. */
int fea_kron_geometry_sweep(const fea_geometry_map *g, const fea_kron_dir_tables *t, int dim,
                            int want_x, int threads, fea_kron_row_fn row, void *user) {
  const fea_index m0 = t[0].m, m1 = dim > 1 ? t[1].m : 1, m2 = dim > 2 ? t[2].m : 1;
  const fea_index n0 = g->n[0], n1 = dim > 1 ? g->n[1] : 1;
  const int p0 = t[0].pg, p1 = dim > 1 ? t[1].pg : 0, p2 = dim > 2 ? t[2].pg : 0;
  int stop = 0;
#pragma omp parallel num_threads(threads)
  {
    /* S2[(v dim + c) n1 n0 + j n0 + i]: direction 2 contracted (value v = 0,
     * derivative v = 1); S1[(w dim + c) n0 + i]: w = 0 value-value, 1 the
     * direction-1 derivative, 2 the direction-2 one */
    double *S2 = malloc(2 * (size_t)dim * (size_t)n1 * (size_t)n0 * sizeof *S2);
    double *S1 = malloc(3 * (size_t)dim * (size_t)n0 * sizeof *S1);
    double *X = malloc((size_t)m0 * (size_t)dim * sizeof *X);
    double *JJ = malloc((size_t)m0 * (size_t)dim * (size_t)dim * sizeof *JJ);
    const int tid = omp_get_thread_num();
    if (!S2 || !S1 || !X || !JJ) {
#pragma omp atomic write
      stop = -2;
    }
#pragma omp for schedule(static)
    for (fea_index q2 = 0; q2 < m2; q2++) {
      int halt;
#pragma omp atomic read
      halt = stop;
      if (halt) continue;
      if (dim == 3) {
        const double *r2 = t[2].r + (size_t)q2 * 2 * (p2 + 1);
        const fea_index f2 = t[2].gfirst[q2];
        for (int v = 0; v < 2; v++)
          for (int c = 0; c < dim; c++)
            for (fea_index j = 0; j < n1; j++)
              for (fea_index i = 0; i < n0; i++) {
                double sum = 0.0;
                for (int l = 0; l <= p2; l++)
                  sum += g->points[(((f2 + l) * n1 + j) * n0 + i) * dim + c] * r2[v * (p2 + 1) + l];
                S2[((size_t)(v * dim + c) * n1 + j) * n0 + i] = sum;
              }
      }
      for (fea_index q1 = 0; q1 < m1 && !halt; q1++) {
        if (dim == 1) {
          for (fea_index i = 0; i < n0; i++) S1[i] = g->points[i];
        } else {
          const double *r1 = t[1].r + (size_t)q1 * 2 * (p1 + 1);
          const fea_index f1 = t[1].gfirst[q1];
          const int nw = dim == 3 ? 3 : 2;
          for (int w = 0; w < nw; w++)
            for (int c = 0; c < dim; c++)
              for (fea_index i = 0; i < n0; i++) {
                double sum = 0.0;
                for (int l = 0; l <= p1; l++) {
                  const fea_index j = f1 + l;
                  const double rv = r1[(w == 1) * (p1 + 1) + l];
                  const double pv = dim == 3 ? S2[((size_t)((w == 2) * dim + c) * n1 + j) * n0 + i]
                                             : g->points[(j * n0 + i) * dim + c];
                  sum += pv * rv;
                }
                S1[((size_t)w * dim + c) * n0 + i] = sum;
              }
        }
        for (fea_index q0 = 0; q0 < m0; q0++) {
          const double *r0 = t[0].r + (size_t)q0 * 2 * (p0 + 1);
          const fea_index f0 = t[0].gfirst[q0];
          double *J = JJ + (size_t)q0 * dim * dim;
          for (int c = 0; c < dim; c++) {
            for (int dd = 0; dd < dim; dd++) {
              /* direction 0 differentiated in column 0; columns 1, 2 read S1's w = 1, 2 */
              const double *S = S1 + ((size_t)dd * dim + c) * n0 + f0;
              const double *rr = r0 + (dd == 0 ? p0 + 1 : 0);
              double sum = 0.0;
              for (int l = 0; l <= p0; l++) sum += S[l] * rr[l];
              J[c * dim + dd] = sum;
            }
            if (want_x) {
              const double *S = S1 + (size_t)c * n0 + f0;
              double sum = 0.0;
              for (int l = 0; l <= p0; l++) sum += S[l] * r0[l];
              X[(size_t)q0 * dim + c] = sum;
            }
          }
        }
        const int rc = row(user, tid, q1, q2, X, JJ);
        if (rc) {
          halt = rc;
#pragma omp critical
          if (!stop) stop = rc;
        }
      }
    }
    free(S2);
    free(S1);
    free(X);
    free(JJ);
  }
  return stop;
}

/* The batch's entries at one row of points (the sweep's callback): the
 * first point of the patch whose det J is not positive and finite stops. */
static int entries_row(void *user, int thread, fea_index q1, fea_index q2, const double *x,
                       const double *J) {
  entry_args *E = user;
  const int dim = E->dim;
  const fea_index m0 = E->t[0].m, m1 = dim > 1 ? E->t[1].m : 1;
  const fea_index row = (q2 * m1 + q1) * m0;
  for (fea_index q0 = 0; q0 < m0; q0++) {
    double det;
    if (!entries_at(E, J + (size_t)q0 * dim * dim, row + q0, &det)) {
#pragma omp critical
      if (E->bad < 0 || row + q0 < E->bad) E->bad = row + q0, E->bad_det = det;
      return 1;
    }
  }
  return 0;
}

/* T[e][(q2 m1 + q1) m0 + q0] = the batch's entries at every Gauss point. */
static void entry_tensor(entry_args *E) {
  E->bad = -1;
  E->bad_det = 0.0;
  const int rc = fea_kron_geometry_sweep(E->g, E->t, E->dim, 0, E->threads, entries_row, E);
  if (rc == -2) E->bad = -2;
}

/* ---- the rank-one terms --------------------------------------------------------------------- */

typedef struct raw_term {
  int a, b;     /* derivative of the test (a) and trial (b) function; dim: none */
  double *f[3]; /* per direction the factor at its Gauss points (owned by the list) */
} raw_term;

typedef struct term_list {
  raw_term t[FEA_KRON_MAPPED_MAX_TERMS];
  int n;
} term_list;

static void terms_free(term_list *L) {
  for (int i = 0; i < L->n; i++)
    for (int k = 0; k < 3; k++) free(L->t[i].f[k]);
  L->n = 0;
}

/* Append f0 x f1 x f2 (copied) for entry (a, b), and (b, a) when a != b. 0 when full. */
static int terms_add(term_list *L, int dim, int a, int b, const double *f[3],
                     const fea_index m[3]) {
  for (int pass = 0; pass < (a == b ? 1 : 2); pass++) {
    if (L->n == FEA_KRON_MAPPED_MAX_TERMS) return 0;
    raw_term *t = &L->t[L->n];
    t->a = pass ? b : a;
    t->b = pass ? a : b;
    for (int k = 0; k < 3; k++) t->f[k] = NULL;
    for (int k = 0; k < dim; k++) {
      t->f[k] = malloc((size_t)m[k] * sizeof *t->f[k]);
      if (!t->f[k]) return 0;
      memcpy(t->f[k], f[k], (size_t)m[k] * sizeof *t->f[k]);
    }
    L->n++;
  }
  return 1;
}

/* The rank-one terms of T (one entry, overwritten) within tol; 1, or 0 with
 * the reason in why when the caps do not reach it (-1: no memory). *err
 * the bound on the largest error. */
static int cut_entry(double *T, int dim, const fea_index m[3], int a, int b, double tol,
                     int threads, term_list *L, double *err, char *why, size_t len) {
  const int R = FEA_KRON_MAPPED_MAX_RANK;
  if (dim == 1) {
    const double *f[3] = {T, NULL, NULL};
    *err = 0.0;
    return terms_add(L, dim, a, b, f, m) ? 1
                                         : REFUSE("more than %d terms", FEA_KRON_MAPPED_MAX_TERMS);
  }
  const fea_index rest = dim == 2 ? m[1] : m[1] * m[2];
  double *U = malloc((size_t)R * (size_t)m[0] * sizeof *U);
  double *V = malloc((size_t)R * (size_t)rest * sizeof *V);
  double *S = dim == 3 ? malloc((size_t)R * (size_t)(m[1] + m[2]) * sizeof *S) : NULL;
  int ok = U && V && (dim == 2 || S) ? 1 : -1;
  double e1 = 0.0;
  const int r1 = ok > 0 ? fea_kron_cross_approx(T, m[0], rest, tol, R, threads, U, V, &e1) : 0;
  if (ok > 0 && r1 < 0)
    ok = REFUSE("coefficient (%d, %d) of the map needs more than %d terms along direction 0", a, b,
                R);
  *err = e1;
  for (int r = 0; ok > 0 && r < r1; r++) {
    const double *u = U + (size_t)r * m[0];
    double *v = V + (size_t)r * rest;
    if (dim == 2) {
      const double *f[3] = {u, v, NULL};
      if (!terms_add(L, dim, a, b, f, m))
        ok = REFUSE("more than %d terms", FEA_KRON_MAPPED_MAX_TERMS);
      continue;
    }
    double umax = 0.0, e2 = 0.0;
    for (fea_index i = 0; i < m[0]; i++) umax = fmax(umax, fabs(u[i]));
    double *S1 = S, *S2 = S + (size_t)R * m[1];
    /* v as an m1 x m2 matrix (column q2), cut within its share of tol */
    const int r2 = fea_kron_cross_approx(v, m[1], m[2], tol / (r1 * umax), R, 1, S1, S2, &e2);
    if (r2 < 0) {
      ok = REFUSE("coefficient (%d, %d) of the map needs more than %d terms along direction 1", a,
                  b, R);
      break;
    }
    *err += umax * e2;
    for (int t = 0; t < r2 && ok > 0; t++) {
      const double *f[3] = {u, S1 + (size_t)t * m[1], S2 + (size_t)t * m[2]};
      if (!terms_add(L, dim, a, b, f, m))
        ok = REFUSE("more than %d terms", FEA_KRON_MAPPED_MAX_TERMS);
    }
  }
  free(U);
  free(V);
  free(S);
  return ok;
}

/* ---- the 1D band matrices ------------------------------------------------------------------- */

/* band (full: n functions, half-width p) += int f D^dt phi_i D^dtr phi_j over direction t. */
static void band_add(const fea_kron_dir_tables *t, fea_index n, const double *f, int dt, int dtr,
                     double *band) {
  const int p = t->p, nb = p + 1;
  for (fea_index q = 0; q < t->m; q++) {
    const double *ph = t->phi + (size_t)q * 2 * nb;
    const double *u = ph + (dt ? nb : 0), *v = ph + (dtr ? nb : 0);
    const double wf = t->w[q] * f[q];
    const fea_index first = t->first[q];
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++)
        band[(size_t)(j - i + p) * (size_t)n + (size_t)(first + i)] += wf * u[i] * v[j];
  }
}

/* f scaled to largest entry 1 (that entry positive); the scale. */
static double normalize(double *f, fea_index m) {
  double big = 0.0;
  for (fea_index i = 0; i < m; i++)
    if (fabs(f[i]) > fabs(big)) big = f[i];
  if (big != 0.0)
    for (fea_index i = 0; i < m; i++) f[i] /= big;
  return big;
}

static int same_factor(const double *f, const double *g, fea_index m) {
  for (fea_index i = 0; i < m; i++)
    if (!(fabs(f[i] - g[i]) <= 1e-13)) return 0;
  return 1;
}

/* ---- state ------------------------------------------------------------------------------------ */

void fea_kron_mapped_destroy(fea_kron_mapped *s) {
  if (!s) return;
  fea_kron_mapped_destroy(s->full);
  free(s->bands);
  free(s->work);
  free(s);
}

/* Groups of the terms: key[t] = (matrix of the last direction, matrix of
 * direction 1 in 3D); the distinct ones in order of first use. */
typedef struct grouping {
  int cmat[FEA_KRON_MAPPED_MAX_TERMS]; /* term -> its C (first term with an equal one) */
  int bmat[FEA_KRON_MAPPED_MAX_TERMS]; /* 3D: term -> its B */
  int group[FEA_KRON_MAPPED_MAX_TERMS];
  int cterm[FEA_KRON_MAPPED_MAX_TERMS]; /* C index -> a term that has it */
  int gterm[FEA_KRON_MAPPED_MAX_TERMS]; /* group -> its first term */
  int nc, ng;
} grouping;

static void group_terms(term_list *L, int dim, const fea_index m[3], grouping *G) {
  const int last = dim - 1;
  G->nc = G->ng = 0;
  if (dim == 1) { /* one band: the sum of every term's */
    for (int i = 0; i < L->n; i++) G->group[i] = G->cmat[i] = 0;
    G->gterm[0] = G->cterm[0] = 0;
    G->ng = 1;
    return;
  }
  for (int i = 0; i < L->n; i++) { /* factors beyond direction 0 to unit size */
    raw_term *t = &L->t[i];
    for (int k = 1; k < dim; k++) {
      const double sc = normalize(t->f[k], m[k]);
      for (fea_index q = 0; q < m[0]; q++) t->f[0][q] *= sc;
    }
  }
  for (int i = 0; i < L->n; i++) {
    const raw_term *t = &L->t[i];
    int c = -1;
    for (int j = 0; j < G->nc && c < 0; j++) {
      const raw_term *o = &L->t[G->cterm[j]];
      if ((o->a == last) == (t->a == last) && (o->b == last) == (t->b == last) &&
          same_factor(o->f[last], t->f[last], m[last]))
        c = j;
    }
    if (c < 0) G->cterm[c = G->nc++] = i;
    G->cmat[i] = c;
    int g = -1;
    for (int j = 0; j < G->ng && g < 0; j++) {
      const raw_term *o = &L->t[G->gterm[j]];
      if (G->cmat[G->gterm[j]] != c) continue;
      if (dim < 3 || ((o->a == 1) == (t->a == 1) && (o->b == 1) == (t->b == 1) &&
                      same_factor(o->f[1], t->f[1], m[1])))
        g = j;
    }
    if (g < 0) G->gterm[g = G->ng++] = i;
    G->group[i] = g;
  }
}

/* The bands of the grouped terms into s (reduced to the free functions). */
static fea_status make_bands(const fea_problem *pb, const fea_kron_dir_tables *t,
                             const term_list *L, const grouping *G, fea_index *red[3],
                             fea_index nfull[3], fea_kron_mapped *s) {
  const int dim = s->dim, last = dim - 1;
  size_t need = 0, fullmax = 0;
  for (int k = 0; k < dim; k++) {
    const size_t full = (size_t)(2 * s->p[k] + 1) * (size_t)nfull[k];
    fullmax = full > fullmax ? full : fullmax;
  }
  const size_t bandA = (size_t)(2 * s->p[0] + 1) * (size_t)s->n[0];
  need += (size_t)G->ng * bandA;
  if (dim > 1) need += (size_t)G->nc * (size_t)(2 * s->p[last] + 1) * (size_t)s->n[last];
  if (dim > 2) need += (size_t)G->ng * (size_t)(2 * s->p[1] + 1) * (size_t)s->n[1];
  s->bands = malloc(need * sizeof *s->bands);
  double *tmp = malloc(fullmax * sizeof *tmp);
  if (!s->bands || !tmp) {
    free(tmp);
    return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %zu band entries", need);
  }
  double *at = s->bands;
  for (int j = 0; j < G->ng; j++) { /* direction 0: the sum over the group's terms */
    memset(tmp, 0, (size_t)(2 * s->p[0] + 1) * (size_t)nfull[0] * sizeof *tmp);
    for (int i = 0; i < L->n; i++)
      if (G->group[i] == j)
        band_add(&t[0], nfull[0], L->t[i].f[0], L->t[i].a == 0, L->t[i].b == 0, tmp);
    fea_kron_reduce_band(s->p[0], nfull[0], red[0], s->n[0], tmp, at);
    s->A[j] = at;
    at += bandA;
  }
  if (dim > 1)
    for (int c = 0; c < G->nc; c++) {
      const raw_term *o = &L->t[G->cterm[c]];
      memset(tmp, 0, (size_t)(2 * s->p[last] + 1) * (size_t)nfull[last] * sizeof *tmp);
      band_add(&t[last], nfull[last], o->f[last], o->a == last, o->b == last, tmp);
      fea_kron_reduce_band(s->p[last], nfull[last], red[last], s->n[last], tmp, at);
      s->C[c] = at;
      at += (size_t)(2 * s->p[last] + 1) * (size_t)s->n[last];
    }
  if (dim > 2)
    for (int j = 0; j < G->ng; j++) {
      const raw_term *o = &L->t[G->gterm[j]];
      memset(tmp, 0, (size_t)(2 * s->p[1] + 1) * (size_t)nfull[1] * sizeof *tmp);
      band_add(&t[1], nfull[1], o->f[1], o->a == 1, o->b == 1, tmp);
      fea_kron_reduce_band(s->p[1], nfull[1], red[1], s->n[1], tmp, at);
      s->B[j] = at;
      s->cof[j] = G->cmat[G->gterm[j]];
      at += (size_t)(2 * s->p[1] + 1) * (size_t)s->n[1];
    }
  free(tmp);
  s->nc = dim == 1 ? 0 : G->nc;
  s->ng = G->ng;
  return FEA_SUCCESS;
}

/* Every coefficient cut into terms (diagonal entries first: an
 * off-diagonal one is measured against sqrt(G_aa G_bb)). */
/* max |T_i| over n entries. */
static double max_abs(const double *T, size_t n, int threads) {
  double big = 0.0;
#pragma omp parallel for num_threads(threads) reduction(max : big) schedule(static)
  for (size_t i = 0; i < n; i++) {
    const double v = fabs(T[i]);
    big = v > big ? v : big;
  }
  return big;
}

static fea_status cut_all(const fea_problem *pb, const fea_kron_dir_tables *t, int threads,
                          term_list *L, double *rank_error, char *why, size_t len, int *refused) {
  const fea_space *sp = pb->space;
  const fea_bspline_space *b = sp->impl;
  const int dim = sp->dim;
  fea_index m[3] = {1, 1, 1};
  for (int k = 0; k < dim; k++) m[k] = t[k].m;
  const size_t pts = (size_t)m[0] * (size_t)m[1] * (size_t)m[2];
  /* the entries in order: the diagonal, (0,1), (0,2), (1,2), the reaction */
  int ab[MAX_ENTRIES][2], nent = 0;
  for (int a = 0; a < dim; a++) ab[nent][0] = ab[nent][1] = a, nent++;
  for (int a = 0; a < dim; a++)
    for (int c = a + 1; c < dim; c++) ab[nent][0] = a, ab[nent][1] = c, nent++;
  if (pb->desc.reaction != 0.0) ab[nent][0] = ab[nent][1] = dim, nent++;
  /* as many entries per pass as MAP_BATCH_BYTES holds, at least one */
  size_t batch = MAP_BATCH_BYTES / (pts * sizeof(double));
  batch = batch < 1 ? 1 : batch > (size_t)nent ? (size_t)nent : batch;
  double *T = malloc(batch * pts * sizeof *T);
  if (!T)
    return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the map's coefficients at %zu Gauss points (%.3g GB)", pts,
                     8e-9 * (double)pts * (double)batch);
  entry_args E = {.g = b->geo,
                  .t = t,
                  .dim = dim,
                  .sigma = pb->desc.sigma,
                  .c = pb->desc.reaction,
                  .threads = threads};
  double diag[4] = {0, 0, 0, 0};
  fea_status st = FEA_SUCCESS;
  *rank_error = 0.0;
  *refused = 0;
  for (int e0 = 0; e0 < nent && st == FEA_SUCCESS && !*refused; e0 += (int)batch) {
    E.count = nent - e0 < (int)batch ? nent - e0 : (int)batch;
    for (int e = 0; e < E.count; e++) {
      E.ab[e][0] = ab[e0 + e][0], E.ab[e][1] = ab[e0 + e][1];
      E.T[e] = T + (size_t)e * pts;
    }
    entry_tensor(&E);
    if (E.bad == -2) {
      st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the geometry's sweeps");
      break;
    }
    if (E.bad >= 0) {
      st = FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG,
                     "the geometry is not invertible with positive orientation at Gauss point "
                     "%lld of the patch: det J = %g",
                     (long long)E.bad, E.bad_det);
      break;
    }
    for (int e = 0; e < E.count && st == FEA_SUCCESS && !*refused; e++) {
      const int a = E.ab[e][0], bb = E.ab[e][1];
      double *Te = E.T[e];
      const double big = max_abs(Te, pts, threads);
      const double scale = a == bb ? big : sqrt(diag[a] * diag[bb]);
      if (a == bb && a < dim) diag[a] = big;
      if (scale == 0.0) continue;
      double err = 0.0;
      const int ok = cut_entry(Te, dim, m, a, bb, MAP_TOL * scale, threads, L, &err, why, len);
      if (ok < 0)
        st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the rank-one terms");
      else if (ok == 0)
        *refused = 1;
      else
        *rank_error = fmax(*rank_error, err / scale);
    }
  }
  free(T);
  return st;
}

fea_status fea_kron_mapped_create_with(const fea_problem *pb, const char *isa, int threads,
                                       char *why, size_t len, fea_kron_mapped **out) {
  const fea_space *sp = pb->space;
  fea_context *ctx = sp->ctx;
  const fea_kron_isa *I = fea_kron_find_isa(isa);
  FEA_CHECK(I, ctx, FEA_ERR_UNSUPPORTED, "this CPU does not run the '%s' Kronecker kernels",
            isa ? isa : "(any)");
  FEA_CHECK(threads >= 1, ctx, FEA_ERR_INVALID_ARG, "threads is %d; it must be >= 1", threads);
  const fea_bspline_space *b = sp->impl;
  const int dim = sp->dim;
  fea_index nfull[3] = {1, 1, 1}, total = 0, gtotal = 0;
  for (int k = 0; k < dim; k++) {
    total += nfull[k] = fea_kron_dir_size(sp, k);
    gtotal += b->geo->n[k];
  }
  fea_kron_mapped *s = calloc(1, sizeof *s);
  fea_index *redbuf = malloc((size_t)total * sizeof *redbuf);
  double *facbuf = malloc((size_t)gtotal * sizeof *facbuf);
  fea_kron_dir_tables t[3];
  memset(t, 0, sizeof t);
  term_list *L = calloc(1, sizeof *L);
  fea_status st = FEA_SUCCESS;
  int refused = 0;
  if (!s || !redbuf || !facbuf || !L)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the Kronecker operator's state");
  fea_index *red[3] = {redbuf, redbuf, redbuf};
  double *fac[3] = {facbuf, facbuf, facbuf};
  for (int k = 1; k < dim && st == FEA_SUCCESS; k++) {
    red[k] = red[k - 1] + nfull[k - 1];
    fac[k] = fac[k - 1] + b->geo->n[k - 1];
  }
  if (st == FEA_SUCCESS) {
    s->dim = dim;
    s->isa = I;
    s->threads = threads;
    if (!fea_kron_tensor_free_set(pb, red, s->n) || !fea_kron_weight_factors(b->geo, fac))
      st = FEA_ERROR(ctx, FEA_ERR_UNSUPPORTED,
                     "the Kronecker operator does not serve this problem (see "
                     "fea_kron_mapped_supports)");
    s->num_free = s->n[0] * s->n[1] * s->n[2];
    for (int k = 0; k < dim; k++) s->p[k] = sp->degree[k];
  }
  for (int k = 0; k < dim && st == FEA_SUCCESS; k++)
    st = fea_kron_tables_build(pb, k, fac[k], &t[k]);
  if (st == FEA_SUCCESS) st = cut_all(pb, t, threads, L, &s->rank_error, why, len, &refused);
  grouping G;
  if (st == FEA_SUCCESS && !refused) {
    if (L->n == 0) { /* a zero operator cannot be: sigma > 0 and det J > 0 */
      st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG, "the map's coefficients are all zero");
    } else {
      fea_index m[3] = {1, 1, 1};
      for (int k = 0; k < dim; k++) m[k] = t[k].m;
      group_terms(L, dim, m, &G);
      s->nterms = L->n;
      st = make_bands(pb, t, L, &G, red, nfull, s);
      /* the full-size twin: the same bands before the Dirichlet reduction */
      s->full = st == FEA_SUCCESS ? calloc(1, sizeof *s->full) : NULL;
      if (st == FEA_SUCCESS && !s->full)
        st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the Kronecker operator");
      if (st == FEA_SUCCESS) {
        fea_kron_mapped *f = s->full;
        f->dim = dim, f->isa = I, f->threads = threads;
        for (int k = 0; k < 3; k++) f->n[k] = nfull[k], f->p[k] = s->p[k];
        f->num_free = nfull[0] * nfull[1] * nfull[2];
        for (int k = 0; k < dim; k++)
          for (fea_index i = 0; i < nfull[k]; i++) red[k][i] = i;
        st = make_bands(pb, t, L, &G, red, nfull, f);
      }
    }
  }
  for (int w = 0; w < 2 && st == FEA_SUCCESS && !refused; w++) {
    fea_kron_mapped *o = w ? s->full : s;
    const size_t P = (size_t)o->n[0] * (size_t)o->n[1];
    const size_t per = dim == 3   ? (size_t)(o->nc + o->ng) * P
                       : dim == 2 ? (size_t)o->nc * o->n[0]
                                  : 1;
    o->work = malloc((size_t)threads * per * sizeof *o->work);
    if (!o->work)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for %d threads' Kronecker buffers (%zu doubles each)", threads,
                     per);
  }
  for (int k = 0; k < 3; k++) fea_kron_tables_free(&t[k]);
  if (L) terms_free(L);
  free(L);
  free(redbuf);
  free(facbuf);
  if (st != FEA_SUCCESS || refused) {
    fea_kron_mapped_destroy(s);
    return st != FEA_SUCCESS ? st : FEA_ERR_UNSUPPORTED;
  }
  /* flops: two per band entry applied */
  double f = 0.0;
  const double N = (double)s->num_free;
  const double w0 = 2.0 * (2 * s->p[0] + 1);
  if (dim == 1) f = w0 * N;
  if (dim == 2) f = (s->nc * 2.0 * (2 * s->p[1] + 1) + s->ng * w0) * N;
  if (dim == 3)
    f = (s->nc * 2.0 * (2 * s->p[2] + 1) + s->ng * 2.0 * (2 * s->p[1] + 1) + s->ng * w0) * N;
  s->flops = f;
  *out = s;
  return FEA_SUCCESS;
}

void fea_kron_mapped_diagonal(const fea_kron_mapped *s, double *d) {
  const fea_index n0 = s->n[0], n1 = s->n[1], n2 = s->n[2];
  const int last = s->dim - 1;
  memset(d, 0, (size_t)s->num_free * sizeof *d);
  for (int j = 0; j < s->ng; j++) {
    const double *A = s->A[j] + (size_t)s->p[0] * n0;
    const double *B = s->dim == 3 ? s->B[j] + (size_t)s->p[1] * n1 : NULL;
    const double *C = s->dim == 3   ? s->C[s->cof[j]] + (size_t)s->p[2] * n2
                      : s->dim == 2 ? s->C[j] + (size_t)s->p[last] * n1
                                    : NULL;
    for (fea_index i2 = 0; i2 < n2; i2++)
      for (fea_index i1 = 0; i1 < n1; i1++) {
        const double bc = s->dim == 3 ? B[i1] * C[i2] : s->dim == 2 ? C[i1] : 1.0;
        double *row = d + (i2 * n1 + i1) * n0;
        for (fea_index i0 = 0; i0 < n0; i0++) row[i0] += A[i0] * bc;
      }
  }
}

/* ---- entries: dense blocks for the Schwarz smoother -------------------------------------------- */

void fea_kron_mapped_block(const fea_kron_mapped *s, const fea_index *rows, int m, double *M) {
  const fea_index n0 = s->n[0], n1 = s->n[1], n2 = s->n[2];
  for (int a = 0; a < m; a++) {
    const fea_index r = rows[a], r0 = r % n0, r1 = (r / n0) % n1, r2 = r / (n0 * n1);
    for (int b = 0; b < m; b++) {
      const fea_index c = rows[b], c0 = c % n0, c1 = (c / n0) % n1, c2 = c / (n0 * n1);
      double v = 0.0;
      for (int j = 0; j < s->ng; j++) {
        double t = fea_kron_band_at(s->A[j], s->p[0], n0, r0, c0);
        if (t == 0.0) continue;
        if (s->dim == 2) t *= fea_kron_band_at(s->C[j], s->p[1], n1, r1, c1);
        if (s->dim == 3)
          t *= fea_kron_band_at(s->B[j], s->p[1], n1, r1, c1) *
               fea_kron_band_at(s->C[s->cof[j]], s->p[2], n2, r2, c2);
        v += t;
      }
      M[a + (size_t)b * m] = v;
    }
  }
}

/* ---- the operator's implementation ------------------------------------------------------------ */

static fea_status mapped_apply(fea_operator *op, const double *x, double *y, int add) {
  const fea_kron_mapped *s = op->data;
  s->isa->mapped(s, x, y, add, fea_thread_budget(op->ctx));
  return FEA_SUCCESS;
}

static fea_status mapped_diagonal(const fea_operator *op, double *d) {
  fea_kron_mapped_diagonal(op->data, d);
  return FEA_SUCCESS;
}

static void mapped_destroy(void *data) { fea_kron_mapped_destroy(data); }

static fea_status mapped_rhs(fea_operator *op, double *b) {
  return fea_kron_mapped_rhs(op->problem, op->data, fea_thread_budget(op->ctx), b);
}

static fea_status mapped_entries(const fea_operator *op, const fea_index *rows, int m, double *M) {
  fea_kron_mapped_block(op->data, rows, m, M);
  return FEA_SUCCESS;
}

static const fea_operator_impl mapped_impl = {
    .apply = mapped_apply,
    .diagonal = mapped_diagonal,
    .rhs = mapped_rhs,
    .entries = mapped_entries,
    .destroy = mapped_destroy,
};

fea_status fea_operator_kron_mapped_build(fea_operator *op, char *why, size_t len) {
  const int threads = op->ctx->nthreads > 0 ? op->ctx->nthreads : 1;
  fea_kron_mapped *s;
  const fea_status st = fea_kron_mapped_create_with(op->problem, NULL, threads, why, len, &s);
  if (st != FEA_SUCCESS) return st;
  op->impl = &mapped_impl;
  op->data = s;
  op->info.kind_run = FEA_OPERATOR_MATFREE_SUMFACT;
  op->info.strategy_run = FEA_UPDATE_SERIAL; /* each thread writes its own planes */
  snprintf(op->info.kernel, sizeof op->info.kernel,
           "Kronecker terms of 1D bands (mapped patch: %d terms, %d groups, error %.0e, %s)",
           s->nterms, s->ng, s->rank_error, s->isa->name);
  size_t tables = (size_t)s->ng * (size_t)(2 * s->p[0] + 1) * (size_t)s->n[0];
  if (s->dim > 1)
    tables += (size_t)s->nc * (size_t)(2 * s->p[s->dim - 1] + 1) * (size_t)s->n[s->dim - 1];
  if (s->dim > 2) tables += (size_t)s->ng * (size_t)(2 * s->p[1] + 1) * (size_t)s->n[1];
  const size_t P = (size_t)s->n[0] * (size_t)s->n[1];
  const size_t per = s->dim == 3   ? (size_t)(s->nc + s->ng) * P
                     : s->dim == 2 ? (size_t)s->nc * (size_t)s->n[0]
                                   : 1;
  op->info.memory_bytes = (tables + (size_t)threads * per) * sizeof(double);
  op->info.flops_per_apply = s->flops;
  op->info.bytes_per_apply = 2.0 * sizeof(double) * (double)s->num_free;
  return FEA_SUCCESS;
}
