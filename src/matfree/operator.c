/* The operator object: its own copy of the problem, the choice of
 * implementation (CSR, or a matrix-free kernel with the sum-factorization
 * fallback to element matrices), and on device contexts the data built on
 * the host delegate and handed to the backend's upload. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/backend.h"
#include "disc/coloring.h"
#include "base/context.h"
#include "internal/error.h"
#include "operator.h"
#include "internal/operator-device.h"
#include "disc/pattern.h"
#include "disc/space.h"
#include "sumfact/qp.h"

/* MATFREE_SUMFACT: the 1D factorization where it applies and geometry_terms
 * leaves the choice (AUTO), else the kernel at quadrature points with the
 * chosen geometry terms; where neither serves the problem, element matrices
 * and the reason, for the info. */
static const fea_matfree_kernel_ops *pick_kernel(const fea_operator_desc *d, const fea_problem *pb,
                                                 char *why, size_t len) {
  why[0] = '\0';
  if (d->kind != FEA_OPERATOR_MATFREE_SUMFACT) return &fea_matfree_kernel_element_matrix;
  if (d->geometry_terms == FEA_GEOMETRY_TERMS_AUTO &&
      fea_matfree_kernel_sumfact.supports(pb, why, len))
    return &fea_matfree_kernel_sumfact;
  const fea_matfree_kernel_ops *qp = d->geometry_terms == FEA_GEOMETRY_TERMS_RECOMPUTED
                                         ? &fea_matfree_kernel_sumfact_qp_recomputed
                                         : &fea_matfree_kernel_sumfact_qp_stored;
  if (!qp->supports(pb, why, len)) return &fea_matfree_kernel_element_matrix;
  why[0] = '\0';
  return qp;
}

static void operator_free(void *object) {
  fea_operator *op = object;
  if (op->impl && op->impl->destroy) op->impl->destroy(op->data);
  if (op->problem) fea_object_release(op->problem);
  free(op->rhs);
  free(op);
}

/* The object with a reference on the problem (the caller may destroy
 * theirs first) and room for the right-hand side. */
static fea_status operator_alloc(fea_context *ctx, const fea_problem *problem, fea_operator **out) {
  fea_operator *op;
  FEA_CALL(fea_object_alloc(ctx, sizeof *op, "operator", operator_free, (void **)&op));
  op->info = (fea_operator_info)FEA_OPERATOR_INFO_INIT;
  /* The reference count is bookkeeping, not the problem's state: a const
   * problem may be retained. */
  op->problem = (fea_problem *)problem;
  fea_object_retain(op->problem);
  op->num_free = op->problem->num_free;
  op->rhs = calloc((size_t)op->num_free + 1, sizeof *op->rhs);
  if (!op->rhs) {
    fea_object_release(op);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld right-hand-side values",
                     (long long)op->num_free);
  }
  *out = op;
  return FEA_SUCCESS;
}

/* The operator on a host context. */
static fea_status host_build(fea_context *ctx, const fea_problem *problem,
                             const fea_operator_desc *d, fea_operator **out) {
  const double t0 = omp_get_wtime();
  fea_operator *op;
  FEA_CALL(operator_alloc(ctx, problem, &op));
  fea_status st = FEA_SUCCESS;
  char why[96] = "";
  if (d->kind == FEA_OPERATOR_CSR) {
    st = fea_operator_csr_build(op);
  } else {
    const fea_matfree_kernel_ops *k = pick_kernel(d, op->problem, why, sizeof why);
    st = fea_operator_matfree_build(op, k, d->strategy);
    op->info.kind_run = k == &fea_matfree_kernel_element_matrix
                            ? FEA_OPERATOR_MATFREE_ELEMENT_MATRIX
                            : FEA_OPERATOR_MATFREE_SUMFACT;
  }
  if (st != FEA_SUCCESS) {
    fea_object_release(op);
    return st;
  }
  if (why[0]) /* the fallback says so: the kernel's short name, and the reason in the rest */
    snprintf(op->info.kernel, sizeof op->info.kernel, "%s [fallback: %.*s]",
             fea_matfree_kernel_element_matrix.name,
             (int)(sizeof op->info.kernel - strlen(fea_matfree_kernel_element_matrix.name) - 15),
             why);
  op->info.rows = op->num_free;
  op->info.memory_bytes += (uint64_t)op->num_free * sizeof(double); /* the rhs */
  op->info.setup_s = omp_get_wtime() - t0;
  *out = op;
  return FEA_SUCCESS;
}

/* ---- device-memory backends ------------------------------------------------------------------ */

/* The operator of a device context: the CPU code builds everything on the
 * context's host delegate (hop, fea_context_host), the backend's op->create
 * uploads it: the CSR matrix, the element matrices, or the sum
 * factorization's 1D tables with the element-DoF table. */
