/* The memory a setup may use (src/base/memory-limit.c). */
#ifndef FEA_INTERNAL_MEMORY_LIMIT_H
#define FEA_INTERNAL_MEMORY_LIMIT_H

#include <stdint.h>

/* Bytes a setup may use: limit, or the physical memory when 0. */
uint64_t fea_memory_limit(uint64_t limit);

#endif
