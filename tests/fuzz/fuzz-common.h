/* Shared helpers of the libFuzzer targets: an invariant check that reports
 * and aborts (libFuzzer saves the input of any abort as a crash), the one
 * context each target process uses, and inputs as files for the readers. */
#ifndef FEA_TESTS_FUZZ_COMMON_H
#define FEA_TESTS_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <feaccel.h>

/* A broken invariant is a finding: print it with the library's last message
 * and abort, so libFuzzer stops and keeps the input. */
#define FUZZ_REQUIRE(cond, ...)                                                      \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, __LINE__, #cond);   \
      fprintf(stderr, __VA_ARGS__);                                                  \
      fprintf(stderr, "\n  last library error: %s\n", fea_context_last_error(NULL)); \
      abort();                                                                       \
    }                                                                                \
  } while (0)

/* One /cpu/ref context for the whole run: creating a context per input would
 * spend the time in hwloc instead of the code under test. */
static inline fea_context *fuzz_context(void) {
  static fea_context *ctx;
  if (!ctx && fea_context_create("/cpu/ref", &ctx) != FEA_SUCCESS) {
    fprintf(stderr, "fuzz: cannot create a /cpu/ref context: %s\n", fea_context_last_error(NULL));
    abort();
  }
  return ctx;
}

#ifdef _GNU_SOURCE
/* The input as a file: one memory-backed file for the whole run, reached by
 * its /proc path so that a reader opens and stats it as it would a file on
 * disk (for the readers' targets, which define _GNU_SOURCE for memfd_create). */
static inline const char *fuzz_write_input(const uint8_t *data, size_t size) {
  static int file_fd = -1;
  static char file_path[64];
  if (file_fd < 0) {
    file_fd = memfd_create("fuzz-input", 0);
    FUZZ_REQUIRE(file_fd >= 0, "memfd_create failed");
    snprintf(file_path, sizeof file_path, "/proc/self/fd/%d", file_fd);
  }
  FUZZ_REQUIRE(ftruncate(file_fd, 0) == 0, "ftruncate failed");
  size_t done = 0;
  while (done < size) {
    ssize_t n = pwrite(file_fd, data + done, size - done, (off_t)done);
    FUZZ_REQUIRE(n > 0, "pwrite failed");
    done += (size_t)n;
  }
  return file_path;
}
#endif

#endif
