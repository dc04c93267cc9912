/* Tensor-product B-spline spaces on a box: the element interface (DoFs,
 * basis values and gradients, point location, Greville interpolation) and
 * the transfer between nested spaces.
 *
 * Geometry is the identity up to scaling: parameter xi_k in [t_first, t_last]
 * maps to x_k = lower_k + (xi_k - t_first) * scale_k with
 * scale_k = (upper_k - lower_k) / (t_last - t_first). Elements are the
 * non-empty knot spans, numbered lexicographically (direction 0 fastest);
 * DoFs likewise, so element (e_0, e_1, e_2) holds the functions
 * i_k = span_k - p_k .. span_k in each direction. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "geometry-map.h"
#include "base/memory-limit.h"
#include "mesh.h"
#include "space.h"

/* A point may lie this far (relative to the box) outside and still belong to it. */
#define LOCATE_TOL 1e-12

static const fea_bspline_space *bsp(const fea_space *s) { return s->impl; }

static double scale_of(const fea_bspline_space *b, int k) {
  const fea_knots *kn = &b->knots[k];
  return (b->upper[k] - b->lower[k]) / (kn->t[kn->m - 1] - kn->t[0]);
}

static void element_dofs(const fea_space *s, fea_index e, fea_index *dofs) {
  const fea_bspline_space *b = bsp(s);
  fea_index first[3] = {0, 0, 0}, stride[3] = {0, 0, 0}, st = 1;
  int np[3] = {1, 1, 1};
  for (int k = 0; k < s->dim; k++) {
    const fea_knots *kn = &b->knots[k];
    fea_index ek = e % s->elements[k];
    e /= s->elements[k];
    first[k] = kn->span[ek] - kn->p;
    np[k] = kn->p + 1;
    stride[k] = st;
    st *= fea_knots_num_functions(kn);
  }
  int idx = 0;
  for (int l2 = 0; l2 < np[2]; l2++)
    for (int l1 = 0; l1 < np[1]; l1++)
      for (int l0 = 0; l0 < np[0]; l0++)
        dofs[idx++] = (first[0] + l0) * stride[0] + (first[1] + l1) * stride[1] +
                      (first[2] + l2) * stride[2];
}

/* Element e's box in parameter space: per direction its index ek, knot span,
 * start t0 and length h, and the p + 1 functions it holds (1 beyond dim). */
typedef struct element_box {
  fea_index ek[3], span[3];
  double t0[3], h[3];
  int np[3];
} element_box;

static element_box box_of(const fea_space *s, fea_index e) {
  const fea_bspline_space *b = bsp(s);
  element_box x = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}};
  for (int k = 0; k < s->dim; k++) {
    const fea_knots *kn = &b->knots[k];
    x.ek[k] = e % s->elements[k];
    e /= s->elements[k];
    x.span[k] = kn->span[x.ek[k]];
    x.t0[k] = kn->t[x.span[k]];
    x.h[k] = kn->t[x.span[k] + 1] - x.t0[k];
    x.np[k] = kn->p + 1;
  }
  return x;
}

/* The 1D values (first np entries) and physical derivatives (next np) of
 * the p + 1 functions of knot span `span` at npts parameters xi, rows of
 * FEA_ELEMENT_T1D_LD doubles in d; x gets their physical coordinates. One
 * call per direction and element: the knot differences' reciprocals once
 * (fea_bspline_basis_ders1_points). */
static void basis_1d(const fea_bspline_space *b, int k, fea_index span, int npts, const double *xi,
                     double *d, double *x) {
  const fea_knots *kn = &b->knots[k];
  const double scale = scale_of(b, k);
  const int np = kn->p + 1;
  fea_bspline_basis_ders1_points(kn, span, npts, xi, FEA_ELEMENT_T1D_LD, d);
  for (int a = 0; a < npts; a++) {
    for (int l = 0; l < np; l++) d[a * FEA_ELEMENT_T1D_LD + np + l] /= scale;
    x[a] = b->lower[k] + (xi[a] - kn->t[0]) * scale;
  }
}

/* The element values on a mapped patch: the space's 1D bases at the
 * parameter point, the geometry map's point, Jacobian and weight function
 * there; over a NURBS map the basis is N_i / W. Gradients go through J^-T. */
