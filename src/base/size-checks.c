/* The overflow check of strided arrays (size-checks.h): one place decides
 * what "too large to address" means, so every entry point refuses the same
 * sizes with the same status and names the values it got. */
#include "size-checks.h"

#include <stdio.h>

#include "internal/error.h"

fea_status fea_size_check_span(const fea_context *ctx, const char *what, const char *formula,
                               uint64_t count, uint64_t stride, uint64_t extra, size_t elem_size,
                               uint64_t *elements) {
  /* In elements, by division: the product itself may be what overflows. */
  const uint64_t limit = FEA_MAX_SPAN_BYTES / (elem_size ? elem_size : 1);
  if (extra <= limit && (stride == 0 || count <= (limit - extra) / stride)) {
    if (elements) *elements = count * stride + extra;
    return FEA_SUCCESS;
  }
  /* The formula's values in its own shape: "COUNT", "COUNT * STRIDE" or
   * "COUNT * STRIDE + EXTRA". */
  char values[96];
  int used = snprintf(values, sizeof values, "%llu", (unsigned long long)count);
  if (stride != 1 && used > 0 && (size_t)used < sizeof values)
    used += snprintf(values + used, sizeof values - (size_t)used, " * %llu",
                     (unsigned long long)stride);
  if (extra != 0 && used > 0 && (size_t)used < sizeof values)
    snprintf(values + used, sizeof values - (size_t)used, " + %llu", (unsigned long long)extra);
  return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                   "%s spans %s = %s elements of %zu bytes, more than the %llu bytes one array "
                   "can span",
                   what, formula, values, elem_size, (unsigned long long)FEA_MAX_SPAN_BYTES);
}
