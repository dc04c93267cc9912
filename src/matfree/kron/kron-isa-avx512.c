/* The Kronecker operator's kernels with AVX-512F: 8 lanes. Only these
 * functions carry the target; the CPU is asked at run time. */
#if defined(__x86_64__) && defined(__GNUC__)
#define KR_W 8
#define KR_TARGET __attribute__((target("avx512f")))
#define KR_ISA_NAME "avx512"
#define KR_ISA_VAR fea_kron_isa_avx512

static int has_avx512(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}
#define KR_ISA_AVAILABLE has_avx512

#include "kron-body.h"
#else
#include "kron.h"
static int never(void) { return 0; }
const fea_kron_isa fea_kron_isa_avx512 = {.name = "avx512",
                                          .available = never,
                                          .apply = NULL,
                                          .elastic = NULL};
#endif