static fea_status mapped_values(const fea_space *s, fea_index e, const fea_index span[3],
                                const double t0[3], const double h[3], const fea_quadrature *q,
                                fea_element_values *ev) {
  const fea_bspline_space *b = bsp(s);
  const fea_geometry_map *g = b->geo;
  const int dim = s->dim, nb = s->dofs_per_element;
  fea_index gspan[3] = {0, 0, 0};
  double measure = 1.0;
  for (int k = 0; k < dim; k++) {
    gspan[k] = fea_knots_find_span(&g->knots[k], t0[k] + 0.5 * h[k]);
    measure *= h[k];
  }
  int np[3] = {1, 1, 1};
  double d[3][FEA_ELEMENT_T1D_LD];
  for (int k = 0; k < 3; k++) d[k][0] = 1.0, d[k][1] = 0.0;
  for (int k = 0; k < dim; k++) np[k] = b->knots[k].p + 1;
  ev->tensor_valid = ev->w1d_valid = 0;
  for (int qi = 0; qi < q->npts; qi++) {
    const double *ref = q->points + (size_t)qi * (size_t)dim;
    double xi[3] = {0, 0, 0}, x[3], J[9], W, dW[3], Ji[9];
    for (int k = 0; k < dim; k++) {
      xi[k] = t0[k] + ref[k] * h[k];
      fea_bspline_basis_ders(&b->knots[k], span[k], xi[k], 1, d[k]);
    }
    fea_geometry_map_eval(g, gspan, xi, x, J, &W, dW);
    double det;
    if (dim == 1) {
      det = J[0];
      Ji[0] = 1.0 / det;
    } else if (dim == 2) {
      det = J[0] * J[3] - J[1] * J[2];
      Ji[0] = J[3] / det, Ji[1] = -J[1] / det, Ji[2] = -J[2] / det, Ji[3] = J[0] / det;
    } else {
      det = J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
            J[2] * (J[3] * J[7] - J[4] * J[6]);
      Ji[0] = (J[4] * J[8] - J[5] * J[7]) / det, Ji[1] = (J[2] * J[7] - J[1] * J[8]) / det;
      Ji[2] = (J[1] * J[5] - J[2] * J[4]) / det, Ji[3] = (J[5] * J[6] - J[3] * J[8]) / det;
      Ji[4] = (J[0] * J[8] - J[2] * J[6]) / det, Ji[5] = (J[2] * J[3] - J[0] * J[5]) / det;
      Ji[6] = (J[3] * J[7] - J[4] * J[6]) / det, Ji[7] = (J[1] * J[6] - J[0] * J[7]) / det;
      Ji[8] = (J[0] * J[4] - J[1] * J[3]) / det;
    }
    FEA_CHECK(det > 0 && isfinite(det), s->ctx, FEA_ERR_INVALID_ARG,
              "the geometry map is not invertible with positive orientation in element %lld at "
              "x = (%g, %g, %g): det J = %g",
              (long long)e, x[0], dim > 1 ? x[1] : 0.0, dim > 2 ? x[2] : 0.0, det);
    for (int a = 0; a < dim; a++) ev->x[qi * dim + a] = x[a];
    ev->w[qi] = q->weights[qi] * measure * det;
    const int rational = g->weights != NULL;
    double *phi = ev->phi + (size_t)qi * (size_t)nb;
    double *dphi = ev->dphi + (size_t)qi * (size_t)nb * (size_t)dim;
    int i = 0;
    for (int l2 = 0; l2 < np[2]; l2++)
      for (int l1 = 0; l1 < np[1]; l1++)
        for (int l0 = 0; l0 < np[0]; l0++, i++) {
          const double v0 = d[0][l0], v1 = d[1][l1], v2 = d[2][l2];
          double v = v0 * v1 * v2;
          double gx[3] = {d[0][np[0] + l0] * v1 * v2, v0 * d[1][np[1] + l1] * v2,
                          v0 * v1 * d[2][np[2] + l2]};
          if (rational) { /* N / W: (grad N - (N / W) grad W) / W */
            v /= W;
            for (int k = 0; k < dim; k++) gx[k] = (gx[k] - v * dW[k]) / W;
          }
          phi[i] = v;
          for (int a = 0; a < dim; a++) {
            double sum = 0;
            for (int k = 0; k < dim; k++) sum += Ji[k * dim + a] * gx[k];
            dphi[i * dim + a] = sum;
          }
        }
  }
  return FEA_SUCCESS;
}

