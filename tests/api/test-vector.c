/* Vectors on each backend: creation, transfers with conversion and rounding,
 * copy and set_all. Arithmetic is in test-vector-ops.c. */
#include <stdio.h>
#include <stdlib.h>

#include "api-common.h"

/* 100003 is prime and above the 65536 entries where /cpu/threads starts a team. */
static const fea_index lengths[] = {0, 1, 1000, 100003};
#define NUM_LENGTHS 4

/* Values exactly representable in every precision (at most 8 significant
 * bits, within the f16 range), with zeros of both signs, an f16 subnormal and
 * infinities; index 7 of every 16 holds a NaN when with_nan. */
static double exact_value(fea_index i, int with_nan) {
  switch (i % 16) {
  case 0: return 0.0;
  case 1: return -0.0;
  case 2: return 61440.0;  /* 0x1.ep15: largest exact in both f16 and bf16 */
  case 3: return -0x1p-24; /* smallest f16 subnormal */
  case 4: return 0x3p-20;  /* f16 subnormal, bf16 normal */
  case 5: return INFINITY;
  case 6: return -INFINITY;
  case 7: return with_nan ? NAN : 0.5;
  default: {
    int m = (int)((i * 37) % 255) - 127, e = (int)(i % 13) - 6;
    return ldexp(m, e);
  }
  }
}

static void *host_array(fea_precision p, fea_index n) {
  void *buf = malloc((size_t)(n ? n : 1) * elem_bytes(p));
  cr_assert_not_null(buf);
  return buf;
}

static void assert_same_value(double got, double want, const char *what, fea_index i) {
  if (isnan(want)) {
    cr_assert(isnan(got), "%s[%lld]: expected NaN, got %a", what, (long long)i, got);
    return;
  }
  cr_assert(got == want && !signbit(got) == !signbit(want), "%s[%lld]: expected %a, got %a", what,
            (long long)i, want, got);
}

BACKEND_TEST(vector, create_zeroed) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  for (int p = 0; p < NUM_PRECISIONS; p++) {
    for (int l = 0; l < NUM_LENGTHS; l++) {
      fea_index n = lengths[l];
      fea_vector *v = NULL;
      OK(fea_vector_create(ctx, n, all_precisions[p], &v));
      cr_assert_not_null(v);
      fea_index len = -1;
      fea_precision prec = (fea_precision)-1;
      OK(fea_vector_get_length(v, &len));
      OK(fea_vector_get_precision(v, &prec));
      cr_assert_eq(len, n);
      cr_assert_eq(prec, all_precisions[p]);
      unsigned char *raw = host_array(all_precisions[p], n);
      memset(raw, 0xff, (size_t)(n ? n : 1) * elem_bytes(all_precisions[p]));
      OK(fea_vector_read(v, n, all_precisions[p], raw));
      for (size_t b = 0; b < (size_t)n * elem_bytes(all_precisions[p]); b++)
        cr_assert_eq(raw[b], 0, "%s n=%lld: byte %zu is not zero", fea_precision_name(prec),
                     (long long)n, b);
      free(raw);
      OK(fea_vector_destroy(&v));
      cr_assert_null(v);
    }
  }
  OK(fea_vector_destroy(NULL));
  OK(fea_context_destroy(&ctx));
}

/* Write in host precision hp into a vector of precision vp, read back in hp
 * (bit for bit, NaN aside) and in f64 (value for value). */
