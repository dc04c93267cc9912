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

#include "concurrency/conc.h"
#include "error.h"

typedef struct ownership {
  int *owner;      /* per free row: its block */
  fea_index *first, *last; /* per block: elements [first, last] to visit */
} ownership;

static void ownership_free(ownership *o) {
  free(o->owner);
  free(o->first);
  free(o->last);
}

static fea_status ownership_build(const fea_conc_job *job, int T, ownership *o) {
  const fea_index nf = job->pb->num_free, ne = job->ne;
  const int nb = job->nb;
  const fea_index *fi = job->pb->free_index;
  o->owner = malloc(((size_t)nf + 1) * sizeof *o->owner);
  o->first = malloc((size_t)T * sizeof *o->first);
  o->last = malloc((size_t)T * sizeof *o->last);
  if (!o->owner || !o->first || !o->last) {
    ownership_free(o);
    return FEA_ERROR(job->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the owners of %lld rows",
                     (long long)nf);
  }
  for (int t = 0; t < T; t++) {
    o->first[t] = ne * t / T;
    o->last[t] = o->first[t] - 1;
  }
  for (fea_index r = 0; r < nf; r++) o->owner[r] = -1;
  int blk = 0;
  for (fea_index e = 0; e < ne; e++) {
    while (blk + 1 < T && e >= o->first[blk + 1]) blk++;
    const fea_index *ed = job->edofs + e * nb;
    for (int i = 0; i < nb; i++) {
      fea_index r = fi[ed[i]];
      if (r < 0) continue;
      if (o->owner[r] < 0) o->owner[r] = blk;
      if (e > o->last[o->owner[r]]) o->last[o->owner[r]] = e;
    }
  }
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
#pragma omp parallel num_threads(T)
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
      const fea_index own_end = !job->work   ? o.first[blk]
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
  plan->owner = o.owner;
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

double fea_conc_privbuf_overlap(const fea_conc_job *job, int threads) {
  ownership o = {0};
  if (ownership_build(job, threads, &o) != FEA_SUCCESS) return 1.0;
  fea_index extra = 0;
  for (int blk = 0; blk < threads; blk++)
    for (fea_index e = o.first[blk]; e <= o.last[blk]; e++)
      extra += blk + 1 < threads && e >= o.first[blk + 1] && owns_a_row(job, &o, e, blk);
  ownership_free(&o);
  return job->ne ? (double)extra / (double)job->ne : 0.0;
}
