/* The operator object: its own copy of the problem, the choice of
 * implementation (CSR, or a matrix-free kernel with the sum-factorization
 * fallback to element matrices), and the host builder that backends with
 * operators of their own build and describe the CPU operator through. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/backend.h"
#include "disc/coloring.h"
#include "base/clock.h"
#include "base/context.h"
#include "internal/error.h"
#include "operator.h"
#include "internal/operator-device.h"
#include "disc/pattern.h"
#include "disc/space.h"
#include "sumfact/elastic.h"
#include "sumfact/qp.h"
#include "kron/kron.h"

/* MATFREE_SUMFACT on linear elasticity: the box way (nothing per point)
 * where the elements are axis-aligned boxes with a constant material and
 * geometry_terms leaves the choice, else the point terms stored; RECOMPUTED
 * is the scalar kernel's way only, and falls back as it does where it does
 * not serve. */
static const fea_matfree_kernel_ops *pick_elastic(const fea_operator_desc *d, const fea_problem *pb,
                                                  char *why, size_t len) {
  if (d->geometry_terms == FEA_GEOMETRY_TERMS_AUTO &&
      fea_matfree_kernel_sumfact_elastic_box.supports(pb, why, len))
    return &fea_matfree_kernel_sumfact_elastic_box;
  if (d->geometry_terms == FEA_GEOMETRY_TERMS_RECOMPUTED) {
    snprintf(why, len,
             "RECOMPUTED geometry terms serve scalar problems; elasticity keeps them STORED");
    return &fea_matfree_kernel_element_matrix;
  }
  if (!fea_matfree_kernel_sumfact_elastic_stored.supports(pb, why, len))
    return &fea_matfree_kernel_element_matrix;
  why[0] = '\0';
  return &fea_matfree_kernel_sumfact_elastic_stored;
}

/* MATFREE_SUMFACT: the 1D factorization where it applies and geometry_terms
 * leaves the choice (AUTO), else the kernel at quadrature points with the
 * chosen geometry terms; where neither serves the problem, element matrices
 * and the reason, for the info. */
