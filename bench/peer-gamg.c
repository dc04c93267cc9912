/* The PETSc GAMG peer of peer-gamg.h. PETSc is an MPI library: the first
 * call initializes MPI as a singleton (one rank, no launcher) when hypre has
 * not, then PETSc, and both are finalized at exit (PETSc first: atexit runs
 * in reverse). The matrix is copied into PETSc's own SeqAIJ format (PetscInt
 * indices) inside the timed hand-over, the way a user of both libraries
 * would hand it over (row by row from our arrays, no temporary copy); b is
 * wrapped, not copied. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "linalg/matrix.h" /* our CSR arrays, read in place */
#include "peer-gamg.h"
#include "rss.h"
#include "timing.h"

/* Our defaults for 3D scalar Poisson (no near-null space beyond the
 * constant, which is GAMG's default): smoothed aggregation (one smoothing
 * step of the tentative prolongator), aggressive (MIS-2) coarsening on the
 * finest level only to hold the operator complexity of the 125- and
 * 343-point B-spline stencils down, a drop threshold of 0.02 on the scaled
 * graph (PETSc's manual suggests 0.01-0.05 for 3D Poisson), Chebyshev(2)
 * smoothing with point Jacobi (GAMG's default smoother) and a direct solve
 * on the coarsest level. Each key is prefixed "-gamg_" in the solver. */
static const char *const gamg_defaults[][2] = {
    {"-pc_gamg_type", "agg"},
    {"-pc_gamg_agg_nsmooths", "1"},
    {"-pc_gamg_aggressive_coarsening", "1"},
    {"-pc_gamg_threshold", "0.02"},
    {"-mg_levels_ksp_type", "chebyshev"},
    {"-mg_levels_ksp_max_it", "2"},
    {"-mg_levels_pc_type", "jacobi"},
};
enum { NUM_GAMG_DEFAULTS = (int)(sizeof gamg_defaults / sizeof gamg_defaults[0]) };

#ifndef FEA_BENCH_HAVE_PETSC

int bench_gamg_available(void) { return 0; }

const char *bench_gamg_options(void) { return ""; }

int bench_gamg_solve(const fea_matrix *A, const double *b, double rtol, double *x,
                     bench_gamg_result *r) {
  (void)A, (void)b, (void)rtol, (void)x, (void)r, (void)gamg_defaults;
  fprintf(stderr, "feaccel-bench: PETSc was not found when feaccel-bench was configured\n");
  return -1;
}

#else

#include <mpi.h>
#include <petscksp.h>

int bench_gamg_available(void) { return 1; }

static char options_used[1024];

static void finalize_mpi(void) { MPI_Finalize(); }
static void finalize_petsc(void) { (void)PetscFinalize(); }

/* MPI (unless up), PETSc, and our defaults where PETSC_OPTIONS is silent. */
static int ensure_petsc(void) {
  PetscBool petsc_up = PETSC_FALSE;
  if (PetscInitialized(&petsc_up) == 0 && petsc_up) return 0;
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  if (!mpi_up) {
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
      fprintf(stderr, "feaccel-bench: PETSc: MPI_Init failed\n");
      return -1;
    }
    atexit(finalize_mpi);
  }
  if (PetscInitializeNoArguments() != 0) {
    fprintf(stderr, "feaccel-bench: PetscInitialize failed\n");
    return -1;
  }
  atexit(finalize_petsc);
  size_t used = 0;
  for (int k = 0; k < NUM_GAMG_DEFAULTS; k++) {
    PetscBool set = PETSC_FALSE;
    char value[256] = "";
    char key[128];
    snprintf(key, sizeof key, "-gamg_%s", gamg_defaults[k][0] + 1);
    if (PetscOptionsGetString(NULL, NULL, key, value, sizeof value, &set) != 0 || !set) {
      if (PetscOptionsSetValue(NULL, key, gamg_defaults[k][1]) != 0) return -1;
      snprintf(value, sizeof value, "%s", gamg_defaults[k][1]);
    }
    int w = snprintf(options_used + used, sizeof options_used - used, "%s%s %s", k ? " " : "", key,
                     value);
    if (w > 0 && (size_t)w < sizeof options_used - used) used += (size_t)w;
  }
  return 0;
}

const char *bench_gamg_options(void) {
  if (ensure_petsc() < 0) return "";
  return options_used;
}

