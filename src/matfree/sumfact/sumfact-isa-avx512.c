/* Sum-factorization kernels with AVX-512F: 8 lanes of 512-bit vectors.
 * Only these functions carry the target; the CPU is asked at run time. */
#if defined(__x86_64__) && defined(__GNUC__)
#define SF_W 8
#define SF_TARGET __attribute__((target("avx512f")))
#define SF_ISA_NAME "avx512"
#define SF_ISA_VAR avx512

static int has_avx512(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}
#define SF_ISA_AVAILABLE has_avx512

#include <immintrin.h>

#include "sumfact.h"
/* Lanes p[0], p[st], ..., p[7 st] with one vgatherdpd (st < 2^31 / 8). */
#define SF_GATHER(p, st)                                                                         \
  ((fea_sf_vd)_mm512_i32gather_pd(_mm256_mullo_epi32(_mm256_set1_epi32((int)(st)),               \
                                                     _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)), \
                                  (p), 8))

/* The same lanes for st = 2..16 from the masked loads that hold them (st for
 * st <= 8, 8 beyond), merged pairwise by independent two-source permutes
 * into disjoint lanes and
 * blended: no slower than vgatherdpd on the Zen 5 EPYC of the
 * measurements (whole 2D Q3/Q4 and 3D Q3 applies within 3 %; merging the
 * loads one after the other was 3 - 6 % slower than both), and other CPUs
 * microcode gathers or slow them down (Intel's GDS mitigation). Lane l is
 * element g = st l: load g / 8, entry g % 8; loads 2k and 2k + 1 feed
 * permute k. With st a constant, the masks and indices below fold into
 * constants. */
#define SF_UNROLL8 _Pragma("GCC unroll 8")
#define SF_UNROLL16 _Pragma("GCC unroll 16")
static inline __attribute__((always_inline)) unsigned fea_sf_load_mask(int st, int j) {
  unsigned m = 0;
  SF_UNROLL8
  for (int l = 0; l < 8; l++)
    if (st * l / 8 == j) m |= 1u << (st * l % 8);
  return m;
}

static inline __attribute__((always_inline)) unsigned fea_sf_lane_mask(int st, int k) {
  unsigned m = 0;
  SF_UNROLL8
  for (int l = 0; l < 8; l++)
    if (st * l / 16 == k) m |= 1u << l;
  return m;
}

static inline __attribute__((always_inline, target("avx512f"))) __m512i fea_sf_pair_index(int st) {
  long long q[8];
  SF_UNROLL8
  for (int l = 0; l < 8; l++) q[l] = (st * l / 8 % 2 ? 8 : 0) + st * l % 8;
  return _mm512_setr_epi64(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]);
}

static inline __attribute__((always_inline, target("avx512f"))) __m512d fea_sf_strided_n(
    const double *p, const int st) {
  const __m512i idx = fea_sf_pair_index(st);
  __m512d r = _mm512_setzero_pd();
  const int loads = 7 * st / 8 + 1; /* lane 7 is in the last */
  SF_UNROLL16
  for (int k = 0; 2 * k < loads; k++) {
    const __mmask8 m = (__mmask8)fea_sf_lane_mask(st, k);
    if (!m) continue; /* st > 8: some pairs of loads hold no lane */
    const __m512d a = _mm512_maskz_loadu_pd((__mmask8)fea_sf_load_mask(st, 2 * k), p + 16 * k);
    const __mmask8 mb = (__mmask8)fea_sf_load_mask(st, 2 * k + 1);
    const __m512d b = 2 * k + 1 < loads ? _mm512_maskz_loadu_pd(mb, p + 16 * k + 8) : a;
    const __m512d v = _mm512_maskz_permutex2var_pd(m, a, idx, b);
    r = k == 0 ? v : _mm512_mask_blend_pd(m, r, v);
  }
  return r;
}

static inline __attribute__((always_inline, target("avx512f"))) __m512d fea_sf_strided(
    const double *p, int st) {
  switch (st) { /* constant strides: the loops above unrolled, their tables constants */
  case 2: return fea_sf_strided_n(p, 2);
  case 3: return fea_sf_strided_n(p, 3);
  case 4: return fea_sf_strided_n(p, 4);
  case 5: return fea_sf_strided_n(p, 5);
  case 6: return fea_sf_strided_n(p, 6);
  case 7: return fea_sf_strided_n(p, 7);
  case 8: return fea_sf_strided_n(p, 8);
  case 9: return fea_sf_strided_n(p, 9);
  case 10: return fea_sf_strided_n(p, 10);
  case 11: return fea_sf_strided_n(p, 11);
  case 12: return fea_sf_strided_n(p, 12);
  case 13: return fea_sf_strided_n(p, 13);
  case 14: return fea_sf_strided_n(p, 14);
  case 15: return fea_sf_strided_n(p, 15);
  default: return fea_sf_strided_n(p, 16);
  }
}
#define SF_STRIDED(s, p, st) ((fea_sf_vd)fea_sf_strided((p), (int)(st)))

