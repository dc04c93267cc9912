/* B-spline spaces through the public API: counts, DoF numbering and boundary
 * DoFs against closed forms, knots, evaluation (partition of unity, gradients
 * against finite differences in physical coordinates), Greville interpolation
 * exact for functions of the space, h-, p- and k-refinement with
 * fea_space_transfer leaving the function unchanged (1e-13), and the refused
 * inputs, each naming the bad value and leaving *out NULL.
 *
 * Spaces live on the host, so one backend (/cpu/ref) is enough here. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "api-common.h"

#include <feaccel/mesh.h>
#include <feaccel/space.h>

static fea_context *open_ctx(void) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  return ctx;
}

static uint64_t rng_state = 88172645463325252ULL;
static double rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) * 0x1p-53;
}

static fea_space *make(fea_context *ctx, int dim, const int p[3], const fea_index n[3]) {
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < 3; k++) {
    d.degree[k] = p[k];
    d.n[k] = n[k];
  }
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  return s;
}

static fea_space_info info_of(const fea_space *s) {
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  return info;
}

/* Random points in the box (the corners first). */
static double *box_points(int dim, const double *lo, const double *hi, int npts) {
  double *x = malloc((size_t)npts * (size_t)dim * sizeof *x);
  for (int i = 0; i < npts; i++)
    for (int k = 0; k < dim; k++) {
      double r = i < (1 << dim) ? (double)((i >> k) & 1) : rnd();
      x[i * dim + k] = lo[k] + r * (hi[k] - lo[k]);
    }
  return x;
}

Test(space_bspline, counts_for_every_dimension) {
  fea_context *ctx = open_ctx();
  const int p[3] = {2, 3, 1};
  const fea_index n[3] = {4, 5, 3};
  for (int dim = 1; dim <= 3; dim++) {
    fea_space *s = make(ctx, dim, p, n);
    fea_space_info info = info_of(s);
    fea_index dofs = 1, elems = 1, interior = 1;
    int per = 1;
    for (int k = 0; k < dim; k++) {
      dofs *= n[k] + p[k];
      elems *= n[k];
      per *= p[k] + 1;
      interior *= n[k] + p[k] - 2;
      cr_assert_eq(info.degree[k], p[k]);
      cr_assert_eq(info.elements[k], n[k]);
    }
    cr_assert_eq(info.dim, dim);
    cr_assert_eq(info.is_bspline, 1);
    cr_assert_eq(info.num_dofs, dofs, "dim %d: %lld DoFs", dim, (long long)info.num_dofs);
    cr_assert_eq(info.num_elements, elems);
    cr_assert_eq(info.dofs_per_element, per);
    cr_assert_eq(info.num_boundary_dofs, dofs - interior);
    OK(fea_space_destroy(&s));
    cr_assert_null(s);
  }
  fea_context_destroy(&ctx);
}

/* Element (e0, e1) of open uniform knots holds functions e_k .. e_k + p_k in
 * each direction, direction 0 fastest. */
