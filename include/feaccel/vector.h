/**
 * @file vector.h
 * @brief Vectors in the memory of their context's backend.
 *
 * On `/gpu/cuda` a vector lives on the device: data moves only through
 * fea_vector_write() and fea_vector_read(), so transfers are always explicit.
 * Arithmetic goes through the backend's BLAS (OpenBLAS, cuBLAS). FP16 and
 * BF16 vectors are stored in 16 bits and computed on in FP32, the way
 * cuBLAS's `*Ex` routines do. dot and nrm2 return a double: the CPU backends
 * carry them in double for every precision; `/gpu/cuda` carries F32, F16 and
 * BF16 reductions in FP32, so there a result above FLT_MAX overflows.
 *
 * @par Errors common to this header
 * Every function here that returns fea_status returns FEA_SUCCESS when it did
 * its job. Except fea_vector_destroy(), each also returns FEA_ERR_INVALID_ARG
 * when a vector, context or output pointer it needs is NULL. On `/gpu/cuda`
 * every call that moves or computes vector data may also return
 * FEA_ERR_DEVICE (a CUDA call failed), FEA_ERR_BACKEND (cuBLAS failed) or
 * FEA_ERR_OUT_OF_MEMORY (device memory ran out). The other codes are listed
 * under each function.
 */
#ifndef FEACCEL_VECTOR_H
#define FEACCEL_VECTOR_H

#include <feaccel/export.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/**
 * @brief Create a vector of @p n entries (n >= 0) of precision @p prec, set to zero.
 * @param[out] out the new vector, holding a reference on @p ctx; NULL on failure.
 * @retval FEA_ERR_INVALID_ARG for a negative @p n or an unknown @p prec
 * @retval FEA_ERR_OUT_OF_MEMORY when @p n is too large to address or the
 *         host or device allocation fails
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_create(fea_context *ctx, fea_index n, fea_precision prec,
                                     fea_vector **out);

/**
 * @brief Destroy a vector. Accepts NULL and `*v == NULL`; sets `*v = NULL`.
 * Not marked warn-unused-result: it is called on cleanup paths.
 * @retval FEA_SUCCESS always; it cannot fail.
 * @since 0.1.0
 */
FEA_EXPORT fea_status fea_vector_destroy(fea_vector **v);

/**
 * @brief Number of entries.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p v or @p n.
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_get_length(const fea_vector *v, fea_index *n);

/**
 * @brief Storage precision.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p v or @p prec.
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_get_precision(const fea_vector *v, fea_precision *prec);

/**
 * @brief Copy @p n values from host memory into the vector, converting from
 * @p host_prec to the vector's precision (round to nearest even).
 * @p n must equal the vector's length.
 * @retval FEA_ERR_DIMENSION when @p n is not the vector's length
 * @retval FEA_ERR_INVALID_ARG for an unknown @p host_prec, or a NULL @p host with n > 0
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_write(fea_vector *v, fea_index n, fea_precision host_prec,
                                    const void *host);

/**
 * @brief Copy the vector's @p n values into host memory in precision @p host_prec.
 * @p n must equal the vector's length.
 * @retval FEA_ERR_DIMENSION when @p n is not the vector's length
 * @retval FEA_ERR_INVALID_ARG for an unknown @p host_prec, or a NULL @p host with n > 0
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_read(const fea_vector *v, fea_index n, fea_precision host_prec,
                                   void *host);

/**
 * @brief Set every entry to @p alpha (which must be finite or infinite, not NaN).
 * @retval FEA_ERR_INVALID_ARG when @p alpha is NaN.
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_set_all(fea_vector *v, double alpha);

/**
 * @brief y := x, converting precision when the two differ. Same length and
 * context; @p x and @p y must be different vectors.
 * @retval FEA_ERR_INVALID_ARG when @p x and @p y are the same vector or
 *         belong to different contexts
 * @retval FEA_ERR_DIMENSION when their lengths differ
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_copy(const fea_vector *x, fea_vector *y);

/**
 * @brief y := alpha x + y. Same length, precision and context.
 * @retval FEA_ERR_INVALID_ARG when @p alpha is NaN, or the vectors belong to
 *         different contexts or have different precisions
 * @retval FEA_ERR_DIMENSION when their lengths differ
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_axpy(fea_vector *y, double alpha, const fea_vector *x);

/**
 * @brief x := alpha x.
 * @retval FEA_ERR_INVALID_ARG when @p alpha is NaN.
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_scale(fea_vector *x, double alpha);

/**
 * @brief *result := x . y. Same length, precision and context.
 * @retval FEA_ERR_INVALID_ARG when the vectors belong to different contexts
 *         or have different precisions
 * @retval FEA_ERR_DIMENSION when their lengths differ
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_dot(const fea_vector *x, const fea_vector *y, double *result);

/**
 * @brief *result := ||x||_2, computed without overflow for large entries.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p x or @p result.
 * @since 0.1.0
 */
FEA_API fea_status fea_vector_nrm2(const fea_vector *x, double *result);

FEA_END_DECLS

#endif /* FEACCEL_VECTOR_H */
