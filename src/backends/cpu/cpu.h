/* Ops tables shared between the CPU backends. */
#ifndef FEA_BACKENDS_CPU_H
#define FEA_BACKENDS_CPU_H

#include "internal/backend.h"
#include "internal/multifrontal.h"
#include "disc/problem.h"

extern const struct fea_vector_ops fea_cpu_ref_vec_ops;
extern const struct fea_dense_ops fea_cpu_ref_dense_ops;
extern const struct fea_vector_ops fea_cpu_threads_vec_ops;
extern const struct fea_multifrontal_ops fea_cpu_ref_multifrontal_ops;
extern const struct fea_multifrontal_ops fea_cpu_threads_multifrontal_ops;

/* The CPU multifrontal code, in layers that call one way (each file calls
 * only files listed above it here, and the Schur pool):
 *   multifrontal-leaf.c          one leaf's element loop, the worker view
 *   multifrontal-sweep-work.c    the memory of one solve sweep
 *   multifrontal-node.c          one node's factor, forward and backward step
 *   multifrontal-leaf-batch.c    leaves integrated for a device backend
 *   multifrontal-level-walk.c    one level's bookkeeping; the serial levels
 *   multifrontal-subtree-walk.c  the subtrees below a cut
 *   multifrontal-ref-ops.c       the /cpu/ref ops table
 *   ../threads/multifrontal-threads.c  the /cpu/threads ops table */

/* What worker threads integrate leaves through (multifrontal-leaf.c): f
 * with its problem and space copied without a context, so that a failing
 * sigma or f raises into the worker's thread slot only, never into the
 * shared context's message or the user's log callback from several threads
 * at once (as the assembly strategies do, conc-run.c). Self-referential:
 * use it where it was made. */
typedef struct fea_cpu_multifrontal_worker_view {
  fea_space space;
  fea_problem problem;
  fea_multifrontal_factor f; /* shares every array of the original */
} fea_cpu_multifrontal_worker_view;

void fea_cpu_multifrontal_worker_view_init(fea_cpu_multifrontal_worker_view *w,
                                           const fea_multifrontal_factor *f);

/* The memory of one forward or backward sweep (multifrontal-sweep-work.c):
 * `blocks` work blocks, one per thread that runs nodes at once, the first
 * of the largest front's m x nrhs doubles, the others of team_front x nrhs
 * (the largest front the team's levels hold), each reused from node to
 * node; in the forward sweep also every non-root node's r x nrhs update
 * (ld r), which its parent reads, placed over its children's. */
typedef struct fea_cpu_multifrontal_sweep_work {
  fea_index nrhs;
  int blocks;
  size_t first;             /* doubles in block 0 */
  size_t stride;            /* doubles in each further block */
  double *block0;           /* block k > 0 at block0 + first + (k - 1) stride */
  double *updates;          /* forward sweeps; NULL in backward ones */
  const size_t *update_off; /* per node: its update at updates + update_off[n] nrhs */
} fea_cpu_multifrontal_sweep_work;

/* Thread k's block (k < w->blocks). */
static inline double *fea_cpu_multifrontal_sweep_block(const fea_cpu_multifrontal_sweep_work *w,
                                                       int k) {
  return k == 0 ? w->block0 : w->block0 + w->first + (size_t)(k - 1) * w->stride;
}

/* Non-root node n's r x nrhs update block (forward sweeps). */
static inline double *fea_cpu_multifrontal_sweep_update(const fea_cpu_multifrontal_sweep_work *w,
                                                        fea_index n) {
  return w->updates + w->update_off[n] * (size_t)w->nrhs;
}

/* The work of the sweep sv is in: set up by the sweep's first level, all
 * at once and before any node runs (FEA_ERR_OUT_OF_MEMORY with its size),
 * in sv->work (reused when the last sweep's is large enough), and found by
 * the later levels (sv->work_ready). The work the first level set up is the
 * sweep's: later levels use at most its w->blocks blocks. */
fea_status fea_cpu_multifrontal_sweep_work_get(fea_context *ctx, const fea_multifrontal_factor *f,
                                               fea_multifrontal_solve *sv, int blocks,
                                               fea_index team_front, int with_updates,
                                               const fea_cpu_multifrontal_sweep_work **out);

/* Multifrontal work on one node (multifrontal-node.c), shared by both CPU
 * backends. They touch only the node's own storage, its children's blocks
 * and the rows of its q DoFs, so nodes of one level may run concurrently.
 * fea_multifrontal_node_error (internal/multifrontal.h) is defined there
 * too. */
