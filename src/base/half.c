/* Conversions to and from the 16-bit formats, round to nearest even.
 *
 * Two independent routes exist on purpose: bit manipulation for float
 * sources (fast, used in bulk) and exact arithmetic on doubles for double
 * sources (no double rounding through float). The unit tests check one
 * against the other. */
#include <math.h>
#include <string.h>

#include "half.h"

static uint32_t f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static float bits_f32(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

uint16_t fea_f32_to_f16(float x) {
  uint32_t u = f32_bits(x);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* quiet NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to infinity */
  if (a <= 0x33000000u) return sign;                       /* <= 2^-25 ties to zero */
  if (a < 0x38800000u) {                                   /* half subnormal */
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    unsigned shift = 126u - (a >> 23);
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) r++;
    return (uint16_t)(sign | r);
  }
  uint32_t r = a - 0x38000000u; /* rebias the exponent from 127 to 15 */
  uint32_t h = r >> 13, rem = r & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
  return (uint16_t)(sign | h);
}

float fea_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return bits_f32(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return bits_f32(sign);
    e = 113; /* normalize the subnormal */
    while (!(m & 0x400u)) {
      m <<= 1;
      e--;
    }
    return bits_f32(sign | (e << 23) | ((m & 0x3ffu) << 13));
  }
  return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

uint16_t fea_f32_to_bf16(float x) {
  uint32_t u = f32_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

float fea_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

/* Round to nearest, ties to even, independent of the FPU rounding mode. */
static uint32_t round_half_even(double q) {
  double fl = floor(q), diff = q - fl;
  uint32_t r = (uint32_t)fl;
  if (diff > 0.5 || (diff == 0.5 && (r & 1u))) r++;
  return r;
}

/* A binary format with mbits stored significand bits and exponent bias emax. */
static uint16_t f64_to_small(double d, int mbits, int emax) {
  const uint16_t sign = signbit(d) ? 0x8000u : 0;
  const uint16_t expmask = (uint16_t)(((1u << (15 - mbits)) - 1u) << mbits);
  const int emin = 1 - emax;
  if (isnan(d)) return (uint16_t)(sign | expmask | (1u << (mbits - 1)));
  double a = fabs(d);
  if (a >= ldexp(2.0 - ldexp(1.0, -(mbits + 1)), emax)) return (uint16_t)(sign | expmask);
  if (a <
      ldexp(1.0,
            emin)) /* subnormal: units of 2^(emin - mbits); 2^mbits encodes the smallest normal */
    return (uint16_t)(sign | round_half_even(ldexp(a, mbits - emin)));
  int ex;
  frexp(a, &ex);
  int e = ex - 1;
  uint32_t r = round_half_even(ldexp(a, mbits - e)); /* in [2^mbits, 2^(mbits+1)] */
  if (r == (1u << (mbits + 1))) {
    r >>= 1;
    e++;
  }
  return (uint16_t)(sign | ((uint32_t)(e + emax) << mbits) | (r - (1u << mbits)));
}

uint16_t fea_f64_to_f16(double x) { return f64_to_small(x, 10, 15); }
uint16_t fea_f64_to_bf16(double x) { return f64_to_small(x, 7, 127); }

double fea_load(fea_precision prec, const void *data, fea_index i) {
  switch (prec) {
  case FEA_F64: return ((const double *)data)[i];
  case FEA_F32: return ((const float *)data)[i];
  case FEA_F16: return fea_f16_to_f32(((const uint16_t *)data)[i]);
  case FEA_BF16: return fea_bf16_to_f32(((const uint16_t *)data)[i]);
  }
  return NAN;
}

static uint16_t to_f16(fea_precision from, const void *src, fea_index i) {
  if (from == FEA_F64) return fea_f64_to_f16(((const double *)src)[i]);
  return fea_f32_to_f16((float)fea_load(from, src, i)); /* f32 and bf16 are exact in float */
}

static uint16_t to_bf16(fea_precision from, const void *src, fea_index i) {
  if (from == FEA_F64) return fea_f64_to_bf16(((const double *)src)[i]);
  return fea_f32_to_bf16((float)fea_load(from, src, i)); /* f32 and f16 are exact in float */
}

void fea_convert(fea_precision from, const void *src, fea_precision to, void *dst, fea_index n) {
  if (from == to) {
    size_t size = from == FEA_F64 ? 8 : from == FEA_F32 ? 4 : 2;
    if (n > 0) memmove(dst, src, (size_t)n * size);
    return;
  }
  switch (to) {
  case FEA_F64:
    for (fea_index i = 0; i < n; i++) ((double *)dst)[i] = fea_load(from, src, i);
    break;
  case FEA_F32:
    for (fea_index i = 0; i < n; i++) ((float *)dst)[i] = (float)fea_load(from, src, i);
    break;
  case FEA_F16:
    for (fea_index i = 0; i < n; i++) ((uint16_t *)dst)[i] = to_f16(from, src, i);
    break;
  case FEA_BF16:
    for (fea_index i = 0; i < n; i++) ((uint16_t *)dst)[i] = to_bf16(from, src, i);
    break;
  }
}
