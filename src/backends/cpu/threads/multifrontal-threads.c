/* /cpu/threads multifrontal ops: level-parallel.
 *
 * A level with at least as many nodes as threads runs its nodes concurrently
 * (OpenMP, dynamic schedule: leaf and boundary fronts differ in size) with
 * single-threaded BLAS inside each. A level with fewer nodes (near the root:
 * few, large fronts) runs its nodes one by one with the context's threads in
 * OpenBLAS where the front is large enough for them to pay
 * (BLAS_THREAD_MIN_FLOPS), else on one. Never both at once, so the threads
 * are never oversubscribed. Which of the two a level runs depends on the
 * context's thread count only;
 * a concurrent level starts as many threads as the machine's load leaves
 * cores for (thread-budget.h): each node is one thread's, with one-thread
 * BLAS, so the factor does not depend on the team. Allocation and release
 * come from /cpu/ref. One level runner serves the three sweeps through a
 * node step; the solve's take the factor const. Calls the node kernels
 * (multifrontal-node.c), the level and subtree walks, the sweep's work and
 * the worker view of ../ref. */
#include <stdatomic.h>
#include <stdio.h>

#include <omp.h>

#include "linalg/blas.h"
#include "base/context.h"
#include "base/progress.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "internal/etree.h"
#include "disc/problem.h"
#include "base/thread-budget.h"

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

/* Whether a level of `count` nodes runs them concurrently (else one by
 * one): by the context's thread count only. */
static int level_concurrent(int nthreads, fea_index count) {
  return nthreads > 1 && count >= nthreads;
}

/* One node's step of a level: n on the calling thread (worker -1, the
 * level's nodes one by one) or on worker `worker` of a team. Adds a factor
 * step's flops and integration time to *flops and *integ. */
typedef fea_status (*node_step)(fea_context *ctx, void *data, fea_index n, int worker,
                                double *flops, double *integ);

/* Run `step` on the nodes of a level, concurrently on at most max_team
 * threads or one by one. The smallest failing node's error is reported on
 * ctx; the flops and integration time of the nodes are summed into *flops
 * and *integ. With `report` (the factorization), the nodes done reach the
 * progress callback from the calling thread (thread 0 of a team), and a
 * cancel stops the team at its next nodes. */
