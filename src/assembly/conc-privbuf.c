/* PRIVATE_BUFFERS, as per-thread row ownership.
 *
 * The elements are cut into one contiguous block per thread. A free row
 * belongs to the block of the first (lowest-numbered) element that touches
 * it; a thread adds into its own rows only, so no update needs protection
 * and nothing is reduced afterwards. A thread visits its block's elements
 * and, past the block's end, the later elements that still touch its rows
 * (up to `last[t]`); elements on a block boundary are integrated by each
 * thread that owns one of their rows, and each thread keeps only its rows'
 * updates.
 *
 * Why ownership rather than per-thread copies of the values: copies cost
 * threads x nnz doubles (3D Q2 with 1M DoFs: ~0.5 GB per thread) and a
 * reduction that reads all of them; ownership costs one index per row and
 * some recomputation on block boundaries (about threads / n of the elements
 * on an n^d structured mesh, reported as stats.elements_recomputed). And each
 * entry still receives its contributions in increasing element order: the
 * result is the reference assembly's bit for bit, for any thread count. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "assembly/conc.h"
#include "internal/error.h"

typedef struct ownership {
  int *owner;              /* per free row: its block */
  fea_index *first, *last; /* per block: elements [first, last] to visit */
  int *elem_block;         /* per element: see fea_conc_plan */
} ownership;

static void ownership_free(ownership *o) {
  free(o->owner);
  free(o->first);
  free(o->last);
  free(o->elem_block);
}

/* One past the last of block blk's own elements. */
static fea_index block_end(const fea_conc_job *job, const fea_index *first, int blk, int T) {
  return blk + 1 < T ? first[blk + 1] : job->ne;
}

/* The settling pass of block blk (see ownership_build): rows it touches
 * that still carry a higher block (a race in the marking pass) are lowered
 * to it with an atomic minimum; per owner, the last of its elements that
 * touches one of the owner's rows; each element's flag. Returns whether
 * it lowered a row. */
static int settle_block(const fea_conc_job *job, int blk, int T, const fea_index *first, int *own,
                        fea_index *last_of, int *flag) {
  const fea_index *fi = job->pb->free_index, *edofs = job->edofs;
  const fea_index end = block_end(job, first, blk, T);
  const int nb = job->nb;
  int lowered = 0;
  for (int b = 0; b < T; b++) last_of[b] = -1;
  for (fea_index e = first[blk]; e < end; e++) {
    int b = -1, dir = 0; /* b: the one owner so far (-1 none yet, -2 several) */
    for (int i = 0; i < nb; i++) {
      const fea_index r = fi[edofs[e * nb + i]];
      if (r < 0) {
        dir = 1;
        continue;
      }
      int ow = __atomic_load_n(&own[r], __ATOMIC_RELAXED);
      while (ow > blk && !__atomic_compare_exchange_n(&own[r], &ow, blk, 1, __ATOMIC_RELAXED,
                                                      __ATOMIC_RELAXED)) {
      }
      if (ow > blk) { /* the exchange succeeded */
        ow = blk;
        lowered = 1;
      }
      last_of[ow] = e; /* e increases: the last write is the largest */
      b = b == -1 || b == ow ? ow : -2;
    }
    flag[e] = b < 0 ? -1 : dir ? -(b + 2) : b;
  }
  return lowered;
}

/* Built on up to T threads, one block each, in two passes over the
 * blocks' elements with no locked instruction but on rows where blocks
 * raced (a compare-and-swap per row was two fifths of it). First every
 * block marks its rows with its number where they have none or a higher
 * one: a plain read and store, so where two blocks mark a row at the same
 * moment either may stay. Then every block settles its elements
 * (settle_block): rows still carrying a higher block are lowered, so every
 * row ends with its lowest block whatever the timing, and the last
 * elements and flags are read off. A block reading a row another lowers
 * in the same pass may have read it before: where any row was lowered
 * (only after a race), the blocks settle once more, lowering nothing. */
static fea_status ownership_build(const fea_conc_job *job, int T, ownership *o) {
  const fea_index nf = job->pb->num_free, ne = job->ne;
  const int nb = job->nb;
  const fea_index *fi = job->pb->free_index, *edofs = job->edofs;
  o->owner = malloc(((size_t)nf + 1) * sizeof *o->owner);
  o->first = malloc((size_t)T * sizeof *o->first);
  o->last = malloc((size_t)T * sizeof *o->last);
  o->elem_block = malloc(((size_t)ne + 1) * sizeof *o->elem_block);
  fea_index *seen = malloc((size_t)T * (size_t)T * sizeof *seen); /* [block][owner] */
  if (!o->owner || !o->first || !o->last || !o->elem_block || !seen) {
    ownership_free(o);
    free(seen);
    return FEA_ERROR(job->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the owners of %lld rows",
                     (long long)nf);
  }
  for (int t = 0; t < T; t++) o->first[t] = ne * t / T;
  int *own = o->owner, lowered = 0;
  const fea_index *first = o->first;
#pragma omp parallel num_threads(T) if (T > 1)
  {
    const int tid = omp_get_thread_num(), nth = omp_get_num_threads();
#pragma omp for schedule(static)
    for (fea_index r = 0; r < nf; r++) own[r] = -1;
    /* Blocks round-robin: the region may get fewer threads. */
    for (int blk = tid; blk < T; blk += nth) {
      const fea_index end = block_end(job, first, blk, T);
      for (fea_index e = first[blk]; e < end; e++)
        for (int i = 0; i < nb; i++) {
          const fea_index r = fi[edofs[e * nb + i]];
          if (r < 0) continue;
          const int cur = __atomic_load_n(&own[r], __ATOMIC_RELAXED);
          if (cur < 0 || cur > blk) __atomic_store_n(&own[r], blk, __ATOMIC_RELAXED);
        }
    }
#pragma omp barrier
    for (int blk = tid; blk < T; blk += nth)
      if (settle_block(job, blk, T, first, own, seen + (size_t)blk * T, o->elem_block))
        __atomic_store_n(&lowered, 1, __ATOMIC_RELAXED);
#pragma omp barrier
    if (__atomic_load_n(&lowered, __ATOMIC_RELAXED))
      for (int blk = tid; blk < T; blk += nth)
        settle_block(job, blk, T, first, own, seen + (size_t)blk * T, o->elem_block);
  }
  for (int b = 0; b < T; b++) {
    o->last[b] = o->first[b] - 1;
    for (int blk = 0; blk < T; blk++)
      if (seen[blk * T + b] > o->last[b]) o->last[b] = seen[blk * T + b];
  }
  free(seen);
  return FEA_SUCCESS;
}