static const fea_matfree_kernel_ops *pick_kernel(const fea_operator_desc *d, const fea_problem *pb,
                                                 char *why, size_t len) {
  why[0] = '\0';
  if (d->kind != FEA_OPERATOR_MATFREE_SUMFACT) return &fea_matfree_kernel_element_matrix;
  if (pb->elastic) /* systems: elasticity's own kernel, boxes first (sumfact/elastic.h) */
    return pick_elastic(d, pb, why, len);
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

/* MATFREE_SUMFACT on a B-spline box with nothing else asked for (AUTO
 * strategy and geometry terms) runs at the level of the whole patch
 * (kron/kron.h); a backend that uploads the host operator (ctx->backend->op)
 * gets the element-wise kernel it knows how to describe. */
static int kron_serves(const fea_context *ctx, const fea_operator_desc *d, const fea_problem *pb) {
  char why[160];
  return d->kind == FEA_OPERATOR_MATFREE_SUMFACT && d->strategy == FEA_UPDATE_AUTO &&
         d->geometry_terms == FEA_GEOMETRY_TERMS_AUTO && !ctx->backend->op &&
         pb->space->kind == FEA_SPACE_BSPLINE &&
         (pb->elastic ? fea_kron_elastic_supports(pb, why, sizeof why)
                      : fea_kron_supports(pb, why, sizeof why));
}

/* The same on a mapped patch (kron-mapped.c): the operator's own setup
 * finds out whether the map's coefficients are few enough terms. */
static int kron_mapped_serves(const fea_context *ctx, const fea_operator_desc *d,
                              const fea_problem *pb) {
  char why[160];
  return d->kind == FEA_OPERATOR_MATFREE_SUMFACT && d->strategy == FEA_UPDATE_AUTO &&
         d->geometry_terms == FEA_GEOMETRY_TERMS_AUTO && !ctx->backend->op && !pb->elastic &&
         pb->space->kind == FEA_SPACE_BSPLINE && fea_kron_mapped_supports(pb, why, sizeof why);
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
  int built = 0; /* by the mapped Kronecker operator (or failed there) */
  if (kron_mapped_serves(ctx, d, op->problem)) {
    char rank_why[160]; /* FEA_ERR_UNSUPPORTED, no error set: too many terms */
    st = fea_operator_kron_mapped_build(op, rank_why, sizeof rank_why);
    built = st != FEA_ERR_UNSUPPORTED;
    if (!built) st = FEA_SUCCESS;
  }
  if (built) {
    /* done above */
  } else if (d->kind == FEA_OPERATOR_CSR) {
    st = fea_operator_csr_build(op);
  } else if (kron_serves(ctx, d, op->problem)) {
    st = op->problem->elastic ? fea_operator_kron_elastic_build(op) : fea_operator_kron_build(op);
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

/* ---- the host builder handed to backends that build their own operators ---------------------- */

/* What the host operator holds, for a backend's upload: the CSR matrix, the
 * element matrices, or the sum factorization's 1D tables with the
 * element-DoF table; the diagonal; the colors when strategy is COLORING. */
static fea_status describe(fea_context *ctx, const fea_operator *hop, fea_update_strategy strategy,
                           fea_op_device_src *src) {
  const fea_space *sp = hop->problem->space;
  *src = (fea_op_device_src){0};
  src->kind = hop->info.kind_run;
  src->strategy = strategy;
  src->flops_per_apply = hop->info.flops_per_apply;
  src->bytes_per_apply = hop->info.bytes_per_apply;
  src->free_index = hop->problem->free_index;
  double *diag = src->owned[0] = malloc(((size_t)hop->num_free + 1) * sizeof *diag);
  fea_status st = diag ? hop->impl->diagonal(hop, diag)
                       : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                   "no memory for a diagonal of %lld entries",
                                   (long long)hop->num_free);
  src->diag = diag;
  if (st == FEA_SUCCESS && src->kind == FEA_OPERATOR_CSR) {
    src->A = fea_operator_csr_matrix(hop);
    if (!src->A) st = FEA_ERROR(ctx, FEA_ERR_STATE, "the host operator has no CSR matrix");
  } else if (st == FEA_SUCCESS) {
    const fea_matfree_kernel_ops *k = NULL;
    const void *ks = NULL;
    st = fea_operator_matfree_kernel_state(hop, &k, &ks);
    const fea_matfree_kernel_ops *want = src->kind == FEA_OPERATOR_MATFREE_SUMFACT
                                             ? &fea_matfree_kernel_sumfact
                                             : &fea_matfree_kernel_element_matrix;
    if (st == FEA_SUCCESS && k != want)
      st = FEA_ERROR(ctx, FEA_ERR_STATE, "the host operator runs '%s', not '%s'", k->name,
                     want->name);
    src->ne = sp->num_elements;
    src->nb = sp->dofs_per_element;
    if (st == FEA_SUCCESS && k == &fea_matfree_kernel_element_matrix) {
      fea_matfree_element_matrix_view(ks, &src->em);
      src->edofs = src->em.edofs;
    } else if (st == FEA_SUCCESS) {
      fea_matfree_sumfact_view(ks, &src->sf);
      src->edofs = sp->element_dof_table;
      fea_index *own = NULL;
      if (!src->edofs && (st = fea_element_dof_table(sp, &own)) == FEA_SUCCESS)
        src->edofs = src->owned[1] = own;
    }
    if (st == FEA_SUCCESS && strategy == FEA_UPDATE_COLORING) {
      fea_index *colors = src->owned[2] = malloc(((size_t)src->ne + 1) * sizeof *colors);
      st = colors ? fea_coloring_greedy(ctx, src->ne, src->nb, src->edofs, sp->num_dofs, colors,
                                        &src->ncolors)
                  : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld element colors",
                              (long long)src->ne);
      src->colors = colors;
    }
  }
  return st;
}

static void describe_release(fea_op_device_src *src) {
  for (int i = 0; i < 3; i++) {
    free(src->owned[i]);
    src->owned[i] = NULL;
  }
}

static int sumfact_serves(const fea_problem *problem, char *why, size_t len) {
  return fea_matfree_kernel_sumfact.supports(problem, why, len);
}

const fea_operator_host_builder fea_operator_host_builder_cpu = {
    .build = host_build,
    .alloc = operator_alloc,
    .describe = describe,
    .release = describe_release,
    .sumfact_serves = sumfact_serves,
};

/* A backend that builds its own operators (its `op` slot) is handed the
 * host builder; the others get the CPU operator itself. */
fea_status fea_operator_build(fea_context *ctx, const fea_problem *problem,
                              const fea_operator_desc *d, fea_operator **out) {
  const struct fea_operator_ops *ops = ctx->backend->op;
  if (!ops) return host_build(ctx, problem, d, out);
  FEA_CHECK(ops->build, ctx, FEA_ERR_UNSUPPORTED,
            "backend '%s' has operators but no way to build one", ctx->resource);
  const double t0 = fea_now();
  FEA_CALL(ops->build(ctx, problem, d, &fea_operator_host_builder_cpu, out));
  (*out)->info.setup_s = fea_now() - t0;
  return FEA_SUCCESS;
}

fea_status fea_operator_build_from_csr(fea_context *ctx, const fea_problem *problem, fea_matrix *A,
                                       const double *rhs, fea_operator **out) {
  FEA_CHECK(!ctx->backend->op, ctx, FEA_ERR_UNSUPPORTED,
            "a CSR operator from a given matrix is a host operator; '%s' builds its own",
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
  fea_status st = !ctx->backend->op
                      ? operator_alloc(ctx, problem, &op)
                      : FEA_ERROR(ctx, FEA_ERR_UNSUPPORTED,
                                  "a host operator on '%s', which builds its own operators",
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

fea_status fea_operator_block(const fea_operator *op, const fea_index *rows, int m, double *M) {
  if (!op->impl || !op->impl->entries) return FEA_ERR_UNSUPPORTED;
  return op->impl->entries(op, rows, m, M);
}

fea_status fea_operator_rhs(fea_operator *op, double *b) {
  if (!op->rhs_ready) { /* the operator's own cache: computed once, on demand */
    fea_status st = op->impl && op->impl->rhs ? op->impl->rhs(op, op->rhs) : FEA_ERR_UNSUPPORTED;
    if (st == FEA_ERR_UNSUPPORTED) st = fea_operator_matfree_rhs(op->problem, op->rhs);
    FEA_CALL(st);
    op->rhs_ready = 1;
  }
  if (b) memcpy(b, op->rhs, (size_t)op->num_free * sizeof *b);
  return FEA_SUCCESS;
}
