/* The numeric phase of the IGA multifrontal solver as a backend ops table:
 * the solver kind (src/multifrontal/multifrontal-solver-kind.c) walks the levels of the elimination
 * tree (src/internal/etree.h) and hands each level to the backend, which
 * does the numeric work of all its nodes (front assembly with the element
 * integration fused into the leaves, partial Cholesky, Schur update; forward
 * and backward substitution). A backend replaces whole levels, so a GPU can
 * batch a level's fronts; missing slots come from /cpu/ref.
 *
 * Front layout (every backend): node n's front is split in two pieces of
 * storage. Its first q columns, the (q + r) x q panel [A11; A21] with
 * leading dimension q + r, live in the factor storage at factor_off and
 * become [L11; L21] in place; its last r columns are only needed below the
 * diagonal, as the r x r Schur block (leading dimension r), which becomes the
 * Schur complement S = A22 - L21 L21^T passed to the parent. Only lower
 * triangles are stored and read. */
#ifndef FEA_INTERNAL_MULTIFRONTAL_H
#define FEA_INTERNAL_MULTIFRONTAL_H

#include <stdint.h>

#include <feaccel/types.h>

#include "private-export.h"

struct fea_etree;
struct fea_problem;
typedef struct fea_multifrontal_schur_pool fea_multifrontal_schur_pool;

/* One factorization: the tree, the problem it integrates, and the storage. */
typedef struct fea_multifrontal_factor {
  const struct fea_etree *tree;
  const struct fea_problem *problem;
  double *panels; /* tree->factor_entries: every node's [L11; L21] */
  double **schur; /* per node: its r x r Schur block while alive, else NULL */
  fea_multifrontal_schur_pool *schur_pool; /* CPU backends: where those blocks live */
  double **leaf_load; /* per leaf, during level 0: the q + r load entries of its elements */
  double *load;       /* tree->num_dofs: the problem's load with Dirichlet lifting */
  double flops;       /* counted from the BLAS calls issued */
  double integrate_s; /* element integration time (summed over threads) */
  /* Device backends: their own state (factors on the device); the CPU
   * backends leave it NULL (their Schur blocks are in schur_pool). The host fields above keep their meaning for the
   * interface: after the last level f->load holds the load, f->flops and
   * f->integrate_s are set, and with keep_boundary f->schur[root] is a host
   * copy of the root's Schur block. */
  void *backend;
  uint64_t device_bytes; /* device memory the factorization reserved (0 on the CPU) */
  /* Per node with q > 0, 2 doubles owned by the solver kind: the smallest
   * and the largest pivot d_j = L_jj^2 of its q columns, folded by
   * fea_multifrontal_pivots_merge. Every backend fills them as it factors
   * (the CPU right after each potrf, on the diagonal still in cache; a
   * device backend in device memory, copied here once after the last
   * level); the solver kind reduces them over the tree and applies the
   * accuracy rule (src/multifrontal/multifrontal-accuracy.c). */
  double *pivots;
} fea_multifrontal_factor;

/* The pivot range {lo, hi} of a set of pivots, empty as {+inf, -inf}:
 * merge {blo, bhi} into it. A NaN is kept in lo once there (it is what a
 * report must name; OpenBLAS's potrf lets a NaN pivot through) and never
 * taken into hi. A single pivot d merges as {d, d}. The one reduction of
 * every backend: the CPU node code, the reduction over the tree and the
 * /gpu/cuda kernel (cuda/kernels/multifrontal.cu includes this header for
 * it). */
#if defined(__CUDACC__)
#define FEA_MULTIFRONTAL_HD __host__ __device__
#else
#define FEA_MULTIFRONTAL_HD
#endif
static inline FEA_MULTIFRONTAL_HD void fea_multifrontal_pivots_merge(double *lo, double *hi,
                                                                     double blo, double bhi) {
  if (*lo == *lo && !(blo >= *lo)) *lo = blo; /* blo below, or NaN */
  if (bhi > *hi) *hi = bhi;
}

/* One solve of nrhs right-hand sides in the tree's numbering (host memory). */
typedef struct fea_multifrontal_solve {
  fea_index nrhs;
  double *y; /* num_dofs x nrhs (ld num_dofs): in the RHS, out the solution */
  /* The backend's host memory for the sweeps (the CPU backends: work
   * blocks and the forward updates). work_ready is 0 when a sweep starts;
   * its first level sets it up, reusing work when work_bytes suffice, else
   * freeing it and allocating anew (aligned_alloc), and sets work_ready.
   * The solver keeps work across sweeps and solves, so pages stay mapped,
   * and frees it (free()) when it resets or is destroyed. */
  void *work;
  size_t work_bytes;
  int work_ready;
  double transfer_s; /* device backends add the time of their copies of y here */
} fea_multifrontal_solve;

