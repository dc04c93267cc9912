/* Sum-factorization kernels for any CPU: 4 lanes of GCC vector extensions,
 * lowered to what the build's baseline has (SSE2 pairs on x86-64). */
#define SF_W 4
#define SF_TARGET
#define SF_ISA_NAME "baseline"
#define SF_ISA_VAR baseline

static int always(void) { return 1; }
#define SF_ISA_AVAILABLE always

#include "sumfact-body.h"
