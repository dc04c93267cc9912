/* Checking of CUDA, cuBLAS, cuSOLVER and cuSPARSE return codes. Each macro
 * returns from the calling function with a message that names the failing
 * call and the library's name for the error. Allocation failures become
 * FEA_ERR_OUT_OF_MEMORY; other CUDA runtime failures FEA_ERR_DEVICE; failures
 * reported by the libraries on top of it FEA_ERR_BACKEND. The *_AS variants
 * force one status instead (init reports every failure as FEA_ERR_DEVICE).
 * Device allocations report their byte count (fea_cuda_malloc). */
#ifndef FEA_CUDA_CHECK_H
#define FEA_CUDA_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include "internal/error.h"

static inline fea_status fea_cuda_status_of(cudaError_t e) {
  return e == cudaErrorMemoryAllocation ? FEA_ERR_OUT_OF_MEMORY : FEA_ERR_DEVICE;
}

static inline fea_status fea_cublas_status_of(cublasStatus_t s) {
  return s == CUBLAS_STATUS_ALLOC_FAILED ? FEA_ERR_OUT_OF_MEMORY : FEA_ERR_BACKEND;
}

static inline fea_status fea_cusolver_status_of(cusolverStatus_t s) {
  return s == CUSOLVER_STATUS_ALLOC_FAILED ? FEA_ERR_OUT_OF_MEMORY : FEA_ERR_BACKEND;
}

static inline fea_status fea_cusparse_status_of(cusparseStatus_t s) {
  return s == CUSPARSE_STATUS_ALLOC_FAILED ? FEA_ERR_OUT_OF_MEMORY : FEA_ERR_BACKEND;
}

/* cuSOLVER has no cusolverGetStatusName(). */
static inline const char *fea_cusolver_status_name(cusolverStatus_t s) {
  switch (s) {
  case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
  case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
  case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
  case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
  case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
  case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
  case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
  case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
  case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
    return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
  case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
  case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
  case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
  case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
  default: return "unknown cusolverStatus_t";
  }
}

/* A failed runtime call also sets the thread's sticky-until-read "last error";
 * it is cleared here so that the next kernel launch check does not report it
 * a second time. Errors that corrupt the CUDA context stay regardless. */
#define FEA_CALL_CUDA_AS(ctx, code, expr)                                                          \
  do {                                                                                             \
    cudaError_t fea_cuda_err_ = (cudaError_t)(expr);                                               \
    if (fea_cuda_err_ != cudaSuccess) {                                                            \
      (void)cudaGetLastError();                                                                    \
      return fea_error_raise((ctx), (code) ? (code) : fea_cuda_status_of(fea_cuda_err_), __FILE__, \
                             __LINE__, __func__, "%s failed: %s (%s)", #expr,                      \
                             cudaGetErrorName(fea_cuda_err_), cudaGetErrorString(fea_cuda_err_));  \
    }                                                                                              \
  } while (0)

#define FEA_CALL_CUBLAS_AS(ctx, code, expr)                                                 \
  do {                                                                                      \
    cublasStatus_t fea_cublas_st_ = (expr);                                                 \
    if (fea_cublas_st_ != CUBLAS_STATUS_SUCCESS) {                                          \
      (void)cudaGetLastError();                                                             \
      return fea_error_raise((ctx), (code) ? (code) : fea_cublas_status_of(fea_cublas_st_), \
                             __FILE__, __LINE__, __func__, "%s failed: %s (%s)", #expr,     \
                             cublasGetStatusName(fea_cublas_st_),                           \
                             cublasGetStatusString(fea_cublas_st_));                        \
    }                                                                                       \
  } while (0)

#define FEA_CALL_CUSOLVER_AS(ctx, code, expr)                                                   \
  do {                                                                                          \
    cusolverStatus_t fea_cusolver_st_ = (expr);                                                 \
    if (fea_cusolver_st_ != CUSOLVER_STATUS_SUCCESS) {                                          \
      (void)cudaGetLastError();                                                                 \
      return fea_error_raise((ctx), (code) ? (code) : fea_cusolver_status_of(fea_cusolver_st_), \
                             __FILE__, __LINE__, __func__, "%s failed: %s", #expr,              \
                             fea_cusolver_status_name(fea_cusolver_st_));                       \
    }                                                                                           \
  } while (0)

#define FEA_CALL_CUSPARSE_AS(ctx, code, expr)                                                   \
  do {                                                                                          \
    cusparseStatus_t fea_cusparse_st_ = (expr);                                                 \
    if (fea_cusparse_st_ != CUSPARSE_STATUS_SUCCESS) {                                          \
      (void)cudaGetLastError();                                                                 \
      return fea_error_raise((ctx), (code) ? (code) : fea_cusparse_status_of(fea_cusparse_st_), \
                             __FILE__, __LINE__, __func__, "%s failed: %s (%s)", #expr,         \
                             cusparseGetErrorName(fea_cusparse_st_),                            \
                             cusparseGetErrorString(fea_cusparse_st_));                         \
    }                                                                                           \
  } while (0)

/* 0 (FEA_SUCCESS) as the forced code means "map from the library's status". */
#define FEA_CALL_CUDA(ctx, expr) FEA_CALL_CUDA_AS(ctx, FEA_SUCCESS, expr)
#define FEA_CALL_CUBLAS(ctx, expr) FEA_CALL_CUBLAS_AS(ctx, FEA_SUCCESS, expr)
#define FEA_CALL_CUSOLVER(ctx, expr) FEA_CALL_CUSOLVER_AS(ctx, FEA_SUCCESS, expr)
#define FEA_CALL_CUSPARSE(ctx, expr) FEA_CALL_CUSPARSE_AS(ctx, FEA_SUCCESS, expr)

#endif
