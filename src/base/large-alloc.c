/* Large, long-lived work arrays (factor panels, Schur blocks) in
 * transparent huge pages where the kernel offers them.
 *
 * Why: a fresh 4 KiB page costs a fault and a kernel clear on first touch,
 * and the multifrontal factorization touches its whole factor and every
 * Schur block right after allocating it. On the shared 2-core VM (THP in
 * "madvise" mode) perf put the kernel's page clearing at 23 % of a 2D p = 3
 * setup with 263k unknowns on a cold machine and at 3.8 % on a warm one;
 * with this advice, 8 % and 0.5 %. Blocks under FEA_LARGE_ALLOC_MIN stay
 * with malloc, whose arenas reuse them. Release with free(). */
#include <stdlib.h>
#include <sys/mman.h>

#include "large-alloc.h"

void *fea_large_alloc(size_t bytes) {
  if (bytes < FEA_LARGE_ALLOC_MIN) return malloc(bytes ? bytes : 1);
  const size_t huge = (size_t)2 << 20;
  void *p = NULL;
  if (posix_memalign(&p, huge, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
  /* Only the whole 2 MiB pages inside the block: a huge page over the tail
   * would add up to 2 MiB of resident memory the block never asked for. The
   * advice may be refused; the block then keeps 4 KiB pages. */
  (void)madvise(p, bytes / huge * huge, MADV_HUGEPAGE);
#endif
  return p;
}
