/* /cpu/threads: OpenMP threads sized from the hwloc topology, optionally
 * bound to cores, as many of them per region as the machine's load leaves
 * cores for (adapt=, thread-budget.h). Slots it does not fill come from
 * /cpu/ref, whose BLAS calls then run with this context's thread count. */
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "base/environment.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "base/resource.h"
#include "base/thread-budget.h"
#include "base/topology.h"

/* The options and their values (resource.h): checked before init runs. */
static const char *const threads_options[] = {"threads=1..1024", "bind=core|none", "adapt=load|off",
                                              NULL};

static fea_status apply_threads(fea_context *ctx, int nthreads, int bind) {
  fea_topology topo;
  FEA_CALL(fea_topology_get(&topo));
  if (nthreads > topo.pus)
    fea_log(ctx, FEA_LOG_WARN, "%d threads on %d hardware threads: oversubscribed", nthreads,
            topo.pus);
  if (bind)
    FEA_CALL(fea_topology_bind_omp_threads(ctx, nthreads));
  else if (ctx->bound)
    FEA_CALL(fea_topology_unbind_omp_threads(ctx, ctx->nthreads));
  ctx->nthreads = nthreads;
  ctx->bound = bind;
  fea_log(ctx, FEA_LOG_INFO, "/cpu/threads: %d threads on %d cores (%d PUs), %s", nthreads,
          topo.cores, topo.pus, bind ? "bound to cores" : "not bound");
  return FEA_SUCCESS;
}

static fea_status threads_init(fea_context *ctx, const fea_resource_opts *opts) {
  fea_topology topo;
  FEA_CALL(fea_topology_get(&topo));
  /* OMP_NUM_THREADS (its first count), when set, is the default; else one
   * thread per core. Read here rather than through omp_get_max_threads(),
   * which libgomp fixed at load time. The threads= option wins over it. */
  long nthreads = topo.cores, env_threads = 0;
  FEA_CALL(fea_env_omp_num_threads(&env_threads));
  if (!fea_resource_opt(opts, "threads") && env_threads) {
    FEA_CHECK(env_threads <= 1024, ctx, FEA_ERR_INVALID_ARG,
              "environment variable OMP_NUM_THREADS=%s asks for %ld threads; /cpu/threads runs "
              "1 to 1024 (or set threads= in the resource)",
              getenv("OMP_NUM_THREADS"), env_threads);
    nthreads = env_threads;
  }
  FEA_CALL(fea_resource_opt_int(opts, "threads", 1, 1024, &nthreads));
  const char *bind = fea_resource_opt(opts, "bind");
  FEA_CHECK(!bind || strcmp(bind, "core") == 0 || strcmp(bind, "none") == 0, ctx,
            FEA_ERR_INVALID_ARG, "option bind=%s is not 'core' or 'none'", bind);
  fea_thread_adapt adapt;
  FEA_CALL(fea_thread_budget_option(opts, &adapt));
  ctx->adapt = (int)adapt;
  return apply_threads(ctx, (int)nthreads, bind && strcmp(bind, "core") == 0);
}

static fea_status threads_set_num_threads(fea_context *ctx, int nthreads) {
  return apply_threads(ctx, nthreads, ctx->bound);
}

static void threads_finalize(fea_context *ctx) {
  /* Leave the process's OpenMP threads as unbound as we found them. */
  if (ctx->bound) (void)fea_topology_unbind_omp_threads(ctx, ctx->nthreads);
}

const struct fea_backend fea_backend_cpu_threads = {
    .abi = FEA_BACKEND_ABI,
    .prefix = "/cpu/threads",
    .priority = 20,
    .delegate = "/cpu/ref",
    .mem = FEA_MEM_HOST,
    .options = threads_options,
    .probe = NULL, /* OpenMP is linked in: always usable */
    .init = threads_init,
    .finalize = threads_finalize,
    .set_num_threads = threads_set_num_threads,
    .vec = &fea_cpu_threads_vec_ops,
    .multifrontal = &fea_cpu_threads_multifrontal_ops, /* level-parallel; storage from /cpu/ref */
    .dense = NULL,                                     /* /cpu/ref's, with multithreaded OpenBLAS */
};
