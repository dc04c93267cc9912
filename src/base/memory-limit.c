/* The memory a setup may use: the caller's limit, or the machine's
 * physical memory. */
#include <unistd.h>

#include "memory-limit.h"

uint64_t fea_memory_limit(uint64_t limit) {
  if (limit) return limit;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX; /* unknown: let malloc decide */
  return (uint64_t)pages * (uint64_t)page;
}
