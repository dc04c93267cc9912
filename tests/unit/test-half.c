/* Conversions between f64/f32 and f16/bf16 (src/base/half.c).
 *
 * The library has two independent routes to each 16-bit format: bit
 * manipulation from float, and arithmetic from double. They are checked
 * against each other on a large sample, and both against expectations
 * derived here from the definition of the formats. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "base/half.h"

/* Value of a 16-bit pattern with mbits fraction bits and exponent bias, from the definition. */
static double decode(uint16_t h, int mbits, int bias) {
  int ebits = 15 - mbits;
  unsigned e = (h >> mbits) & ((1u << ebits) - 1u), f = h & ((1u << mbits) - 1u);
  double s = (h & 0x8000u) ? -1.0 : 1.0;
  if (e == (1u << ebits) - 1u) return f ? NAN : s * INFINITY;
  if (e == 0) return s * ldexp((double)f, 1 - bias - mbits);
  return s * ldexp((double)(f | (1u << mbits)), (int)e - bias - mbits);
}

static int is_nan16(uint16_t h, int mbits) {
  uint16_t expmask = (uint16_t)(((1u << (15 - mbits)) - 1u) << mbits);
  return (h & expmask) == expmask && (h & ((1u << mbits) - 1u)) != 0;
}

static float bits_f32(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* One format under test. */
struct fmt {
  const char *name;
  int mbits, bias;
  uint16_t max_finite, inf;
  uint16_t (*from_f32)(float);
  uint16_t (*from_f64)(double);
  float (*to_f32)(uint16_t);
};

static const struct fmt f16 = {
    "f16", 10, 15, 0x7bff, 0x7c00, fea_f32_to_f16, fea_f64_to_f16, fea_f16_to_f32};
static const struct fmt bf16 = {
    "bf16", 7, 127, 0x7f7f, 0x7f80, fea_f32_to_bf16, fea_f64_to_bf16, fea_bf16_to_f32};

/* Every pattern decodes to its defined value and encodes back bit for bit
 * (NaNs stay NaNs of the same sign, payload kept, quiet bit set). */
static void check_roundtrip_all(const struct fmt *F) {
  uint16_t quiet = (uint16_t)(1u << (F->mbits - 1));
  for (uint32_t i = 0; i <= 0xffffu; i++) {
    uint16_t h = (uint16_t)i;
    float f = F->to_f32(h);
    double want = decode(h, F->mbits, F->bias);
    if (is_nan16(h, F->mbits)) {
      cr_assert(isnan(f), "%s 0x%04x: not NaN in f32", F->name, h);
      uint16_t back = F->from_f32(f), back64 = F->from_f64((double)f);
      cr_assert(is_nan16(back, F->mbits) && is_nan16(back64, F->mbits),
                "%s 0x%04x: NaN lost (0x%04x, 0x%04x)", F->name, h, back, back64);
      cr_assert_eq(back & 0x8000u, h & 0x8000u, "%s 0x%04x: NaN sign lost", F->name, h);
      cr_assert_eq(back64 & 0x8000u, h & 0x8000u, "%s 0x%04x: NaN sign lost via f64", F->name, h);
      cr_assert_eq(back | quiet, h | quiet, "%s 0x%04x: NaN payload changed to 0x%04x", F->name, h,
                   back);
      continue;
    }
    cr_assert((double)f == want && !signbit(f) == !(h & 0x8000u),
              "%s 0x%04x decodes to %a, expected %a", F->name, h, (double)f, want);
    cr_assert_eq(F->from_f32(f), h, "%s 0x%04x -> f32 -> 0x%04x", F->name, h, F->from_f32(f));
    cr_assert_eq(F->from_f64((double)f), h, "%s 0x%04x -> f64 -> 0x%04x", F->name, h,
                 F->from_f64((double)f));
  }
}

Test(half, f16_roundtrip_all_patterns) { check_roundtrip_all(&f16); }
Test(half, bf16_roundtrip_all_patterns) { check_roundtrip_all(&bf16); }

/* The float route agrees with the double route (which cannot double-round
 * a float input, as a float converts to double exactly). */
static void check_f32_vs_f64(const struct fmt *F, uint32_t lo_exp, uint32_t hi_exp) {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  const long samples = 20000000;
  for (long i = 0; i < samples; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t bits = (uint32_t)(s >> 32);
    if (i & 1) /* every other sample: exponent where the format is interesting */
      bits = (bits & 0x807fffffu) | ((lo_exp + (uint32_t)((s >> 8) % (hi_exp - lo_exp + 1))) << 23);
    float x = bits_f32(bits);
    uint16_t a = F->from_f32(x), b = F->from_f64((double)x);
    if (isnan(x)) {
      cr_assert(is_nan16(a, F->mbits) && is_nan16(b, F->mbits) && (a & 0x8000u) == (b & 0x8000u),
                "%s of NaN 0x%08x: 0x%04x vs 0x%04x", F->name, bits, a, b);
      continue;
    }
    cr_assert_eq(a, b, "%s of %a (0x%08x): float route 0x%04x, double route 0x%04x", F->name,
                 (double)x, bits, a, b);
  }
}

/* f16 exponents 2^-14..2^15 and the underflow region below: float exponents 98..143. */
Test(half, f16_float_route_matches_double_route, .timeout = 60) { check_f32_vs_f64(&f16, 98, 143); }
Test(half, bf16_float_route_matches_double_route, .timeout = 60) {
  check_f32_vs_f64(&bf16, 0, 254);
}

/* Halfway between each pair of consecutive finite values (and between the
 * largest finite and the overflow threshold's upper neighbour 2^(emax+1)),
 * and one float either side: ties go to the even pattern, the neighbours to
 * their side; both routes agree. */
static void check_halfway(const struct fmt *F) {
  for (uint16_t h = 0; h <= F->max_finite; h++) {
    double lo = decode(h, F->mbits, F->bias);
    double hi = h == F->max_finite ? ldexp(1.0, F->bias + 1)
                                   : decode((uint16_t)(h + 1), F->mbits, F->bias);
    float mid = (float)((lo + hi) / 2);
    cr_assert_eq((double)mid, (lo + hi) / 2, "midpoint not exact in float");
    uint16_t up = (uint16_t)(h + 1); /* the pattern after max_finite is infinity */
    uint16_t even = (h & 1u) ? up : h;
    const float xs[3] = {nextafterf(mid, 0.0f), mid, nextafterf(mid, INFINITY)};
    const uint16_t want[3] = {h, even, up};
    for (int k = 0; k < 3; k++) {
      if (xs[k] <= 0) continue; /* below the first midpoint (0, 2^-25) is covered elsewhere */
      for (int sign = 0; sign < 2; sign++) {
        float x = sign ? -xs[k] : xs[k];
        uint16_t w = (uint16_t)(want[k] | (sign ? 0x8000u : 0));
        cr_assert_eq(F->from_f32(x), w, "%s of %a: 0x%04x, expected 0x%04x", F->name, (double)x,
                     F->from_f32(x), w);
        cr_assert_eq(F->from_f64((double)x), w, "%s of (double)%a: 0x%04x, expected 0x%04x",
                     F->name, (double)x, F->from_f64((double)x), w);
      }
    }
  }
}

Test(half, f16_halfway_cases) { check_halfway(&f16); }
Test(half, bf16_halfway_cases) { check_halfway(&bf16); }

/* Specific encodings, worked out by hand from the formats. */
Test(half, known_encodings) {
  static const struct {
    double x;
    uint16_t f16, bf16;
  } cases[] = {
      {1.0, 0x3c00, 0x3f80},
      {-2.0, 0xc000, 0xc000},
      {0.0, 0x0000, 0x0000},
      {-0.0, 0x8000, 0x8000},    /* sign of zero kept */
      {65504.0, 0x7bff, 0x4780}, /* f16 max; bf16 1111111|111 rounds up to 2^16 */
      {65520.0, 0x7c00, 0x4780}, /* f16: halfway to 2^16, ties to even = infinity */
      {65519.0, 0x7bff, 0x4780},
      {0x1p-24, 0x0001, 0x3380},           /* smallest f16 subnormal */
      {0x1p-25, 0x0000, 0x3300},           /* halfway to it: ties to even zero */
      {0x1.8p-25, 0x0001, 0x3340},         /* above halfway: up */
      {-0x1p-26, 0x8000, 0xb280},          /* underflows to -0 */
      {0x1p-14, 0x0400, 0x3880},           /* smallest f16 normal */
      {0x1p-14 - 0x1p-25, 0x0400, 0x3880}, /* halfway from 0x03ff: to even 0x0400 */
      {1.0 / 3.0, 0x3555, 0x3eab},
      {INFINITY, 0x7c00, 0x7f80},
      {-INFINITY, 0xfc00, 0xff80},
      {0x1.fep127, 0x7c00, 0x7f7f},     /* bf16 max */
      {0x1.ffp127, 0x7c00, 0x7f80},     /* halfway above bf16 max: infinity */
      {0x1.fffffep127, 0x7c00, 0x7f80}, /* FLT_MAX */
      {0x1p-133, 0x0000, 0x0001},       /* smallest bf16 subnormal */
      {0x1p-134, 0x0000, 0x0000},       /* halfway to it */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double x = cases[i].x;
    cr_assert_eq(fea_f64_to_f16(x), cases[i].f16, "f64 %a -> f16 0x%04x", x, fea_f64_to_f16(x));
    cr_assert_eq(fea_f64_to_bf16(x), cases[i].bf16, "f64 %a -> bf16 0x%04x", x, fea_f64_to_bf16(x));
    if ((double)(float)x != x) continue; /* 1/3: only the double route applies */
    cr_assert_eq(fea_f32_to_f16((float)x), cases[i].f16, "f32 %a -> f16 0x%04x", x,
                 fea_f32_to_f16((float)x));
    cr_assert_eq(fea_f32_to_bf16((float)x), cases[i].bf16, "f32 %a -> bf16 0x%04x", x,
                 fea_f32_to_bf16((float)x));
  }
  /* NaN in, quiet NaN out, from either route. */
  cr_assert(is_nan16(fea_f64_to_f16(NAN), 10) && is_nan16(fea_f32_to_f16(NAN), 10));
  cr_assert(is_nan16(fea_f64_to_bf16(-NAN), 7) && is_nan16(fea_f32_to_bf16(-NAN), 7));
  cr_assert(fea_f64_to_bf16(-NAN) & 0x8000u);
}

/* From double, rounding happens once. Each value lies just above a halfway
 * point of the 16-bit format but is so close to it that rounding to float
 * first lands exactly on the halfway point, which then ties to even. */
Test(half, f64_rounds_once) {
  const double f16_case = 1.0 + 0x1p-11 + 0x1p-40; /* halfway 0x3c00/0x3c01 + 2^-40 */
  cr_assert_eq(fea_f64_to_f16(f16_case), 0x3c01);
  cr_assert_eq(fea_f32_to_f16((float)f16_case), 0x3c00, "the double-rounded result differs");
  const double sub_case = 0x2.8p-24 + 0x1p-60; /* halfway 0x0002/0x0003 + 2^-60 */
  cr_assert_eq(fea_f64_to_f16(sub_case), 0x0003);
  cr_assert_eq(fea_f32_to_f16((float)sub_case), 0x0002);
  const double bf16_case = 1.0 + 0x1p-8 + 0x1p-40; /* halfway 0x3f80/0x3f81 + 2^-40 */
  cr_assert_eq(fea_f64_to_bf16(bf16_case), 0x3f81);
  cr_assert_eq(fea_f32_to_bf16((float)bf16_case), 0x3f80);
  cr_assert_eq(fea_f64_to_f16(-f16_case), 0xbc01);
  cr_assert_eq(fea_f64_to_bf16(-bf16_case), 0xbf81);
}

/* Doubles of every magnitude around the formats' ranges: the result is the
 * nearest pattern (no neighbour closer; ties to even), or infinity at and
 * above the overflow threshold. */
static void check_nearest_f64(const struct fmt *F, int lo_exp, int hi_exp) {
  uint64_t s = 42;
  double threshold = ldexp(2.0 - ldexp(1.0, -(F->mbits + 1)), F->bias);
  for (long i = 0; i < 1000000; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double mant = 1.0 + (double)(s >> 12) * 0x1p-52;
    int e = lo_exp + (int)((s >> 4) % (uint64_t)(hi_exp - lo_exp + 1));
    double x = ldexp(mant, e) * ((s & 1) ? -1.0 : 1.0);
    uint16_t h = F->from_f64(x);
    cr_assert_eq(!!(h & 0x8000u), !!signbit(x), "%s of %a: sign lost", F->name, x);
    if (fabs(x) >= threshold) {
      cr_assert_eq(h & 0x7fffu, F->inf, "%s of %a: 0x%04x, expected infinity", F->name, x, h);
      continue;
    }
    double d = fabs(decode(h, F->mbits, F->bias) - x);
    for (int step = -1; step <= 1; step += 2) {
      uint16_t nb = (uint16_t)(h + step);
      if ((nb & 0x7fffu) > F->max_finite) continue;
      double dn = fabs(decode(nb, F->mbits, F->bias) - x);
      cr_assert(d < dn || (d == dn && !(h & 1u)), "%s of %a: 0x%04x, but 0x%04x is nearer", F->name,
                x, h, nb);
    }
  }
}

Test(half, f16_from_f64_is_nearest) { check_nearest_f64(&f16, -28, 16); }
Test(half, bf16_from_f64_is_nearest) { check_nearest_f64(&bf16, -136, 128); }

/* fea_convert and fea_load between host arrays of any two precisions. */
Test(half, convert_and_load) {
  const double src64[5] = {1.0 / 3.0, -2.5, 65504.0, 0x1p-24, -0.0};
  float src32[5];
  uint16_t src16[5], srcb16[5];
  for (int i = 0; i < 5; i++) {
    src32[i] = (float)src64[i];
    src16[i] = fea_f64_to_f16(src64[i]);
    srcb16[i] = fea_f64_to_bf16(src64[i]);
  }
  const void *srcs[4] = {src64, src32, src16, srcb16};
  const fea_precision precs[4] = {FEA_F64, FEA_F32, FEA_F16, FEA_BF16};
  for (int a = 0; a < 4; a++) {
    for (int b = 0; b < 4; b++) {
      unsigned char dst[5 * 8 + 8];
      memset(dst, 0xee, sizeof dst);
      fea_convert(precs[a], srcs[a], precs[b], dst, 5);
      for (int i = 0; i < 5; i++) {
        double v = fea_load(precs[a], srcs[a], i), got = fea_load(precs[b], dst, i);
        double want;
        switch (precs[b]) {
        case FEA_F64: want = v; break;
        case FEA_F32: want = (float)v; break;
        case FEA_F16:
          want = fea_f16_to_f32(a == 0 ? fea_f64_to_f16(v) : fea_f32_to_f16((float)v));
          break;
        default:
          want = fea_bf16_to_f32(a == 0 ? fea_f64_to_bf16(v) : fea_f32_to_bf16((float)v));
          break;
        }
        cr_assert(got == want && !signbit(got) == !signbit(want), "convert %d -> %d [%d]: %a vs %a",
                  a, b, i, got, want);
      }
      size_t size = precs[b] == FEA_F64 ? 8 : precs[b] == FEA_F32 ? 4 : 2;
      for (size_t k = 5 * size; k < sizeof dst; k++) cr_assert_eq(dst[k], 0xee, "wrote past n");
    }
  }
  /* n = 0 writes nothing. */
  unsigned char none[8];
  memset(none, 0xee, sizeof none);
  fea_convert(FEA_F64, src64, FEA_F16, none, 0);
  fea_convert(FEA_F64, src64, FEA_F64, none, 0);
  for (int k = 0; k < 8; k++) cr_assert_eq(none[k], 0xee);
  cr_assert_eq(fea_load(FEA_F16, src16, 0), (double)fea_f16_to_f32(0x3555));
  cr_assert_eq(fea_load(FEA_BF16, srcb16, 1), -2.5);
}

/* The reference decoder of this file, on values known by heart. */
Test(half, reference_decoder) {
  cr_assert_eq(decode(0x3c00, 10, 15), 1.0);
  cr_assert_eq(decode(0x0001, 10, 15), 0x1p-24);
  cr_assert_eq(decode(0x7bff, 10, 15), 65504.0);
  cr_assert_eq(decode(0x0001, 7, 127), 0x1p-133);
  cr_assert(isinf(decode(0x7c00, 10, 15)) && isnan(decode(0x7c01, 10, 15)));
}
