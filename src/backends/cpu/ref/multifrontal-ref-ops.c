/* The /cpu/ref multifrontal ops table: the factor's storage, and the walks
 * it runs: one thread walks the whole tree as one subtree
 * (multifrontal-subtree-walk.c), more threads (in BLAS) walk it level by
 * level, and the solve sweeps go level by level on the calling thread
 * (multifrontal-level-walk.c). */
#include <stdlib.h>

#include "base/context.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "internal/etree.h"
#include "base/prefault.h"
#include "base/thread-budget.h"

static fea_status ref_factor_alloc(fea_context *ctx, fea_multifrontal_factor *f) {
  const fea_etree *t = f->tree;
  size_t nn = (size_t)t->num_nodes;
  f->panels = malloc((size_t)(t->factor_entries ? t->factor_entries : 1) * sizeof *f->panels);
  f->schur = calloc(nn, sizeof *f->schur);
  f->leaf_load = calloc(nn, sizeof *f->leaf_load);
  f->load = calloc((size_t)(t->num_dofs ? t->num_dofs : 1), sizeof *f->load);
  fea_status st = FEA_SUCCESS;
  /* Every panel is written once by its front, most of them by the few large
   * fronts near the root, where page faults took half the root's time
   * (prefault.c). */
  if (f->panels)
    fea_memory_prefault(f->panels, (size_t)t->factor_entries * sizeof *f->panels,
                        fea_thread_budget(ctx));
  if (!f->panels || !f->schur || !f->leaf_load || !f->load)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld factor entries",
                   (long long)t->factor_entries);
  if (st == FEA_SUCCESS) st = fea_cpu_multifrontal_schur_pool_create(ctx, t, &f->schur_pool);
  if (st < 0) {
    free(f->panels);
    free(f->schur);
    free(f->leaf_load);
    free(f->load);
    f->panels = f->load = NULL;
    f->schur = f->leaf_load = NULL;
  }
  return st;
}

static void ref_factor_release(fea_context *ctx, fea_multifrontal_factor *f) {
  (void)ctx;
  if (!f->tree) return;
  for (fea_index n = 0; n < f->tree->num_nodes; n++)
    if (f->leaf_load) free(f->leaf_load[n]);
  fea_cpu_multifrontal_schur_pool_free(f->schur_pool);
  f->schur_pool = NULL;
  free(f->schur);
  free(f->leaf_load);
  free(f->panels);
  free(f->load);
  f->panels = f->load = NULL;
  f->schur = f->leaf_load = NULL;
}

/* One thread: the whole tree as one subtree walk (multifrontal-subtree-walk.c),
 * whose stack holds a path's Schur blocks instead of a level's; with BLAS
 * threads, level by level. */
static int ref_below_cut(const fea_context *ctx, const fea_etree *t, int *team) {
  *team = 1;
  return ctx->nthreads > 1 ? -1 : t->num_levels - 1;
}

static fea_status ref_factor_below(fea_context *ctx, fea_multifrontal_factor *f, int *cut,
                                   double *level_s) {
  int team;
  *cut = -1;
  const int c = ref_below_cut(ctx, f->tree, &team);
  if (c < 0) return FEA_SUCCESS;
  FEA_CALL(fea_cpu_multifrontal_factor_subtrees(ctx, f, c, team, level_s));
  *cut = c;
  return FEA_SUCCESS;
}

const struct fea_multifrontal_ops fea_cpu_ref_multifrontal_ops = {
    .factor_alloc = ref_factor_alloc,
    .factor_release = ref_factor_release,
    .factor_level = fea_cpu_multifrontal_factor_level,
    .factor_below = ref_factor_below,
    .below_cut = ref_below_cut,
    .forward_level = fea_cpu_multifrontal_forward_level,
    .backward_level = fea_cpu_multifrontal_backward_level,
};
