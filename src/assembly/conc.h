/* Concurrent-update strategies of the element-parallel assembly
 * (docs/assembly.md): one translation unit per strategy behind one small ops
 * table, indexed by fea_update_strategy.
 *
 * Every strategy runs the job's per-element work, which turns an element
 * into a list of updates "target[idx] += v" tagged with the free row they
 * belong to. Assembly (work NULL, conc-element.c) integrates the element; its
 * target is one array of doubles: the matrix values (CSR positions or dense
 * r*ld+c) followed by the right-hand side, so one index space covers both and
 * a lock stripe or a transaction never needs to know which it touches.
 * Matrix-free operator application (src/matfree/operator-matfree.c) multiplies
 * the element matrix with the gathered input; its target is the full-DoF
 * output vector. What differs between strategies is only how the lists are
 * applied and in which order, by which thread, the elements are visited. */
#ifndef FEA_CONC_H
#define FEA_CONC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <feaccel/assembly.h>
#include <feaccel/matrix.h>
#include <feaccel/types.h>

#include "disc/problem.h"

/* Per-thread counters, summed into fea_assembly_stats after the run. Padded
 * to a cache line so threads do not share one. */
typedef struct fea_conc_counters {
  uint64_t updates, retries, aborts_conflict, aborts_capacity, aborts_explicit, aborts_other;
  uint64_t tx_started, tx_committed, tx_fallback, lock_contended, elements;
  char pad[64 - (11 * 8) % 64];
} fea_conc_counters;

/* Knobs of one run (from fea_assembly_desc, plus what benchmarks and tests set). */
typedef struct fea_conc_config {
  int threads;                       /* requested; the region may get fewer */
  int lock_stripe;                   /* MUTEX: consecutive entries per lock */
  int spin;                          /* MUTEX: atomic_flag spin locks instead of pthread mutexes */
  int tsx_batch;                     /* TSX: updates per transaction */
  int tsx_retries;                   /* TSX: attempts before the fallback lock */
  int backoff;                       /* CAS, TSX: randomized exponential backoff */
  int tsx_force_abort;               /* TSX test hook: every transaction aborts without xbegin */
  int work_flops;                    /* benchmarks: artificial flops per element */
  const double *const_Ke, *const_fe; /* benchmarks: one element system for all (no integration) */
} fea_conc_config;

struct fea_conc_worker;

/* Per-element work other than assembly's (which is what a NULL work runs).
 * init allocates the worker's update list (idx, row, val) and whatever it
 * keeps in w->ext, and returns 1, or records the failure on the job and
 * returns 0; fini releases ext (the list is freed by fea_conc_worker_free).
 * element fills the list for element seq[k] (k itself when seq is NULL) and
 * returns 1, or records a failure and returns 0. seq[k + 1 .. end) are the
 * elements this thread visits next in the same pass (a hint, for kernels
 * that work on batches of elements; a strategy may skip some of them).
 * With w->direct set the hint is a promise: no other thread visits those
 * elements in this pass (for the rows this worker may add into), and the
 * ones this thread skips have no such row; the work may then apply the
 * updates of seq[k .. end) up to its batch at once, in that order. */
typedef struct fea_conc_work {
  int (*init)(struct fea_conc_worker *w);
  void (*fini)(struct fea_conc_worker *w);
  int (*element)(struct fea_conc_worker *w, const fea_index *seq, fea_index k, fea_index end);
} fea_conc_work;

/* What strategies precompute from the mesh, kept across runs by a job that
 * runs the same loops many times (operator application); assembly leaves the
 * job's plan NULL and each run computes its own. */
typedef struct fea_conc_plan {
  fea_update_strategy strategy;
  fea_index *color_order, *color_start; /* COLORING: fea_conc_color_order */
  int ncolors;
  int *owner; /* PRIVATE_BUFFERS: see conc-privbuf.c */
  fea_index *first, *last;
  /* PRIVATE_BUFFERS, per element: b where every DoF is a free row of block
   * b; -(b + 2) where its free rows are all b's but a DoF is Dirichlet; -1
   * where its free rows have several owners or there are none. */
  int *elem_block;
  int blocks;
} fea_conc_plan;

