/* /cpu/threads multifrontal ops: level-parallel.
 *
 * A level with at least as many nodes as threads runs its nodes concurrently
 * (OpenMP, dynamic schedule: leaf and boundary fronts differ in size) with
 * single-threaded BLAS inside each. A level with fewer nodes (near the root:
 * few, large fronts) runs its nodes one by one with the context's threads in
 * OpenBLAS where the front is large enough for them to pay
 * (BLAS_THREAD_MIN_FLOPS), else on one. Never both at once, so the threads
 * are never oversubscribed. Which of the two a level runs depends on the context's thread count only;
 * a concurrent level starts as many threads as the machine's load leaves
 * cores for (thread-budget.h): each node is one thread's, with one-thread
 * BLAS, so the factor does not depend on the team. Allocation and release
 * come from /cpu/ref. */
#include <stdio.h>

#include "linalg/blas.h"
#include "base/context.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "internal/etree.h"
#include "disc/problem.h"
#include "base/thread-budget.h"

typedef enum multifrontal_step { STEP_FACTOR, STEP_FORWARD, STEP_BACKWARD } multifrontal_step;

/* Flops per thread from which a front of a one-by-one level factors on
 * threaded BLAS: about a scheduler time slice of one core's DGEMM (5 ms at
 * 20 GFLOP/s). Below it the threads save less than one of them loses when
 * another process holds its core (each parallel OpenBLAS call waits for
 * every thread), and on an idle machine little: the 3,600-DoF B-spline
 * solve ran 0.8 - 1.15x faster on two threads than on one. A decision by
 * the front's size (the tree's count, fea_multifrontal_node_flops), not by
 * the load, so that the factor's digits do not follow the load. */
#define BLAS_THREAD_MIN_FLOPS 1e8

static int blas_threads_pay(const fea_etree_node *nd, int nthreads) {
  return nd->flops >= BLAS_THREAD_MIN_FLOPS * (double)nthreads;
}

/* Run one step on the nodes of a level, concurrently or one by one. The
 * smallest failing node's error is reported on ctx. */
static fea_status run_level(fea_context *ctx, fea_multifrontal_factor *f,
                            fea_multifrontal_solve *sv, int level, multifrontal_step step) {
  const fea_etree *t = f->tree;
  const fea_index *nodes = t->level_nodes + t->level_start[level];
  const fea_index count = t->level_start[level + 1] - t->level_start[level];
  const int nthreads = ctx->nthreads;
  fea_index bad = -1;
  fea_status bad_st = FEA_SUCCESS;
  char why[FEA_ERROR_LEN] = "";
  double flops = 0, integ = 0;
  if (nthreads <= 1 || count < nthreads) {
    for (fea_index k = 0; k < count && bad < 0; k++) {
      /* One-thread BLAS for a front too small to pay for threads. */
      const int prev = blas_threads_pay(&t->nodes[nodes[k]], nthreads) ? -1
                                                                       : fea_blas_push_threads(1);
      double fl = 0, it = 0;
      fea_status st = step == STEP_FACTOR
                          ? fea_multifrontal_cpu_factor_node(ctx, f, nodes[k], &fl, &it)
                      : step == STEP_FORWARD
                          ? fea_multifrontal_cpu_forward_node(ctx, f, sv, nodes[k])
                          : fea_multifrontal_cpu_backward_node(ctx, f, sv, nodes[k]);
      if (prev >= 0) fea_blas_pop_threads(prev);
      flops += fl;
      integ += it;
      if (st < 0) {
        bad = nodes[k];
        bad_st = st;
        snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
      }
    }
  } else {
    /* The process-wide OpenBLAS count goes to 1 before the threads start;
     * each thread's override keeps the dense ops from raising it again. */
    fea_blas_use_threads(1);
    /* The workers see the problem through a copy without a context. */
    fea_multifrontal_worker_view w;
    fea_multifrontal_worker_view_init(&w, f);
    const int team = fea_thread_budget(ctx);
#pragma omp parallel num_threads(team) reduction(+ : flops, integ)
    {
      int prev = fea_blas_push_threads(1);
      /* Each thread reports into its own copy of the context: messages and
       * the log callback are not thread-safe, the ops only read the rest. */
      fea_context local = *ctx;
      local.log_fn = NULL;
#pragma omp for schedule(dynamic, 1)
      for (fea_index k = 0; k < count; k++) {
        double fl = 0, it = 0;
        fea_status st = step == STEP_FACTOR
                            ? fea_multifrontal_cpu_factor_node(&local, &w.f, nodes[k], &fl, &it)
                        : step == STEP_FORWARD
                            ? fea_multifrontal_cpu_forward_node(&local, &w.f, sv, nodes[k])
                            : fea_multifrontal_cpu_backward_node(&local, &w.f, sv, nodes[k]);
        flops += fl;
        integ += it;
        if (st < 0) {
#pragma omp critical(fea_multifrontal_threads_failure)
          if (bad < 0 || nodes[k] < bad) {
            bad = nodes[k];
            bad_st = st;
            /* The thread's own slot holds the message (the forms raise
             * on the context-less problem copy), without its "name(): "
             * head, which names an internal function on a worker. */
            snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
          }
        }
      }
      fea_blas_pop_threads(prev);
    }
  }
  if (bad >= 0) return fea_multifrontal_node_error(ctx, f, bad, bad_st, why);
  if (step == STEP_FACTOR) {
    f->flops += flops;
    f->integrate_s += integ;
    fea_multifrontal_cpu_level_done(f, level);
  }
  return FEA_SUCCESS;
}

