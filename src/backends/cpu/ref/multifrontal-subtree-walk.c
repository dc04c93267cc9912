/* The CPU factorization below a cut level as whole subtrees, each walked in
 * post-order by one thread that keeps its Schur blocks on a stack
 * (fea_cpu_multifrontal_factor_subtrees, cpu.h). Calls the node kernels
 * (multifrontal-node.c), the level walk's bookkeeping
 * (multifrontal-level-walk.c), the worker view (multifrontal-leaf.c) and
 * the Schur pool; the ops tables call it.
 *
 * Level by level, every Schur block of a level is alive at once: in a 2D
 * tree the lowest levels hold over a gigabyte each (2D p = 3 with 1.05M
 * unknowns: 1.2 GB at level 0, 1.4 GB at level 1, 65,536 and 32,768
 * blocks), all written once and read once by the level above. Fresh memory
 * is dear: the kernel zeroes each page on first touch, and in a virtual
 * machine the host backs it too (the shared development VM: 0.4 - 1 GB/s on
 * first touch, 10 GB/s after). Walking a subtree in post-order, a node's
 * children's blocks are the top of a stack when it assembles, so the stack
 * holds the blocks of one root-to-leaf path and their siblings: a few times
 * the subtree root's block, reused from subtree to subtree and mostly in
 * cache when the parent reads it.
 *
 * The stack is two stacks in one buffer, one growing up from its start and
 * one down from its end: nodes of even depth push on one, of odd depth on
 * the other. A node's children are then the top of the other stack when it
 * assembles, and popping them leaves its own block where it was written.
 * With one stack the node's block had to move down over its children's
 * after every node: 1.2 s of memmove in a 21 s one-thread factorization of
 * the 1.05M problem. The live blocks, and so the buffer's size, are the same
 * as one stack's. Measured (2D p = 3, 1.05M unknowns, one
 * thread, the shared 2-core Xeon VM, OpenBLAS SkylakeX): see
 * docs/multifrontal.md, "Measured".
 *
 * The nodes compute what they computed level by level: the same front
 * assembly in the same child order and one-thread BLAS (the levels that
 * subtrees replace ran their nodes concurrently on one-thread BLAS), so the
 * factor's digits are those of the level walk. The leaves' loads are added
 * in level order after the walk, as the level walk adds them. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <omp.h>

#include "linalg/blas.h"
#include "base/context.h"
#include "base/progress.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "internal/etree.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A subtree's first node: the tree is stored in post-order, so a subtree is
 * the index range [first[n], n]. Checked, not assumed: 0 when some subtree
 * is not contiguous (the walk then is not used). */
static int subtree_ranges(const fea_etree *t, fea_index *first, fea_index *count) {
  for (fea_index n = 0; n < t->num_nodes; n++) {
    const fea_etree_node *nd = &t->nodes[n];
    first[n] = n;
    count[n] = 1;
    for (fea_index k = 0; k < nd->num_children; k++) {
      const fea_index c = t->children[nd->first_child + k];
      if (c >= n) return 0;
      if (first[c] < first[n]) first[n] = first[c];
      count[n] += count[c];
    }
    if (n - first[n] + 1 != count[n]) return 0;
  }
  return 1;
}

static size_t block_entries(const fea_etree_node *nd) { return (size_t)(nd->r * nd->r); }

static size_t children_entries(const fea_etree *t, const fea_etree_node *nd) {
  size_t e = 0;
  for (fea_index k = 0; k < nd->num_children; k++)
    e += block_entries(&t->nodes[t->children[nd->first_child + k]]);
  return e;
}

/* One worker's state: its stack, its sums and its first failure. */
typedef struct walker {
  double *stack;
  size_t size;               /* the stack's entries */
  const unsigned char *side; /* per node: its depth's parity, the stack it pushes on */
  double flops, integrate_s;
  double *level_s; /* per level, this worker's node time */
  fea_index bad;   /* the failing node of lowest (level, index), else -1 */
  fea_status bad_st;
  char why[FEA_ERROR_LEN];
  /* Progress: the nodes every worker has done, a cancel the calling
   * thread's report returned, and that thread's context (NULL on others:
   * only it may call the user's callback). */
  _Atomic fea_index *done;
  atomic_int *cancelled;
  fea_context *report;
} walker;

