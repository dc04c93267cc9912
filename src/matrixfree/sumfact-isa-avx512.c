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

#include "sumfact-body.h"
#else
#include "sumfact.h"

static int never(void) { return 0; }
const sf_isa fea_sf_isa_avx512 = {.name = "avx512", .lanes = 8, .available = never};
#endif
