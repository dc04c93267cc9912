/* Pages mapped ahead of their first write (src/base/prefault.c). */
#ifndef FEA_INTERNAL_PREFAULT_H
#define FEA_INTERNAL_PREFAULT_H

#include <stddef.h>

/* Map the whole pages of [p, p + bytes) now, writable, in batches of
 * FEA_PREFAULT_CHUNK on up to `threads` threads, instead of one page fault
 * per page when they are first written. An advice, not a requirement: where
 * the kernel cannot (not Linux, Linux before 5.14, or the memory is not
 * there to map) the pages fault in on first touch as before, and what the
 * advice did map is no more than the caller allocated. Returns the bytes it
 * mapped. */
size_t fea_memory_prefault(void *p, size_t bytes, int threads);

/* Ranges below this are not worth a system call: their first touch costs
 * less than the call (a few pages). */
#define FEA_PREFAULT_MIN ((size_t)1 << 20)

/* One call per this many bytes, so that threads can share a range. */
#define FEA_PREFAULT_CHUNK ((size_t)32 << 20)

#endif
