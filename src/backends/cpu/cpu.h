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

/* Multifrontal work on one node (multifrontal-ref.c), shared by both CPU backends.
 * They touch only the node's own storage, its children's blocks and the
 * rows of its q DoFs, so nodes of one level may run concurrently. */
fea_status fea_multifrontal_cpu_factor_node(fea_context *ctx, fea_multifrontal_factor *f,
                                            fea_index n, double *flops, double *integrate_s);
/* The same with node n's r x r Schur block S given by the caller (NULL when
 * r is 0): the subtree walk's stack (multifrontal-subtrees.c). */
fea_status fea_multifrontal_cpu_factor_node_into(fea_context *ctx, fea_multifrontal_factor *f,
                                                 fea_index n, double *S, double *flops,
                                                 double *integrate_s);
fea_status fea_multifrontal_cpu_forward_node(fea_context *ctx, const fea_multifrontal_factor *f,
                                             fea_multifrontal_solve *sv, fea_index n);
fea_status fea_multifrontal_cpu_backward_node(fea_context *ctx, const fea_multifrontal_factor *f,
                                              fea_multifrontal_solve *sv, fea_index n);
/* Before a level: its nodes' Schur blocks (f->schur_pool). Serial. */
fea_status fea_multifrontal_cpu_level_start(fea_context *ctx, fea_multifrontal_factor *f,
                                            int level);
/* After a level: free its children's Schur blocks; after level 0, add the
 * leaves' loads into f->load. Serial. */
void fea_multifrontal_cpu_level_done(fea_multifrontal_factor *f, int level);

/* The Schur blocks of the CPU backends in groups (multifrontal-schur-pool.c):
 * the nodes of one level whose parents share a level, one allocation each,
 * made at the level's start and freed after the parents' level (the root's
 * at release). */
fea_status fea_multifrontal_schur_pool_create(fea_context *ctx, const struct fea_etree *t,
                                              fea_multifrontal_schur_pool **out);
void fea_multifrontal_schur_pool_free(fea_multifrontal_schur_pool *p);
fea_status fea_multifrontal_schur_pool_level_start(fea_context *ctx, fea_multifrontal_schur_pool *p,
                                                   int level);
/* Before a subtree walk below level `cut`: the groups born at or below the
 * cut whose blocks are read above it (the subtree roots'), and the root's. */
fea_status fea_multifrontal_schur_pool_start_above(fea_context *ctx, fea_multifrontal_schur_pool *p,
                                                   int cut);
/* Node n's r x r block while its group is alive (r > 0), else NULL. */
double *fea_multifrontal_schur_pool_block(const fea_multifrontal_schur_pool *p, fea_index n);
void fea_multifrontal_schur_pool_level_done(fea_multifrontal_schur_pool *p, int level);

/* What worker threads integrate leaves through: f with its problem and
 * space copied without a context, so that a failing sigma or f raises into
 * the worker's thread slot only, never into the shared context's message or
 * the user's log callback from several threads at once (as the assembly
 * strategies do, conc-run.c). Self-referential: use it where it was made. */
typedef struct fea_multifrontal_worker_view {
  fea_space space;
  fea_problem problem;
  fea_multifrontal_factor f; /* shares every array of the original */
} fea_multifrontal_worker_view;

void fea_multifrontal_worker_view_init(fea_multifrontal_worker_view *w,
                                       const fea_multifrontal_factor *f);

/* Factor every node at or below tree level `cut` (multifrontal-subtrees.c):
 * the subtrees whose roots' parents lie above the cut, each walked in
 * post-order by one of `team` threads with one-thread BLAS, the Schur
 * blocks on a stack per thread (the roots' from the pool). Leaves f as the
 * level walk of levels 0 .. cut leaves it (loads summed, blocks below the
 * cut released, flops and integration time added) and writes each of those
 * levels' node time, summed over the threads and divided by the team, into
 * level_s[0 .. cut]. A failing node: the lowest (level, index) one is
 * reported, as the level walk reports it. */
fea_status fea_multifrontal_cpu_factor_subtrees(fea_context *ctx, fea_multifrontal_factor *f,
                                                int cut, int team, double *level_s);

/* Values of one vector element size. */
size_t fea_cpu_elem_size(fea_precision prec);
/* The memory budget's check for a host vector of v->n entries (vector-ref.c). */
fea_status fea_cpu_vector_require(fea_context *ctx, const fea_vector *v);

#endif
