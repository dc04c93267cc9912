/* The program whose start-up bench/startup.c times, built three times from
 * this file: STARTUP_MODE 1 links libfeaccel.so and asks for its version
 * string (a program that links the library and does not use it on this
 * run: issue #27's reproducer); 2 also creates and destroys a /cpu/ref
 * context, the first use; 0 links nothing and does no library work. The
 * differences against 0 are what linking and first use cost. Exits 1 if a
 * libfeaccel call fails. */
#include <stdio.h>

#if STARTUP_MODE > 0
#include <feaccel.h>
#endif

int main(void) {
#if STARTUP_MODE > 0
  if (fea_version_string()[0] == '\0') return 1;
#endif
#if STARTUP_MODE > 1
  fea_context *ctx = NULL;
  if (fea_context_create("/cpu/ref", &ctx) != FEA_SUCCESS) {
    fprintf(stderr, "startup-child: %s\n", fea_context_last_error(NULL));
    return 1;
  }
  fea_context_destroy(&ctx);
#endif
  return 0;
}
