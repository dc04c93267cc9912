/* Conjugate gradients over any operator, with any preconditioner: the
 * operator is only applied, so assembled and matrix-free operators solve
 * alike. fea_cg_run is the one iteration (fea_cg_solve runs it with Jacobi or
 * nothing, multigrid with a cycle as preconditioner). Vector updates go
 * through fea_vector_* (the backend's BLAS); the Jacobi scaling is the one
 * elementwise product BLAS lacks: a loop on host arrays, or the backend's
 * pointwise_mul on a device-memory backend (operator-device.h), where the
 * diagonal is inverted on the host once and uploaded. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "error.h"
#include "backend.h"
#include "operator.h"
#include "operator-device.h"
#include "struct-copy.h"
#include "vector.h"

#define CG_NVEC 4

typedef struct cg_work {
  fea_vector *r, *z, *p, *q;
  fea_cg_precond_fn precond; /* z = M^-1 r, or NULL for none */
  void *user;
} cg_work;

static void work_free(cg_work *w) {
  fea_vector_destroy(&w->r);
  fea_vector_destroy(&w->z);
  fea_vector_destroy(&w->p);
  fea_vector_destroy(&w->q);
}

static fea_status work_alloc(const fea_operator *A, cg_work *w) {
  const fea_index n = A->num_free;
  fea_vector **v[CG_NVEC] = {&w->r, &w->z, &w->p, &w->q};
  for (int k = 0; k < CG_NVEC; k++) FEA_CALL(fea_vector_create(A->ctx, n, FEA_F64, v[k]));
  return FEA_SUCCESS;
}

