/* Sum factorization for linear elasticity (elastic.h): which problems each
 * way serves, and what create builds: the 1D tables at the Gauss points,
 * BOX's element lengths, STORED's point terms; the two ops tables. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "disc/bspline.h"
#include "disc/geometry-map.h"
#include "disc/lagrange.h"
#include "base/memory-limit.h"
#include "disc/space.h"
#include "elastic.h"
#include "sumfact.h"

#define REFUSE(...) (snprintf(why, len, __VA_ARGS__), 0)

static const fea_sf_el_isa *const isas[] = {&fea_sf_el_isa_avx512, &fea_sf_el_isa_avx2,
                                            &fea_sf_el_isa_baseline};

static int is_rational(const fea_space *s) {
  if (s->kind != FEA_SPACE_BSPLINE) return 0;
  const fea_bspline_space *b = s->impl;
  return b->geo && b->geo->weights;
}

/* What both ways need: an elasticity problem on tensor-product elements of
 * degree at most QP_MAX_N - 1 under the tensor Gauss rule. */
static int common_supports(const fea_problem *pb, char *why, size_t len) {
  const fea_space *s = pb->space;
  if (!pb->elastic)
    return REFUSE(
        "the problem is not linear elasticity; on %d components sum factorization serves "
        "fea_problem_create_elasticity()'s form only",
        s->ncomp);
  if (pb->elastic->C_fn)
    return REFUSE(
        "the material is a tensor C(x); sum factorization serves isotropic materials (E and "
        "nu, or lambda and mu)");
  if (fea_problem_has_robin(pb))
    return REFUSE("the problem has spring sides; sum factorization has no face terms");
  if (s->dim < 2 || s->dim > 3) return REFUSE("dimension %d is outside 2..3", s->dim);
  for (int k = 0; k < s->dim; k++)
    if (s->degree[k] + 1 > QP_MAX_N)
      return REFUSE("degree %d in direction %d is above %d", s->degree[k], k, QP_MAX_N - 1);
  return 1;
}

static int box_supports(const fea_problem *pb, char *why, size_t len) {
  if (!common_supports(pb, why, len)) return 0;
  if (pb->elastic->E_fn || pb->elastic->nu_fn)
    return REFUSE("E or nu is a function of x; the box way serves a constant material");
  return fea_sf_box_supports(pb, why, len);
}

static int stored_supports(const fea_problem *pb, char *why, size_t len) {
  if (!common_supports(pb, why, len)) return 0;
  /* The geometry comes from the scalar kernel at points: its checks apply. */
  return fea_sf_qp_supports(pb, 1, why, len);
}

static void el_destroy(void *state) {
  fea_sf_el_state *s = state;
  if (!s) return;
  for (int k = 0; k < 3; k++) {
    free(s->tab[k]);
    free(s->len[k]);
  }
  free(s->edofs_own);
  free(s->base32);
  free(s->P);
  free(s);
}

/* Direction k's tables: B and D (dN/dr on [0, 1]) at the Gauss points g,
 * one for every element (Lagrange) or per element index (B-splines), as
 * qp-setup.c builds them. */
static fea_status build_tables(const fea_space *sp, fea_sf_el_state *s,
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

/* BOX: the element lengths per direction, from the scalar kernel's tables
 * (one length for a structured mesh, one per span of a B-spline space). */
static fea_status build_lengths(const fea_problem *pb, fea_sf_el_state *s) {
  fea_sf_state t;
  memset(&t, 0, sizeof t);
  FEA_CALL(fea_sf_build_tables(pb, &t));
  fea_status st = FEA_SUCCESS;
  for (int k = 0; k < s->dim && st == FEA_SUCCESS; k++) {
    if (t.nel[k] != s->nel[k])
      st = FEA_ERROR(pb->ctx, FEA_ERR_STATE, "%lld element lengths in direction %d, not %lld",
                     (long long)t.nel[k], k, (long long)s->nel[k]);
    s->len[k] = malloc((size_t)t.nel[k] * sizeof(double));
    if (st == FEA_SUCCESS && !s->len[k])
      st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld element lengths",
                     (long long)t.nel[k]);
    if (st == FEA_SUCCESS) memcpy(s->len[k], t.len[k], (size_t)t.nel[k] * sizeof(double));
  }
  free(t.w); /* the one allocation of the scalar tables (sumfact-tables.c) */
  return st;
}

