/* The Kronecker operator's kernels without an instruction-set target: two
 * lanes (SSE2 on x86-64, whatever the compiler makes elsewhere). */
#define KR_W 2
#define KR_TARGET
#define KR_ISA_NAME "baseline"
#define KR_ISA_VAR fea_kron_isa_baseline

static int always(void) { return 1; }
#define KR_ISA_AVAILABLE always

#include "kron-body.h"
