/* Plans: what a strategy derives from the mesh alone (the coloring's element
 * order, the row ownership of PRIVATE_BUFFERS), built once by a job that runs
 * the same loops many times. Operator application is such a job: coloring
 * the mesh on every y = A x would cost more than the product. */
#include <stdlib.h>
#include <string.h>

#include "assembly/conc.h"
#include "internal/error.h"

fea_status fea_conc_plan_build(const fea_conc_job *job, fea_update_strategy s, int threads,
                               fea_conc_plan *plan) {
  memset(plan, 0, sizeof *plan);
  plan->strategy = s;
  if (s == FEA_UPDATE_COLORING)
    return fea_conc_color_order(job->space, &plan->color_order, &plan->color_start, &plan->ncolors);
  if (s == FEA_UPDATE_PRIVATE_BUFFERS) return fea_conc_privbuf_plan(job, threads, plan);
  return FEA_SUCCESS;
}

void fea_conc_plan_free(fea_conc_plan *plan) {
  if (!plan) return;
  free(plan->color_order);
  free(plan->color_start);
  free(plan->owner);
  free(plan->first);
  free(plan->last);
  free(plan->elem_block);
  memset(plan, 0, sizeof *plan);
}
