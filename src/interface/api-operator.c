/* Operator API: argument checks (the descriptor, the vectors of every
 * application), then the operator object of src/matfree/operator.c. */
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "matfree/operator.h"
#include "internal/operator-device.h"
#include "base/struct-copy.h"
#include "linalg/vector.h"

static const char *kind_name(fea_operator_kind k) {
  switch (k) {
  case FEA_OPERATOR_CSR: return "csr";
  case FEA_OPERATOR_MATFREE_ELEMENT_MATRIX: return "matfree-element-matrix";
  case FEA_OPERATOR_MATFREE_SUMFACT: return "matfree-sumfact";
  }
  return NULL;
}

static fea_status read_desc(fea_context *ctx, const fea_operator_desc *user, fea_operator_desc *d) {
  fea_operator_desc def = FEA_OPERATOR_DESC_INIT;
  *d = def;
  FEA_CALL(fea_struct_copy_in(ctx, d, user, "desc", &fea_struct_operator_desc));
  FEA_CHECK(kind_name(d->kind), ctx, FEA_ERR_INVALID_ARG, "unknown operator kind %d (valid: 0..%d)",
            (int)d->kind, (int)FEA_OPERATOR_MATFREE_SUMFACT);
  FEA_CHECK(fea_update_strategy_name(d->strategy), ctx, FEA_ERR_INVALID_ARG,
            "unknown update strategy %d (valid: 0..%d)", (int)d->strategy,
            (int)FEA_UPDATE_PRIVATE_COPIES);
  FEA_CHECK(d->geometry_terms >= FEA_GEOMETRY_TERMS_AUTO &&
                d->geometry_terms <= FEA_GEOMETRY_TERMS_RECOMPUTED,
            ctx, FEA_ERR_INVALID_ARG, "unknown geometry_terms %d (valid: 0..%d)",
            (int)d->geometry_terms, (int)FEA_GEOMETRY_TERMS_RECOMPUTED);
  return FEA_SUCCESS;
}

fea_status fea_operator_create(fea_context *ctx, const fea_problem *problem,
                               const fea_operator_desc *desc, fea_operator **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_operator_desc d;
  FEA_CALL(read_desc(ctx, desc, &d));
  /* Systems: every kind on the host (CSR from the reference assembly,
   * operator-csr.c; the matrix-free kinds over vector DoFs); device
   * operators come later. */
  FEA_CHECK(problem->space->ncomp == 1 || !ctx->backend->op, ctx, FEA_ERR_UNSUPPORTED,
            "the problem's space has %d components: operators on systems run on CPU backends "
            "only so far (asked: %s on %s)",
            problem->space->ncomp, kind_name(d.kind), ctx->resource);
  return fea_operator_build(ctx, problem, &d, out);
}

fea_status fea_operator_destroy(fea_operator **op) {
  FEA_ENTRY();
  if (!op || !*op) return FEA_SUCCESS;
  fea_object_release(*op);
  *op = NULL;
  return FEA_SUCCESS;
}

/* A vector the operator may read or write: this context, F64, num_free long. */
static fea_status check_vector(const fea_operator *op, const fea_vector *v, const char *name) {
  FEA_CHECK(v, op->ctx, FEA_ERR_INVALID_ARG, "argument '%s' is NULL", name);
  FEA_CHECK(v->ctx == op->ctx, op->ctx, FEA_ERR_INVALID_ARG,
            "vector '%s' belongs to another context (%s) than the operator's (%s)", name,
            v->ctx->resource, op->ctx->resource);
  FEA_CHECK(v->prec == FEA_F64, op->ctx, FEA_ERR_INVALID_ARG,
            "vector '%s' has precision %d; operators take FEA_F64 (%d) vectors", name, (int)v->prec,
            (int)FEA_F64);
  FEA_CHECK(v->n == op->num_free, op->ctx, FEA_ERR_DIMENSION,
            "vector '%s' has %lld entries but the operator has %lld rows (free DoFs)", name,
            (long long)v->n, (long long)op->num_free);
  return FEA_SUCCESS;
}

static fea_status apply(fea_operator *op, const fea_vector *x, fea_vector *y, int add) {
  FEA_CHECK_NULL(op, NULL);
  FEA_CALL(check_vector(op, x, "x"));
  FEA_CALL(check_vector(op, y, "y"));
  FEA_CHECK(x != y && x->data != y->data, op->ctx, FEA_ERR_INVALID_ARG,
            "x and y are the same vector; y = A x needs a separate output");
  return op->impl->apply(op, x->data, y->data, add);
}

fea_status fea_operator_apply(fea_operator *op, const fea_vector *x, fea_vector *y) {
  FEA_ENTRY();
  return apply(op, x, y, 0);
}

fea_status fea_operator_apply_add(fea_operator *op, const fea_vector *x, fea_vector *y) {
  FEA_ENTRY();
  return apply(op, x, y, 1);
}

fea_status fea_operator_get_diagonal(const fea_operator *op, fea_vector *diag) {
  FEA_ENTRY();
  FEA_CHECK_NULL(op, NULL);
  FEA_CALL(check_vector(op, diag, "diag"));
  return op->impl->diagonal(op, diag->data);
}

fea_status fea_operator_get_rhs(fea_operator *op, fea_vector *b) {
  FEA_ENTRY();
  FEA_CHECK_NULL(op, NULL);
  FEA_CALL(check_vector(op, b, "b"));
  FEA_CALL(fea_operator_rhs(op, NULL));
  /* The vector ops copy or upload, wherever b's data lives. */
  return op->ctx->backend->vec->write(op->ctx, b, FEA_F64, op->rhs);
}

fea_status fea_operator_estimate_eigenvalues(fea_operator *op, int steps, int jacobi,
                                             double *lambda_min, double *lambda_max) {
  FEA_ENTRY();
  FEA_CHECK_NULL(op, NULL);
  fea_context *ctx = op->ctx;
  FEA_CHECK_NULL(lambda_min, ctx);
  FEA_CHECK_NULL(lambda_max, ctx);
  FEA_CHECK(steps >= 2 && steps <= 1000, ctx, FEA_ERR_INVALID_ARG, "steps = %d is outside 2..1000",
            steps);
  FEA_CHECK(jacobi == 0 || jacobi == 1, ctx, FEA_ERR_INVALID_ARG, "jacobi = %d is not 0 or 1",
            jacobi);
  const fea_index n = op->num_free;
  FEA_CHECK(n >= 1, ctx, FEA_ERR_DIMENSION, "the operator has no free DoFs: no eigenvalues");
  return fea_operator_spectrum(op, steps, jacobi, lambda_min, lambda_max);
}

fea_status fea_operator_get_info(const fea_operator *op, fea_operator_info *info) {
  FEA_ENTRY();
  FEA_CHECK_NULL(op, NULL);
  FEA_CHECK_NULL(info, op->ctx);
  return fea_struct_copy_out(op->ctx, info, &op->info, "info", &fea_struct_operator_info);
}
