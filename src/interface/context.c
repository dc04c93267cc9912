/* Context creation, backend resolution and the context's settings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "context.h"
#include "error.h"
#include "resource.h"
#include "struct-copy.h"
#include "topology.h"

#define FEA_MAX_THREADS 1024

/* Fill the context's ops with the backend's slots, then the delegate chain's,
 * but only across backends that keep data in the same memory space. */
static void merge_ops(fea_context *ctx, const struct fea_backend *b) {
  memset(&ctx->vec, 0, sizeof ctx->vec);
  memset(&ctx->dense, 0, sizeof ctx->dense);
  memset(&ctx->multifrontal, 0, sizeof ctx->multifrontal);
  for (int depth = 0; b && depth < 8; depth++, b = fea_backend_find(b->delegate)) {
    if (b->mem != ctx->backend->mem) continue;
#define TAKE(table, slot) \
  if (!ctx->table.slot && b->table) ctx->table.slot = b->table->slot
    TAKE(vec, alloc); TAKE(vec, release); TAKE(vec, write); TAKE(vec, read);
    TAKE(vec, set_all); TAKE(vec, copy); TAKE(vec, axpy); TAKE(vec, scale);
    TAKE(vec, dot); TAKE(vec, nrm2);
    TAKE(dense, gemm); TAKE(dense, syrk); TAKE(dense, trsm); TAKE(dense, potrf);
    TAKE(dense, potrs); TAKE(dense, getrf); TAKE(dense, getrs);
    TAKE(multifrontal, factor_alloc); TAKE(multifrontal, factor_release); TAKE(multifrontal, factor_level);
    TAKE(multifrontal, forward_level); TAKE(multifrontal, backward_level);
#undef TAKE
  }
}

static fea_status create_on(const struct fea_backend *b, const fea_resource_opts *opts,
                            fea_context **out) {
  FEA_CHECK(b->abi == FEA_BACKEND_ABI, NULL, FEA_ERR_BACKEND,
            "backend %s was built for backend ABI %u, this library needs %u", b->prefix, b->abi,
            FEA_BACKEND_ABI);
  char reason[256] = "";
  if (b->probe && b->probe(reason, sizeof reason) != FEA_SUCCESS)
    return FEA_ERROR(NULL, FEA_ERR_DEVICE, "backend %s is not usable here: %s", b->prefix, reason);
  FEA_CALL(fea_resource_check_keys(opts, b->prefix, b->options));

  fea_context *ctx = calloc(1, sizeof *ctx);
  FEA_CHECK(ctx, NULL, FEA_ERR_OUT_OF_MEMORY, "no memory for a context (%zu bytes)", sizeof *ctx);
  ctx->refcount = 1;
  ctx->backend = b;
  ctx->nthreads = 1;
  ctx->log_level = FEA_LOG_WARN;
  size_t used = (size_t)snprintf(ctx->resource, sizeof ctx->resource, "%s", b->prefix);
  for (int i = 0; i < opts->count && used < sizeof ctx->resource; i++)
    used += (size_t)snprintf(ctx->resource + used, sizeof ctx->resource - used, "%c%s=%s",
                             i ? ',' : ':', opts->key[i], opts->value[i]);
  merge_ops(ctx, b);
  fea_status s = b->init ? b->init(ctx, opts) : FEA_SUCCESS;
  if (s < 0) {
    free(ctx);
    return s;
  }
  *out = ctx;
  return FEA_SUCCESS;
}

/* Best usable backend among those whose prefix starts with family ("" = all). */
static fea_status create_best(const char *family, const fea_resource_opts *opts,
                              fea_context **out) {
  size_t n;
  const fea_backend_entry *e = fea_backend_entries(&n);
  int tried[16] = {0};
  fea_status last = FEA_ERR_UNSUPPORTED, first = FEA_SUCCESS;
  char first_msg[FEA_ERROR_LEN] = "";
  size_t flen = strlen(family);
  for (;;) {
    size_t best = n;
    for (size_t i = 0; i < n && i < 16; i++) {
      int in_family = flen == 0 || (strncmp(e[i].prefix, family, flen) == 0 && e[i].prefix[flen] == '/');
      if (!tried[i] && e[i].backend && in_family &&
          (best == n || e[i].backend->priority > e[best].backend->priority))
        best = i;
    }
    if (best == n) break;
    tried[best] = 1;
    last = create_on(e[best].backend, opts, out);
    if (last == FEA_SUCCESS) return FEA_SUCCESS;
    if (first == FEA_SUCCESS) {
      first = last;
      snprintf(first_msg, sizeof first_msg, "%s", fea_thread_last_error());
    }
  }
  if (first == FEA_SUCCESS)
    return FEA_ERROR(NULL, FEA_ERR_UNSUPPORTED, "no backend of family '%s' was built", family);
  /* The preferred backend's failure is the one that explains the outcome
   * (a lower one typically only objects to options meant for the first). */
  fea_error_restore(first_msg);
  return first;
}

