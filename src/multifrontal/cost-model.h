/* The a-priori cost model of the multifrontal solver (src/multifrontal/cost-model.c):
 * the paper's closed forms, the critical path of eq. (23) over any list of
 * tree nodes, and the exact counts from the symbolic tree. The public entry
 * points (src/interface/api-cost.c) validate, then call these. */
#ifndef FEA_INTERNAL_COST_MODEL_H
#define FEA_INTERNAL_COST_MODEL_H

#include <feaccel/cost.h>

/* The paper's model, eqs. (22)-(27) with unit constants (see cost.h), q and
 * r times ncomp for a system. Arguments are valid; nproc 0 means unlimited.
 * Fills every field but size. */
void fea_cost_paper_eval(int dim, int p, fea_index n, int ncomp, int nproc, fea_cost *c);

/* One node of a tree as the critical path sees it. */
typedef struct fea_cost_node {
  int level;
  fea_index q, r;
} fea_cost_node;

/* FLOPs of a node: the whole node, and its dense factorization of the q x q
 * block alone (the part eq. (23) spreads over q rows). */
typedef double (*fea_cost_flops_fn)(fea_index q, fea_index r);

/* Eq. (23) over nodes[0..count-1] for nproc processors (0: unlimited), with
 * the node cost F(q, 0) / min(N~, q) + (F(q, r) - F(q, 0)) / min(N~, r):
 * per level ceil(m / P) rounds of the costliest-first nodes. Returns
 * FEA_ERR_OUT_OF_MEMORY (on ctx) when the scratch array cannot be had. */
fea_status fea_cost_critical_path(const fea_context *ctx, const fea_cost_node *nodes,
                                  fea_index count, fea_cost_flops_fn flops, int nproc,
                                  double *critical);

/* Exact counts from the solver's symbolic tree (valid query; ncomp
 * components per function, every one with the side's condition; sides NULL
 * or 2 dim conditions per fea_patch_side). peak_bytes (may be NULL) receives
 * the setup's peak memory estimate. */
fea_status fea_cost_exact_eval(fea_context *ctx, int dim, int p, fea_index n, int ncomp,
                               const fea_bc_type *sides, int nproc, fea_cost *c,
                               double *peak_bytes);

/* fea_cost_model_fits: *fits = 0 from the tree's lower bound when it
 * exceeds bytes (no O(DoF) memory; natural sides only add unknowns, so the
 * all-Dirichlet bound stays a lower bound), else from the exact peak. */
fea_status fea_cost_fits_eval(fea_context *ctx, int dim, int p, fea_index n, int ncomp,
                              const fea_bc_type *sides, uint64_t bytes, int *fits);

#endif