/* One assembly or one operator application. */
typedef struct fea_conc_job {
  /* The problem and its space as the threads see them: shallow copies with
   * the context cleared, so that an element failing in several threads at
   * once writes only thread-local messages (a context's message slot is not
   * meant for concurrent writers); fea_conc_run reports the first one on ctx. */
  fea_problem pb_copy;
  fea_space space_copy;
  const fea_problem *pb;  /* &pb_copy */
  const fea_space *space; /* the real space (colorings), ctx included */
  fea_context *ctx;       /* where errors are reported */
  const fea_index *edofs; /* element-DoF table, ne x nb */
  fea_index ne;
  int nb;
  /* Target: matrix part then the right-hand side at rhs_offset. */
  const fea_index *row_ptr, *col_idx; /* CSR pattern; NULL for a dense target */
  fea_index ld;                       /* dense leading dimension */
  double *target;
  fea_index rhs_offset, target_len;
  const fea_index *order; /* element visiting order for loops that honour one, or NULL */
  fea_conc_config cfg;
  const fea_conc_work *work; /* NULL: assembly (fea_conc_element) */
  const void *work_arg;      /* the work's input, read-only during a run */
  const fea_conc_plan *plan; /* precomputed for this strategy and thread count, or NULL */
  /* Threads the run's regions start, 1 .. cfg.threads (0: cfg.threads):
   * fewer where other processes hold cores (operator application, from
   * thread-budget.h). The plan and the counters stay cfg.threads' and the
   * work is dealt over the team, so that the result does not depend on it. */
  int team;
  /* Outcome, shared by the threads: the first failure wins. */
  atomic_int failed;
  fea_status status;
  fea_index failed_element;
  char message[512];
  int colors;       /* COLORING reports its color count here */
  atomic_uint sync; /* fea_conc_sync's atomic */
  int threads_run;
} fea_conc_job;

/* A thread's element workspace and its update list. */
typedef struct fea_conc_worker {
  void *ext; /* the job's work's own workspace (NULL for assembly) */
  fea_conc_job *job;
  fea_element_values ev;
  double *Ke, *fe;
  fea_index *idx; /* target positions, nb^2 + nb^2 (matrix, then rhs incl. lifting) */
  fea_index *row; /* the free row of each update */
  double *val;
  int n;       /* updates in the list */
  int ok;      /* the workspace was allocated */
  double sink; /* keeps the artificial work observable */
  fea_conc_counters *ctr;
  /* Direct updates, set by the strategy after fea_conc_worker_init: when
   * direct is 1, the strategy's updates need no protection and the hint of
   * each visit is a promise (see fea_conc_work), so a work may add its
   * updates into the target itself, for a whole batch of elements at once,
   * and leave the list empty. It adds only rows r with owner == NULL or
   * owner[r] == blk (PRIVATE_BUFFERS' ownership); a pass of another blk
   * starts afresh. Assembly ignores them. */
  int direct;
  int blk;
  const int *owner;
  /* Direct updates: after a visit, how many of the elements that follow it
   * in the pass the work has already served with it (a batch); the loop
   * may skip them (it may also visit them, one after the other in the
   * pass's order: the work then does nothing). The loops reset it after
   * reading it. */
  fea_index served;
} fea_conc_worker;

/* Prepare a worker (counters: this thread's slot). Failure is recorded on the
 * job (and ok left 0) so the thread can still take part in barriers. */
void fea_conc_worker_init(fea_conc_worker *w, fea_conc_job *job, fea_conc_counters *ctr);
void fea_conc_worker_free(fea_conc_worker *w);

/* Integrate element e into the worker's update list, in the reference
 * assembly's order (row by row; per row the load, then the lifting terms).
 * Returns 0 and records the failure on the job when it fails. */
int fea_conc_element(fea_conc_worker *w, fea_index e);

/* The per-element step every strategy loop calls: element seq[k] (k when
 * seq is NULL) of a pass that runs up to end, through the job's work. */
