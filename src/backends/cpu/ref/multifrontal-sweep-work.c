/* The memory of one forward or backward substitution sweep on the CPU
 * backends, sized from the tree once per sweep and allocated at its first
 * level, before any node runs: a work block per thread that runs nodes at
 * once (a front's m x nrhs, reused from node to node), and in the forward
 * sweep the r x nrhs blocks that nodes pass up to their parents.
 *
 * A node's update is read by its parent only, and the parent writes its own
 * after it has read all of its children's. So the blocks are placed as the
 * tree nests: node n's subtree spans R(n) = max(r, the sum of its
 * children's R) entries per right-hand side, its children's spans side by
 * side from n's own offset, where n's block lies over them. Nodes of one
 * level have disjoint spans, so they run concurrently; the whole is the sum
 * over the leaves' r, not over every node's (2D p = 3, n = 512: 0.78M
 * entries per right-hand side, against 2.65M for a block per node and
 * 1.37M for the blocks alive at once in a level walk). Pages that a sweep
 * writes for the first time are dear (the kernel zeroes each, in a VM the
 * host backs it; see multifrontal-schur-pool.c), and a parent's block is
 * written where its children's were read, in cache.
 *
 * A sweep's work is one allocation in the solve's work slot
 * (src/internal/multifrontal.h), which the solver keeps from sweep to sweep
 * and solve to solve: a sweep that needs no more than the last one reuses
 * its pages (at 8 right-hand sides the forward updates pass glibc's mmap
 * threshold, and fresh pages each solve cost more than the node work).
 * Calls no other file of the CPU multifrontal code. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "internal/etree.h"

/* Cache lines: the threads' blocks do not share one. */
#define SWEEP_ALIGN 64

static size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

/* a * b into *out; 0 when it does not fit a size_t. */
static int mul_fits(size_t a, size_t b, size_t *out) {
  if (a && b > SIZE_MAX / a) return 0;
  *out = a * b;
  return 1;
}

/* Each node's update offset into off[n] (entries per right-hand side; the
 * root's is 0 and unused), as the head comment places them; returns the
 * entries they span, or SIZE_MAX when a child does not come before its
 * parent (the tree is stored in post-order: checked, not assumed). */
static size_t place_updates(const fea_etree *t, size_t *off) {
  const fea_index root = t->num_nodes - 1;
  /* Children first: off[n] = R(n). */
  for (fea_index n = 0; n <= root; n++) {
    const fea_etree_node *nd = &t->nodes[n];
    size_t span = 0;
    for (fea_index k = 0; k < nd->num_children; k++) {
      const fea_index c = t->children[nd->first_child + k];
      if (c >= n) return SIZE_MAX;
      span += off[c];
    }
    off[n] = span > (size_t)nd->r ? span : (size_t)nd->r;
  }
  /* Parents first: each node's children side by side from its offset. */
  size_t total = 0;
  off[root] = 0;
  for (fea_index n = root; n >= 0; n--) {
    const fea_etree_node *nd = &t->nodes[n];
    size_t at = off[n];
    for (fea_index k = 0; k < nd->num_children; k++) {
      const fea_index c = t->children[nd->first_child + k];
      const size_t span = off[c];
      off[c] = at;
      at += span;
    }
    if (n == root) total = at;
  }
  return total;
}

