/* The right-hand side of the mapped Kronecker operator (kron.h): the load
 * integrated by sum factorization over the patch's Gauss points and the
 * Dirichlet lifting by the operator's full-size twin.
 *
 * Why its own: the element-wise right-hand side (operator-rhs.c) evaluates
 * the geometry and every basis function at every point of every element,
 * serially; on a mapped 3D p = 3 patch it was most of a multigrid solve's
 * time to solution once the level operators were Kronecker terms. Here the
 * map comes from the same sweep as the operator's coefficients, f(x) det J w
 * is formed once per point, and the load is contracted direction by
 * direction with the 1D tables (p + 1 functions per point and direction):
 * b_i = sum_q w_q f(x_q) det J_q phi_i(x_q) as the reference assembly's
 * tensor rule, summed in another order (equal to rounding). The lifting
 * b -= A g (g the Dirichlet values, zero on free DoFs) is one apply of the
 * same terms over every function. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "disc/geometry-map.h"
#include "internal/error.h"
#include "kron.h"

typedef struct load_args {
  const fea_problem *pb;
  const fea_kron_dir_tables *t; /* three directions, the missing ones trivial */
  int dim;
  fea_index n0, n1; /* functions of directions 0 and 1 (1 beyond dim) */
  double *planes;   /* per q2: the n0 x n1 plane of its points' contributions */
  double *rows;     /* per thread: n0 */
  int threads;
  double bad_x[3]; /* the first x where f is not finite */
  double bad_f;
  int bad;
} load_args;

static int load_row(void *user, int thread, fea_index q1, fea_index q2, const double *x,
                    const double *J) {
  load_args *L = user;
  const fea_problem_desc *d = &L->pb->desc;
  const int dim = L->dim, p0 = L->t[0].p, p1 = L->t[1].p;
  const fea_index m0 = L->t[0].m, n0 = L->n0;
  double *r = L->rows + (size_t)thread * n0;
  memset(r, 0, (size_t)n0 * sizeof *r);
  const double w12 = L->t[1].w[q1] * L->t[2].w[q2];
  for (fea_index q0 = 0; q0 < m0; q0++) {
    const double *Jq = J + (size_t)q0 * dim * dim, *xq = x + (size_t)q0 * dim;
    double det = Jq[0];
    if (dim == 2) det = Jq[0] * Jq[3] - Jq[1] * Jq[2];
    if (dim == 3)
      det = Jq[0] * (Jq[4] * Jq[8] - Jq[5] * Jq[7]) - Jq[1] * (Jq[3] * Jq[8] - Jq[5] * Jq[6]) +
            Jq[2] * (Jq[3] * Jq[7] - Jq[4] * Jq[6]);
    double X[3] = {0, 0, 0};
    for (int c = 0; c < dim; c++) X[c] = xq[c];
    const double f = d->source(X, d->source_user);
    if (!isfinite(f)) {
#pragma omp critical
      if (!L->bad) {
        L->bad = 1;
        L->bad_f = f;
        memcpy(L->bad_x, X, sizeof X);
      }
      return 1;
    }
    const double v = f * det * L->t[0].w[q0] * w12;
    const double *ph = L->t[0].phi + (size_t)q0 * 2 * (p0 + 1);
    const fea_index first = L->t[0].first[q0];
    for (int l = 0; l <= p0; l++) r[first + l] += ph[l] * v;
  }
  double *plane = L->planes + (size_t)q2 * n0 * L->n1;
  const double *ph1 = L->t[1].phi + (size_t)q1 * 2 * (p1 + 1);
  const fea_index first1 = L->t[1].first[q1];
  for (int l = 0; l <= p1; l++) {
    double *out = plane + (size_t)(first1 + l) * n0;
    for (fea_index i = 0; i < n0; i++) out[i] += ph1[l] * r[i];
  }
  return 0;
}

/* A direction the patch does not have: one point of weight 1, one function of value 1. */
static fea_status trivial_tables(fea_kron_dir_tables *t) {
  memset(t, 0, sizeof *t);
  t->m = 1;
  t->w = malloc(sizeof *t->w);
  t->first = calloc(1, sizeof *t->first);
  t->phi = malloc(2 * sizeof *t->phi);
  if (!t->w || !t->first || !t->phi) return FEA_ERR_OUT_OF_MEMORY;
  t->w[0] = t->phi[0] = 1.0;
  t->phi[1] = 0.0;
  return FEA_SUCCESS;
}

