/* CG API: argument checks (vectors, options, stats size), then the solve
 * of src/matfree/operator-cg.c. */
#include <math.h>
#include <stdlib.h>

#include "base/context.h"
#include "internal/error.h"
#include "matfree/operator.h"
#include "base/struct-copy.h"
#include "linalg/vector.h"

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

/* A NaN or Inf in b or the initial x would only show as a breakdown ("not
 * positive definite") deep in the iteration: refuse it here, by name. */
static fea_status check_finite(const fea_operator *A, const fea_vector *v, const char *name) {
  if (v->n == 0) return FEA_SUCCESS;
  /* A reduction where the vector lives first (BLAS nrm2 scales, so a
   * finite vector never overflows it): a copy only to name the bad entry. */
  double nrm;
  FEA_CALL(fea_vec_nrm2(v, &nrm));
  if (isfinite(nrm)) return FEA_SUCCESS;
  double *copy = malloc((size_t)v->n * sizeof *copy);
  FEA_CHECK(copy, A->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for a host copy of vector '%s' (%lld entries)", name, (long long)v->n);
  fea_status st = fea_vec_read(v, FEA_F64, copy);
  if (st != FEA_SUCCESS) {
    free(copy);
    return st;
  }
  const double *vals = copy;
  fea_index bad = -1;
  for (fea_index i = 0; i < v->n && bad < 0; i++)
    if (!isfinite(vals[i])) bad = i;
  const double value = bad >= 0 ? vals[bad] : 0.0;
  free(copy);
  FEA_CHECK(bad < 0, A->ctx, FEA_ERR_INVALID_ARG,
            "vector '%s' has entry %lld = %g; CG needs finite values", name, (long long)bad, value);
  return FEA_SUCCESS;
}

fea_status fea_cg_solve(fea_operator *A, const fea_vector *b, fea_vector *x,
                        const fea_cg_desc *desc, fea_cg_stats *stats) {
  FEA_ENTRY();
  FEA_CHECK_NULL(A, NULL);
  FEA_CALL(check_vector(A, b, "b"));
  FEA_CALL(check_vector(A, x, "x"));
  FEA_CHECK(b != x, A->ctx, FEA_ERR_INVALID_ARG, "b and x are the same vector");
  if (stats) FEA_CALL(fea_struct_check(A->ctx, stats, "stats", &fea_struct_cg_stats));
  fea_cg_desc d;
  FEA_CALL(read_desc(A, desc, &d));
  FEA_CALL(check_finite(A, b, "b"));
  FEA_CALL(check_finite(A, x, "x"));
  fea_cg_stats s;
  fea_status st = fea_operator_cg_solve(A, b, x, &d, &s);
  if (stats && st >= 0) /* cannot fail: checked above */
    (void)fea_struct_copy_out(A->ctx, stats, &s, "stats", &fea_struct_cg_stats);
  return st;
}
