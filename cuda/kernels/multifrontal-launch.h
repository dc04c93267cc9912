/* Launchers of the multifrontal kernels (kernels/multifrontal.cu), callable
 * from cuda/multifrontal-cuda.c. The descriptors are built on the host, uploaded in one
 * copy per batch, and read by the kernels; every pointer in them is a device
 * pointer. Storage follows src/internal/multifrontal.h: node n's front is its
 * (q + r) x q panel P (ld q + r) and its r x r Schur block S (ld r); only
 * lower triangles are read.
 *
 * Every kernel runs one thread block per front (extend-add: several, on
 * distinct entries), and a block touches only its own front's storage (and,
 * read-only, its children's), so fronts of one batch never race; inside a
 * block the steps are separated by __syncthreads(). Each launcher returns the cudaError_t of the launch as an
 * int; count == 0 launches nothing and succeeds. */
#ifndef FEA_CUDA_MULTIFRONTAL_LAUNCH_H
#define FEA_CUDA_MULTIFRONTAL_LAUNCH_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A front of a factorization batch. */
typedef struct fea_cuda_multifrontal_front {
  double *P; /* panel [A11; A21], (q + r) x q, ld q + r */
  double *S; /* Schur block, r x r, ld r; NULL when r == 0 */
  int64_t q, r;
  int64_t child_begin; /* into the batch's children */
  int64_t num_children;
  int64_t src;        /* leaves: offset (doubles) of the host-assembled panel, then the
                           Schur block, in the batch's values (or of the leaf's
                           element records); -1 otherwise */
  int64_t info;       /* index into the level's info array */
  int64_t elems;      /* leaves integrated from records: their element count */
  const int32_t *map; /* ... and their elems x nb front positions (-1: not in the front) */
  int64_t node;       /* the tree node: its slot in the pivot ranges */
} fea_cuda_multifrontal_front;

/* The shape of element records (src/internal/multifrontal.h,
 * fea_multifrontal_leaf_shape): per element the nq weights W, then per
 * direction k m[k] rows of n[k] values and n[k] derivatives. */
typedef struct fea_cuda_leaf_shape {
  int n[3], m[3];
  int nb, nq, rec_len;
} fea_cuda_leaf_shape;

/* A front of a solve level. */
typedef struct fea_cuda_multifrontal_sfront {
  const double *P;     /* the factored panel [L11; L21], ld q + r */
  double *W;           /* (q + r) x nrhs work block, ld q + r */
  const int64_t *dofs; /* the front's q + r tree DoFs */
  int64_t q, r;
  int64_t child_begin;
  int64_t num_children;
} fea_cuda_multifrontal_sfront;

/* A child of a front: its Schur block (factorization) or its work block
 * (forward substitution, rows q .. q + r passed up), and its extend-add map. */
typedef struct fea_cuda_multifrontal_child {
  const double *data; /* factor: r x r, ld r; solve: (q + r) x nrhs, ld q + r */
  const int32_t *map; /* r entries: the rows in the parent's front */
  int64_t q, r;
} fea_cuda_multifrontal_child;

/* Leaves: copy each front's panel and Schur block from values + src. */
int fea_cuda_multifrontal_scatter_leaves(const fea_cuda_multifrontal_front *fronts, int64_t count,
                                         const double *values, cudaStream_t stream);

/* Leaves from element records: zero each front's panel and Schur block,
 * then add each element's stiffness K_ij = sum_q W_q grad phi_i . grad phi_j,
 * computed from the record's 1D factors, at front positions (map[i],
 * map[j]) wherever both are >= 0 and map[i] >= map[j] (the lower triangle,
 * each pair once, as /cpu/ref adds it). One block per leaf, its elements in
 * order, so every entry is the same sum in the same order as on the host
 * up to the rounding of K_ij itself. The record and map of the element in
 * hand sit in shared memory: fea_cuda_multifrontal_leaf_smem bytes, which
 * the caller keeps within the default 48 KiB. */
int fea_cuda_multifrontal_integrate_leaves(const fea_cuda_multifrontal_front *fronts, int64_t count,
                                           const double *records, const fea_cuda_leaf_shape *shape,
                                           cudaStream_t stream);
size_t fea_cuda_multifrontal_leaf_smem(const fea_cuda_leaf_shape *shape);

/* Add the children's Schur blocks (lower triangles) into each front, children
 * in order (the same additions, in the same order, as /cpu/ref): one launch
 * per child slot 0 .. max_children - 1, each spread over the entries of the
 * child (max_child_entries: the largest r^2 among them). The front's storage
 * must be zero before. */
int fea_cuda_multifrontal_extend_add(const fea_cuda_multifrontal_front *fronts, int64_t count,
                                     const fea_cuda_multifrontal_child *children,
                                     int64_t max_children, int64_t max_child_entries,
                                     cudaStream_t stream);

/* Partial Cholesky of the panels of fronts[list[0 .. count)]: L11 L11^T = A11,
 * L21 = A21 L11^-T, in place (right-looking, unblocked: meant for small q).
 * A non-positive (or NaN) pivot k stops that front and sets
 * info[front.info] = k + 1. The Schur update is left to the caller. */
int fea_cuda_multifrontal_panel(const fea_cuda_multifrontal_front *fronts, const int64_t *list,
                                int64_t count, int *info, cudaStream_t stream);

/* The pivot range of each factored front with q > 0: the smallest and the
 * largest L_jj^2 of its panel's diagonal into pivots[2 node] and
 * pivots[2 node + 1], merged by fea_multifrontal_pivots_merge
 * (src/internal/multifrontal.h, the host's reduction): min and max do not
 * depend on the order, so the range is the one the CPU computes from the
 * same factor. A block per front: a stride of the diagonal per thread,
 * then a tree in shared memory. */
int fea_cuda_multifrontal_pivots(const fea_cuda_multifrontal_front *fronts, int64_t count,
                                 double *pivots, cudaStream_t stream);

/* Forward substitution, gather: W (zeroed) := the y rows of the front's q
 * DoFs, then += each child's passed-up rows (children in order). y is
 * n x nrhs with leading dimension n. */
int fea_cuda_multifrontal_forward_gather(const fea_cuda_multifrontal_sfront *fronts, int64_t count,
                                         const fea_cuda_multifrontal_child *children,
                                         const double *y, int64_t n, int64_t nrhs,
                                         cudaStream_t stream);

/* Forward substitution of fronts[list[..]]: W_q := L11^-1 W_q, W_r -= L21 W_q. */
int fea_cuda_multifrontal_forward_small(const fea_cuda_multifrontal_sfront *fronts,
                                        const int64_t *list, int64_t count, int64_t nrhs,
                                        cudaStream_t stream);

/* Backward substitution, gather: W := the y rows of all q + r DoFs. */
int fea_cuda_multifrontal_backward_gather(const fea_cuda_multifrontal_sfront *fronts, int64_t count,
                                          const double *y, int64_t n, int64_t nrhs,
                                          cudaStream_t stream);

/* Backward substitution of fronts[list[..]]: W_q := L11^-T (W_q - L21^T W_r). */
int fea_cuda_multifrontal_backward_small(const fea_cuda_multifrontal_sfront *fronts,
                                         const int64_t *list, int64_t count, int64_t nrhs,
                                         cudaStream_t stream);

/* y rows of each front's q DoFs := W_q. */
int fea_cuda_multifrontal_scatter_solution(const fea_cuda_multifrontal_sfront *fronts,
                                           int64_t count, double *y, int64_t n, int64_t nrhs,
                                           cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
