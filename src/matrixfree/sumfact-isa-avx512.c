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
/* Lanes p[0], p[st], ..., p[7 st] with one vgatherdpd (st < 2^31 / 8). */
#define SF_GATHER(p, st)                                                                      \
  ((sf_vd)_mm512_i32gather_pd(                                                                \
      _mm256_mullo_epi32(_mm256_set1_epi32((int)(st)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)), \
      (p), 8))

/* The same lanes for st = 2..8 from st masked loads, merged pairwise by
 * ceil(st / 2) independent two-source permutes into disjoint lanes and
 * blended (sf_state.qidx, qmask): cheaper than vgatherdpd where gathers
 * are microcoded (on the Zen 5 EPYC of the measurements a gather was
 * 3 - 6 % faster in whole 2D Q3/Q4 and 3D Q3 applies, but 25 % slower in
 * isolation, and other CPUs microcode it), with a shorter dependency chain
 * than merging the loads one after the other (1 - 4 % faster applies). */
#include "sumfact.h"
static inline __attribute__((always_inline, target("avx512f"))) __m512d
sf_strided_n(const sf_state *s, const double *p, const int st) {
  __m512d r = _mm512_setzero_pd();
  for (int k = 0; 2 * k < st; k++) {
    const __m512d a = _mm512_maskz_loadu_pd(s->pmask[st][2 * k], p + 16 * k);
    const __m512d b = 2 * k + 1 < st ? _mm512_maskz_loadu_pd(s->pmask[st][2 * k + 1], p + 16 * k + 8)
                                     : a;
    const __m512d v = _mm512_maskz_permutex2var_pd(
        s->qmask[st][k], a, _mm512_load_si512((const void *)s->qidx[st][k]), b);
    r = k == 0 ? v : _mm512_mask_blend_pd(s->qmask[st][k], r, v);
  }
  return r;
}

static inline __attribute__((always_inline, target("avx512f"))) __m512d
sf_strided(const sf_state *s, const double *p, int st) {
  switch (st) { /* constant strides: the loop above unrolled */
  case 2: return sf_strided_n(s, p, 2);
  case 3: return sf_strided_n(s, p, 3);
  case 4: return sf_strided_n(s, p, 4);
  case 5: return sf_strided_n(s, p, 5);
  case 6: return sf_strided_n(s, p, 6);
  case 7: return sf_strided_n(s, p, 7);
  default: return sf_strided_n(s, p, 8);
  }
}
#define SF_STRIDED(s, p, st) ((sf_vd)sf_strided((s), (p), (int)(st)))

#include "sumfact-body.h"
#else
#include "sumfact.h"

static int never(void) { return 0; }
const sf_isa fea_sf_isa_avx512 = {.name = "avx512", .lanes = 8, .available = never};
#endif
