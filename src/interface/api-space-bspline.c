/* B-spline space API: argument checks, then the knot operations of
 * bspline.c and the constructor of space-bspline.c.
 *
 * Open uniform knots from n elements live on the parameter range [0, 1]
 * whatever the box; user knots keep their own range. Either maps affinely
 * onto [lower, upper], so knots passed to fea_space_bspline_insert_knots are
 * in the same parameter units fea_space_bspline_get_knots returns. */
#include <math.h>
#include <string.h>

#include "internal/error.h"
#include "disc/space.h"
#include "base/struct-copy.h"

static fea_status check_bspline(const fea_space *space) {
  FEA_CHECK(space->kind == FEA_SPACE_BSPLINE, space->ctx, FEA_ERR_INVALID_ARG,
            "the space is not a B-spline space (it is a Lagrange space)");
  return FEA_SUCCESS;
}

static fea_status check_dir(const fea_space *space, int dir) {
  FEA_CHECK(dir >= 0 && dir < space->dim, space->ctx, FEA_ERR_INVALID_ARG,
            "direction %d is outside 0..%d of this %dD space", dir, space->dim - 1, space->dim);
  return FEA_SUCCESS;
}

/* Every field of the caller's descriptor checked, with the direction named. */
static fea_status check_desc(fea_context *ctx, const fea_bspline_desc *d) {
  FEA_CHECK(d->dim >= 1 && d->dim <= 3, ctx, FEA_ERR_INVALID_ARG, "dimension %d is outside 1..3",
            d->dim);
  for (int k = 0; k < d->dim; k++) {
    FEA_CHECK(d->degree[k] >= 1 && d->degree[k] <= FEA_BSPLINE_MAX_DEGREE, ctx, FEA_ERR_INVALID_ARG,
              "degree %d in direction %d is outside 1..%d", d->degree[k], k,
              FEA_BSPLINE_MAX_DEGREE);
    FEA_CHECK(isfinite(d->lower[k]) && isfinite(d->upper[k]) && d->lower[k] < d->upper[k], ctx,
              FEA_ERR_INVALID_ARG,
              "the box in direction %d is [%g, %g]; it needs finite lower < upper", k, d->lower[k],
              d->upper[k]);
    if (d->knots[k]) {
      FEA_CALL(fea_knots_check(ctx, k, d->degree[k], d->num_knots[k], d->knots[k]));
    } else {
      FEA_CHECK(d->num_knots[k] == 0, ctx, FEA_ERR_INVALID_ARG,
                "num_knots[%d] is %lld but knots[%d] is NULL", k, (long long)d->num_knots[k], k);
      FEA_CHECK(d->n[k] >= 1, ctx, FEA_ERR_INVALID_ARG,
                "n[%d] is %lld elements; at least 1 is needed", k, (long long)d->n[k]);
    }
  }
  if (d->geometry)
    for (int k = 0; k < d->dim; k++)
      FEA_CHECK(d->lower[k] == 0.0 && d->upper[k] == 1.0, ctx, FEA_ERR_INVALID_ARG,
                "the box in direction %d is [%g, %g], but a space with a geometry lives on the "
                "mapped patch: leave lower and upper at their defaults 0 and 1",
                k, d->lower[k], d->upper[k]);
  return FEA_SUCCESS;
}

fea_status fea_space_create_bspline(fea_context *ctx, const fea_bspline_desc *desc,
                                    fea_space **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(desc, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_bspline_desc));
  FEA_CALL(check_desc(ctx, &d));
  /* The geometry's descriptor is size-versioned too: copied in at ours. */
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  if (d.geometry) {
    FEA_CALL(fea_struct_copy_in(ctx, &g, d.geometry, "desc->geometry", &fea_struct_geometry_desc));
    d.geometry = &g;
  }
  return fea_space_bspline_from_desc(ctx, &d, out);
}

fea_status fea_space_bspline_insert_knots(const fea_space *space, int dir, fea_index count,
                                          const double *knots, fea_space **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(out, space->ctx);
  FEA_CALL(check_bspline(space));
  FEA_CALL(check_dir(space, dir));
  FEA_CHECK(count >= 0, space->ctx, FEA_ERR_INVALID_ARG, "knot count %lld is negative",
            (long long)count);
  FEA_CHECK(knots || count == 0, space->ctx, FEA_ERR_INVALID_ARG,
            "argument 'knots' is NULL for %lld knots", (long long)count);
  const fea_bspline_space *b = space->impl;
  fea_knots kn;
  FEA_CALL(fea_knots_insert(space->ctx, &b->knots[dir], count, knots, &kn));
  fea_status st = fea_space_bspline_with_knots(space, dir, &kn, out);
  fea_knots_free(&kn);
  return st;
}

fea_status fea_space_bspline_elevate_degree(const fea_space *space, int dir, int t,
                                            fea_space **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(out, space->ctx);
  FEA_CALL(check_bspline(space));
  FEA_CALL(check_dir(space, dir));
  FEA_CHECK(t >= 0, space->ctx, FEA_ERR_INVALID_ARG, "degree raise %d is negative", t);
  const fea_bspline_space *b = space->impl;
  /* Compared as max - p, and the sum shown in long long: p + t can overflow. */
  const int p = b->knots[dir].p;
  FEA_CHECK(t <= FEA_BSPLINE_MAX_DEGREE - p, space->ctx, FEA_ERR_INVALID_ARG,
            "raising degree %d by %d gives %lld, outside 1..%d", p, t, (long long)p + t,
            FEA_BSPLINE_MAX_DEGREE);
  fea_knots kn;
  FEA_CALL(fea_knots_elevate(space->ctx, &b->knots[dir], t, &kn));
  fea_status st = fea_space_bspline_with_knots(space, dir, &kn, out);
  fea_knots_free(&kn);
  return st;
}

fea_status fea_space_bspline_get_knots(const fea_space *space, int dir, fea_index capacity,
                                       double *knots, fea_index *count) {
  FEA_ENTRY();
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(count, space->ctx);
  FEA_CALL(check_bspline(space));
  FEA_CALL(check_dir(space, dir));
  const fea_knots *kn = &((const fea_bspline_space *)space->impl)->knots[dir];
  *count = kn->m;
  if (!knots) return FEA_SUCCESS;
  FEA_CHECK(capacity >= kn->m, space->ctx, FEA_ERR_DIMENSION,
            "capacity %lld < %lld knots in direction %d", (long long)capacity, (long long)kn->m,
            dir);
  memcpy(knots, kn->t, (size_t)kn->m * sizeof *knots);
  return FEA_SUCCESS;
}
