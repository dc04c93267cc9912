/* SERIAL: one thread, elements in order (or in job->order), plain adds. The
 * result is the reference assembly's bit for bit; with a coloring's order it
 * is the COLORING strategy's, which is how the tests check that one. */
#include "assembly/conc.h"

static fea_status run(fea_conc_job *job, fea_conc_counters *ctr, int threads_max) {
  (void)threads_max;
  fea_conc_worker w;
  fea_conc_worker_init(&w, job, &ctr[0]);
  w.direct = 1; /* one thread, one pass: nothing to protect */
  for (fea_index k = 0; w.ok && k < job->ne && !fea_conc_failed(job); k++) {
    if (fea_conc_visit(&w, job->order, k, job->ne)) fea_conc_apply_plain(job->target, &w);
    k += w.served; /* a batch served them already */
    w.served = 0;
  }
  fea_conc_worker_free(&w);
  job->threads_run = 1;
  return FEA_SUCCESS;
}

const struct fea_update_ops fea_update_serial = {
    .name = "serial",
    .strategy = FEA_UPDATE_SERIAL,
    .available = NULL,
    .run = run,
};
