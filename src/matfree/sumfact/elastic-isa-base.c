/* Elasticity sum-factorization kernels for any CPU: 4 lanes of GCC vector
 * extensions, lowered to what the build's baseline has. */
#define EL_W 4
#define EL_TARGET
#define EL_ISA_NAME "baseline"
#define EL_ISA_VAR baseline

static int always(void) { return 1; }
#define EL_ISA_AVAILABLE always

#include "elastic-body.h"
