/* TSX: Intel RTM transactions, each applying up to `tsx_batch` updates, with
 * the thesis's failure handling adapted to RTM:
 *   conflict  -> randomized exponential backoff, retry;
 *   capacity  -> the batch will not fit next time either: fallback at once;
 *   explicit  -> we aborted because the fallback lock was held: wait for it
 *                to be free, retry;
 *   other     -> retry;
 * and after `tsx_retries` attempts the batch is applied under one global
 * fallback lock. Every transaction reads that lock first and aborts if it is
 * held ("subscribes" to it), so a batch under the lock never interleaves with
 * a transaction: plain adds under the lock are safe.
 *
 * This is the only file compiled with -mrtm, and only when the build found it
 * (FEA_HAVE_TSX_BUILD). The test hook cfg.tsx_force_abort (set from
 * FEACCEL_TSX_FORCE_ABORT=1) makes every attempt return a synthetic
 * "conflict, may retry" status without executing XBEGIN, so the retry,
 * backoff and fallback logic runs, and is tested, on CPUs without RTM, where
 * XBEGIN would be an illegal instruction. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assembly/conc.h"
#include "fea-config.h"

#if FEA_HAVE_TSX_BUILD
#include <cpuid.h>
#include <immintrin.h>
#endif

/* Abort status bits, as RTM defines them (EAX after an abort), so the real
 * and the forced path share the handler. */
enum {
  TX_STARTED = ~0u,
  TX_EXPLICIT = 1u << 0,
  TX_RETRY = 1u << 1,
  TX_CONFLICT = 1u << 2,
  TX_CAPACITY = 1u << 3,
  TX_LOCK_HELD = 0xffu, /* our _xabort code: the fallback lock was held */
};

int fea_tsx_cpu_usable(char *reason, size_t len) {
#if FEA_HAVE_TSX_BUILD
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    if (reason) snprintf(reason, len, "CPUID has no leaf 7 (structured extended features)");
    return 0;
  }
  if (!(b & (1u << 11))) {
    if (reason)
      snprintf(reason, len,
               "CPUID reports no RTM (leaf 7, EBX bit 11 clear): this CPU has no "
               "TSX, or the firmware or the kernel disabled it");
    return 0;
  }
  if (d & (1u << 11)) {
    if (reason)
      snprintf(reason, len,
               "CPUID reports RTM_ALWAYS_ABORT (leaf 7, EDX bit 11): every "
               "transaction would abort");
    return 0;
  }
  if (reason) snprintf(reason, len, "CPUID reports RTM and it does not always abort");
  return 1;
#else
  if (reason)
    snprintf(reason, len,
             "libfeaccel was built without the TSX strategy (not x86, the compiler "
             "lacks -mrtm, or -Dtsx=disabled)");
  return 0;
#endif
}

static int available(const fea_conc_config *cfg, char *reason, size_t len) {
  if (cfg->tsx_force_abort) {
    if (reason) snprintf(reason, len, "forced-abort test mode: transactions are not attempted");
    return 1;
  }
  return fea_tsx_cpu_usable(reason, len);
}

typedef struct tsx {
  double *t;
  atomic_int lock; /* the fallback lock */
  int batch, retries, backoff, forced;
} tsx;

#if FEA_HAVE_TSX_BUILD
/* One transaction over n updates. Kept out of line and free of calls so that
 * nothing but the loads and stores of the batch runs inside it. */
__attribute__((noinline)) static unsigned tx_attempt(tsx *x, int n, const fea_index *idx,
                                                     const double *v) {
  unsigned s = _xbegin();
  if (s == _XBEGIN_STARTED) {
    if (atomic_load_explicit(&x->lock, memory_order_relaxed)) _xabort(TX_LOCK_HELD);
    for (int k = 0; k < n; k++) x->t[idx[k]] += v[k];
    _xend();
    return TX_STARTED;
  }
  return s;
}
#endif

static void lock_wait_free(tsx *x) {
  while (atomic_load_explicit(&x->lock, memory_order_acquire)) fea_conc_pause();
}

