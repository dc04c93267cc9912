/* Quadrature-point sum-factorization kernels with AVX-512F: 8 lanes of
 * 512-bit vectors. Only these functions carry the target; the CPU is asked
 * at run time. */
#if defined(__x86_64__) && defined(__GNUC__)
#define QP_W 8
#define QP_TARGET __attribute__((target("avx512f")))
#define QP_ISA_NAME "avx512"
#define QP_ISA_VAR avx512

static int has_avx512(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}
#define QP_ISA_AVAILABLE has_avx512

#include "qp-body.h"
#else
#include "qp.h"

static int never(void) { return 0; }
const fea_sf_qp_isa fea_sf_qp_isa_avx512 = {.name = "avx512", .lanes = 8, .available = never};
#endif
