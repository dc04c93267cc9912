/* Quadrature-point sum-factorization kernels for any CPU: 4 lanes of GCC
 * vector extensions, lowered to what the build's baseline has. */
#define QP_W 4
#define QP_TARGET
#define QP_ISA_NAME "baseline"
#define QP_ISA_VAR baseline

static int always(void) { return 1; }
#define QP_ISA_AVAILABLE always

#include "qp-body.h"