/* Tiles (fea_sf_state.tile_*): ST x 8 doubles from p, entry g = q + ST l slot q
 * of lane l, in vectors g / 8. Slot q gathers its lanes from vector pairs
 * (2k, 2k + 1), pair k = g / 16 at index g % 16: as for the strided loads,
 * but the vectors are loaded once for all slots. Back, vector v's entry
 * b (g = 8 v + b) comes from slot g % ST, lane g / ST: slot pairs
 * (2m, 2m + 1) at index (g % ST) % 2 * 8 + g / ST. With ST constant every
 * index and mask below is one. */
static inline __attribute__((always_inline, target("avx512f"))) __m512i fea_sf_slot_index(int st,
                                                                                          int q) {
  long long v[8];
  SF_UNROLL8
  for (int l = 0; l < 8; l++) v[l] = (q + st * l) % 16;
  return _mm512_setr_epi64(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
}

static inline __attribute__((always_inline)) unsigned fea_sf_slot_mask(int st, int q, int k) {
  unsigned m = 0;
  SF_UNROLL8
  for (int l = 0; l < 8; l++)
    if ((q + st * l) / 16 == k) m |= 1u << l;
  return m;
}

static inline __attribute__((always_inline, target("avx512f"))) __m512i fea_sf_pack_index(int st,
                                                                                          int v) {
  long long w[8];
  SF_UNROLL8
  for (int b = 0; b < 8; b++) w[b] = (8 * v + b) % st % 2 * 8 + (8 * v + b) / st;
  return _mm512_setr_epi64(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
}

static inline __attribute__((always_inline)) unsigned fea_sf_pack_mask(int st, int v, int m) {
  unsigned r = 0;
  SF_UNROLL8
  for (int b = 0; b < 8; b++)
    if ((8 * v + b) % st / 2 == m) r |= 1u << b;
  return r;
}

/* Lanes from the vector pairs (2k, 2k + 1) of src[0 .. n): where m[k] has
 * a bit, pair k at index idx. */
static inline __attribute__((always_inline, target("avx512f"))) __m512d fea_sf_merge_pairs(
    const __m512d *src, int n, __m512i idx, const unsigned m[8]) {
  __m512d r = _mm512_setzero_pd();
  int first = 1;
  SF_UNROLL8
  for (int k = 0; k < 8; k++) {
    if (!m[k]) continue;
    const __m512d a = src[2 * k], b = 2 * k + 1 < n ? src[2 * k + 1] : a;
    const __m512d t = _mm512_maskz_permutex2var_pd((__mmask8)m[k], a, idx, b);
    r = first ? t : _mm512_mask_blend_pd((__mmask8)m[k], r, t);
    first = 0;
  }
  return r;
}

static inline __attribute__((always_inline, target("avx512f"))) void fea_sf_tile_slots(
    const double *p, const unsigned char *lmask, const int st, __m512d *S) {
  __m512d V[SF_TILE_MAX_ST];
  SF_UNROLL16
  for (int v = 0; v < st; v++) V[v] = _mm512_maskz_loadu_pd((__mmask8)lmask[v], p + 8 * v);
  SF_UNROLL16
  for (int q = 0; q < st; q++) {
    unsigned m[8];
    SF_UNROLL8
    for (int k = 0; k < 8; k++) m[k] = fea_sf_slot_mask(st, q, k);
    S[q] = fea_sf_merge_pairs(V, st, fea_sf_slot_index(st, q), m);
  }
}

/* Back: the transposed sums added to the ST vectors from p; with lmask
 * (tiles that are not full) only the entries it marks, the batch's own,
 * are read and written (masked loads and stores), none of the others. */
static inline __attribute__((always_inline, target("avx512f"))) void fea_sf_tile_add(
    double *p, const unsigned char *lmask, const int st, const __m512d *S) {
  SF_UNROLL16
  for (int v = 0; v < st; v++) {
    unsigned m[8];
    SF_UNROLL8
    for (int k = 0; k < 8; k++) m[k] = fea_sf_pack_mask(st, v, k);
    const __m512d r = fea_sf_merge_pairs(S, st, fea_sf_pack_index(st, v), m);
    if (!lmask) {
      _mm512_storeu_pd(p + 8 * v, _mm512_add_pd(_mm512_loadu_pd(p + 8 * v), r));
    } else {
      const __mmask8 own = (__mmask8)lmask[v];
      const __m512d old = _mm512_maskz_loadu_pd(own, p + 8 * v);
      _mm512_mask_storeu_pd(p + 8 * v, own, _mm512_add_pd(old, r));
    }
  }
}
#define SF_TILE_SLOTS(p, lmask, st, S) fea_sf_tile_slots((p), (lmask), (st), (__m512d *)(S))
#define SF_TILE_ADD(p, st, S) fea_sf_tile_add((p), NULL, (st), (const __m512d *)(S))
#define SF_TILE_ADD_MASKED(p, lmask, st, S) \
  fea_sf_tile_add((p), (lmask), (st), (const __m512d *)(S))

#include "sumfact-body.h"
#else
#include "sumfact.h"

static int never(void) { return 0; }
const fea_sf_isa fea_sf_isa_avx512 = {.name = "avx512", .lanes = 8, .available = never};
#endif
