/* Errors across the libfeaccel/PETSc boundary, both ways. PETSc's default
 * handler prints a traceback and may abort; libfeaccel's contract is a
 * status and a message, so while a libfeaccel function calls PETSc the
 * handler is PETSc's silent return handler, and the code it returns
 * becomes FEA_ERR_BACKEND with PETSc's own text. */
#include <petscsys.h>

#include <feaccel/context.h>

#include "internal/error.h"
#include "petsc-bridge.h"

fea_status fea_petsc_error(const fea_context *ctx, PetscErrorCode e, const char *call,
                           const char *file, int line, const char *func) {
  const char *text = NULL;
  if (PetscErrorMessage(e, &text, NULL) != 0 || !text) text = "unknown PETSc error";
  return fea_error_raise(ctx, FEA_ERR_BACKEND, file, line, func, "PETSc error %d in %s: %s", (int)e,
                         call, text);
}

void fea_petsc_quiet_push(void) { (void)PetscPushErrorHandler(PetscReturnErrorHandler, NULL); }

void fea_petsc_quiet_pop(void) { (void)PetscPopErrorHandler(); }

PetscErrorCode fea_petsc_lib_error(const fea_context *ctx, fea_status st, const char *what) {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "libfeaccel %s failed (%s): %s", what,
          fea_status_string(st), fea_context_last_error(ctx));
}
