/* The vector object: creation on a context (the backend allocates the
 * storage) and the operations on checked arguments, dispatched through the
 * context's vector ops. src/interface/api-vector.c checks, then calls these;
 * CG and multigrid call them directly. */
#include <stdlib.h>

#include "base/context.h"
#include "internal/error.h"
#include "vector.h"

/* Ops slots are filled from the delegate chain at context creation; a slot
 * still empty means no backend in the chain implements it. */
#define VEC_DISPATCH(ctx, slot, ...)                                                        \
  ((ctx)->vec.slot ? (ctx)->vec.slot(__VA_ARGS__)                                           \
                   : FEA_ERROR(ctx, FEA_ERR_UNSUPPORTED, "backend %s has no vector " #slot, \
                               (ctx)->backend->prefix))

static void vector_free(void *object) {
  fea_vector *v = object;
  if (v->data && v->ctx->vec.release) v->ctx->vec.release(v->ctx, v);
  free(v);
}

fea_status fea_vec_create(fea_context *ctx, fea_index n, fea_precision prec, fea_vector **out) {
  fea_vector *v;
  FEA_CALL(fea_object_alloc(ctx, sizeof *v, "vector", vector_free, (void **)&v));
  v->n = n;
  v->prec = prec;
  fea_status s = VEC_DISPATCH(ctx, alloc, ctx, v);
  if (s < 0) {
    v->data = NULL; /* nothing for the backend to release */
    fea_object_release(v);
    return s;
  }
  *out = v;
  return FEA_SUCCESS;
}

fea_status fea_vec_write(fea_vector *v, fea_precision host_prec, const void *host) {
  if (v->n == 0) return FEA_SUCCESS;
  return VEC_DISPATCH(v->ctx, write, v->ctx, v, host_prec, host);
}

fea_status fea_vec_read(const fea_vector *v, fea_precision host_prec, void *host) {
  if (v->n == 0) return FEA_SUCCESS;
  return VEC_DISPATCH(v->ctx, read, v->ctx, v, host_prec, host);
}

fea_status fea_vec_set_all(fea_vector *v, double alpha) {
  if (v->n == 0) return FEA_SUCCESS;
  return VEC_DISPATCH(v->ctx, set_all, v->ctx, v, alpha);
}

fea_status fea_vec_copy(const fea_vector *x, fea_vector *y) {
  if (x->n == 0) return FEA_SUCCESS;
  return VEC_DISPATCH(y->ctx, copy, y->ctx, x, y);
}

fea_status fea_vec_axpy(fea_vector *y, double alpha, const fea_vector *x) {
  if (y->n == 0) return FEA_SUCCESS;
  return VEC_DISPATCH(y->ctx, axpy, y->ctx, y, alpha, x);
}

fea_status fea_vec_scale(fea_vector *x, double alpha) {
  if (x->n == 0) return FEA_SUCCESS;
  return VEC_DISPATCH(x->ctx, scale, x->ctx, x, alpha);
}

fea_status fea_vec_dot(const fea_vector *x, const fea_vector *y, double *result) {
  if (x->n == 0) {
    *result = 0.0;
    return FEA_SUCCESS;
  }
  return VEC_DISPATCH(x->ctx, dot, x->ctx, x, y, result);
}

fea_status fea_vec_nrm2(const fea_vector *x, double *result) {
  if (x->n == 0) {
    *result = 0.0;
    return FEA_SUCCESS;
  }
  return VEC_DISPATCH(x->ctx, nrm2, x->ctx, x, result);
}
