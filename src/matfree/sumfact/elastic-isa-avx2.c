/* Elasticity sum-factorization kernels with AVX2 + FMA: 4 lanes of 256-bit
 * vectors. Only these functions carry the target; the CPU is asked at run
 * time. */
#if defined(__x86_64__) && defined(__GNUC__)
#define EL_W 4
#define EL_TARGET __attribute__((target("avx2,fma")))
#define EL_ISA_NAME "avx2"
#define EL_ISA_VAR avx2

static int has_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#define EL_ISA_AVAILABLE has_avx2

#include "elastic-body.h"
#else
#include "elastic.h"

static int never(void) { return 0; }
const fea_sf_el_isa fea_sf_el_isa_avx2 = {.name = "avx2", .lanes = 4, .available = never};
#endif
