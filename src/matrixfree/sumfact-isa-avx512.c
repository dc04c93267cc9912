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

#include "sumfact-body.h"
#else
#include "sumfact.h"

static int never(void) { return 0; }
const sf_isa fea_sf_isa_avx512 = {.name = "avx512", .lanes = 8, .available = never};
#endif
