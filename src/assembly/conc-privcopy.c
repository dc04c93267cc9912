/* PRIVATE_COPIES, the thesis's private buffers: every thread but the first
 * adds into a private, zeroed copy of the whole target, the first into the
 * target itself; after a barrier the copies are summed into the target,
 * entry by entry in thread order, each thread reducing one slice.
 *
 * Why next to PRIVATE_BUFFERS (row ownership, conc-privbuf.c): ownership
 * recomputes the elements on block boundaries, a fraction that grows with
 * the thread count and with the element's reach (3D high order, B-splines,
 * unstructured numberings); copies recompute nothing but cost (T - 1) x the
 * target in memory and one pass of T reads per entry. The updates need no
 * protection and the elements run in contiguous blocks, so the loop is the
 * serial one; what the copies cost is memory traffic, which AUTO weighs
 * against ownership's recomputation and CAS's per-update atomics
 * (conc-auto.c). The sums are deterministic for a given team (the blocks and
 * the reduction order are fixed) but not the reference's bit for bit: an
 * entry's contributions are grouped by thread. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assembly/conc.h"
#include "base/memory-limit.h"
#include "internal/error.h"

/* Entries per reduction chunk: a few pages of each copy per step. */
#define REDUCE_CHUNK 4096

fea_status fea_conc_privcopy_require(const fea_conc_job *job, int team) {
  const double copies = team > 1 ? (double)(team - 1) : 0.0;
  char what[128];
  snprintf(what, sizeof what, "PRIVATE_COPIES' %d copies of %lld target entries", team - 1,
           (long long)job->target_len);
  return fea_memory_require(job->ctx, 0,
                            fea_bytes(copies * (double)job->target_len, sizeof(double)), what);
}

static fea_status run(fea_conc_job *job, fea_conc_counters *ctr, int threads_max) {
  (void)threads_max; /* the counter slots; the team is fea_conc_team's */
  const int team = fea_conc_team(job);
  const fea_index len = job->target_len;
  FEA_CALL(fea_conc_privcopy_require(job, team));
  double **copy = calloc((size_t)team, sizeof *copy);
  FEA_CHECK(copy, job->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d copy pointers", team);
  copy[0] = job->target; /* zeroed by the caller (fea_conc_run) */
  int ran = 1;
  atomic_int short_of_memory = 0;
  fea_conc_sync(&job->sync);
#pragma omp parallel num_threads(team)
  {
    fea_conc_sync(&job->sync);
    const int tid = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    if (tid == 0) ran = nt;
    /* Each copy is allocated and zeroed by its thread: its pages land on
     * that thread's memory node. */
    if (tid > 0) {
      copy[tid] = calloc((size_t)len + 1, sizeof(double));
      if (!copy[tid]) atomic_store(&short_of_memory, 1);
    }
    FEA_CONC_BARRIER(&job->sync);
    fea_conc_worker w;
    fea_conc_worker_init(&w, job, &ctr[tid]);
    if (!atomic_load(&short_of_memory)) {
      double *mine = copy[tid];
      /* Contiguous blocks of elements, as the reference visits them. */
      const fea_index lo = job->ne * tid / nt, hi = job->ne * (tid + 1) / nt;
      for (fea_index e = lo; w.ok && e < hi && !fea_conc_failed(job); e++)
        if (fea_conc_visit(&w, NULL, e, hi)) fea_conc_apply_plain(mine, &w);
    }
    fea_conc_worker_free(&w);
    FEA_CONC_BARRIER(&job->sync);
    if (!atomic_load(&short_of_memory) && !fea_conc_failed(job)) {
#pragma omp for schedule(static)
      for (fea_index c = 0; c < len; c += REDUCE_CHUNK) {
        const fea_index end = c + REDUCE_CHUNK < len ? c + REDUCE_CHUNK : len;
        for (int t = 1; t < nt; t++) {
          const double *src = copy[t];
          for (fea_index i = c; i < end; i++) job->target[i] += src[i];
        }
      }
    }
    fea_conc_sync(&job->sync);
  }
  fea_conc_sync(&job->sync);
  for (int t = 1; t < team; t++) free(copy[t]);
  free(copy);
  job->threads_run = ran;
  FEA_CHECK(!atomic_load(&short_of_memory), job->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for a private copy of %lld target entries", (long long)len);
  return FEA_SUCCESS;
}

const struct fea_update_ops fea_update_privcopy = {
    .name = "private-copies",
    .strategy = FEA_UPDATE_PRIVATE_COPIES,
    .available = NULL,
    .run = run,
};
