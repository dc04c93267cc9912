/* How /gpu/cuda builds an operator: the matfree family's CPU operator on
 * this context's host delegate, described through the host builder and
 * uploaded by operator-cuda.c (PETSc's MatCreate_SeqAIJCUSPARSE: the host
 * type first, then the conversion).
 *
 * The choices that are the device's live here: AUTO resolves to atomics,
 * the update strategies a GPU has (atomics, coloring, and the unprotected
 * GPU_Max of the scatter option), and whether the GPU's sum-factorization
 * kernel serves the problem; where it does not, the host builds element
 * matrices instead and the operator's kernel text says why. */
#include "fea-config.h"

#include <stdio.h>
#include <string.h>

#include <feaccel/assembly.h>

#include "base/context.h"
#include "cuda-backend.h"
#include "disc/space.h"
#include "internal/error.h"
#include "internal/object.h"
#include "internal/operator-device.h"

/* Whether the GPU runs MATFREE_SUMFACT for this problem: the host's
 * coefficient-space kernel serves it (the kernel at quadrature points has
 * no device form) and a kernel of its sizes is compiled; else the reason. */
static int gpu_sumfact(const fea_problem *pb, const fea_operator_desc *d,
                       const fea_operator_host_builder *hb, char *why, size_t len) {
  why[0] = '\0';
  if (d->kind != FEA_OPERATOR_MATFREE_SUMFACT) return 0;
  if (d->geometry_terms != FEA_GEOMETRY_TERMS_AUTO) {
    snprintf(why, len, "no device kernel at quadrature points");
    return 0;
  }
  if (!hb->sumfact_serves(pb, why, len)) return 0;
  const fea_space *sp = pb->space;
  int n[3] = {1, 1, 1};
  for (int k = 0; k < sp->dim; k++) n[k] = sp->degree[k] + 1;
  if (!fea_cuda_sumfact_supports(sp->dim, n, why, len)) return 0;
  why[0] = '\0';
  return 1;
}

/* The empty operator of ctx filled by the upload of what hop holds. */
static fea_status upload(fea_context *ctx, const fea_problem *problem, const fea_operator *hop,
                         const fea_operator_host_builder *hb, fea_update_strategy strategy,
                         fea_operator **out) {
  fea_operator *op = NULL;
  FEA_CALL(hb->alloc(ctx, problem, &op));
  if (hop->rhs_ready) { /* CSR: from the assembly */
    memcpy(op->rhs, hop->rhs, (size_t)op->num_free * sizeof *op->rhs);
    op->rhs_ready = 1;
  }
  fea_op_device_src src;
  fea_status st = hb->describe(ctx, hop, strategy, &src);
  if (st == FEA_SUCCESS) st = fea_cuda_operator_upload(op, &src);
  hb->release(&src);
  if (st != FEA_SUCCESS) {
    fea_object_release(op);
    return st;
  }
  op->info.kind_run = hop->info.kind_run;
  *out = op;
  return FEA_SUCCESS;
}

static fea_status cuda_operator_build(fea_context *ctx, const fea_problem *problem,
                                      const fea_operator_desc *d,
                                      const fea_operator_host_builder *hb, fea_operator **out) {
  fea_update_strategy strategy = d->strategy == FEA_UPDATE_AUTO ? FEA_UPDATE_ATOMIC_CAS
                                                                : d->strategy;
  FEA_CHECK(d->kind == FEA_OPERATOR_CSR || strategy == FEA_UPDATE_ATOMIC_CAS ||
                strategy == FEA_UPDATE_COLORING,
            ctx, FEA_ERR_UNSUPPORTED,
            "update strategy '%s' does not exist on '%s': matrix-free operators there resolve "
            "conflicts by atomics (ATOMIC_CAS, the AUTO pick) or by coloring",
            fea_update_strategy_name(d->strategy), ctx->resource);
  if (d->kind == FEA_OPERATOR_CSR) strategy = FEA_UPDATE_SERIAL;
  fea_context *hctx;
  FEA_CALL(fea_context_host(ctx, &hctx));
  char why[96];
  const int sumfact = gpu_sumfact(problem, d, hb, why, sizeof why);
  fea_operator_desc hd = *d;
  if (hd.kind == FEA_OPERATOR_MATFREE_SUMFACT && !sumfact)
    hd.kind = FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  hd.strategy = FEA_UPDATE_SERIAL; /* the host operator only computes the diagonal */
  fea_operator *hop = NULL;
  fea_status st = hb->build(hctx, problem, &hd, &hop);
  if (st != FEA_SUCCESS)
    return FEA_ERROR(ctx, st, "building the operator's host data failed: %s", hctx->last_error);
  fea_operator *op = NULL;
  st = upload(ctx, problem, hop, hb, strategy, &op);
  fea_object_release(hop);
  FEA_CALL(st);
  if (d->kind == FEA_OPERATOR_MATFREE_SUMFACT && !sumfact) { /* the fallback says so */
    char k[96];
    snprintf(k, sizeof k, "%s", op->info.kernel);
    snprintf(op->info.kernel, sizeof op->info.kernel, "%.40s [fallback: %.42s]", k, why);
  }
  op->info.rows = op->num_free;
  *out = op;
  return FEA_SUCCESS;
}

const struct fea_operator_ops fea_cuda_operator_ops = {
    .build = cuda_operator_build,
    .pointwise_mul = fea_cuda_operator_pointwise_mul,
    .sync = fea_cuda_sync,
};
