/* Extreme eigenvalue estimates of an operator (or of D^-1/2 A D^-1/2 with
 * Jacobi scaling) by Lanczos on its apply. Lanczos runs on host arrays; the
 * operator applies to its context's vectors, so each product's input is
 * written into one and its output read from another (an estimate takes tens
 * of products: two copies each, or two transfers where the vectors live on
 * a device, cost less than writing Lanczos for every memory). */
#include <math.h>
#include <stdlib.h>

#include "internal/backend.h"
#include "base/context.h"
#include "internal/error.h"
#include "linalg/lanczos.h"
#include "operator.h"
#include "linalg/vector.h"

/* The operator (or D^-1/2 A D^-1/2) as a Lanczos apply callback. */
typedef struct spectrum_apply {
  fea_operator *op;
  const double *dinv_sqrt; /* or NULL */
  double *tmp;
  fea_vector *dx, *dy; /* the product's operands, vectors of the operator's context */
  int failed;          /* a product failed: its message is on the operator's context */
} spectrum_apply;

static fea_status spectrum_apply_fn(void *user, const double *x, double *y) {
  spectrum_apply *a = user;
  const fea_index n = a->op->num_free;
  const double *in = x;
  if (a->dinv_sqrt) {
    for (fea_index i = 0; i < n; i++) a->tmp[i] = a->dinv_sqrt[i] * x[i];
    in = a->tmp;
  }
  fea_status st = fea_vec_write(a->dx, FEA_F64, in);
  if (st == FEA_SUCCESS) st = a->op->impl->apply(a->op, a->dx->data, a->dy->data, 0);
  if (st == FEA_SUCCESS) st = fea_vec_read(a->dy, FEA_F64, y);
  if (st != FEA_SUCCESS) {
    a->failed = 1;
    return st;
  }
  if (a->dinv_sqrt)
    for (fea_index i = 0; i < n; i++) y[i] *= a->dinv_sqrt[i];
  return FEA_SUCCESS;
}

/* The operator's diagonal in a host array (through a->dy). */
static fea_status host_diagonal(spectrum_apply *a, double *d) {
  FEA_CALL(a->op->impl->diagonal(a->op, a->dy->data));
  return fea_vec_read(a->dy, FEA_F64, d);
}

fea_status fea_operator_spectrum(fea_operator *op, int steps, int jacobi, double *lambda_min,
                                 double *lambda_max) {
  fea_context *ctx = op->ctx;
  const fea_index n = op->num_free;
  spectrum_apply a = {op, NULL, NULL, NULL, NULL, 0};
  {
    fea_status st = fea_vec_create(ctx, n, FEA_F64, &a.dx);
    if (st == FEA_SUCCESS) st = fea_vec_create(ctx, n, FEA_F64, &a.dy);
    if (st != FEA_SUCCESS) {
      FEA_OBJECT_DROP(a.dx);
      return st;
    }
  }
  double *d = NULL;
  if (jacobi) {
    d = malloc((size_t)n * sizeof *d);
    a.tmp = malloc((size_t)n * sizeof *a.tmp);
    fea_status st = d && a.tmp
                        ? host_diagonal(&a, d)
                        : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                    "no memory for a diagonal of %lld entries", (long long)n);
    for (fea_index i = 0; i < n && st >= 0; i++) {
      if (!(d[i] > 0 && isfinite(d[i])))
        st = FEA_ERROR(ctx, FEA_ERR_NOT_POSDEF,
                       "diagonal entry %lld of the operator is %g: Jacobi scaling needs positive "
                       "entries",
                       (long long)i, d[i]);
      else
        d[i] = 1.0 / sqrt(d[i]);
    }
    if (st < 0) {
      free(d);
      free(a.tmp);
      FEA_OBJECT_DROP(a.dx);
      FEA_OBJECT_DROP(a.dy);
      return st;
    }
    a.dinv_sqrt = d;
  }
  double lmin = 0, lmax = 0;
  /* Lanczos's own vectors and BLAS are the host's; its errors go on ctx. */
  fea_status st = fea_lanczos_extremes(ctx, n, spectrum_apply_fn, &a, steps, 1, 20261121, &lmin,
                                       &lmax);
  free(d);
  free(a.tmp);
  FEA_OBJECT_DROP(a.dx);
  FEA_OBJECT_DROP(a.dy);
  if (st < 0) return st;
  FEA_CHECK(lmin > 0 && lmax >= lmin, ctx, FEA_ERR_NOT_POSDEF,
            "Lanczos estimates the eigenvalues in [%g, %g]: the operator is not positive definite",
            lmin, lmax);
  *lambda_min = lmin;
  *lambda_max = lmax;
  return FEA_SUCCESS;
}
