/* qsort comparators and the binary search shared by the translation units
 * that sort and look up indices. */
#ifndef FEA_INTERNAL_SORT_H
#define FEA_INTERNAL_SORT_H

#include <feaccel/types.h>

/* Ascending fea_index. */
static inline int fea_index_cmp(const void *a, const void *b) {
  const fea_index x = *(const fea_index *)a, y = *(const fea_index *)b;
  return (x > y) - (x < y);
}

/* First i in [0, n) with a[i] >= v (a non-decreasing), or n. */
static inline fea_index fea_index_lower_bound(const fea_index *a, fea_index n, fea_index v) {
  fea_index lo = 0, hi = n;
  while (lo < hi) {
    const fea_index mid = lo + (hi - lo) / 2;
    if (a[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

#endif
