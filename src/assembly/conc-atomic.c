/* ATOMIC_CAS: every update is a compare-and-swap loop on the 64-bit pattern
 * of the double: read, add in a register, swap in if nobody wrote meanwhile,
 * else retry (counted) after an optional randomized exponential backoff.
 *
 * C11 has no atomic floating-point add, and an _Atomic double's
 * compare-exchange compares bit patterns anyway; doing it on uint64_t says so.
 * The target buffer is only touched through these atomics during the run
 * (same size and alignment as double; lock-free on every 64-bit target we
 * build for). Relaxed order suffices: the values are read after the
 * parallel region's closing barrier, not by the threads that write them. */
#include <omp.h>
#include <string.h>

#include "assembly/conc.h"

static fea_status run(fea_conc_job *job, fea_conc_counters *ctr, int threads_max) {
  (void)threads_max; /* the counter slots; the team is fea_conc_team's */
  _Atomic uint64_t *t = (_Atomic uint64_t *)(void *)job->target;
  const int backoff = job->cfg.backoff;
  int ran = 1;
  fea_conc_sync(&job->sync);
#pragma omp parallel num_threads(fea_conc_team(job))
  {
    fea_conc_sync(&job->sync);
    const int tid = omp_get_thread_num();
    fea_conc_worker w;
    fea_conc_worker_init(&w, job, &ctr[tid]);
    uint64_t rng = 0x2545f4914f6cdd1du * (uint64_t)(tid + 1);
    if (tid == 0) ran = omp_get_num_threads();
      /* Contiguous blocks of elements: neighbours mostly stay on one thread,
     * so few updates actually collide. */
#pragma omp for schedule(static) nowait
    for (fea_index e = 0; e < job->ne; e++)
      if (w.ok && !fea_conc_failed(job) && fea_conc_visit(&w, NULL, e, job->ne))
        for (int k = 0; k < w.n; k++)
          fea_conc_cas_add(t + w.idx[k], w.val[k], backoff, &rng, w.ctr);
    fea_conc_worker_free(&w);
    fea_conc_sync(&job->sync);
  }
  fea_conc_sync(&job->sync);
  job->threads_run = ran;
  return FEA_SUCCESS;
}

const struct fea_update_ops fea_update_atomic_cas = {
    .name = "atomic-cas",
    .strategy = FEA_UPDATE_ATOMIC_CAS,
    .available = NULL,
    .run = run,
};
