/* Pi^-1 of the prehandled solver on the device (the m1 ops' pi_inverse,
 * prehandled-device.h): Pi goes up in FP64, cuSOLVER factors it
 * (cusolverDnXpotrf through its dense ops), and the inverse is formed M1_PI_PANEL
 * columns at a time (tests set fewer: fea_cuda_pi_set_panel_width) by potrs
 * on identity columns, each panel checked against FP16's range where that is
 * the precision and rounded into the padded layout of the device M1. The device holds Pi, the result and one panel at
 * a time, never Pi^-1 in FP64: at h = 1/1024 (|E| ~ 61k) 30 GB + 7.5 GB
 * (FP16) + 1 GB; the host keeps Pi (30 GB) where it held Pi, Pi^-1 and the
 * rounded copy (68 GB in FP16, 90 GB in FP64).
 * The same operations as the host's (potrf, then potrs on the identity);
 * only their summation orders differ. Compiled, not yet run on a GPU. */
#include "fea-config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda-backend.h"
#include "cuda-check.h"
#include "linalg/dense.h"
#include "internal/error.h"
#include "kernels/launch.h"
#include "prehandled-pi.h"

/* Columns of Pi^-1 per panel: wide enough for the triangular solves to run
 * near GEMM rates, narrow enough that the FP64 panel stays small next to Pi
 * (|E| x 2048 doubles: 1 GB at |E| = 61k). */
#define M1_PI_PANEL 2048

/* The panel width in use: M1_PI_PANEL unless a test set another
 * (fea_cuda_pi_set_panel_width). */
static fea_index pi_panel_width = M1_PI_PANEL;

void fea_cuda_pi_set_panel_width(fea_index w) { pi_panel_width = w > 0 ? w : M1_PI_PANEL; }

/* Device memory kept back for cuSOLVER's and cuBLAS's workspaces. */
#define M1_PI_RESERVE ((uint64_t)512 << 20)

/* The largest finite FP16 value (as the host setup's check). */
#define M1_F16_MAX 65504.0

void fea_cuda_pi_release(fea_ph_m1_device_pinv **pp) {
  if (!pp || !*pp) return;
  fea_ph_m1_device_pinv *p = *pp;
  struct fea_cuda *b = NULL;
  if (p->data && fea_cuda_enter(p->ctx, &b) >= 0) {
    (void)cudaStreamSynchronize(b->stream);
    fea_cuda_free(p->ctx, p->data);
  }
  fea_object_release(p->ctx);
  free(p);
  *pp = NULL;
}

/* Identity columns j0 .. j0 + w - 1 of order ne into the panel (ld ne):
 * zeros, then the ones by one strided copy. */
static fea_status identity_panel(fea_context *ctx, struct fea_cuda *b, double *panel, fea_index ne,
                                 fea_index j0, fea_index w, const double *ones) {
  FEA_CALL_CUDA(ctx, cudaMemsetAsync(panel, 0, (size_t)ne * (size_t)w * sizeof *panel, b->stream));
  /* Entry (j0 + i, i) for i < w: a pitch of ne + 1 doubles walks the diagonal. */
  FEA_CALL_CUDA(ctx,
                cudaMemcpy2DAsync(panel + j0, ((size_t)ne + 1) * sizeof *panel, ones, sizeof *ones,
                                  sizeof *ones, (size_t)w, cudaMemcpyHostToDevice, b->stream));
  return FEA_SUCCESS;
}

/* FP16: the panel's largest magnitude must be finite in FP16. */
static fea_status check_f16_range(fea_context *ctx, struct fea_cuda *b, const double *panel,
                                  int64_t count) {
  int64_t at = 0;
  FEA_CALL_CUBLAS(ctx, cublasIdamax_64(b->blas, count, panel, 1, &at)); /* 1-based, synchronous */
  if (at < 1) return FEA_SUCCESS;
  double v = 0.0;
  FEA_CALL_CUDA(ctx,
                cudaMemcpyAsync(&v, panel + (at - 1), sizeof v, cudaMemcpyDeviceToHost, b->stream));
  FEA_CALL(fea_cuda_sync(ctx));
  FEA_CHECK(fabs(v) <= M1_F16_MAX, ctx, FEA_ERR_UNSUPPORTED,
            "Pi^-1 has the entry %.6g, beyond FP16's range (65504): use BF16 or FP32", v);
  return FEA_SUCCESS;
}

