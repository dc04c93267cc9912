/* Elasticity sum-factorization kernels with AVX-512F: 8 lanes of 512-bit
 * vectors. Only these functions carry the target; the CPU is asked at run
 * time. */
#if defined(__x86_64__) && defined(__GNUC__)
#define EL_W 8
#define EL_TARGET __attribute__((target("avx512f")))
#define EL_ISA_NAME "avx512"
#define EL_ISA_VAR avx512

static int has_avx512(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}
#define EL_ISA_AVAILABLE has_avx512

#include "elastic-body.h"
#else
#include "elastic.h"

static int never(void) { return 0; }
const fea_sf_el_isa fea_sf_el_isa_avx512 = {.name = "avx512", .lanes = 8, .available = never};
#endif
