/* AUTO: pick a strategy from the thread count, the hardware and the mesh.
 *
 *   1 thread                          -> SERIAL (no overhead at all);
 *   more threads than processors      -> ATOMIC_CAS: coloring's barriers and
 *                                        ownership's fixed blocks wait for a
 *                                        descheduled thread, CAS does not;
 *   ownership overlap <= 15 %         -> PRIVATE_BUFFERS: no synchronization,
 *                                        one pass over the matrix;
 *   assembly whose threads - 1 copies -> PRIVATE_COPIES: no synchronization
 *   of the target move no more bytes     and nothing recomputed; the copies
 *   than its updates, in a quarter of    cost zeroing and one read each in
 *   the memory budget                    the reduction, (T - 1) x len
 *                                        entries, against the updates'
 *                                        ne x nb (nb + 1) read-modify-writes
 *                                        that CAS or coloring would protect
 *                                        (operators apply many times, and
 *                                        fresh copies per apply would fault
 *                                        their pages in each time: never);
 *   >= 256 elements per thread and color -> COLORING: barriers amortized;
 *   otherwise                         -> ATOMIC_CAS.
 * TSX is never picked: where it exists at all it is not faster than CAS on
 * the short updates of assembly (docs/assembly.md). The thresholds come from
 * the measurements in docs/assembly.md. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "assembly/conc.h"
#include "base/memory-limit.h"
#include "disc/coloring.h"

fea_update_strategy fea_conc_auto_pick(const fea_conc_job *job, int threads, fea_conc_plan *plan) {
  if (plan) {
    memset(plan, 0, sizeof *plan);
    plan->strategy = FEA_UPDATE_AUTO; /* nothing built */
  }
  if (threads <= 1) return FEA_UPDATE_SERIAL;
  if (threads > omp_get_num_procs()) return FEA_UPDATE_ATOMIC_CAS;
  /* The ownership the estimate needs is the plan PRIVATE_BUFFERS runs on:
   * handed back when picked, not built a second time. Without memory for
   * it, the estimate is skipped (the pick goes on). */
  fea_conc_plan own;
  if (fea_conc_privbuf_plan(job, threads, &own) == FEA_SUCCESS) {
    const int picked = fea_conc_privbuf_overlap(job, &own) <= 0.15;
    if (picked && plan)
      *plan = own;
    else
      fea_conc_plan_free(&own);
    if (picked) return FEA_UPDATE_PRIVATE_BUFFERS;
  }
  if (!job->work) {
    const double copies = (double)(threads - 1) * (double)job->target_len;
    const double updates = (double)job->ne * (double)job->nb * (double)(job->nb + 1);
    fea_memory_budget budget;
    fea_memory_budget_get(job->ctx, 0, &budget);
    if (copies <= updates && fea_bytes(copies, sizeof(double)) <= 0.25 * (double)budget.bytes)
      return FEA_UPDATE_PRIVATE_COPIES;
  }
  fea_index *colors = malloc(((size_t)job->ne + 1) * sizeof *colors);
  int nc = 0;
  fea_status st = colors ? fea_space_coloring(job->space, FEA_COLORING_AUTO, colors, &nc)
                         : FEA_ERR_OUT_OF_MEMORY;
  free(colors);
  if (st == FEA_SUCCESS && nc > 0 && job->ne / ((fea_index)nc * threads) >= 256)
    return FEA_UPDATE_COLORING;
  return FEA_UPDATE_ATOMIC_CAS;
}
