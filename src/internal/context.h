/* The context object as the library sees it. */
#ifndef FEA_INTERNAL_CONTEXT_H
#define FEA_INTERNAL_CONTEXT_H

#include "backend.h"
#include "multifrontal.h"

#define FEA_ERROR_LEN 512

struct fea_context {
  int refcount;                      /* the creator plus every object made from it */
  const struct fea_backend *backend;
  /* Ops tables with missing slots already filled from the delegate chain. */
  struct fea_vector_ops vec;
  struct fea_dense_ops dense;
  struct fea_multifrontal_ops multifrontal;
  char resource[128];
  int nthreads;
  int bound;
  fea_log_fn log_fn;
  void *log_user;
  fea_log_level log_level;
  char last_error[FEA_ERROR_LEN];
  void *backend_data;                /* owned by the backend: handles, streams */
};

/* Reference counting: objects take one on their context and drop it on destroy. */
void fea_context_retain(fea_context *ctx);
void fea_context_release(fea_context *ctx);

#endif
