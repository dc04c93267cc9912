/* The same-run GEMM yardsticks of peak.h. Kept apart from case-limits.c,
 * which reports more (triad, GPU kinds) than a case needs for a fraction. */
#include <stdlib.h>

#include "linalg/dense.h"
#include "peak.h"
#include "timing.h"

fea_status bench_gemm_peak(fea_context *ctx, long long n, fea_precision prec, int reps,
                           double *gflops) {
  const fea_index nn = (fea_index)n * n;
  /* Half operands multiply into an FP32 C, the only half GEMM the library has. */
  const fea_precision cprec = prec == FEA_F16 || prec == FEA_BF16 ? FEA_F32 : prec;
  fea_vector *v[3] = {NULL, NULL, NULL}, *probe = NULL;
  double *t = malloc((size_t)reps * sizeof *t), dummy = 0;
  fea_status s = t ? FEA_SUCCESS : FEA_ERR_OUT_OF_MEMORY;
  for (int k = 0; k < 3 && s == FEA_SUCCESS; k++)
    s = fea_vector_create(ctx, nn, k == 2 ? cprec : prec, &v[k]);
  /* GPU GEMMs return once queued: a dot of one entry returns its value to the
   * host, so it waits for everything queued before it (as in case-limits.c). */
  if (s == FEA_SUCCESS) s = fea_vector_create(ctx, 1, FEA_F64, &probe);
  /* Non-trivial operands: a GEMM on zeros could in principle be cut short. */
  if (s == FEA_SUCCESS) s = fea_vector_set_all(v[0], 0.5);
  if (s == FEA_SUCCESS) s = fea_vector_set_all(v[1], -0.25);
  fea_dmat A, B, C;
  if (s == FEA_SUCCESS) s = fea_dmat_from_vector(v[0], n, n, n, &A);
  if (s == FEA_SUCCESS) s = fea_dmat_from_vector(v[1], n, n, n, &B);
  if (s == FEA_SUCCESS) s = fea_dmat_from_vector(v[2], n, n, n, &C);
  for (int r = -1; r < reps && s == FEA_SUCCESS; r++) { /* r = -1: warm-up */
    s = fea_vector_dot(probe, probe, &dummy);
    double t0 = bench_now();
    if (s == FEA_SUCCESS)
      s = fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, 1.0, &A, &B, 0.0, &C,
                         FEA_COMPUTE_DEFAULT);
    if (s == FEA_SUCCESS) s = fea_vector_dot(probe, probe, &dummy);
    if (r >= 0) t[r] = bench_now() - t0;
  }
  if (s == FEA_SUCCESS)
    *gflops = 2.0 * (double)n * (double)n * (double)n / bench_median(t, reps) * 1e-9;
  for (int k = 0; k < 3; k++) (void)fea_vector_destroy(&v[k]);
  (void)fea_vector_destroy(&probe);
  free(t);
  return s;
}

fea_status bench_dgemm_peak(fea_context *ctx, long long n, int reps, double *gflops) {
  return bench_gemm_peak(ctx, n, FEA_F64, reps, gflops);
}