Test(space_bspline, element_dofs_are_lexicographic) {
  fea_context *ctx = open_ctx();
  const int p[3] = {2, 3, 1};
  const fea_index n[3] = {4, 3, 2};
  fea_space *s = make(ctx, 3, p, n);
  fea_index nf[3] = {n[0] + p[0], n[1] + p[1], n[2] + p[2]};
  fea_index dofs[64];
  for (fea_index e2 = 0; e2 < n[2]; e2++)
    for (fea_index e1 = 0; e1 < n[1]; e1++)
      for (fea_index e0 = 0; e0 < n[0]; e0++) {
        fea_index e = e0 + n[0] * (e1 + n[1] * e2);
        OK(fea_space_get_element_dofs(s, e, dofs));
        int i = 0;
        for (int l2 = 0; l2 <= p[2]; l2++)
          for (int l1 = 0; l1 <= p[1]; l1++)
            for (int l0 = 0; l0 <= p[0]; l0++, i++) {
              fea_index want = (e0 + l0) + nf[0] * ((e1 + l1) + nf[1] * (e2 + l2));
              cr_assert_eq(dofs[i], want, "element %lld local %d: %lld, expected %lld",
                           (long long)e, i, (long long)dofs[i], (long long)want);
            }
      }
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

Test(space_bspline, boundary_dofs_are_the_outer_layer_sorted) {
  fea_context *ctx = open_ctx();
  const int p[3] = {3, 2, 2};
  const fea_index n[3] = {3, 4, 2};
  fea_space *s = make(ctx, 3, p, n);
  fea_space_info info = info_of(s);
  fea_index *b = malloc((size_t)info.num_boundary_dofs * sizeof *b);
  OK(fea_space_get_boundary_dofs(s, info.num_boundary_dofs, b));
  fea_index nf[3] = {n[0] + p[0], n[1] + p[1], n[2] + p[2]}, j = 0;
  for (fea_index d = 0; d < info.num_dofs; d++) {
    fea_index i0 = d % nf[0], i1 = (d / nf[0]) % nf[1], i2 = d / (nf[0] * nf[1]);
    int on = i0 == 0 || i0 == nf[0] - 1 || i1 == 0 || i1 == nf[1] - 1 || i2 == 0 || i2 == nf[2] - 1;
    if (on) {
      cr_assert(j < info.num_boundary_dofs && b[j] == d, "boundary DoF %lld missing", (long long)d);
      j++;
    }
  }
  cr_assert_eq(j, info.num_boundary_dofs);
  free(b);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

Test(space_bspline, knots_come_back) {
  fea_context *ctx = open_ctx();
  const double t[] = {-1, -1, -1, -0.5, 0.25, 0.25, 2, 2, 2};
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = 2;
  d.degree[0] = 3;
  d.n[0] = 4;
  d.degree[1] = 2;
  d.knots[1] = t;
  d.num_knots[1] = 9;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  fea_index count = 0;
  OK(fea_space_bspline_get_knots(s, 0, 0, NULL, &count));
  cr_assert_eq(count, 4 + 2 * 3 + 1);
  double k[16];
  EXPECT_FAIL(fea_space_bspline_get_knots(s, 0, count - 1, k, &count), FEA_ERR_DIMENSION, ctx,
              "capacity 10 < 11 knots in direction 0");
  OK(fea_space_bspline_get_knots(s, 0, 16, k, &count));
  const double want0[] = {0, 0, 0, 0, 0.25, 0.5, 0.75, 1, 1, 1, 1};
  for (int i = 0; i < 11; i++) cr_assert(k[i] == want0[i], "knot %d = %g", i, k[i]);
  OK(fea_space_bspline_get_knots(s, 1, 16, k, &count));
  cr_assert_eq(count, 9);
  cr_assert(memcmp(k, t, sizeof t) == 0);
  fea_space_info info = info_of(s);
  cr_assert_eq(info.elements[1], 3); /* spans [-1,-0.5], [-0.5,0.25], [0.25,2] */
  cr_assert_eq(info.num_dofs, 7 * 6);
  EXPECT_FAIL(fea_space_bspline_get_knots(s, 2, 16, k, &count), FEA_ERR_INVALID_ARG, ctx,
              "direction 2 is outside 0..1");
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* Mixed degrees, a repeated interior knot and a non-unit box: the cases the
 * evaluation and interpolation tests run on. */
typedef struct sp_case {
  int dim;
  int p[3];
  const double *knots[3];
  fea_index nk[3];
  fea_index n[3];
  double lo[3], hi[3];
} sp_case;

static const double kn_rep[] = {0, 0, 0, 0, 0.3, 0.5, 0.5, 0.8, 1, 1, 1, 1}; /* p = 3, C^1 at 0.5 */
static const double kn_c0[] = {2, 2, 2, 2.5, 2.5, 3, 4, 4, 4};               /* p = 2, C^0 at 2.5 */

static const sp_case cases[] = {
    {1, {4, 0, 0}, {NULL}, {0}, {5, 0, 0}, {-1, 0, 0}, {2, 0, 0}},
    {1, {3, 0, 0}, {kn_rep}, {12}, {0}, {0, 0, 0}, {1, 0, 0}},
    {2, {2, 3, 0}, {kn_c0, kn_rep}, {9, 12}, {0}, {0, -1, 0}, {3, 1, 0}},
    {2, {1, 5, 0}, {NULL, NULL}, {0}, {3, 2, 0}, {0, 0, 0}, {1, 2, 0}},
    {3, {1, 2, 3}, {NULL, kn_c0, NULL}, {0, 9, 0}, {2, 0, 3}, {0, 0, 1}, {1, 0.5, 2}},
};
#define NUM_SP_CASES (sizeof cases / sizeof cases[0])

static fea_space *make_case(fea_context *ctx, const sp_case *c) {
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = c->dim;
  for (int k = 0; k < c->dim; k++) {
    d.degree[k] = c->p[k];
    d.knots[k] = c->knots[k];
    d.num_knots[k] = c->nk[k];
    d.n[k] = c->n[k];
    d.lower[k] = c->lo[k];
    d.upper[k] = c->hi[k];
  }
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  return s;
}

Test(space_bspline, evaluate_partition_of_unity) {
  fea_context *ctx = open_ctx();
  for (size_t c = 0; c < NUM_SP_CASES; c++) {
    fea_space *s = make_case(ctx, &cases[c]);
    fea_space_info info = info_of(s);
    int dim = info.dim, np = 300;
    double *one = malloc((size_t)info.num_dofs * sizeof *one);
    for (fea_index i = 0; i < info.num_dofs; i++) one[i] = 1.0;
    double *x = box_points(dim, cases[c].lo, cases[c].hi, np);
    double *v = malloc((size_t)np * sizeof *v), *g = malloc((size_t)np * 3 * sizeof *g);
    OK(fea_space_evaluate(s, one, np, x, v, g));
    for (int i = 0; i < np; i++) {
      cr_assert(fabs(v[i] - 1.0) <= 1e-14, "case %zu point %d: sum %.17g", c, i, v[i]);
      for (int k = 0; k < dim; k++)
        cr_assert(fabs(g[i * dim + k]) <= 1e-11, "case %zu point %d: gradient %g", c, i,
                  g[i * dim + k]);
    }
    free(one);
    free(x);
    free(v);
    free(g);
    fea_space_destroy(&s);
  }
  fea_context_destroy(&ctx);
}

/* Gradients against central differences of the values, in physical
 * coordinates (the box scaling enters through the chain rule), at points
 * away from the knots so both sides lie on one polynomial piece. */
Test(space_bspline, gradients_match_finite_differences) {
  fea_context *ctx = open_ctx();
  for (size_t c = 0; c < NUM_SP_CASES; c++) {
    fea_space *s = make_case(ctx, &cases[c]);
    fea_space_info info = info_of(s);
    int dim = info.dim;
    double *coef = malloc((size_t)info.num_dofs * sizeof *coef);
    for (fea_index i = 0; i < info.num_dofs; i++) coef[i] = 2 * rnd() - 1;
    for (int trial = 0; trial < 100; trial++) {
      double x[3], g[3], xp[3], xm[3], vp, vm, v;
      for (int k = 0; k < dim; k++)
        x[k] = cases[c].lo[k] + (0.01 + 0.98 * rnd()) * (cases[c].hi[k] - cases[c].lo[k]);
      OK(fea_space_evaluate(s, coef, 1, x, &v, g));
      for (int k = 0; k < dim; k++) {
        double h = 1e-6 * (cases[c].hi[k] - cases[c].lo[k]);
        memcpy(xp, x, sizeof x);
        memcpy(xm, x, sizeof x);
        xp[k] += h;
        xm[k] -= h;
        OK(fea_space_evaluate(s, coef, 1, xp, &vp, NULL));
        OK(fea_space_evaluate(s, coef, 1, xm, &vm, NULL));
        double fd = (vp - vm) / (2 * h);
        /* A knot within h makes the difference one-sided; such draws are rare and skipped. */
        double tol = 1e-5 * (1.0 + fabs(g[k]));
        if (fabs(fd - g[k]) > tol) {
          double g2[3];
          OK(fea_space_evaluate(s, coef, 1, xp, NULL, g2));
          double g3[3];
          OK(fea_space_evaluate(s, coef, 1, xm, NULL, g3));
          cr_assert(fabs(g2[k] - g3[k]) > 1e-3 * (1 + fabs(g[k])),
                    "case %zu x=(%g,%g,%g) d/dx%d: %.12g vs finite difference %.12g", c, x[0], x[1],
                    x[2], k, g[k], fd);
        }
      }
    }
    free(coef);
    fea_space_destroy(&s);
  }
  fea_context_destroy(&ctx);
}

/* A function of the space as a callback: the space's own evaluation. */
typedef struct space_fn {
  fea_space *s;
  const double *coef;
} space_fn;

static double eval_space(const double *x, void *user) {
  const space_fn *f = user;
  double v = NAN;
  if (fea_space_evaluate(f->s, f->coef, 1, x, &v, NULL) != FEA_SUCCESS) return NAN;
  return v;
}

/* A tensor polynomial of degree p_k in direction k lies in the space. */
typedef struct poly {
  int dim, p[3];
} poly;

static double eval_poly(const double *x, void *user) {
  const poly *q = user;
  double v = 1.0;
  for (int k = 0; k < q->dim; k++) {
    double f = 0.0; /* 1 + x + ... + x^p, Horner */
    for (int j = 0; j <= q->p[k]; j++) f = f * (x[k] - 0.3) + (j + 1);
    v *= f;
  }
  return v;
}

Test(space_bspline, interpolation_is_exact_in_the_space) {
  fea_context *ctx = open_ctx();
  for (size_t c = 0; c < NUM_SP_CASES; c++) {
    fea_space *s = make_case(ctx, &cases[c]);
    fea_space_info info = info_of(s);
    fea_index nd = info.num_dofs;
    double *coef = malloc((size_t)nd * sizeof *coef), *back = malloc((size_t)nd * sizeof *back);
    for (fea_index i = 0; i < nd; i++) coef[i] = 2 * rnd() - 1;
    space_fn f = {s, coef};
    OK(fea_space_interpolate(s, eval_space, &f, back));
    for (fea_index i = 0; i < nd; i++)
      cr_assert(fabs(back[i] - coef[i]) <= 1e-12, "case %zu coefficient %lld: %.17g vs %.17g", c,
                (long long)i, back[i], coef[i]);
    /* A polynomial of the space's degrees: reproduced at random points. */
    poly q = {info.dim, {cases[c].p[0], cases[c].p[1], cases[c].p[2]}};
    OK(fea_space_interpolate(s, eval_poly, &q, back));
    int np = 200;
    double *x = box_points(info.dim, cases[c].lo, cases[c].hi, np);
    double *v = malloc((size_t)np * sizeof *v);
    OK(fea_space_evaluate(s, back, np, x, v, NULL));
    for (int i = 0; i < np; i++) {
      double want = eval_poly(x + i * info.dim, &q);
      cr_assert(fabs(v[i] - want) <= 1e-11 * fmax(1.0, fabs(want)),
                "case %zu point %d: %.17g vs %.17g", c, i, v[i], want);
    }
    free(x);
    free(v);
    free(coef);
    free(back);
    fea_space_destroy(&s);
  }
  fea_context_destroy(&ctx);
}

static double bad_fn(const double *x, void *user) {
  (void)user;
  return x[0] > 0.5 ? NAN : 0.0;
}

Test(space_bspline, interpolation_refuses_nan_values) {
  fea_context *ctx = open_ctx();
  const int p[3] = {2, 2, 2};
  const fea_index n[3] = {3, 3, 3};
  fea_space *s = make(ctx, 1, p, n);
  double c[5] = {7, 7, 7, 7, 7};
  EXPECT_FAIL(fea_space_interpolate(s, bad_fn, NULL, c), FEA_ERR_INVALID_ARG, ctx, "returned nan");
  for (int i = 0; i < 5; i++) cr_assert(c[i] == 7, "coefficients written on failure");
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* Coarse and fine functions agree at random points and at the corners. */
static void expect_same_function(fea_space *coarse, fea_space *fine, const double *lo,
                                 const double *hi, const char *what) {
  fea_space_info ic = info_of(coarse), ifn = info_of(fine);
  double *c = malloc((size_t)ic.num_dofs * sizeof *c),
         *f = malloc((size_t)ifn.num_dofs * sizeof *f);
  for (fea_index i = 0; i < ic.num_dofs; i++) c[i] = 2 * rnd() - 1;
  OK(fea_space_transfer(coarse, c, fine, f));
  int np = 500;
  double *x = box_points(ic.dim, lo, hi, np);
  double *vc = malloc((size_t)np * sizeof *vc), *vf = malloc((size_t)np * sizeof *vf);
  OK(fea_space_evaluate(coarse, c, np, x, vc, NULL));
  OK(fea_space_evaluate(fine, f, np, x, vf, NULL));
  for (int i = 0; i < np; i++)
    cr_assert(fabs(vc[i] - vf[i]) <= 1e-13, "%s: point %d coarse %.17g fine %.17g", what, i, vc[i],
              vf[i]);
  free(c);
  free(f);
  free(x);
  free(vc);
  free(vf);
}

Test(space_bspline, refinement_keeps_the_function) {
  fea_context *ctx = open_ctx();
  for (size_t c = 0; c < NUM_SP_CASES; c++) {
    fea_space *s = make_case(ctx, &cases[c]);
    fea_space_info info = info_of(s);
    char what[96];
    for (int dir = 0; dir < info.dim; dir++) {
      /* h: the midpoints of two knots of this direction, one of them twice. */
      double t[32];
      fea_index m = 0;
      OK(fea_space_bspline_get_knots(s, dir, 32, t, &m));
      double mid = 0.5 * (t[0] + t[m - 1]) + 0.01 * (t[m - 1] - t[0]);
      double ins[] = {mid, t[0] + 0.1 * (t[m - 1] - t[0]), mid};
      fea_index nins = info.degree[dir] >= 2 ? 3 : 2;
      fea_space *h = NULL, *pp = NULL, *k = NULL;
      OK(fea_space_bspline_insert_knots(s, dir, nins, ins, &h));
      fea_space_info ih = info_of(h);
      fea_index ndir = m - info.degree[dir] - 1; /* functions in this direction */
      cr_assert_eq(ih.num_dofs, info.num_dofs / ndir * (ndir + nins),
                   "case %zu: %lld DoFs after "
                   "inserting %lld knots",
                   c, (long long)ih.num_dofs, (long long)nins);
      snprintf(what, sizeof what, "case %zu insert in direction %d", c, dir);
      expect_same_function(s, h, cases[c].lo, cases[c].hi, what);
      /* p: degree + 1 (where it stays <= 8). */
      if (info.degree[dir] < 8) {
        OK(fea_space_bspline_elevate_degree(s, dir, 1, &pp));
        fea_space_info ip = info_of(pp);
        cr_assert_eq(ip.degree[dir], info.degree[dir] + 1);
        cr_assert_eq(ip.elements[dir], info.elements[dir]);
        snprintf(what, sizeof what, "case %zu elevate direction %d", c, dir);
        expect_same_function(s, pp, cases[c].lo, cases[c].hi, what);
        /* k: elevate, then insert. */
        OK(fea_space_bspline_insert_knots(pp, dir, 2, ins, &k));
        snprintf(what, sizeof what, "case %zu elevate+insert direction %d", c, dir);
        expect_same_function(s, k, cases[c].lo, cases[c].hi, what);
        /* The h-refined space is not inside the p-refined one. */
        fea_index ne = info_of(h).num_dofs;
        double *z = calloc((size_t)ne, sizeof *z),
               *w = calloc((size_t)info_of(pp).num_dofs, sizeof *w);
        EXPECT_FAIL(fea_space_transfer(h, z, pp, w), FEA_ERR_INVALID_ARG, ctx,
                    "does not contain the coarse one");
        free(z);
        free(w);
      }
      fea_space_destroy(&h);
      fea_space_destroy(&pp);
      fea_space_destroy(&k);
    }
    fea_space_destroy(&s);
  }
  fea_context_destroy(&ctx);
}

Test(space_bspline, uniform_refinement_transfers) {
  fea_context *ctx = open_ctx();
  for (int p = 1; p <= 8; p++) {
    const int pp[3] = {p, 9 - p, 1};
    const fea_index n1[3] = {2, 3, 1}, n2[3] = {4, 6, 1};
    fea_space *a = make(ctx, 2, pp, n1), *b = make(ctx, 2, pp, n2);
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    char what[32];
    snprintf(what, sizeof what, "2D p=(%d,%d) n -> 2n", p, 9 - p);
    expect_same_function(a, b, lo, hi, what);
    fea_space_destroy(&a);
    fea_space_destroy(&b);
  }
  fea_context_destroy(&ctx);
}

Test(space_bspline, colorings_are_valid) {
  fea_context *ctx = open_ctx();
  const int p[3] = {2, 3, 1};
  const fea_index n[3] = {7, 6, 5};
  fea_space *s = make(ctx, 3, p, n);
  fea_space_info info = info_of(s);
  fea_index *colors = malloc((size_t)info.num_elements * sizeof *colors);
  int nc = 0;
  OK(fea_space_color_elements(s, FEA_COLORING_CARTESIAN, colors, &nc));
  OK(fea_space_check_coloring(s, colors));
  OK(fea_space_color_elements(s, FEA_COLORING_GREEDY, colors, &nc));
  OK(fea_space_check_coloring(s, colors));
  free(colors);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

Test(space_bspline, points_outside_are_named) {
  fea_context *ctx = open_ctx();
  const int p[3] = {2, 2, 2};
  const fea_index n[3] = {3, 3, 3};
  fea_space *s = make(ctx, 2, p, n);
  double c[25] = {0}, v;
  double edge[2] = {1.0 + 1e-14, 0.0}; /* on the boundary up to rounding: accepted */
  OK(fea_space_evaluate(s, c, 1, edge, &v, NULL));
  double out[2] = {0.5, 1.25};
  EXPECT_FAIL(fea_space_evaluate(s, c, 1, out, &v, NULL), FEA_ERR_INVALID_ARG, ctx,
              "point (0.5, 1.25) is outside the domain [0, 1] x [0, 1]");
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* --- refused descriptors: the value is named and *out stays NULL --- */

static fea_space *const SENTINEL = (fea_space *)(uintptr_t)0x1;

static void expect_refused(fea_context *ctx, const fea_bspline_desc *d, fea_status want,
                           const char *needle) {
  fea_space *s = SENTINEL;
  EXPECT_FAIL(fea_space_create_bspline(ctx, d, &s), want, ctx, needle);
  cr_assert_null(s, "*out is not NULL after a failure (%s)", needle);
}

Test(space_bspline_errors, degree_0_and_9) {
  fea_context *ctx = open_ctx();
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.degree[1] = 9;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "degree 9 in direction 1 is outside 1..8");
  d.degree[1] = 0;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "degree 0 in direction 1 is outside 1..8");
  d.degree[1] = 2;
  d.dim = 1; /* direction 1 is unused in 1D: its degree does not matter */
  d.degree[1] = 0;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

Test(space_bspline_errors, element_counts_and_dimension) {
  fea_context *ctx = open_ctx();
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.n[1] = 0;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "n[1] is 0 elements");
  d.n[1] = -4;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "n[1] is -4 elements");
  d.n[1] = 2;
  d.dim = 4;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "dimension 4 is outside 1..3");
  d.dim = 0;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "dimension 0 is outside 1..3");
  fea_context_destroy(&ctx);
}

Test(space_bspline_errors, bad_knot_vectors) {
  fea_context *ctx = open_ctx();
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.degree[0] = 2;
  const double dec[] = {0, 0, 0, 0.25, 0.5, 0.75, 0.5, 1, 1, 1};
  d.knots[0] = dec;
  d.num_knots[0] = 10;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG,
                 "knot vector of direction 0 is not non-decreasing at index 6 (0.5 after 0.75)");
  const double nan[] = {0, 0, 0, 0.25, NAN, 1, 1, 1};
  d.knots[0] = nan;
  d.num_knots[0] = 8;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "non-finite knot nan at index 4");
  const double mult[] = {0, 0, 0, 0.5, 0.5, 0.5, 1, 1, 1};
  d.knots[0] = mult;
  d.num_knots[0] = 9;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG,
                 "interior knot 0.5 at index 3 has multiplicity 3, above the degree 2");
  const double open[] = {0, 0, 0.5, 1, 1, 1};
  d.knots[0] = open;
  d.num_knots[0] = 6;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "first knot 0 has multiplicity 2");
  d.knots[0] = NULL;
  d.num_knots[0] = 6;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "num_knots[0] is 6 but knots[0] is NULL");
  d.knots[0] = mult;
  d.num_knots[0] = 3;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "has 3 knots; degree 2 needs 6..");
  fea_context_destroy(&ctx);
}

