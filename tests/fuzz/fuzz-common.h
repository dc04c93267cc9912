/* Shared helpers of the libFuzzer targets: an invariant check that reports
 * and aborts (libFuzzer saves the input of any abort as a crash), and the one
 * context each target process uses. */
#ifndef FEA_TESTS_FUZZ_COMMON_H
#define FEA_TESTS_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>

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

#endif