/* STORED: every point's wl, wm, K (and k over NURBS) from the geometry the
 * scalar kernel at points interpolates (its RECOMPUTED state, made for the
 * purpose and dropped: its create also checks J at every point) and the
 * material there. */
static fea_status build_points(const fea_problem *pb, fea_sf_el_state *s) {
  void *gstate = NULL;
  FEA_CALL(fea_matfree_kernel_sumfact_qp_recomputed.create(pb, NULL, &gstate));
  const fea_sf_qp_state *gs = gstate;
  const int GW = gs->isa->lanes, W = s->isa->lanes, dim = s->dim, npp = s->npp;
  const fea_index nqt = s->nqt;
  double *g = malloc((size_t)GW * nqt * QP_GEO_PER_POINT * sizeof *g);
  double *scratch = malloc((size_t)fea_sf_qp_scratch_doubles(gs, GW) * sizeof *scratch);
  fea_status st = g && scratch ? FEA_SUCCESS
                               : FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                                           "no memory for the geometry of %d elements", GW);
  fea_index elems[16];
  for (fea_index e0 = 0; e0 < s->ne && st == FEA_SUCCESS; e0 += GW) {
    const int m = s->ne - e0 < GW ? (int)(s->ne - e0) : GW;
    for (int l = 0; l < m; l++) elems[l] = e0 + l;
    gs->isa->geometry(gs, elems, m, g, scratch);
    for (int l = 0; l < m && st == FEA_SUCCESS; l++)
      for (fea_index q = 0; q < nqt && st == FEA_SUCCESS; q++) {
        const double *o = g + ((size_t)l * nqt + q) * QP_GEO_PER_POINT;
        const double *J = o + 3, Wt = o[12], *dW = o + 13;
        double Ji[9], det;
        if (dim == 2) {
          det = J[0] * J[3] - J[1] * J[2];
          Ji[0] = J[3] / det, Ji[1] = -J[1] / det, Ji[2] = -J[2] / det, Ji[3] = J[0] / det;
        } else {
          const double c0 = J[4] * J[8] - J[5] * J[7], c1 = J[5] * J[6] - J[3] * J[8],
                       c2 = J[3] * J[7] - J[4] * J[6];
          det = J[0] * c0 + J[1] * c1 + J[2] * c2;
          Ji[0] = c0 / det, Ji[1] = (J[2] * J[7] - J[1] * J[8]) / det;
          Ji[2] = (J[1] * J[5] - J[2] * J[4]) / det, Ji[3] = c1 / det;
          Ji[4] = (J[0] * J[8] - J[2] * J[6]) / det, Ji[5] = (J[2] * J[3] - J[0] * J[5]) / det;
          Ji[6] = c2 / det, Ji[7] = (J[1] * J[6] - J[0] * J[7]) / det;
          Ji[8] = (J[0] * J[4] - J[1] * J[3]) / det;
        }
        double lambda, mu, wq = 1.0;
        st = fea_form_elastic_lame(pb, o, &lambda, &mu);
        if (st != FEA_SUCCESS) break;
        fea_index r = q;
        for (int k = 0; k < dim; k++) {
          wq *= s->w1[k][r % s->nq[k]];
          r /= s->nq[k];
        }
        double v[EL_MAX_PP];
        const double wd = wq * fabs(det), rw = s->rational ? 1.0 / Wt : 1.0;
        v[0] = wd * lambda, v[1] = wd * mu;
        /* K = J^-T / W: K[k][j] = Ji[j][k] / W; k = -K dW / W. */
        for (int k = 0; k < dim; k++)
          for (int j = 0; j < dim; j++) v[2 + k * dim + j] = Ji[j * dim + k] * rw;
        if (s->rational)
          for (int k = 0; k < dim; k++) {
            double a = 0.0;
            for (int j = 0; j < dim; j++) a += v[2 + k * dim + j] * dW[j];
            v[2 + dim * dim + k] = -a * rw;
          }
        const fea_index e = e0 + l;
        double *Pe = s->P + ((size_t)(e / W) * nqt * npp + (size_t)q * npp) * W + e % W;
        for (int p = 0; p < npp; p++) Pe[(size_t)p * W] = v[p];
      }
  }
  free(g);
  free(scratch);
  fea_matfree_kernel_sumfact_qp_recomputed.destroy(gstate);
  return st;
}

