/* CG over an operator: the operator as CG's linear operator, Jacobi
 * preconditioning from its diagonal (the one elementwise product BLAS
 * lacks: a loop on host arrays, or the backend's pointwise_mul on a
 * device-memory backend, where the diagonal is inverted on the host once
 * and uploaded), and the solve behind fea_cg_solve. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "internal/backend.h"
#include "linalg/cg.h"
#include "base/context.h"
#include "internal/error.h"
#include "operator.h"
#include "internal/operator-device.h"
#include "linalg/vector.h"

/* The operator ops of a backend that builds its own operators (their
 * vectors live in its memory), or NULL: the CPU operators. */
static const struct fea_operator_ops *backend_ops(const fea_operator *A) {
  return A->ctx->backend->op;
}

/* 1 / diag(A) for Jacobi, into *dinv (freed by the caller, also on error). */
static fea_status jacobi_alloc(const fea_operator *A, double **dinv) {
  const fea_index n = A->num_free;
  double *d = *dinv = malloc(((size_t)n + 1) * sizeof *d);
  FEA_CHECK(d, A->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a diagonal of %lld entries",
            (long long)n);
  FEA_CALL(A->impl->diagonal(A, d));
  return FEA_SUCCESS;
}

/* The inversion with its check, on a host array. */
static fea_status jacobi_invert(const fea_operator *A, double *d) {
  for (fea_index i = 0; i < A->num_free; i++) {
    FEA_CHECK(d[i] > 0.0 && isfinite(d[i]), A->ctx, FEA_ERR_NOT_POSDEF,
              "diagonal entry %lld of the operator is %g: Jacobi needs positive entries",
              (long long)i, d[i]);
    d[i] = 1.0 / d[i];
  }
  return FEA_SUCCESS;
}

/* Device: the diagonal in a device vector, inverted on the host, uploaded. */
static fea_status jacobi_alloc_device(fea_operator *A, fea_vector **dvec, double **host) {
  const fea_index n = A->num_free;
  FEA_CALL(fea_vec_create(A->ctx, n, FEA_F64, dvec));
  FEA_CALL(A->impl->diagonal(A, (*dvec)->data));
  double *d = *host = malloc(((size_t)n + 1) * sizeof *d);
  FEA_CHECK(d, A->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a diagonal of %lld entries",
            (long long)n);
  FEA_CALL(fea_vec_read(*dvec, FEA_F64, d));
  FEA_CALL(jacobi_invert(A, d));
  return fea_vec_write(*dvec, FEA_F64, d);
}

typedef struct jacobi_data {
  fea_index n;
  const double *dinv; /* host array, or device array with ctx set */
  fea_context *ctx;   /* device: the backend's pointwise_mul runs */
} jacobi_data;

static fea_status jacobi_apply(void *user, const double *r, double *z) {
  const jacobi_data *j = user;
  if (j->ctx) return j->ctx->backend->op->pointwise_mul(j->ctx, j->n, j->dinv, r, z);
  for (fea_index i = 0; i < j->n; i++) z[i] = j->dinv[i] * r[i];
  return FEA_SUCCESS;
}

static fea_status apply_operator(void *op, const double *x, double *y) {
  fea_operator *A = op;
  return A->impl->apply(A, x, y, 0);
}

static fea_cg_operator cg_operator(fea_operator *A) {
  fea_cg_operator c = {A->ctx, A->num_free, apply_operator, NULL, A};
  if (backend_ops(A)) c.sync = backend_ops(A)->sync;
  return c;
}

fea_status fea_cg_run(fea_operator *A, const fea_vector *b, fea_vector *x, const fea_cg_desc *d,
                      fea_cg_precond_fn precond, void *user, fea_cg_stats *s) {
  const fea_cg_operator c = cg_operator(A);
  return fea_cg_iterate(&c, b, x, d, precond, user, s);
}

fea_status fea_operator_cg_solve(fea_operator *A, const fea_vector *b, fea_vector *x,
                                 const fea_cg_desc *dp, fea_cg_stats *sp) {
  const fea_cg_desc d = *dp;
  const double t0 = omp_get_wtime();
  fea_cg_stats s = FEA_CG_STATS_INIT;
  double *dinv = NULL;
  fea_vector *ddinv = NULL;
  jacobi_data jd = {A->num_free, NULL, NULL};
  fea_status st = FEA_SUCCESS;
  if (d.jacobi && backend_ops(A)) {
    FEA_CHECK(backend_ops(A)->pointwise_mul, A->ctx, FEA_ERR_UNSUPPORTED,
              "backend '%s' builds its own operators but has no Jacobi scaling for them",
              A->ctx->resource);
    st = jacobi_alloc_device(A, &ddinv, &dinv);
    jd.dinv = ddinv ? ddinv->data : NULL;
    jd.ctx = A->ctx;
  } else if (d.jacobi) {
    st = jacobi_alloc(A, &dinv);
    if (st == FEA_SUCCESS) st = jacobi_invert(A, dinv);
    jd.dinv = dinv;
  }
  if (st == FEA_SUCCESS) st = fea_cg_run(A, b, x, &d, d.jacobi ? jacobi_apply : NULL, &jd, &s);
  free(dinv);
  FEA_OBJECT_DROP(ddinv);
  s.solve_s = omp_get_wtime() - t0;
  *sp = s;
  return st;
}
