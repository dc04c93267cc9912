/* The memory a numeric factorization holds at its peak when the levels up
 * to a cut are walked as whole subtrees and the rest level by level
 * (etree.h; the walk is src/backends/cpu/ref/multifrontal-subtree-walk.c).
 *
 * The tree's peak_entries (etree.c) counts the level walk, which holds every
 * Schur block of a level until its parents' level is done: at 2D p = 3 with
 * 1.05M unknowns 6.10 GB, where the one-thread subtree walk peaked at
 * 4.16 GB resident. The memory guard checks the walk the backend will run,
 * so a problem that fits is not refused for the level walk's figure; the
 * figure is an upper bound of what the walk allocates:
 *
 *   factor panels + the load (num_dofs)
 *   + max(below the cut: every leaf's load vector, the pool blocks of the
 *         subtree roots, and one stack per worker of the largest stack a
 *         subtree needs;
 *         each level above the cut: the blocks alive there, as etree.c
 *         counts them). */
#include <stdlib.h>

#include "base/context.h"
#include "internal/error.h"
#include "internal/etree.h"
#include "internal/multifrontal.h"

static double block(const fea_etree_node *nd) { return (double)nd->r * (double)nd->r; }

fea_status fea_etree_walk_peak(const fea_context *ctx, const fea_etree *t, int cut, int team,
                               fea_index *peak) {
  const fea_index nn = t->num_nodes;
  const int nl = t->num_levels;
  if (cut < 0 || nn == 0) {
    *peak = t->peak_entries;
    return FEA_SUCCESS;
  }
  if (cut >= nl) cut = nl - 1;
  if (team < 1) team = 1;
  fea_index *first = malloc((size_t)nn * sizeof *first);
  double *live = calloc((size_t)nl + 1, sizeof *live);
  if (!first || !live) {
    free(first);
    free(live);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to size the walk of %lld nodes",
                     (long long)nn);
  }
  double below = 0, stack = 0, roots = 0;
  for (fea_index n = 0; n < nn; n++) { /* post-order: children first */
    const fea_etree_node *nd = &t->nodes[n];
    first[n] = n;
    for (fea_index k = 0; k < nd->num_children; k++) {
      const fea_index c = t->children[nd->first_child + k];
      if (first[c] < first[n]) first[n] = first[c];
    }
    if (nd->num_children == 0) below += (double)(nd->q + nd->r); /* its load vector */
    const int up = nd->parent >= 0 ? t->nodes[nd->parent].level : nl;
    if (nd->level <= cut && up > cut) { /* a subtree root: its block is the pool's */
      below += block(nd);
      roots += 1;
      const double need = (double)fea_etree_subtree_stack(t, first[n], n);
      if (need > stack) stack = need;
    }
    /* Above the cut, alive from its level through its parent's (etree.c). */
    const int last = nd->parent >= 0 ? up : nd->level;
    live[nd->level] += block(nd);
    live[last + 1] -= block(nd);
  }
  below += (roots < team ? roots : (double)team) * stack;
  double worst = below, run = 0;
  for (int L = 0; L < nl; L++) {
    run += live[L];
    if (L > cut && run > worst) worst = run;
  }
  free(first);
  free(live);
  *peak = t->factor_entries + t->num_dofs + (fea_index)worst;
  return FEA_SUCCESS;
}

fea_status fea_etree_context_peak(const fea_context *ctx, const fea_etree *t, fea_index *peak) {
  int team = 1;
  const int cut = ctx->multifrontal.below_cut && ctx->multifrontal.factor_below
                      ? ctx->multifrontal.below_cut(ctx, t, &team)
                      : -1;
  return fea_etree_walk_peak(ctx, t, cut, team, peak);
}
