/* Conversion of one value between the four storage formats, rounding to
 * nearest even. Narrowing from double goes straight to the 16-bit formats:
 * going through float first would round twice and can differ in the last bit
 * from the host reference (src/base/half.c). Widening is exact. */
#ifndef FEA_CUDA_ROUND_CUH
#define FEA_CUDA_ROUND_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace fea_cuda {

template <typename To>
struct round_to;

template <>
struct round_to<double> {
  __device__ static double from(double x) { return x; }
  __device__ static double from(float x) { return (double)x; }
  __device__ static double from(__half x) { return (double)__half2float(x); }
  __device__ static double from(__nv_bfloat16 x) { return (double)__bfloat162float(x); }
};

template <>
struct round_to<float> {
  __device__ static float from(double x) { return __double2float_rn(x); }
  __device__ static float from(float x) { return x; }
  __device__ static float from(__half x) { return __half2float(x); }
  __device__ static float from(__nv_bfloat16 x) { return __bfloat162float(x); }
};

template <>
struct round_to<__half> {
  __device__ static __half from(double x) { return __double2half(x); }
  __device__ static __half from(float x) { return __float2half_rn(x); }
  __device__ static __half from(__half x) { return x; }
  /* bf16 -> float is exact, so this rounds once. */
  __device__ static __half from(__nv_bfloat16 x) { return __float2half_rn(__bfloat162float(x)); }
};

template <>
struct round_to<__nv_bfloat16> {
  __device__ static __nv_bfloat16 from(double x) { return __double2bfloat16(x); }
  __device__ static __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
  /* f16 -> float is exact, so this rounds once. */
  __device__ static __nv_bfloat16 from(__half x) { return __float2bfloat16_rn(__half2float(x)); }
  __device__ static __nv_bfloat16 from(__nv_bfloat16 x) { return x; }
};

}  // namespace fea_cuda

#endif
