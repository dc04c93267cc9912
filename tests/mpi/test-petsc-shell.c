/* libfeaccel objects inside PETSc solvers, against libfeaccel's own:
 * - a shell matrix of the operator with PETSc's CG and Jacobi (from the
 *   shell's MatGetDiagonal) takes exactly the iterations of fea_cg_solve()
 *   with Jacobi, to the same solution;
 * - a multigrid cycle as a shell preconditioner of PETSc's CG takes the
 *   iterations of the multigrid solver's own PCG (krylov = 1);
 * - a multifrontal solver as a shell preconditioner of preonly is the
 *   direct solve;
 * - MatMultAdd, and a libfeaccel error inside a callback coming back
 *   through PETSc without an abort. */
#include <string.h>

#include "mpi-common.h"

static double sine_f(const double *x, void *user) {
  (void)user;
  return 2 * PETSC_PI * PETSC_PI * sin(PETSC_PI * x[0]) * sin(PETSC_PI * x[1]);
}

static PetscErrorCode petsc_check(PetscErrorCode e, const char *what) {
  CHECK(e == 0, "%s failed with PETSc error %d", what, (int)e);
  return 0;
}
#define P(expr) petsc_check((expr), #expr)

static void arrays_to_vec(const double *a, Vec v) {
  PetscScalar *va;
  PetscInt n;
  P(VecGetLocalSize(v, &n));
  P(VecGetArray(v, &va));
  memcpy(va, a, (size_t)n * sizeof *va);
  P(VecRestoreArray(v, &va));
}

static void vec_to_array(Vec v, double *a) {
  const PetscScalar *va;
  PetscInt n;
  P(VecGetLocalSize(v, &n));
  P(VecGetArrayRead(v, &va));
  memcpy(a, va, (size_t)n * sizeof *a);
  P(VecRestoreArrayRead(v, &va));
}

