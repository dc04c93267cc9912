/* Sum factorization at quadrature points (qp.h): which problems it serves,
 * and what create builds: the 1D tables, the geometry as coefficients in
 * the space's basis, and (STORED) Q at every point of every element. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "disc/geometry-map.h"
#include "disc/lagrange.h"
#include "base/memory-limit.h"
#include "disc/mesh.h"
#include "disc/pattern.h"
#include "qp.h"
#include "disc/space.h"
#include "sumfact.h"

#define QPM_T double
#define QPM_FN(f) f##_scalar
#define QPM_ATTR static inline
#include "qp-metric.h"
#undef QPM_T
#undef QPM_FN
#undef QPM_ATTR

#define REFUSE(...) (snprintf(why, len, __VA_ARGS__), 0)

static const fea_sf_qp_isa *const isas[] = {&fea_sf_qp_isa_avx512, &fea_sf_qp_isa_avx2,
                                            &fea_sf_qp_isa_baseline};

static int is_rational(const fea_space *s) {
  if (s->kind != FEA_SPACE_BSPLINE) return 0;
  const fea_bspline_space *b = s->impl;
  return b->geo && b->geo->weights;
}

int fea_sf_qp_supports(const fea_problem *pb, int recompute, char *why, size_t len) {
  const fea_space *s = pb->space;
  const fea_problem_desc *d = &pb->desc;
  int nq[3];
  if (d->element_form)
    return REFUSE(
        "the problem has the user's element form; sum factorization serves the built-in "
        "form only");
  if (s->dim < 1 || s->dim > 3) return REFUSE("dimension %d is outside 1..3", s->dim);
  for (int k = 0; k < s->dim; k++)
    if (s->degree[k] + 1 > QP_MAX_N)
      return REFUSE("degree %d in direction %d is above %d", s->degree[k], k, QP_MAX_N - 1);
  if (s->kind == FEA_SPACE_LAGRANGE) {
    const fea_lagrange_element *el = fea_space_lagrange_element(s);
    if (s->mesh->dim != s->dim)
      return REFUSE("the %dD cells lie in %dD space: J is not square", s->dim, s->mesh->dim);
    if (!el->tensor)
      return REFUSE(
          "the space's elements are %ss: P_p on simplices has no tensor-product basis to "
          "factor",
          fea_cell_name(s->cell));
  } else if (s->kind != FEA_SPACE_BSPLINE) {
    return REFUSE("unknown kind of space %d", (int)s->kind);
  }
  if (recompute && (d->sigma_fn || d->sigma_tensor || d->reaction_fn))
    return REFUSE(
        "the coefficients vary in space; RECOMPUTED geometry terms serve constant sigma and "
        "c only (STORED evaluates the callbacks once)");
  return fea_sf_rule_sizes(pb, nq, why, len);
}

static void fea_sf_qp_destroy(void *state) {
  fea_sf_qp_state *s = state;
  if (!s) return;
  for (int k = 0; k < 3; k++) free(s->tab[k]);
  free(s->edofs_own);
  free(s->Q);
  free(s->geo);
  free(s->robin_of);
  free(s->R);
  free(s);
}

/* Direction k's tables: B and D (dN/dr on [0, 1]) at the Gauss points, one
 * for every element (Lagrange) or per element index (B-splines: the spans
 * differ in length and, near the ends, in their functions). */
