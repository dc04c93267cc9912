/* Extreme eigenvalue estimates of an operator (or of D^-1/2 A D^-1/2 with
 * Jacobi scaling) by Lanczos on its apply. */
#include <math.h>
#include <stdlib.h>

#include "error.h"
#include "lanczos.h"
#include "operator.h"

/* The operator (or D^-1/2 A D^-1/2) as a Lanczos apply callback. */
typedef struct spectrum_apply {
  fea_operator *op;
  const double *dinv_sqrt; /* or NULL */
  double *tmp;
} spectrum_apply;

static fea_status spectrum_apply_fn(void *user, const double *x, double *y) {
  spectrum_apply *a = user;
  const fea_index n = a->op->num_free;
  if (!a->dinv_sqrt) return a->op->impl->apply(a->op, x, y, 0);
  for (fea_index i = 0; i < n; i++) a->tmp[i] = a->dinv_sqrt[i] * x[i];
  FEA_CALL(a->op->impl->apply(a->op, a->tmp, y, 0));
  for (fea_index i = 0; i < n; i++) y[i] *= a->dinv_sqrt[i];
  return FEA_SUCCESS;
}

fea_status fea_operator_spectrum(fea_operator *op, int steps, int jacobi, double *lambda_min,
                                 double *lambda_max) {
  fea_context *ctx = op->ctx;
  const fea_index n = op->num_free;
  spectrum_apply a = {op, NULL, NULL};
  double *d = NULL;
  if (jacobi) {
    d = malloc((size_t)n * sizeof *d);
    a.tmp = malloc((size_t)n * sizeof *a.tmp);
    fea_status st = d && a.tmp
                        ? op->impl->diagonal(op, d)
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
      return st;
    }
    a.dinv_sqrt = d;
  }
  double lmin = 0, lmax = 0;
  fea_status st = fea_lanczos_extremes(ctx, n, spectrum_apply_fn, &a, steps, 1, 20261121, &lmin,
                                       &lmax);
  free(d);
  free(a.tmp);
  if (st < 0) return st;
  FEA_CHECK(lmin > 0 && lmax >= lmin, ctx, FEA_ERR_NOT_POSDEF,
            "Lanczos estimates the eigenvalues in [%g, %g]: the operator is not positive definite",
            lmin, lmax);
  *lambda_min = lmin;
  *lambda_max = lmax;
  return FEA_SUCCESS;
}
