/* The element kernel every strategy shares: integrate one element and list
 * its updates of the target in the reference assembly's order, so that a
 * strategy that applies the lists in element order reproduces the reference
 * bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "assembly/conc.h"
#include "internal/error.h"
#include "disc/pattern.h"

void fea_conc_worker_init(fea_conc_worker *w, fea_conc_job *job, fea_conc_counters *ctr) {
  memset(w, 0, sizeof *w);
  w->job = job;
  w->ctr = ctr;
  if (job->work) { /* another job's workspace: its init records any failure */
    w->ok = job->work->init(w);
    if (!w->ok) fea_conc_worker_free(w);
    return;
  }
  const size_t nb = (size_t)job->nb, cap = 2 * nb * nb + nb;
  w->Ke = malloc(nb * nb * sizeof *w->Ke);
  w->fe = malloc(nb * sizeof *w->fe);
  w->idx = malloc(cap * sizeof *w->idx);
  w->row = malloc(cap * sizeof *w->row);
  w->val = malloc(cap * sizeof *w->val);
  fea_status st = w->Ke && w->fe && w->idx && w->row && w->val
                      ? FEA_SUCCESS
                      : FEA_ERROR(NULL, FEA_ERR_OUT_OF_MEMORY,
                                  "no memory for the element workspace (%zu updates)", cap);
  if (st == FEA_SUCCESS && !job->cfg.const_Ke)
    st = fea_element_values_alloc(job->pb->space, &job->pb->quad, &w->ev);
  if (st != FEA_SUCCESS) {
    fea_conc_fail(job, st, -1);
    fea_conc_worker_free(w);
    return;
  }
  w->ok = 1;
}

void fea_conc_worker_free(fea_conc_worker *w) {
  if (w->job && w->job->work && w->job->work->fini) w->job->work->fini(w);
  w->ext = NULL;
  if (w->ev.x || w->ev.w || w->ev.phi || w->ev.dphi) fea_element_values_free(&w->ev);
  free(w->Ke);
  free(w->fe);
  free(w->idx);
  free(w->row);
  free(w->val);
  w->Ke = w->fe = w->val = NULL;
  w->idx = w->row = NULL;
  w->ok = 0;
}

/* The benchmarks' artificial work: a dependent multiply-add chain of `flops`
 * flops seeded from the element matrix, so the compiler can neither fold it
 * nor overlap much of it with the updates. */
static double artificial_work(double seed, int flops) {
  double x = seed;
  for (int k = 0; k < flops / 2; k++) x = x * 0.999999 + 1e-7;
  return x;
}

int fea_conc_element(fea_conc_worker *w, fea_index e) {
  fea_conc_job *job = w->job;
  const fea_problem *pb = job->pb;
  const int nb = job->nb;
  const fea_index *ed = job->edofs + e * nb;
  const double *Ke = job->cfg.const_Ke, *fe = job->cfg.const_fe;
  if (!Ke) {
    fea_status st = pb->space->ops->element_values(pb->space, e, &pb->quad, &w->ev);
    if (st == FEA_SUCCESS) st = fea_form_element_system(pb, e, &w->ev, w->Ke, w->fe);
    if (st != FEA_SUCCESS) {
      fea_conc_fail(job, st, e);
      return 0;
    }
    Ke = w->Ke;
    fe = w->fe;
  }
  if (job->cfg.work_flops > 0) w->sink += artificial_work(Ke[0], job->cfg.work_flops);
  const fea_index *fi = pb->free_index;
  int n = 0;
  for (int i = 0; i < nb; i++) {
    fea_index r = fi[ed[i]];
    if (r < 0) continue;
    for (int j = 0; j < nb; j++) {
      fea_index c = fi[ed[j]];
      if (c < 0) continue;
      fea_index pos = job->row_ptr ? fea_pattern_find(job->row_ptr, job->col_idx, r, c)
                                   : r * job->ld + c;
      if (pos < 0) {
        fea_conc_fail(job,
                      FEA_ERROR(NULL, FEA_ERR_INVALID_ARG,
                                "the matrix pattern lacks entry (%lld, %lld), which element %lld "
                                "couples: it was not made for this problem",
                                (long long)r, (long long)c, (long long)e),
                      e);
        return 0;
      }
      w->idx[n] = pos;
      w->row[n] = r;
      w->val[n++] = Ke[i * nb + j];
    }
  }
  for (int i = 0; i < nb; i++) {
    fea_index r = fi[ed[i]];
    if (r < 0) continue;
    w->idx[n] = job->rhs_offset + r;
    w->row[n] = r;
    w->val[n++] = fe[i];
    for (int j = 0; j < nb; j++)
      if (fi[ed[j]] < 0) { /* lifting: b -= K g, the same rounding as the reference */
        w->idx[n] = job->rhs_offset + r;
        w->row[n] = r;
        w->val[n++] = -(Ke[i * nb + j] * pb->dirichlet[ed[j]]);
      }
  }
  w->n = n;
  w->ctr->updates += (uint64_t)n;
  w->ctr->elements++;
  return 1;
}
