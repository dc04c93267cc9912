/* /gpu/cuda vectors against /cpu/ref: conversions bit for bit (both round to
 * nearest even, and half.h is the independent reference), arithmetic within
 * error bounds derived from each precision's unit roundoff. */
#include <string.h>

#include "cuda-test.h"

/* Odd lengths, so that no kernel gets away with assuming a multiple of a block. */
#define N 4099

/* k/64 with |k| < 256 has at most 8 significant bits and a small exponent:
 * exact in every format, so every conversion of it is exact. */
static double *representable_array(size_t n) {
  double *x = malloc(n * sizeof *x);
  cr_assert_not_null(x);
  for (size_t i = 0; i < n; i++) x[i] = (double)((long)(i * 37 % 511) - 255) / 64.0;
  return x;
}

/* Values that exercise rounding: ties in the 16-bit formats, subnormals,
 * overflow to infinity, signed zeros, plus random values across exponents. */
static double *awkward_array(size_t n) {
  /* clang-format off */
  static const double special[] = {
    0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY,
    1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11, 1.0 + 0x1p-11 + 0x1p-40,  /* f16 ties and near ties */
    1.0 + 0x1p-8, 1.0 + 3 * 0x1p-8, -(1.0 + 0x1p-8 + 0x1p-40),  /* bf16 ties and near ties */
    1.0 + 0x1p-24, 1.0 + 3 * 0x1p-24,                           /* f32 ties */
    65504.0, 65519.0, 65520.0, 65536.0, 1.0e6, -1.0e6,          /* f16 largest and overflow */
    0x1p-24, 0x1.8p-25, 0x1p-25, 0x1p-26, 0x1.4p-20, -0x1.7p-17, /* f16 subnormals, ties to 0 */
    3.3895313892515355e38, 3.4e38, 1.0e39, 0x1p-133, 0x1.8p-134, /* bf16 / f32 edges */
    1.0e-300, -1.0e300, 0.1, -0.3, 2.0 / 3.0,
  };
  /* clang-format on */
  const size_t ns = sizeof special / sizeof special[0];
  double *x = malloc(n * sizeof *x);
  cr_assert_not_null(x);
  uint64_t seed = 12345;
  for (size_t i = 0; i < n; i++) {
    if (i < ns) {
      x[i] = special[i];
    } else {
      double m = next_uniform(&seed);
      int e = (int)((next_uniform(&seed) + 1.0) * 40.0) - 50; /* 2^-50 .. 2^30 */
      x[i] = ldexp(m, e);
    }
  }
  return x;
}

/* The expected bits of x rounded to p, from the host reference. */
static void reference_bits(const double *x, size_t n, fea_precision p, void *out) {
  for (size_t i = 0; i < n; i++) {
    switch (p) {
    case FEA_F64: ((double *)out)[i] = x[i]; break;
    case FEA_F32: ((float *)out)[i] = (float)x[i]; break;
    case FEA_F16: ((uint16_t *)out)[i] = fea_f64_to_f16(x[i]); break;
    case FEA_BF16: ((uint16_t *)out)[i] = fea_f64_to_bf16(x[i]); break;
    }
  }
}

static void assert_same_bits(const void *got, const void *want, size_t n, fea_precision p,
                             const char *what) {
  size_t es = elem_size(p);
  for (size_t i = 0; i < n; i++) {
    const unsigned char *g = (const unsigned char *)got + i * es;
    const unsigned char *w = (const unsigned char *)want + i * es;
    if (memcmp(g, w, es) != 0) {
      uint64_t gb = 0, wb = 0;
      memcpy(&gb, g, es);
      memcpy(&wb, w, es);
      cr_assert_fail("%s in %s: entry %zu is 0x%llx, expected 0x%llx", what, fea_precision_name(p),
                     i, (unsigned long long)gb, (unsigned long long)wb);
    }
  }
}

Test(cuda_vector, write_read_exact_in_every_precision_pair) {
  fea_context *gpu = open_gpu();
  double *x = representable_array(N);
  void *host = malloc(N * 8), *want = malloc(N * 8), *got = malloc(N * 8);
  for (int vp = 0; vp < 4; vp++) {
    fea_vector *v = NULL;
    OK(fea_vector_create(gpu, N, all_precs[vp], &v));
    for (int hp = 0; hp < 4; hp++) {
      fea_convert(FEA_F64, x, all_precs[hp], host, N);
      OK(fea_vector_write(v, N, all_precs[hp], host));
      for (int rp = 0; rp < 4; rp++) {
        fea_convert(FEA_F64, x, all_precs[rp], want, N);
        OK(fea_vector_read(v, N, all_precs[rp], got));
        assert_same_bits(got, want, N, all_precs[rp], "write/read round trip");
      }
    }
    OK(fea_vector_destroy(&v));
  }
  free(x), free(host), free(want), free(got);
  OK(fea_context_destroy(&gpu));
}

