/* Whether a strided array the caller describes by counts can exist at all
 * (src/base/size-checks.c): the one check every public entry point that
 * takes a count and a leading dimension or stride makes before it indexes,
 * compares or allocates by their product. */
#ifndef FEA_INTERNAL_SIZE_CHECKS_H
#define FEA_INTERNAL_SIZE_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include <feaccel/types.h>

/* The most bytes one array may span: pointer differences inside it must be
 * representable (PTRDIFF_MAX), and its size must be a size_t. */
#define FEA_MAX_SPAN_BYTES \
  ((uint64_t)PTRDIFF_MAX < (uint64_t)SIZE_MAX ? (uint64_t)PTRDIFF_MAX : (uint64_t)SIZE_MAX)

/* FEA_SUCCESS when count * stride + extra elements of elem_size bytes fit in
 * FEA_MAX_SPAN_BYTES, with *elements (may be NULL) set to that count; else
 * FEA_ERR_OUT_OF_MEMORY (types.h: a size that cannot be addressed), raised
 * on ctx, as "WHAT: FORMULA = COUNT * STRIDE + EXTRA elements of N bytes
 * ...". formula names the three terms the way the caller's documentation
 * does, e.g. "(nrhs - 1) * ldb + num_free". For a column-major block of
 * `cols` columns that is count = cols - 1, stride = ld, extra = rows: the
 * exact span, so a last column that ends before the limit is accepted. */
fea_status fea_size_check_span(const fea_context *ctx, const char *what, const char *formula,
                               uint64_t count, uint64_t stride, uint64_t extra, size_t elem_size,
                               uint64_t *elements);

#endif