Test(space_bspline_errors, box_geometry_size_and_nulls) {
  fea_context *ctx = open_ctx();
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.upper[1] = 0.0;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "the box in direction 1 is [0, 0]");
  d.upper[1] = NAN;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "the box in direction 1 is [0, nan]");
  d.upper[1] = 1.0;
  /* The geometry's descriptor is size-checked too (tests/api/test-geometry.c has the rest). */
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  g.size = 8;
  d.geometry = &g;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "desc->geometry.size is 8");
  d.geometry = NULL;
  d.size = 8;
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, "desc.size is 8");
  /* A struct that ends before the first version's last field is refused. */
  d.size = offsetof(fea_bspline_desc, geometry);
  char want[48];
  snprintf(want, sizeof want, "desc.size is %zu", d.size);
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, want);
  d.size = sizeof d + 8;
  snprintf(want, sizeof want, "desc.size is %zu", d.size);
  expect_refused(ctx, &d, FEA_ERR_INVALID_ARG, want);
  d.size = sizeof d;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  fea_space_destroy(&s);
  fea_space *o = SENTINEL;
  EXPECT_FAIL(fea_space_create_bspline(ctx, NULL, &o), FEA_ERR_INVALID_ARG, ctx, "'desc' is NULL");
  cr_assert_null(o);
  EXPECT_FAIL(fea_space_create_bspline(NULL, &d, &o), FEA_ERR_INVALID_ARG, NULL, "'ctx' is NULL");
  cr_assert_null(o);
  EXPECT_FAIL(fea_space_create_bspline(ctx, &d, NULL), FEA_ERR_INVALID_ARG, ctx, "'out' is NULL");
  fea_context_destroy(&ctx);
}

