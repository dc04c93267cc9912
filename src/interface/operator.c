/* Operators, public entry points: argument checks, the operator's own
 * problem, the choice of implementation (with the sum-factorization
 * fallback), and the vector checks of every application. */
#include <omp.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "coloring.h"
#include "context.h"
#include "error.h"
#include "operator.h"
#include "operator-device.h"
#include "prehandle.h" /* fea_lanczos_extremes */
#include "space.h"
#include "struct-copy.h"
#include "vector.h"

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
  FEA_CHECK(kind_name(d->kind), ctx, FEA_ERR_INVALID_ARG,
            "unknown operator kind %d (valid: 0..%d)", (int)d->kind, (int)FEA_OPERATOR_MATFREE_SUMFACT);
  FEA_CHECK(fea_update_strategy_name(d->strategy), ctx, FEA_ERR_INVALID_ARG,
            "unknown update strategy %d (valid: 0..%d)", (int)d->strategy, (int)FEA_UPDATE_AUTO);
  return FEA_SUCCESS;
}

/* MATFREE_SUMFACT where the kernel serves the problem; else element matrices and
 * the reason, for the info. */
static const fea_matfree_kernel_ops *pick_kernel(const fea_operator_desc *d, const fea_problem *pb,
                                            char *why, size_t len) {
  why[0] = '\0';
  if (d->kind != FEA_OPERATOR_MATFREE_SUMFACT) return &fea_matfree_kernel_element_matrix;
  if (!fea_matfree_kernel_sumfact.supports(pb, why, len)) return &fea_matfree_kernel_element_matrix;
  return &fea_matfree_kernel_sumfact;
}

static void op_free(fea_operator *op) {
  if (op->impl && op->impl->destroy) op->impl->destroy(op->data);
  fea_problem_destroy(&op->problem);
  free(op->rhs);
  if (op->ctx) fea_context_release(op->ctx);
  free(op);
}

/* ---- device-memory backends ------------------------------------------------------------------ */

/* The operator of a device context: the CPU code builds everything on an
 * internal host context (hop), the backend's op->create uploads it. Sum
 * factorization has no device kernel yet: element matrices run instead and
 * the info says so. */
static fea_status device_upload(fea_operator *op, const fea_operator *hop, const fea_operator_desc *d,
                                fea_update_strategy strategy) {
  fea_context *ctx = op->ctx;
  fea_op_device_src src = {0};
  src.kind = hop->info.kind_run == FEA_OPERATOR_CSR ? FEA_OPERATOR_CSR
                                                     : FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  src.strategy = strategy;
  src.flops_per_apply = hop->info.flops_per_apply;
  src.bytes_per_apply = hop->info.bytes_per_apply;
  src.free_index = op->problem->free_index;
  (void)d;
  double *diag = malloc(((size_t)op->num_free + 1) * sizeof *diag);
  fea_index *colors = NULL;
  fea_status st = diag ? hop->impl->diagonal(hop, diag)
                       : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                   "no memory for a diagonal of %lld entries",
                                   (long long)op->num_free);
  src.diag = diag;
  if (st == FEA_SUCCESS && src.kind == FEA_OPERATOR_CSR) {
    src.A = fea_operator_csr_matrix(hop);
    if (!src.A) st = FEA_ERROR(ctx, FEA_ERR_STATE, "the host operator has no CSR matrix");
  } else if (st == FEA_SUCCESS) {
    const fea_matfree_kernel_ops *k = NULL;
    const void *ks = NULL;
    st = fea_operator_matfree_kernel_state(hop, &k, &ks);
    if (st == FEA_SUCCESS && k != &fea_matfree_kernel_element_matrix)
      st = FEA_ERROR(ctx, FEA_ERR_STATE, "the host operator runs '%s', not element matrices",
                     k->name);
    if (st == FEA_SUCCESS) fea_matfree_element_matrix_view(ks, &src.em);
    if (st == FEA_SUCCESS && strategy == FEA_UPDATE_COLORING) {
      colors = malloc(((size_t)src.em.ne + 1) * sizeof *colors);
      st = colors ? fea_coloring_greedy(ctx, src.em.ne, src.em.nb, src.em.edofs,
                                        op->problem->space->num_dofs, colors, &src.ncolors)
                  : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld element colors",
                              (long long)src.em.ne);
      src.colors = colors;
    }
  }
  if (st == FEA_SUCCESS) st = ctx->backend->op->create(op, &src);
  free(diag);
  free(colors);
  return st;
}

