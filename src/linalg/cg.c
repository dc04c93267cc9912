/* Conjugate gradients over any linear operator, with any preconditioner:
 * the operator is only applied (fea_cg_operator), so assembled and
 * matrix-free operators, on the host or a device, solve alike. Vector
 * updates go through the vector object's ops (the backend's BLAS). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "cg.h"
#include "base/context.h"
#include "base/progress.h"
#include "internal/error.h"
#include "vector.h"

#define CG_NVEC 4

typedef struct cg_work {
  fea_vector *r, *z, *p, *q;
  fea_cg_precond_fn precond; /* z = M^-1 r, or NULL for none */
  void *user;
} cg_work;

static void work_free(cg_work *w) {
  FEA_OBJECT_DROP(w->r);
  FEA_OBJECT_DROP(w->z);
  FEA_OBJECT_DROP(w->p);
  FEA_OBJECT_DROP(w->q);
}

static fea_status work_alloc(const fea_cg_operator *A, cg_work *w) {
  const fea_index n = A->n;
  fea_vector **v[CG_NVEC] = {&w->r, &w->z, &w->p, &w->q};
  for (int k = 0; k < CG_NVEC; k++) FEA_CALL(fea_vec_create(A->ctx, n, FEA_F64, v[k]));
  return FEA_SUCCESS;
}

/* z = M^{-1} r. */
static fea_status precondition(const cg_work *w) {
  if (!w->precond) return fea_vec_copy(w->r, w->z);
  return w->precond(w->user, w->r->data, w->z->data);
}

static fea_status timed_apply(const fea_cg_operator *A, const fea_vector *x, fea_vector *y,
                              double *apply_s) {
  double t = omp_get_wtime();
  fea_status st = A->apply(A->op, x->data, y->data);
  if (st == FEA_SUCCESS && A->sync) st = A->sync(A->ctx); /* asynchronous backends */
  *apply_s += omp_get_wtime() - t;
  return st;
}

/* CG's curvature p.Ap and r.z as products of doubles: a value that is not
 * finite is an overflow of the double range (|b| or the operator's scale
 * too large: b, x0 and the operator's coefficients are checked finite),
 * not a sign of indefiniteness, and says so. Still FEA_ERR_NOT_POSDEF, the
 * code the caller handles for a breakdown of the iteration. */
static fea_status check_finite(const fea_cg_operator *A, const char *what, double v, fea_index it,
                               double bnorm) {
  FEA_CHECK(isfinite(v), A->ctx, FEA_ERR_NOT_POSDEF,
            "%s = %g at iteration %lld: it overflowed the double range (||b|| = %g), which says "
            "nothing of positive definiteness; scale the right-hand side or the operator down",
            what, v, (long long)it, bnorm);
  return FEA_SUCCESS;
}

/* How far CG is, for the progress callback: the residual's reduction so far
 * against the one asked for, on a log scale, or the share of the iteration
 * limit used, whichever is further. */
static double cg_fraction(double r0, double r, double tol, fea_index it, fea_index max_it) {
  double f = max_it > 0 ? (double)it / (double)max_it : 1.0;
  if (r0 > tol && tol > 0 && r > 0) {
    const double g = log(r0 / r) / log(r0 / tol);
    if (g > f) f = g;
  }
  return f;
}

/* The iteration proper; s collects what the caller's stats get. */
static fea_status iterate(const fea_cg_operator *A, const fea_vector *b, fea_vector *x,
                          const fea_cg_desc *d, cg_work *w, fea_cg_stats *s) {
  double bnorm, rnorm, rz, rz_new, pq;
  FEA_CALL(fea_vec_nrm2(b, &bnorm));
  /* An infinite ||b|| would make every residual pass the test. */
  FEA_CHECK(isfinite(bnorm), A->ctx, FEA_ERR_INVALID_ARG,
            "||b|| = %g overflowed the double range: scale the right-hand side down", bnorm);
  FEA_CALL(timed_apply(A, x, w->r, &s->apply_s)); /* r = b - A x */
  FEA_CALL(fea_vec_scale(w->r, -1.0));
  FEA_CALL(fea_vec_axpy(w->r, 1.0, b));
  FEA_CALL(fea_vec_nrm2(w->r, &rnorm));
  s->initial_residual = s->final_residual = rnorm;
  const double tol = fmax(d->rtol * bnorm, d->atol);
  if (d->history_capacity > 0) d->history[0] = rnorm;
  FEA_CALL(fea_progress(A->ctx, FEA_PROGRESS_CG, 0.0));
  if (rnorm <= tol) {
    s->converged = 1;
    return fea_progress(A->ctx, FEA_PROGRESS_CG, 1.0);
  }
  const double r0 = rnorm;
  FEA_CALL(precondition(w));
  FEA_CALL(fea_vec_copy(w->z, w->p));
  FEA_CALL(fea_vec_dot(w->r, w->z, &rz));
  FEA_CALL(check_finite(A, "r.z", rz, 0, bnorm));
  for (fea_index it = 0; it < d->max_iterations; it++) {
    FEA_CALL(timed_apply(A, w->p, w->q, &s->apply_s));
    FEA_CALL(fea_vec_dot(w->p, w->q, &pq));
    FEA_CALL(check_finite(A, "p.Ap", pq, it, bnorm));
    FEA_CHECK(pq > 0.0, A->ctx, FEA_ERR_NOT_POSDEF,
              "p.Ap = %g at iteration %lld: the operator is not positive definite", pq,
              (long long)it);
    const double alpha = rz / pq;
    FEA_CALL(fea_vec_axpy(x, alpha, w->p));
    FEA_CALL(fea_vec_axpy(w->r, -alpha, w->q));
    FEA_CALL(fea_vec_nrm2(w->r, &rnorm));
    s->iterations = it + 1;
    s->final_residual = rnorm;
    if (it + 1 < d->history_capacity) d->history[it + 1] = rnorm;
    if (rnorm <= tol) {
      s->converged = 1;
      return fea_progress(A->ctx, FEA_PROGRESS_CG, 1.0);
    }
    FEA_CALL(fea_progress(A->ctx, FEA_PROGRESS_CG,
                          cg_fraction(r0, rnorm, tol, it + 1, d->max_iterations)));
    FEA_CALL(precondition(w));
    FEA_CALL(fea_vec_dot(w->r, w->z, &rz_new));
    FEA_CALL(check_finite(A, "r.z", rz_new, it + 1, bnorm));
    FEA_CALL(fea_vec_scale(w->p, rz_new / rz)); /* p = z + beta p */
    FEA_CALL(fea_vec_axpy(w->p, 1.0, w->z));
    rz = rz_new;
  }
  FEA_CALL(fea_progress(A->ctx, FEA_PROGRESS_CG, 1.0));
  return FEA_WARN_NOT_CONVERGED;
}

fea_status fea_cg_iterate(const fea_cg_operator *A, const fea_vector *b, fea_vector *x,
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