static fea_status element_values(const fea_space *s, fea_index e, const fea_quadrature *q,
                                 fea_element_values *ev) {
  const fea_bspline_space *b = bsp(s);
  const int dim = s->dim, nb = s->dofs_per_element;
  FEA_CHECK(q->dim == dim && ev->dim == dim && ev->nb == nb && ev->nq >= q->npts, s->ctx,
            FEA_ERR_DIMENSION,
            "element buffers (dim %d, %d points, %d functions) do not fit a %dD rule of %d "
            "points on a space with %d functions per element",
            ev->dim, ev->nq, ev->nb, q->dim, q->npts, nb);
  FEA_CHECK(e >= 0 && e < s->num_elements, s->ctx, FEA_ERR_INVALID_ARG,
            "element %lld is outside [0, %lld)", (long long)e, (long long)s->num_elements);
  const element_box box = box_of(s, e);
  const fea_index *span = box.span;
  const double *t0 = box.t0, *h = box.h;
  const int *np = box.np;
  double jac = 1.0;
  for (int k = 0; k < dim; k++) jac *= h[k] * scale_of(b, k);
  if (b->geo) return mapped_values(s, e, span, t0, h, q, ev);
  /* A tensor rule needs the 1D bases at its 1D points only: (p + 1) d
   * evaluations per element instead of (p + 1)^d d, the dominant cost of
   * integrating an element before this. Other rules evaluate per point. */
  int m[3] = {1, 1, 1}, tensor = q->tensor[0] > 0;
  for (int k = 0; k < dim && tensor; k++) m[k] = q->tensor[k];
  if (tensor && m[0] * m[1] * m[2] != q->npts) tensor = 0;
  if (tensor && (m[0] > FEA_QUAD_MAX_1D || m[1] > FEA_QUAD_MAX_1D || m[2] > FEA_QUAD_MAX_1D))
    tensor = 0;
  /* Per direction and 1D point: values, then physical derivatives; unused
   * directions hold the constant 1 so the tensor loop is uniform. */
  double d1[3][FEA_QUAD_MAX_1D][FEA_ELEMENT_T1D_LD], x1[3][FEA_QUAD_MAX_1D];
  for (int k = dim; k < 3; k++) d1[k][0][0] = 1.0, d1[k][0][1] = 0.0, x1[k][0] = 0.0;
  if (tensor) {
    fea_index stride = 1;
    for (int k = 0; k < dim; k++) {
      double xi[FEA_QUAD_MAX_1D];
      for (int a = 0; a < m[k]; a++)
        xi[a] = t0[k] + q->points[(size_t)(a * stride) * (size_t)dim + (size_t)k] * h[k];
      basis_1d(b, k, span[k], m[k], xi, d1[k][0], x1[k]);
      stride *= m[k];
    }
  }
  /* The factors for the forms' sum factorization, where the buffers have them. */
  ev->tensor_valid = ev->w1d_valid = 0;
  if (tensor && ev->t1d) {
    for (int k = 0; k < 3; k++)
      if (ev->tnq[k] != m[k] || ev->tnp[k] != np[k]) tensor = -1;
    if (tensor > 0) {
      for (int k = 0; k < dim; k++)
        memcpy(ev->t1d + (size_t)k * FEA_QUAD_MAX_1D * FEA_ELEMENT_T1D_LD, d1[k],
               (size_t)m[k] * sizeof d1[k][0]);
      ev->tensor_valid = 1;
      /* The rule's 1D weights on this element (1 beyond dim). */
      ev->w1d_valid = q->w1d[0][0] > 0;
      for (int k = 0; k < 3 && ev->w1d_valid; k++)
        for (int a = 0; a < m[k]; a++)
          ev->w1d[k][a] = q->w1d[k][a] * (k < dim ? h[k] * scale_of(b, k) : 1.0);
    }
    tensor = 1;
  }
  /* Where the caller asked for the factors alone and has them: x and w only.
   * The tables took 0.4 of the 2.3 us an element cost (2D p = 3). */
  const int tables = fea_element_values_have_tables(ev);
  for (int qi = 0; qi < q->npts; qi++) {
    const double *d[3];
    if (tensor) {
      const int a = qi % m[0], bb = (qi / m[0]) % m[1], c = qi / (m[0] * m[1]);
      const int at[3] = {a, bb, c};
      for (int k = 0; k < 3; k++) d[k] = d1[k][k < dim ? at[k] : 0];
      for (int k = 0; k < dim; k++) ev->x[qi * dim + k] = x1[k][at[k]];
    } else {
      const double *ref = q->points + (size_t)qi * (size_t)dim;
      for (int k = 0; k < dim; k++) {
        const double xi = t0[k] + ref[k] * h[k];
        basis_1d(b, k, span[k], 1, &xi, d1[k][0], &ev->x[qi * dim + k]);
        d[k] = d1[k][0];
      }
      for (int k = dim; k < 3; k++) d[k] = d1[k][0];
    }
    ev->w[qi] = q->weights[qi] * jac;
    if (!tables) continue;
    double *phi = ev->phi + (size_t)qi * (size_t)nb;
    double *dphi = ev->dphi + (size_t)qi * (size_t)nb * (size_t)dim;
    int i = 0;
    for (int l2 = 0; l2 < np[2]; l2++)
      for (int l1 = 0; l1 < np[1]; l1++)
        for (int l0 = 0; l0 < np[0]; l0++, i++) {
          /* d[k][l] is the value, d[k][np + l] the derivative in x_k. */
          double v0 = d[0][l0], v1 = d[1][l1], v2 = d[2][l2];
          phi[i] = v0 * v1 * v2;
          dphi[i * dim + 0] = d[0][np[0] + l0] * v1 * v2;
          if (dim > 1) dphi[i * dim + 1] = v0 * d[1][np[1] + l1] * v2;
          if (dim > 2) dphi[i * dim + 2] = v0 * v1 * d[2][np[2] + l2];
        }
  }
  return FEA_SUCCESS;
}

int fea_bspline_dof_on_side(const fea_space *s, fea_index i, int side) {
  const fea_bspline_space *b = bsp(s);
  const int k = side / 2;
  fea_index ik = i;
  for (int j = 0; j < k; j++) ik /= fea_knots_num_functions(&b->knots[j]);
  const fea_index nk = fea_knots_num_functions(&b->knots[k]);
  ik %= nk;
  return side % 2 ? ik == nk - 1 : ik == 0;
}

