/* COLORING: the elements of one color share no DoF, so within a color every
 * target entry gets at most one update and threads add without protection;
 * the implicit barrier of each `omp for` separates the colors.
 *
 * Each entry receives its contributions in color order, whatever the thread
 * count: the result is deterministic and equals SERIAL run over the elements
 * sorted by color (stable), which is what fea_conc_color_order returns. */
#include <omp.h>
#include <stdlib.h>

#include "assembly/conc.h"
#include "disc/coloring.h"
#include "internal/error.h"

fea_status fea_conc_color_order(const fea_space *s, fea_index **order, fea_index **start,
                                int *ncolors) {
  const fea_index ne = s->num_elements;
  fea_index *colors = malloc(((size_t)ne + 1) * sizeof *colors);
  FEA_CHECK(colors, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the colors of %lld elements",
            (long long)ne);
  int nc = 0;
  fea_status st = fea_space_coloring(s, FEA_COLORING_AUTO, colors, &nc);
  fea_index *ord = NULL, *cs = NULL;
  if (st == FEA_SUCCESS) {
    ord = malloc(((size_t)ne + 1) * sizeof *ord);
    cs = calloc((size_t)nc + 2, sizeof *cs);
    if (!ord || !cs)
      st = FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to sort %lld elements by color",
                     (long long)ne);
  }
  if (st == FEA_SUCCESS) { /* counting sort, stable: element order within a color */
    for (fea_index e = 0; e < ne; e++) cs[colors[e] + 2]++;
    for (int c = 0; c < nc; c++) cs[c + 2] += cs[c + 1];
    for (fea_index e = 0; e < ne; e++) ord[cs[colors[e] + 1]++] = e;
    *order = ord;
    *start = cs;
    *ncolors = nc;
  } else {
    free(ord);
    free(cs);
  }
  free(colors);
  return st;
}

static fea_status run(fea_conc_job *job, fea_conc_counters *ctr, int threads_max) {
  fea_index *order = NULL, *start = NULL;
  int nc = 0;
  const int planned = job->plan && job->plan->color_order;
  if (planned) {
    order = job->plan->color_order;
    start = job->plan->color_start;
    nc = job->plan->ncolors;
  } else {
    FEA_CALL(fea_conc_color_order(job->space, &order, &start, &nc));
  }
  int ran = 1;
  fea_conc_sync(&job->sync);
#pragma omp parallel num_threads(fea_conc_team(job))
  {
    fea_conc_sync(&job->sync);
    const int tid = omp_get_thread_num(), nth = omp_get_num_threads();
    fea_conc_worker w;
    fea_conc_worker_init(&w, job, &ctr[tid]);
    w.direct = 1; /* a color's elements share no entry */
    if (tid == 0) ran = nth;
    for (int c = 0; c < nc; c++) {
      /* A static schedule by hand: a color is cut into one slice per
       * planned thread (threads_max), each slice a pass, so the visit's
       * hint stops where the slice does. The slices are dealt round-robin
       * over the team, which may be smaller (fea_conc_team): a kernel's
       * batches start where slices do, so the slices, not the team, fix
       * the digits. */
      const fea_index len = start[c + 1] - start[c];
      for (int sl = tid; sl < threads_max; sl += nth) {
        const fea_index k0 = start[c] + len * sl / threads_max;
        const fea_index k1 = start[c] + len * (sl + 1) / threads_max;
        for (fea_index k = k0; k < k1; k++) {
          if (w.ok && !fea_conc_failed(job) && fea_conc_visit(&w, order, k, k1))
            fea_conc_apply_plain(job->target, &w);
          k += w.served; /* a batch served them already */
          w.served = 0;
        }
      }
      FEA_CONC_BARRIER(&job->sync); /* the next color may touch the same entries */
    }
    fea_conc_worker_free(&w);
    fea_conc_sync(&job->sync);
  }
  fea_conc_sync(&job->sync);
  job->threads_run = ran;
  job->colors = nc;
  if (!planned) {
    free(order);
    free(start);
  }
  return FEA_SUCCESS;
}

const struct fea_update_ops fea_update_coloring = {
    .name = "coloring",
    .strategy = FEA_UPDATE_COLORING,
    .available = NULL,
    .run = run,
};
