/* The hypre peer of peer-hypre.h. hypre is an MPI library: the first call
 * initializes MPI as a singleton (one rank, no launcher) and finalizes it at
 * exit. Matrix and vector building is timed apart from the solver's setup,
 * because libfeaccel's setup_s includes assembling its finest operator while
 * hypre's PCG setup starts from a matrix it was handed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "peer-hypre.h"
#include "timing.h"

#ifndef FEA_BENCH_HAVE_HYPRE

int bench_hypre_available(void) { return 0; }

int bench_hypre_pfmg(int dim, long long n, double (*f)(const double *x), double rtol,
                     bench_hypre_result *r) {
  (void)dim, (void)n, (void)f, (void)rtol, (void)r;
  fprintf(stderr, "feaccel-bench: hypre was not found when feaccel-bench was configured\n");
  return -1;
}

int bench_hypre_boomeramg(const fea_matrix *A, const double *b, double rtol,
                          bench_hypre_result *r) {
  (void)A, (void)b, (void)rtol, (void)r;
  fprintf(stderr, "feaccel-bench: hypre was not found when feaccel-bench was configured\n");
  return -1;
}

#else

#include <mpi.h>

#include <HYPRE.h>
#include <HYPRE_parcsr_ls.h>
#include <HYPRE_struct_ls.h>

int bench_hypre_available(void) { return 1; }

static void finalize_mpi(void) { MPI_Finalize(); }

/* Both peers time the same phases: build (t0..t1), setup (t2..t3), solve (t3..t4). */
static void record(bench_hypre_result *r, double t0, double t1, double t2, double t3, double t4,
                   HYPRE_Int its, double rel) {
  r->build_s = t1 - t0;
  r->setup_s = t3 - t2;
  r->solve_s = t4 - t3;
  r->iterations = its;
  r->rel_residual = rel;
}

static int ensure_mpi(void) {
  int up = 0;
  MPI_Initialized(&up);
  if (up) return 0;
  if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
    fprintf(stderr, "feaccel-bench: hypre: MPI_Init failed\n");
    return -1;
  }
  atexit(finalize_mpi);
  return 0;
}

/* ---- PFMG on the finite-difference Laplacian -------------------------------------------------- */

