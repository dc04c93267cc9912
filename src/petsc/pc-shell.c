/* A libfeaccel solver as a PETSc shell preconditioner: PCApply is
 * fea_solver_solve() on PETSc's arrays (host memory; the solver moves them
 * to its backend itself). */
#include <stdlib.h>
#include <string.h>

#include <feaccel/context.h>
#include <feaccel/petsc.h>
#include <feaccel/solver.h>

#include "internal/error.h"
#include "petsc-bridge.h"
#include "base/solver-object.h"

static const char shell_name[] = "libfeaccel solver";

static PetscErrorCode pc_apply(PC pc, Vec x, Vec y) {
  fea_solver *s = NULL;
  const PetscScalar *xa = NULL;
  PetscScalar *ya = NULL;
  PetscInt n = 0;
  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &s));
  PetscCall(VecGetLocalSize(x, &n));
  PetscCheck(n == s->num_free, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ,
             "the vector has %" PetscInt_FMT " entries, the libfeaccel solver %lld rows", n,
             (long long)s->num_free);
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
  const fea_status st = fea_solver_solve(s, 1, xa, n > 0 ? n : 1, ya, n > 0 ? n : 1);
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  /* An iterative kind at its iteration limit still preconditions. */
  if (st < 0) PetscCall(fea_petsc_lib_error(fea_petsc_ctx_of(s), st, "solve"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode pc_destroy(PC pc) {
  fea_solver *s = NULL;
  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &s));
  fea_object_release(s);
  PetscCall(PCShellSetContext(pc, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The destroy comes last: until it is set, the reference on solver is the
 * caller's to drop on failure. A shell that carried another solver lets
 * go of it. */
static fea_status pc_set(fea_context *ctx, PC pc, fea_solver *solver) {
  PetscBool shell = PETSC_FALSE;
  FEA_PETSC_CALL(ctx, PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &shell));
  const char *name = NULL;
  if (shell) FEA_PETSC_CALL(ctx, PCShellGetName(pc, &name));
  if (shell && name && strcmp(name, shell_name) == 0) { /* ours: drop its solver */
    fea_solver *old = NULL;
    FEA_PETSC_CALL(ctx, PCShellGetContext(pc, &old));
    FEA_PETSC_CALL(ctx, PCShellSetContext(pc, NULL));
    if (old) fea_object_release(old);
  }
  FEA_PETSC_CALL(ctx, PCSetType(pc, PCSHELL));
  FEA_PETSC_CALL(ctx, PCShellSetApply(pc, pc_apply));
  FEA_PETSC_CALL(ctx, PCShellSetName(pc, shell_name));
  FEA_PETSC_CALL(ctx, PCShellSetContext(pc, solver));
  FEA_PETSC_CALL(ctx, PCShellSetDestroy(pc, pc_destroy));
  return FEA_SUCCESS;
}

fea_status fea_petsc_pc_set_solver(PC pc, fea_solver *solver) {
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = fea_petsc_ctx_of(solver);
  FEA_CHECK(pc != NULL, ctx, FEA_ERR_INVALID_ARG, "argument 'pc' is NULL");
  fea_object_retain(solver);
  fea_petsc_quiet_push();
  const fea_status st = pc_set(ctx, pc, solver);
  fea_petsc_quiet_pop();
  /* Until the destroy is set, the reference is still ours to drop. */
  if (st != FEA_SUCCESS) fea_object_release(solver);
  return st;
}
