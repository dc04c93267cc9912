/* SuiteSparse CHOLMOD as the peer of the direct-solver cases: an optional,
 * bench-only dependency (FEA_BENCH_HAVE_CHOLMOD); without it every call says
 * "not built" and the cases leave the peer out. */
#ifndef FEA_BENCH_PEER_CHOLMOD_H
#define FEA_BENCH_PEER_CHOLMOD_H

#include <feaccel.h>

typedef struct bench_cholmod_result {
  double analyze_s, factor_s, solve_s;
  double factor_bytes;  /* numeric entries of L (supernodal xsize, else nzmax) x 8 */
  double peak_bytes;    /* Common->memory_usage: CHOLMOD's own peak */
  double flops;         /* Common->fl: the LL' flops of the chosen ordering */
  double lnz;           /* nonzeros of L */
  const char *ordering; /* the ordering CHOLMOD chose */
} bench_cholmod_result;

/* 1 when CHOLMOD was found at configure time. */
int bench_cholmod_available(void);

/* Supernodal Cholesky of the symmetric CSR matrix A with CHOLMOD's default
 * ordering choice, then x = A^-1 b. Returns 0 on success; on failure prints
 * why on stderr and returns -1 (also when CHOLMOD was not built). */
int bench_cholmod_solve(const fea_matrix *A, const double *b, double *x, bench_cholmod_result *r);

#endif