BACKEND_TEST(vector, write_read_every_pair) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  static const fea_index ns[] = {1000, 100003};
  for (int l = 0; l < 2; l++) {
    fea_index n = ns[l];
    double *vals = malloc((size_t)n * sizeof *vals), *back = malloc((size_t)n * sizeof *back);
    cr_assert(vals && back);
    for (fea_index i = 0; i < n; i++) vals[i] = exact_value(i, 1);
    for (int h = 0; h < NUM_PRECISIONS; h++) {
      fea_precision hp = all_precisions[h];
      void *in = host_array(hp, n), *out = host_array(hp, n);
      for (fea_index i = 0; i < n; i++) host_store(hp, in, (size_t)i, vals[i]);
      for (int p = 0; p < NUM_PRECISIONS; p++) {
        fea_precision vp = all_precisions[p];
        fea_vector *v = NULL;
        OK(fea_vector_create(ctx, n, vp, &v));
        OK(fea_vector_write(v, n, hp, in));
        memset(out, 0x77, (size_t)n * elem_bytes(hp));
        OK(fea_vector_read(v, n, hp, out));
        char what[64];
        snprintf(what, sizeof what, "%s -> %s -> %s", fea_precision_name(hp),
                 fea_precision_name(vp), fea_precision_name(hp));
        for (fea_index i = 0; i < n; i++) {
          if (isnan(vals[i])) {
            cr_assert(isnan(host_load(hp, out, (size_t)i)), "%s[%lld]: NaN lost", what,
                      (long long)i);
          } else {
            size_t b = elem_bytes(hp);
            cr_assert(memcmp((char *)in + (size_t)i * b, (char *)out + (size_t)i * b, b) == 0,
                      "%s[%lld]: %a came back as %a", what, (long long)i, vals[i],
                      host_load(hp, out, (size_t)i));
          }
        }
        OK(fea_vector_read(v, n, FEA_F64, back));
        snprintf(what, sizeof what, "%s -> %s -> f64", fea_precision_name(hp),
                 fea_precision_name(vp));
        for (fea_index i = 0; i < n; i++) assert_same_value(back[i], vals[i], what, i);
        OK(fea_vector_destroy(&v));
      }
      free(in);
      free(out);
    }
    free(vals);
    free(back);
  }
  OK(fea_context_destroy(&ctx));
}

/* One value written from f64 and read back raw from a 16-bit vector. */
static uint16_t stored16(fea_context *ctx, fea_precision vp, double x) {
  fea_vector *v = NULL;
  OK(fea_vector_create(ctx, 1, vp, &v));
  OK(fea_vector_write(v, 1, FEA_F64, &x));
  uint16_t h = 0;
  OK(fea_vector_read(v, 1, vp, &h));
  OK(fea_vector_destroy(&v));
  return h;
}

/* h is the correctly rounded (nearest, ties to even) encoding of x: no
 * neighbour is closer, and on a tie h is even. Decoding is first principles. */
static void assert_nearest16(uint16_t h, double x, int mbits, int bias) {
  double d = fabs(decode16(h, mbits, bias) - x);
  for (int step = -1; step <= 1; step += 2) {
    uint16_t nb = (uint16_t)(h + step);
    if ((nb & 0x7fffu) >= (uint16_t)(((1u << (15 - mbits)) - 1u) << mbits)) continue;
    double dn = fabs(decode16(nb, mbits, bias) - x);
    cr_assert(d < dn || (d == dn && !(h & 1u)), "0x%04x is not the nearest to %a (0x%04x is)", h, x,
              nb);
  }
}

