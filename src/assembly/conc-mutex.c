/* MUTEX: striped locks. Target entry i is guarded by lock i / stripe, so
 * `stripe` consecutive entries (8: one cache line of values) share a lock;
 * stripe 1 is the thesis's lock per entry. Spin locks are atomic_flags, the
 * other variant pthread mutexes. A thread holds one lock at a time (no
 * deadlock) and keeps it across consecutive updates of the same stripe,
 * which CSR rows make common.
 *
 * Contention is measured as in the thesis: try the lock first; if it is held,
 * count once, then wait. */
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>

#include "assembly/conc.h"
#include "internal/error.h"

typedef struct locks {
  int spin;
  fea_index stripe, n;
  atomic_flag *flags;
  pthread_mutex_t *mutexes;
} locks;

static inline void lock_take(locks *L, fea_index i, fea_conc_counters *ctr) {
  if (L->spin) {
    if (!atomic_flag_test_and_set_explicit(&L->flags[i], memory_order_acquire)) return;
    ctr->lock_contended++;
    while (atomic_flag_test_and_set_explicit(&L->flags[i], memory_order_acquire)) fea_conc_pause();
  } else {
    if (pthread_mutex_trylock(&L->mutexes[i]) == 0) return;
    ctr->lock_contended++;
    pthread_mutex_lock(&L->mutexes[i]);
  }
}

static inline void lock_give(locks *L, fea_index i) {
  if (L->spin)
    atomic_flag_clear_explicit(&L->flags[i], memory_order_release);
  else
    pthread_mutex_unlock(&L->mutexes[i]);
}

static void apply(locks *L, double *t, const fea_conc_worker *w) {
  fea_index held = -1;
  for (int k = 0; k < w->n; k++) {
    fea_index l = w->idx[k] / L->stripe;
    if (l != held) {
      if (held >= 0) lock_give(L, held);
      lock_take(L, l, w->ctr);
      held = l;
    }
    t[w->idx[k]] += w->val[k];
  }
  if (held >= 0) lock_give(L, held);
}

static fea_status run(fea_conc_job *job, fea_conc_counters *ctr, int threads_max) {
  (void)threads_max; /* the counter slots; the team is fea_conc_team's */
  locks L = {job->cfg.spin, job->cfg.lock_stripe, 0, NULL, NULL};
  L.n = (job->target_len + L.stripe - 1) / L.stripe;
  if (L.spin)
    L.flags = malloc(((size_t)L.n + 1) * sizeof *L.flags);
  else
    L.mutexes = malloc(((size_t)L.n + 1) * sizeof *L.mutexes);
  FEA_CHECK(L.flags || L.mutexes, job->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for %lld locks (%lld target entries, %lld per lock)", (long long)L.n,
            (long long)job->target_len, (long long)L.stripe);
  int ran = 1;
  fea_conc_sync(&job->sync);
#pragma omp parallel num_threads(fea_conc_team(job))
  {
    fea_conc_sync(&job->sync);
    const int tid = omp_get_thread_num();
    /* Initialized in parallel: the locks land in the memory of the threads
     * that use them most (first touch), and a million mutexes take a while. */
#pragma omp for schedule(static) nowait
    for (fea_index i = 0; i < L.n; i++) {
      if (L.spin)
        atomic_flag_clear(&L.flags[i]);
      else
        pthread_mutex_init(&L.mutexes[i], NULL);
    }
    FEA_CONC_BARRIER(&job->sync);
    fea_conc_worker w;
    fea_conc_worker_init(&w, job, &ctr[tid]);
    if (tid == 0) ran = omp_get_num_threads();
#pragma omp for schedule(static) nowait
    for (fea_index e = 0; e < job->ne; e++)
      if (w.ok && !fea_conc_failed(job) && fea_conc_visit(&w, NULL, e, job->ne))
        apply(&L, job->target, &w);
    fea_conc_worker_free(&w);
    FEA_CONC_BARRIER(&job->sync);
    if (!L.spin) {
#pragma omp for schedule(static) nowait
      for (fea_index i = 0; i < L.n; i++) pthread_mutex_destroy(&L.mutexes[i]);
    }
    fea_conc_sync(&job->sync);
  }
  fea_conc_sync(&job->sync);
  job->threads_run = ran;
  free(L.flags);
  free(L.mutexes);
  return FEA_SUCCESS;
}

const struct fea_update_ops fea_update_mutex = {
    .name = "mutex",
    .strategy = FEA_UPDATE_MUTEX,
    .available = NULL,
    .run = run,
};
