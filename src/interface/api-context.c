/* Context API: the resource string and its environment default, then
 * src/base/context.c; the context's settings and queries. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/blas.h"
#include "base/blas-kernels.h"
#include "base/context.h"
#include "base/environment.h"
#include "internal/error.h"
#include "base/memory-limit.h"
#include "base/resource.h"
#include "base/struct-copy.h"
#include "base/topology.h"

#define FEA_MAX_THREADS 1024

/* The context for resource (not NULL), found in the registry. */
static fea_status create_named(const char *resource, fea_context **out) {
  fea_resource_opts opts;
  char base[64];
  FEA_CALL(fea_resource_parse(resource, base, sizeof base, &opts));

  size_t n;
  const fea_backend_entry *e = fea_backend_entries(&n);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(e[i].prefix, base) != 0) continue;
    const struct fea_backend *b;
    const char *why;
    fea_status st = fea_backend_resolve(&e[i], &b, &why);
    if (st == FEA_ERR_UNSUPPORTED) return FEA_ERROR(NULL, st, "backend %s is %s", base, why);
    if (st < 0) return FEA_ERROR(NULL, st, "backend %s is not usable here: %s", base, why);
    return fea_context_create_on(b, &opts, out);
  }
  size_t blen = strlen(base);
  for (size_t i = 0; i < n; i++)
    if (strncmp(e[i].prefix, base, blen) == 0 && e[i].prefix[blen] == '/')
      return fea_context_create_best(base, &opts, out);

  char known[256] = "";
  for (size_t i = 0, used = 0; i < n && used < sizeof known; i++)
    used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", e[i].prefix);
  return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG, "unknown resource '%s' (known backends: %s)",
                   resource, known);
}

fea_status fea_context_create(const char *resource, fea_context **out) {
  FEA_ENTRY();
  FEA_CHECK_NULL(out, NULL);
  *out = NULL;
  /* Every variable the library may read, whichever backend is chosen: a
   * malformed one is refused here rather than ignored by the backend that
   * happens not to read it (environment.h). */
  FEA_CALL(fea_env_check());
  if (resource) return create_named(resource, out);
  const char *env = fea_env_backend();
  if (!env) {
    fea_resource_opts none;
    memset(&none, 0, sizeof none);
    return fea_context_create_best("", &none, out);
  }
  /* The resource came from the environment: say so in any refusal. */
  fea_status st = create_named(env, out);
  if (st < 0) {
    char why[FEA_ERROR_LEN];
    snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
    return FEA_ERROR(NULL, st,
                     "environment variable FEACCEL_BACKEND=%s (the resource for a NULL "
                     "one): %s",
                     env, why);
  }
  return st;
}

fea_status fea_context_destroy(fea_context **ctx) {
  FEA_ENTRY();
  if (!ctx || !*ctx) return FEA_SUCCESS;
  fea_object_release(*ctx);
  *ctx = NULL;
  return FEA_SUCCESS;
}

const char *fea_context_last_error(const fea_context *ctx) {
  FEA_ENTRY();
  return ctx ? ctx->last_error : fea_thread_last_error();
}

fea_status fea_context_get_num_threads(const fea_context *ctx, int *nthreads) {
  FEA_ENTRY();
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(nthreads, ctx);
  *nthreads = ctx->nthreads;
  return FEA_SUCCESS;
}

fea_status fea_context_set_num_threads(fea_context *ctx, int nthreads) {
  FEA_ENTRY();
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK(nthreads >= 1 && nthreads <= FEA_MAX_THREADS, ctx, FEA_ERR_INVALID_ARG,
            "thread count %d is outside [1, %d]", nthreads, FEA_MAX_THREADS);
  if (ctx->backend->set_num_threads) return ctx->backend->set_num_threads(ctx, nthreads);
  FEA_CHECK(nthreads == ctx->nthreads, ctx, FEA_ERR_UNSUPPORTED,
            "backend %s runs on %d thread(s) and cannot use %d", ctx->backend->prefix,
            ctx->nthreads, nthreads);
  return FEA_SUCCESS;
}