static fea_status build_tables(const fea_space *sp, fea_sf_qp_state *s,
                               const double g[3][QP_MAX_Q]) {
  for (int k = 0; k < s->dim; k++) {
    const int n = s->n[k], nq = s->nq[k], sz = n * nq;
    const fea_knots *kn = NULL;
    if (sp->kind == FEA_SPACE_BSPLINE) {
      kn = &((const fea_bspline_space *)sp->impl)->knots[k];
      s->nel[k] = kn->nelem;
    } else {
      s->nel[k] = 1;
    }
    s->tab[k] = malloc((size_t)s->nel[k] * 2 * sz * sizeof(double));
    FEA_CHECK(s->tab[k], sp->ctx, FEA_ERR_OUT_OF_MEMORY,
              "no memory for the 1D tables of %lld elements", (long long)s->nel[k]);
    for (fea_index e = 0; e < s->nel[k]; e++) {
      double *B = s->tab[k] + (size_t)e * 2 * sz, *D = B + sz;
      for (int q = 0; q < nq; q++) {
        if (kn) {
          double ders[2 * QP_MAX_N];
          const fea_index span = kn->span[e];
          const double t0 = kn->t[span], h = kn->t[span + 1] - t0;
          fea_bspline_basis_ders(kn, span, t0 + g[k][q] * h, 1, ders);
          for (int i = 0; i < n; i++) B[q * n + i] = ders[i], D[q * n + i] = ders[n + i] * h;
        } else {
          const fea_lagrange_element *el = fea_space_lagrange_element(sp);
          fea_lagrange_basis_1d(el->order, el->x1d, g[k][q], B + q * n, D + q * n);
        }
      }
    }
  }
  return FEA_SUCCESS;
}

typedef struct coord_arg {
  int a;
} coord_arg;
static double coordinate(const double *x, void *user) { return x[((coord_arg *)user)->a]; }
static double unit(const double *x, void *user) {
  (void)x, (void)user;
  return 1.0;
}

/* geo = the coordinates in the space's basis, DoF by DoF: a Lagrange
 * space's node coordinates; a B-spline space's interpolants of x_a, which
 * over a NURBS map are the coefficients of x_a W, and of 1 (those of W). */
static fea_status build_geometry(const fea_space *sp, fea_sf_qp_state *s) {
  const fea_index N = s->ndofs;
  s->geo = malloc((size_t)N * s->ngc * sizeof *s->geo);
  FEA_CHECK(s->geo, sp->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the geometry of %lld DoFs (%d coordinates each)", (long long)N, s->ngc);
  if (sp->kind == FEA_SPACE_LAGRANGE) {
    const double *xc = fea_space_lagrange_dof_coords(sp);
    for (fea_index i = 0; i < N; i++)
      for (int a = 0; a < s->dim; a++) s->geo[i * s->ngc + a] = xc[i * sp->mesh->dim + a];
    return FEA_SUCCESS;
  }
  double *c = malloc((size_t)N * sizeof *c);
  FEA_CHECK(c, sp->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to interpolate %lld coordinates",
            (long long)N);
  fea_status st = FEA_SUCCESS;
  for (int a = 0; a < s->ngc && st == FEA_SUCCESS; a++) {
    coord_arg arg = {a};
    st = sp->ops->interpolate(sp, a < s->dim ? coordinate : unit, &arg, c);
    for (fea_index i = 0; i < N && st == FEA_SUCCESS; i++) s->geo[i * s->ngc + a] = c[i];
  }
  free(c);
  return st;
}

/* Every point's geometry checked (J invertible with positive orientation)
 * and, for STORED, Q formed with the coefficients there. */
static fea_status build_points(const fea_problem *pb, fea_sf_qp_state *s) {
  const fea_space *sp = pb->space;
  const int W = s->isa->lanes, dim = s->dim, np = s->npack;
  const fea_index nqt = s->nqt;
  double *g = malloc((size_t)W * nqt * QP_GEO_PER_POINT * sizeof *g);
  double *scratch = malloc((size_t)fea_sf_qp_scratch_doubles(s, W) * sizeof *scratch);
  fea_status st = g && scratch ? FEA_SUCCESS
                               : FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                                           "no memory for the geometry of %d elements", W);
  fea_index elems[16]; /* lanes <= 16 */
  for (fea_index e0 = 0; e0 < s->ne && st == FEA_SUCCESS; e0 += W) {
    const int m = s->ne - e0 < W ? (int)(s->ne - e0) : W;
    for (int l = 0; l < m; l++) elems[l] = e0 + l;
    s->isa->geometry(s, elems, m, g, scratch);
    for (int l = 0; l < m && st == FEA_SUCCESS; l++)
      for (fea_index q = 0; q < nqt && st == FEA_SUCCESS; q++) {
        const double *o = g + ((size_t)l * nqt + q) * QP_GEO_PER_POINT;
        double A[9], c = 0.0, det, wq = 1.0, Q[QP_MAX_PACK];
        fea_index r = q;
        for (int k = 0; k < dim; k++) {
          wq *= s->w1[k][r % s->nq[k]];
          r /= s->nq[k];
        }
        if (s->Q) {
          st = fea_form_coefficients_at(pb, o, A, &c);
          if (st != FEA_SUCCESS) break;
        } else {
          for (int i = 0; i < dim * dim; i++) A[i] = i % (dim + 1) == 0 ? s->sigma : 0.0;
          c = s->reaction;
        }
        fea_sf_qp_metric_scalar(dim, s->value, o + 3, o + 12, o + 13, A, &c, &wq, Q, &det);
        if (!(det > 0) || !isfinite(det)) {
          st = FEA_ERROR(sp->ctx, FEA_ERR_INVALID_ARG,
                         "the geometry is not invertible with positive orientation in element "
                         "%lld at x = (%g, %g, %g): det J = %g",
                         (long long)(e0 + l), o[0], dim > 1 ? o[1] : 0.0, dim > 2 ? o[2] : 0.0,
                         det);
          break;
        }
        if (s->Q) { /* lane-interleaved by batches (qp.h) */
          const fea_index e = e0 + l;
          double *Qe = s->Q + ((size_t)(e / W) * nqt * np + (size_t)q * np) * W + e % W;
          for (int p = 0; p < np; p++) Qe[(size_t)p * W] = Q[p];
        }
      }
  }
  free(g);
  free(scratch);
  return st;
}

