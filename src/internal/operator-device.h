/* Operators of backends that build their own (the backend's `op` slot;
 * host backends leave it NULL and the matfree family builds the CPU
 * operator itself).
 *
 * In PETSc's manner (MatCreate_SeqAIJCUSPARSE builds the host matrix, then
 * converts), a backend's build asks the family, through the host builder it
 * is handed, to build the operator on a host context of the backend's
 * choosing (assembled matrix, element matrices, Dirichlet numbering, the
 * diagonal, the right-hand side) and to describe what it built; the backend
 * then uploads what its kernels need and installs an fea_operator_impl whose
 * apply and diagonal take pointers in the backend's memory (fea_vector data
 * of its context). The family never learns where the data went. */
#ifndef FEA_INTERNAL_OPERATOR_DEVICE_H
#define FEA_INTERNAL_OPERATOR_DEVICE_H

#include "linalg/matrix.h"
#include "matfree/matfree-kernel.h"
#include "matfree/operator.h"

/* What the host built, read-only during create (freed afterwards). */
typedef struct fea_op_device_src {
  fea_operator_kind kind;       /* CSR, MATFREE_ELEMENT_MATRIX or MATFREE_SUMFACT */
  fea_update_strategy strategy; /* MF: FEA_UPDATE_ATOMIC_CAS or FEA_UPDATE_COLORING */
  const fea_matrix *A;          /* CSR: the assembled reduced matrix */
  fea_index ne;                 /* MF: elements */
  int nb;                       /* MF: DoFs per element */
  const fea_index *edofs;       /* MF: ne x nb, each element's DoFs in local order */
  fea_em_view em;               /* element matrices: the kernel's data */
  fea_sf_view sf;               /* sum factorization: the 1D tables and lengths */
  const fea_index *free_index;  /* MF: per DoF its free row, or -1 (Dirichlet) */
  const fea_index *colors;      /* MF coloring: per element its color */
  int ncolors;
  const double *diag;                      /* num_free: the CPU operator's diagonal */
  double flops_per_apply, bytes_per_apply; /* the CPU operator's costs (same arithmetic) */
  void *owned[3];                          /* what describe allocated (release frees it) */
} fea_op_device_src;

/* The matfree family's side of a backend-built operator
 * (fea_operator_host_builder, src/matfree/operator.c). */
typedef struct fea_operator_host_builder {
  /* The operator on host context hctx, as a host backend gets it. */
  fea_status (*build)(fea_context *hctx, const fea_problem *problem, const fea_operator_desc *d,
                      fea_operator **out);
  /* An empty operator of ctx for problem: a reference on the problem, the
   * right-hand side zeroed (info, impl and data for the backend to fill). */
  fea_status (*alloc)(fea_context *ctx, const fea_problem *problem, fea_operator **out);
  /* What the host operator hop holds, for an upload with strategy
   * (COLORING adds the element colors); errors on ctx. */
  fea_status (*describe)(fea_context *ctx, const fea_operator *hop, fea_update_strategy strategy,
                         fea_op_device_src *src);
  void (*release)(fea_op_device_src *src); /* frees src->owned */
  /* Whether the host's coefficient-space sum factorization (whose 1D tables
   * a backend can upload) serves problem; else why. */
  int (*sumfact_serves)(const fea_problem *problem, char *why, size_t len);
} fea_operator_host_builder;

extern const fea_operator_host_builder fea_operator_host_builder_cpu;

struct fea_operator_ops {
  /* The operator of problem on ctx with options d (checked by the
   * interface, strategy AUTO included), built through hb; fills *out. */
  fea_status (*build)(fea_context *ctx, const fea_problem *problem, const fea_operator_desc *d,
                      const fea_operator_host_builder *hb, fea_operator **out);
  /* y[i] = a[i] x[i], i < n, on device arrays (Jacobi's z = D^-1 r). */
  fea_status (*pointwise_mul)(fea_context *ctx, fea_index n, const double *a, const double *x,
                              double *y);
  /* Wait until queued work is done (timings). */
  fea_status (*sync)(fea_context *ctx);
};

#endif