fea_status fea_context_set_memory_limit(fea_context *ctx, uint64_t bytes) {
  FEA_ENTRY();
  FEA_CHECK_NULL(ctx, NULL);
  ctx->memory_limit = bytes;
  return FEA_SUCCESS;
}

fea_status fea_context_get_memory_limit(const fea_context *ctx, uint64_t *bytes) {
  FEA_ENTRY();
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(bytes, ctx);
  fea_memory_budget b;
  fea_memory_budget_get(ctx, 0, &b);
  *bytes = b.bytes;
  return FEA_SUCCESS;
}

fea_status fea_context_set_log_callback(fea_context *ctx, fea_log_level max_level, fea_log_fn fn,
                                        void *user) {
  FEA_ENTRY();
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK(max_level >= FEA_LOG_ERROR && max_level <= FEA_LOG_DEBUG, ctx, FEA_ERR_INVALID_ARG,
            "unknown log level %d (expected FEA_LOG_ERROR..FEA_LOG_DEBUG)", (int)max_level);
  ctx->log_fn = fn;
  ctx->log_user = user;
  ctx->log_level = max_level;
  /* A context has no callback when it is created: the first one installed
   * that takes warnings is the earliest that can hear of slow BLAS kernels
   * and of the environment variables that chose its settings. */
  fea_blas_kernels_warn_once(ctx);
  fea_env_warn_overrides(ctx);
  return FEA_SUCCESS;
}

fea_status fea_context_set_progress_callback(fea_context *ctx, fea_progress_fn fn, void *user,
                                             double interval_s) {
  FEA_ENTRY();
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK(isfinite(interval_s) && interval_s >= 0.0 && interval_s <= 60.0, ctx,
            FEA_ERR_INVALID_ARG, "progress interval %g s is outside [0, 60]", interval_s);
  ctx->progress_fn = fn;
  ctx->progress_user = user;
  ctx->progress_interval = interval_s;
  ctx->progress_phase = NULL;
  ctx->progress_fraction = 0.0;
  return FEA_SUCCESS;
}

fea_status fea_context_get_info(const fea_context *ctx, fea_context_info *info) {
  FEA_ENTRY();
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(info, ctx);
  FEA_CALL(fea_struct_check(ctx, info, "info", &fea_struct_context_info));
  fea_context_info full = FEA_CONTEXT_INFO_INIT;
  fea_topology topo;
  FEA_CALL(fea_topology_get(&topo));
  snprintf(full.backend, sizeof full.backend, "%s", ctx->backend->prefix);
  snprintf(full.resource, sizeof full.resource, "%s", ctx->resource);
  full.num_threads = ctx->nthreads;
  full.bound = ctx->bound;
  full.num_cores = topo.cores;
  full.num_pus = topo.pus;
  full.num_numa_nodes = topo.numa_nodes;
  snprintf(full.cpu_model, sizeof full.cpu_model, "%s", topo.cpu_model);
  fea_blas_describe(full.blas, sizeof full.blas);
  fea_blas_kernels k;
  fea_blas_kernels_detect(&k);
  snprintf(full.blas_kernels, sizeof full.blas_kernels, "%s", k.name);
  snprintf(full.blas_isa, sizeof full.blas_isa, "%s", fea_isa_name(k.blas_isa));
  snprintf(full.cpu_isa, sizeof full.cpu_isa, "%s", fea_isa_name(k.cpu_isa));
  full.blas_slow = k.slow;
  snprintf(full.blas_advice, sizeof full.blas_advice, "%s", k.advice);
  if (ctx->backend->fill_info) ctx->backend->fill_info(ctx, &full);
  return fea_struct_copy_out(ctx, info, &full, "info", &fea_struct_context_info);
}