BACKEND_TEST(vector, rounding_from_f64) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  /* 1/3 = 1.0101...b x 2^-2. f16 keeps 10 fraction bits 0101010101 (0x155),
   * the rest 0101... is 1/3 ulp: down, exponent 13 -> 0x3555. bf16 keeps
   * 7 bits 0101010, the rest 1010... is 2/3 ulp: up to 0101011 (0x2b),
   * exponent 125 -> 0x3eab. */
  cr_assert_eq(stored16(ctx, FEA_F16, 1.0 / 3.0), 0x3555);
  cr_assert_eq(stored16(ctx, FEA_BF16, 1.0 / 3.0), 0x3eab);
  cr_assert_eq(stored16(ctx, FEA_F16, -1.0 / 3.0), 0xb555);
  cr_assert_eq(stored16(ctx, FEA_BF16, -1.0 / 3.0), 0xbeab);
  assert_nearest16(0x3555, 1.0 / 3.0, 10, 15);
  assert_nearest16(0x3eab, 1.0 / 3.0, 7, 127);
  /* Rounded once from double: 1 + 2^-11 + 2^-40 lies above the halfway point
   * 1 + 2^-11 between 0x3c00 and 0x3c01, so it goes up; through float it
   * would first land on the halfway point and tie to even 0x3c00. */
  cr_assert_eq(stored16(ctx, FEA_F16, 1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
  cr_assert_eq(stored16(ctx, FEA_BF16, 1.0 + 0x1p-8 + 0x1p-40), 0x3f81);
  /* Exact halfway points tie to even. */
  cr_assert_eq(stored16(ctx, FEA_F16, 1.0 + 0x1p-11), 0x3c00);
  cr_assert_eq(stored16(ctx, FEA_F16, 1.0 + 3 * 0x1p-11), 0x3c02);
  /* Overflow threshold of f16: 65520 is halfway between 65504 and 2^16. */
  cr_assert_eq(stored16(ctx, FEA_F16, 65520.0), 0x7c00);
  cr_assert_eq(stored16(ctx, FEA_F16, 65519.99), 0x7bff);
  cr_assert_eq(stored16(ctx, FEA_F16, 0x1p-25), 0x0000);
  cr_assert_eq(stored16(ctx, FEA_F16, 0x1.8p-25), 0x0001);

  /* f64 -> f32 rounds to nearest: float(1/3) = 0x3eaaaaab. */
  fea_vector *v = NULL;
  OK(fea_vector_create(ctx, 1, FEA_F32, &v));
  double third = 1.0 / 3.0;
  OK(fea_vector_write(v, 1, FEA_F64, &third));
  uint32_t bits = 0;
  OK(fea_vector_read(v, 1, FEA_F32, &bits));
  cr_assert_eq(bits, 0x3eaaaaabu, "got 0x%08x", bits);
  OK(fea_vector_destroy(&v));
  OK(fea_context_destroy(&ctx));
}

/* Many values through each 16-bit format: every stored result is the nearest. */
BACKEND_TEST(vector, rounding_is_nearest) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  const fea_index n = 100003;
  double *x = malloc((size_t)n * sizeof *x);
  uint16_t *h = malloc((size_t)n * sizeof *h);
  cr_assert(x && h);
  uint64_t s = 12345;
  for (fea_index i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double mant = (double)(s >> 11) * 0x1p-53; /* [0, 1) */
    x[i] = ldexp(1.0 + mant, (int)((s >> 3) % 44) - 28) * ((s & 1) ? -1 : 1);
  }
  static const struct {
    fea_precision p;
    int mbits, bias;
  } fmts[] = {{FEA_F16, 10, 15}, {FEA_BF16, 7, 127}};
  for (int f = 0; f < 2; f++) {
    fea_vector *v = NULL;
    OK(fea_vector_create(ctx, n, fmts[f].p, &v));
    OK(fea_vector_write(v, n, FEA_F64, x));
    OK(fea_vector_read(v, n, fmts[f].p, h));
    for (fea_index i = 0; i < n; i++) {
      if (fabs(x[i]) >= 65520.0 && fmts[f].p == FEA_F16) {
        cr_assert_eq(h[i] & 0x7fffu, 0x7c00u, "%a did not overflow to infinity", x[i]);
        continue;
      }
      assert_nearest16(h[i], x[i], fmts[f].mbits, fmts[f].bias);
      cr_assert_eq(!(h[i] & 0x8000u), !signbit(x[i]), "sign of %a lost", x[i]);
    }
    OK(fea_vector_destroy(&v));
  }
  free(x);
  free(h);
  OK(fea_context_destroy(&ctx));
}

BACKEND_TEST(vector, copy_every_pair) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  static const fea_index ns[] = {0, 1, 100003};
  for (int l = 0; l < 3; l++) {
    fea_index n = ns[l];
    double *vals = malloc((size_t)(n + 1) * sizeof *vals),
           *back = malloc((size_t)(n + 1) * sizeof *back);
    cr_assert(vals && back);
    for (fea_index i = 0; i < n; i++) vals[i] = exact_value(i, 1);
    for (int a = 0; a < NUM_PRECISIONS; a++) {
      for (int b = 0; b < NUM_PRECISIONS; b++) {
        fea_vector *x = NULL, *y = NULL;
        OK(fea_vector_create(ctx, n, all_precisions[a], &x));
        OK(fea_vector_create(ctx, n, all_precisions[b], &y));
        OK(fea_vector_write(x, n, FEA_F64, vals));
        OK(fea_vector_set_all(y, 7.0));
        OK(fea_vector_copy(x, y));
        OK(fea_vector_read(y, n, FEA_F64, back));
        char what[32];
        snprintf(what, sizeof what, "copy %s -> %s", fea_precision_name(all_precisions[a]),
                 fea_precision_name(all_precisions[b]));
        for (fea_index i = 0; i < n; i++) assert_same_value(back[i], vals[i], what, i);
        /* The source is untouched. */
        OK(fea_vector_read(x, n, FEA_F64, back));
        for (fea_index i = 0; i < n; i++) assert_same_value(back[i], vals[i], "copy source", i);
        OK(fea_vector_destroy(&x));
        OK(fea_vector_destroy(&y));
      }
    }
    free(vals);
    free(back);
  }
  OK(fea_context_destroy(&ctx));
}

