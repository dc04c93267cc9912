/* Error messages and log forwarding. The library never prints: text goes to
 * the context, to a per-thread slot for calls without a context, and to the
 * user's log callback. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "context.h"
#include "internal/error.h"

static _Thread_local char thread_last_error[FEA_ERROR_LEN];
static _Thread_local const char *thread_entry;

const char *fea_entry_enter(const char *name) {
  const char *previous = thread_entry;
  if (!previous) thread_entry = name;
  return previous;
}

void fea_entry_leave(const char *const *previous) { thread_entry = *previous; }

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static void deliver(const fea_context *ctx, fea_log_level level, const char *msg) {
  if (ctx && ctx->log_fn && level <= ctx->log_level) ctx->log_fn(ctx->log_user, level, msg);
}

fea_status fea_error_raise(const fea_context *ctx, fea_status code, const char *file, int line,
                           const char *func, const char *fmt, ...) {
  char msg[FEA_ERROR_LEN];
  int head = snprintf(msg, sizeof msg, "%s(): ", thread_entry ? thread_entry : func);
  if (head < 0) head = 0;
  if ((size_t)head < sizeof msg) {
    va_list ap;
    va_start(ap, fmt);
    int body = vsnprintf(msg + head, sizeof msg - (size_t)head, fmt, ap);
    va_end(ap);
    /* Where in the library, for bug reports: after the text the user reads. */
    size_t used = body < 0 ? (size_t)head : (size_t)head + (size_t)body;
    if (used < sizeof msg)
      snprintf(msg + used, sizeof msg - used, " (%s:%d)", base_name(file), line);
  }
  memcpy(thread_last_error, msg, sizeof msg);
  if (ctx) {
    /* The message is the one piece of state a const context may change: it
     * reports on the call, it is not part of the object. */
    memcpy(((fea_context *)ctx)->last_error, msg, sizeof msg);
    deliver(ctx, FEA_LOG_ERROR, msg);
  }
  return code;
}

void fea_log(const fea_context *ctx, fea_log_level level, const char *fmt, ...) {
  if (!ctx || !ctx->log_fn || level > ctx->log_level) return;
  char msg[FEA_ERROR_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  deliver(ctx, level, msg);
}

const char *fea_thread_last_error(void) { return thread_last_error; }

const char *fea_thread_last_error_text(void) {
  const char *body = strstr(thread_last_error, "(): ");
  return body ? body + 4 : thread_last_error;
}

void fea_error_restore(const char *msg) {
  snprintf(thread_last_error, sizeof thread_last_error, "%s", msg);
}