/* The full-size load: planes contracted along direction 2. */
static void contract_planes(const load_args *L, const fea_kron_dir_tables *t2, fea_index n2,
                            double *out) {
  const fea_index P = L->n0 * L->n1;
  memset(out, 0, (size_t)P * (size_t)n2 * sizeof *out);
  for (fea_index q2 = 0; q2 < t2->m; q2++) {
    const double *ph = t2->phi + (size_t)q2 * 2 * (t2->p + 1), *src = L->planes + (size_t)q2 * P;
    for (int l = 0; l <= t2->p; l++) {
      double *dst = out + (size_t)(t2->first[q2] + l) * P;
      const double c = ph[l];
#pragma omp parallel for num_threads(L->threads) schedule(static)
      for (fea_index i = 0; i < P; i++) dst[i] += c * src[i];
    }
  }
}

static int has_face_terms(const fea_problem *pb) {
  for (int side = 0; side < 2 * pb->space->dim; side++)
    if (pb->desc.sides[side].type != FEA_BC_DIRICHLET && pb->desc.sides[side].flux) return 1;
  return fea_problem_has_robin(pb);
}

fea_status fea_kron_mapped_rhs(const fea_problem *pb, const fea_kron_mapped *s, int threads,
                               double *b) {
  if (has_face_terms(pb)) return FEA_ERR_UNSUPPORTED;
  const fea_space *sp = pb->space;
  const fea_bspline_space *bs = sp->impl;
  const int dim = sp->dim;
  const fea_kron_mapped *F = s->full;
  if (threads < 1) threads = 1;
  if (threads > s->threads) threads = s->threads;
  fea_index gtotal = 0;
  for (int k = 0; k < dim; k++) gtotal += bs->geo->n[k];
  fea_kron_dir_tables t[3];
  memset(t, 0, sizeof t);
  double *facbuf = malloc((size_t)gtotal * sizeof *facbuf);
  double *fac[3] = {facbuf, facbuf, facbuf};
  for (int k = 1; k < dim && facbuf; k++) fac[k] = fac[k - 1] + bs->geo->n[k - 1];
  const size_t N = (size_t)F->num_free;
  double *full = malloc(N * sizeof *full), *g = malloc(N * sizeof *g);
  fea_status st = facbuf && full && g ? FEA_SUCCESS : FEA_ERR_OUT_OF_MEMORY;
  if (st == FEA_SUCCESS) fea_kron_weight_factors(bs->geo, fac);
  for (int k = 0; k < 3 && st == FEA_SUCCESS; k++)
    st = k < dim ? fea_kron_tables_build(pb, k, fac[k], &t[k]) : trivial_tables(&t[k]);
  load_args L = {.pb = pb, .t = t, .dim = dim, .threads = threads};
  L.n0 = F->n[0], L.n1 = F->n[1];
  if (st == FEA_SUCCESS && pb->desc.source) {
    L.planes = calloc((size_t)t[2].m * (size_t)L.n0 * (size_t)L.n1, sizeof *L.planes);
    L.rows = malloc((size_t)threads * (size_t)L.n0 * sizeof *L.rows);
    if (!L.planes || !L.rows) st = FEA_ERR_OUT_OF_MEMORY;
    const int rc = st == FEA_SUCCESS
                       ? fea_kron_geometry_sweep(bs->geo, t, dim, 1, threads, load_row, &L)
                       : 0;
    if (rc == -2) st = FEA_ERR_OUT_OF_MEMORY;
    if (L.bad)
      st = FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG, "f(x) is %g at x = (%g, %g, %g)", L.bad_f,
                     L.bad_x[0], L.bad_x[1], L.bad_x[2]);
    if (st == FEA_SUCCESS) contract_planes(&L, &t[2], F->n[2], full);
  } else if (st == FEA_SUCCESS) {
    memset(full, 0, N * sizeof *full);
  }
  if (st == FEA_SUCCESS) { /* full -= A g over every function; keep the free rows */
    for (size_t i = 0; i < N; i++) g[i] = pb->free_index[i] < 0 ? pb->dirichlet[i] : 0.0;
    for (size_t i = 0; i < N; i++) g[i] = -g[i];
    F->isa->mapped(F, g, full, 1, threads);
    for (size_t i = 0; i < N; i++)
      if (pb->free_index[i] >= 0) b[pb->free_index[i]] = full[i];
  }
  if (st == FEA_ERR_OUT_OF_MEMORY)
    st = FEA_ERROR(pb->ctx, st, "no memory for the load of %zu functions", N);
  for (int k = 0; k < 3; k++) fea_kron_tables_free(&t[k]);
  free(L.planes);
  free(L.rows);
  free(facbuf);
  free(full);
  free(g);
  return st;
}
