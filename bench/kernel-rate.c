/* Per-core rates of the sum-factorization batch kernel and of FMA
 * throughput, beside the operator case (see kernel-rate.h). */
#include "kernel-rate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "matfree/sumfact/sumfact.h"
#include "timing.h"

double bench_sumfact_kernel_gflops(const fea_problem *pb) {
  void *state = NULL;
  if (fea_sf_create_with(pb, NULL, 0, &state) != FEA_SUCCESS) return 0.0;
  fea_sf_state *s = state;
  double rate = 0.0;
  const int W = s->isa->lanes, nb = s->nb;
  const size_t work = (size_t)fea_sf_work_vectors(s->dim, s->n) * (size_t)W;
  /* aligned_alloc wants sizes that are multiples of the alignment */
  const size_t lanes_bytes = ((size_t)(nb * W) * sizeof(double) / SF_ALIGN + 1) * SF_ALIGN;
  const size_t work_bytes = (work * sizeof(double) / SF_ALIGN + 1) * SF_ALIGN;
  double *X = aligned_alloc(SF_ALIGN, lanes_bytes), *Y = aligned_alloc(SF_ALIGN, lanes_bytes);
  double *wk = aligned_alloc(SF_ALIGN, work_bytes);
  fea_sf_batch b;
  memset(&b, 0, sizeof b);
  if (X && Y && wk && fea_sf_shared_tables(s, &b)) {
    b.dim = s->dim;
    for (int k = 0; k < 3; k++) b.n[k] = s->n[k];
    b.x = X;
    b.y = Y;
    b.work = wk;
    for (int i = 0; i < nb * W; i++) X[i] = 1.0 + 1e-3 * (double)(i % 17);
    const double flops = fea_sf_flops(s->dim, s->n) * W;
    long reps = (long)(2e7 / flops) + 1; /* about 20 ms at 100 GFLOP/s */
    double best = 0.0;
    for (int r = 0; r < 5; r++) {
      const double t0 = bench_now();
      for (long i = 0; i < reps; i++) {
        s->fn(&b);
        X[0] += Y[1] * 1e-300; /* a dependence, so no call is dropped */
      }
      const double dt = bench_now() - t0;
      if (dt > 0 && (best == 0.0 || dt < best)) best = dt;
    }
    if (best > 0) rate = flops * (double)reps / best * 1e-9;
  }
  free(X);
  free(Y);
  free(wk);
  fea_matfree_kernel_sumfact.destroy(state);
  return rate;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* 12 independent accumulators: more than an FMA's latency times the FMA
 * units, so the loop runs at the throughput. */
#define FMA_LOOP(type, set1, fmadd, lanes)                                              \
  type acc[12];                                                                         \
  const type m = set1(0.999999), c = set1(1e-9);                                        \
  for (int i = 0; i < 12; i++) acc[i] = set1((double)i);                                \
  for (long k = 0; k < it; k++) {                                                       \
    _Pragma("GCC unroll 12") for (int i = 0; i < 12; i++) acc[i] = fmadd(acc[i], m, c); \
  }                                                                                     \
  double sink = 0;                                                                      \
  for (int i = 0; i < 12; i++) {                                                        \
    double v[lanes];                                                                    \
    memcpy(v, &acc[i], sizeof v);                                                       \
    sink += v[0];                                                                       \
  }                                                                                     \
  return sink;

__attribute__((target("avx512f"))) static double fma512(long it) {
  FMA_LOOP(__m512d, _mm512_set1_pd, _mm512_fmadd_pd, 8)
}
__attribute__((target("avx2,fma"))) static double fma256(long it) {
  FMA_LOOP(__m256d, _mm256_set1_pd, _mm256_fmadd_pd, 4)
}

double bench_fma_peak_gflops(const char **isa) {
  __builtin_cpu_init();
  const int w512 = __builtin_cpu_supports("avx512f");
  const int w256 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  *isa = w512 ? "avx512" : w256 ? "avx2" : "";
  if (!w512 && !w256) return 0.0;
  const long it = 2000000;
  const double flops = 12.0 * 2.0 * (w512 ? 8 : 4) * (double)it;
  double best = 0.0, sink = 0.0;
  for (int r = 0; r < 5; r++) {
    const double t0 = bench_now();
    sink += w512 ? fma512(it) : fma256(it);
    const double dt = bench_now() - t0;
    if (dt > 0 && (best == 0.0 || dt < best)) best = dt;
  }
  return sink == sink && best > 0 ? flops / best * 1e-9 : 0.0;
}
#else
double bench_fma_peak_gflops(const char **isa) {
  *isa = "";
  return 0.0;
}
#endif
