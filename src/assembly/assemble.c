/* The assembly drivers: a run configuration from the options, the pick of
 * the strategy (AUTO), scratch storage (so a failed assembly leaves the
 * caller's matrix and right-hand side as they were), and the run into a CSR
 * or dense target. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "assembly/assemble.h"
#include "assembly/conc.h"
#include "base/context.h"
#include "base/environment.h"
#include "internal/error.h"
#include "linalg/matrix.h"
#include "disc/pattern.h"
#include "base/struct-copy.h"

void fea_conc_config_init(fea_conc_config *cfg, const fea_context *ctx,
                          const fea_assembly_desc *d) {
  memset(cfg, 0, sizeof *cfg);
  cfg->threads = d->threads ? d->threads : ctx->nthreads;
  if (cfg->threads < 1) cfg->threads = 1;
  cfg->lock_stripe = d->lock_stripe;
  cfg->spin = d->spin;
  cfg->tsx_batch = d->tsx_batch;
  cfg->tsx_retries = d->tsx_retries;
  cfg->backoff = d->backoff;
  /* A malformed value was refused when the context was made
   * (fea_env_check); one set since then is reported, and not applied. */
  int force = 0;
  if (fea_env_tsx_force_abort(&force) < 0)
    fea_log(ctx, FEA_LOG_WARN, "%s; TSX transactions are not forced to abort",
            fea_thread_last_error_text());
  /* The hook overrides what the caller asked of TSX: say so. */
  if (force && (d->strategy == FEA_UPDATE_TSX || d->strategy == FEA_UPDATE_AUTO))
    fea_log(ctx, FEA_LOG_WARN,
            "environment variable FEACCEL_TSX_FORCE_ABORT=1: every TSX transaction aborts on "
            "purpose (a test hook), so TSX updates take the fallback lock");
  cfg->tsx_force_abort = force;
}

/* Pick (AUTO), check availability, run into job->target (zeroed by the caller). */
static fea_status pick_and_run(const fea_problem *pb, fea_conc_job *job, fea_update_strategy s,
                               fea_assembly_stats *stats) {
  /* The plan AUTO built on the way (PRIVATE_BUFFERS' ownership) serves
   * this one run instead of being built again by it. */
  fea_conc_plan plan = {.strategy = FEA_UPDATE_AUTO};
  if (s == FEA_UPDATE_AUTO) s = fea_conc_auto_pick(job, job->cfg.threads, &plan);
  const struct fea_update_ops *ops = fea_update_ops_get(s);
  char why[256] = "";
  fea_status st = FEA_SUCCESS;
  if (!ops) {
    st = FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG, "unknown update strategy %d", (int)s);
  } else if (ops->available && !ops->available(&job->cfg, why, sizeof why)) {
    st = FEA_ERROR(pb->ctx, FEA_ERR_UNSUPPORTED, "the %s strategy cannot run here: %s", ops->name,
                   why);
  } else {
    job->plan = plan.strategy == s ? &plan : NULL;
    st = fea_conc_run(job, s, stats);
    job->plan = NULL;
  }
  fea_conc_plan_free(&plan);
  return st;
}

/* Fill the caller's stats up to its .size (checked before the run). */
static void give_stats(const fea_problem *pb, fea_assembly_stats *out,
                       const fea_assembly_stats *s) {
  if (out) (void)fea_struct_copy_out(pb->ctx, out, s, "stats", &fea_struct_assembly_stats);
}

/* Shared by the CSR and dense entry points: target_len values, the matrix
 * part first, then num_free right-hand-side values. */
