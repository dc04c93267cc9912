/* Pages mapped ahead of their first write (prefault.h).
 *
 * Large fresh allocations (the multifrontal factor's panels: 3.5 GB for 2D
 * p = 3 with 1.05M unknowns) come from mmap, and the kernel maps their pages
 * one fault at a time when they are first written: an exception, a zeroed
 * page and a page-table update per 4 KiB, inside the loop that writes them.
 * madvise(MADV_POPULATE_WRITE) maps a whole range in one call (on one
 * thread; in chunks shared by the threads otherwise). Measured on
 * the shared 2-core Xeon VM (Linux 6.18, 4 KiB pages), one thread, 4 GiB:
 * faulting in by memset 1.8 - 2.5 GB/s, the advice 1.7 - 4.4 GB/s (the VM's
 * backing of fresh pages varies from run to run), and the writes that
 * follow run at 10.6 GB/s instead of the fault rate; in the 1.05M
 * factorization the root's front lost most of its page faults (see
 * docs/multifrontal.md, "Measured"). Transparent huge pages were tried for
 * the same ranges and left out (docs/multifrontal.md).
 *
 * The advice changes no contents (the pages are zero either way) and costs
 * no memory the caller did not allocate; where the kernel refuses it
 * (EINVAL before 5.14, ENOMEM, EFAULT) nothing is lost but the gain. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "prefault.h"

/* glibc before 2.35 lacks the name; the value is the kernel's ABI. */
#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23
#endif

size_t fea_memory_prefault(void *p, size_t bytes, int threads) {
#ifdef MADV_POPULATE_WRITE
  if (!p || bytes < FEA_PREFAULT_MIN) return 0;
  const long ps = sysconf(_SC_PAGESIZE);
  if (ps <= 0) return 0;
  const uintptr_t page = (uintptr_t)ps;
  const uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
  const uintptr_t e = ((uintptr_t)p + bytes) & ~(page - 1);
  if (e <= a) return 0;
  const size_t span = (size_t)(e - a),
               chunks = (span + FEA_PREFAULT_CHUNK - 1) / FEA_PREFAULT_CHUNK;
  if (threads <= 1) return madvise((void *)a, span, MADV_POPULATE_WRITE) == 0 ? span : 0;
  size_t mapped = 0;
  if ((size_t)threads > chunks) threads = (int)chunks;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : mapped)
  for (size_t k = 0; k < chunks; k++) {
    const size_t off = k * FEA_PREFAULT_CHUNK;
    const size_t len = span - off < FEA_PREFAULT_CHUNK ? span - off : FEA_PREFAULT_CHUNK;
    if (madvise((void *)(a + off), len, MADV_POPULATE_WRITE) == 0) mapped += len;
  }
  return mapped;
#else
  (void)p;
  (void)bytes;
  (void)threads;
  return 0;
#endif
}