/* The work: r->data must be NULL on entry; the caller frees dpi and panel. */
static fea_status invert(fea_context *ctx, struct fea_cuda *b, const double *pi,
                         fea_ph_m1_device_pinv *r, double **dpi, double **panel, double **ones) {
  const fea_index ne = r->ne, lde = r->lde;
  const size_t es = fea_cuda_elem_size(r->prec);
  const fea_index w = ne < pi_panel_width ? ne : pi_panel_width;
  const uint64_t pi_b = 8ull * (uint64_t)ne * (uint64_t)ne;
  const uint64_t panel_b = 8ull * (uint64_t)ne * (uint64_t)w;
  r->bytes = (uint64_t)es * (uint64_t)lde * (uint64_t)ne;
  const uint64_t need = pi_b + r->bytes + panel_b + M1_PI_RESERVE;
  size_t free_b = 0, total_b = 0;
  FEA_CALL(fea_cuda_available_bytes(ctx, &free_b, &total_b));
  FEA_CHECK(need <= (uint64_t)free_b, ctx, FEA_ERR_OUT_OF_MEMORY,
            "inverting Pi on the device needs %llu bytes (Pi in FP64: %llu, |E| = %lld; Pi^-1 "
            "in %s: %llu; a panel of %lld columns: %llu; %llu kept for cuSOLVER) but GPU %d "
            "(%s) has %llu bytes free of %llu (with the memory pool's unused bytes); a smaller n / "
            "n0 shrinks |E|",
            (unsigned long long)need, (unsigned long long)pi_b, (long long)ne,
            fea_precision_name(r->prec), (unsigned long long)r->bytes, (long long)w,
            (unsigned long long)panel_b, (unsigned long long)M1_PI_RESERVE, b->device, b->name,
            (unsigned long long)free_b, (unsigned long long)total_b);
  void *q = NULL;
  FEA_CALL(fea_cuda_malloc(ctx, (size_t)pi_b, &q));
  *dpi = q;
  FEA_CALL(fea_cuda_malloc(ctx, (size_t)panel_b, &q));
  *panel = q;
  FEA_CALL(fea_cuda_malloc(ctx, (size_t)r->bytes, &r->data));
  *ones = malloc((size_t)w * sizeof **ones);
  FEA_CHECK(*ones, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld ones", (long long)w);
  for (fea_index i = 0; i < w; i++) (*ones)[i] = 1.0;
  /* Padding rows of the result stay zero (the M1 GEMMs never read them). */
  FEA_CALL_CUDA(ctx, cudaMemsetAsync(r->data, 0, (size_t)r->bytes, b->stream));
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(*dpi, pi, (size_t)pi_b, cudaMemcpyHostToDevice, b->stream));
  fea_dmat A = {*dpi, ne, ne, ne, FEA_F64};
  /* This backend's own dense ops (the module reaches libfeaccel.so's through them). */
  fea_status st = fea_cuda_dense_ops.potrf(ctx, FEA_LOWER, &A);
  if (st < 0) { /* the potrf message names the minor; keep it, add which matrix */
    char why[256];
    snprintf(why, sizeof why, "%.255s", ctx->last_error);
    return FEA_ERROR(ctx, st,
                     "the Cholesky factorization of the Schur complement Pi (%lld x "
                     "%lld) on the device failed: %s",
                     (long long)ne, (long long)ne, why);
  }
  for (fea_index j0 = 0; j0 < ne; j0 += w) {
    const fea_index cols = ne - j0 < w ? ne - j0 : w;
    FEA_CALL(identity_panel(ctx, b, *panel, ne, j0, cols, *ones));
    fea_dmat B = {*panel, ne, cols, ne, FEA_F64};
    FEA_CALL(fea_cuda_dense_ops.potrs(ctx, FEA_LOWER, &A, &B));
    if (r->prec == FEA_F16) FEA_CALL(check_f16_range(ctx, b, *panel, (int64_t)ne * cols));
    char *dst = (char *)r->data + (size_t)j0 * (size_t)lde * es;
    if (lde == ne) {
      FEA_CALL_CUDA(ctx,
                    fea_cuda_convert(FEA_F64, *panel, r->prec, dst, (int64_t)ne * cols, b->stream));
    } else {
      for (fea_index j = 0; j < cols; j++)
        FEA_CALL_CUDA(ctx, fea_cuda_convert(FEA_F64, *panel + (size_t)j * (size_t)ne, r->prec,
                                            dst + (size_t)j * (size_t)lde * es, ne, b->stream));
    }
  }
  /* The host's Pi and ones may go once the copies have run. */
  return fea_cuda_sync(ctx);
}

fea_status fea_cuda_pi_inverse(fea_context *ctx, const double *pi, fea_index ne, fea_precision prec,
                               fea_ph_m1_device_pinv **out) {
  FEA_CHECK_NULL(pi, ctx);
  FEA_CHECK_NULL(out, ctx);
  *out = NULL;
  FEA_CHECK(ne >= 1, ctx, FEA_ERR_INVALID_ARG, "Pi of order %lld", (long long)ne);
  FEA_CHECK(prec == FEA_F64 || prec == FEA_F32 || prec == FEA_F16 || prec == FEA_BF16, ctx,
            FEA_ERR_UNSUPPORTED, "Pi^-1 in FP64, FP32, FP16 or BF16, not %d", (int)prec);
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  fea_ph_m1_device_pinv *r = calloc(1, sizeof *r);
  FEA_CHECK(r, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a device Pi^-1");
  r->ctx = ctx;
  fea_object_retain(ctx);
  r->ne = ne;
  r->lde = fea_ph_m1_ld_pad(ne);
  r->prec = prec;
  double *dpi = NULL, *panel = NULL, *ones = NULL;
  fea_status st = invert(ctx, b, pi, r, &dpi, &panel, &ones);
  (void)cudaStreamSynchronize(b->stream); /* nothing queued may still use what goes */
  fea_cuda_free(ctx, dpi);
  fea_cuda_free(ctx, panel);
  free(ones);
  if (st < 0) {
    fea_cuda_pi_release(&r);
    return st;
  }
  *out = r;
  return FEA_SUCCESS;
}