static fea_status device_create(fea_context *ctx, const fea_problem *problem,
                                const fea_operator_desc *d, fea_operator **out) {
  FEA_CHECK(ctx->backend->op && ctx->backend->op->create, ctx, FEA_ERR_UNSUPPORTED,
            "backend '%s' keeps vectors on a device and has no operators", ctx->resource);
  fea_update_strategy strategy = d->strategy == FEA_UPDATE_AUTO ? FEA_UPDATE_ATOMIC_CAS : d->strategy;
  FEA_CHECK(d->kind == FEA_OPERATOR_CSR || strategy == FEA_UPDATE_ATOMIC_CAS ||
                strategy == FEA_UPDATE_COLORING,
            ctx, FEA_ERR_UNSUPPORTED,
            "update strategy '%s' does not exist on '%s': matrix-free operators there resolve "
            "conflicts by atomics (ATOMIC_CAS, the AUTO pick) or by coloring",
            fea_update_strategy_name(d->strategy), ctx->resource);
  if (d->kind == FEA_OPERATOR_CSR) strategy = FEA_UPDATE_SERIAL;
  const double t0 = omp_get_wtime();
  fea_context *hctx = NULL;
  fea_status st = fea_context_create("/cpu/threads", &hctx);
  if (st != FEA_SUCCESS) st = fea_context_create("/cpu/ref", &hctx);
  FEA_CHECK(st == FEA_SUCCESS, ctx, st,
            "no host context to build the operator's data on: %s", fea_context_last_error(NULL));
  fea_operator_desc hd = *d;
  if (hd.kind == FEA_OPERATOR_MATFREE_SUMFACT) hd.kind = FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  hd.strategy = FEA_UPDATE_SERIAL; /* the host operator only computes the diagonal */
  fea_operator *hop = NULL;
  st = fea_operator_create(hctx, problem, &hd, &hop);
  if (st != FEA_SUCCESS) {
    st = FEA_ERROR(ctx, st, "building the operator's host data failed: %s",
                   fea_context_last_error(hctx));
    fea_context_destroy(&hctx);
    return st;
  }
  fea_operator *op = calloc(1, sizeof *op);
  if (!op) {
    fea_operator_destroy(&hop);
    fea_context_destroy(&hctx);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for an operator");
  }
  fea_context_retain(ctx);
  op->ctx = ctx;
  op->info = (fea_operator_info)FEA_OPERATOR_INFO_INIT;
  st = fea_problem_create_poisson(problem->space, &problem->desc, &op->problem);
  if (st == FEA_SUCCESS) {
    op->num_free = op->problem->num_free;
    op->rhs = calloc((size_t)op->num_free + 1, sizeof *op->rhs);
    if (!op->rhs)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld right-hand-side values",
                     (long long)op->num_free);
  }
  if (st == FEA_SUCCESS && hop->rhs_ready) { /* CSR: from the assembly */
    memcpy(op->rhs, hop->rhs, (size_t)op->num_free * sizeof *op->rhs);
    op->rhs_ready = 1;
  }
  if (st == FEA_SUCCESS) st = device_upload(op, hop, d, strategy);
  fea_operator_destroy(&hop);
  fea_context_destroy(&hctx);
  if (st != FEA_SUCCESS) {
    op_free(op);
    return st;
  }
  op->info.kind_run = d->kind == FEA_OPERATOR_CSR ? FEA_OPERATOR_CSR : FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  if (d->kind == FEA_OPERATOR_MATFREE_SUMFACT) { /* the fallback says so */
    char k[96];
    snprintf(k, sizeof k, "%s", op->info.kernel);
    snprintf(op->info.kernel, sizeof op->info.kernel, "%.48s [fallback: %.32s]", k,
             "no GPU sum-factorization yet");
  }
  op->info.rows = op->num_free;
  op->info.setup_s = omp_get_wtime() - t0;
  *out = op;
  return FEA_SUCCESS;
}

fea_status fea_operator_create(fea_context *ctx, const fea_problem *problem,
                               const fea_operator_desc *desc, fea_operator **out) {
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_operator_desc d;
  FEA_CALL(read_desc(ctx, desc, &d));
  if (ctx->backend->mem != FEA_MEM_HOST) return device_create(ctx, problem, &d, out);
  const double t0 = omp_get_wtime();
  fea_operator *op = calloc(1, sizeof *op);
  FEA_CHECK(op, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for an operator");
  fea_context_retain(ctx);
  op->ctx = ctx;
  op->info = (fea_operator_info)FEA_OPERATOR_INFO_INIT;
  /* The operator's own problem: the caller may destroy theirs first. */
  fea_status st = fea_problem_create_poisson(problem->space, &problem->desc, &op->problem);
  if (st == FEA_SUCCESS) {
    op->num_free = op->problem->num_free;
    op->rhs = calloc((size_t)op->num_free + 1, sizeof *op->rhs);
    if (!op->rhs)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld right-hand-side values",
                     (long long)op->num_free);
  }
  char why[96] = "";
  if (st == FEA_SUCCESS && d.kind == FEA_OPERATOR_CSR) {
    st = fea_operator_csr_build(op);
  } else if (st == FEA_SUCCESS) {
    const fea_matfree_kernel_ops *k = pick_kernel(&d, op->problem, why, sizeof why);
    st = fea_operator_matfree_build(op, k, d.strategy);
    op->info.kind_run = k == &fea_matfree_kernel_element_matrix ? FEA_OPERATOR_MATFREE_ELEMENT_MATRIX
                                                           : FEA_OPERATOR_MATFREE_SUMFACT;
  }
  if (st != FEA_SUCCESS) {
    op_free(op);
    return st;
  }
  if (why[0]) { /* the fallback says so */
    char k[96];
    snprintf(k, sizeof k, "%s", op->info.kernel);
    /* Both halves bounded so the reason is never cut off entirely. */
    snprintf(op->info.kernel, sizeof op->info.kernel, "%.40s [fallback: %.40s]", k, why);
  }
  op->info.rows = op->num_free;
  op->info.memory_bytes += (uint64_t)op->num_free * sizeof(double); /* the rhs */
  op->info.setup_s = omp_get_wtime() - t0;
  *out = op;
  return FEA_SUCCESS;
}

