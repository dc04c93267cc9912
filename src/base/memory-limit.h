/* The memory a create or setup may use (src/base/memory-limit.c): the least
 * of the hard limits the kernel enforces on this process (RLIMIT_AS,
 * RLIMIT_DATA, the cgroup's memory limit, each minus what is in use) and a
 * soft one (the caller's limit when set, else MemAvailable). */
#ifndef FEA_INTERNAL_MEMORY_LIMIT_H
#define FEA_INTERNAL_MEMORY_LIMIT_H

#include <stddef.h>
#include <stdint.h>

#include <feaccel/types.h>

/* The effective limit and which bound gave it, for messages. */
typedef struct fea_memory_budget {
  uint64_t bytes;
  char source[160];
} fea_memory_budget;

/* The budget of a call on ctx (NULL: no context limit). own_limit is the
 * object's own limit (a descriptor's memory_limit_bytes), 0 when unset; it
 * takes precedence over the context's, which takes precedence over
 * MemAvailable. The hard limits always apply. */
void fea_memory_budget_get(const fea_context *ctx, uint64_t own_limit, fea_memory_budget *b);

/* FEA_SUCCESS when need bytes fit ctx's budget (own_limit as above); else
 * FEA_ERR_OUT_OF_MEMORY with "WHAT needs N bytes but the memory limit is
 * L bytes (SOURCE)". what is a noun phrase ("the factorization of 1000 DoFs"). */
fea_status fea_memory_require(const fea_context *ctx, uint64_t own_limit, double need,
                              const char *what);

/* Bytes left under the cgroup memory limits (v1 and v2, the process's
 * cgroup and its ancestors), UINT64_MAX when there are none. proc_cgroup is
 * /proc/self/cgroup and sysfs /sys/fs/cgroup outside the tests; source
 * (len bytes) names the limiting file. */
uint64_t fea_cgroup_remaining(const char *proc_cgroup, const char *sysfs, char *source, size_t len);

/* n * size in bytes as a double: sizes of estimates never overflow. */
static inline double fea_bytes(double n, size_t size) { return n * (double)size; }

#endif
