/* The CHOLMOD peer of peer-cholmod.h. The matrix goes in as it is: the same
 * reduced CSR system the library's reference assembly gives, its upper
 * triangle read (stype 1; a symmetric CSR matrix is its own CSC). Every
 * phase is timed on its own so that the analysis (ordering, symbolic
 * factorization: the work our patch tree makes unnecessary) shows apart. */
#include <stdio.h>
#include <stdlib.h>

#include "peer-cholmod.h"
#include "timing.h"

#ifndef FEA_BENCH_HAVE_CHOLMOD

int bench_cholmod_available(void) { return 0; }

int bench_cholmod_solve(const fea_matrix *A, const double *b, double *x, bench_cholmod_result *r) {
  (void)A, (void)b, (void)x, (void)r;
  fprintf(stderr, "feaccel-bench: CHOLMOD was not found when feaccel-bench was configured\n");
  return -1;
}

#else

#include <suitesparse/cholmod.h>

int bench_cholmod_available(void) { return 1; }

static const char *ordering_name(int ordering) {
  switch (ordering) {
  case CHOLMOD_NATURAL: return "natural";
  case CHOLMOD_GIVEN: return "given";
  case CHOLMOD_AMD: return "amd";
  case CHOLMOD_METIS: return "metis";
  case CHOLMOD_NESDIS: return "nesdis";
  case CHOLMOD_COLAMD: return "colamd";
  default: return "other";
  }
}

int bench_cholmod_solve(const fea_matrix *A, const double *b, double *x, bench_cholmod_result *r) {
  int rc = -1;
  fea_index n = 0, nnz = 0;
  cholmod_common c;
  cholmod_sparse *S = NULL;
  cholmod_dense *B = NULL, *X = NULL;
  cholmod_factor *L = NULL;
  if (fea_matrix_get_size(A, &n, NULL, &nnz) != FEA_SUCCESS) {
    fprintf(stderr, "feaccel-bench: cholmod: %s\n", fea_context_last_error(NULL));
    return -1;
  }
  cholmod_l_start(&c);
  c.supernodal = CHOLMOD_SUPERNODAL;
  S = cholmod_l_allocate_sparse((size_t)n, (size_t)n, (size_t)nnz, 1, 1, 1, CHOLMOD_REAL, &c);
  B = cholmod_l_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, &c);
  if (!S || !B) {
    fprintf(stderr,
            "feaccel-bench: cholmod: cannot allocate a %lld x %lld matrix with %lld "
            "entries (status %d)\n",
            (long long)n, (long long)n, (long long)nnz, c.status);
    goto done;
  }
  /* fea_index and SuiteSparse_long are both 64-bit: the CSR arrays go straight in. */
  if (fea_matrix_get_csr(A, (fea_index *)S->p, (fea_index *)S->i, (double *)S->x) != FEA_SUCCESS) {
    fprintf(stderr, "feaccel-bench: cholmod: %s\n", fea_context_last_error(NULL));
    goto done;
  }
  for (fea_index k = 0; k < n; k++) ((double *)B->x)[k] = b[k];

  double t0 = bench_now();
  L = cholmod_l_analyze(S, &c);
  double t1 = bench_now();
  int ok = L && cholmod_l_factorize(S, L, &c) && c.status == CHOLMOD_OK;
  double t2 = bench_now();
  if (ok) X = cholmod_l_solve(CHOLMOD_A, L, B, &c);
  double t3 = bench_now();
  if (!ok || !X) {
    fprintf(stderr, "feaccel-bench: cholmod failed (status %d%s)\n", c.status,
            c.status == CHOLMOD_NOT_POSDEF ? ": not positive definite" : "");
    goto done;
  }
  for (fea_index k = 0; k < n; k++) x[k] = ((double *)X->x)[k];
  r->analyze_s = t1 - t0;
  r->factor_s = t2 - t1;
  r->solve_s = t3 - t2;
  r->factor_bytes = 8.0 * (double)(L->is_super ? L->xsize : L->nzmax);
  r->peak_bytes = (double)c.memory_usage;
  r->flops = c.fl;
  r->lnz = c.lnz;
  r->ordering = ordering_name(c.method[c.selected].ordering);
  rc = 0;
done:
  cholmod_l_free_dense(&X, &c);
  cholmod_l_free_dense(&B, &c);
  cholmod_l_free_factor(&L, &c);
  cholmod_l_free_sparse(&S, &c);
  cholmod_l_finish(&c);
  return rc;
}

#endif
