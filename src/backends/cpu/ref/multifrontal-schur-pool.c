/* The Schur blocks of the CPU multifrontal backends, one allocation per
 * group of nodes instead of one per node.
 *
 * A group is the nodes of one level whose parents sit on one level (the
 * /gpu/cuda backend's grouping, cuda/multifrontal-cuda.c): the group is
 * allocated when its level starts and freed when its parents' level is
 * done, so the memory alive at any level is what the tree's peak estimate
 * counts, node by node. Groups that die at a level are kept for the next
 * level's groups (the smallest that fits each), and what that level does
 * not take is freed when it starts: the memory held stays within the
 * estimate's peak plus the blocks the level before freed.
 *
 * Why: a 2D tree's low levels hold some 300 MB of Schur blocks each, and
 * zeroing fresh blocks was most of their time (2D p = 3, n = 512, one
 * thread, timed by phase: 0.14 of level 1's 0.21 s, for 8192 blocks of
 * 41 kB). Every level after the first two now reuses pages already mapped
 * (level 2's zeroing: 0.03 s). Setup, same sitting, one thread: n = 512
 * 3.45 -> 3.42 s; n = 1024 (1.05M unknowns) 27.9 -> 25.4 s. The root's
 * group (its own level is its parents') stays until release, for
 * fea_solver_get_boundary_schur(). */
#include <stdlib.h>

#include "base/context.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "internal/etree.h"

struct fea_multifrontal_schur_pool {
  int ngroups;
  int *birth, *death; /* per group: its level, and its parents' (the root: its own) */
  size_t *entries;    /* per group: the sum of its nodes' r^2 */
  double **block;     /* per group while alive, else NULL */
  size_t *cap;        /* per group: the capacity of its block (entries) */
  int *group_of;      /* per node */
  size_t *off;        /* per node, within its group */
  /* Blocks of groups that died, waiting for the next level's groups. */
  int ncached;
  double **cached;
  size_t *cached_cap;
};

void fea_cpu_multifrontal_schur_pool_free(fea_multifrontal_schur_pool *p) {
  if (!p) return;
  for (int g = 0; g < p->ngroups && p->block; g++) free(p->block[g]);
  for (int i = 0; i < p->ncached; i++) free(p->cached[i]);
  free(p->cached);
  free(p->cached_cap);
  free(p->cap);
  free(p->birth);
  free(p->death);
  free(p->entries);
  free(p->block);
  free(p->group_of);
  free(p->off);
  free(p);
}

fea_status fea_cpu_multifrontal_schur_pool_create(fea_context *ctx, const fea_etree *t,
                                                  fea_multifrontal_schur_pool **out) {
  const fea_index nn = t->num_nodes;
  const int nl = t->num_levels;
  /* At most one group per (level, parent level) pair, and per node. */
  const size_t pairs = (size_t)nl * (size_t)nl, cap = (size_t)nn < pairs ? (size_t)nn : pairs;
  fea_multifrontal_schur_pool *p = calloc(1, sizeof *p);
  int *gid = malloc((pairs ? pairs : 1) * sizeof *gid);
  if (p) {
    p->birth = malloc((cap ? cap : 1) * sizeof *p->birth);
    p->death = malloc((cap ? cap : 1) * sizeof *p->death);
    p->entries = calloc(cap ? cap : 1, sizeof *p->entries);
    p->block = calloc(cap ? cap : 1, sizeof *p->block);
    p->cap = calloc(cap ? cap : 1, sizeof *p->cap);
    p->cached = malloc((cap ? cap : 1) * sizeof *p->cached);
    p->cached_cap = malloc((cap ? cap : 1) * sizeof *p->cached_cap);
    p->group_of = malloc((size_t)(nn ? nn : 1) * sizeof *p->group_of);
    p->off = malloc((size_t)(nn ? nn : 1) * sizeof *p->off);
  }
  if (!p || !gid || !p->birth || !p->death || !p->entries || !p->block || !p->group_of || !p->off) {
    free(gid);
    fea_cpu_multifrontal_schur_pool_free(p);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the Schur block groups of %lld nodes", (long long)nn);
  }
  for (size_t i = 0; i < pairs; i++) gid[i] = -1;
  for (fea_index n = 0; n < nn; n++) {
    const fea_etree_node *nd = &t->nodes[n];
    const int bl = nd->level, dl = nd->parent >= 0 ? t->nodes[nd->parent].level : nd->level;
    int *slot = &gid[(size_t)bl * (size_t)nl + (size_t)dl];
    if (*slot < 0) {
      *slot = p->ngroups++;
      p->birth[*slot] = bl;
      p->death[*slot] = dl;
    }
    p->group_of[n] = *slot;
    p->off[n] = p->entries[*slot];
    p->entries[*slot] += (size_t)(nd->r * nd->r);
  }
  free(gid);
  *out = p;
  return FEA_SUCCESS;
}

fea_status fea_cpu_multifrontal_schur_pool_level_start(fea_context *ctx,
                                                       fea_multifrontal_schur_pool *p, int level) {
  fea_status st = FEA_SUCCESS;
  for (int g = 0; g < p->ngroups && st == FEA_SUCCESS; g++) {
    if (p->birth[g] != level || p->entries[g] == 0 || p->block[g]) continue;
    int best = -1; /* the smallest cached block that holds the group */
    for (int i = 0; i < p->ncached; i++)
      if (p->cached_cap[i] >= p->entries[g] && (best < 0 || p->cached_cap[i] < p->cached_cap[best]))
        best = i;
    if (best >= 0) {
      p->block[g] = p->cached[best];
      p->cap[g] = p->cached_cap[best];
      p->ncached--;
      p->cached[best] = p->cached[p->ncached];
      p->cached_cap[best] = p->cached_cap[p->ncached];
      continue;
    }
    p->block[g] = malloc(p->entries[g] * sizeof(double));
    p->cap[g] = p->entries[g];
    if (!p->block[g])
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the %zu Schur entries of tree level %d", p->entries[g], level);
  }
  /* What this level did not take goes back to the system. */
  for (int i = 0; i < p->ncached; i++) free(p->cached[i]);
  p->ncached = 0;
  return st;
}

fea_status fea_cpu_multifrontal_schur_pool_start_above(fea_context *ctx,
                                                       fea_multifrontal_schur_pool *p, int cut) {
  for (int g = 0; g < p->ngroups; g++) {
    /* Born at or below the cut, read above it (or the root's, kept). */
    if (p->birth[g] > cut || (p->death[g] <= cut && p->death[g] != p->birth[g])) continue;
    if (p->entries[g] == 0 || p->block[g]) continue;
    p->block[g] = malloc(p->entries[g] * sizeof(double));
    p->cap[g] = p->entries[g];
    FEA_CHECK(p->block[g], ctx, FEA_ERR_OUT_OF_MEMORY,
              "no memory for the %zu Schur entries of the subtrees below tree level %d",
              p->entries[g], cut);
  }
  return FEA_SUCCESS;
}

double *fea_cpu_multifrontal_schur_pool_block(const fea_multifrontal_schur_pool *p, fea_index n) {
  double *b = p->block[p->group_of[n]];
  return b ? b + p->off[n] : NULL;
}

void fea_cpu_multifrontal_schur_pool_level_done(fea_multifrontal_schur_pool *p, int level) {
  for (int g = 0; g < p->ngroups; g++)
    if (p->death[g] == level && p->birth[g] != level && p->block[g]) {
      p->cached[p->ncached] = p->block[g];
      p->cached_cap[p->ncached++] = p->cap[g];
      p->block[g] = NULL;
    }
}
