/* Large work arrays in transparent huge pages (src/base/large-alloc.c). */
#ifndef FEA_INTERNAL_LARGE_ALLOC_H
#define FEA_INTERNAL_LARGE_ALLOC_H

#include <stddef.h>

/* Below this many bytes fea_large_alloc is plain malloc. */
#define FEA_LARGE_ALLOC_MIN ((size_t)4 << 20)

/* bytes of uninitialized memory, 2 MiB aligned with huge-page advice when
 * large; NULL when out of memory. Release with free(). */
void *fea_large_alloc(size_t bytes);

#endif