struct fea_multifrontal_ops {
  /* Allocate f->panels, f->schur, f->leaf_load (zeroed) and f->load; the
   * caller has checked the memory estimate. */
  fea_status (*factor_alloc)(fea_context *ctx, fea_multifrontal_factor *f);
  void (*factor_release)(fea_context *ctx, fea_multifrontal_factor *f);
  /* Factor every node of level `level` (all lower levels are done): assemble
   * the front (leaves integrate their elements, others extend-add their
   * children's Schur blocks), potrf, trsm, syrk; then free the children's
   * Schur blocks. After level 0 f->load holds the problem's load.
   * FEA_ERR_NOT_POSDEF names the node (index, level, element box). */
  fea_status (*factor_level)(fea_context *ctx, fea_multifrontal_factor *f, int level);
  /* Forward substitution L y = b over one level, leaves first. At the root
   * (the last level) its r rows of y, a kept boundary, receive the
   * condensed right-hand side b_B - L_BI y_I (multipatch solvers read it). */
  fea_status (*forward_level)(fea_context *ctx, const fea_multifrontal_factor *f,
                              fea_multifrontal_solve *sv, int level);
  /* Backward substitution L^T x = y over one level, root first. */
  fea_status (*backward_level)(fea_context *ctx, const fea_multifrontal_factor *f,
                               fea_multifrontal_solve *sv, int level);
  /* Optional, before the first factor_level: factor the levels 0 .. *cut in
   * one call, as factor_level on each of them would (the CPU backends walk
   * subtrees, cpu.h), with each level's time in level_s[0 .. *cut]; *cut is
   * the highest level done, -1 when it did none. */
  fea_status (*factor_below)(fea_context *ctx, fea_multifrontal_factor *f, int *cut,
                             double *level_s);
  /* Optional, with factor_below: the cut factor_below will take on ctx for
   * tree t (-1: none) and the most workers that walk below it (*team), so
   * that the memory guard checks the walk that will run
   * (fea_etree_walk_peak) rather than the level walk's larger figure. */
  int (*below_cut)(const fea_context *ctx, const struct fea_etree *t, int *team);
};

/* Host helpers shared by every backend (src/backends/cpu/ref/multifrontal-leaf.c,
 * multifrontal-node.c and multifrontal-leaf-batch.c). */

/* Integrate the elements of leaf n into its front: P (the (q + r) x q panel,
 * ld q + r) and S (the r x r Schur block, ld r, lower triangle), which the
 * caller has zeroed, and the leaf's q + r load entries into load (zeroed).
 * The element work time goes to *integrate_s. Thread-safe across leaves. */
fea_status fea_multifrontal_assemble_leaf(fea_context *ctx, const fea_multifrontal_factor *f,
                                          fea_index n, double *P, double *S, double *load,
                                          double *integrate_s);

/* Element records, from which a device integrates the leaves' stiffness
 * itself: per element, in leaf order, the nq stiffness weights W (w sigma at
 * point a + m0 (b + m1 c)), then for each of the three directions k, m[k]
 * rows of n[k] basis values and n[k] physical derivatives at the 1D points
 * (directions beyond dim: one row {1, 0}). A record is O(nq) doubles where
 * the element matrix is O(nb^2), and the leaf front it adds into O(r^2). */
typedef struct fea_multifrontal_leaf_shape {
  int n[3], m[3]; /* functions and 1D rule points per direction (1 beyond dim) */
  int nb, nq;     /* functions and rule points per element */
  int rec_len;    /* doubles per element record */
} fea_multifrontal_leaf_shape;

/* 1 and *shape when f's leaves can be integrated from records: B-splines on
 * the box (no geometry map) under a tensor rule, sigma scalar, no reaction,
 * no Robin side, no user element form; else 0. */
FEA_PRIVATE_EXPORT int fea_multifrontal_leaf_shape_of(const fea_multifrontal_factor *f,
                                                      fea_multifrontal_leaf_shape *shape);

/* Leaf n's element records at rec (rec_len doubles per element, in the
 * element order of fea_multifrontal_assemble_leaf) and its q + r load
 * entries into load (zeroed by the caller), lifted by the Dirichlet values
 * as fea_multifrontal_assemble_leaf lifts them. Thread-safe across leaves. */
fea_status fea_multifrontal_leaf_records(fea_context *ctx, const fea_multifrontal_factor *f,
                                         fea_index n, const fea_multifrontal_leaf_shape *shape,
                                         double *rec, double *load, double *integrate_s);

/* Integrate the leaves nodes[0 .. count) on nthreads host threads (the
 * problem's forms run on context-less copies, as /cpu/threads runs them).
 * Without records: leaf k's panel goes to values + value_off[k] and its
 * Schur block right after it, both zeroed here. With records (a shape from
 * fea_multifrontal_leaf_shape_of): leaf k's element records go there. Their
 * loads go through load_scratch (at least the sum of the leaves' q + r
 * doubles) and are added into f->load leaf by leaf in the given order, so
 * the sum does not depend on nthreads. The element work time, summed over
 * the threads, goes to f->integrate_s. On failure the smallest failing node
 * is named. */
FEA_PRIVATE_EXPORT fea_status fea_multifrontal_assemble_leaves(
    fea_context *ctx, fea_multifrontal_factor *f, const fea_index *nodes, fea_index count,
    const fea_multifrontal_leaf_shape *records, double *values, const size_t *value_off,
    double *load_scratch, int nthreads);

/* The error of node n failing with st for the reason why (another message):
 * names the node, its level, element box, q and r. */
FEA_PRIVATE_EXPORT fea_status fea_multifrontal_node_error(fea_context *ctx,
                                                          const fea_multifrontal_factor *f,
                                                          fea_index n, fea_status st,
                                                          const char *why);

#endif