static fea_status device_upload(fea_operator *op, const fea_operator *hop,
                                fea_update_strategy strategy) {
  fea_context *ctx = op->ctx;
  const fea_space *sp = op->problem->space;
  fea_op_device_src src = {0};
  src.kind = hop->info.kind_run;
  src.strategy = strategy;
  src.flops_per_apply = hop->info.flops_per_apply;
  src.bytes_per_apply = hop->info.bytes_per_apply;
  src.free_index = op->problem->free_index;
  double *diag = malloc(((size_t)op->num_free + 1) * sizeof *diag);
  fea_index *colors = NULL, *edofs_own = NULL;
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
    const fea_matfree_kernel_ops *want = src.kind == FEA_OPERATOR_MATFREE_SUMFACT
                                             ? &fea_matfree_kernel_sumfact
                                             : &fea_matfree_kernel_element_matrix;
    if (st == FEA_SUCCESS && k != want)
      st = FEA_ERROR(ctx, FEA_ERR_STATE, "the host operator runs '%s', not '%s'", k->name,
                     want->name);
    src.ne = sp->num_elements;
    src.nb = sp->dofs_per_element;
    if (st == FEA_SUCCESS && k == &fea_matfree_kernel_element_matrix) {
      fea_matfree_element_matrix_view(ks, &src.em);
      src.edofs = src.em.edofs;
    } else if (st == FEA_SUCCESS) {
      fea_matfree_sumfact_view(ks, &src.sf);
      src.edofs = sp->element_dof_table;
      if (!src.edofs && (st = fea_element_dof_table(sp, &edofs_own)) == FEA_SUCCESS)
        src.edofs = edofs_own;
    }
    if (st == FEA_SUCCESS && strategy == FEA_UPDATE_COLORING) {
      colors = malloc(((size_t)src.ne + 1) * sizeof *colors);
      st = colors ? fea_coloring_greedy(ctx, src.ne, src.nb, src.edofs, sp->num_dofs, colors,
                                        &src.ncolors)
                  : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld element colors",
                              (long long)src.ne);
      src.colors = colors;
    }
  }
  if (st == FEA_SUCCESS) st = ctx->backend->op->create(op, &src);
  free(diag);
  free(colors);
  free(edofs_own);
  return st;
}

/* Whether the device runs MATFREE_SUMFACT for this problem: the host's
 * coefficient-space kernel serves it (the kernel at quadrature points has
 * no device form) and the backend has a kernel of its sizes; else the reason. */
static int device_sumfact(const fea_context *ctx, const fea_problem *pb, const fea_operator_desc *d,
                          char *why, size_t len) {
  why[0] = '\0';
  if (d->kind != FEA_OPERATOR_MATFREE_SUMFACT) return 0;
  if (!ctx->backend->op->sumfact_supports) {
    snprintf(why, len, "no sum factorization on this device");
    return 0;
  }
  if (d->geometry_terms != FEA_GEOMETRY_TERMS_AUTO) {
    snprintf(why, len, "no device kernel at quadrature points");
    return 0;
  }
  if (!fea_matfree_kernel_sumfact.supports(pb, why, len)) return 0;
  const fea_space *sp = pb->space;
  int n[3] = {1, 1, 1};
  for (int k = 0; k < sp->dim; k++) n[k] = sp->degree[k] + 1;
  if (!ctx->backend->op->sumfact_supports(sp->dim, n, why, len)) return 0;
  why[0] = '\0';
  return 1;
}