static int on_device(const fea_operator *A) {
  return A->ctx->backend->mem != FEA_MEM_HOST;
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
static fea_status jacobi_alloc_device(const fea_operator *A, fea_vector **dvec, double **host) {
  const fea_index n = A->num_free;
  FEA_CALL(fea_vector_create(A->ctx, n, FEA_F64, dvec));
  FEA_CALL(A->impl->diagonal(A, (*dvec)->data));
  double *d = *host = malloc(((size_t)n + 1) * sizeof *d);
  FEA_CHECK(d, A->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a diagonal of %lld entries",
            (long long)n);
  FEA_CALL(fea_vector_read(*dvec, n, FEA_F64, d));
  FEA_CALL(jacobi_invert(A, d));
  return fea_vector_write(*dvec, n, FEA_F64, d);
}

typedef struct jacobi_data {
  fea_index n;
  const double *dinv;     /* host array, or device array with ctx set */
  fea_context *ctx;       /* device: the backend's pointwise_mul runs */
} jacobi_data;

static fea_status jacobi_apply(void *user, const double *r, double *z) {
  const jacobi_data *j = user;
  if (j->ctx) return j->ctx->backend->op->pointwise_mul(j->ctx, j->n, j->dinv, r, z);
  for (fea_index i = 0; i < j->n; i++) z[i] = j->dinv[i] * r[i];
  return FEA_SUCCESS;
}

/* z = M^{-1} r. */
static fea_status precondition(const cg_work *w) {
  if (!w->precond) return fea_vector_copy(w->r, w->z);
  return w->precond(w->user, w->r->data, w->z->data);
}

static fea_status timed_apply(fea_operator *A, const fea_vector *x, fea_vector *y,
                              double *apply_s) {
  double t = omp_get_wtime();
  fea_status st = A->impl->apply(A, x->data, y->data, 0);
  if (st == FEA_SUCCESS && on_device(A)) st = A->ctx->backend->op->sync(A->ctx); /* async */
  *apply_s += omp_get_wtime() - t;
  return st;
}

static fea_status read_desc(const fea_operator *A, const fea_cg_desc *user, fea_cg_desc *d) {
  fea_cg_desc def = FEA_CG_DESC_INIT;
  *d = def;
  FEA_CALL(fea_struct_copy_in(A->ctx, d, user, "desc", &fea_struct_cg_desc));
  FEA_CHECK(d->rtol >= 0.0 && isfinite(d->rtol), A->ctx, FEA_ERR_INVALID_ARG,
            "rtol is %g; it must be finite and >= 0", d->rtol);
  FEA_CHECK(d->atol >= 0.0 && isfinite(d->atol), A->ctx, FEA_ERR_INVALID_ARG,
            "atol is %g; it must be finite and >= 0", d->atol);
  FEA_CHECK(d->max_iterations >= 0, A->ctx, FEA_ERR_INVALID_ARG,
            "max_iterations is %lld; it must be >= 0", (long long)d->max_iterations);
  FEA_CHECK(d->jacobi == 0 || d->jacobi == 1, A->ctx, FEA_ERR_INVALID_ARG,
            "jacobi is %d, not 0 or 1", d->jacobi);
  FEA_CHECK(d->history_capacity >= 0 && (d->history_capacity == 0 || d->history), A->ctx,
            FEA_ERR_INVALID_ARG, "history_capacity is %lld with history %s",
            (long long)d->history_capacity, d->history ? "set" : "NULL");
  return FEA_SUCCESS;
}

static fea_status check_vector(const fea_operator *A, const fea_vector *v, const char *name) {
  FEA_CHECK(v, A->ctx, FEA_ERR_INVALID_ARG, "argument '%s' is NULL", name);
  FEA_CHECK(v->ctx == A->ctx, A->ctx, FEA_ERR_INVALID_ARG,
            "vector '%s' belongs to another context than the operator's", name);
  FEA_CHECK(v->prec == FEA_F64, A->ctx, FEA_ERR_INVALID_ARG,
            "vector '%s' has precision %d; CG takes FEA_F64 (%d) vectors", name, (int)v->prec,
            (int)FEA_F64);
  FEA_CHECK(v->n == A->num_free, A->ctx, FEA_ERR_DIMENSION,
            "vector '%s' has %lld entries but the operator has %lld rows", name, (long long)v->n,
            (long long)A->num_free);
  return FEA_SUCCESS;
}

/* The iteration proper; s collects what the caller's stats get. */
static fea_status iterate(fea_operator *A, const fea_vector *b, fea_vector *x,
                          const fea_cg_desc *d, cg_work *w, fea_cg_stats *s) {
  double bnorm, rnorm, rz, rz_new, pq;
  FEA_CALL(fea_vector_nrm2(b, &bnorm));
  FEA_CALL(timed_apply(A, x, w->r, &s->apply_s)); /* r = b - A x */
  FEA_CALL(fea_vector_scale(w->r, -1.0));
  FEA_CALL(fea_vector_axpy(w->r, 1.0, b));
  FEA_CALL(fea_vector_nrm2(w->r, &rnorm));
  s->initial_residual = s->final_residual = rnorm;
  const double tol = fmax(d->rtol * bnorm, d->atol);
  if (d->history_capacity > 0) d->history[0] = rnorm;
  if (rnorm <= tol) {
    s->converged = 1;
    return FEA_SUCCESS;
  }
  FEA_CALL(precondition(w));
  FEA_CALL(fea_vector_copy(w->z, w->p));
  FEA_CALL(fea_vector_dot(w->r, w->z, &rz));
  for (fea_index it = 0; it < d->max_iterations; it++) {
    FEA_CALL(timed_apply(A, w->p, w->q, &s->apply_s));
    FEA_CALL(fea_vector_dot(w->p, w->q, &pq));
    FEA_CHECK(pq > 0.0 && isfinite(pq), A->ctx, FEA_ERR_NOT_POSDEF,
              "p.Ap = %g at iteration %lld: the operator is not positive definite", pq,
              (long long)it);
    const double alpha = rz / pq;
    FEA_CALL(fea_vector_axpy(x, alpha, w->p));
    FEA_CALL(fea_vector_axpy(w->r, -alpha, w->q));
    FEA_CALL(fea_vector_nrm2(w->r, &rnorm));
    s->iterations = it + 1;
    s->final_residual = rnorm;
    if (it + 1 < d->history_capacity) d->history[it + 1] = rnorm;
    if (rnorm <= tol) {
      s->converged = 1;
      return FEA_SUCCESS;
    }
    FEA_CALL(precondition(w));
    FEA_CALL(fea_vector_dot(w->r, w->z, &rz_new));
    FEA_CALL(fea_vector_scale(w->p, rz_new / rz)); /* p = z + beta p */
    FEA_CALL(fea_vector_axpy(w->p, 1.0, w->z));
    rz = rz_new;
  }
  return FEA_WARN_NOT_CONVERGED;
}

fea_status fea_cg_run(fea_operator *A, const fea_vector *b, fea_vector *x,
                      const fea_cg_desc *d, fea_cg_precond_fn precond, void *user,
                      fea_cg_stats *s) {
  cg_work w = {0};
  w.precond = precond;
  w.user = user;
  fea_status st = work_alloc(A, &w);
  if (st == FEA_SUCCESS) st = iterate(A, b, x, d, &w, s);
  work_free(&w);
  return st;
}

fea_status fea_cg_solve(fea_operator *A, const fea_vector *b, fea_vector *x,
                        const fea_cg_desc *desc, fea_cg_stats *stats) {
  FEA_CHECK_NULL(A, NULL);
  FEA_CALL(check_vector(A, b, "b"));
  FEA_CALL(check_vector(A, x, "x"));
  FEA_CHECK(b != x, A->ctx, FEA_ERR_INVALID_ARG, "b and x are the same vector");
  if (stats) FEA_CALL(fea_struct_check(A->ctx, stats, "stats", &fea_struct_cg_stats));
  fea_cg_desc d;
  FEA_CALL(read_desc(A, desc, &d));
  const double t0 = omp_get_wtime();
  fea_cg_stats s = FEA_CG_STATS_INIT;
  double *dinv = NULL;
  fea_vector *ddinv = NULL;
  jacobi_data jd = {A->num_free, NULL, NULL};
  fea_status st = FEA_SUCCESS;
  if (d.jacobi && on_device(A)) {
    FEA_CHECK(A->ctx->backend->op && A->ctx->backend->op->pointwise_mul, A->ctx,
              FEA_ERR_UNSUPPORTED, "backend '%s' has no device Jacobi scaling",
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
  fea_vector_destroy(&ddinv);
  s.solve_s = omp_get_wtime() - t0;
  if (stats && st >= 0) /* cannot fail: checked above */
    (void)fea_struct_copy_out(A->ctx, stats, &s, "stats", &fea_struct_cg_stats);
  return st;
}
