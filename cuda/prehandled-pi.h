/* Pi^-1 of the prehandled solver formed on the device (prehandled-pi-cuda.c)
 * and taken over by the device M1 (prehandled-cuda.c), and the padded
 * layout the two share. */
#ifndef FEA_CUDA_PREHANDLED_PI_H
#define FEA_CUDA_PREHANDLED_PI_H

#include <stdint.h>

#include "base/context.h"
#include "internal/prehandled-device.h"

/* Leading dimensions of the dense device operands and panels are multiples of
 * this many elements: 16 bytes of FP16/BF16, 32 of FP32, 64 of FP64. */
#define M1_LD_ALIGN 8

static inline fea_index fea_ph_m1_ld_pad(fea_index rows) {
  return (rows + M1_LD_ALIGN - 1) / M1_LD_ALIGN * M1_LD_ALIGN;
}

struct fea_ph_m1_device_pinv {
  fea_context *ctx; /* holds a reference */
  void *data;       /* Pi^-1 in prec, ne columns of lde (padding rows zero); NULL once taken */
  fea_index ne, lde;
  fea_precision prec;
  uint64_t bytes; /* of data */
};

/* The m1 ops' pi_inverse and pi_release (prehandled-device.h). */
fea_status fea_cuda_pi_inverse(fea_context *ctx, const double *pi, fea_index ne, fea_precision prec,
                               fea_ph_m1_device_pinv **out);
void fea_cuda_pi_release(fea_ph_m1_device_pinv **p);

/* For tests only (tests/cuda link the internal archive; this is no API):
 * fea_cuda_pi_inverse forms Pi^-1 w columns at a time from now on, in the
 * whole process, so that a small |E| runs several panels and a partial last
 * one; w <= 0 restores the default (2048). Not thread-safe: set it while no
 * inversion runs. */
void fea_cuda_pi_set_panel_width(fea_index w);

#endif
