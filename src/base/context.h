/* The context object as the library sees it. */
#ifndef FEA_INTERNAL_CONTEXT_H
#define FEA_INTERNAL_CONTEXT_H

#include "internal/backend.h"
#include "internal/multifrontal.h"
#include "internal/object.h"

#define FEA_ERROR_LEN 512

struct fea_context {
  FEA_OBJECT_HEADER; /* ctx NULL: the context is the root */
  const struct fea_backend *backend;
  /* Ops tables with missing slots already filled from the delegate chain. */
  struct fea_vector_ops vec;
  struct fea_dense_ops dense;
  struct fea_multifrontal_ops multifrontal;
  char resource[128];
  int nthreads;
  int adapt;             /* fea_thread_adapt: whether regions follow the load (thread-budget.h) */
  uint64_t memory_limit; /* fea_context_set_memory_limit; 0: MemAvailable */
  int bound;
  fea_log_fn log_fn;
  void *log_user;
  fea_log_level log_level;
  int env_warned; /* the environment's overrides were logged (environment.c) */
  /* fea_context_set_progress_callback, and what src/base/progress.c last
   * delivered: the phase (a static string), its fraction and when. */
  fea_progress_fn progress_fn;
  void *progress_user;
  double progress_interval;
  const char *progress_phase;
  double progress_fraction, progress_time;
  char last_error[FEA_ERROR_LEN];
  void *backend_data; /* owned by the backend: handles, streams */
  fea_context *host;  /* device contexts: fea_context_host's, or NULL */
};

/* A context on backend b with the parsed options (src/base/context.c). */
fea_status fea_context_create_on(const struct fea_backend *b, const fea_resource_opts *opts,
                                 fea_context **out);
/* The best usable backend among those whose prefix starts with family ("" = all). */
fea_status fea_context_create_best(const char *family, const fea_resource_opts *opts,
                                   fea_context **out);
/* The context on which a device context does its host-side work (element
 * integration, symbolic setup): for a backend with memory on the host, ctx
 * itself; else the context of the backend's host delegate
 * (fea_backend.host), created on first use with ctx's thread count, owned
 * by ctx and destroyed with it. The one place where the library makes a
 * context the user did not ask for. */
FEA_PRIVATE_EXPORT fea_status fea_context_host(fea_context *ctx, fea_context **host);

#endif