static inline int fea_conc_visit(fea_conc_worker *w, const fea_index *seq, fea_index k,
                                 fea_index end) {
  const fea_conc_work *work = w->job->work;
  if (work) return work->element(w, seq, k, end);
  return fea_conc_element(w, seq ? seq[k] : k);
}

/* Build the plan of strategy s (COLORING, PRIVATE_BUFFERS; nothing for the
 * others) for `threads` threads; errors are raised on job->ctx. */
fea_status fea_conc_plan_build(const fea_conc_job *job, fea_update_strategy s, int threads,
                               fea_conc_plan *plan);
void fea_conc_plan_free(fea_conc_plan *plan);

/* The team of a run's regions (fea_conc_job.team). */
static inline int fea_conc_team(const fea_conc_job *job) {
  return job->team >= 1 && job->team < job->cfg.threads ? job->team : job->cfg.threads;
}

/* Whether some thread failed (cheap: checked once per element). */
static inline int fea_conc_failed(fea_conc_job *job) {
  return atomic_load_explicit(&job->failed, memory_order_relaxed);
}
/* Record a failure (first one wins) with the calling thread's last message. */
void fea_conc_fail(fea_conc_job *job, fea_status st, fea_index e);

/* Randomized exponential backoff after the k-th consecutive failure: a pause
 * loop of a random length below 2^min(k + 2, 12) iterations. */
void fea_conc_backoff(uint64_t *rng, int k);

/* target += v on the 64-bit pattern of a double by compare-and-swap; a
 * failed exchange counts a retry and, with backoff, pauses. Shared by the
 * ATOMIC_CAS strategy and the update microbenchmark. */
static inline void fea_conc_cas_add(_Atomic uint64_t *p, double v, int backoff, uint64_t *rng,
                                    fea_conc_counters *ctr) {
  uint64_t old = atomic_load_explicit(p, memory_order_relaxed);
  for (int k = 0;; k++) {
    double d;
    memcpy(&d, &old, sizeof d);
    d += v;
    uint64_t next;
    memcpy(&next, &d, sizeof next);
    if (atomic_compare_exchange_weak_explicit(p, &old, next, memory_order_relaxed,
                                              memory_order_relaxed))
      return;
    ctr->retries++; /* old now holds what the other thread wrote */
    if (backoff) fea_conc_backoff(rng, k);
  }
}

/* A strategy. run() visits every element, applies its updates, and fills
 * the per-thread counters (threads_max slots). */
struct fea_update_ops {
  const char *name;
  fea_update_strategy strategy;
  /* 1 if it can run here, else 0 with a sentence in reason; NULL: always. */
  int (*available)(const fea_conc_config *cfg, char *reason, size_t len);
  /* Setup failures (no memory for locks or colors) return an error raised
   * on job->ctx; element failures are recorded on the job. */
  fea_status (*run)(fea_conc_job *job, fea_conc_counters *ctr, int threads_max);
};

extern const struct fea_update_ops fea_update_serial;
extern const struct fea_update_ops fea_update_coloring;
extern const struct fea_update_ops fea_update_atomic_cas;
extern const struct fea_update_ops fea_update_mutex;
extern const struct fea_update_ops fea_update_privbuf;
extern const struct fea_update_ops fea_update_tsx;
extern const struct fea_update_ops fea_update_privcopy;

/* PRIVATE_COPIES' memory, team - 1 copies of the target, against the
 * context's budget: FEA_ERR_OUT_OF_MEMORY naming both (conc-privcopy.c). */
fea_status fea_conc_privcopy_require(const fea_conc_job *job, int team);

/* The table, indexed by strategy (AUTO excluded). */
const struct fea_update_ops *fea_update_ops_get(fea_update_strategy s);

/* CPUID: RTM present and not always aborting (conc-tsx.c). */
int fea_tsx_cpu_usable(char *reason, size_t len);

/* The elements sorted by color (stable) and each color's start (ncolors + 1
 * entries), from fea_space_color_elements(AUTO) (conc-coloring.c). */