/* The face matrices of the elements with a face on a Robin side. B-spline
 * elements inside the patch are skipped by their indices; a Lagrange
 * element without such a facet answers zero at once. */
static fea_status build_robin(const fea_problem *pb, fea_sf_qp_state *s) {
  const int nb = s->nb;
  const size_t nb2 = (size_t)nb * nb;
  s->robin_of = malloc((size_t)s->ne * sizeof *s->robin_of + 1);
  double *K = malloc(nb2 * sizeof *K);
  fea_status st = s->robin_of && K ? FEA_SUCCESS
                                   : FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                                               "no memory for the Robin faces of %lld elements",
                                               (long long)s->ne);
  fea_index cap = 0;
  for (fea_index e = 0; e < s->ne && st == FEA_SUCCESS; e++) {
    s->robin_of[e] = -1;
    if (pb->space->kind == FEA_SPACE_BSPLINE) {
      fea_index idx[3], r = e;
      int edge = 0;
      for (int k = 0; k < s->dim; k++) {
        const fea_index nk = s->nel[k];
        idx[k] = r % nk, r /= nk;
        edge |= idx[k] == 0 || idx[k] == nk - 1;
      }
      if (!edge) continue;
    }
    st = fea_form_face_matrix(pb, e, nb, K);
    int zero = 1;
    for (size_t i = 0; i < nb2 && zero; i++) zero = K[i] == 0.0;
    if (st != FEA_SUCCESS || zero) continue;
    FEA_CHECK(s->nrobin < INT32_MAX, pb->ctx, FEA_ERR_OUT_OF_MEMORY,
              "more than %d elements with a Robin face", INT32_MAX);
    if (s->nrobin == cap) {
      cap = cap ? 2 * cap : 64;
      double *R = realloc(s->R, (size_t)cap * nb2 * sizeof *R);
      if (!R) {
        st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                       "no memory for %lld Robin face matrices of %d x %d", (long long)cap, nb, nb);
        break;
      }
      s->R = R;
    }
    memcpy(s->R + (size_t)s->nrobin * nb2, K, nb2 * sizeof *K);
    s->robin_of[e] = (int32_t)s->nrobin++;
  }
  free(K);
  return st;
}

