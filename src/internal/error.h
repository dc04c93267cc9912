/* Error raising and logging used by every translation unit of the library. */
#ifndef FEA_INTERNAL_ERROR_H
#define FEA_INTERNAL_ERROR_H

#include <feaccel/context.h>

#include "private-export.h"

#if defined(__GNUC__)
#define FEA_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FEA_PRINTF(a, b)
#endif

/* Records "file.c:LINE func(): message" on ctx (when not NULL) and on the calling
 * thread, hands it to the log callback at FEA_LOG_ERROR, and returns code. */
FEA_PRIVATE_EXPORT fea_status fea_error_raise(const fea_context *ctx, fea_status code,
                                              const char *file, int line, const char *func,
                                              const char *fmt, ...) FEA_PRINTF(6, 7);

FEA_PRIVATE_EXPORT void fea_log(const fea_context *ctx, fea_log_level level, const char *fmt, ...)
    FEA_PRINTF(3, 4);

#define FEA_ERROR(ctx, code, ...) \
  fea_error_raise((ctx), (code), __FILE__, __LINE__, __func__, __VA_ARGS__)

/* Return code with a message unless cond holds. */
#define FEA_CHECK(cond, ctx, code, ...)                    \
  do {                                                     \
    if (!(cond)) return FEA_ERROR(ctx, code, __VA_ARGS__); \
  } while (0)

/* Propagate an error (negative status); warnings pass through. */
#define FEA_CALL(expr)                                 \
  do {                                                 \
    fea_status fea_call_status_ = (expr);              \
    if (fea_call_status_ < 0) return fea_call_status_; \
  } while (0)

/* Argument checks shared by the interface layer. */
#define FEA_CHECK_NULL(ptr, ctx) \
  FEA_CHECK((ptr) != NULL, ctx, FEA_ERR_INVALID_ARG, "argument '%s' is NULL", #ptr)

/* The calling thread's last message (any call, with or without a context). */
const char *fea_thread_last_error(void);
/* Put back a message saved from fea_thread_last_error() (when an earlier
 * failure, not the latest, is the one to report). */
void fea_error_restore(const char *msg);

#endif
