/* The CPU multifrontal code's level walk: the bookkeeping around one level
 * of the factorization (its Schur blocks, the leaves' loads) and one level
 * of each of the three sweeps run node after node on the calling thread,
 * the ops of /cpu/ref. Calls the node kernels (multifrontal-node.c), the
 * Schur pool and the sweep's work (multifrontal-sweep-work.c). */
#include <stdio.h>
#include <stdlib.h>

#include "base/context.h"
#include "base/progress.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "internal/etree.h"

fea_status fea_cpu_multifrontal_level_start(fea_context *ctx, fea_multifrontal_factor *f,
                                            int level) {
  return fea_cpu_multifrontal_schur_pool_level_start(ctx, f->schur_pool, level);
}

void fea_cpu_multifrontal_level_done(fea_multifrontal_factor *f, int level) {
  const fea_etree *t = f->tree;
  fea_cpu_multifrontal_schur_pool_level_done(f->schur_pool, level);
  for (fea_index k = t->level_start[level]; k < t->level_start[level + 1]; k++) {
    const fea_etree_node *nd = &t->nodes[t->level_nodes[k]];
    for (fea_index c = 0; c < nd->num_children; c++)
      f->schur[t->children[nd->first_child + c]] = NULL;
    if (level != 0) continue;
    fea_index n = t->level_nodes[k];
    const fea_index *dofs = t->front_dofs + nd->front_off;
    const double *load = f->leaf_load[n];
    if (load)
      for (fea_index a = 0; a < nd->q + nd->r; a++) f->load[dofs[a]] += load[a];
    free(f->leaf_load[n]);
    f->leaf_load[n] = NULL;
  }
}

fea_status fea_cpu_multifrontal_factor_level(fea_context *ctx, fea_multifrontal_factor *f,
                                             int level) {
  const fea_etree *t = f->tree;
  FEA_CALL(fea_cpu_multifrontal_level_start(ctx, f, level));
  for (fea_index k = t->level_start[level]; k < t->level_start[level + 1]; k++) {
    FEA_CALL(fea_progress_of(ctx, FEA_PROGRESS_MULTIFRONTAL, (double)k, (double)t->num_nodes));
    fea_index n = t->level_nodes[k];
    double flops, integ;
    fea_status st = fea_cpu_multifrontal_factor_node(ctx, f, n, &flops, &integ);
    if (st == FEA_ERR_CANCELLED) return st; /* raised on ctx by the front's report */
    if (st < 0) {
      char why[FEA_ERROR_LEN];
      snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
      return fea_multifrontal_node_error(ctx, f, n, st, why);
    }
    f->flops += flops;
    f->integrate_s += integ;
  }
  fea_cpu_multifrontal_level_done(f, level);
  return fea_progress_of(ctx, FEA_PROGRESS_MULTIFRONTAL, (double)t->level_start[level + 1],
                         (double)t->num_nodes);
}

fea_status fea_cpu_multifrontal_forward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                              fea_multifrontal_solve *sv, int level) {
  const fea_etree *t = f->tree;
  const fea_cpu_multifrontal_sweep_work *w;
  FEA_CALL(fea_cpu_multifrontal_sweep_work_get(ctx, f, sv, 1, 0, 1, &w));
  double *W = fea_cpu_multifrontal_sweep_block(w, 0);
  for (fea_index k = t->level_start[level]; k < t->level_start[level + 1]; k++)
    FEA_CALL(fea_cpu_multifrontal_forward_node(ctx, f, sv, t->level_nodes[k], W, w));
  return FEA_SUCCESS;
}

fea_status fea_cpu_multifrontal_backward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                               fea_multifrontal_solve *sv, int level) {
  const fea_etree *t = f->tree;
  const fea_cpu_multifrontal_sweep_work *w;
  FEA_CALL(fea_cpu_multifrontal_sweep_work_get(ctx, f, sv, 1, 0, 0, &w));
  double *Z = fea_cpu_multifrontal_sweep_block(w, 0);
  for (fea_index k = t->level_start[level]; k < t->level_start[level + 1]; k++)
    FEA_CALL(fea_cpu_multifrontal_backward_node(ctx, f, sv, t->level_nodes[k], Z));
  return FEA_SUCCESS;
}
