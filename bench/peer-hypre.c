/* The hypre peer of peer-hypre.h. hypre is an MPI library: the first call
 * initializes MPI as a singleton (one rank, no launcher) and finalizes it at
 * exit. Matrix and vector building is timed apart from the solver's setup,
 * because libfeaccel's setup_s includes assembling its finest operator while
 * hypre's PCG setup starts from a matrix it was handed. BoomerAMG gets our
 * CSR matrix copied straight into hypre's ParCSR arrays, the one copy hypre
 * needs (build_s times it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "linalg/matrix.h" /* our CSR arrays, read in place */
#include "peer-hypre.h"
#include "rss.h"
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
                          double strong_threshold, double *x, bench_hypre_result *r) {
  (void)A, (void)b, (void)rtol, (void)strong_threshold, (void)x, (void)r;
  fprintf(stderr, "feaccel-bench: hypre was not found when feaccel-bench was configured\n");
  return -1;
}

#else

#include <mpi.h>

#include <HYPRE.h>
#include <HYPRE_parcsr_ls.h>
#include <HYPRE_struct_ls.h>
#include <_hypre_parcsr_mv.h> /* the ParCSR matrix's arrays, filled in place */

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
  r->memory_mb = 0;
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

/* Our CSR matrix as hypre's own ParCSR matrix on one rank, built in place:
 * one copy (12 bytes a nonzero) and no temporaries, where the IJ interface
 * would hold a second copy and search each row for every entry it sets
 * (quadratic in the row length: 343 entries at 3D p = 3). hypre keeps each
 * row's diagonal entry first (its smoothers read it there); the rest follow
 * in our order. NULL with a message when a size does not fit HYPRE_Int or
 * a row has no diagonal entry (never in an assembled stiffness matrix). */
static HYPRE_ParCSRMatrix parcsr_from(const fea_matrix *Am, HYPRE_BigInt starts[2]) {
  const fea_index n = Am->rows, nnz = Am->nnz;
  if ((long long)nnz > 2147483647LL) {
    fprintf(stderr, "feaccel-bench: hypre: %lld nonzeros do not fit its %d-byte indices\n",
            (long long)nnz, (int)sizeof(HYPRE_Int));
    return NULL;
  }
  starts[0] = 0, starts[1] = (HYPRE_BigInt)n;
  HYPRE_ParCSRMatrix A = NULL;
  HYPRE_ParCSRMatrixCreate(MPI_COMM_WORLD, (HYPRE_BigInt)n, (HYPRE_BigInt)n, starts, starts, 0,
                           (HYPRE_Int)nnz, 0, &A);
  HYPRE_ParCSRMatrixInitialize(A);
  hypre_CSRMatrix *d = hypre_ParCSRMatrixDiag((hypre_ParCSRMatrix *)A);
  HYPRE_Int *di = hypre_CSRMatrixI(d), *dj = hypre_CSRMatrixJ(d);
  HYPRE_Complex *dv = hypre_CSRMatrixData(d);
  for (fea_index i = 0; i < n; i++) {
    const fea_index b = Am->row_ptr[i], e = Am->row_ptr[i + 1];
    HYPRE_Int at = (HYPRE_Int)b + 1;
    int diagonal = 0;
    di[i] = (HYPRE_Int)b;
    dj[b] = (HYPRE_Int)i;
    for (fea_index k = b; k < e; k++) {
      if (Am->col_idx[k] == i) {
        dv[b] = Am->values[k], diagonal = 1;
      } else if (at < (HYPRE_Int)e) {
        dj[at] = (HYPRE_Int)Am->col_idx[k], dv[at] = Am->values[k], at++;
      }
    }
    if (!diagonal) {
      fprintf(stderr, "feaccel-bench: hypre: row %lld of the matrix has no diagonal entry\n",
              (long long)i);
      HYPRE_ParCSRMatrixDestroy(A);
      return NULL;
    }
  }
  di[n] = (HYPRE_Int)nnz;
  hypre_ParCSRMatrixSetNumNonzeros((hypre_ParCSRMatrix *)A);
  return A;
}

int bench_hypre_boomeramg(const fea_matrix *Am, const double *bv, double rtol,
                          double strong_threshold, double *xv, bench_hypre_result *r) {
  if (ensure_mpi() < 0) return -1;
  const double heap0 = bench_heap_bytes();
  const double t0 = bench_now();
  const fea_index n = Am->rows;
  HYPRE_BigInt starts[2];
  HYPRE_ParCSRMatrix pA = parcsr_from(Am, starts);
  HYPRE_Int *rows = malloc(((size_t)n + 1) * sizeof *rows);
  double *zero = calloc((size_t)n + 1, sizeof *zero);
  if (!pA || !rows || !zero) {
    if (pA) HYPRE_ParCSRMatrixDestroy(pA);
    free(rows);
    free(zero);
    if (pA) fprintf(stderr, "feaccel-bench: hypre: no memory for the vectors\n");
    return -1;
  }
  for (fea_index i = 0; i < n; i++) rows[i] = (HYPRE_Int)i;
  HYPRE_IJVector b, x;
  HYPRE_ParVector pb, px;
  const HYPRE_BigInt last = (HYPRE_BigInt)n - 1;
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
  free(zero);
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
  if (strong_threshold > 0) HYPRE_BoomerAMGSetStrongThreshold(amg, strong_threshold);
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
  const double heap1 = bench_heap_bytes();
  record(r, t0, t1, t2, t3, t4, its, rel);
  r->memory_mb = heap0 >= 0 && heap1 >= 0 ? (heap1 - heap0) * 1e-6 : NAN;
  if (xv) HYPRE_IJVectorGetValues(x, (HYPRE_Int)n, rows, xv);
  HYPRE_BoomerAMGDestroy(amg);
  HYPRE_ParCSRPCGDestroy(pcg);
  HYPRE_IJVectorDestroy(x);
  HYPRE_IJVectorDestroy(b);
  HYPRE_ParCSRMatrixDestroy(pA);
  free(rows);
  return 0;
}

#endif