static fea_status device_create(fea_context *ctx, const fea_problem *problem,
                                const fea_operator_desc *d, fea_operator **out) {
  FEA_CHECK(ctx->backend->op && ctx->backend->op->create, ctx, FEA_ERR_UNSUPPORTED,
            "backend '%s' keeps vectors on a device and has no operators", ctx->resource);
  fea_update_strategy strategy = d->strategy == FEA_UPDATE_AUTO ? FEA_UPDATE_ATOMIC_CAS
                                                                : d->strategy;
  FEA_CHECK(d->kind == FEA_OPERATOR_CSR || strategy == FEA_UPDATE_ATOMIC_CAS ||
                strategy == FEA_UPDATE_COLORING,
            ctx, FEA_ERR_UNSUPPORTED,
            "update strategy '%s' does not exist on '%s': matrix-free operators there resolve "
            "conflicts by atomics (ATOMIC_CAS, the AUTO pick) or by coloring",
            fea_update_strategy_name(d->strategy), ctx->resource);
  if (d->kind == FEA_OPERATOR_CSR) strategy = FEA_UPDATE_SERIAL;
  const double t0 = omp_get_wtime();
  fea_context *hctx;
  FEA_CALL(fea_context_host(ctx, &hctx));
  char why[96];
  const int sumfact = device_sumfact(ctx, problem, d, why, sizeof why);
  fea_operator_desc hd = *d;
  if (hd.kind == FEA_OPERATOR_MATFREE_SUMFACT && !sumfact)
    hd.kind = FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  hd.strategy = FEA_UPDATE_SERIAL; /* the host operator only computes the diagonal */
  fea_operator *hop = NULL;
  fea_status st = host_build(hctx, problem, &hd, &hop);
  if (st != FEA_SUCCESS)
    return FEA_ERROR(ctx, st, "building the operator's host data failed: %s", hctx->last_error);
  fea_operator *op = NULL;
  st = operator_alloc(ctx, problem, &op);
  if (st != FEA_SUCCESS) {
    fea_object_release(hop);
    return st;
  }
  if (hop->rhs_ready) { /* CSR: from the assembly */
    memcpy(op->rhs, hop->rhs, (size_t)op->num_free * sizeof *op->rhs);
    op->rhs_ready = 1;
  }
  st = device_upload(op, hop, strategy);
  op->info.kind_run = hop->info.kind_run;
  fea_object_release(hop);
  if (st != FEA_SUCCESS) {
    fea_object_release(op);
    return st;
  }
  if (d->kind == FEA_OPERATOR_MATFREE_SUMFACT && !sumfact) { /* the fallback says so */
    char k[96];
    snprintf(k, sizeof k, "%s", op->info.kernel);
    snprintf(op->info.kernel, sizeof op->info.kernel, "%.40s [fallback: %.42s]", k, why);
  }
  op->info.rows = op->num_free;
  op->info.setup_s = omp_get_wtime() - t0;
  *out = op;
  return FEA_SUCCESS;
}

fea_status fea_operator_build(fea_context *ctx, const fea_problem *problem,
                              const fea_operator_desc *d, fea_operator **out) {
  if (ctx->backend->mem != FEA_MEM_HOST) return device_create(ctx, problem, d, out);
  return host_build(ctx, problem, d, out);
}

fea_status fea_operator_build_from_csr(fea_context *ctx, const fea_problem *problem, fea_matrix *A,
                                       const double *rhs, fea_operator **out) {
  FEA_CHECK(ctx->backend->mem == FEA_MEM_HOST, ctx, FEA_ERR_UNSUPPORTED,
            "a CSR operator from a given matrix is host-only; '%s' keeps vectors on a device",
            ctx->resource);
  FEA_CHECK(A->rows == problem->num_free && A->cols == problem->num_free, ctx, FEA_ERR_DIMENSION,
            "a %lld x %lld matrix for a problem with %lld free DoFs", (long long)A->rows,
            (long long)A->cols, (long long)problem->num_free);
  const double t0 = omp_get_wtime();
  fea_operator *op;
  FEA_CALL(operator_alloc(ctx, problem, &op));
  fea_status st = fea_operator_csr_adopt(op, A);
  if (st != FEA_SUCCESS) {
    fea_object_release(op);
    return st;
  }
  if (rhs) {
    memcpy(op->rhs, rhs, (size_t)op->num_free * sizeof *op->rhs);
    op->rhs_ready = 1;
  }
  op->info.rows = op->num_free;
  op->info.memory_bytes += (uint64_t)op->num_free * sizeof(double); /* the rhs */
  op->info.setup_s = omp_get_wtime() - t0;
  *out = op;
  return FEA_SUCCESS;
}

fea_status fea_operator_build_from_impl(fea_context *ctx, const fea_problem *problem,
                                        const fea_operator_impl *impl, void *data,
                                        const double *rhs, fea_operator **out) {
  fea_operator *op = NULL;
  fea_status st = ctx->backend->mem == FEA_MEM_HOST
                      ? operator_alloc(ctx, problem, &op)
                      : FEA_ERROR(ctx, FEA_ERR_UNSUPPORTED,
                                  "a host operator on '%s', which keeps vectors on a device",
                                  ctx->resource);
  if (st != FEA_SUCCESS) {
    impl->destroy(data);
    return st;
  }
  op->impl = impl;
  op->data = data;
  if (rhs) {
    memcpy(op->rhs, rhs, (size_t)op->num_free * sizeof *op->rhs);
    op->rhs_ready = 1;
  }
  op->info.rows = op->num_free;
  op->info.memory_bytes = (uint64_t)op->num_free * sizeof(double); /* the rhs */
  *out = op;
  return FEA_SUCCESS;
}

fea_status fea_operator_rhs(fea_operator *op, double *b) {
  if (!op->rhs_ready) { /* the operator's own cache: computed once, on demand */
    FEA_CALL(fea_operator_matfree_rhs(op->problem, op->rhs));
    op->rhs_ready = 1;
  }
  if (b) memcpy(b, op->rhs, (size_t)op->num_free * sizeof *b);
  return FEA_SUCCESS;
}