static int before(const fea_etree *t, fea_index a, fea_index b) {
  const int la = t->nodes[a].level, lb = t->nodes[b].level;
  return la < lb || (la == lb && a < b);
}

/* Walk the subtree [first, s] of f (a worker's view where threads run) on
 * w's stack. A node whose front would hold a failed child's block is
 * skipped, not computed, so that every failure found is one the level walk
 * could reach; the lowest (level, index) of them is the one reported, as
 * the level walk reports the smallest failing node of the lowest failing
 * level. `poisoned` is per node, shared: each subtree writes its own. */
static void walk(fea_context *wctx, fea_multifrontal_factor *f, fea_index first, fea_index s,
                 walker *w, unsigned char *poisoned, int worker) {
  const fea_etree *t = f->tree;
  size_t top[2] = {0, 0}; /* entries on the stack growing up [0] and down [1] */
  for (fea_index n = first; n <= s; n++) {
    if (atomic_load_explicit(w->cancelled, memory_order_relaxed)) return;
    const fea_index d = atomic_fetch_add(w->done, 1);
    if (w->report && fea_progress_of(w->report, FEA_PROGRESS_MULTIFRONTAL, (double)d,
                                     (double)t->num_nodes) < 0) {
      atomic_store(w->cancelled, 1);
      return;
    }
    const fea_etree_node *nd = &t->nodes[n];
    const size_t own = block_entries(nd), below = children_entries(t, nd);
    const int side = w->side[n];
    int skip = 0;
    for (fea_index k = 0; k < nd->num_children; k++)
      skip |= poisoned[t->children[nd->first_child + k]];
    double *S = NULL;
    if (n == s)
      S = fea_cpu_multifrontal_schur_pool_block(f->schur_pool, n);
    else if (own)
      S = side == 0 ? w->stack + top[0] : w->stack + w->size - top[1] - own;
    if (!skip) {
      const double t0 = now_s();
      double fl = 0, it = 0;
      const fea_status st = fea_cpu_multifrontal_factor_node_into(wctx, f, n, S, &fl, &it);
      w->level_s[nd->level] += now_s() - t0;
      w->flops += fl;
      w->integrate_s += it;
      if (st == FEA_ERR_CANCELLED) { /* a large front's own report (fea_progress_tick) */
        atomic_store(w->cancelled, 1);
        return;
      }
      if (st < 0) {
        skip = 1;
        if (w->bad < 0 || before(t, n, w->bad)) {
          w->bad = n;
          w->bad_st = st;
          /* Without its "name(): " head: a worker entered through no
           * public function, so the head would name an internal one. */
          snprintf(w->why, sizeof w->why, "%s", fea_thread_last_error_text());
        }
      }
    }
    poisoned[n] = (unsigned char)skip;
    for (fea_index k = 0; k < nd->num_children; k++)
      f->schur[t->children[nd->first_child + k]] = NULL;
    if (n == s) break;
    /* Pop the children's blocks off the other stack; the node's stays. */
    top[!side] -= below;
    top[side] += own;
    f->schur[n] = S;
  }
}