fea_index fea_sf_qp_scratch_doubles(const fea_sf_qp_state *s, int W) {
  fea_index T = 1, tabs = 0;
  for (int k = 0; k < s->dim; k++) {
    T *= s->n[k] > s->nq[k] ? s->n[k] : s->nq[k];
    tabs += 3 * s->nq[k] * s->n[k];
  }
  const fea_index vectors = 2 * s->nb + tabs + (fea_index)(s->nc + s->npack) * s->nqt + 5 * T +
                            (fea_index)s->ngc * (1 + s->dim) * s->nqt;
  return vectors * W + QP_ALIGN / (fea_index)sizeof(double);
}

/* Flops of one element application, counted pass by pass as the kernels run. */
static double count_flops(const fea_sf_qp_state *s) {
  double pass[3];
  for (int k = 0; k < s->dim; k++) {
    double outer = 1, inner = 1;
    for (int j = 0; j < k; j++) inner *= s->nq[j];
    for (int j = k + 1; j < s->dim; j++) outer *= s->n[j];
    pass[k] = 2.0 * outer * inner * s->nq[k] * s->n[k];
  }
  /* interpolate: 1D 1 + v, 2D 2 and 2 + v, 3D 2, 3 and 3 + v passes; integrate the same */
  const int v = s->value;
  double interp_v = 0, interp_geo = 0;
  if (s->dim == 1) interp_v = (1 + v) * pass[0], interp_geo = 2 * pass[0];
  if (s->dim == 2)
    interp_v = 2 * pass[0] + (2 + v) * pass[1], interp_geo = 2 * pass[0] + 3 * pass[1];
  if (s->dim == 3)
    interp_v = 2 * pass[0] + 3 * pass[1] + (3 + v) * pass[2],
    interp_geo = 2 * pass[0] + 3 * pass[1] + 4 * pass[2];
  double f = 2 * interp_v + (double)s->nqt * 2.0 * s->nc * s->nc;
  if (s->recompute) /* the geometry's channels, J^-1 and Q (about 60 flops in 2D, 150 in 3D) */
    f += s->ngc * interp_geo + (double)s->nqt * (s->dim == 3 ? 150 : 60);
  return f;
}