fea_status fea_operator_destroy(fea_operator **op) {
  if (!op || !*op) return FEA_SUCCESS;
  op_free(*op);
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
            "vector '%s' has precision %d; operators take FEA_F64 (%d) vectors", name,
            (int)v->prec, (int)FEA_F64);
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
  return apply(op, x, y, 0);
}

fea_status fea_operator_apply_add(fea_operator *op, const fea_vector *x, fea_vector *y) {
  return apply(op, x, y, 1);
}

fea_status fea_operator_get_diagonal(const fea_operator *op, fea_vector *diag) {
  FEA_CHECK_NULL(op, NULL);
  FEA_CALL(check_vector(op, diag, "diag"));
  return op->impl->diagonal(op, diag->data);
}

fea_status fea_operator_get_rhs(fea_operator *op, fea_vector *b) {
  FEA_CHECK_NULL(op, NULL);
  FEA_CALL(check_vector(op, b, "b"));
  if (!op->rhs_ready) { /* the operator's own cache: computed once, on demand */
    FEA_CALL(fea_operator_matfree_rhs(op->problem, op->rhs));
    op->rhs_ready = 1;
  }
  if (op->ctx->backend->mem != FEA_MEM_HOST) /* upload */
    return op->ctx->backend->vec->write(op->ctx, b, FEA_F64, op->rhs);
  memcpy(b->data, op->rhs, (size_t)op->num_free * sizeof *op->rhs);
  return FEA_SUCCESS;
}

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

fea_status fea_operator_estimate_eigenvalues(fea_operator *op, int steps, int jacobi,
                                             double *lambda_min, double *lambda_max) {
  FEA_CHECK_NULL(op, NULL);
  fea_context *ctx = op->ctx;
  FEA_CHECK_NULL(lambda_min, ctx);
  FEA_CHECK_NULL(lambda_max, ctx);
  FEA_CHECK(steps >= 2 && steps <= 1000, ctx, FEA_ERR_INVALID_ARG, "steps = %d is outside 2..1000",
            steps);
  FEA_CHECK(jacobi == 0 || jacobi == 1, ctx, FEA_ERR_INVALID_ARG, "jacobi = %d is not 0 or 1",
            jacobi);
  FEA_CHECK(ctx->backend->mem == FEA_MEM_HOST, ctx, FEA_ERR_UNSUPPORTED,
            "eigenvalue estimates run on host-memory backends only so far; '%s' keeps the "
            "operator on a device", ctx->resource);
  const fea_index n = op->num_free;
  FEA_CHECK(n >= 1, ctx, FEA_ERR_DIMENSION, "the operator has no free DoFs: no eigenvalues");
  spectrum_apply a = {op, NULL, NULL};
  double *d = NULL;
  if (jacobi) {
    d = malloc((size_t)n * sizeof *d);
    a.tmp = malloc((size_t)n * sizeof *a.tmp);
    fea_status st = d && a.tmp ? op->impl->diagonal(op, d)
                               : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                           "no memory for a diagonal of %lld entries", (long long)n);
    for (fea_index i = 0; i < n && st >= 0; i++) {
      if (!(d[i] > 0 && isfinite(d[i])))
        st = FEA_ERROR(ctx, FEA_ERR_NOT_POSDEF,
                       "diagonal entry %lld of the operator is %g: Jacobi scaling needs positive "
                       "entries", (long long)i, d[i]);
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

fea_status fea_operator_get_info(const fea_operator *op, fea_operator_info *info) {
  FEA_CHECK_NULL(op, NULL);
  FEA_CHECK_NULL(info, op->ctx);
  return fea_struct_copy_out(op->ctx, info, &op->info, "info", &fea_struct_operator_info);
}