static fea_status run_level(fea_context *ctx, const fea_multifrontal_factor *f, int level,
                            int max_team, node_step step, void *data, double *flops, double *integ,
                            int report) {
  const fea_etree *t = f->tree;
  const fea_index *nodes = t->level_nodes + t->level_start[level];
  const fea_index count = t->level_start[level + 1] - t->level_start[level];
  const int nthreads = ctx->nthreads;
  fea_index bad = -1;
  fea_status bad_st = FEA_SUCCESS;
  char why[FEA_ERROR_LEN] = "";
  double fl_sum = 0, it_sum = 0;
  const double before = (double)t->level_start[level], all = (double)t->num_nodes;
  atomic_int cancelled = 0;
  _Atomic fea_index done = 0;
  if (!level_concurrent(nthreads, count)) {
    for (fea_index k = 0; k < count && bad < 0; k++) {
      if (report) FEA_CALL(fea_progress_of(ctx, FEA_PROGRESS_MULTIFRONTAL, before + k, all));
      /* One-thread BLAS for a front too small to pay for threads. */
      const int prev = blas_threads_pay(&t->nodes[nodes[k]], nthreads) ? -1
                                                                       : fea_blas_push_threads(1);
      double fl = 0, it = 0;
      fea_status st = step(ctx, data, nodes[k], -1, &fl, &it);
      if (prev >= 0) fea_blas_pop_threads(prev);
      fl_sum += fl;
      it_sum += it;
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
    int team = fea_thread_budget(ctx);
    if (team > max_team) team = max_team;
#pragma omp parallel num_threads(team) reduction(+ : fl_sum, it_sum)
    {
      int prev = fea_blas_push_threads(1);
      /* Each thread reports into its own copy of the context: messages and
       * the log callback are not thread-safe, the ops only read the rest. */
      fea_context local = *ctx;
      local.log_fn = NULL;
      local.progress_fn = NULL; /* the user's callback runs on the calling thread only */
      const int worker = omp_get_thread_num();
#pragma omp for schedule(dynamic, 1)
      for (fea_index k = 0; k < count; k++) {
        if (atomic_load_explicit(&cancelled, memory_order_relaxed)) continue;
        double fl = 0, it = 0;
        fea_status st = step(&local, data, nodes[k], worker, &fl, &it);
        fl_sum += fl;
        it_sum += it;
        const fea_index d = atomic_fetch_add(&done, 1) + 1;
        if (report && worker == 0 &&
            fea_progress_of(ctx, FEA_PROGRESS_MULTIFRONTAL, before + (double)d, all) < 0)
          atomic_store(&cancelled, 1);
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
  if (atomic_load(&cancelled) || bad_st == FEA_ERR_CANCELLED)
    return FEA_ERR_CANCELLED; /* raised on ctx by the calling thread's report */
  if (bad >= 0) return fea_multifrontal_node_error(ctx, f, bad, bad_st, why);
  *flops += fl_sum;
  *integ += it_sum;
  return FEA_SUCCESS;
}

/* The factor step: on the calling thread through f, on a team's worker
 * through the view without a context. */
typedef struct factor_step_data {
  fea_multifrontal_factor *f;
  fea_multifrontal_factor *team_f; /* the worker view's */
} factor_step_data;

static fea_status factor_step(fea_context *ctx, void *data, fea_index n, int worker, double *flops,
                              double *integ) {
  const factor_step_data *d = data;
  return fea_cpu_multifrontal_factor_node(ctx, worker < 0 ? d->f : d->team_f, n, flops, integ);
}

static fea_status threads_factor_level(fea_context *ctx, fea_multifrontal_factor *f, int level) {
  FEA_CALL(fea_cpu_multifrontal_level_start(ctx, f, level));
  /* The workers see the problem through a copy without a context. */
  fea_cpu_multifrontal_worker_view view;
  fea_cpu_multifrontal_worker_view_init(&view, f);
  factor_step_data d = {.f = f, .team_f = &view.f};
  double flops = 0, integ = 0;
  FEA_CALL(run_level(ctx, f, level, ctx->nthreads, factor_step, &d, &flops, &integ, 1));
  f->flops += flops;
  f->integrate_s += integ;
  fea_cpu_multifrontal_level_done(f, level);
  return fea_progress_of(ctx, FEA_PROGRESS_MULTIFRONTAL, (double)f->tree->level_start[level + 1],
                         (double)f->tree->num_nodes);
}

/* Nodes per thread from which a level is walked as subtrees: enough for the
 * dynamic schedule to balance subtrees of unequal cost. */
#define SUBTREES_PER_THREAD 4

/* The levels up to the highest one with SUBTREES_PER_THREAD nodes per thread
 * as subtree walks (multifrontal-subtree-walk.c): those levels ran their nodes
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
  FEA_CALL(fea_cpu_multifrontal_factor_subtrees(ctx, f, c, fea_thread_budget(ctx), level_s));
  *cut = c;
  return FEA_SUCCESS;
}

/* The solve steps read the factor only: the runner and its steps take it
 * const. Each step works in its thread's block of the sweep's work
 * (multifrontal-sweep-work.c), block 0 on the calling thread. */
typedef struct solve_step_data {
  const fea_multifrontal_factor *f;
  fea_multifrontal_solve *sv;
  const fea_cpu_multifrontal_sweep_work *work;
} solve_step_data;

static fea_status forward_step(fea_context *ctx, void *data, fea_index n, int worker, double *flops,
                               double *integ) {
  (void)flops, (void)integ;
  const solve_step_data *d = data;
  double *W = fea_cpu_multifrontal_sweep_block(d->work, worker < 0 ? 0 : worker);
  return fea_cpu_multifrontal_forward_node(ctx, d->f, d->sv, n, W, d->work);
}

static fea_status backward_step(fea_context *ctx, void *data, fea_index n, int worker,
                                double *flops, double *integ) {
  (void)flops, (void)integ;
  const solve_step_data *d = data;
  double *Z = fea_cpu_multifrontal_sweep_block(d->work, worker < 0 ? 0 : worker);
  return fea_cpu_multifrontal_backward_node(ctx, d->f, d->sv, n, Z);
}

/* The sweep's work: a block per thread of ctx, the ones after the first as
 * large as the largest front of the levels that run concurrently (counted
 * once, by the sweep's first level). */
static fea_status sweep_work(fea_context *ctx, const fea_multifrontal_factor *f,
                             fea_multifrontal_solve *sv, int with_updates,
                             const fea_cpu_multifrontal_sweep_work **out) {
  const fea_etree *t = f->tree;
  const int nthreads = ctx->nthreads;
  fea_index team_front = 0;
  if (!sv->work_ready) /* the sweep's first level sizes the work */
    for (int L = 0; L < t->num_levels; L++) {
      if (!level_concurrent(nthreads, t->level_start[L + 1] - t->level_start[L])) continue;
      for (fea_index k = t->level_start[L]; k < t->level_start[L + 1]; k++) {
        const fea_etree_node *nd = &t->nodes[t->level_nodes[k]];
        if (nd->q + nd->r > team_front) team_front = nd->q + nd->r;
      }
    }
  return fea_cpu_multifrontal_sweep_work_get(ctx, f, sv, nthreads, team_front, with_updates, out);
}

static fea_status threads_solve_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                      fea_multifrontal_solve *sv, int level, node_step step,
                                      int with_updates) {
  const fea_cpu_multifrontal_sweep_work *w;
  FEA_CALL(sweep_work(ctx, f, sv, with_updates, &w));
  solve_step_data d = {.f = f, .sv = sv, .work = w};
  double flops = 0, integ = 0;
  return run_level(ctx, f, level, w->blocks, step, &d, &flops, &integ, 0);
}

static fea_status threads_forward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                        fea_multifrontal_solve *sv, int level) {
  return threads_solve_level(ctx, f, sv, level, forward_step, 1);
}

static fea_status threads_backward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                         fea_multifrontal_solve *sv, int level) {
  return threads_solve_level(ctx, f, sv, level, backward_step, 0);
}

const struct fea_multifrontal_ops fea_cpu_threads_multifrontal_ops = {
    .factor_level = threads_factor_level,
    .factor_below = threads_factor_below,
    .below_cut = threads_below_cut,
    .forward_level = threads_forward_level,
    .backward_level = threads_backward_level,
};