Test(space_bspline_errors, refinement_arguments) {
  fea_context *ctx = open_ctx();
  const int p[3] = {2, 7, 1};
  const fea_index n[3] = {4, 2, 1};
  fea_space *s = make(ctx, 2, p, n), *o = SENTINEL;
  const double bad[] = {0.3, 1.5};
  EXPECT_FAIL(fea_space_bspline_insert_knots(s, 0, 2, bad, &o), FEA_ERR_INVALID_ARG, ctx,
              "knot 1.5 (entry 1) is not strictly inside the parameter range (0, 1)");
  cr_assert_null(o);
  const double twice[] = {0.5, 0.5};
  o = SENTINEL;
  EXPECT_FAIL(fea_space_bspline_insert_knots(s, 0, 2, twice, &o), FEA_ERR_INVALID_ARG, ctx,
              "inserting 0.5 would raise its multiplicity to 3, above the degree 2");
  cr_assert_null(o);
  o = SENTINEL;
  EXPECT_FAIL(fea_space_bspline_insert_knots(s, 2, 1, twice, &o), FEA_ERR_INVALID_ARG, ctx,
              "direction 2 is outside 0..1");
  cr_assert_null(o);
  o = SENTINEL;
  EXPECT_FAIL(fea_space_bspline_insert_knots(s, 0, 1, NULL, &o), FEA_ERR_INVALID_ARG, ctx,
              "'knots' is NULL");
  cr_assert_null(o);
  o = SENTINEL;
  EXPECT_FAIL(fea_space_bspline_elevate_degree(s, 1, 2, &o), FEA_ERR_INVALID_ARG, ctx,
              "raising degree 7 by 2 gives 9, outside 1..8");
  cr_assert_null(o);
  o = SENTINEL;
  EXPECT_FAIL(fea_space_bspline_elevate_degree(s, 0, -1, &o), FEA_ERR_INVALID_ARG, ctx,
              "degree raise -1 is negative");
  cr_assert_null(o);
  /* A raise so large that degree + raise overflows an int is refused by its size. */
  o = SENTINEL;
  EXPECT_FAIL(fea_space_bspline_elevate_degree(s, 0, INT_MAX, &o), FEA_ERR_INVALID_ARG, ctx,
              "raising degree 2 by 2147483647 gives 2147483649, outside 1..8");
  cr_assert_null(o);
  o = SENTINEL;
  EXPECT_FAIL(fea_space_bspline_elevate_degree(s, 1, INT_MAX - 6, &o), FEA_ERR_INVALID_ARG, ctx,
              "raising degree 7 by 2147483641 gives 2147483648, outside 1..8");
  cr_assert_null(o);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

Test(space_bspline_errors, lagrange_space_is_not_a_bspline_space) {
  fea_context *ctx = open_ctx();
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  fea_mesh *mesh = NULL;
  OK(fea_mesh_create_structured(ctx, &md, &mesh));
  fea_space *s = NULL, *o = SENTINEL;
  OK(fea_space_create_lagrange(mesh, 1, FEA_NODES_EQUISPACED, &s));
  const double k[] = {0.5};
  EXPECT_FAIL(fea_space_bspline_insert_knots(s, 0, 1, k, &o), FEA_ERR_INVALID_ARG, ctx,
              "not a B-spline space");
  cr_assert_null(o);
  o = SENTINEL;
  EXPECT_FAIL(fea_space_bspline_elevate_degree(s, 0, 1, &o), FEA_ERR_INVALID_ARG, ctx,
              "not a B-spline space");
  cr_assert_null(o);
  fea_index count;
  EXPECT_FAIL(fea_space_bspline_get_knots(s, 0, 0, NULL, &count), FEA_ERR_INVALID_ARG, ctx,
              "not a B-spline space");
  fea_space_destroy(&s);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
}
