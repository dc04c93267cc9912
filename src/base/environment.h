/* The environment variables the library reads, each parsed and checked in
 * one place (src/base/environment.c; the table is in docs/backends.md,
 * "Environment variables"). Unset and empty are the same: the default. A
 * value outside a variable's grammar is FEA_ERR_INVALID_ARG naming the
 * variable and the value, never a default in its place. */
#ifndef FEA_INTERNAL_ENVIRONMENT_H
#define FEA_INTERNAL_ENVIRONMENT_H

#include <feaccel/types.h>

#include "thread-budget.h"

/* FEACCEL_BACKEND, the resource a NULL resource stands for, or NULL. Its
 * grammar is the resource string's, checked where it is parsed. */
const char *fea_env_backend(void);

/* FEACCEL_THREADS_ADAPT = load | off; *set is 0 (and *adapt untouched)
 * when it is unset or empty. */
fea_status fea_env_threads_adapt(int *set, fea_thread_adapt *adapt);

/* OMP_NUM_THREADS as OpenMP defines it, a list of positive counts
 * "N[,N...]" (blanks around a count allowed); *first is the first count,
 * 0 when unset or empty. Whether that count suits a backend is the
 * backend's check. */
fea_status fea_env_omp_num_threads(long *first);

/* FEACCEL_TSX_FORCE_ABORT = 0 | 1 (the TSX strategy's test hook); *on is 0
 * when unset or empty. */
fea_status fea_env_tsx_force_abort(int *on);

/* Every variable above but FEACCEL_BACKEND (read only for a NULL
 * resource): what fea_context_create() checks before it picks a backend,
 * so that a typo fails the first call whatever the backend, not the first
 * one that happens to read it, and never falls back to a backend that does
 * not read it. */
fea_status fea_env_check(void);

/* Log at FEA_LOG_WARN, once per context, each variable that chose one of
 * ctx's settings in place of the program (OMP_NUM_THREADS the thread count
 * of a backend with a threads= option the resource did not set, still in
 * force; FEACCEL_THREADS_ADAPT an adapt= the resource did not set). Called
 * when a log callback is installed: none exists when the context is made. */
void fea_env_warn_overrides(fea_context *ctx);

#endif