fea_status fea_conc_color_order(const fea_space *s, fea_index **order, fea_index **start,
                                int *ncolors);

/* PRIVATE_BUFFERS' ownership for `threads` blocks: fills the whole plan
 * (conc-privbuf.c). */
fea_status fea_conc_privbuf_plan(const fea_conc_job *job, int threads, fea_conc_plan *plan);

/* Fraction of the elements PRIVATE_BUFFERS integrates a second time with
 * the ownership plan (conc-privbuf.c). */
double fea_conc_privbuf_overlap(const fea_conc_job *job, const fea_conc_plan *plan);

/* TSX update path without the element loop, for the microbenchmarks:
 * apply n updates in batches of `batch` transactions (conc-tsx.c). */
void *fea_conc_tsx_state_create(double *t, int batch, int retries, int backoff, int forced);
void fea_conc_tsx_apply(void *state, int n, const fea_index *idx, const double *v, uint64_t *rng,
                        fea_conc_counters *c);
void fea_conc_tsx_state_destroy(void *state);

/* AUTO's pick for this job and thread count (conc-auto.c). With plan not
 * NULL it receives the pick's plan where the pick built it on the way
 * (PRIVATE_BUFFERS' ownership), else an empty plan of strategy AUTO: build
 * one with fea_conc_plan_build where plan->strategy is not the pick. */
fea_update_strategy fea_conc_auto_pick(const fea_conc_job *job, int threads, fea_conc_plan *plan);

/* Fill the job's problem view from pb (see pb_copy); target fields are the caller's. */
void fea_conc_job_init(fea_conc_job *job, const fea_problem *pb, const fea_index *edofs);

/* target[idx] += v for the worker's list, unprotected (SERIAL, COLORING). */
static inline void fea_conc_apply_plain(double *t, const fea_conc_worker *w) {
  for (int k = 0; k < w->n; k++) t[w->idx[k]] += w->val[k];
}

/* Pause inside a spin loop (x86 PAUSE; nothing elsewhere). */
static inline void fea_conc_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Happens-before edges that ThreadSanitizer can see. GCC's libgomp is not
 * TSan-instrumented, so TSan does not know that a fork, a barrier or a join
 * orders memory and would report the accesses on either side as races. An
 * acq_rel read-modify-write of one shared atomic by every thread on each side
 * of those points makes the ordering explicit: RMWs of one atomic are totally
 * ordered and each acquires the releases before it. The cost is a few
 * atomics per parallel region and per color, nothing per update. Call it in
 * the master before and after a region, in every thread at the region's
 * start and end, and around barriers (FEA_CONC_BARRIER). */
static inline void fea_conc_sync(atomic_uint *s) {
  atomic_fetch_add_explicit(s, 1u, memory_order_acq_rel);
}
#define FEA_CONC_BARRIER(s)                  \
  do {                                       \
    fea_conc_sync(s);                        \
    _Pragma("omp barrier") fea_conc_sync(s); \
  } while (0)

/* Run strategy s on a job whose target is zeroed: validates nothing (the
 * caller did), clears the job's outcome, sums counters into stats. */
fea_status fea_conc_run(fea_conc_job *job, fea_update_strategy s, fea_assembly_stats *stats);

/* The assembly entry points with a run configuration instead of a public
 * descriptor (src/interface/api-assembly.c): what fea_problem_assemble[_dense]
 * call after reading the descriptor, and what the benchmarks and tests call
 * to set the knobs the public API does not have (artificial work, forced
 * aborts). The problem and A are not checked for NULL. */
fea_status fea_conc_assemble_csr(const fea_problem *problem, fea_matrix *A, double *b,
                                 fea_update_strategy s, const fea_conc_config *cfg,
                                 fea_assembly_stats *stats);
fea_status fea_conc_assemble_dense(const fea_problem *problem, double *A_dense, fea_index ld,
                                   double *b, fea_update_strategy s, const fea_conc_config *cfg,
                                   fea_assembly_stats *stats);

#endif