fea_index fea_sf_el_scratch_doubles(const fea_sf_el_state *s, int W) {
  fea_index T = 1, tabs = 0;
  for (int k = 0; k < s->dim; k++) {
    T *= s->n[k] > s->nq[k] ? s->n[k] : s->nq[k];
    tabs += 3 * s->nq[k] * s->n[k] + s->nq[k] * s->nq[k];
  }
  const fea_index vectors = 2 * (fea_index)s->nbv + tabs +
                            ((fea_index)s->nc * s->nch + s->npp) * s->nqt + 5 * T;
  return vectors * W + QP_ALIGN / (fea_index)sizeof(double);
}

/* Flops of one element application, pass by pass as the kernels run, and
 * the point stage (BOX: about 4 d^2 + 2 d; STORED: 4 d^3-ish for the two
 * maps through K plus the stress). */
static double count_flops(const fea_sf_el_state *s) {
  double pass[3];
  for (int k = 0; k < s->dim; k++) {
    double outer = 1, inner = 1;
    for (int j = 0; j < k; j++) inner *= s->nq[j];
    for (int j = k + 1; j < s->dim; j++) outer *= s->n[j];
    pass[k] = 2.0 * outer * inner * s->nq[k] * s->n[k];
  }
  const int v = s->rational, d = s->dim;
  double interp = d == 2 ? 2 * pass[0] + (2 + v) * pass[1]
                         : 2 * pass[0] + 3 * pass[1] + (3 + v) * pass[2];
  if (s->colloc) { /* d passes of B, then d of C over the points (n = n_q) */
    interp = 0.0;
    for (int k = 0; k < d; k++) interp += pass[k] + 2.0 * s->nqt * s->nq[k];
  }
  const double point = s->box ? 4.0 * d * d + 2.0 * d
                              : 4.0 * d * d * (d + v) + 3.0 * d * d + 2.0 * d;
  return 2.0 * s->nc * interp + (double)s->nqt * point;
}