static double max_diff(const double *a, const double *b, fea_index n) {
  double d = 0;
  for (fea_index i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

int main(int argc, char **argv) {
  if (PetscInitialize(&argc, &argv, NULL, NULL) != 0) return 1;
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = md.n[1] = 32;
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  OK(fea_mesh_create_structured(ctx, &md, &mesh));
  OK(fea_space_create_lagrange(mesh, 1, FEA_NODES_EQUISPACED, &space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = sine_f;
  OK(fea_problem_create_poisson(space, &pd, &pb));
  fea_index n = 0;
  OK(fea_problem_get_num_free_dofs(pb, &n));
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, pb, NULL, &op));
  fea_vector *vb = NULL, *vx = NULL;
  OK(fea_vector_create(ctx, n, FEA_F64, &vb));
  OK(fea_vector_create(ctx, n, FEA_F64, &vx));
  OK(fea_operator_get_rhs(op, vb));
  double *b = malloc((size_t)n * 8), *x_native = malloc((size_t)n * 8), *x = malloc((size_t)n * 8);
  OK(fea_vector_read(vb, n, FEA_F64, b));

  /* 1. Shell matrix + PETSc CG/Jacobi against fea_cg_solve with Jacobi. */
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-10;
  fea_cg_stats cs = FEA_CG_STATS_INIT;
  OK(fea_vector_set_all(vx, 0.0));
  OK(fea_cg_solve(op, vb, vx, &cd, &cs));
  OK(fea_vector_read(vx, n, FEA_F64, x_native));
  Mat A;
  OK(fea_petsc_mat_create(op, &A));
  Vec pb_b, pb_x;
  P(MatCreateVecs(A, &pb_x, &pb_b));
  arrays_to_vec(b, pb_b);
  KSP ksp;
  PC pc;
  P(KSPCreate(PETSC_COMM_SELF, &ksp));
  P(KSPSetOperators(ksp, A, A));
  P(KSPSetType(ksp, KSPCG));
  P(KSPGetPC(ksp, &pc));
  P(PCSetType(pc, PCJACOBI));
  P(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  P(KSPSetTolerances(ksp, 1e-10, 0.0, PETSC_DEFAULT, 10000));
  P(KSPSolve(ksp, pb_b, pb_x));
  PetscInt its;
  P(KSPGetIterationNumber(ksp, &its));
  vec_to_array(pb_x, x);
  CHECK(its == cs.iterations, "PETSc CG took %d iterations, fea_cg_solve %lld", (int)its,
        (long long)cs.iterations);
  double d = max_diff(x, x_native, n);
  CHECK(d < 1e-12, "PETSc CG and fea_cg_solve differ by %g", d);
  /* MatMultAdd: z = y + A x. */
  Vec z;
  P(VecDuplicate(pb_b, &z));
  P(MatMultAdd(A, pb_x, pb_b, z));
  P(VecAXPY(z, -1.0, pb_b));
  Vec ax;
  P(VecDuplicate(pb_b, &ax));
  P(MatMult(A, pb_x, ax));
  P(VecAXPY(z, -1.0, ax));
  PetscReal znorm;
  P(VecNorm(z, NORM_INFINITY, &znorm));
  CHECK(znorm < 1e-12, "MatMultAdd - (y + A x) = %g", (double)znorm);
  P(VecDestroy(&z));
  P(VecDestroy(&ax));
  P(KSPDestroy(&ksp));

  /* 2. A multigrid cycle as PETSc's preconditioner against the solver's own PCG. */
  fea_multigrid_desc mg = FEA_MULTIGRID_DESC_INIT;
  mg.krylov = 1;
  mg.rtol = 1e-10;
  fea_solver *pcg = NULL;
  OK(fea_solver_create_multigrid(ctx, pb, &mg, &pcg));
  OK(fea_solver_setup(pcg));
  OK(fea_solver_solve(pcg, 1, b, n, x_native, n));
  fea_multigrid_stats ms = FEA_MULTIGRID_STATS_INIT;
  OK(fea_solver_get_multigrid_stats(pcg, &ms));
  fea_solver_destroy(&pcg);
  mg.krylov = 0;
  mg.max_iterations = 1;
  fea_solver *cycle = NULL;
  OK(fea_solver_create_multigrid(ctx, pb, &mg, &cycle));
  OK(fea_solver_setup(cycle));
  P(KSPCreate(PETSC_COMM_SELF, &ksp));
  P(KSPSetOperators(ksp, A, A));
  P(KSPSetType(ksp, KSPCG));
  P(KSPGetPC(ksp, &pc));
  OK(fea_petsc_pc_set_solver(pc, cycle));
  fea_solver_destroy(&cycle); /* the preconditioner holds its reference */
  P(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  P(KSPSetTolerances(ksp, 1e-10, 0.0, PETSC_DEFAULT, 100));
  P(VecSet(pb_x, 0.0));
  P(KSPSolve(ksp, pb_b, pb_x));
  P(KSPGetIterationNumber(ksp, &its));
  vec_to_array(pb_x, x);
  CHECK(its == ms.iterations, "PETSc CG + cycle took %d iterations, multigrid PCG %lld", (int)its,
        (long long)ms.iterations);
  d = max_diff(x, x_native, n);
  CHECK(d < 1e-10, "PETSc CG + cycle and multigrid PCG differ by %g", d);
  P(KSPDestroy(&ksp));

  /* 3. A multifrontal solver as the preconditioner of preonly: the direct solve. */
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = bd.degree[1] = 2;
  bd.n[0] = bd.n[1] = 16;
  fea_space *bs = NULL;
  fea_problem *bp = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &bs));
  OK(fea_problem_create_poisson(bs, &pd, &bp));
  fea_index nb = 0;
  OK(fea_problem_get_num_free_dofs(bp, &nb));
  fea_solver *mf = NULL;
  OK(fea_solver_create_multifrontal(ctx, bs, bp, NULL, &mf));
  OK(fea_solver_setup(mf));
  double *bb = malloc((size_t)nb * 8), *xd = malloc((size_t)nb * 8), *xp = malloc((size_t)nb * 8);
  for (fea_index i = 0; i < nb; i++) bb[i] = sin(0.3 * (double)i);
  OK(fea_solver_solve(mf, 1, bb, nb, xd, nb));
  Mat Id;
  Vec vbb, vxx;
  P(MatCreateConstantDiagonal(PETSC_COMM_SELF, (PetscInt)nb, (PetscInt)nb, (PetscInt)nb,
                              (PetscInt)nb, 1.0, &Id));
  P(MatCreateVecs(Id, &vxx, &vbb));
  arrays_to_vec(bb, vbb);
  P(KSPCreate(PETSC_COMM_SELF, &ksp));
  P(KSPSetOperators(ksp, Id, Id));
  P(KSPSetType(ksp, KSPPREONLY));
  P(KSPGetPC(ksp, &pc));
  OK(fea_petsc_pc_set_solver(pc, mf));
  P(KSPSolve(ksp, vbb, vxx));
  vec_to_array(vxx, xp);
  d = max_diff(xp, xd, nb);
  CHECK(d == 0.0, "PCShell(multifrontal) and the direct solve differ by %g", d);

  /* 4. A libfeaccel error inside a PETSc callback: a vector of the wrong size. */
  Vec wrong, wrong_x;
  P(VecCreateSeq(PETSC_COMM_SELF, (PetscInt)nb + 1, &wrong));
  P(VecDuplicate(wrong, &wrong_x));
  P(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  PetscErrorCode e = PCApply(pc, wrong, wrong_x);
  P(PetscPopErrorHandler());
  CHECK(e != 0, "a PCApply on %lld entries succeeded", (long long)nb + 1);
  CHECK(fea_petsc_pc_set_solver(NULL, mf) == FEA_ERR_INVALID_ARG, "a NULL PC was accepted");
  CHECK(fea_petsc_mat_create(NULL, &A) == FEA_ERR_INVALID_ARG, "a NULL operator was accepted");
  P(VecDestroy(&wrong));
  P(VecDestroy(&wrong_x));
  P(KSPDestroy(&ksp));
  fea_solver_destroy(&mf);
  P(MatDestroy(&Id));
  P(VecDestroy(&vbb));
  P(VecDestroy(&vxx));
  free(bb), free(xd), free(xp);
  fea_problem_destroy(&bp);
  fea_space_destroy(&bs);

  P(VecDestroy(&pb_b));
  P(VecDestroy(&pb_x));
  P(MatDestroy(&A));
  fea_vector_destroy(&vb);
  fea_vector_destroy(&vx);
  fea_operator_destroy(&op);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
  free(b), free(x_native), free(x);
  printf("test-petsc-shell: passed\n");
  return PetscFinalize() != 0;
}