fea_status fea_cpu_multifrontal_factor_subtrees(fea_context *ctx, fea_multifrontal_factor *f,
                                                int cut, int team, double *level_s) {
  const fea_etree *t = f->tree;
  const fea_index nn = t->num_nodes;
  FEA_CHECK(cut >= 0 && cut < t->num_levels && team >= 1, ctx, FEA_ERR_BACKEND,
            "internal: subtree cut level %d of %d levels, team %d", cut, t->num_levels, team);
  fea_index *first = malloc((size_t)nn * 2 * sizeof *first);
  unsigned char *poisoned = calloc((size_t)nn, 1);
  unsigned char *side = malloc((size_t)(nn ? nn : 1));
  fea_index *roots = malloc((size_t)nn * sizeof *roots);
  double *times = calloc((size_t)team * (size_t)t->num_levels, sizeof *times);
  walker *ws = calloc((size_t)team, sizeof *ws);
  fea_status st = FEA_SUCCESS;
  if (!first || !poisoned || !side || !roots || !times || !ws)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the subtree walk of %lld nodes",
                   (long long)nn);
  if (st == FEA_SUCCESS && !subtree_ranges(t, first, first + nn))
    st = FEA_ERROR(ctx, FEA_ERR_BACKEND, "internal: the tree's nodes are not in post-order");
  /* Depth parities, parents first: in post-order a parent follows its children. */
  for (fea_index n = nn - 1; st == FEA_SUCCESS && n >= 0; n--) {
    const fea_index p = t->nodes[n].parent;
    side[n] = p < 0 ? 0 : (unsigned char)!side[p];
  }
  /* The subtree roots: nodes at or below the cut whose parent is above it. */
  fea_index nroots = 0;
  size_t need = 0;
  if (st == FEA_SUCCESS)
    for (fea_index n = 0; n < nn; n++) {
      const fea_etree_node *nd = &t->nodes[n];
      if (nd->level > cut || (nd->parent >= 0 && t->nodes[nd->parent].level <= cut)) continue;
      roots[nroots++] = n;
      const size_t e = fea_etree_subtree_stack(t, first[n], n);
      if (e > need) need = e;
    }
  if (team > nroots) team = nroots > 0 ? (int)nroots : 1;
  _Atomic fea_index done = 0;
  atomic_int cancelled = 0;
  if (st == FEA_SUCCESS && need > (size_t)-1 / sizeof(double) / (size_t)team)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "a subtree stack of %zu entries does not fit", need);
  for (int k = 0; k < team && st == FEA_SUCCESS; k++) {
    ws[k].stack = malloc(need * sizeof(double));
    ws[k].size = need;
    ws[k].side = side;
    ws[k].level_s = times + (size_t)k * (size_t)t->num_levels;
    ws[k].bad = -1;
    ws[k].done = &done;
    ws[k].cancelled = &cancelled;
    ws[k].report = k == 0 ? ctx : NULL; /* worker 0 is the calling thread */
    if (!ws[k].stack)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for %d subtree stacks of %zu bytes each", team,
                     need * sizeof(double));
  }
  /* The blocks that outlive the cut (the roots'), from the pool. */
  if (st == FEA_SUCCESS) st = fea_cpu_multifrontal_schur_pool_start_above(ctx, f->schur_pool, cut);
  if (st == FEA_SUCCESS) {
    if (team == 1) {
      const int prev = fea_blas_push_threads(1);
      for (fea_index k = 0; k < nroots; k++)
        walk(ctx, f, first[roots[k]], roots[k], &ws[0], poisoned, 0);
      fea_blas_pop_threads(prev);
    } else {
      fea_blas_use_threads(1);
      fea_cpu_multifrontal_worker_view view;
      fea_cpu_multifrontal_worker_view_init(&view, f);
#pragma omp parallel num_threads(team)
      {
        const int prev = fea_blas_push_threads(1);
        /* As the level walk's workers: a context copy for messages only. */
        fea_context local = *ctx;
        local.log_fn = NULL;
        local.progress_fn = NULL; /* the user's callback runs on the calling thread only */
        walker *w = &ws[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 1)
        for (fea_index k = 0; k < nroots; k++)
          walk(&local, &view.f, first[roots[k]], roots[k], w, poisoned, 1);
        fea_blas_pop_threads(prev);
      }
    }
    fea_index bad = -1;
    int worst = -1;
    for (int k = 0; k < team; k++) {
      f->flops += ws[k].flops;
      f->integrate_s += ws[k].integrate_s;
      if (ws[k].bad >= 0 && (bad < 0 || before(t, ws[k].bad, bad))) {
        bad = ws[k].bad;
        worst = k;
      }
    }
    for (int L = 0; L <= cut; L++) {
      double sum = 0;
      for (int k = 0; k < team; k++) sum += times[(size_t)k * (size_t)t->num_levels + (size_t)L];
      level_s[L] = sum / team;
    }
    if (atomic_load(&cancelled))
      st = FEA_ERR_CANCELLED; /* raised on ctx by the calling thread's report */
    else if (bad >= 0)
      st = fea_multifrontal_node_error(ctx, f, bad, ws[worst].bad_st, ws[worst].why);
    else /* the level walk's bookkeeping: leaves' loads in level order */
      for (int L = 0; L <= cut; L++) fea_cpu_multifrontal_level_done(f, L);
    if (st == FEA_SUCCESS)
      st = fea_progress_of(ctx, FEA_PROGRESS_MULTIFRONTAL, (double)t->level_start[cut + 1],
                           (double)nn);
  }
  for (int k = 0; ws && k < team; k++) free(ws[k].stack);
  free(ws);
  free(times);
  free(roots);
  free(side);
  free(poisoned);
  free(first);
  return st;
}
