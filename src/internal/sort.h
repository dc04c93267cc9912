/* qsort comparators shared by the translation units that sort indices. */
#ifndef FEA_INTERNAL_SORT_H
#define FEA_INTERNAL_SORT_H

#include <feaccel/types.h>

/* Ascending fea_index. */
static inline int fea_index_cmp(const void *a, const void *b) {
  const fea_index x = *(const fea_index *)a, y = *(const fea_index *)b;
  return (x > y) - (x < y);
}

#endif