Test(cuda_vector, rounding_matches_host_reference) {
  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  double *x = awkward_array(N);
  void *want = malloc(N * 8);
  fea_vector *x64 = vector_from(gpu, FEA_F64, x, N);
  for (int p = 1; p < 4; p++) {
    fea_precision prec = all_precs[p];
    reference_bits(x, N, prec, want);

    /* Host f64 -> device format on upload. */
    fea_vector *v = vector_from(gpu, prec, x, N);
    void *got = vector_bits(v, N, prec);
    assert_same_bits(got, want, N, prec, "f64 upload");
    free(got);

    /* Device f64 -> device format in fea_vector_copy. */
    OK(fea_vector_set_all(v, 0.0));
    OK(fea_vector_copy(x64, v));
    got = vector_bits(v, N, prec);
    assert_same_bits(got, want, N, prec, "f64 copy");
    free(got);

    /* And the same as /cpu/ref stores. */
    fea_vector *r = vector_from(ref, prec, x, N);
    got = vector_bits(r, N, prec);
    assert_same_bits(got, want, N, prec, "/cpu/ref upload");
    free(got);
    OK(fea_vector_destroy(&r));
    OK(fea_vector_destroy(&v));
  }

  /* f32 host data into the 16-bit formats: one rounding from f32. */
  float *xf = malloc(N * sizeof *xf);
  uint16_t *want16 = malloc(N * sizeof *want16);
  for (size_t i = 0; i < N; i++) xf[i] = (float)x[i];
  for (int p = 2; p < 4; p++) {
    fea_vector *v = NULL;
    OK(fea_vector_create(gpu, N, all_precs[p], &v));
    OK(fea_vector_write(v, N, FEA_F32, xf));
    for (size_t i = 0; i < N; i++)
      want16[i] = all_precs[p] == FEA_F16 ? fea_f32_to_f16(xf[i]) : fea_f32_to_bf16(xf[i]);
    void *got = vector_bits(v, N, all_precs[p]);
    assert_same_bits(got, want16, N, all_precs[p], "f32 upload");
    free(got);
    OK(fea_vector_destroy(&v));
  }
  free(xf), free(want16), free(x), free(want);
  OK(fea_vector_destroy(&x64));
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

Test(cuda_vector, copy_between_every_precision_pair) {
  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  double *x = awkward_array(N);
  for (int px = 0; px < 4; px++) {
    fea_vector *gx = vector_from(gpu, all_precs[px], x, N);
    fea_vector *rx = vector_from(ref, all_precs[px], x, N);
    for (int py = 0; py < 4; py++) {
      fea_vector *gy = NULL, *ry = NULL;
      OK(fea_vector_create(gpu, N, all_precs[py], &gy));
      OK(fea_vector_create(ref, N, all_precs[py], &ry));
      OK(fea_vector_copy(gx, gy));
      OK(fea_vector_copy(rx, ry));
      void *g = vector_bits(gy, N, all_precs[py]);
      void *r = vector_bits(ry, N, all_precs[py]);
      assert_same_bits(g, r, N, all_precs[py],
                       px == 0   ? "copy from f64"
                       : px == 1 ? "copy from f32"
                       : px == 2 ? "copy from f16"
                                 : "copy from bf16");
      free(g), free(r);
      OK(fea_vector_destroy(&gy));
      OK(fea_vector_destroy(&ry));
    }
    OK(fea_vector_destroy(&gx));
    OK(fea_vector_destroy(&rx));
  }
  free(x);
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

Test(cuda_vector, set_all_rounds_like_the_reference) {
  static const double alphas[] = {-2.5, 0.1, 1.0e5, 3.0e-6, 1.0 + 0x1p-11, -0.0, INFINITY};
  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  for (int p = 0; p < 4; p++) {
    fea_vector *g = NULL, *r = NULL;
    OK(fea_vector_create(gpu, N, all_precs[p], &g));
    OK(fea_vector_create(ref, N, all_precs[p], &r));
    for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; a++) {
      OK(fea_vector_set_all(g, alphas[a]));
      OK(fea_vector_set_all(r, alphas[a]));
      void *gb = vector_bits(g, N, all_precs[p]), *rb = vector_bits(r, N, all_precs[p]);
      assert_same_bits(gb, rb, N, all_precs[p], "set_all");
      free(gb), free(rb);
    }
    OK(fea_vector_destroy(&g));
    OK(fea_vector_destroy(&r));
  }
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

/* Element-wise results may differ by FMA versus separate multiply and add
 * (2 u_compute) and by one rounding to storage (2 u_storage) between the two
 * backends, relative to |alpha x| + |y|. */
static double elementwise_tol(fea_precision p) {
  return 2.0 * unit_roundoff(p) + 4.0 * compute_roundoff(p);
}

Test(cuda_vector, axpy_matches_reference) {
  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  double *x = random_array(N, 1), *y = random_array(N, 2);
  const double alpha = -0.75; /* exact in every format */
  for (int p = 0; p < 4; p++) {
    fea_precision prec = all_precs[p];
    fea_vector *gx = vector_from(gpu, prec, x, N), *gy = vector_from(gpu, prec, y, N);
    fea_vector *rx = vector_from(ref, prec, x, N), *ry = vector_from(ref, prec, y, N);
    double *xs = vector_values(gx, N), *ys = vector_values(gy, N);
    OK(fea_vector_axpy(gy, alpha, gx));
    OK(fea_vector_axpy(ry, alpha, rx));
    double *g = vector_values(gy, N), *r = vector_values(ry, N);
    for (size_t i = 0; i < N; i++) {
      double bound = elementwise_tol(prec) * (fabs(alpha * xs[i]) + fabs(ys[i]));
      cr_assert_leq(fabs(g[i] - r[i]), bound, "axpy in %s, entry %zu: gpu %.17g, ref %.17g",
                    fea_precision_name(prec), i, g[i], r[i]);
    }
    free(xs), free(ys), free(g), free(r);
    OK(fea_vector_destroy(&gx));
    OK(fea_vector_destroy(&gy));
    OK(fea_vector_destroy(&rx));
    OK(fea_vector_destroy(&ry));
  }
  free(x), free(y);
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

Test(cuda_vector, scale_matches_reference) {
  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  double *x = random_array(N, 3);
  const double alpha = 1.375;
  for (int p = 0; p < 4; p++) {
    fea_precision prec = all_precs[p];
    fea_vector *gx = vector_from(gpu, prec, x, N), *rx = vector_from(ref, prec, x, N);
    double *xs = vector_values(gx, N);
    OK(fea_vector_scale(gx, alpha));
    OK(fea_vector_scale(rx, alpha));
    double *g = vector_values(gx, N), *r = vector_values(rx, N);
    for (size_t i = 0; i < N; i++)
      cr_assert_leq(fabs(g[i] - r[i]), elementwise_tol(prec) * fabs(alpha * xs[i]),
                    "scale in %s, entry %zu: gpu %.17g, ref %.17g", fea_precision_name(prec), i,
                    g[i], r[i]);
    free(xs), free(g), free(r);
    OK(fea_vector_destroy(&gx));
    OK(fea_vector_destroy(&rx));
  }
  free(x);
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

/* Each side's sum of n products is within gamma_n * sum |x_i y_i| of the
 * exact value (u of the arithmetic, FP32 for 16-bit data); the result is
 * returned unrounded to storage. */
static double reduction_tol(fea_precision p, size_t n) {
  return 2.0 * (double)(n + 2) * compute_roundoff(p);
}

Test(cuda_vector, dot_and_nrm2_match_reference) {
  fea_context *gpu = open_gpu();
  fea_context *ref = open_ref();
  double *x = random_array(N, 4), *y = random_array(N, 5);
  for (int p = 0; p < 4; p++) {
    fea_precision prec = all_precs[p];
    fea_vector *gx = vector_from(gpu, prec, x, N), *gy = vector_from(gpu, prec, y, N);
    fea_vector *rx = vector_from(ref, prec, x, N), *ry = vector_from(ref, prec, y, N);
    double *xs = vector_values(gx, N), *ys = vector_values(gy, N);
    double abs_dot = 0.0;
    for (size_t i = 0; i < N; i++) abs_dot += fabs(xs[i] * ys[i]);

    double gd, rd, gn, rn;
    OK(fea_vector_dot(gx, gy, &gd));
    OK(fea_vector_dot(rx, ry, &rd));
    cr_assert_leq(fabs(gd - rd), reduction_tol(prec, N) * abs_dot,
                  "dot in %s: gpu %.17g, ref %.17g", fea_precision_name(prec), gd, rd);
    OK(fea_vector_nrm2(gx, &gn));
    OK(fea_vector_nrm2(rx, &rn));
    cr_assert_leq(fabs(gn - rn), reduction_tol(prec, N) * rn, "nrm2 in %s: gpu %.17g, ref %.17g",
                  fea_precision_name(prec), gn, rn);
    free(xs), free(ys);
    OK(fea_vector_destroy(&gx));
    OK(fea_vector_destroy(&gy));
    OK(fea_vector_destroy(&rx));
    OK(fea_vector_destroy(&ry));
  }
  free(x), free(y);
  OK(fea_context_destroy(&ref));
  OK(fea_context_destroy(&gpu));
}

/* A 16-bit dot product far above the FP16 range: the FP32 sum must come back
 * as it is, not rounded or overflowed to the storage format. */
Test(cuda_vector, half_dot_is_not_rounded_to_storage) {
  fea_context *gpu = open_gpu();
  double *x = malloc(N * sizeof *x);
  for (size_t i = 0; i < N; i++) x[i] = 100.0 + (double)(i % 7); /* exact in f16 and bf16 */
  double exact = 0.0;
  for (size_t i = 0; i < N; i++) exact += x[i] * x[i]; /* < 2^53: exact */
  for (int p = 2; p < 4; p++) {
    fea_vector *v = vector_from(gpu, all_precs[p], x, N);
    double d, nrm;
    OK(fea_vector_dot(v, v, &d));
    OK(fea_vector_nrm2(v, &nrm));
    cr_assert(isfinite(d), "dot in %s overflowed: %g", fea_precision_name(all_precs[p]), d);
    cr_assert_leq(fabs(d - exact), reduction_tol(all_precs[p], N) * exact,
                  "dot in %s: %.17g, exact %.17g", fea_precision_name(all_precs[p]), d, exact);
    cr_assert_leq(fabs(nrm - sqrt(exact)), reduction_tol(all_precs[p], N) * sqrt(exact),
                  "nrm2 in %s: %.17g, exact %.17g", fea_precision_name(all_precs[p]), nrm,
                  sqrt(exact));
    OK(fea_vector_destroy(&v));
  }
  free(x);
  OK(fea_context_destroy(&gpu));
}

Test(cuda_vector, empty_vectors) {
  fea_context *gpu = open_gpu();
  double dummy = 0.0;
  for (int p = 0; p < 4; p++) {
    fea_vector *x = NULL, *y = NULL;
    OK(fea_vector_create(gpu, 0, all_precs[p], &x));
    OK(fea_vector_create(gpu, 0, all_precs[p], &y));
    OK(fea_vector_write(x, 0, FEA_F64, &dummy));
    OK(fea_vector_read(x, 0, FEA_F64, &dummy));
    OK(fea_vector_set_all(x, 1.0));
    OK(fea_vector_copy(x, y));
    OK(fea_vector_axpy(y, 2.0, x));
    OK(fea_vector_scale(x, 3.0));
    double d = -1.0, n = -1.0;
    OK(fea_vector_dot(x, y, &d));
    OK(fea_vector_nrm2(x, &n));
    cr_assert_eq(d, 0.0);
    cr_assert_eq(n, 0.0);
    OK(fea_vector_destroy(&x));
    OK(fea_vector_destroy(&y));
  }
  OK(fea_context_destroy(&gpu));
}

/* More entries than one launch has threads (8192 blocks of 256), so the
 * grid-stride loops of the kernels must cover the rest. */
Test(cuda_vector, kernels_cover_long_vectors) {
  const fea_index n = 3 * 8192 * 256 + 17;
  fea_context *gpu = open_gpu();
  double *x = awkward_array((size_t)n);
  uint16_t *want = malloc((size_t)n * sizeof *want);
  reference_bits(x, (size_t)n, FEA_F16, want);
  fea_vector *v = vector_from(gpu, FEA_F16, x, n);
  void *got = vector_bits(v, n, FEA_F16);
  assert_same_bits(got, want, (size_t)n, FEA_F16, "long f64 upload");
  free(got);

  OK(fea_vector_set_all(v, -1.5));
  double *back = vector_values(v, n);
  for (fea_index i = 0; i < n; i++)
    cr_assert_eq(back[i], -1.5, "set_all: entry %lld is %g", (long long)i, back[i]);
  free(back), free(want), free(x);
  OK(fea_vector_destroy(&v));
  OK(fea_context_destroy(&gpu));
}
