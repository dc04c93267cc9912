/* Integrate a batch of leaf fronts on the host's threads, for backends whose
 * factorization runs elsewhere (/gpu/cuda integrates its leaves into pinned
 * chunks that go up to the device while the next chunk is integrated), or
 * only their element records where the device integrates the stiffness.
 *
 * Why here and not in the module: the workers need the context-less problem
 * copy and the per-thread error slot that /cpu/threads uses (a failing sigma
 * or f must not raise into the shared context from several threads), and
 * those stay inside the library. Each leaf's load goes to its own slice of a
 * scratch array; the slices are added into f->load afterwards, leaf by leaf
 * in the batch's order, so the load is the same sum in the same order as a
 * one-thread run and as /cpu/ref, whatever the thread count. Calls the leaf
 * element loop (multifrontal-leaf.c) and the node error
 * (multifrontal-node.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "internal/etree.h"
#include "internal/multifrontal.h"

fea_status fea_multifrontal_assemble_leaves(fea_context *ctx, fea_multifrontal_factor *f,
                                            const fea_index *nodes, fea_index count,
                                            const fea_multifrontal_leaf_shape *records,
                                            double *values, const size_t *value_off,
                                            double *load_scratch, int nthreads) {
  const fea_etree *t = f->tree;
  if (count <= 0) return FEA_SUCCESS;
  if (nthreads < 1) nthreads = 1;
  if (nthreads > count) nthreads = (int)count;

  fea_cpu_multifrontal_worker_view w;
  fea_cpu_multifrontal_worker_view_init(&w, f);

  fea_index bad = -1;
  fea_status bad_st = FEA_SUCCESS;
  char why[FEA_ERROR_LEN] = "";
  double integ = 0;
  /* Each leaf's load slice starts where the previous leaf's ends. */
  size_t *load_off = malloc((size_t)count * sizeof *load_off);
  FEA_CHECK(load_off, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the offsets of %lld leaves",
            (long long)count);
  size_t lo = 0;
  for (fea_index k = 0; k < count; k++) {
    const fea_etree_node *nd = &t->nodes[nodes[k]];
    load_off[k] = lo;
    lo += (size_t)(nd->q + nd->r);
  }

#pragma omp parallel num_threads(nthreads) reduction(+ : integ)
  {
    fea_context local = *ctx; /* the ops only read it; messages stay per thread */
    local.log_fn = NULL;
    local.progress_fn = NULL; /* the user's callback runs on the calling thread only */
#pragma omp for schedule(dynamic, 1)
    for (fea_index k = 0; k < count; k++) {
      const fea_etree_node *nd = &t->nodes[nodes[k]];
      const size_t np = (size_t)((nd->q + nd->r) * nd->q), ns = (size_t)(nd->r * nd->r);
      double *P = values + value_off[k], *load = load_scratch + load_off[k];
      memset(load, 0, (size_t)(nd->q + nd->r) * sizeof *load);
      double it = 0;
      fea_status st;
      if (records) {
        st = fea_multifrontal_leaf_records(&local, &w.f, nodes[k], records, P, load, &it);
      } else {
        memset(P, 0, (np + ns) * sizeof *P);
        st = fea_multifrontal_assemble_leaf(&local, &w.f, nodes[k], P, P + np, load, &it);
      }
      integ += it;
      if (st < 0) {
#pragma omp critical(fea_multifrontal_leaf_batch_failure)
        if (bad < 0 || nodes[k] < bad) {
          bad = nodes[k];
          bad_st = st;
          snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
        }
      }
    }
  }
  f->integrate_s += integ;
  if (bad < 0)
    for (fea_index k = 0; k < count; k++) {
      const fea_etree_node *nd = &t->nodes[nodes[k]];
      const fea_index *dofs = t->front_dofs + nd->front_off;
      const double *load = load_scratch + load_off[k];
      for (fea_index a = 0; a < nd->q + nd->r; a++) f->load[dofs[a]] += load[a];
    }
  free(load_off);
  if (bad >= 0) return fea_multifrontal_node_error(ctx, f, bad, bad_st, why);
  return FEA_SUCCESS;
}
