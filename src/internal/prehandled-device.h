/* Method M1 of the prehandled solver on a device-memory backend
 * (docs/prehandled.md, "On the GPU").
 *
 * The setup stays on the host (src/prehandled/prehandled-solver-kind.c: FP64 blocks,
 * inverses, conversion to the working precision by fea_ph_m1_create on an
 * internal host context), except Pi's inversion where the backend has
 * pi_inverse; a backend that keeps device memory and fills the
 * `m1` slot of its vtable receives the result once (fea_ph_m1_device_data: host
 * arrays, read during create only) and then runs every solve on the device:
 * the nodal right-hand sides go up, the transforms L^-1 S^T, the M1 steps
 * (15)-(17) and S L^-T run there, the nodal solutions come back. With
 * refinement the residuals b - A_h x are formed on the device in FP64 too.
 * The arithmetic is that of the CPU M1 (schur-m1.h) in the same precision:
 * the same working-precision matrices (bit for bit), the same panels, the
 * same 16-bit column scaling; only summation orders differ. */
#ifndef FEA_INTERNAL_M1_DEVICE_H
#define FEA_INTERNAL_M1_DEVICE_H

#include "linalg/dense.h"
#include "linalg/matrix.h"
#include "prehandled/prehandle.h"
#include "prehandled/refine-rule.h"

typedef struct fea_ph_m1_device fea_ph_m1_device;
/* Pi^-1 formed on the device (pi_inverse), held until create takes it. */
typedef struct fea_ph_m1_device_pinv fea_ph_m1_device_pinv;

/* What the host setup hands over. Every pointer is host memory, owned by the
 * caller and read only during create. */
typedef struct fea_ph_m1_device_data {
  fea_ph_grid grid;
  fea_index nc, ne, ni, cells, blk;
  fea_precision prec;                 /* of B, C_1^-1, Pi^-1: FP64, FP32, FP16 or BF16 */
  fea_precision vprec;                /* of the panels and D: prec, or FP32 when prec is 16-bit */
  fea_compute compute;                /* FEA_COMPUTE_TF32: FP32 products on TF32 tensor cores */
  int scale_rhs;                      /* 16-bit: power-of-two scaling of each GEMM operand column */
  const fea_index *perm;              /* grid.num: C/E/I position -> lexicographic node */
  const void *b;                      /* nc x ne, prec, column-major: B = A_CE */
  const void *cinv;                   /* blk x blk, prec: C_1^-1 */
  const void *pinv;                   /* ne x ne, prec: Pi^-1 (NULL when pinv_device holds it) */
  fea_ph_m1_device_pinv *pinv_device; /* Pi^-1 already on the device (pi_inverse), or NULL;
                                      create takes it over and frees it whatever it returns */
  const fea_matrix *d;                /* ne x ni: the pattern of D = A_EI (its values unused) */
  const void *dval;                   /* d's nnz values in vprec */
  const double *l0;        /* nc x nc, column-major: lower Cholesky factor of the coarse block */
  const double *sqrt_diag; /* grid.num: sqrt(diag S^T A_h S), 0 at coarse nodes */
  const fea_matrix *A;     /* the nodal A_h (FP64 CSR, grid.num square), for refinement */
} fea_ph_m1_device_data;

struct fea_ph_m1_device_ops {
  /* The host context the solver's setup runs on (the transforms, the
   * partial Cholesky, C_1^-1 and Pi), whose errors the family relays. */
  fea_status (*setup_context)(fea_context *ctx, fea_context **host);
  /* Upload everything (checks the free device memory first and refuses with
   * FEA_ERR_OUT_OF_MEMORY naming the sizes). The object holds a reference on
   * ctx. */
  fea_status (*create)(fea_context *ctx, const fea_ph_m1_device_data *data, fea_ph_m1_device **out);
  /* x_h = S L^-T M1^-1 L^-1 S^T b_h for k >= 1 host columns (b: ld ldb >=
   * num, x: ld ldx >= num; b and x may be the same array). transform_s and
   * dense_s (may be NULL): seconds of the transforms and of the M1 steps,
   * measured between stream synchronizations. */
  fea_status (*solve)(fea_ph_m1_device *m, fea_index k, const double *b, fea_index ldb, double *x,
                      fea_index ldx, double *transform_s, double *dense_s);
  /* The mixed-precision refinement of fea_ph_m1_refine (schur-m1.h) on the
   * device: same start, same corrections, same stopping rule
   * (prehandled/refine-rule.h), same FEA_WARN_NOT_CONVERGED. */
  fea_status (*refine)(fea_ph_m1_device *m, fea_index k, const double *b, fea_index ldb, double *x,
                       fea_index ldx, double rtol, int max_iter, int *iters, double *relres);
  /* Optional (NULL: the host inverts Pi). Pi (host, ne x ne FP64, column-
   * major, read during the call only) goes up, is factored by Cholesky and
   * inverted on the device panel by panel, each panel rounded into prec in
   * the layout create uses: the host keeps Pi, not Pi^-1 and its rounded
   * copy (at h = 1/1024, |E| ~ 61k: 30 GB of host memory instead of 68-90).
   * FEA_ERR_OUT_OF_MEMORY naming the bytes when Pi, the result and a panel do
   * not fit the free device memory; FEA_ERR_NOT_POSDEF naming the minor;
   * FEA_ERR_UNSUPPORTED for an entry beyond FP16's range (as the host's). */
  fea_status (*pi_inverse)(fea_context *ctx, const double *pi, fea_index ne, fea_precision prec,
                           fea_ph_m1_device_pinv **out);
  void (*pi_release)(fea_ph_m1_device_pinv **p);
  /* Device bytes held by the object: the uploaded matrices (their device
   * layout's padding included) and the solve workspace it keeps, which the
   * largest solve so far sized. */
  uint64_t (*bytes)(const fea_ph_m1_device *m);
  void (*destroy)(fea_ph_m1_device **m);
};

#endif
