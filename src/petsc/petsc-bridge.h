/* The PETSc library's own helpers (src/petsc/, libfeaccel-petsc.so):
 * PETSc errors as libfeaccel statuses, PETSc's error handler kept quiet
 * while libfeaccel calls PETSc, and libfeaccel errors inside PETSc
 * callbacks as PETSc errors. */
#ifndef FEA_INTERNAL_PETSC_BRIDGE_H
#define FEA_INTERNAL_PETSC_BRIDGE_H

#include <petscsys.h>
#include <petscversion.h>

#include <feaccel/types.h>

#include "internal/object.h"

/* PETSc before 3.19 returns plain 0 for success. */
#if PETSC_VERSION_LT(3, 19, 0)
#define PETSC_SUCCESS 0
/* owner[p]: the rank of patch p, the same on every rank of comm (size
 * ranks, at most one per patch checked by the caller): the patch graph
 * partitioned by PETSc where it can, else greedily by DoFs
 * (src/petsc/patch-partition.c). Collective. */
struct fea_multipatch;
fea_status fea_petsc_partition_patches(MPI_Comm comm, fea_context *ctx,
                                       const struct fea_multipatch *mp, int rank, int size,
                                       int *owner);

#endif

/* The context of any libfeaccel handle (its object header). */
static inline fea_context *fea_petsc_ctx_of(const void *handle) {
  return ((const fea_object *)handle)->ctx;
}

/* FEA_ERR_BACKEND on ctx naming the PETSc call and PETSc's message for e. */
fea_status fea_petsc_error(const fea_context *ctx, PetscErrorCode e, const char *call,
                           const char *file, int line, const char *func);

#define FEA_PETSC_CALL(ctx, expr)                                                       \
  do {                                                                                  \
    PetscErrorCode fea_petsc_e_ = (expr);                                               \
    if (fea_petsc_e_)                                                                   \
      return fea_petsc_error((ctx), fea_petsc_e_, #expr, __FILE__, __LINE__, __func__); \
  } while (0)

/* Around every public function: PETSc's handler returns errors silently
 * (no traceback, no abort) until the matching pop. */
void fea_petsc_quiet_push(void);
void fea_petsc_quiet_pop(void);

/* Inside a PETSc callback: a failed libfeaccel status st as a PETSc error
 * carrying libfeaccel's last message on ctx. */
PetscErrorCode fea_petsc_lib_error(const fea_context *ctx, fea_status st, const char *what);

/* owner[p]: the rank of patch p, the same on every rank of comm (size
 * ranks, at most one per patch checked by the caller): the patch graph
 * partitioned by PETSc where it can, else greedily by DoFs
 * (src/petsc/patch-partition.c). Collective. */
struct fea_multipatch;
fea_status fea_petsc_partition_patches(MPI_Comm comm, fea_context *ctx,
                                       const struct fea_multipatch *mp, int rank, int size,
                                       int *owner);

#endif