fea_status fea_cpu_multifrontal_factor_node(fea_context *ctx, fea_multifrontal_factor *f,
                                            fea_index n, double *flops, double *integrate_s);
/* The same with node n's r x r Schur block S given by the caller (NULL when
 * r is 0): the subtree walk's stack (multifrontal-subtree-walk.c). */
fea_status fea_cpu_multifrontal_factor_node_into(fea_context *ctx, fea_multifrontal_factor *f,
                                                 fea_index n, double *S, double *flops,
                                                 double *integrate_s);
/* Node n's step of the forward substitution in W (at least (q + r) x nrhs
 * doubles, the caller's and only its): its children's updates read from
 * the sweep's work, then its own written there. */
fea_status fea_cpu_multifrontal_forward_node(fea_context *ctx, const fea_multifrontal_factor *f,
                                             fea_multifrontal_solve *sv, fea_index n, double *W,
                                             const fea_cpu_multifrontal_sweep_work *work);
/* Node n's step of the backward substitution in Z ((q + r) x nrhs). */
fea_status fea_cpu_multifrontal_backward_node(fea_context *ctx, const fea_multifrontal_factor *f,
                                              fea_multifrontal_solve *sv, fea_index n, double *Z);

/* The level walk (multifrontal-level-walk.c). Before a level: its nodes'
 * Schur blocks (f->schur_pool). Serial. */
fea_status fea_cpu_multifrontal_level_start(fea_context *ctx, fea_multifrontal_factor *f,
                                            int level);
/* After a level: free its children's Schur blocks; after level 0, add the
 * leaves' loads into f->load. Serial. */
void fea_cpu_multifrontal_level_done(fea_multifrontal_factor *f, int level);
/* One level of each sweep, node after node on the calling thread (the
 * /cpu/ref ops of the same names, fea_multifrontal_ops). */
fea_status fea_cpu_multifrontal_factor_level(fea_context *ctx, fea_multifrontal_factor *f,
                                             int level);
fea_status fea_cpu_multifrontal_forward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                              fea_multifrontal_solve *sv, int level);
fea_status fea_cpu_multifrontal_backward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                               fea_multifrontal_solve *sv, int level);

/* The Schur blocks of the CPU backends in groups (multifrontal-schur-pool.c):
 * the nodes of one level whose parents share a level, one allocation each,
 * made at the level's start and freed after the parents' level (the root's
 * at release). */
fea_status fea_cpu_multifrontal_schur_pool_create(fea_context *ctx, const struct fea_etree *t,
                                                  fea_multifrontal_schur_pool **out);
void fea_cpu_multifrontal_schur_pool_free(fea_multifrontal_schur_pool *p);
fea_status fea_cpu_multifrontal_schur_pool_level_start(fea_context *ctx,
                                                       fea_multifrontal_schur_pool *p, int level);
/* Before a subtree walk below level `cut`: the groups born at or below the
 * cut whose blocks are read above it (the subtree roots'), and the root's. */
fea_status fea_cpu_multifrontal_schur_pool_start_above(fea_context *ctx,
                                                       fea_multifrontal_schur_pool *p, int cut);
/* Node n's r x r block while its group is alive (r > 0), else NULL. */
double *fea_cpu_multifrontal_schur_pool_block(const fea_multifrontal_schur_pool *p, fea_index n);
void fea_cpu_multifrontal_schur_pool_level_done(fea_multifrontal_schur_pool *p, int level);

/* Factor every node at or below tree level `cut` (multifrontal-subtree-walk.c):
 * the subtrees whose roots' parents lie above the cut, each walked in
 * post-order by one of `team` threads with one-thread BLAS, the Schur
 * blocks on a stack per thread (the roots' from the pool). Leaves f as the
 * level walk of levels 0 .. cut leaves it (loads summed, blocks below the
 * cut released, flops and integration time added) and writes each of those
 * levels' node time, summed over the threads and divided by the team, into
 * level_s[0 .. cut]. A failing node: the lowest (level, index) one is
 * reported, as the level walk reports it. */
fea_status fea_cpu_multifrontal_factor_subtrees(fea_context *ctx, fea_multifrontal_factor *f,
                                                int cut, int team, double *level_s);

/* Values of one vector element size. */
size_t fea_cpu_elem_size(fea_precision prec);
/* The memory budget's check for a host vector of v->n entries (vector-ref.c). */
fea_status fea_cpu_vector_require(fea_context *ctx, const fea_vector *v);

#endif