static fea_status fea_sf_qp_create(const fea_problem *pb, const fea_index *edofs, int recompute,
                                   void **state) {
  const fea_space *sp = pb->space;
  char why[160];
  FEA_CHECK(fea_sf_qp_supports(pb, recompute, why, sizeof why), pb->ctx, FEA_ERR_UNSUPPORTED,
            "sum factorization at quadrature points: %s", why);
  fea_sf_qp_state *s = calloc(1, sizeof *s);
  FEA_CHECK(s, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the sum-factorization kernel");
  const int dim = sp->dim;
  s->dim = dim;
  s->nb = sp->dofs_per_element;
  s->ne = sp->num_elements;
  s->ndofs = sp->num_dofs;
  s->recompute = recompute;
  s->rational = is_rational(sp);
  s->value = s->rational || fea_problem_has_reaction(pb);
  s->nc = dim + s->value;
  s->npack = s->nc * (s->nc + 1) / 2;
  s->ngc = dim + s->rational;
  s->sigma = pb->desc.sigma;
  s->reaction = pb->desc.reaction;
  for (size_t i = 0; i < sizeof isas / sizeof *isas && !s->isa; i++)
    if (isas[i]->available()) s->isa = isas[i];
  int nq[3];
  char unused[8];
  fea_sf_rule_sizes(pb, nq, unused, sizeof unused);
  double g[3][QP_MAX_Q];
  s->nqt = 1;
  for (int k = 0; k < 3; k++) {
    s->n[k] = k < dim ? sp->degree[k] + 1 : 1;
    s->nq[k] = k < dim ? nq[k] : 1;
    s->nel[k] = 1;
    if (k < dim) {
      s->nqt *= s->nq[k];
      fea_gauss_legendre(s->nq[k], g[k], s->w1[k]);
    }
  }
  /* What it keeps, refused before it is allocated. */
  const double keep = recompute ? (double)s->ndofs * s->ngc
                                : (double)s->ne * (double)s->nqt * (double)s->npack;
  char what[128];
  snprintf(what, sizeof what, "the geometry terms of %lld elements (%s)", (long long)s->ne,
           recompute ? "recomputed: coordinates per DoF" : "stored per quadrature point");
  fea_status st = fea_memory_require(
      pb->ctx, 0,
      fea_bytes(keep + (double)s->ndofs * s->ngc, sizeof(double)) +
          (edofs ? 0.0 : fea_bytes((double)s->ne * s->nb, sizeof(fea_index))),
      what);
  if (st == FEA_SUCCESS) st = build_tables(sp, s, g);
  s->edofs = edofs;
  if (st == FEA_SUCCESS && !edofs) {
    st = fea_element_dof_table(sp, &s->edofs_own);
    s->edofs = s->edofs_own;
  }
  if (st == FEA_SUCCESS) st = build_geometry(sp, s);
  if (st == FEA_SUCCESS && !recompute) {
    const size_t W = (size_t)s->isa->lanes, nround = ((size_t)s->ne + W - 1) / W * W;
    s->Q = aligned_alloc(QP_ALIGN, (nround * s->nqt * s->npack * sizeof *s->Q + QP_ALIGN - 1) /
                                       QP_ALIGN * QP_ALIGN);
    if (s->Q) /* the padding lanes of the last batch: zero, never read as results */
      memset(s->Q, 0, nround * s->nqt * s->npack * sizeof *s->Q);
    if (!s->Q)
      st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld x %d point matrices",
                     (long long)s->ne, s->nqt);
  }
  if (st == FEA_SUCCESS) st = build_points(pb, s);
  if (st == FEA_SUCCESS && fea_problem_has_robin(pb)) st = build_robin(pb, s);
  if (st != FEA_SUCCESS) {
    fea_sf_qp_destroy(s);
    return st;
  }
  if (!recompute) { /* the geometry served Q and goes */
    free(s->geo);
    s->geo = NULL;
  }
  s->scratch = fea_sf_qp_scratch_doubles(s, s->isa->lanes);
  /* A fixed-size apply where every direction has N functions and N points. */
  s->apply = s->isa->apply;
  const int N = s->n[0];
  int iso = N == s->nq[0];
  for (int k = 1; k < dim; k++) iso &= s->n[k] == N && s->nq[k] == N;
  if (iso && s->isa->fixed[dim - 1][N]) s->apply = s->isa->fixed[dim - 1][N], s->fixed = 1;
  s->flops = count_flops(s);
  s->bytes = (recompute ? (uint64_t)s->ndofs * s->ngc * sizeof(double)
                        : (uint64_t)s->ne * s->nqt * s->npack * sizeof(double)) +
             (s->edofs_own ? (uint64_t)s->ne * s->nb * sizeof(fea_index) : 0);
  for (int k = 0; k < dim; k++)
    s->bytes += (uint64_t)s->nel[k] * 2 * s->n[k] * s->nq[k] * sizeof(double);
  if (s->robin_of)
    s->bytes += (uint64_t)s->ne * sizeof(int32_t) +
                (uint64_t)s->nrobin * s->nb * s->nb * sizeof(double);
  /* What the geometry terms alone keep per DoF: the figure that tells the
   * two ways apart (the DoF table and the vectors are the operator's). */
  const double terms = recompute ? (double)s->ngc * sizeof(double)
                                 : (double)s->ne * s->nqt * s->npack * sizeof(double) /
                                       (double)(s->ndofs > 0 ? s->ndofs : 1);
  snprintf(s->desc, sizeof s->desc, "sum-factorization at points p=%d %s%s %s x%d%s, %.0f B/DoF",
           sp->degree[0], recompute ? "recomputed" : "stored", s->rational ? " nurbs" : "",
           s->isa->name, s->isa->lanes, s->fixed ? "" : " generic", terms);
  *state = s;
  return FEA_SUCCESS;
}

static fea_status create_stored(const fea_problem *pb, const fea_index *edofs, void **state) {
  return fea_sf_qp_create(pb, edofs, 0, state);
}

