/* Vector ops of /gpu/cuda: device storage, transfers with precision
 * conversion on the device, and BLAS-1 through cuBLAS. */
#include "fea-config.h"

#include <stdint.h>

#include "internal/backend.h"
#include "base/context.h"
#include "cuda-backend.h"
#include "cuda-check.h"
#include "internal/error.h"
#include "kernels/launch.h"
#include "linalg/vector.h"

static fea_status zero_fill(fea_context *ctx, struct fea_cuda *b, void *data, size_t bytes) {
  FEA_CALL_CUDA(ctx, cudaMemsetAsync(data, 0, bytes, b->stream));
  return FEA_SUCCESS;
}

static fea_status vec_alloc(fea_context *ctx, fea_vector *v) {
  struct fea_cuda *b;
  size_t esize = fea_cuda_elem_size(v->prec);
  v->data = NULL;
  if (v->n == 0) return FEA_SUCCESS;
  FEA_CHECK((uint64_t)v->n <= SIZE_MAX / esize, ctx, FEA_ERR_OUT_OF_MEMORY,
            "a vector of %lld entries does not fit in the address space", (long long)v->n);
  FEA_CALL(fea_cuda_enter(ctx, &b));
  size_t bytes = (size_t)v->n * esize;
  void *data = NULL;
  FEA_CALL(fea_cuda_malloc(ctx, bytes, &data));
  fea_status st = zero_fill(ctx, b, data, bytes);
  if (st < 0) {
    fea_cuda_free(ctx, data);
    return st;
  }
  v->data = data;
  return FEA_SUCCESS;
}

static void vec_release(fea_context *ctx, fea_vector *v) {
  struct fea_cuda *b;
  if (!v->data) return;
  if (fea_cuda_enter(ctx, &b) == FEA_SUCCESS) fea_cuda_free(ctx, v->data);
  v->data = NULL;
}

/* Host data in another precision goes up as it is and is converted on the
 * device: one transfer of the host bytes, no host-side conversion pass. */
static fea_status vec_write(fea_context *ctx, fea_vector *v, fea_precision host_prec,
                            const void *host) {
  struct fea_cuda *b;
  if (v->n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  size_t bytes = (size_t)v->n * fea_cuda_elem_size(host_prec);
  if (host_prec == v->prec) {
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(v->data, host, bytes, cudaMemcpyHostToDevice, b->stream));
  } else {
    void *staged;
    FEA_CALL(fea_cuda_workspace(ctx, bytes, &staged));
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(staged, host, bytes, cudaMemcpyHostToDevice, b->stream));
    FEA_CALL_CUDA(ctx,
                  fea_cuda_convert((int)host_prec, staged, (int)v->prec, v->data, v->n, b->stream));
  }
  /* The caller may reuse its buffer as soon as we return. */
  return fea_cuda_sync(ctx);
}

static fea_status vec_read(fea_context *ctx, const fea_vector *v, fea_precision host_prec,
                           void *host) {
  struct fea_cuda *b;
  if (v->n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  size_t bytes = (size_t)v->n * fea_cuda_elem_size(host_prec);
  if (host_prec == v->prec) {
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(host, v->data, bytes, cudaMemcpyDeviceToHost, b->stream));
  } else {
    void *staged;
    FEA_CALL(fea_cuda_workspace(ctx, bytes, &staged));
    FEA_CALL_CUDA(ctx,
                  fea_cuda_convert((int)v->prec, v->data, (int)host_prec, staged, v->n, b->stream));
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(host, staged, bytes, cudaMemcpyDeviceToHost, b->stream));
  }
  return fea_cuda_sync(ctx);
}

