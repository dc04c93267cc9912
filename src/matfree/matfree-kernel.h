/* Matrix-free element kernels: the contract between the operator layer
 * (src/matfree/operator*.c), which owns
 * vectors, Dirichlet handling, the element loop and the conflict strategy
 * for the scatter (which rows a call may write), and the kernels, which
 * compute element results and, with apply_add, add them where the caller
 * says.
 *
 * A kernel computes, for a batch of elements, y_e = K_e x_e where K_e is the
 * element stiffness matrix of the problem (sigma included) in the space's
 * local DoF order (fea_space_get_element_dofs), and x_e is gathered from a
 * full-DoF vector (all num_dofs entries; the caller keeps Dirichlet entries
 * at zero). The caller scatters y_e with the chosen update strategy. */
#ifndef FEA_INTERNAL_MATFREE_KERNEL_H
#define FEA_INTERNAL_MATFREE_KERNEL_H

#include <stdint.h>

#include "disc/problem.h"

/* Where one apply_add call adds, and which rows it may write: described by
 * what the kernel needs, decided by the caller's loop layer (the operator
 * with its update strategy, operator-matfree.c), which alone knows why a
 * row is or is not this call's (ownership of PRIVATE_BUFFERS' blocks).
 *
 * y[d] += (K_e x_e)_i for each DoF d = dofs_e[i] with row[d] >= 0 that
 * the call writes (with free_rows, y[row[d]] and x indexed by row: the
 * reduced vectors, Dirichlet DoFs read as zero and never written). The
 * rows it writes are told per element by write[e - write_first] (every
 * element of the call in write_first .. write_end - 1):
 *   1 .. FEA_MATFREE_RUN_MAX  every DoF of e is a free row the call writes, and
 *                        so for the value - 1 elements after e (a run: W
 *                        such elements in a row need no test per DoF and
 *                        one byte read, not W)
 *   FEA_MATFREE_WRITE_ROWS    e has a Dirichlet DoF; every free row of e is the
 *                        call's
 *   0                    each free row r is the call's where keep == NULL
 *                        or keep[r] == keep_key
 * With keep == NULL every free row is the call's, so an element with every
 * DoF free must be a run (the kernel may take it so without reading
 * write). write == NULL: every element is tested row by row. updates is
 * incremented by the adds done. */
#define FEA_MATFREE_RUN_MAX 127
#define FEA_MATFREE_WRITE_ROWS 0x80
typedef struct fea_matfree_target {
  double *y;
  const fea_index *row; /* per DoF: its free row, or -1 */
  int free_rows;
  fea_index first;            /* apply_add's elems NULL: the elements first .. first + count - 1 */
  const unsigned char *write; /* see above */
  fea_index write_first, write_end;
  const int *keep; /* per free row: its key; NULL: every row */
  int keep_key;
  uint64_t *updates;
} fea_matfree_target;

typedef struct fea_matfree_kernel_ops {
  const char *name; /* "element-matrix", "sum-factorization" */
  /* Whether this kernel serves the problem; else 0 and a sentence in why. */
  int (*supports)(const fea_problem *pb, char *why, size_t len);
  /* Precomputation (reference matrices, 1D tables, geometry). edofs: the
   * caller's element-DoF table (ne x nb, fea_element_dof_table's layout),
   * alive as long as the state, or NULL: the kernel takes the space's or
   * makes its own (a second table at once: B-splines 3D p = 2, 216 B per
   * DoF). */
  fea_status (*create)(const fea_problem *pb, const fea_index *edofs, void **state);
  void (*destroy)(void *state);
  /* Elements a kernel prefers per call (SIMD width); callers pass at most this many. */
  int (*batch)(const void *state);
  /* y[k * nb + i] = sum_j K_e[i][j] x_full[dofs_e[j]] for e = elems[k], k < count.
   * Thread-safe: state is read-only here; scratch is per call (caller-provided,
   * scratch_doubles(state) entries). */
  void (*apply)(const void *state, const fea_index *elems, int count, const double *x_full,
                double *y, double *scratch);
  /* Optional (NULL: not offered): apply, and add the results into the
   * target (see fea_matfree_target) element by element in the order of elems
   * (NULL: the consecutive elements target->first ..), without handing y_e
   * back: for update strategies that need no protection. */
  void (*apply_add)(const void *state, const fea_index *elems, int count, const double *x_full,
                    const fea_matfree_target *target, double *scratch);
  /* d[k * nb + i] = K_e[i][i] for e = elems[k]. */
  void (*diagonal)(const void *state, const fea_index *elems, int count, double *d,
                   double *scratch);
  fea_index (*scratch_doubles)(const void *state);
  /* Flops and bytes per element application (for the benchmark's roofline). */
  void (*cost)(const void *state, double *flops_per_element, double *bytes_per_element);
  /* Bytes the kernel keeps (geometry, tables). */
  uint64_t (*memory)(const void *state);
  /* What ran: e.g. "sum-factorization p=3 avx2 x4" or "... generic". */
  const char *(*describe)(const void *state);
} fea_matfree_kernel_ops;

/* The element-matrix kernel's data, read-only (for device uploads):
 * K[g * nb * nb + i * nb + j] row-major per group, group[e] each element's. */
typedef struct fea_em_view {
  int nb;
  fea_index ne, ngroups;
  const fea_index *edofs; /* ne x nb */
  const double *K;        /* ngroups x nb x nb */
  const fea_index *group; /* ne */
} fea_em_view;

/* The view of an element-matrix kernel state (element-matrix.c). */
void fea_matfree_element_matrix_view(const void *state, fea_em_view *view);

/* The sum-factorization kernel's data, read-only (for device uploads): the
 * 1D matrices of direction k, tab[k] + i * 2 n[k]^2 holding M (n x n,
 * row-major) then S of element index i, and len[k][i] that element's length
 * (J_kk). per_span: element e has direction indices e % nel[0], ... (direction
 * 0 fastest); else every element uses index 0. */
typedef struct fea_sf_view {
  int dim, n[3], per_span;
  fea_index nel[3];
  const double *tab[3], *len[3];
  double sigma;
} fea_sf_view;

/* The view of a sum-factorization kernel state (sumfact-ops.c). */
void fea_matfree_sumfact_view(const void *state, fea_sf_view *view);

extern const fea_matfree_kernel_ops fea_matfree_kernel_element_matrix; /* element-matrix.c */
extern const fea_matfree_kernel_ops fea_matfree_kernel_sumfact;        /* sumfact*.c */

#endif