fea_status fea_bspline_face_values(const fea_space *s, fea_index e, int side,
                                   const fea_quadrature *qf, int *touches, double *x, double *ds,
                                   double *phi) {
  return fea_bspline_face_values_normal(s, e, side, qf, touches, x, ds, phi, NULL);
}

/* The outward unit normal at a face point from the map's Jacobian J
 * (row-major dim x dim, column j = d x / d xi_j): perpendicular to the face's
 * tangents (the columns other than k), pointing the way xi_k leaves the
 * patch (column k's way on a high side, against it on a low one). */
static void face_normal(int dim, int k, int high, const double *J, double *n) {
  double c[3] = {0, 0, 0};
  if (dim == 2) {
    const int a = 1 - k;
    n[0] = J[1 * 2 + a], n[1] = -J[0 * 2 + a];
  } else {
    const int a = k == 0 ? 1 : 0, b = k == 2 ? 1 : 2;
    const double u[3] = {J[0 * 3 + a], J[1 * 3 + a], J[2 * 3 + a]};
    const double v[3] = {J[0 * 3 + b], J[1 * 3 + b], J[2 * 3 + b]};
    n[0] = u[1] * v[2] - u[2] * v[1], n[1] = u[2] * v[0] - u[0] * v[2];
    n[2] = u[0] * v[1] - u[1] * v[0];
  }
  double dot = 0, len = 0;
  for (int j = 0; j < dim; j++) {
    c[j] = J[j * dim + k];
    dot += n[j] * c[j];
    len += n[j] * n[j];
  }
  const double sign = (dot >= 0) == (high != 0) ? 1.0 : -1.0;
  len = sqrt(len);
  for (int j = 0; j < dim; j++) n[j] = len > 0 ? sign * n[j] / len : 0.0;
}

fea_status fea_bspline_face_values_normal(const fea_space *s, fea_index e, int side,
                                          const fea_quadrature *qf, int *touches, double *x,
                                          double *ds, double *phi, double *normal) {
  const fea_bspline_space *b = bsp(s);
  const int dim = s->dim, nb = s->dofs_per_element, k = side / 2, high = side % 2;
  const element_box box = box_of(s, e);
  const fea_index *span = box.span, *ek = box.ek;
  const double *t0 = box.t0, *h = box.h;
  const int *np = box.np;
  *touches = high ? ek[k] == s->elements[k] - 1 : ek[k] == 0;
  if (!*touches) return FEA_SUCCESS;
  const fea_geometry_map *g = b->geo;
  fea_index gspan[3] = {0, 0, 0};
  if (g)
    for (int j = 0; j < dim; j++) gspan[j] = fea_knots_find_span(&g->knots[j], t0[j] + 0.5 * h[j]);
  const int npts = dim == 1 ? 1 : qf->npts;
  for (int q = 0; q < npts; q++) {
    double xi[3] = {0, 0, 0}, d[3][FEA_ELEMENT_T1D_LD], w = 1.0;
    for (int j = 0, a = 0; j < dim; j++) {
      if (j == k) {
        xi[j] = high ? t0[j] + h[j] : t0[j];
        continue;
      }
      xi[j] = t0[j] + qf->points[(size_t)q * (size_t)(dim - 1) + (size_t)a++] * h[j];
      w *= h[j];
    }
    if (dim > 1) w *= qf->weights[q];
    for (int j = 0; j < 3; j++) d[j][0] = 1.0;
    for (int j = 0; j < dim; j++) fea_bspline_basis_ders(&b->knots[j], span[j], xi[j], 0, d[j]);
    double W = 1.0, measure = 1.0;
    if (g) {
      /* The face's measure: the length of the tangent (2D) or the norm of
       * the cross product of the two tangents (3D), columns of J. */
      double J[9], dW[3];
      fea_geometry_map_eval(g, gspan, xi, x + (size_t)q * dim, J, &W, dW);
      if (!g->weights) W = 1.0;
      if (normal && dim > 1) face_normal(dim, k, high, J, normal + (size_t)q * dim);
      if (dim == 2) {
        const int a = 1 - k;
        measure = hypot(J[0 * 2 + a], J[1 * 2 + a]);
      } else if (dim == 3) {
        const int a = k == 0 ? 1 : 0, c = k == 2 ? 1 : 2;
        const double u[3] = {J[0 * 3 + a], J[1 * 3 + a], J[2 * 3 + a]};
        const double v[3] = {J[0 * 3 + c], J[1 * 3 + c], J[2 * 3 + c]};
        measure = sqrt(pow(u[1] * v[2] - u[2] * v[1], 2) + pow(u[2] * v[0] - u[0] * v[2], 2) +
                       pow(u[0] * v[1] - u[1] * v[0], 2));
      }
    } else {
      for (int j = 0; j < dim; j++) {
        x[(size_t)q * dim + j] = b->lower[j] + (xi[j] - b->knots[j].t[0]) * scale_of(b, j);
        if (j != k) measure *= scale_of(b, j);
        if (normal) normal[(size_t)q * dim + j] = j == k ? (high ? 1.0 : -1.0) : 0.0;
      }
    }
    if (normal && g && dim == 1) normal[q] = high ? 1.0 : -1.0;
    ds[q] = w * measure;
    int i = 0;
    for (int l2 = 0; l2 < np[2]; l2++)
      for (int l1 = 0; l1 < np[1]; l1++)
        for (int l0 = 0; l0 < np[0]; l0++, i++)
          phi[(size_t)q * nb + i] = d[0][l0] * d[1][l1] * d[2][l2] / W;
  }
  return FEA_SUCCESS;
}