int bench_hypre_pfmg(int dim, long long n, double (*f)(const double *x), double rtol,
                     bench_hypre_result *r) {
  if (ensure_mpi() < 0) return -1;
  const HYPRE_Int m = (HYPRE_Int)(n - 1); /* interior points per direction */
  const double h = 1.0 / (double)n;
  size_t points = 1;
  for (int k = 0; k < dim; k++) points *= (size_t)m;
  const int entries = 2 * dim + 1; /* centre, then -/+ per direction */
  HYPRE_Int stencil_index[7] = {0, 1, 2, 3, 4, 5, 6};
  double *values = malloc(points * (size_t)entries * sizeof *values);
  double *rhs = malloc(points * sizeof *rhs);
  if (!values || !rhs) {
    free(values);
    free(rhs);
    fprintf(stderr, "feaccel-bench: hypre: no memory for %zu grid points\n", points);
    return -1;
  }
  const double t0 = bench_now();
  HYPRE_StructGrid grid;
  HYPRE_StructStencil stencil;
  HYPRE_StructMatrix A;
  HYPRE_StructVector b, x;
  HYPRE_Int lower[3] = {1, 1, 1}, upper[3] = {m, m, m};
  HYPRE_StructGridCreate(MPI_COMM_WORLD, dim, &grid);
  HYPRE_StructGridSetExtents(grid, lower, upper);
  HYPRE_StructGridAssemble(grid);
  HYPRE_StructStencilCreate(dim, entries, &stencil);
  for (int e = 0; e < entries; e++) {
    HYPRE_Int offset[3] = {0, 0, 0};
    if (e > 0) offset[(e - 1) / 2] = (e % 2) ? -1 : 1;
    HYPRE_StructStencilSetElement(stencil, e, offset);
  }
  HYPRE_StructMatrixCreate(MPI_COMM_WORLD, grid, stencil, &A);
  HYPRE_StructMatrixInitialize(A);
  /* Box values run x fastest; a neighbour outside the box is a Dirichlet
   * node (value 0): its coefficient is dropped. */
  for (size_t p = 0; p < points; p++) {
    size_t rest = p;
    HYPRE_Int pos[3] = {1, 1, 1};
    double xp[3] = {0, 0, 0};
    for (int k = 0; k < dim; k++) {
      pos[k] = (HYPRE_Int)(rest % (size_t)m) + 1;
      rest /= (size_t)m;
      xp[k] = h * (double)pos[k];
    }
    double *v = values + p * (size_t)entries;
    v[0] = 2.0 * dim;
    for (int e = 1; e < entries; e++) {
      const int k = (e - 1) / 2;
      const HYPRE_Int next = pos[k] + ((e % 2) ? -1 : 1);
      v[e] = (next < 1 || next > m) ? 0.0 : -1.0;
    }
    rhs[p] = h * h * f(xp);
  }
  HYPRE_StructMatrixSetBoxValues(A, lower, upper, entries, stencil_index, values);
  HYPRE_StructMatrixAssemble(A);
  HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &b);
  HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &x);
  HYPRE_StructVectorInitialize(b);
  HYPRE_StructVectorInitialize(x);
  HYPRE_StructVectorSetBoxValues(b, lower, upper, rhs);
  for (size_t p = 0; p < points; p++) rhs[p] = 0.0;
  HYPRE_StructVectorSetBoxValues(x, lower, upper, rhs);
  HYPRE_StructVectorAssemble(b);
  HYPRE_StructVectorAssemble(x);
  const double t1 = bench_now();

  HYPRE_StructSolver pcg, pfmg;
  HYPRE_StructPCGCreate(MPI_COMM_WORLD, &pcg);
  HYPRE_StructPCGSetTol(pcg, rtol);
  HYPRE_StructPCGSetTwoNorm(pcg, 1);
  HYPRE_StructPCGSetMaxIter(pcg, 500);
  HYPRE_StructPFMGCreate(MPI_COMM_WORLD, &pfmg);
  HYPRE_StructPFMGSetMaxIter(pfmg, 1);
  HYPRE_StructPFMGSetTol(pfmg, 0.0);
  HYPRE_StructPFMGSetZeroGuess(pfmg);
  HYPRE_StructPFMGSetRelaxType(pfmg, 2); /* symmetric red-black Gauss-Seidel */
  HYPRE_StructPFMGSetNumPreRelax(pfmg, 1);
  HYPRE_StructPFMGSetNumPostRelax(pfmg, 1);
  HYPRE_StructPCGSetPrecond(pcg, HYPRE_StructPFMGSolve, HYPRE_StructPFMGSetup, pfmg);
  const double t2 = bench_now();
  HYPRE_StructPCGSetup(pcg, A, b, x);
  const double t3 = bench_now();
  HYPRE_StructPCGSolve(pcg, A, b, x);
  const double t4 = bench_now();
  HYPRE_Int its = 0;
  double rel = 0;
  HYPRE_StructPCGGetNumIterations(pcg, &its);
  HYPRE_StructPCGGetFinalRelativeResidualNorm(pcg, &rel);
  record(r, t0, t1, t2, t3, t4, its, rel);
  HYPRE_StructPCGDestroy(pcg);
  HYPRE_StructPFMGDestroy(pfmg);
  HYPRE_StructVectorDestroy(x);
  HYPRE_StructVectorDestroy(b);
  HYPRE_StructMatrixDestroy(A);
  HYPRE_StructStencilDestroy(stencil);
  HYPRE_StructGridDestroy(grid);
  free(values);
  free(rhs);
  return 0;
}

/* ---- BoomerAMG on our CSR matrix ------------------------------------------------------------- */