static fea_status el_create(const fea_problem *pb, const fea_index *edofs, int box, void **state) {
  const fea_space *sp = pb->space;
  char why[192];
  FEA_CHECK(box ? box_supports(pb, why, sizeof why) : stored_supports(pb, why, sizeof why), pb->ctx,
            FEA_ERR_UNSUPPORTED, "elasticity by sum factorization: %s", why);
  fea_sf_el_state *s = calloc(1, sizeof *s);
  FEA_CHECK(s, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the elasticity kernel");
  const int dim = sp->dim;
  s->dim = dim;
  s->nc = sp->ncomp;
  s->ns = sp->dofs_per_element;
  s->nbv = fea_space_element_size(sp);
  s->ne = sp->num_elements;
  s->box = box;
  s->rational = !box && is_rational(sp);
  s->nch = dim + s->rational;
  s->npp = box ? 0 : 2 + dim * dim + (s->rational ? dim : 0);
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
  const size_t W = (size_t)s->isa->lanes, nround = ((size_t)s->ne + W - 1) / W * W;
  /* What it keeps, refused before it is allocated. */
  char what[128];
  snprintf(what, sizeof what, "the elasticity point terms of %lld elements (%s)", (long long)s->ne,
           box ? "box: none" : "stored per quadrature point");
  fea_status st = fea_memory_require(
      pb->ctx, 0,
      fea_bytes((double)nround * s->nqt * s->npp, sizeof(double)) +
          fea_bytes((double)s->ne * s->ns, sizeof(int32_t)) +
          (edofs ? 0.0 : fea_bytes((double)s->ne * s->nbv, sizeof(fea_index))),
      what);
  if (st == FEA_SUCCESS) st = build_tables(sp, s, g);
  s->edofs = edofs;
  if (st == FEA_SUCCESS && !edofs) {
    s->edofs_own = malloc(((size_t)s->ne * s->nbv + 1) * sizeof *s->edofs_own);
    if (!s->edofs_own)
      st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the vector DoFs of %lld elements", (long long)s->ne);
    for (fea_index e = 0; e < s->ne && st == FEA_SUCCESS; e++)
      fea_space_element_vdofs(sp, e, s->edofs_own + e * s->nbv);
    s->edofs = s->edofs_own;
  }
  if (st == FEA_SUCCESS && fea_space_total_dofs(sp) <= INT32_MAX) {
    s->base32 = malloc(((size_t)s->ne * s->ns + 1) * sizeof *s->base32);
    for (fea_index e = 0; e < s->ne && s->base32; e++)
      for (int i = 0; i < s->ns; i++)
        s->base32[e * s->ns + i] = (int32_t)s->edofs[e * s->nbv + s->nc * i];
    /* Without the memory the gather reads the full table: slower, not wrong. */
  }
  if (st == FEA_SUCCESS && box) {
    st = build_lengths(pb, s);
    if (st == FEA_SUCCESS) {
      double x0[3] = {0, 0, 0};
      /* A constant material (box_supports): its value anywhere. */
      st = fea_form_elastic_lame(pb, x0, &s->lambda, &s->mu);
    }
  } else if (st == FEA_SUCCESS) {
    const size_t bytes = nround * s->nqt * s->npp * sizeof *s->P;
    s->P = aligned_alloc(QP_ALIGN, (bytes + QP_ALIGN - 1) / QP_ALIGN * QP_ALIGN);
    if (s->P) /* the padding lanes of the last batch: zero, never read as results */
      memset(s->P, 0, bytes);
    else
      st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld x %d point terms",
                     (long long)s->ne, s->nqt);
    if (st == FEA_SUCCESS) st = build_points(pb, s);
  }
  if (st != FEA_SUCCESS) {
    el_destroy(s);
    return st;
  }
  s->colloc = 1;
  for (int k = 0; k < dim; k++) s->colloc &= s->n[k] == s->nq[k];
  for (int k = 0; k < dim && s->colloc; k++)
    for (int a = 0; a < s->nq[k]; a++) {
      double val[QP_MAX_Q];
      fea_lagrange_basis_1d(s->nq[k] - 1, g[k], g[k][a], val, s->colloc_tab[k] + a * s->nq[k]);
    }
  s->scratch = fea_sf_el_scratch_doubles(s, s->isa->lanes);
  s->flops = count_flops(s);
  s->apply = s->isa->apply[box];
  const int N = s->n[0];
  int iso = N == s->nq[0];
  for (int k = 1; k < dim; k++) iso &= s->n[k] == N && s->nq[k] == N;
  if (iso && N <= QP_MAX_N && s->isa->fixed[box][dim - 1][N])
    s->apply = s->isa->fixed[box][dim - 1][N], s->fixed = 1;

  s->bytes = (uint64_t)nround * s->nqt * s->npp * sizeof(double) +
             (s->edofs_own ? (uint64_t)s->ne * s->nbv * sizeof(fea_index) : 0) +
             (s->base32 ? (uint64_t)s->ne * s->ns * sizeof(int32_t) : 0);
  for (int k = 0; k < dim; k++)
    s->bytes += (uint64_t)s->nel[k] * (2 * s->n[k] * s->nq[k] + (box ? 1 : 0)) * sizeof(double);
  const double vdofs = (double)fea_space_total_dofs(sp);
  /* Short enough for the info's kernel field (96 characters). */
  int at = snprintf(s->desc, sizeof s->desc, "sum-factorization elasticity p=%d %s%s %s x%d%s",
                    sp->degree[0], box ? "box" : "stored", s->rational ? " nurbs" : "",
                    s->isa->name, s->isa->lanes, s->fixed ? "" : " generic");
  if (!box && at > 0 && (size_t)at < sizeof s->desc)
    snprintf(s->desc + at, sizeof s->desc - (size_t)at, ", %.0f B/DoF",
             (double)s->ne * s->nqt * s->npp * sizeof(double) / (vdofs > 0 ? vdofs : 1.0));
  *state = s;
  return FEA_SUCCESS;
}