static int owns_a_row(const fea_conc_job *job, const ownership *o, fea_index e, int blk) {
  const fea_index *ed = job->edofs + e * job->nb;
  for (int i = 0; i < job->nb; i++) {
    fea_index r = job->pb->free_index[ed[i]];
    if (r >= 0 && o->owner[r] == blk) return 1;
  }
  return 0;
}

static fea_status run(fea_conc_job *job, fea_conc_counters *ctr, int threads_max) {
  ownership o = {0};
  int T = threads_max;
  /* A plan made for this thread count is used as it is; else build one. */
  const int planned = job->plan && job->plan->owner && job->plan->blocks == T;
  if (planned) {
    o.owner = job->plan->owner;
    o.first = job->plan->first;
    o.last = job->plan->last;
  } else {
    FEA_CALL(ownership_build(job, T, &o));
  }
  int ran = 1;
  fea_conc_sync(&job->sync);
#pragma omp parallel num_threads(fea_conc_team(job))
  {
    fea_conc_sync(&job->sync);
    const int tid = omp_get_thread_num(), nth = omp_get_num_threads();
    fea_conc_worker w;
    fea_conc_worker_init(&w, job, &ctr[tid]);
    w.direct = 1; /* the rows of a block are its thread's alone */
    w.owner = o.owner;
    if (tid == 0) ran = nth;
    /* Blocks are dealt round-robin in case the region got fewer threads. */
    for (int blk = tid; blk < T && w.ok; blk += nth) {
      w.blk = blk;
      /* Within the block's own elements the test is skipped for a work
       * with batches (operator application): an element there owns a row
       * but for a few on the block's first boundary, whose visit adds
       * nothing, and the test reads the element's DoFs from memory once per
       * batch (3D Q1 on two threads: 3 % of the apply). */
      const fea_index own_end = !job->work    ? o.first[blk]
                                : blk + 1 < T ? o.first[blk + 1]
                                              : job->ne;
      for (fea_index e = o.first[blk]; e <= o.last[blk] && !fea_conc_failed(job); e++) {
        const int visited = (e < own_end || owns_a_row(job, &o, e, blk)) &&
                            fea_conc_visit(&w, NULL, e, o.last[blk] + 1);
        e += w.served; /* a batch served them already */
        w.served = 0;
        if (!visited) continue;
        int kept = 0;
        for (int k = 0; k < w.n; k++)
          if (o.owner[w.row[k]] == blk) {
            job->target[w.idx[k]] += w.val[k];
            kept++;
          }
        w.ctr->updates -= (uint64_t)(w.n - kept); /* the other owners count theirs */
      }
    }
    fea_conc_worker_free(&w);
    fea_conc_sync(&job->sync);
  }
  fea_conc_sync(&job->sync);
  job->threads_run = ran;
  if (!planned) ownership_free(&o);
  return FEA_SUCCESS;
}

fea_status fea_conc_privbuf_plan(const fea_conc_job *job, int threads, fea_conc_plan *plan) {
  ownership o = {0};
  FEA_CALL(ownership_build(job, threads, &o));
  memset(plan, 0, sizeof *plan);
  plan->strategy = FEA_UPDATE_PRIVATE_BUFFERS;
  plan->owner = o.owner;
  plan->elem_block = o.elem_block;
  plan->first = o.first;
  plan->last = o.last;
  plan->blocks = threads;
  return FEA_SUCCESS;
}

const struct fea_update_ops fea_update_privbuf = {
    .name = "private-buffers",
    .strategy = FEA_UPDATE_PRIVATE_BUFFERS,
    .available = NULL,
    .run = run,
};

double fea_conc_privbuf_overlap(const fea_conc_job *job, const fea_conc_plan *plan) {
  const ownership o = {plan->owner, plan->first, plan->last, plan->elem_block};
  const int T = plan->blocks;
  fea_index extra = 0;
  for (int blk = 0; blk + 1 < T; blk++)
    for (fea_index e = o.first[blk + 1]; e <= o.last[blk]; e++)
      extra += owns_a_row(job, &o, e, blk);
  return job->ne ? (double)extra / (double)job->ne : 0.0;
}