static fea_status vec_set_all(fea_context *ctx, fea_vector *v, double alpha) {
  struct fea_cuda *b;
  if (v->n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL_CUDA(ctx, fea_cuda_set_all((int)v->prec, v->data, v->n, alpha, b->stream));
  return FEA_SUCCESS;
}

static fea_status vec_copy(fea_context *ctx, const fea_vector *x, fea_vector *y) {
  struct fea_cuda *b;
  if (x->n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (x->prec == y->prec) {
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(y->data, x->data, (size_t)x->n * fea_cuda_elem_size(x->prec),
                                       cudaMemcpyDeviceToDevice, b->stream));
  } else {
    FEA_CALL_CUDA(ctx,
                  fea_cuda_convert((int)x->prec, x->data, (int)y->prec, y->data, x->n, b->stream));
  }
  return FEA_SUCCESS;
}

static fea_status vec_axpy(fea_context *ctx, fea_vector *y, double alpha, const fea_vector *x) {
  struct fea_cuda *b;
  if (y->n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (y->prec == FEA_F64) {
    FEA_CALL_CUBLAS(ctx, cublasDaxpy_64(b->blas, y->n, &alpha, x->data, 1, y->data, 1));
  } else if (y->prec == FEA_F32) {
    float a = (float)alpha;
    FEA_CALL_CUBLAS(ctx, cublasSaxpy_64(b->blas, y->n, &a, x->data, 1, y->data, 1));
  } else {
    /* 16-bit storage, FP32 arithmetic. */
    float a = (float)alpha;
    cudaDataType t = fea_cuda_data_type(y->prec);
    FEA_CALL_CUBLAS(ctx, cublasAxpyEx_64(b->blas, y->n, &a, CUDA_R_32F, x->data, t, 1, y->data, t,
                                         1, CUDA_R_32F));
  }
  return FEA_SUCCESS;
}

static fea_status vec_scale(fea_context *ctx, fea_vector *x, double alpha) {
  struct fea_cuda *b;
  if (x->n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (x->prec == FEA_F64) {
    FEA_CALL_CUBLAS(ctx, cublasDscal_64(b->blas, x->n, &alpha, x->data, 1));
  } else if (x->prec == FEA_F32) {
    float a = (float)alpha;
    FEA_CALL_CUBLAS(ctx, cublasSscal_64(b->blas, x->n, &a, x->data, 1));
  } else {
    float a = (float)alpha;
    FEA_CALL_CUBLAS(ctx, cublasScalEx_64(b->blas, x->n, &a, CUDA_R_32F, x->data,
                                         fea_cuda_data_type(x->prec), 1, CUDA_R_32F));
  }
  return FEA_SUCCESS;
}

/* cublasDotEx/Nrm2Ex accept 16-bit inputs only with a 16-bit result: the FP32
 * sum would be rounded to 11 (FP16) or 8 (BF16) bits and overflow at 65504 in
 * FP16. The vector API promises FP32 arithmetic with the result as double, so
 * 16-bit inputs are widened to FP32 scratch and reduced there. */
static fea_status widen(fea_context *ctx, struct fea_cuda *b, const fea_vector *v, float *dst) {
  FEA_CALL_CUDA(ctx, fea_cuda_convert((int)v->prec, v->data, (int)FEA_F32, dst, v->n, b->stream));
  return FEA_SUCCESS;
}

static fea_status vec_dot(fea_context *ctx, const fea_vector *x, const fea_vector *y, double *r) {
  struct fea_cuda *b;
  *r = 0.0;
  if (x->n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (x->prec == FEA_F64) {
    FEA_CALL_CUBLAS(ctx, cublasDdot_64(b->blas, x->n, x->data, 1, y->data, 1, r));
    return FEA_SUCCESS;
  }
  const float *xs = x->data, *ys = y->data;
  if (x->prec != FEA_F32) {
    size_t part = fea_cuda_align_up((size_t)x->n * sizeof(float));
    void *scratch;
    FEA_CALL(fea_cuda_workspace(ctx, 2 * part, &scratch));
    float *xw = scratch, *yw = (float *)((char *)scratch + part);
    FEA_CALL(widen(ctx, b, x, xw));
    FEA_CALL(widen(ctx, b, y, yw));
    xs = xw;
    ys = yw;
  }
  float s = 0.0f;
  FEA_CALL_CUBLAS(ctx, cublasSdot_64(b->blas, x->n, xs, 1, ys, 1, &s));
  *r = s;
  return FEA_SUCCESS;
}

static fea_status vec_nrm2(fea_context *ctx, const fea_vector *x, double *r) {
  struct fea_cuda *b;
  *r = 0.0;
  if (x->n == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  if (x->prec == FEA_F64) {
    FEA_CALL_CUBLAS(ctx, cublasDnrm2_64(b->blas, x->n, x->data, 1, r));
    return FEA_SUCCESS;
  }
  const float *xs = x->data;
  if (x->prec != FEA_F32) {
    void *scratch;
    FEA_CALL(fea_cuda_workspace(ctx, (size_t)x->n * sizeof(float), &scratch));
    FEA_CALL(widen(ctx, b, x, scratch));
    xs = scratch;
  }
  float s = 0.0f;
  FEA_CALL_CUBLAS(ctx, cublasSnrm2_64(b->blas, x->n, xs, 1, &s));
  *r = s;
  return FEA_SUCCESS;
}

const struct fea_vector_ops fea_cuda_vector_ops = {
    .alloc = vec_alloc,
    .release = vec_release,
    .write = vec_write,
    .read = vec_read,
    .set_all = vec_set_all,
    .copy = vec_copy,
    .axpy = vec_axpy,
    .scale = vec_scale,
    .dot = vec_dot,
    .nrm2 = vec_nrm2,
};