static fea_status create_recomputed(const fea_problem *pb, const fea_index *edofs, void **state) {
  return fea_sf_qp_create(pb, edofs, 1, state);
}

/* The operator's choice: scalar problems only (systems have their own
 * kernel, elastic.h, which calls fea_sf_qp_supports for the geometry). */
static int supports_scalar(const fea_problem *pb, int recompute, char *why, size_t len) {
  if (pb->space->ncomp > 1)
    return REFUSE("the space has %d components; the scalar kernel at points serves one",
                  pb->space->ncomp);
  return fea_sf_qp_supports(pb, recompute, why, len);
}

static int supports_stored(const fea_problem *pb, char *why, size_t len) {
  return supports_scalar(pb, 0, why, len);
}

static int supports_recomputed(const fea_problem *pb, char *why, size_t len) {
  return supports_scalar(pb, 1, why, len);
}

static int fea_sf_qp_batch(const void *state) {
  return ((const fea_sf_qp_state *)state)->isa->lanes;
}

static fea_index fea_sf_qp_scratch(const void *state) {
  return ((const fea_sf_qp_state *)state)->scratch;
}

static void fea_sf_qp_apply(const void *state, const fea_index *elems, int count,
                            const double *x_full, double *y, double *scratch) {
  const fea_sf_qp_state *s = state;
  const int W = s->isa->lanes;
  for (int start = 0; start < count; start += W) {
    const int m = count - start < W ? count - start : W;
    s->apply(s, elems + start, m, x_full, y + (size_t)start * s->nb, scratch);
  }
}

static void fea_sf_qp_diagonal(const void *state, const fea_index *elems, int count, double *d,
                               double *scratch) {
  const fea_sf_qp_state *s = state;
  const int W = s->isa->lanes;
  for (int start = 0; start < count; start += W) {
    const int m = count - start < W ? count - start : W;
    s->isa->diagonal(s, elems + start, m, d + (size_t)start * s->nb, scratch);
  }
}

static void fea_sf_qp_cost(const void *state, double *flops, double *bytes) {
  const fea_sf_qp_state *s = state;
  *flops = s->flops;
  /* Per element: its DoF indices, x_e and y_e, and the geometry it reads:
   * its stored points, or its share of the coordinates. */
  *bytes = s->nb * (sizeof(fea_index) + 2 * sizeof(double)) +
           (s->recompute ? (double)s->ndofs * s->ngc * sizeof(double) / (double)s->ne
                         : (double)s->nqt * s->npack * sizeof(double));
}

static uint64_t fea_sf_qp_memory(const void *state) {
  return ((const fea_sf_qp_state *)state)->bytes;
}

static const char *fea_sf_qp_describe(const void *state) {
  return ((const fea_sf_qp_state *)state)->desc;
}

const fea_matfree_kernel_ops fea_matfree_kernel_sumfact_qp_stored = {
    .name = "sum-factorization at points (stored)",
    .supports = supports_stored,
    .create = create_stored,
    .destroy = fea_sf_qp_destroy,
    .batch = fea_sf_qp_batch,
    .apply = fea_sf_qp_apply,
    .diagonal = fea_sf_qp_diagonal,
    .scratch_doubles = fea_sf_qp_scratch,
    .cost = fea_sf_qp_cost,
    .memory = fea_sf_qp_memory,
    .describe = fea_sf_qp_describe,
};

const fea_matfree_kernel_ops fea_matfree_kernel_sumfact_qp_recomputed = {
    .name = "sum-factorization at points (recomputed)",
    .supports = supports_recomputed,
    .create = create_recomputed,
    .destroy = fea_sf_qp_destroy,
    .batch = fea_sf_qp_batch,
    .apply = fea_sf_qp_apply,
    .diagonal = fea_sf_qp_diagonal,
    .scratch_doubles = fea_sf_qp_scratch,
    .cost = fea_sf_qp_cost,
    .memory = fea_sf_qp_memory,
    .describe = fea_sf_qp_describe,
};
