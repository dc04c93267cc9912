/* Geometry maps of B-spline patches (geometry-map.h): their checks, and
 * their evaluation with derivatives at a parameter point, tensor-product
 * sums over the (p + 1)^d control points of the span. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "geometry-map.h"
#include "base/memory-limit.h"

void fea_geometry_map_free(fea_geometry_map *g) {
  if (!g) return;
  for (int k = 0; k < 3; k++) fea_knots_free(&g->knots[k]);
  free(g->points);
  free(g->weights);
  free(g);
}

fea_status fea_geometry_map_create(const fea_context *ctx, int dim, const fea_geometry_desc *d,
                                   fea_geometry_map **out) {
  *out = NULL;
  fea_index n[3] = {1, 1, 1}, count = 1;
  for (int k = 0; k < dim; k++) {
    FEA_CHECK(d->degree[k] >= 1 && d->degree[k] <= FEA_BSPLINE_MAX_DEGREE, ctx, FEA_ERR_INVALID_ARG,
              "geometry: degree %d in direction %d is outside 1..%d", d->degree[k], k,
              FEA_BSPLINE_MAX_DEGREE);
    FEA_CHECK(d->knots[k], ctx, FEA_ERR_INVALID_ARG, "geometry: knots[%d] is NULL", k);
    FEA_CALL(fea_knots_check(ctx, k, d->degree[k], d->num_knots[k], d->knots[k]));
    n[k] = d->num_knots[k] - d->degree[k] - 1;
    FEA_CHECK(count <= INT64_MAX / n[k], ctx, FEA_ERR_INVALID_ARG,
              "geometry: the control net has too many points");
    count *= n[k];
  }
  FEA_CHECK(d->control_points, ctx, FEA_ERR_INVALID_ARG, "geometry: control_points is NULL");
  FEA_CHECK(d->num_control_points == count, ctx, FEA_ERR_INVALID_ARG,
            "geometry: num_control_points is %lld but the knot vectors give %lld functions "
            "(%lld x %lld x %lld)",
            (long long)d->num_control_points, (long long)count, (long long)n[0], (long long)n[1],
            (long long)n[2]);
  for (fea_index i = 0; i < count; i++) {
    for (int a = 0; a < dim; a++)
      FEA_CHECK(isfinite(d->control_points[i * dim + a]), ctx, FEA_ERR_INVALID_ARG,
                "geometry: control point %lld has coordinate %d = %g", (long long)i, a,
                d->control_points[i * dim + a]);
    if (d->weights)
      FEA_CHECK(isfinite(d->weights[i]) && d->weights[i] > 0, ctx, FEA_ERR_INVALID_ARG,
                "geometry: weight %lld is %g; weights must be finite and positive", (long long)i,
                d->weights[i]);
  }
  FEA_CALL(fea_memory_require(ctx, 0,
                              fea_bytes((double)count,
                                        sizeof(double) * (size_t)(dim + (d->weights ? 1 : 0))),
                              "the geometry's control net"));
  fea_geometry_map *g = calloc(1, sizeof *g);
  FEA_CHECK(g, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a geometry map");
  g->dim = dim;
  fea_status st = FEA_SUCCESS;
  for (int k = 0; k < dim && st == FEA_SUCCESS; k++)
    st = fea_knots_create(ctx, d->degree[k], d->num_knots[k], d->knots[k], &g->knots[k]);
  for (int k = 0; k < 3; k++) g->n[k] = n[k];
  if (st == FEA_SUCCESS) {
    g->points = malloc((size_t)count * (size_t)dim * sizeof *g->points);
    g->weights = d->weights ? malloc((size_t)count * sizeof *g->weights) : NULL;
    if (!g->points || (d->weights && !g->weights))
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld control points",
                     (long long)count);
  }
  if (st != FEA_SUCCESS) {
    fea_geometry_map_free(g);
    return st;
  }
  memcpy(g->points, d->control_points, (size_t)count * (size_t)dim * sizeof *g->points);
  if (d->weights) memcpy(g->weights, d->weights, (size_t)count * sizeof *g->weights);
  *out = g;
  return FEA_SUCCESS;
}

fea_status fea_geometry_map_copy(const fea_context *ctx, const fea_geometry_map *g,
                                 fea_geometry_map **out) {
  fea_geometry_desc d = FEA_GEOMETRY_DESC_INIT;
  for (int k = 0; k < g->dim; k++) {
    d.degree[k] = g->knots[k].p;
    d.knots[k] = g->knots[k].t;
    d.num_knots[k] = g->knots[k].m;
  }
  d.control_points = g->points;
  d.num_control_points = g->n[0] * g->n[1] * g->n[2];
  d.weights = g->weights;
  return fea_geometry_map_create(ctx, g->dim, &d, out);
}

int fea_geometry_map_equal(const fea_geometry_map *a, const fea_geometry_map *b) {
  if (!a || !b) return a == b;
  if (a->dim != b->dim || !a->weights != !b->weights) return 0;
  for (int k = 0; k < a->dim; k++) {
    const fea_knots *ka = &a->knots[k], *kb = &b->knots[k];
    if (ka->p != kb->p || ka->m != kb->m || memcmp(ka->t, kb->t, (size_t)ka->m * sizeof *ka->t))
      return 0;
  }
  const size_t count = (size_t)(a->n[0] * a->n[1] * a->n[2]);
  if (memcmp(a->points, b->points, count * (size_t)a->dim * sizeof *a->points)) return 0;
  return !a->weights || !memcmp(a->weights, b->weights, count * sizeof *a->weights);
}

fea_status fea_geometry_map_check_refines(const fea_context *ctx, const fea_geometry_map *g,
                                          const fea_knots *knots) {
  for (int k = 0; k < g->dim; k++) {
    fea_status st = fea_knots_check_nested(ctx, k, &g->knots[k], &knots[k]);
    if (st != FEA_SUCCESS) {
      char why[FEA_ERROR_LEN];
      snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
      return FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                       "the space's knots do not refine its geometry's (the space must contain "
                       "the geometry's space): %s",
                       why);
    }
  }
  return FEA_SUCCESS;
}

void fea_geometry_map_eval(const fea_geometry_map *g, const fea_index span[3], const double xi[3],
                           double *x, double *J, double *W, double *dW) {
  enum { P1 = FEA_BSPLINE_MAX_DEGREE + 1 };
  const int dim = g->dim;
  double d[3][2 * P1];
  int np[3] = {1, 1, 1};
  for (int k = 0; k < 3; k++) d[k][0] = 1.0, d[k][1] = 0.0;
  for (int k = 0; k < dim; k++) {
    np[k] = g->knots[k].p + 1;
    fea_bspline_basis_ders(&g->knots[k], span[k], xi[k], 1, d[k]);
  }
  /* Homogeneous sums: the weighted point and its parameter derivatives
   * (h[0..dim) the point, h[dim] the weight), then the quotient rule. */
  double h[4] = {0, 0, 0, 0}, dh[3][4];
  memset(dh, 0, sizeof dh);
  const fea_index first[3] = {span[0] - (np[0] - 1), dim > 1 ? span[1] - (np[1] - 1) : 0,
                              dim > 2 ? span[2] - (np[2] - 1) : 0};
  for (int l2 = 0; l2 < np[2]; l2++)
    for (int l1 = 0; l1 < np[1]; l1++)
      for (int l0 = 0; l0 < np[0]; l0++) {
        const fea_index i = (first[0] + l0) +
                            g->n[0] * ((first[1] + l1) + g->n[1] * (first[2] + l2));
        const double w = g->weights ? g->weights[i] : 1.0;
        const double v[3] = {d[0][l0], d[1][l1], d[2][l2]};
        const double dv[3] = {d[0][np[0] + l0], d[1][np[1] + l1], d[2][np[2] + l2]};
        const double n = v[0] * v[1] * v[2] * w;
        double dn[3];
        dn[0] = dv[0] * v[1] * v[2] * w;
        dn[1] = v[0] * dv[1] * v[2] * w;
        dn[2] = v[0] * v[1] * dv[2] * w;
        for (int a = 0; a < dim; a++) {
          const double pa = g->points[i * dim + a];
          h[a] += n * pa;
          for (int k = 0; k < dim; k++) dh[k][a] += dn[k] * pa;
        }
        h[dim] += n;
        for (int k = 0; k < dim; k++) dh[k][dim] += dn[k];
      }
  const double w = h[dim];
  *W = w;
  for (int k = 0; k < dim; k++) dW[k] = dh[k][dim];
  for (int a = 0; a < dim; a++) {
    x[a] = h[a] / w;
    for (int k = 0; k < dim; k++) J[a * dim + k] = (dh[k][a] - x[a] * dh[k][dim]) / w;
  }
}
