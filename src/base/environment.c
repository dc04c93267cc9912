/* The library's environment variables (environment.h): one parser each,
 * all refusing what they do not recognize with the variable's name and
 * value, so that a typo never reads as the default. */
#include "environment.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "internal/error.h"
#include "topology.h"

/* The value, or NULL when unset or empty. */
static const char *env_value(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

const char *fea_env_backend(void) { return env_value("FEACCEL_BACKEND"); }

fea_status fea_env_threads_adapt(int *set, fea_thread_adapt *adapt) {
  *set = 0;
  const char *v = env_value("FEACCEL_THREADS_ADAPT");
  if (!v) return FEA_SUCCESS;
  const int load = strcmp(v, "load") == 0, off = strcmp(v, "off") == 0;
  FEA_CHECK(load || off, NULL, FEA_ERR_INVALID_ARG,
            "environment variable FEACCEL_THREADS_ADAPT=%s is not 'load' or 'off'", v);
  *adapt = load ? FEA_THREADS_ADAPT_LOAD : FEA_THREADS_ADAPT_OFF;
  *set = 1;
  return FEA_SUCCESS;
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

fea_status fea_env_omp_num_threads(long *first) {
  *first = 0;
  const char *v = env_value("OMP_NUM_THREADS");
  if (!v) return FEA_SUCCESS;
  long head = 0;
  int ok = 1;
  for (const char *p = v; ok;) {
    while (is_blank(*p)) p++;
    char *end = NULL;
    errno = 0;
    const long n = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : 0;
    ok = end && errno == 0 && n >= 1;
    if (!ok) break;
    if (!head) head = n;
    p = end;
    while (is_blank(*p)) p++;
    if (*p == '\0') break;
    ok = *p == ',';
    p++;
  }
  FEA_CHECK(ok, NULL, FEA_ERR_INVALID_ARG,
            "environment variable OMP_NUM_THREADS=%s is not a list of positive thread counts "
            "(e.g. 4, or 4,2 for nested levels)",
            v);
  *first = head;
  return FEA_SUCCESS;
}

fea_status fea_env_tsx_force_abort(int *on) {
  *on = 0;
  const char *v = env_value("FEACCEL_TSX_FORCE_ABORT");
  if (!v) return FEA_SUCCESS;
  FEA_CHECK(strcmp(v, "0") == 0 || strcmp(v, "1") == 0, NULL, FEA_ERR_INVALID_ARG,
            "environment variable FEACCEL_TSX_FORCE_ABORT=%s is not 0 or 1", v);
  *on = v[0] == '1';
  return FEA_SUCCESS;
}

fea_status fea_env_check(void) {
  int set, on;
  fea_thread_adapt adapt;
  long first;
  FEA_CALL(fea_env_threads_adapt(&set, &adapt));
  FEA_CALL(fea_env_omp_num_threads(&first));
  return fea_env_tsx_force_abort(&on);
}

/* Whether the backend of ctx takes option `key` and ctx's resource did not set it. */
static int option_left_to_env(const fea_context *ctx, const char *key) {
  const size_t klen = strlen(key);
  int takes = 0;
  for (const char *const *o = ctx->backend->options; o && *o && !takes; o++)
    takes = strncmp(*o, key, klen) == 0 && (*o)[klen] == '=';
  if (!takes) return 0;
  const char *opts = strchr(ctx->resource, ':');
  for (const char *p = opts; p && *p; p = strchr(p + 1, ','))
    if (strncmp(p + 1, key, klen) == 0 && p[1 + klen] == '=') return 0;
  return 1;
}

void fea_env_warn_overrides(fea_context *ctx) {
  if (!ctx || !ctx->log_fn || ctx->log_level < FEA_LOG_WARN || ctx->env_warned) return;
  ctx->env_warned = 1;
  long threads = 0;
  fea_topology topo = {.cores = 0};
  const int known = fea_topology_get(&topo) == FEA_SUCCESS;
  /* A count equal to the default (one per core) changed nothing. */
  if (fea_env_omp_num_threads(&threads) == FEA_SUCCESS && threads > 0 &&
      option_left_to_env(ctx, "threads") && ctx->nthreads == threads &&
      (!known || topo.cores != threads))
    fea_log(ctx, FEA_LOG_WARN,
            "environment variable OMP_NUM_THREADS=%s set the thread count of %s to %d in place "
            "of its default (one per core: %d)%s; set threads= in the resource or call "
            "fea_context_set_num_threads() to choose it",
            getenv("OMP_NUM_THREADS"), ctx->backend->prefix, ctx->nthreads, topo.cores,
            known && ctx->nthreads > topo.pus ? ", oversubscribing the hardware threads" : "");
  int set = 0;
  fea_thread_adapt adapt;
  if (fea_env_threads_adapt(&set, &adapt) == FEA_SUCCESS && set && option_left_to_env(ctx, "adapt"))
    fea_log(ctx, FEA_LOG_WARN,
            "environment variable FEACCEL_THREADS_ADAPT=%s set adapt=%s on %s in place of its "
            "default; set adapt= in the resource to choose it",
            getenv("FEACCEL_THREADS_ADAPT"), getenv("FEACCEL_THREADS_ADAPT"), ctx->backend->prefix);
}
