/* The Kronecker operator's kernels with AVX2 and FMA: 4 lanes. Only these
 * functions carry the target; the CPU is asked at run time. */
#if defined(__x86_64__) && defined(__GNUC__)
#define KR_W 4
#define KR_TARGET __attribute__((target("avx2,fma")))
#define KR_ISA_NAME "avx2"
#define KR_ISA_VAR fea_kron_isa_avx2

static int has_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#define KR_ISA_AVAILABLE has_avx2

#include "kron-body.h"
#else
#include "kron.h"
static int never(void) { return 0; }
const fea_kron_isa fea_kron_isa_avx2 = {.name = "avx2",
                                        .available = never,
                                        .apply = NULL,
                                        .elastic = NULL};
#endif