/* "(0.5, 1.25)" and "[0, 1] x [0, 1]" for messages. */
static void describe_point(const fea_space *s, const double *x, char *pt, size_t npt, char *box,
                           size_t nbox) {
  const fea_bspline_space *b = bsp(s);
  size_t u = 0, v = 0;
  for (int k = 0; k < s->dim; k++) {
    u += (size_t)snprintf(pt + u, u < npt ? npt - u : 0, "%s%.17g", k ? ", " : "(", x[k]);
    v += (size_t)snprintf(box + v, v < nbox ? nbox - v : 0, "%s[%g, %g]", k ? " x " : "",
                          b->lower[k], b->upper[k]);
  }
  if (u < npt) snprintf(pt + u, npt - u, ")");
}

static fea_status locate(fea_space *s, const double *x, fea_index *e, double *ref) {
  const fea_bspline_space *b = bsp(s);
  FEA_CHECK(!b->geo, s->ctx, FEA_ERR_UNSUPPORTED,
            "point location on a B-spline space mapped by a geometry is not supported (it needs "
            "the inverse of the map)");
  fea_index elem = 0, stride = 1;
  for (int k = 0; k < s->dim; k++) {
    const fea_knots *kn = &b->knots[k];
    double lo = b->lower[k], hi = b->upper[k], tol = LOCATE_TOL * (hi - lo);
    if (!(x[k] >= lo - tol && x[k] <= hi + tol)) {
      char pt[128], box[128];
      describe_point(s, x, pt, sizeof pt, box, sizeof box);
      return FEA_ERROR(s->ctx, FEA_ERR_INVALID_ARG, "point %s is outside the domain %s", pt, box);
    }
    double xk = fmin(fmax(x[k], lo), hi);
    double t0 = kn->t[0], t1 = kn->t[kn->m - 1];
    double xi = fmin(fmax(t0 + (xk - lo) / (hi - lo) * (t1 - t0), t0), t1);
    fea_index sp = fea_knots_find_span(kn, xi);
    /* The element of span sp: the spans are sorted, so bisect. */
    fea_index lo_e = 0, hi_e = kn->nelem - 1;
    while (lo_e < hi_e) {
      fea_index mid = lo_e + (hi_e - lo_e) / 2;
      if (kn->span[mid] < sp)
        lo_e = mid + 1;
      else
        hi_e = mid;
    }
    double a = kn->t[sp], h = kn->t[sp + 1] - a;
    ref[k] = fmin(fmax((xi - a) / h, 0.0), 1.0);
    elem += lo_e * stride;
    stride *= kn->nelem;
  }
  *e = elem;
  return FEA_SUCCESS;
}

/* The other directions' index split of a lexicographic array with sizes n[]
 * around direction k: index = i_in + inner * (i_k + n_k * i_out). */
static void split_sizes(int dim, const fea_index n[3], int k, fea_index *inner, fea_index *outer) {
  *inner = 1;
  *outer = 1;
  for (int j = 0; j < k; j++) *inner *= n[j];
  for (int j = k + 1; j < dim; j++) *outer *= n[j];
}

/* Lines along direction k of src (sizes n[]) into dst (n_k x lines), and back. */
static void pack_lines(int dim, const fea_index n[3], int k, const double *src, double *dst) {
  fea_index inner, outer, nk = n[k];
  split_sizes(dim, n, k, &inner, &outer);
  for (fea_index o = 0; o < outer; o++)
    for (fea_index i = 0; i < nk; i++)
      for (fea_index a = 0; a < inner; a++)
        dst[i + nk * (a + inner * o)] = src[a + inner * (i + nk * o)];
}

static void unpack_lines(int dim, const fea_index n[3], int k, const double *src, double *dst) {
  fea_index inner, outer, nk = n[k];
  split_sizes(dim, n, k, &inner, &outer);
  for (fea_index o = 0; o < outer; o++)
    for (fea_index i = 0; i < nk; i++)
      for (fea_index a = 0; a < inner; a++)
        dst[a + inner * (i + nk * o)] = src[i + nk * (a + inner * o)];
}

/* Collocation at the tensor Greville points: the collocation matrix is the
 * Kronecker product of the 1D ones, so one banded solve per direction (all
 * lines of that direction as right-hand sides of one LAPACK call) inverts it. */
