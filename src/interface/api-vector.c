/* Vector API: argument checks, then the vector object of src/linalg/vector.c. */
#include <math.h>
#include <stdio.h>

#include "base/context.h"
#include "internal/error.h"
#include "base/memory-limit.h"
#include "base/size-checks.h"
#include "linalg/vector.h"

#define PREC_OK(p) ((p) == FEA_F64 || (p) == FEA_F32 || (p) == FEA_F16 || (p) == FEA_BF16)

static fea_status check_prec(const fea_context *ctx, const char *what, fea_precision p) {
  FEA_CHECK(PREC_OK(p), ctx, FEA_ERR_INVALID_ARG,
            "unknown precision %d for %s (expected FEA_F64, FEA_F32, FEA_F16 or FEA_BF16)", (int)p,
            what);
  return FEA_SUCCESS;
}

/* Two vectors used together must share context, length and (unless said) precision. */
static fea_status check_pair(const fea_vector *x, const fea_vector *y, int same_prec) {
  FEA_CHECK(x->ctx == y->ctx, y->ctx, FEA_ERR_INVALID_ARG,
            "x and y belong to different contexts (%s and %s)", x->ctx->resource, y->ctx->resource);
  FEA_CHECK(x->n == y->n, y->ctx, FEA_ERR_DIMENSION,
            "length mismatch: x has %lld entries, y has %lld", (long long)x->n, (long long)y->n);
  FEA_CHECK(!same_prec || x->prec == y->prec, y->ctx, FEA_ERR_INVALID_ARG,
            "precision mismatch: x is %s, y is %s (convert with fea_vector_copy)",
            fea_precision_name(x->prec), fea_precision_name(y->prec));
  return FEA_SUCCESS;
}

fea_status fea_vector_create(fea_context *ctx, fea_index n, fea_precision prec, fea_vector **out) {
  FEA_ENTRY();
  if (out) *out = NULL; /* documented: NULL on failure */
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK(n >= 0, ctx, FEA_ERR_INVALID_ARG, "length %lld is negative", (long long)n);
  FEA_CALL(check_prec(ctx, "the vector", prec));
  /* 16 bytes an entry: room for the widest entries and a double copy of them
   * on the host (the transfers and CG's check for non-finite entries). */
  FEA_CALL(fea_size_check_span(ctx, "the vector", "length", (uint64_t)n, 1, 0, 16, NULL));
  /* The backend's alloc checks its memory budget (host backends: the
   * context's memory limit) before it allocates. */
  return fea_vec_create(ctx, n, prec, out);
}

fea_status fea_vector_destroy(fea_vector **v) {
  FEA_ENTRY();
  if (!v || !*v) return FEA_SUCCESS;
  fea_object_release(*v);
  *v = NULL;
  return FEA_SUCCESS;
}

fea_status fea_vector_get_length(const fea_vector *v, fea_index *n) {
  FEA_ENTRY();
  FEA_CHECK_NULL(v, NULL);
  FEA_CHECK_NULL(n, v->ctx);
  *n = v->n;
  return FEA_SUCCESS;
}

fea_status fea_vector_get_precision(const fea_vector *v, fea_precision *prec) {
  FEA_ENTRY();
  FEA_CHECK_NULL(v, NULL);
  FEA_CHECK_NULL(prec, v->ctx);
  *prec = v->prec;
  return FEA_SUCCESS;
}

static fea_status check_host(const fea_vector *v, fea_index n, fea_precision host_prec,
                             const void *host) {
  FEA_CHECK(n == v->n, v->ctx, FEA_ERR_DIMENSION, "n is %lld but the vector has %lld entries",
            (long long)n, (long long)v->n);
  FEA_CALL(check_prec(v->ctx, "the host array", host_prec));
  FEA_CHECK(host || n == 0, v->ctx, FEA_ERR_INVALID_ARG, "host array is NULL for %lld entries",
            (long long)n);
  return FEA_SUCCESS;
}

fea_status fea_vector_write(fea_vector *v, fea_index n, fea_precision host_prec, const void *host) {
  FEA_ENTRY();
  FEA_CHECK_NULL(v, NULL);
  FEA_CALL(check_host(v, n, host_prec, host));
  return fea_vec_write(v, host_prec, host);
}

fea_status fea_vector_read(const fea_vector *v, fea_index n, fea_precision host_prec, void *host) {
  FEA_ENTRY();
  FEA_CHECK_NULL(v, NULL);
  FEA_CALL(check_host(v, n, host_prec, host));
  return fea_vec_read(v, host_prec, host);
}

fea_status fea_vector_set_all(fea_vector *v, double alpha) {
  FEA_ENTRY();
  FEA_CHECK_NULL(v, NULL);
  FEA_CHECK(!isnan(alpha), v->ctx, FEA_ERR_INVALID_ARG, "alpha is NaN");
  return fea_vec_set_all(v, alpha);
}

fea_status fea_vector_copy(const fea_vector *x, fea_vector *y) {
  FEA_ENTRY();
  FEA_CHECK_NULL(x, NULL);
  FEA_CHECK_NULL(y, x->ctx);
  FEA_CHECK(x != y, x->ctx, FEA_ERR_INVALID_ARG, "x and y are the same vector");
  FEA_CALL(check_pair(x, y, 0));
  return fea_vec_copy(x, y);
}

fea_status fea_vector_axpy(fea_vector *y, double alpha, const fea_vector *x) {
  FEA_ENTRY();
  FEA_CHECK_NULL(y, NULL);
  FEA_CHECK_NULL(x, y->ctx);
  FEA_CHECK(!isnan(alpha), y->ctx, FEA_ERR_INVALID_ARG, "alpha is NaN");
  FEA_CALL(check_pair(x, y, 1));
  return fea_vec_axpy(y, alpha, x);
}

fea_status fea_vector_scale(fea_vector *x, double alpha) {
  FEA_ENTRY();
  FEA_CHECK_NULL(x, NULL);
  FEA_CHECK(!isnan(alpha), x->ctx, FEA_ERR_INVALID_ARG, "alpha is NaN");
  return fea_vec_scale(x, alpha);
}

fea_status fea_vector_dot(const fea_vector *x, const fea_vector *y, double *result) {
  FEA_ENTRY();
  FEA_CHECK_NULL(x, NULL);
  FEA_CHECK_NULL(y, x->ctx);
  FEA_CHECK_NULL(result, x->ctx);
  FEA_CALL(check_pair(x, y, 1));
  return fea_vec_dot(x, y, result);
}

fea_status fea_vector_nrm2(const fea_vector *x, double *result) {
  FEA_ENTRY();
  FEA_CHECK_NULL(x, NULL);
  FEA_CHECK_NULL(result, x->ctx);
  return fea_vec_nrm2(x, result);
}
