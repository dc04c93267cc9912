/* Lanczos estimates of the extreme eigenvalues of an SPD operator
 * (src/linalg/lanczos.c): for condition numbers and smoother bounds. */
#ifndef FEA_INTERNAL_LANCZOS_H
#define FEA_INTERNAL_LANCZOS_H

#include <stdint.h>

#include "matrix.h"

/* y := op(x) for an SPD operator of size n. */
typedef fea_status (*fea_spd_apply_fn)(void *user, const double *x, double *y);

/* Extreme eigenvalue estimates of an SPD operator from `steps` Lanczos steps
 * (fewer on breakdown) from a pseudo-random start (seed). reorth: full
 * reorthogonalization against all stored vectors (steps * n doubles); without
 * it the extreme Ritz values still converge, ghosts only repeat them. The
 * estimates lie inside the spectrum, so kappa is approached from below. */
fea_status fea_lanczos_extremes(fea_context *ctx, fea_index n, fea_spd_apply_fn apply, void *user,
                                int steps, int reorth, uint64_t seed, double *lambda_min,
                                double *lambda_max);
/* The same for a CSR matrix. */
fea_status fea_lanczos_extremes_csr(const fea_matrix *A, int steps, int reorth, uint64_t seed,
                                    double *lambda_min, double *lambda_max);

#endif