static fea_status create_box(const fea_problem *pb, const fea_index *edofs, void **state) {
  return el_create(pb, edofs, 1, state);
}

static fea_status create_stored(const fea_problem *pb, const fea_index *edofs, void **state) {
  return el_create(pb, edofs, 0, state);
}

static int el_batch(const void *state) { return ((const fea_sf_el_state *)state)->isa->lanes; }

static fea_index el_scratch(const void *state) { return ((const fea_sf_el_state *)state)->scratch; }

static void el_apply(const void *state, const fea_index *elems, int count, const double *x_full,
                     double *y, double *scratch) {
  const fea_sf_el_state *s = state;
  const int W = s->isa->lanes;
  for (int start = 0; start < count; start += W) {
    const int m = count - start < W ? count - start : W;
    s->apply(s, elems + start, m, x_full, y + (size_t)start * s->nbv, NULL, scratch);
  }
}

/* The same, each batch's results added into the target by the kernel (no
 * element results handed back, no embedded vectors: matfree-kernel.h). */
static void el_apply_add(const void *state, const fea_index *elems, int count, const double *x,
                         const fea_matfree_target *tg, double *scratch) {
  const fea_sf_el_state *s = state;
  const int W = s->isa->lanes;
  fea_index batch[16]; /* lanes <= 16 */
  uint64_t n = 0;
  for (int start = 0; start < count; start += W) {
    const int m = count - start < W ? count - start : W;
    const fea_index *e = elems ? elems + start : batch;
    if (!elems)
      for (int l = 0; l < m; l++) batch[l] = tg->first + start + l;
    n += s->apply(s, e, m, x, NULL, tg, scratch);
  }
  *tg->updates += n;
}

static void el_diagonal(const void *state, const fea_index *elems, int count, double *d,
                        double *scratch) {
  const fea_sf_el_state *s = state;
  const int W = s->isa->lanes;
  for (int start = 0; start < count; start += W) {
    const int m = count - start < W ? count - start : W;
    s->isa->diagonal(s, elems + start, m, d + (size_t)start * s->nbv, scratch);
  }
}

static void el_cost(const void *state, double *flops, double *bytes) {
  const fea_sf_el_state *s = state;
  *flops = s->flops;
  /* Per element: its DoF indices (the gather's and the scatter's), x_e and
   * y_e, and its stored points. */
  *bytes = s->nbv * (sizeof(fea_index) + 2 * sizeof(double)) +
           (s->base32 ? s->ns * sizeof(int32_t) : s->nbv * sizeof(fea_index)) +
           (double)s->nqt * s->npp * sizeof(double);
}

static uint64_t el_memory(const void *state) { return ((const fea_sf_el_state *)state)->bytes; }

static const char *el_describe(const void *state) { return ((const fea_sf_el_state *)state)->desc; }

const fea_matfree_kernel_ops fea_matfree_kernel_sumfact_elastic_box = {
    .name = "sum-factorization elasticity (box)",
    .supports = box_supports,
    .create = create_box,
    .destroy = el_destroy,
    .batch = el_batch,
    .apply = el_apply,
    .apply_add = el_apply_add,
    .diagonal = el_diagonal,
    .scratch_doubles = el_scratch,
    .cost = el_cost,
    .memory = el_memory,
    .describe = el_describe,
};

const fea_matfree_kernel_ops fea_matfree_kernel_sumfact_elastic_stored = {
    .name = "sum-factorization elasticity (stored)",
    .supports = stored_supports,
    .create = create_stored,
    .destroy = el_destroy,
    .batch = el_batch,
    .apply = el_apply,
    .apply_add = el_apply_add,
    .diagonal = el_diagonal,
    .scratch_doubles = el_scratch,
    .cost = el_cost,
    .memory = el_memory,
    .describe = el_describe,
};