static fea_status threads_factor_level(fea_context *ctx, fea_multifrontal_factor *f, int level) {
  FEA_CALL(fea_multifrontal_cpu_level_start(ctx, f, level));
  return run_level(ctx, f, NULL, level, STEP_FACTOR);
}

/* Nodes per thread from which a level is walked as subtrees: enough for the
 * dynamic schedule to balance subtrees of unequal cost. */
#define SUBTREES_PER_THREAD 4

/* The levels up to the highest one with SUBTREES_PER_THREAD nodes per thread
 * as subtree walks (multifrontal-subtrees.c): those levels ran their nodes
 * concurrently on one-thread BLAS, so the digits stay; the walk keeps a
 * path's Schur blocks per thread instead of a level's. The cut follows the
 * context's thread count, the team the load (thread-budget.h). One thread:
 * the whole tree. */
static int threads_below_cut(const fea_context *ctx, const fea_etree *t, int *team) {
  const int nthreads = ctx->nthreads;
  *team = nthreads; /* the budget may start fewer, never more */
  if (nthreads <= 1) return t->num_levels - 1;
  int c = -1;
  for (int L = 0; L < t->num_levels; L++)
    if (t->level_start[L + 1] - t->level_start[L] >= (fea_index)SUBTREES_PER_THREAD * nthreads)
      c = L;
  return c;
}

static fea_status threads_factor_below(fea_context *ctx, fea_multifrontal_factor *f, int *cut,
                                       double *level_s) {
  int team;
  *cut = -1;
  const int c = threads_below_cut(ctx, f->tree, &team);
  if (c < 0) return FEA_SUCCESS;
  FEA_CALL(fea_multifrontal_cpu_factor_subtrees(ctx, f, c, fea_thread_budget(ctx), level_s));
  *cut = c;
  return FEA_SUCCESS;
}

/* The solve steps only read the factor: the casts drop a const the node
 * functions keep. */
static fea_status threads_forward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                        fea_multifrontal_solve *sv, int level) {
  return run_level(ctx, (fea_multifrontal_factor *)f, sv, level, STEP_FORWARD);
}

static fea_status threads_backward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                         fea_multifrontal_solve *sv, int level) {
  return run_level(ctx, (fea_multifrontal_factor *)f, sv, level, STEP_BACKWARD);
}

const struct fea_multifrontal_ops fea_cpu_threads_multifrontal_ops = {
    .factor_level = threads_factor_level,
    .factor_below = threads_factor_below,
    .below_cut = threads_below_cut,
    .forward_level = threads_forward_level,
    .backward_level = threads_backward_level,
};
