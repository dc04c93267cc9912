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

/* The same lanes for st = 2..8 from st masked loads and st - 1 permutes
 * (sf_state.pidx): cheaper than vgatherdpd where gathers are microcoded. */
#include "sumfact.h"
static inline __attribute__((always_inline, target("avx512f"))) __m512d
sf_strided(const sf_state *s, const double *p, int st) {
  __m512d acc = _mm512_maskz_loadu_pd(s->pmask[st][0], p);
  for (int j = 1; j < st; j++) {
    const __m512d v = _mm512_maskz_loadu_pd(s->pmask[st][j], p + 8 * j);
    acc = _mm512_permutex2var_pd(acc, _mm512_load_si512((const void *)s->pidx[st][j]), v);
  }
  return acc;
}
#define SF_STRIDED(s, p, st) ((sf_vd)sf_strided((s), (p), (int)(st)))

#include "sumfact-body.h"
#else
#include "sumfact.h"

static int never(void) { return 0; }
const sf_isa fea_sf_isa_avx512 = {.name = "avx512", .lanes = 8, .available = never};
#endif
