/* A libfeaccel operator as a PETSc shell matrix: MatMult, MatMultAdd and
 * MatGetDiagonal through two libfeaccel vectors that carry PETSc's arrays
 * to the operator's backend and back (a copy each way: on /gpu/cuda that
 * is the host-device transfer; on the CPU two memcpys of n doubles). */
#include <stdlib.h>

#include <feaccel/context.h>
#include <feaccel/operator.h>
#include <feaccel/petsc.h>
#include <feaccel/vector.h>

#include "internal/error.h"
#include "petsc-bridge.h"

typedef struct shell {
  fea_operator *op; /* holds a reference */
  fea_vector *x, *y;
  fea_index n;
} shell;

/* y = A x (add = 0) or y += A x (add = 1). */
static PetscErrorCode mat_apply(Mat A, Vec x, Vec y, int add) {
  shell *sh = NULL;
  const PetscScalar *xa = NULL;
  PetscScalar *ya = NULL;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &sh));
  const fea_context *ctx = fea_petsc_ctx_of(sh->op);
  PetscCall(VecGetArrayRead(x, &xa));
  fea_status st = fea_vector_write(sh->x, sh->n, FEA_F64, xa);
  PetscCall(VecRestoreArrayRead(x, &xa));
  if (st == FEA_SUCCESS) {
    PetscCall(VecGetArray(y, &ya));
    if (add) st = fea_vector_write(sh->y, sh->n, FEA_F64, ya);
    if (st == FEA_SUCCESS)
      st = add ? fea_operator_apply_add(sh->op, sh->x, sh->y)
               : fea_operator_apply(sh->op, sh->x, sh->y);
    if (st == FEA_SUCCESS) st = fea_vector_read(sh->y, sh->n, FEA_F64, ya);
    PetscCall(VecRestoreArray(y, &ya));
  }
  if (st != FEA_SUCCESS) PetscCall(fea_petsc_lib_error(ctx, st, "operator apply"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode mat_mult(Mat A, Vec x, Vec y) { return mat_apply(A, x, y, 0); }

static PetscErrorCode mat_mult_add(Mat A, Vec x, Vec y, Vec z) {
  PetscFunctionBeginUser;
  if (z != y) PetscCall(VecCopy(y, z));
  PetscCall(mat_apply(A, x, z, 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode mat_diagonal(Mat A, Vec d) {
  shell *sh = NULL;
  PetscScalar *da = NULL;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &sh));
  fea_status st = fea_operator_get_diagonal(sh->op, sh->y);
  PetscCall(VecGetArray(d, &da));
  if (st == FEA_SUCCESS) st = fea_vector_read(sh->y, sh->n, FEA_F64, da);
  PetscCall(VecRestoreArray(d, &da));
  if (st != FEA_SUCCESS) PetscCall(fea_petsc_lib_error(fea_petsc_ctx_of(sh->op), st, "diagonal"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode mat_destroy(Mat A) {
  shell *sh = NULL;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &sh));
  fea_vector_destroy(&sh->x);
  fea_vector_destroy(&sh->y);
  fea_object_release(sh->op);
  free(sh);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* sh holds its reference on op already; once the shell exists, its
 * destroy frees sh whatever fails next. */
static fea_status mat_create(fea_context *ctx, shell *sh, Mat *A) {
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  FEA_CALL(fea_operator_get_info(sh->op, &info));
  FEA_CHECK(info.rows <= PETSC_MAX_INT, ctx, FEA_ERR_DIMENSION,
            "the operator's %lld rows exceed PetscInt's %lld", (long long)info.rows,
            (long long)PETSC_MAX_INT);
  sh->n = info.rows;
  FEA_CALL(fea_vector_create(ctx, sh->n, FEA_F64, &sh->x));
  FEA_CALL(fea_vector_create(ctx, sh->n, FEA_F64, &sh->y));
  const PetscInt n = (PetscInt)sh->n;
  FEA_PETSC_CALL(ctx, MatCreateShell(PETSC_COMM_SELF, n, n, n, n, sh, A));
  FEA_PETSC_CALL(ctx, MatShellSetOperation(*A, MATOP_DESTROY, (void (*)(void))mat_destroy));
  FEA_PETSC_CALL(ctx, MatShellSetOperation(*A, MATOP_MULT, (void (*)(void))mat_mult));
  FEA_PETSC_CALL(ctx, MatShellSetOperation(*A, MATOP_MULT_ADD, (void (*)(void))mat_mult_add));
  FEA_PETSC_CALL(ctx, MatShellSetOperation(*A, MATOP_GET_DIAGONAL, (void (*)(void))mat_diagonal));
  FEA_PETSC_CALL(ctx, MatSetOption(*A, MAT_SYMMETRIC, PETSC_TRUE));
  return FEA_SUCCESS;
}

fea_status fea_petsc_mat_create(fea_operator *op, Mat *A) {
  FEA_CHECK_NULL(op, NULL);
  fea_context *ctx = fea_petsc_ctx_of(op);
  FEA_CHECK_NULL(A, ctx);
  *A = NULL;
  shell *sh = calloc(1, sizeof *sh);
  FEA_CHECK(sh, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a shell matrix");
  sh->op = op;
  fea_object_retain(op);
  fea_petsc_quiet_push();
  const fea_status st = mat_create(ctx, sh, A);
  if (st != FEA_SUCCESS && *A) {
    (void)MatDestroy(A); /* frees sh */
  } else if (st != FEA_SUCCESS) {
    fea_vector_destroy(&sh->x);
    fea_vector_destroy(&sh->y);
    fea_object_release(sh->op);
    free(sh);
  }
  fea_petsc_quiet_pop();
  return st;
}
