/* Pages mapped ahead of their first write (src/base/prefault.c), checked
 * against the kernel's own record of which pages are resident (mincore):
 * what the call says it mapped is mapped, nothing outside the range is,
 * contents are kept, and ranges too small or missing are left alone. */
#define _DEFAULT_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "base/prefault.h"

static size_t page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* Resident pages of [p, p + bytes), p page-aligned. */
static size_t resident(void *p, size_t bytes) {
  const size_t n = (bytes + page() - 1) / page();
  unsigned char *v = malloc(n);
  cr_assert_not_null(v);
  cr_assert_eq(mincore(p, bytes, v), 0);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += v[i] & 1;
  free(v);
  return k;
}

static void *fresh(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(p, MAP_FAILED);
  cr_assert_eq(resident(p, bytes), 0, "fresh anonymous memory is not resident before use");
  return p;
}

static void maps_what_it_says(int threads) {
  const size_t ps = page(), bytes = 3 * FEA_PREFAULT_CHUNK + 5 * ps;
  char *p = fresh(bytes);
  /* An unaligned range: the partial first and last pages are not the call's. */
  const size_t got = fea_memory_prefault(p + 100, bytes - 200, threads);
  if (got == 0) { /* a kernel without MADV_POPULATE_WRITE: nothing changed */
    cr_expect_eq(resident(p, bytes), 0);
  } else {
    cr_expect_eq(got, bytes - 2 * ps, "the whole pages inside the range: %zu", got);
    cr_expect_eq(resident(p + ps, bytes - 2 * ps), (bytes - 2 * ps) / ps);
    cr_expect_eq(resident(p, ps), 0, "the partial first page is left alone");
    cr_expect_eq(resident(p + bytes - ps, ps), 0, "the partial last page is left alone");
  }
  for (size_t i = 0; i < bytes; i += ps / 2) cr_assert_eq(p[i], 0, "byte %zu", i);
  munmap(p, bytes);
}

Test(prefault, one_thread_maps_the_whole_pages_of_the_range) { maps_what_it_says(1); }

Test(prefault, threads_share_the_range_and_map_the_same) { maps_what_it_says(2); }

Test(prefault, written_memory_keeps_its_contents) {
  const size_t bytes = 2 * FEA_PREFAULT_MIN;
  unsigned char *p = fresh(bytes);
  for (size_t i = 0; i < bytes / 2; i++) p[i] = (unsigned char)(i * 7 + 1);
  fea_memory_prefault(p, bytes, 2);
  for (size_t i = 0; i < bytes / 2; i++)
    cr_assert_eq(p[i], (unsigned char)(i * 7 + 1), "byte %zu", i);
  for (size_t i = bytes / 2; i < bytes; i++) cr_assert_eq(p[i], 0, "byte %zu", i);
  munmap(p, bytes);
}

Test(prefault, small_or_missing_ranges_are_left_alone) {
  const size_t bytes = FEA_PREFAULT_MIN;
  char *p = fresh(bytes);
  cr_expect_eq(fea_memory_prefault(p, bytes - 1, 1), 0);
  cr_expect_eq(fea_memory_prefault(NULL, 1u << 30, 1), 0);
  cr_expect_eq(resident(p, bytes), 0);
  munmap(p, bytes);
}