/* A PETSc call that fails ends the solve with its code. */
#define TRY(call)                                                                      \
  do {                                                                                 \
    PetscErrorCode e_ = (call);                                                        \
    if (e_) {                                                                          \
      fprintf(stderr, "feaccel-bench: PETSc: %s failed (error %d)\n", #call, (int)e_); \
      goto done;                                                                       \
    }                                                                                  \
  } while (0)

int bench_gamg_solve(const fea_matrix *Am, const double *bv, double rtol, double *xv,
                     bench_gamg_result *r) {
  if (ensure_petsc() < 0) return -1;
  int rc = -1;
  Mat A = NULL;
  Vec b = NULL, x = NULL;
  KSP ksp = NULL;
  PetscInt *len = NULL, *cols = NULL;
  const double heap0 = bench_heap_bytes();
  const double t0 = bench_now();
  const fea_index n = Am->rows, nnz = Am->nnz;
  if ((long long)nnz > (long long)PETSC_MAX_INT) {
    fprintf(stderr, "feaccel-bench: PETSc: %lld nonzeros do not fit its %d-byte indices\n",
            (long long)nnz, (int)sizeof(PetscInt));
    return -1;
  }
  /* Exact preallocation, then each row in one sorted call (MAT_SORTED_FULL:
   * a copy, no search): PETSc's one copy and a row of indices besides. */
  fea_index widest = 0;
  len = malloc(((size_t)n + 1) * sizeof *len);
  for (fea_index i = 0; len && i < n; i++) {
    const fea_index w = Am->row_ptr[i + 1] - Am->row_ptr[i];
    len[i] = (PetscInt)w;
    if (w > widest) widest = w;
  }
  cols = malloc(((size_t)widest + 1) * sizeof *cols);
  if (!len || !cols) {
    fprintf(stderr, "feaccel-bench: PETSc: no memory for the row lengths\n");
    goto done;
  }
  TRY(MatCreate(PETSC_COMM_SELF, &A));
  TRY(MatSetSizes(A, (PetscInt)n, (PetscInt)n, (PetscInt)n, (PetscInt)n));
  TRY(MatSetType(A, MATSEQAIJ));
  TRY(MatSeqAIJSetPreallocation(A, 0, len));
  TRY(MatSetOption(A, MAT_SORTED_FULL, PETSC_TRUE));
  for (fea_index i = 0; i < n; i++) {
    const fea_index b0 = Am->row_ptr[i];
    const PetscInt row = (PetscInt)i;
    for (PetscInt k = 0; k < len[i]; k++) cols[k] = (PetscInt)Am->col_idx[b0 + k];
    TRY(MatSetValues(A, 1, &row, len[i], cols, Am->values + b0, INSERT_VALUES));
  }
  TRY(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  TRY(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  TRY(MatSetOption(A, MAT_SPD, PETSC_TRUE));
  free(len), free(cols), len = cols = NULL;
  TRY(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, (PetscInt)n, bv, &b));
  TRY(VecDuplicate(b, &x));
  const double t1 = bench_now();

  PC pc;
  TRY(KSPCreate(PETSC_COMM_SELF, &ksp));
  TRY(KSPSetOptionsPrefix(ksp, "gamg_"));
  TRY(KSPSetOperators(ksp, A, A));
  TRY(KSPSetType(ksp, KSPCG));
  TRY(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED)); /* ||r|| / ||b||, like ours and hypre's */
  TRY(KSPSetTolerances(ksp, rtol, 0.0, PETSC_DEFAULT, 500));
  TRY(KSPGetPC(ksp, &pc));
  TRY(PCSetType(pc, PCGAMG));
  TRY(KSPSetFromOptions(ksp));
  const double t2 = bench_now();
  TRY(KSPSetUp(ksp));
  const double t3 = bench_now();
  TRY(KSPSolve(ksp, b, x));
  const double t4 = bench_now();
  const double heap1 = bench_heap_bytes();

  KSPConvergedReason why;
  PetscInt its = 0, levels = 0;
  PetscReal rnorm = 0, bnorm = 0, gc = 0, oc = 0;
  TRY(KSPGetConvergedReason(ksp, &why));
  TRY(KSPGetIterationNumber(ksp, &its));
  TRY(KSPGetResidualNorm(ksp, &rnorm));
  TRY(VecNorm(b, NORM_2, &bnorm));
  TRY(PCMGGetLevels(pc, &levels));
  TRY(PCMGGetGridComplexity(pc, &gc, &oc));
  r->build_s = t1 - t0;
  r->setup_s = t3 - t2;
  r->solve_s = t4 - t3;
  r->iterations = (double)its;
  r->rel_residual = bnorm > 0 ? rnorm / bnorm : rnorm;
  r->memory_mb = heap0 >= 0 && heap1 >= 0 ? (heap1 - heap0) * 1e-6 : NAN;
  r->operator_complexity = oc;
  r->levels = (double)levels;
  if (why <= 0) {
    fprintf(stderr, "feaccel-bench: PETSc: CG + GAMG did not converge (%s) in %d iterations\n",
            KSPConvergedReasons[why], (int)its);
    goto done;
  }
  if (xv) {
    const PetscScalar *xa;
    TRY(VecGetArrayRead(x, &xa));
    for (fea_index i = 0; i < n; i++) xv[i] = xa[i];
    TRY(VecRestoreArrayRead(x, &xa));
  }
  rc = 0;
done:
  KSPDestroy(&ksp);
  VecDestroy(&x);
  VecDestroy(&b);
  MatDestroy(&A);
  free(len);
  free(cols);
  return rc;
}

#endif
