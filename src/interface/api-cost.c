/* Cost-model API: argument checks and the size-versioned copy of the result;
 * the models themselves are in src/multifrontal/cost-model.c. */
#include <math.h>
#include <stddef.h>

#include "disc/bspline.h"
#include "multifrontal/cost-model.h"
#include "internal/error.h"
#include "base/struct-copy.h"

static fea_status check_query(const fea_context *ctx, const fea_cost_query *q, fea_cost_query *v) {
  FEA_CHECK_NULL(q, ctx);
  fea_cost_query d = FEA_COST_QUERY_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, q, "query", &fea_struct_cost_query));
  FEA_CHECK(d.dim >= 1 && d.dim <= 3, ctx, FEA_ERR_INVALID_ARG,
            "query.dim is %d; it must be 1, 2 or 3", d.dim);
  FEA_CHECK(d.p >= 1 && d.p <= FEA_BSPLINE_MAX_DEGREE, ctx, FEA_ERR_INVALID_ARG,
            "query.p is %d; the degree must be in 1..%d", d.p, FEA_BSPLINE_MAX_DEGREE);
  FEA_CHECK(d.n >= 1, ctx, FEA_ERR_INVALID_ARG,
            "query.n is %lld elements per direction; at least 1 is needed", (long long)d.n);
  FEA_CHECK(d.nproc >= 0, ctx, FEA_ERR_INVALID_ARG,
            "query.nproc is %d; it must be >= 1, or 0 for unlimited processors", d.nproc);
  for (int s = 0; d.sides && s < 2 * d.dim; s++)
    FEA_CHECK(d.sides[s] >= FEA_BC_DIRICHLET && d.sides[s] <= FEA_BC_ROBIN, ctx,
              FEA_ERR_INVALID_ARG, "query.sides[%d] is %d; it must be a fea_bc_type (0..%d)", s,
              (int)d.sides[s], (int)FEA_BC_ROBIN);
  FEA_CHECK(d.num_components >= 1 && d.num_components <= 8, ctx, FEA_ERR_INVALID_ARG,
            "query.num_components is %d; it must be in 1..8", d.num_components);
  *v = d;
  return FEA_SUCCESS;
}

static fea_status check_out(const fea_context *ctx, const fea_cost *out) {
  FEA_CHECK_NULL(out, ctx);
  return fea_struct_check(ctx, out, "out", &fea_struct_cost);
}

fea_status fea_cost_model_paper(const fea_cost_query *q, fea_cost *out) {
  FEA_ENTRY();
  fea_cost_query v;
  FEA_CALL(check_query(NULL, q, &v));
  FEA_CALL(check_out(NULL, out));
  fea_cost c = FEA_COST_INIT;
  fea_cost_paper_eval(v.dim, v.p, v.n, v.num_components, v.nproc, &c);
  return fea_struct_copy_out(NULL, out, &c, "out", &fea_struct_cost);
}

fea_status fea_cost_model_exact(fea_context *ctx, const fea_cost_query *q, fea_cost *out) {
  FEA_ENTRY();
  FEA_CHECK_NULL(ctx, NULL);
  fea_cost_query v;
  FEA_CALL(check_query(ctx, q, &v));
  FEA_CALL(check_out(ctx, out));
  fea_cost c = FEA_COST_INIT;
  FEA_CALL(fea_cost_exact_eval(ctx, v.dim, v.p, v.n, v.num_components, v.sides, v.nproc, &c, NULL));
  return fea_struct_copy_out(ctx, out, &c, "out", &fea_struct_cost);
}

fea_status fea_cost_model_fits(fea_context *ctx, const fea_cost_query *q, uint64_t bytes,
                               int *fits) {
  FEA_ENTRY();
  FEA_CHECK_NULL(ctx, NULL);
  fea_cost_query v;
  FEA_CALL(check_query(ctx, q, &v));
  FEA_CHECK_NULL(fits, ctx);
  return fea_cost_fits_eval(ctx, v.dim, v.p, v.n, v.num_components, v.sides, bytes, fits);
}

fea_status fea_cost_memory_3d_paper(int p, double N, double *bytes) {
  FEA_ENTRY();
  FEA_CHECK(p >= 1 && p <= FEA_BSPLINE_MAX_DEGREE, NULL, FEA_ERR_INVALID_ARG,
            "p is %d; the degree must be in 1..%d", p, FEA_BSPLINE_MAX_DEGREE);
  FEA_CHECK(isfinite(N) && N >= 1.0, NULL, FEA_ERR_INVALID_ARG,
            "N is %g unknowns; it must be finite and >= 1", N);
  FEA_CHECK_NULL(bytes, NULL);
  /* 8 bytes per entry, L and U, of a root front of order ~ p N^(2/3). */
  *bytes = 8.0 * 2.0 * (double)p * p * pow(N, 4.0 / 3.0);
  return FEA_SUCCESS;
}

fea_status fea_cost_strong_scaling_paper(const fea_cost_query *q, double *speedup,
                                         double *efficiency) {
  FEA_ENTRY();
  fea_cost_query v;
  FEA_CALL(check_query(NULL, q, &v));
  FEA_CHECK(v.nproc >= 1, NULL, FEA_ERR_INVALID_ARG,
            "query.nproc is %d; strong scaling needs a processor count >= 1", v.nproc);
  fea_cost one = FEA_COST_INIT, many = FEA_COST_INIT;
  fea_cost_paper_eval(v.dim, v.p, v.n, v.num_components, 1, &one);
  fea_cost_paper_eval(v.dim, v.p, v.n, v.num_components, v.nproc, &many);
  /* s = 0 (n <= p + 1) has no level below the root: nothing to speed up. */
  double s = many.critical_path_flops > 0 ? one.critical_path_flops / many.critical_path_flops
                                          : 1.0;
  if (speedup) *speedup = s;
  if (efficiency) *efficiency = s / v.nproc;
  return FEA_SUCCESS;
}
