/* Method M1 of the prehandled Schur-complement solver (Ruda et al. 2022, §4.1,
 * eqs. (13)-(17); docs/prehandled.md) for the prehandled
 * system A x = b, A = L^-1 S^T A_h S L^-T, on the unit square.
 *
 * With the unknowns split into C, E, I (prehandle.h), A_CC = I and A_CI = 0,
 * and with B = A_CE, E = A_EE, D = A_EI, C = A_II = diag(C_1, ..., C_1):
 *
 *   Lambda = E - D C^-1 D^T,   Pi = Lambda - B^T B,
 *   x_E = Pi^-1 (b_E - B^T b_C - D C^-1 b_I),
 *   x_C = b_C - B x_E,
 *   x_I = C^-1 (b_I - D^T x_E).
 *
 * Setup runs in FP64 on a host context (dense ops only, no hand-written
 * factorization): the explicit inverses C_1^-1 (one block for all macro
 * cells) and Pi^-1 come from potrf + potrs against the identity; then B,
 * C_1^-1, Pi^-1 and D are converted to the working precision (FP64 or FP32)
 * that the solve computes in. The C^-1 applications are one GEMM each: the
 * I part of a column is, cell by cell, exactly the block x (cells * k) matrix
 * of the reshaped V of Ruda et al. 2022, §4.1, so k right-hand sides make one GEMM with
 * cells * k columns.
 *
 * 16-bit working precisions (FEA_F16, FEA_BF16): B, C_1^-1 and Pi^-1 are
 * stored in 16 bits (rounded once from FP64; entries below the format's
 * subnormal range flush to zero, which is harmless next to the O(1) entries
 * of these matrices; an entry above FP16's 65504 is refused at setup). The
 * vector panels and the sparse D stay in FP32, and every dense product is
 * fea_dense_gemm with 16-bit inputs and FP32 output (FP32 accumulation; on the
 * CPU the 16-bit operands are widened to FP32 and multiplied by SGEMM, as
 * Debian's OpenBLAS has no sbgemm). The right-hand operand of each product
 * (a panel column: one macro-cell block of one right-hand side for C_1^-1,
 * one right-hand side for Pi^-1, B and B^T) is rounded to 16 bits only after
 * scaling it by the power of two 2^e with max|column| / 2^e in [1/2, 1): the
 * scaling is exact, nothing overflows, and only entries below 2^-25 (FP16)
 * of the column's maximum -- negligible against the format's own round-off
 * relative to the column -- can underflow; the product column is multiplied
 * back by 2^e in FP32. Without it, loads of ~1e-6 (Q1 at h = 1/1024, Ruda et al. 2022,
 * §4.1) and the small residuals of iterative refinement underflow FP16.
 * BF16 has FP32's exponent range and needs the scaling only for overflow
 * safety; it is applied the same way. */
#ifndef FEA_INTERNAL_SCHUR_M1_H
#define FEA_INTERNAL_SCHUR_M1_H

#include "linalg/matrix.h"
#include "prehandle.h"

typedef struct fea_ph_m1 fea_ph_m1;

/* Sizes and storage of a set-up solver, for tests and reports. */
typedef struct fea_ph_m1_info {
  fea_index nc, ne, ni, num_cells, block;
  fea_precision prec;
  size_t dense_bytes; /* B, the C_i^-1 and Pi^-1 in the working precision */
  int rhs_scaling;    /* whether 16-bit solves scale the GEMM operands */
  int groups;         /* distinct macro-cell blocks C_i (1 on the unit square) */
} fea_ph_m1_info;

/* Set up M1 from At = S^T A_h S (CSR, lexicographic interior nodes, as
 * fea_ph_transform_matrix gives it), its partial Cholesky f and the split s of
 * grid g. prec: FEA_F64, FEA_F32, FEA_F16 or FEA_BF16. ctx must keep host
 * memory. Fails when
 * A_CI is not zero or the macro-cell blocks differ (a grid the method does
 * not cover), or when C_1 or Pi is not positive definite. The solver keeps no
 * reference to At, f or s. */
fea_status fea_ph_m1_create(fea_context *ctx, const fea_ph_grid *g, const fea_ph_split *s,
                            const fea_matrix *At, const fea_ph_factor *f, fea_precision prec,
                            fea_ph_m1 **out);
void fea_ph_m1_destroy(fea_ph_m1 **m);

