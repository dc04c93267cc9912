/* PETSc's GAMG as the peer of the B-spline multigrid case: an optional,
 * bench-only dependency (FEA_BENCH_HAVE_PETSC, set when the build found
 * PETSc, -Dpetsc=enabled or auto); without it every call says "not built"
 * and the case records the peer as absent. One MPI rank, one thread: PETSc
 * is initialized once (MPI as a singleton when nobody started it) and
 * finalized at exit. */
#ifndef FEA_BENCH_PEER_GAMG_H
#define FEA_BENCH_PEER_GAMG_H

#include <feaccel.h>

typedef struct bench_gamg_result {
  double build_s;      /* the hand-over: A copied out of the fea_matrix into a SeqAIJ matrix */
  double setup_s;      /* KSPSetUp: the GAMG hierarchy */
  double solve_s;      /* KSPSolve to the tolerance */
  double iterations;   /* CG iterations */
  double rel_residual; /* ||b - A x||_2 / ||b||_2 as CG reports it (unpreconditioned norm) */
  double memory_mb;    /* malloc'd bytes held after the solve over those before the hand-over
                          (rss.h): PETSc's matrix, vectors and hierarchy */
  double operator_complexity; /* nonzeros of all levels over the finest's (PCMGGetGridComplexity) */
  double levels;              /* GAMG's levels */
} bench_gamg_result;

/* 1 when PETSc was found at configure time. */
int bench_gamg_available(void);

/* The options the solve runs with: "-gamg_"-prefixed PETSc options, each
 * one of ours unless PETSC_OPTIONS (read at the first call) set it, so a
 * run can retune GAMG without a rebuild. A static string. */
const char *bench_gamg_options(void);

/* Our assembled CSR matrix A and b (the system libfeaccel solves), solved by
 * CG (unpreconditioned 2-norm residual, zero guess) preconditioned by
 * smoothed-aggregation GAMG to the relative residual rtol. The solution goes
 * to x when x is not NULL (after the timings). Returns 0, or -1 with a
 * message on stderr (also for a solve that did not converge). */
int bench_gamg_solve(const fea_matrix *A, const double *b, double rtol, double *x,
                     bench_gamg_result *r);

#endif
