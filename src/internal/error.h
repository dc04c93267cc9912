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

/* Records "entry(): message (file.c:LINE)" on ctx (when not NULL) and on
 * the calling thread, hands it to the log callback at FEA_LOG_ERROR, and
 * returns code. entry is the public function the user called (FEA_ENTRY),
 * so that a message never names an internal helper as the place that
 * failed; func stands in for it on a thread that entered through none (a
 * worker thread, a unit test calling internals). */
FEA_PRIVATE_EXPORT fea_status fea_error_raise(const fea_context *ctx, fea_status code,
                                              const char *file, int line, const char *func,
                                              const char *fmt, ...) FEA_PRINTF(6, 7);

FEA_PRIVATE_EXPORT void fea_log(const fea_context *ctx, fea_log_level level, const char *fmt, ...)
    FEA_PRINTF(3, 4);

/* The public entry point of the calling thread's current call: the first
 * statement of every exported function (src/interface/). Nested public
 * calls keep the outer name, the one the user called; the name is restored
 * when the function returns (GCC/Clang cleanup attribute). */
const char *fea_entry_enter(const char *name);
void fea_entry_leave(const char *const *previous);
#if defined(__GNUC__)
#define FEA_ENTRY()                     \
  const char *const fea_entry_previous_ \
      __attribute__((cleanup(fea_entry_leave))) = fea_entry_enter(__func__)
#else
#define FEA_ENTRY() ((void)0)
#endif

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
/* The same without its "name(): " head: what a worker thread's failure says,
 * for the thread that reports it under the user's entry point. */
FEA_PRIVATE_EXPORT const char *fea_thread_last_error_text(void);
/* Put back a message saved from fea_thread_last_error() (when an earlier
 * failure, not the latest, is the one to report). */
void fea_error_restore(const char *msg);

#endif
