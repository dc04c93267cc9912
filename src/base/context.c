/* The context object: creation on a backend (its ops merged along the
 * delegate chain), the choice of the best usable backend, the host
 * delegate of device contexts, and the context's release. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "internal/error.h"
#include "progress.h"
#include "resource.h"
#include "thread-budget.h"

static void context_free(void *object) {
  fea_context *ctx = object;
  if (ctx->host) fea_object_release(ctx->host);
  if (ctx->backend && ctx->backend->finalize) ctx->backend->finalize(ctx);
  free(ctx);
}

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
    TAKE(vec, alloc);
    TAKE(vec, release);
    TAKE(vec, write);
    TAKE(vec, read);
    TAKE(vec, set_all);
    TAKE(vec, copy);
    TAKE(vec, axpy);
    TAKE(vec, scale);
    TAKE(vec, dot);
    TAKE(vec, nrm2);
    TAKE(dense, gemm);
    TAKE(dense, syrk);
    TAKE(dense, trsm);
    TAKE(dense, potrf);
    TAKE(dense, potrs);
    TAKE(dense, getrf);
    TAKE(dense, getrs);
    TAKE(multifrontal, factor_alloc);
    TAKE(multifrontal, factor_release);
    TAKE(multifrontal, factor_level);
    TAKE(multifrontal, forward_level);
    TAKE(multifrontal, backward_level);
    TAKE(multifrontal, factor_below);
    TAKE(multifrontal, below_cut);
#undef TAKE
  }
}

fea_status fea_context_create_on(const struct fea_backend *b, const fea_resource_opts *opts,
                                 fea_context **out) {
  FEA_CHECK(b->abi == FEA_BACKEND_ABI, NULL, FEA_ERR_BACKEND,
            "backend %s was built for backend ABI %u, this library needs %u", b->prefix, b->abi,
            FEA_BACKEND_ABI);
  /* The options first, keys and values (the backend's spec): a bad option
   * is the caller's mistake, and must read as one on a machine where the
   * backend could not run anyway ("/gpu/cuda:streams=9" without a GPU). */
  FEA_CALL(fea_resource_check_keys(opts, b->prefix, b->options));
  char reason[256] = "";
  if (b->probe && b->probe(reason, sizeof reason) != FEA_SUCCESS)
    return FEA_ERROR(NULL, FEA_ERR_DEVICE, "backend %s is not usable here: %s", b->prefix, reason);
  /* The families ask a backend's slots, never its memory: a backend whose
   * data is not host memory builds its own operators, multigrid kernels and
   * M1, and names the host delegate they set up on. */
  FEA_CHECK(b->mem == FEA_MEM_HOST || (b->op && b->mg && b->m1 && b->host), NULL, FEA_ERR_BACKEND,
            "backend %s keeps device memory but lacks operators, multigrid kernels, an M1 or a "
            "host delegate",
            b->prefix);

  fea_context *ctx;
  FEA_CALL(fea_object_alloc(NULL, sizeof *ctx, "context", context_free, (void **)&ctx));
  ctx->backend = b;
  ctx->nthreads = 1;
  ctx->log_level = FEA_LOG_WARN;
  size_t used = (size_t)snprintf(ctx->resource, sizeof ctx->resource, "%s", b->prefix);
  for (int i = 0; i < opts->count && used < sizeof ctx->resource; i++)
    used += (size_t)snprintf(ctx->resource + used, sizeof ctx->resource - used, "%c%s=%s",
                             i ? ',' : ':', opts->key[i], opts->value[i]);
  merge_ops(ctx, b);
  /* The CPUs the load is measured on, before a backend binds its threads. */
  fea_thread_budget_init();
  fea_status s = b->init ? b->init(ctx, opts) : FEA_SUCCESS;
  if (s < 0) {
    free(ctx);
    return s;
  }
  *out = ctx;
  return FEA_SUCCESS;
}

fea_status fea_context_create_best(const char *family, const fea_resource_opts *opts,
                                   fea_context **out) {
  size_t n;
  const fea_backend_entry *e = fea_backend_entries(&n);
  size_t flen = strlen(family);
  int tried[16] = {0};
  const struct fea_backend *b[16] = {NULL};
  /* Resolving loads a module backend, so only the family's entries are
   * resolved: "/cpu" never loads /gpu/cuda's module. */
  const char *unloadable = NULL, *unloadable_why = "";
  for (size_t i = 0; i < n && i < 16; i++) {
    const char *why;
    if ((flen == 0 || (strncmp(e[i].prefix, family, flen) == 0 && e[i].prefix[flen] == '/')) &&
        fea_backend_resolve(&e[i], &b[i], &why) == FEA_ERR_DEVICE && !unloadable) {
      unloadable = e[i].prefix;
      unloadable_why = why;
    }
  }
  fea_status last = FEA_ERR_UNSUPPORTED, first = FEA_SUCCESS;
  char first_msg[FEA_ERROR_LEN] = "";
  for (;;) {
    size_t best = n;
    for (size_t i = 0; i < n && i < 16; i++)
      if (!tried[i] && b[i] && (best == n || b[i]->priority > b[best]->priority)) best = i;
    if (best == n) break;
    tried[best] = 1;
    last = fea_context_create_on(b[best], opts, out);
    if (last == FEA_SUCCESS) return FEA_SUCCESS;
    /* A value the preferred backend refuses (an option, an environment
     * variable it reads) is the caller's to fix: a lower backend that
     * ignores it would be a silent substitute for what was asked. Only
     * a backend that cannot run here (no device, not loadable, hwloc
     * failed) lets the next one try, and so does one that does not know
     * an option's key (it may be meant for a lower backend of the family). */
    if (last == FEA_ERR_INVALID_ARG && fea_resource_knows_keys(opts, b[best]->options)) return last;
    if (first == FEA_SUCCESS) {
      first = last;
      snprintf(first_msg, sizeof first_msg, "%s", fea_thread_last_error());
    }
  }
  if (first == FEA_SUCCESS && unloadable)
    return FEA_ERROR(NULL, FEA_ERR_DEVICE, "backend %s is not usable here: %s", unloadable,
                     unloadable_why);
  if (first == FEA_SUCCESS)
    return FEA_ERROR(NULL, FEA_ERR_UNSUPPORTED, "no backend of family '%s' was built", family);
  /* The preferred backend's failure is the one that explains the outcome
   * (a lower one typically only objects to options meant for the first). */
  fea_error_restore(first_msg);
  return first;
}

fea_status fea_context_host(fea_context *ctx, fea_context **host) {
  if (ctx->backend->mem == FEA_MEM_HOST) {
    *host = ctx;
    return FEA_SUCCESS;
  }
  if (!ctx->host) {
    const char *prefix = ctx->backend->host;
    const struct fea_backend *b = prefix ? fea_backend_find(prefix) : NULL;
    FEA_CHECK(b, ctx, FEA_ERR_BACKEND, "backend %s names no usable host delegate ('%s')",
              ctx->backend->prefix, prefix ? prefix : "(none)");
    fea_resource_opts none;
    memset(&none, 0, sizeof none);
    fea_context *h;
    fea_status st = fea_context_create_on(b, &none, &h);
    if (st < 0)
      return FEA_ERROR(ctx, st, "the host context %s of %s: %s", prefix, ctx->backend->prefix,
                       fea_thread_last_error());
    ctx->host = h;
  }
  /* The host work of a device context reports to the user's callback. */
  fea_progress_follow(ctx->host, ctx);
  *host = ctx->host;
  return FEA_SUCCESS;
}