/* fea_ph_m1_create with Pi's inversion handed to invert_pi (a device backend's:
 * prehandled-device.h), which receives Pi in FP64 (ne x ne, column-major,
 * host memory it may not keep) and the working precision. The host then
 * never holds Pi^-1 nor its rounded copy: the M1 it returns has no Pi^-1 and
 * serves only fea_ph_m1_export (its own solves refuse). */
typedef fea_status (*fea_ph_m1_pi_fn)(void *user, const double *pi, fea_index ne,
                                      fea_precision prec);
fea_status fea_ph_m1_create_pi_elsewhere(fea_context *ctx, const fea_ph_grid *g,
                                         const fea_ph_split *s, const fea_matrix *At,
                                         const fea_ph_factor *f, fea_precision prec,
                                         fea_ph_m1_pi_fn invert_pi, void *user, fea_ph_m1 **out);

/* The FP64 setup up to Pi, then kappa(C_1) (the largest over the groups of
 * macro cells) and kappa(Pi) by `steps` Lanczos
 * steps on the FP64 blocks (full reorthogonalization; estimates from below),
 * without inverting Pi: a diagnostic as cheap as the setup minus its
 * O(|E|^3) inversion. Either output may be NULL; without kappa_pi it stops
 * after C_1. */
fea_status fea_ph_m1_condition(fea_context *ctx, const fea_ph_grid *g, const fea_ph_split *s,
                               const fea_matrix *At, const fea_ph_factor *f, int steps,
                               double *kappa_c, double *kappa_pi);
void fea_ph_m1_get_info(const fea_ph_m1 *m, fea_ph_m1_info *info);

/* The set-up solver's working-precision data for a device backend
 * (prehandled-device.h): fills the M1 fields of data (sizes, precisions, scaling,
 * perm, B, C_1^-1, Pi^-1, D); the pointers stay owned by m. */
struct fea_ph_m1_device_data;
void fea_ph_m1_export(const fea_ph_m1 *m, struct fea_ph_m1_device_data *data);

/* x := A^-1 b for k right-hand sides of the prehandled system: b and x are
 * num x k, column-major with leading dimension num, lexicographic node order
 * (the order fea_ph_forward works in). x may equal b. The solve allocates its
 * working-precision workspace per call (O(num k)). */
fea_status fea_ph_m1_solve(fea_ph_m1 *m, fea_index k, const double *b, double *x);

/* The nodal solve x_h = S L^-T A^-1 L^-1 S^T b_h, in place on k nodal loads
 * (num x k, leading dimension num); f is the factor the solver was set up
 * with. */
fea_status fea_ph_m1_solve_nodal(fea_ph_m1 *m, fea_ph_factor *f, fea_index k, double *bh);

/* Turn the right-hand-side scaling of the 16-bit solves off (enabled = 0) or
 * back on (the default). Off exists only to show what it prevents (tests,
 * diagnostics); FP64 and FP32 solves ignore it. */
void fea_ph_m1_set_rhs_scaling(fea_ph_m1 *m, int enabled);

/* Mixed-precision iterative refinement around M1 on the nodal system
 * A_h x_h = b_h (k columns, num x k, leading dimension num):
 *
 *   x_0 = 0;  for i = 1, 2, ...:  r = b_h - A_h x_{i-1}  (FP64, CSR A),
 *                                 x_i = x_{i-1} + S L^-T M1^-1 L^-1 S^T r,
 *
 * the residual and the update in FP64, the correction by M1 in its working
 * precision (the transforms S, L in FP64). It stops once every column has
 * ||b - A x||_2 <= rtol ||b||_2 (a column with b = 0 gets x = 0), or after
 * max_iter corrections. Each correction contracts the error by about
 * c u kappa (u the working precision's unit round-off, kappa that of the
 * prehandled system, ~10-40), so rtol = 1e-12 -- far below the O(h^2)
 * discretization error and above FP64's residual floor u_64 kappa(A_h) --
 * takes a few corrections for FP32/FP16 and more for BF16. A is the nodal
 * matrix M1 was built from (S^T A S = At), f its partial Cholesky. xh is
 * written, not read. iters (may be NULL): the corrections done (the first is
 * the plain M1 solve); relres (may be NULL): the largest relative residual
 * at the end. Returns FEA_WARN_NOT_CONVERGED, with xh the last iterate, when
 * max_iter corrections did not reach rtol. */
fea_status fea_ph_m1_refine(fea_ph_m1 *m, fea_ph_factor *f, const fea_matrix *A, fea_index k,
                            const double *bh, double *xh, double rtol, int max_iter, int *iters,
                            double *relres);

#endif