static void fallback(tsx *x, int n, const fea_index *idx, const double *v, fea_conc_counters *c) {
  int expected = 0;
  while (!atomic_compare_exchange_weak_explicit(&x->lock, &expected, 1, memory_order_acquire,
                                                memory_order_relaxed)) {
    expected = 0;
    lock_wait_free(x);
  }
  for (int k = 0; k < n; k++) x->t[idx[k]] += v[k];
  atomic_store_explicit(&x->lock, 0, memory_order_release);
  c->tx_fallback++;
}

static void apply_batch(tsx *x, int n, const fea_index *idx, const double *v, uint64_t *rng,
                        fea_conc_counters *c) {
  for (int attempt = 0; attempt < x->retries; attempt++) {
    if (attempt > 0) c->retries++;
    lock_wait_free(x); /* starting while it is held would only abort */
    c->tx_started++;
    unsigned s = TX_CONFLICT | TX_RETRY; /* forced: what a collision looks like */
#if FEA_HAVE_TSX_BUILD
    if (!x->forced) s = tx_attempt(x, n, idx, v);
#endif
    if (s == TX_STARTED) {
      c->tx_committed++;
      return;
    }
    if (s & TX_EXPLICIT) {
      c->aborts_explicit++;
      continue; /* the lock was held: lock_wait_free above, then retry */
    }
    if (s & TX_CAPACITY) {
      c->aborts_capacity++;
      break;
    }
    if (s & TX_CONFLICT) {
      c->aborts_conflict++;
      if (x->backoff) fea_conc_backoff(rng, attempt);
      continue;
    }
    c->aborts_other++;
  }
  fallback(x, n, idx, v, c);
}

/* Microbenchmark hooks (bench/case-updates.c): the strategy's update path,
 * -mrtm code included, without an element loop around it. */
void *fea_conc_tsx_state_create(double *t, int batch, int retries, int backoff, int forced) {
  tsx *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  *x = (tsx){.t = t, .batch = batch, .retries = retries, .backoff = backoff, .forced = forced};
  atomic_init(&x->lock, 0);
  return x;
}

void fea_conc_tsx_apply(void *state, int n, const fea_index *idx, const double *v, uint64_t *rng,
                        fea_conc_counters *c) {
  tsx *x = state;
  for (int k = 0; k < n; k += x->batch)
    apply_batch(x, n - k < x->batch ? n - k : x->batch, idx + k, v + k, rng, c);
}

void fea_conc_tsx_state_destroy(void *state) { free(state); }

static fea_status run(fea_conc_job *job, fea_conc_counters *ctr, int threads_max) {
  (void)threads_max; /* the counter slots; the team is fea_conc_team's */
  tsx x = {.t = job->target,
           .batch = job->cfg.tsx_batch,
           .retries = job->cfg.tsx_retries,
           .backoff = job->cfg.backoff,
           .forced = job->cfg.tsx_force_abort};
  atomic_init(&x.lock, 0);
  int ran = 1;
  fea_conc_sync(&job->sync);
#pragma omp parallel num_threads(fea_conc_team(job))
  {
    fea_conc_sync(&job->sync);
    const int tid = omp_get_thread_num();
    fea_conc_worker w;
    fea_conc_worker_init(&w, job, &ctr[tid]);
    uint64_t rng = 0x9e3779b97f4a7c15u * (uint64_t)(tid + 1);
    if (tid == 0) ran = omp_get_num_threads();
#pragma omp for schedule(static) nowait
    for (fea_index e = 0; e < job->ne; e++)
      if (w.ok && !fea_conc_failed(job) && fea_conc_visit(&w, NULL, e, job->ne))
        for (int k = 0; k < w.n; k += x.batch) {
          int n = w.n - k < x.batch ? w.n - k : x.batch;
          apply_batch(&x, n, w.idx + k, w.val + k, &rng, w.ctr);
        }
    fea_conc_worker_free(&w);
    fea_conc_sync(&job->sync);
  }
  fea_conc_sync(&job->sync);
  job->threads_run = ran;
  return FEA_SUCCESS;
}

const struct fea_update_ops fea_update_tsx = {
    .name = "tsx",
    .strategy = FEA_UPDATE_TSX,
    .available = available,
    .run = run,
};
