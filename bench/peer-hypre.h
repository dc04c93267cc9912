/* hypre as the peer of the multigrid case: an optional, bench-only
 * dependency (FEA_BENCH_HAVE_HYPRE, Debian's libhypre-dev with its MPI);
 * without it every call says "not built" and the case leaves the peer out.
 * One MPI process, so hypre runs on one rank. */
#ifndef FEA_BENCH_PEER_HYPRE_H
#define FEA_BENCH_PEER_HYPRE_H

#include <feaccel.h>

typedef struct bench_hypre_result {
  double build_s;      /* matrix and vectors handed to hypre (not part of its setup) */
  double setup_s;      /* the preconditioner's hierarchy (PCG setup) */
  double solve_s;      /* PCG to the tolerance */
  double iterations;   /* PCG iterations */
  double rel_residual; /* hypre's final relative residual norm (2-norm) */
  double memory_mb;    /* BoomerAMG: malloc'd bytes held after the solve over those before the
                          hand-over (rss.h): hypre's matrix, vectors and hierarchy */
} bench_hypre_result;

/* 1 when hypre was found at configure time. */
int bench_hypre_available(void);

/* hypre's structured solver on its own problem: the finite-difference
 * Laplacian (5-point in 2D, 7-point in 3D; not our Q1 matrix) on the
 * (n - 1)^dim interior points of the unit square or cube with n cells per
 * direction, right-hand side h^2 f(x) with load f, solved by PCG
 * preconditioned by one PFMG V-cycle (1 + 1 symmetric red-black
 * Gauss-Seidel sweeps) to the relative residual rtol from a zero guess.
 * Returns 0, or -1 with a message on stderr. */
int bench_hypre_pfmg(int dim, long long n, double (*f)(const double *x), double rtol,
                     bench_hypre_result *r);

/* The exact system libfeaccel solves: our assembled CSR matrix A and b,
 * solved by PCG preconditioned by one BoomerAMG V-cycle with the library's
 * default options (coarsening, interpolation and its forward/backward
 * smoothers, which make the cycle symmetric) to the relative residual rtol,
 * except the strength threshold when strong_threshold > 0 (hypre's default
 * 0.25 is tuned for 2D; its manual suggests 0.5 in 3D). build_s counts the
 * whole hand-over: A copied from its arrays into hypre's ParCSR matrix
 * (diagonal first in each row, hypre's layout) and b into a vector. The
 * solution goes to x when x is not NULL (after the timings). Returns 0, or
 * -1 with a message on stderr. */
int bench_hypre_boomeramg(const fea_matrix *A, const double *b, double rtol,
                          double strong_threshold, double *x, bench_hypre_result *r);

#endif