fea_status fea_cpu_multifrontal_sweep_work_get(fea_context *ctx, const fea_multifrontal_factor *f,
                                               fea_multifrontal_solve *sv, int blocks,
                                               fea_index team_front, int with_updates,
                                               const fea_cpu_multifrontal_sweep_work **out) {
  const fea_etree *t = f->tree;
  const fea_index root = t->num_nodes - 1;
  *out = NULL;
  FEA_CHECK(root >= 0, ctx, FEA_ERR_BACKEND, "internal: a solve sweep over an empty tree");
  if (sv->work_ready) {
    const fea_cpu_multifrontal_sweep_work *w = sv->work;
    FEA_CHECK(w->nrhs == sv->nrhs && (w->updates || !with_updates), ctx, FEA_ERR_BACKEND,
              "internal: the sweep's work was made for %lld right-hand sides%s, not %lld",
              (long long)w->nrhs, w->updates ? "" : " without updates", (long long)sv->nrhs);
    *out = w;
    return FEA_SUCCESS;
  }
  if (blocks < 1) blocks = 1;
  if (team_front > t->max_front) team_front = t->max_front;
  if (blocks == 1 || team_front < 0) team_front = 0;
  const size_t nn = (size_t)t->num_nodes, nrhs = (size_t)(sv->nrhs > 0 ? sv->nrhs : 0);
  /* The update offsets, placed first: their span sizes the allocation. */
  size_t *place = NULL, passed = 0; /* the updates' rows, one right-hand side's */
  if (with_updates) {
    place = malloc(nn * sizeof *place);
    FEA_CHECK(place, ctx, FEA_ERR_OUT_OF_MEMORY,
              "no memory for the update offsets of %zu tree nodes (%zu bytes)", nn,
              nn * sizeof *place);
    passed = place_updates(t, place);
    if (passed == SIZE_MAX) {
      free(place);
      return FEA_ERROR(ctx, FEA_ERR_BACKEND, "internal: the tree's nodes are not in post-order");
    }
  }
  const size_t head = round_up(sizeof(fea_cpu_multifrontal_sweep_work), SWEEP_ALIGN);
  const size_t offs = with_updates ? round_up(nn * sizeof(size_t), SWEEP_ALIGN) : 0;
  size_t first, other, team = 0, updates = 0, bytes = 0;
  int fits = mul_fits((size_t)t->max_front, nrhs, &first) &&
             mul_fits((size_t)team_front, nrhs, &other) && first <= SIZE_MAX / 2 &&
             other <= SIZE_MAX / 2;
  if (fits) {
    first = round_up(first, SWEEP_ALIGN / sizeof(double));
    other = round_up(other, SWEEP_ALIGN / sizeof(double));
    fits = mul_fits(other, (size_t)(blocks - 1), &team) && mul_fits(passed, nrhs, &updates) &&
           first <= SIZE_MAX - team && first + team <= SIZE_MAX - updates &&
           mul_fits(first + team + updates, sizeof(double), &bytes) &&
           bytes <= SIZE_MAX - head - offs - SWEEP_ALIGN;
  }
  void *mem = NULL;
  if (fits) {
    bytes = round_up(head + offs + bytes, SWEEP_ALIGN);
    if (sv->work && sv->work_bytes >= bytes) { /* the last sweep's: its pages are mapped */
      mem = sv->work;
    } else {
      free(sv->work);
      sv->work = NULL;
      sv->work_bytes = 0;
      mem = aligned_alloc(SWEEP_ALIGN, bytes);
    }
  }
  if (!mem) {
    free(place);
    if (!fits)
      return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                       "the solve's work for %lld right-hand sides (%d blocks of up to %lld rows, "
                       "%zu update rows) does not fit in memory",
                       (long long)sv->nrhs, blocks, (long long)t->max_front, passed);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the solve's work: %zu bytes (%d blocks of up to %lld x %lld, "
                     "updates of %zu x %lld)",
                     bytes, blocks, (long long)t->max_front, (long long)sv->nrhs, passed,
                     (long long)sv->nrhs);
  }
  fea_cpu_multifrontal_sweep_work *w = mem;
  size_t *off = with_updates ? (size_t *)mem + head / sizeof(size_t) : NULL;
  double *data = (double *)mem + (head + offs) / sizeof(double);
  if (off) memcpy(off, place, nn * sizeof *off);
  free(place);
  *w = (fea_cpu_multifrontal_sweep_work){
      .nrhs = sv->nrhs,
      .blocks = blocks,
      .first = first,
      .stride = other,
      .block0 = data,
      .updates = with_updates ? data + first + team : NULL,
      .update_off = off,
  };
  if (mem != sv->work) {
    sv->work = mem;
    sv->work_bytes = bytes;
  }
  sv->work_ready = 1;
  *out = w;
  return FEA_SUCCESS;
}
