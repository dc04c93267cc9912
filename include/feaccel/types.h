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
 * @since 0.1.0
 */
typedef int64_t fea_index;

/**
 * @brief Result of every public call.
 *
 * Zero is success, positive values are numerical outcomes after which all
 * objects stay valid, negative values are errors. After an error the objects
 * passed in are unchanged and fea_context_last_error() says what was wrong.
 * @since 0.1.0
 */
typedef enum fea_status {
  FEA_SUCCESS = 0,
  /** an iteration stopped at its limit, or when its residual stopped being finite */
  FEA_WARN_NOT_CONVERGED = 1,
  /** a NULL pointer; a value out of range, NaN or infinite; an unknown enum value,
   * resource or option; a struct .size outside its accepted range; objects that
   * do not belong together (other contexts, spaces or solver kinds) */
  FEA_ERR_INVALID_ARG = -1,
  /** lengths or shapes do not match, or an output's capacity is too small */
  FEA_ERR_DIMENSION = -2,
  /** the object is not in the state the call needs: a solve before setup, or a
   * query about what the object was not made with (parents of a mesh that was
   * not refined, a Schur complement without keep_boundary) */
  FEA_ERR_STATE = -3,
  /** host or device allocation failed, or a size would exceed what can be
   * addressed or the memory limit. "Addressed": an array the arguments
   * describe by a count and a leading dimension or stride (nrhs columns ldb
   * apart, npts points of dim coordinates) that would span more than
   * PTRDIFF_MAX bytes cannot exist, and is refused with this code before
   * anything is read, written or allocated */
  FEA_ERR_OUT_OF_MEMORY = -4,
  /** not built in, or not available for this input (space, mesh, option,
   * file format version, CPU feature) */
  FEA_ERR_UNSUPPORTED = -5,
  /** a library underneath (LAPACK, hwloc, cuBLAS, cuSPARSE, cuSOLVER) failed,
   * or a backend was built for another backend ABI */
  FEA_ERR_BACKEND = -6,
  /** no usable device, or a device call failed */
  FEA_ERR_DEVICE = -7,
  /** a matrix or operator is not positive definite: a Cholesky pivot, a CG
   * curvature p.Ap, a diagonal entry or an eigenvalue estimate was not positive */
  FEA_ERR_NOT_POSDEF = -8,
  /** a file could not be opened, read or written, or its content is malformed */
  FEA_ERR_IO = -9,
  /** an LU factorization met an exactly zero pivot */
  FEA_ERR_SINGULAR = -10,
  /** the context's progress callback asked to stop (fea_context_set_progress_callback()):
   * the call stopped at its next report, released what it had allocated, and
   * left its objects as a failed call of the same kind leaves them */
  FEA_ERR_CANCELLED = -11
} fea_status;

/**
 * @brief Floating-point formats. A run-time field, never a build option,
 * because mixed-precision solvers use several in one process.
 * @since 0.1.0
 */
typedef enum fea_precision {
  FEA_F64 = 0, /**< IEEE binary64 */
  FEA_F32 = 1, /**< IEEE binary32 */
  FEA_F16 = 2, /**< IEEE binary16 */
  FEA_BF16 = 3 /**< bfloat16: binary32 exponent, 8-bit significand */
} fea_precision;

/** Opaque library context: one backend, its resources and the last error. @since 0.1.0 */
typedef struct fea_context fea_context;
/** Opaque vector living in the memory of its context's backend. @since 0.1.0 */
typedef struct fea_vector fea_vector;

/** @brief Name of a status code, e.g. "FEA_ERR_DIMENSION"; "unknown status" otherwise.
 * @since 0.1.0 */
FEA_EXPORT const char *fea_status_string(fea_status status);

/** @brief Name of a precision ("f64", "f32", "f16", "bf16"); NULL if @p prec is unknown.
 * @since 0.1.0 */
FEA_EXPORT const char *fea_precision_name(fea_precision prec);

/**
 * @brief Size in bytes of one value of @p prec.
 * @retval FEA_ERR_INVALID_ARG for an unknown precision or a NULL @p bytes.
 * @since 0.1.0
 */
FEA_API fea_status fea_precision_size(fea_precision prec, size_t *bytes);

FEA_END_DECLS

#endif /* FEACCEL_TYPES_H */
