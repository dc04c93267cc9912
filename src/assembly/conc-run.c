/* The strategy table and the one driver every assembly goes through: pick
 * the ops, give each thread a counter slot, run, and turn the outcome into a
 * status and stats. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assembly/conc.h"
#include "base/context.h"
#include "internal/error.h"

static const struct fea_update_ops *const table[] = {
    [FEA_UPDATE_SERIAL] = &fea_update_serial,
    [FEA_UPDATE_COLORING] = &fea_update_coloring,
    [FEA_UPDATE_ATOMIC_CAS] = &fea_update_atomic_cas,
    [FEA_UPDATE_MUTEX] = &fea_update_mutex,
    [FEA_UPDATE_PRIVATE_BUFFERS] = &fea_update_privbuf,
    [FEA_UPDATE_TSX] = &fea_update_tsx,
    [FEA_UPDATE_AUTO] = NULL, /* resolved by fea_conc_auto_pick before a run */
    [FEA_UPDATE_PRIVATE_COPIES] = &fea_update_privcopy,
};

const struct fea_update_ops *fea_update_ops_get(fea_update_strategy s) {
  if ((int)s < 0 || (size_t)s >= sizeof table / sizeof table[0]) return NULL;
  return table[s];
}

void fea_conc_job_init(fea_conc_job *job, const fea_problem *pb, const fea_index *edofs) {
  job->space_copy = *pb->space;
  job->space_copy.ctx = NULL;
  job->pb_copy = *pb;
  job->pb_copy.ctx = NULL;
  job->pb_copy.space = &job->space_copy;
  job->pb = &job->pb_copy;
  job->space = pb->space;
  job->ctx = pb->ctx;
  job->edofs = edofs;
  job->ne = pb->space->num_elements;
  job->nb = pb->space->dofs_per_element;
}

void fea_conc_fail(fea_conc_job *job, fea_status st, fea_index e) {
  /* The flag orders the writers; the losers leave the message alone. */
  if (atomic_exchange_explicit(&job->failed, 1, memory_order_acq_rel) == 0) {
    job->status = st;
    job->failed_element = e;
    snprintf(job->message, sizeof job->message, "%s", fea_thread_last_error_text());
  }
}

static void sum_counters(const fea_conc_counters *c, int n, fea_assembly_stats *s) {
  for (int t = 0; t < n; t++) {
    s->updates += c[t].updates;
    s->retries += c[t].retries;
    s->aborts_conflict += c[t].aborts_conflict;
    s->aborts_capacity += c[t].aborts_capacity;
    s->aborts_explicit += c[t].aborts_explicit;
    s->aborts_other += c[t].aborts_other;
    s->tx_started += c[t].tx_started;
    s->tx_committed += c[t].tx_committed;
    s->tx_fallback += c[t].tx_fallback;
    s->lock_contended += c[t].lock_contended;
    s->elements_recomputed += c[t].elements;
  }
}

fea_status fea_conc_run(fea_conc_job *job, fea_update_strategy s, fea_assembly_stats *stats) {
  const struct fea_update_ops *ops = fea_update_ops_get(s);
  FEA_CHECK(ops, job->ctx, FEA_ERR_INVALID_ARG, "unknown update strategy %d", (int)s);
  atomic_init(&job->failed, 0);
  job->status = FEA_SUCCESS;
  job->failed_element = -1;
  job->message[0] = '\0';
  job->colors = 0;
  job->threads_run = 1;
  const int T = job->cfg.threads;
  fea_conc_counters *ctr = aligned_alloc(64, (size_t)T * sizeof *ctr);
  FEA_CHECK(ctr, job->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d counter slots", T);
  memset(ctr, 0, (size_t)T * sizeof *ctr);
  fea_status st = ops->run(job, ctr, T);
  if (st == FEA_SUCCESS && atomic_load(&job->failed)) {
    st = job->failed_element >= 0 ? FEA_ERROR(job->ctx, job->status, "element %lld: %s",
                                              (long long)job->failed_element, job->message)
                                  : FEA_ERROR(job->ctx, job->status, "%s", job->message);
  }
  if (st == FEA_SUCCESS && job->work) { /* not an assembly: no recount of the elements */
    sum_counters(ctr, T, stats);
    stats->elements_recomputed = 0;
    stats->strategy_run = s;
    stats->threads = job->threads_run;
    stats->colors = job->colors;
  } else if (st == FEA_SUCCESS) {
    sum_counters(ctr, T, stats);
    /* elements computed minus one per element that has a free DoF */
    fea_index active = 0;
    for (fea_index e = 0; e < job->ne; e++) {
      const fea_index *ed = job->edofs + e * job->nb;
      for (int i = 0; i < job->nb; i++)
        if (job->pb->free_index[ed[i]] >= 0) {
          active++;
          break;
        }
    }
    stats->elements_recomputed = stats->elements_recomputed > (uint64_t)active
                                     ? stats->elements_recomputed - (uint64_t)active
                                     : 0;
    stats->strategy_run = s;
    stats->threads = job->threads_run;
    stats->colors = job->colors;
  }
  free(ctr);
  return st;
}
