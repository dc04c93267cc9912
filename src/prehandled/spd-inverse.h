/* The explicit inverse of a dense SPD matrix in progress-reporting pieces
 * (src/prehandled/spd-inverse.c). */
#ifndef FEA_PREHANDLED_SPD_INVERSE_H
#define FEA_PREHANDLED_SPD_INVERSE_H

#include <feaccel/context.h>

/* inv := A^-1 for the n x n SPD a (column-major, lower triangle read; a is
 * left holding its Cholesky factor), inv zero on entry. `what` names the
 * matrix in a failure's message; `phase` is the progress phase the pieces
 * report fractions of (0 to 1 over the inversion). FEA_ERR_CANCELLED when
 * the progress callback stops it. */
fea_status fea_ph_spd_inverse(fea_context *ctx, double *a, double *inv, fea_index n,
                              const char *what, const char *phase);

#endif