fea_status fea_context_create(const char *resource, fea_context **out) {
  FEA_CHECK_NULL(out, NULL);
  *out = NULL;
  if (!resource) {
    const char *env = getenv("FEACCEL_BACKEND");
    if (env && *env) resource = env;
  }
  fea_resource_opts opts;
  if (!resource) {
    memset(&opts, 0, sizeof opts);
    return create_best("", &opts, out);
  }
  char base[64];
  FEA_CALL(fea_resource_parse(resource, base, sizeof base, &opts));

  size_t n;
  const fea_backend_entry *e = fea_backend_entries(&n);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(e[i].prefix, base) != 0) continue;
    if (!e[i].backend)
      return FEA_ERROR(NULL, FEA_ERR_UNSUPPORTED, "backend %s is %s", base, e[i].not_built_reason);
    return create_on(e[i].backend, &opts, out);
  }
  size_t blen = strlen(base);
  for (size_t i = 0; i < n; i++)
    if (strncmp(e[i].prefix, base, blen) == 0 && e[i].prefix[blen] == '/')
      return create_best(base, &opts, out);

  char known[256] = "";
  for (size_t i = 0, used = 0; i < n && used < sizeof known; i++)
    used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", e[i].prefix);
  return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG, "unknown resource '%s' (known backends: %s)",
                   resource, known);
}

void fea_context_retain(fea_context *ctx) { ctx->refcount++; }

void fea_context_release(fea_context *ctx) {
  if (!ctx || --ctx->refcount > 0) return;
  if (ctx->backend->finalize) ctx->backend->finalize(ctx);
  free(ctx);
}

fea_status fea_context_destroy(fea_context **ctx) {
  if (!ctx || !*ctx) return FEA_SUCCESS;
  fea_context_release(*ctx);
  *ctx = NULL;
  return FEA_SUCCESS;
}

const char *fea_context_last_error(const fea_context *ctx) {
  return ctx ? ctx->last_error : fea_thread_last_error();
}

fea_status fea_context_get_num_threads(const fea_context *ctx, int *nthreads) {
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(nthreads, ctx);
  *nthreads = ctx->nthreads;
  return FEA_SUCCESS;
}

fea_status fea_context_set_num_threads(fea_context *ctx, int nthreads) {
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK(nthreads >= 1 && nthreads <= FEA_MAX_THREADS, ctx, FEA_ERR_INVALID_ARG,
            "thread count %d is outside [1, %d]", nthreads, FEA_MAX_THREADS);
  if (ctx->backend->set_num_threads) return ctx->backend->set_num_threads(ctx, nthreads);
  FEA_CHECK(nthreads == ctx->nthreads, ctx, FEA_ERR_UNSUPPORTED,
            "backend %s runs on %d thread(s) and cannot use %d", ctx->backend->prefix,
            ctx->nthreads, nthreads);
  return FEA_SUCCESS;
}

fea_status fea_context_set_log_callback(fea_context *ctx, fea_log_level max_level, fea_log_fn fn,
                                        void *user) {
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK(max_level >= FEA_LOG_ERROR && max_level <= FEA_LOG_DEBUG, ctx, FEA_ERR_INVALID_ARG,
            "unknown log level %d (expected FEA_LOG_ERROR..FEA_LOG_DEBUG)", (int)max_level);
  ctx->log_fn = fn;
  ctx->log_user = user;
  ctx->log_level = max_level;
  return FEA_SUCCESS;
}

fea_status fea_context_get_info(const fea_context *ctx, fea_context_info *info) {
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
  if (ctx->backend->fill_info) ctx->backend->fill_info(ctx, &full);
  return fea_struct_copy_out(ctx, info, &full, "info", &fea_struct_context_info);
}
