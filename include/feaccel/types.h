/**
 * @file types.h
 * @brief Scalar types, status codes, precisions and opaque handles.
 */
#ifndef FEACCEL_TYPES_H
#define FEACCEL_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include <feaccel/export.h>

FEA_BEGIN_DECLS

/**
 * @brief Index and size type of every public function.
 *
 * 64-bit on purpose: a million-DoF 3D problem overflows 32-bit nonzero counts.
 */
typedef int64_t fea_index;

/**
 * @brief Result of every public call.
 *
 * Zero is success, positive values are numerical outcomes after which all
 * objects stay valid, negative values are errors. After an error the objects
 * passed in are unchanged and fea_context_last_error() says what was wrong.
 */
typedef enum fea_status {
  FEA_SUCCESS = 0,
  FEA_WARN_NOT_CONVERGED = 1, /**< an iteration stopped at its limit */
  FEA_ERR_INVALID_ARG = -1,   /**< NULL, out of range, NaN, unknown enum or resource */
  FEA_ERR_DIMENSION = -2,     /**< lengths or shapes do not match */
  FEA_ERR_STATE = -3,         /**< call out of order (e.g. solve before setup) */
  FEA_ERR_OUT_OF_MEMORY = -4, /**< host or device allocation failed or would not fit */
  FEA_ERR_UNSUPPORTED = -5,   /**< not built in, or not available for this input */
  FEA_ERR_BACKEND = -6,       /**< a library underneath (BLAS, cuBLAS, ...) failed */
  FEA_ERR_DEVICE = -7,        /**< no usable device, or a device call failed */
  FEA_ERR_NOT_POSDEF = -8,    /**< a Cholesky factorization met a non-positive pivot */
  FEA_ERR_IO = -9,            /**< a file could not be read or written */
  FEA_ERR_SINGULAR = -10      /**< an LU factorization met an exactly zero pivot */
} fea_status;

/**
 * @brief Floating-point formats. A run-time field, never a build option,
 * because mixed-precision solvers use several in one process.
 */
typedef enum fea_precision {
  FEA_F64 = 0, /**< IEEE binary64 */
  FEA_F32 = 1, /**< IEEE binary32 */
  FEA_F16 = 2, /**< IEEE binary16 */
  FEA_BF16 = 3 /**< bfloat16: binary32 exponent, 8-bit significand */
} fea_precision;

/** Opaque library context: one backend, its resources and the last error. */
typedef struct fea_context fea_context;
/** Opaque vector living in the memory of its context's backend. */
typedef struct fea_vector fea_vector;

/** @brief Name of a status code, e.g. "FEA_ERR_DIMENSION"; "unknown status" otherwise. */
FEA_EXPORT const char *fea_status_string(fea_status status);

/** @brief Name of a precision ("f64", "f32", "f16", "bf16"); NULL if @p prec is unknown. */
FEA_EXPORT const char *fea_precision_name(fea_precision prec);

/**
 * @brief Size in bytes of one value of @p prec.
 * @return FEA_ERR_INVALID_ARG for an unknown precision or a NULL @p bytes.
 */
FEA_API fea_status fea_precision_size(fea_precision prec, size_t *bytes);

FEA_END_DECLS

#endif /* FEACCEL_TYPES_H */
