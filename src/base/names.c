/* Names of status codes and precisions, and which values have a name. */
#include <feaccel/types.h>

#include "internal/error.h"
#include "names.h"

/* What fea_status_string() says of a value outside the enum (its documented
 * text; fea_status_is_named() tells such values by this pointer). */
static const char unknown_status[] = "unknown status";

const char *fea_status_string(fea_status status) {
  switch (status) {
  case FEA_SUCCESS: return "FEA_SUCCESS";
  case FEA_WARN_NOT_CONVERGED: return "FEA_WARN_NOT_CONVERGED";
  case FEA_ERR_INVALID_ARG: return "FEA_ERR_INVALID_ARG";
  case FEA_ERR_DIMENSION: return "FEA_ERR_DIMENSION";
  case FEA_ERR_STATE: return "FEA_ERR_STATE";
  case FEA_ERR_OUT_OF_MEMORY: return "FEA_ERR_OUT_OF_MEMORY";
  case FEA_ERR_UNSUPPORTED: return "FEA_ERR_UNSUPPORTED";
  case FEA_ERR_BACKEND: return "FEA_ERR_BACKEND";
  case FEA_ERR_DEVICE: return "FEA_ERR_DEVICE";
  case FEA_ERR_NOT_POSDEF: return "FEA_ERR_NOT_POSDEF";
  case FEA_ERR_IO: return "FEA_ERR_IO";
  case FEA_ERR_SINGULAR: return "FEA_ERR_SINGULAR";
  case FEA_ERR_CANCELLED: return "FEA_ERR_CANCELLED";
  }
  return unknown_status;
}

int fea_status_is_named(fea_status status) { return fea_status_string(status) != unknown_status; }

const char *fea_precision_name(fea_precision prec) {
  switch (prec) {
  case FEA_F64: return "f64";
  case FEA_F32: return "f32";
  case FEA_F16: return "f16";
  case FEA_BF16: return "bf16";
  }
  return NULL;
}

fea_status fea_precision_size(fea_precision prec, size_t *bytes) {
  FEA_CHECK_NULL(bytes, NULL);
  switch (prec) {
  case FEA_F64: *bytes = 8; return FEA_SUCCESS;
  case FEA_F32: *bytes = 4; return FEA_SUCCESS;
  case FEA_F16:
  case FEA_BF16: *bytes = 2; return FEA_SUCCESS;
  }
  return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG,
                   "unknown precision %d (expected FEA_F64, FEA_F32, FEA_F16 or FEA_BF16)",
                   (int)prec);
}