static fea_status interpolate(const fea_space *s, fea_scalar_fn g, void *user, double *coeffs) {
  const fea_bspline_space *b = bsp(s);
  const int dim = s->dim;
  const fea_index N = s->num_dofs;
  fea_index n[3] = {1, 1, 1}, total = 0;
  for (int k = 0; k < dim; k++) {
    n[k] = fea_knots_num_functions(&b->knots[k]);
    total += n[k];
  }
  double *f = malloc((size_t)N * sizeof *f), *buf = malloc((size_t)N * sizeof *buf);
  double *gp = malloc((size_t)total * sizeof *gp);
  fea_status st = FEA_SUCCESS;
  if (!f || !buf || !gp) {
    st = FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to interpolate %lld coefficients",
                   (long long)N);
    goto out;
  }
  double *gk[3] = {gp, gp, gp};
  for (int k = 0; k < dim; k++) {
    if (k) gk[k] = gk[k - 1] + n[k - 1];
    fea_knots_greville(&b->knots[k], gk[k]);
    if (b->geo) continue; /* parameters: mapped below, point by point */
    /* To physical coordinates. */
    double sc = scale_of(b, k), t0 = b->knots[k].t[0];
    for (fea_index i = 0; i < n[k]; i++)
      gk[k][i] = fmin(fmax(b->lower[k] + (gk[k][i] - t0) * sc, b->lower[k]), b->upper[k]);
  }
  for (fea_index idx = 0; idx < N; idx++) {
    fea_index r = idx;
    double x[3] = {0, 0, 0}, scale = 1.0;
    for (int k = 0; k < dim; k++) {
      x[k] = gk[k][r % n[k]];
      r /= n[k];
    }
    if (b->geo) {
      /* g at the mapped Greville point; over a NURBS map the coefficients of
       * sum c_i N_i / W = g are those of the polynomial interpolant of g W. */
      const fea_geometry_map *gm = b->geo;
      fea_index gs[3] = {0, 0, 0};
      double xi[3] = {x[0], x[1], x[2]}, J[9], dW[3];
      for (int k = 0; k < dim; k++) gs[k] = fea_knots_find_span(&gm->knots[k], xi[k]);
      fea_geometry_map_eval(gm, gs, xi, x, J, &scale, dW);
      if (!gm->weights) scale = 1.0;
    }
    f[idx] = g(x, user) * scale;
    if (!isfinite(f[idx])) {
      char pt[128], box[128];
      describe_point(s, x, pt, sizeof pt, box, sizeof box);
      st = FEA_ERROR(s->ctx, FEA_ERR_INVALID_ARG, "the function returned %g at the point %s",
                     f[idx], pt);
      goto out;
    }
  }
  for (int k = 0; k < dim && st == FEA_SUCCESS; k++) {
    pack_lines(dim, n, k, f, buf);
    st = fea_knots_greville_solve(s->ctx, &b->knots[k], N / n[k], buf, n[k]);
    if (st == FEA_SUCCESS) unpack_lines(dim, n, k, buf, f);
  }
  if (st == FEA_SUCCESS) memcpy(coeffs, f, (size_t)N * sizeof *f);
out:
  free(f);
  free(buf);
  free(gp);
  return st;
}

fea_status fea_space_bspline_transfer(const fea_space *coarse, const double *cc,
                                      const fea_space *fine, double *fc) {
  FEA_CHECK(coarse->kind == FEA_SPACE_BSPLINE && fine->kind == FEA_SPACE_BSPLINE &&
                coarse->dim == fine->dim,
            coarse->ctx, FEA_ERR_INVALID_ARG,
            "a B-spline transfer needs two B-spline spaces of one dimension");
  const fea_bspline_space *bc = bsp(coarse), *bf = bsp(fine);
  const int dim = coarse->dim;
  /* On one geometry both bases divide by the same W: the polynomial
   * coefficients transfer as on the box. Another map is another domain. */
  FEA_CHECK(fea_geometry_map_equal(bc->geo, bf->geo), coarse->ctx, FEA_ERR_INVALID_ARG,
            "the fine space does not contain the coarse one: %s",
            !bc->geo || !bf->geo ? "one is mapped by a geometry and the other is not"
                                 : "they are mapped by different geometries");
  for (int k = 0; k < dim; k++) {
    double tol = LOCATE_TOL * (bc->upper[k] - bc->lower[k]);
    FEA_CHECK(fabs(bc->lower[k] - bf->lower[k]) <= tol && fabs(bc->upper[k] - bf->upper[k]) <= tol,
              coarse->ctx, FEA_ERR_INVALID_ARG,
              "the fine space does not contain the coarse one: in direction %d the boxes "
              "[%g, %g] and [%g, %g] differ",
              k, bc->lower[k], bc->upper[k], bf->lower[k], bf->upper[k]);
  }
  /* Nesting first, in every direction (no lines to transfer yet): then every
   * n_fine >= n_coarse, and no intermediate array exceeds the fine one. */
  for (int k = 0; k < dim; k++)
    FEA_CALL(fea_knots_transfer_apply(coarse->ctx, k, &bc->knots[k], &bf->knots[k], 0, NULL, NULL));
  /* Direction by direction: the array changes from coarse to fine size in
   * direction k while the later directions are still coarse. */
  fea_index n[3] = {1, 1, 1};
  for (int k = 0; k < dim; k++) n[k] = fea_knots_num_functions(&bc->knots[k]);
  size_t cap = (size_t)fine->num_dofs;
  double *cur = malloc(cap * sizeof *cur), *x = malloc(cap * sizeof *x),
         *y = malloc(cap * sizeof *y);
  fea_status st = FEA_SUCCESS;
  if (!cur || !x || !y) {
    st = FEA_ERROR(coarse->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to transfer %lld coefficients",
                   (long long)fine->num_dofs);
  } else {
    memcpy(cur, cc, (size_t)coarse->num_dofs * sizeof *cur);
  }
  for (int k = 0; k < dim && st == FEA_SUCCESS; k++) {
    fea_index nf = fea_knots_num_functions(&bf->knots[k]), lines = 1;
    for (int j = 0; j < dim; j++) lines *= j == k ? 1 : n[j];
    pack_lines(dim, n, k, cur, x);
    st = fea_knots_transfer_apply(coarse->ctx, k, &bc->knots[k], &bf->knots[k], lines, x, y);
    n[k] = nf;
    if (st == FEA_SUCCESS) unpack_lines(dim, n, k, y, cur);
  }
  if (st == FEA_SUCCESS) memcpy(fc, cur, cap * sizeof *cur);
  free(cur);
  free(x);
  free(y);
  return st;
}