BACKEND_TEST(vector, copy_rounds) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  const double vals[] = {1.0 / 3.0, 1.0 + 0x1p-11 + 0x1p-40};
  static const struct {
    fea_precision from, to;
    uint16_t want[2];
  } cases[] = {
      /* From f64: rounded once (see rounding_from_f64). */
      {FEA_F64, FEA_F16, {0x3555, 0x3c01}},
      {FEA_F64, FEA_BF16, {0x3eab, 0x3f80}},
      /* From f32: float(1/3) = 0x3eaaaaab; float(1 + 2^-11 + 2^-40) = 1 + 2^-11, a tie. */
      {FEA_F32, FEA_F16, {0x3555, 0x3c00}},
      {FEA_F32, FEA_BF16, {0x3eab, 0x3f80}},
      /* f16 0x3555 = 1.0101010101b x 2^-2 -> bf16 0101010|101: up to 0x3eab;
     * f16 0x3c01 = 1 + 2^-10 is below half a bf16 ulp (2^-8) above 1. */
      {FEA_F16, FEA_BF16, {0x3eab, 0x3f80}},
      /* bf16 0x3eab = 1.0101011b x 2^-2 is exact in f16: 0101011000 -> 0x3558. */
      {FEA_BF16, FEA_F16, {0x3558, 0x3c00}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fea_vector *x = NULL, *y = NULL;
    OK(fea_vector_create(ctx, 2, cases[c].from, &x));
    OK(fea_vector_create(ctx, 2, cases[c].to, &y));
    OK(fea_vector_write(x, 2, FEA_F64, vals));
    OK(fea_vector_copy(x, y));
    uint16_t got[2];
    OK(fea_vector_read(y, 2, cases[c].to, got));
    for (int i = 0; i < 2; i++)
      cr_assert_eq(got[i], cases[c].want[i], "copy %s -> %s of %a: 0x%04x, expected 0x%04x",
                   fea_precision_name(cases[c].from), fea_precision_name(cases[c].to), vals[i],
                   got[i], cases[c].want[i]);
    OK(fea_vector_destroy(&x));
    OK(fea_vector_destroy(&y));
  }
  OK(fea_context_destroy(&ctx));
}

BACKEND_TEST(vector, set_all) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  for (int l = 0; l < NUM_LENGTHS; l++) {
    fea_index n = lengths[l];
    double *back = malloc((size_t)(n + 1) * sizeof *back);
    uint16_t *raw = malloc((size_t)(n + 1) * sizeof *raw);
    cr_assert(back && raw);
    for (int p = 0; p < NUM_PRECISIONS; p++) {
      fea_precision vp = all_precisions[p];
      fea_vector *v = NULL;
      OK(fea_vector_create(ctx, n, vp, &v));
      static const double exact[] = {-2.5, 0.0, -0.0, INFINITY, -INFINITY, 61440.0};
      for (size_t k = 0; k < sizeof exact / sizeof exact[0]; k++) {
        OK(fea_vector_set_all(v, exact[k]));
        OK(fea_vector_read(v, n, FEA_F64, back));
        for (fea_index i = 0; i < n; i++) assert_same_value(back[i], exact[k], "set_all", i);
      }
      /* A value that must be rounded: once, to the nearest of the format. */
      OK(fea_vector_set_all(v, 1.0 / 3.0));
      if (vp == FEA_F16 || vp == FEA_BF16) {
        OK(fea_vector_read(v, n, vp, raw));
        uint16_t want = vp == FEA_F16 ? 0x3555 : 0x3eab;
        for (fea_index i = 0; i < n; i++)
          cr_assert_eq(raw[i], want, "%s[%lld] = 0x%04x", fea_precision_name(vp), (long long)i,
                       raw[i]);
      } else {
        OK(fea_vector_read(v, n, FEA_F64, back));
        double want = vp == FEA_F64 ? 1.0 / 3.0 : (double)(float)(1.0 / 3.0);
        for (fea_index i = 0; i < n; i++) assert_same_value(back[i], want, "set_all(1/3)", i);
      }
      OK(fea_vector_destroy(&v));
    }
    free(back);
    free(raw);
  }
  OK(fea_context_destroy(&ctx));
}
