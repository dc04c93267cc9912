/* Conversions between FP64/FP32 and the 16-bit formats, round to nearest even,
 * with correct handling of subnormals, infinities and NaN. Used by the CPU
 * backends and by tests as an independent reference for the GPU kernels. */
#ifndef FEA_INTERNAL_HALF_H
#define FEA_INTERNAL_HALF_H

#include <stdint.h>

#include <feaccel/types.h>

uint16_t fea_f32_to_f16(float x);
float fea_f16_to_f32(uint16_t h);
uint16_t fea_f32_to_bf16(float x);
float fea_bf16_to_f32(uint16_t h);
/* Rounds straight from double, avoiding the double rounding of f64->f32->f16. */
uint16_t fea_f64_to_f16(double x);
uint16_t fea_f64_to_bf16(double x);

/* Convert n values between host arrays of any two precisions. */
void fea_convert(fea_precision from, const void *src, fea_precision to, void *dst, fea_index n);

/* Value i of a host array of precision prec, as double. */
double fea_load(fea_precision prec, const void *data, fea_index i);

#endif