static fea_status assemble_into(const fea_problem *pb, fea_conc_job *job, fea_index matrix_len,
                                fea_update_strategy s, fea_assembly_stats *stats,
                                double **scratch) {
  double t0 = omp_get_wtime();
  if (stats) FEA_CALL(fea_struct_check(pb->ctx, stats, "stats", &fea_struct_assembly_stats));
  fea_index *edofs = NULL;
  FEA_CALL(fea_element_dof_table(pb->space, &edofs));
  const fea_index len = matrix_len + pb->num_free;
  double *t = malloc(((size_t)len + 1) * sizeof *t);
  if (!t) {
    free(edofs);
    return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for %lld scratch values of the assembly", (long long)len);
  }
  /* Zeroed by the threads that will write it (first touch); the syncs make
   * the region's end visible to TSan (conc.h, fea_conc_sync). */
  atomic_init(&job->sync, 0u);
#pragma omp parallel num_threads(job->cfg.threads)
  {
#pragma omp for schedule(static) nowait
    for (fea_index i = 0; i < len; i++) t[i] = 0.0;
    fea_conc_sync(&job->sync);
  }
  fea_conc_sync(&job->sync);
  fea_conc_job_init(job, pb, edofs);
  job->target = t;
  job->target_len = len;
  job->rhs_offset = matrix_len;
  fea_assembly_stats st_local = FEA_ASSEMBLY_STATS_INIT;
  fea_status st = pick_and_run(pb, job, s, &st_local);
  free(edofs);
  if (st != FEA_SUCCESS) {
    free(t);
    return st;
  }
  st_local.time_s = omp_get_wtime() - t0;
  st_local.updates_per_s = st_local.time_s > 0 ? (double)st_local.updates / st_local.time_s : 0.0;
  give_stats(pb, stats, &st_local);
  *scratch = t;
  return FEA_SUCCESS;
}

fea_status fea_conc_assemble_csr(const fea_problem *problem, fea_matrix *A, double *b,
                                 fea_update_strategy s, const fea_conc_config *cfg,
                                 fea_assembly_stats *stats) {
  FEA_CHECK_NULL(A, problem->ctx);
  FEA_CHECK(b || problem->num_free == 0, problem->ctx, FEA_ERR_INVALID_ARG, "argument 'b' is NULL");
  FEA_CHECK(A->rows == problem->num_free && A->cols == problem->num_free, problem->ctx,
            FEA_ERR_DIMENSION,
            "the matrix is %lld x %lld but the problem has %lld free DoFs: it was made for "
            "another problem",
            (long long)A->rows, (long long)A->cols, (long long)problem->num_free);
  fea_conc_job *job = calloc(1, sizeof *job);
  FEA_CHECK(job, problem->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the assembly job");
  job->row_ptr = A->row_ptr;
  job->col_idx = A->col_idx;
  job->cfg = *cfg;
  double *t = NULL;
  fea_status st = assemble_into(problem, job, A->nnz, s, stats, &t);
  free(job);
  if (st != FEA_SUCCESS) return st;
  /* Success: install the values (the scratch array becomes A's storage). */
  memcpy(b, t + A->nnz, (size_t)problem->num_free * sizeof *b);
  double *vals = realloc(t, ((size_t)A->nnz + 1) * sizeof *t);
  free(A->values);
  A->values = vals ? vals : t;
  return FEA_SUCCESS;
}

fea_status fea_conc_assemble_dense(const fea_problem *problem, double *A_dense, fea_index ld,
                                   double *b, fea_update_strategy s, const fea_conc_config *cfg,
                                   fea_assembly_stats *stats) {
  const fea_index nf = problem->num_free;
  FEA_CHECK(A_dense || nf == 0, problem->ctx, FEA_ERR_INVALID_ARG, "argument 'A_dense' is NULL");
  FEA_CHECK(b || nf == 0, problem->ctx, FEA_ERR_INVALID_ARG, "argument 'b' is NULL");
  FEA_CHECK(ld >= nf && ld >= 1, problem->ctx, FEA_ERR_DIMENSION,
            "leading dimension %lld is smaller than the %lld free DoFs", (long long)ld,
            (long long)nf);
  FEA_CHECK(nf == 0 || nf <= (fea_index)(SIZE_MAX / sizeof(double)) / ld, problem->ctx,
            FEA_ERR_DIMENSION, "a dense %lld x %lld matrix does not fit in memory", (long long)nf,
            (long long)ld);
  fea_conc_job *job = calloc(1, sizeof *job);
  FEA_CHECK(job, problem->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the assembly job");
  job->ld = ld;
  job->cfg = *cfg;
  double *t = NULL;
  fea_status st = assemble_into(problem, job, nf * ld, s, stats, &t);
  free(job);
  if (st != FEA_SUCCESS) return st;
  for (fea_index r = 0; r < nf; r++) memcpy(A_dense + r * ld, t + r * ld, (size_t)nf * sizeof *t);
  memcpy(b, t + nf * ld, (size_t)nf * sizeof *b);
  free(t);
  return FEA_SUCCESS;
}
