/* The assembly drivers (src/assembly/assemble.c) beside the strategies of
 * conc.h: the run configuration of a checked descriptor. */
#ifndef FEA_ASSEMBLY_ASSEMBLE_H
#define FEA_ASSEMBLY_ASSEMBLE_H

#include <feaccel/assembly.h>

#include "assembly/conc.h"

/* The configuration of a run with the checked options d on ctx (threads 0:
 * the context's); FEACCEL_TSX_FORCE_ABORT=1 forces TSX aborts (tests). */
void fea_conc_config_init(fea_conc_config *cfg, const fea_context *ctx, const fea_assembly_desc *d);

#endif