int bench_hypre_boomeramg(const fea_matrix *Am, const double *bv, double rtol,
                          bench_hypre_result *r) {
  if (ensure_mpi() < 0) return -1;
  fea_index n = 0, nnz = 0;
  if (fea_matrix_get_size(Am, &n, NULL, &nnz) != FEA_SUCCESS) {
    fprintf(stderr, "feaccel-bench: hypre: %s\n", fea_context_last_error(NULL));
    return -1;
  }
  fea_index *rp = malloc(((size_t)n + 1) * sizeof *rp), *ci = malloc((size_t)nnz * sizeof *ci);
  double *val = malloc((size_t)nnz * sizeof *val), *zero = calloc((size_t)n, sizeof *zero);
  HYPRE_Int *rows = malloc((size_t)n * sizeof *rows), *ncols = malloc((size_t)n * sizeof *ncols);
  HYPRE_BigInt *cols = malloc((size_t)nnz * sizeof *cols);
  int rc = -1;
  if (!rp || !ci || !val || !zero || !rows || !ncols || !cols) {
    fprintf(stderr, "feaccel-bench: hypre: no memory for a copy of the matrix\n");
    goto done;
  }
  if (fea_matrix_get_csr(Am, rp, ci, val) != FEA_SUCCESS) {
    fprintf(stderr, "feaccel-bench: hypre: %s\n", fea_context_last_error(NULL));
    goto done;
  }
  for (fea_index i = 0; i < n; i++) {
    rows[i] = (HYPRE_Int)i;
    ncols[i] = (HYPRE_Int)(rp[i + 1] - rp[i]);
  }
  for (fea_index k = 0; k < nnz; k++) cols[k] = (HYPRE_BigInt)ci[k];

  const double t0 = bench_now();
  HYPRE_IJMatrix A;
  HYPRE_IJVector b, x;
  HYPRE_ParCSRMatrix pA;
  HYPRE_ParVector pb, px;
  const HYPRE_BigInt last = (HYPRE_BigInt)n - 1;
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, 0, last, 0, last, &A);
  HYPRE_IJMatrixSetObjectType(A, HYPRE_PARCSR);
  HYPRE_IJMatrixInitialize(A);
  HYPRE_IJMatrixSetValues(A, (HYPRE_Int)n, ncols, rows, cols, val);
  HYPRE_IJMatrixAssemble(A);
  HYPRE_IJMatrixGetObject(A, (void **)&pA);
  HYPRE_IJVectorCreate(MPI_COMM_WORLD, 0, last, &b);
  HYPRE_IJVectorCreate(MPI_COMM_WORLD, 0, last, &x);
  HYPRE_IJVectorSetObjectType(b, HYPRE_PARCSR);
  HYPRE_IJVectorSetObjectType(x, HYPRE_PARCSR);
  HYPRE_IJVectorInitialize(b);
  HYPRE_IJVectorInitialize(x);
  HYPRE_IJVectorSetValues(b, (HYPRE_Int)n, rows, bv);
  HYPRE_IJVectorSetValues(x, (HYPRE_Int)n, rows, zero);
  HYPRE_IJVectorAssemble(b);
  HYPRE_IJVectorAssemble(x);
  HYPRE_IJVectorGetObject(b, (void **)&pb);
  HYPRE_IJVectorGetObject(x, (void **)&px);
  const double t1 = bench_now();

  HYPRE_Solver pcg, amg;
  HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
  HYPRE_PCGSetTol(pcg, rtol);
  HYPRE_PCGSetTwoNorm(pcg, 1);
  HYPRE_PCGSetMaxIter(pcg, 500);
  HYPRE_BoomerAMGCreate(&amg);
  HYPRE_BoomerAMGSetMaxIter(amg, 1);
  HYPRE_BoomerAMGSetTol(amg, 0.0);
  HYPRE_BoomerAMGSetPrintLevel(amg, 0);
  HYPRE_PCGSetPrecond(pcg, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve,
                      (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
  const double t2 = bench_now();
  HYPRE_ParCSRPCGSetup(pcg, pA, pb, px);
  const double t3 = bench_now();
  HYPRE_ParCSRPCGSolve(pcg, pA, pb, px);
  const double t4 = bench_now();
  HYPRE_Int its = 0;
  double rel = 0;
  HYPRE_PCGGetNumIterations(pcg, &its);
  HYPRE_PCGGetFinalRelativeResidualNorm(pcg, &rel);
  record(r, t0, t1, t2, t3, t4, its, rel);
  HYPRE_BoomerAMGDestroy(amg);
  HYPRE_ParCSRPCGDestroy(pcg);
  HYPRE_IJVectorDestroy(x);
  HYPRE_IJVectorDestroy(b);
  HYPRE_IJMatrixDestroy(A);
  rc = 0;
done:
  free(rp);
  free(ci);
  free(val);
  free(zero);
  free(rows);
  free(ncols);
  free(cols);
  return rc;
}

#endif