static void destroy(fea_space *s) {
  fea_bspline_space *b = s->impl;
  if (!b) return;
  for (int k = 0; k < 3; k++) fea_knots_free(&b->knots[k]);
  fea_geometry_map_free(b->geo);
  free(b);
  s->impl = NULL;
}

static const struct fea_space_ops bspline_ops = {
    .element_dofs = element_dofs,
    .element_values = element_values,
    .locate = locate,
    .interpolate = interpolate,
    .destroy = destroy,
};

/* The sorted DoFs with index 0 or n_k - 1 in some direction, listed row by
 * row along direction 0 (a row on the boundary in another direction is
 * whole, any other row has its two ends): work and memory O(boundary), not
 * O(DoFs), so that a space far too large to solve on is still refused or
 * built at once. The list's size is checked against the memory budget
 * before it is allocated. */
static fea_status boundary(const fea_context *ctx, int dim, const fea_index n[3], fea_index total,
                           fea_index *count, fea_index **out) {
  fea_index interior = 1;
  for (int k = 0; k < dim; k++) interior *= n[k] > 2 ? n[k] - 2 : 0;
  *count = total - interior;
  char what[96];
  snprintf(what, sizeof what, "the list of %lld boundary DoFs", (long long)*count);
  FEA_CALL(fea_memory_require(ctx, 0, fea_bytes((double)*count, sizeof(fea_index)), what));
  fea_index *d = malloc((size_t)(*count > 0 ? *count : 1) * sizeof *d);
  FEA_CHECK(d, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld boundary DoFs", (long long)*count);
  fea_index c = 0;
  const fea_index rows = total / n[0];
  for (fea_index row = 0; row < rows; row++) {
    int on = 0;
    for (fea_index r = row, k = 1; k < dim; k++) {
      fea_index i = r % n[k];
      r /= n[k];
      on |= i == 0 || i == n[k] - 1;
    }
    const fea_index first = row * n[0];
    if (on || n[0] <= 2) {
      for (fea_index i = 0; i < n[0]; i++) d[c++] = first + i;
    } else {
      d[c++] = first;
      d[c++] = first + n[0] - 1;
    }
  }
  *out = d;
  return FEA_SUCCESS;
}

/* Every element of direction k, mapped onto [lower, upper]: wider than the
 * rounding of its knots and coordinates, and inside the window of sizes
 * whose integrals are normal doubles (fea_cell_scale_problem). */
static fea_status check_element_sizes(const fea_context *ctx, int dim, int k, const fea_knots *kn,
                                      double lower, double upper) {
  const double range = kn->t[kn->m - 1] - kn->t[0];
  const double tmag = fmax(fabs(kn->t[0]), fabs(kn->t[kn->m - 1]));
  const double xmag = fmax(fabs(lower), fabs(upper));
  for (fea_index e = 0; e < kn->nelem; e++) {
    const fea_index s = kn->span[e];
    const double w = kn->t[s + 1] - kn->t[s], width = (upper - lower) * (w / range);
    FEA_CHECK(w > 1e-14 * tmag && width > 1e-14 * xmag, ctx, FEA_ERR_INVALID_ARG,
              "element %lld of direction %d, knot span [%.17g, %.17g], is %g wide on "
              "[%g, %g]: below the rounding of its knots or coordinates",
              (long long)e, k, kn->t[s], kn->t[s + 1], width, lower, upper);
    char why[200];
    FEA_CHECK(!fea_cell_scale_problem(width, dim, why, sizeof why), ctx, FEA_ERR_INVALID_ARG,
              "element %lld of direction %d %s", (long long)e, k, why);
  }
  return FEA_SUCCESS;
}

fea_status fea_space_bspline_build(fea_context *ctx, int dim, const fea_knots knots[3],
                                   const double lower[3], const double upper[3],
                                   const fea_geometry_map *geo, fea_space **out) {
  *out = NULL;
  FEA_CHECK(dim >= 1 && dim <= 3, ctx, FEA_ERR_INVALID_ARG, "dimension %d is outside 1..3", dim);
  fea_bspline_space *b = calloc(1, sizeof *b);
  FEA_CHECK(b, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a B-spline space");
  fea_status st = FEA_SUCCESS;
  fea_index n[3] = {1, 1, 1}, total = 1, nelem = 1;
  int nb = 1;
  for (int k = 0; k < dim && st == FEA_SUCCESS; k++) {
    st = fea_knots_create(ctx, knots[k].p, knots[k].m, knots[k].t, &b->knots[k]);
    if (st != FEA_SUCCESS) break;
    b->lower[k] = lower[k];
    b->upper[k] = upper[k];
    st = check_element_sizes(ctx, dim, k, &b->knots[k], lower[k], upper[k]);
    if (st != FEA_SUCCESS) break;
    n[k] = fea_knots_num_functions(&b->knots[k]);
    if (total > INT64_MAX / n[k] || nelem > INT64_MAX / b->knots[k].nelem) {
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "the tensor product has too many DoFs");
      break;
    }
    total *= n[k];
    nelem *= b->knots[k].nelem;
    nb *= knots[k].p + 1;
  }
  if (st == FEA_SUCCESS && geo) {
    st = fea_geometry_map_check_refines(ctx, geo, b->knots);
    if (st == FEA_SUCCESS) st = fea_geometry_map_copy(ctx, geo, &b->geo);
  }
  fea_index nbdry = 0, *bdry = NULL;
  if (st == FEA_SUCCESS) st = boundary(ctx, dim, n, total, &nbdry, &bdry);
  fea_space *s = NULL;
  if (st == FEA_SUCCESS) st = fea_space_alloc(ctx, &s);
  if (st != FEA_SUCCESS) {
    free(bdry);
    for (int k = 0; k < 3; k++) fea_knots_free(&b->knots[k]);
    fea_geometry_map_free(b->geo);
    free(b);
    return st;
  }
  static const fea_cell_type cells[3] = {FEA_CELL_INTERVAL, FEA_CELL_QUAD, FEA_CELL_HEXAHEDRON};
  s->kind = FEA_SPACE_BSPLINE;
  s->mesh = NULL;
  s->cell = cells[dim - 1];
  s->dim = dim;
  for (int k = 0; k < 3; k++) {
    s->degree[k] = k < dim ? b->knots[k].p : 0;
    s->elements[k] = k < dim ? b->knots[k].nelem : 0;
  }
  s->num_dofs = total;
  s->num_elements = nelem;
  s->dofs_per_element = nb;
  s->num_boundary_dofs = nbdry;
  s->boundary_dofs = bdry;
  s->ops = &bspline_ops;
  s->impl = b;
  *out = s;
  return FEA_SUCCESS;
}

fea_status fea_space_bspline_from_desc(fea_context *ctx, const fea_bspline_desc *d,
                                       fea_space **out) {
  fea_knots knots[3];
  memset(knots, 0, sizeof knots);
  fea_geometry_map *geo = NULL;
  fea_status st = FEA_SUCCESS;
  double lower[3], upper[3], a[3] = {0, 0, 0}, z[3] = {1, 1, 1};
  memcpy(lower, d->lower, sizeof lower);
  memcpy(upper, d->upper, sizeof upper);
  if (d->geometry) {
    /* Uniform knots span the geometry's parameter range, which is also the
     * "box": element sizes are then checked in parameter units. */
    st = fea_geometry_map_create(ctx, d->dim, d->geometry, &geo);
    for (int k = 0; k < d->dim && st == FEA_SUCCESS; k++) {
      a[k] = geo->knots[k].t[0];
      z[k] = geo->knots[k].t[geo->knots[k].m - 1];
    }
  }
  for (int k = 0; k < d->dim && st == FEA_SUCCESS; k++) {
    st = d->knots[k] ? fea_knots_create(ctx, d->degree[k], d->num_knots[k], d->knots[k], &knots[k])
                     : fea_knots_uniform(ctx, d->degree[k], d->n[k], a[k], z[k], &knots[k]);
    if (st == FEA_SUCCESS && geo) {
      lower[k] = knots[k].t[0];
      upper[k] = knots[k].t[knots[k].m - 1];
    }
  }
  if (st == FEA_SUCCESS) st = fea_space_bspline_build(ctx, d->dim, knots, lower, upper, geo, out);
  for (int k = 0; k < 3; k++) fea_knots_free(&knots[k]);
  fea_geometry_map_free(geo);
  return st;
}

fea_status fea_space_bspline_with_knots(const fea_space *space, int dir, const fea_knots *kn,
                                        fea_space **out) {
  const fea_bspline_space *b = space->impl;
  fea_knots knots[3];
  memcpy(knots, b->knots, sizeof knots);
  knots[dir] = *kn; /* shallow: build copies */
  FEA_CALL(fea_space_bspline_build(space->ctx, space->dim, knots, b->lower, b->upper, b->geo, out));
  (*out)->ncomp = space->ncomp; /* a refined vector space keeps its components */
  return FEA_SUCCESS;
}
