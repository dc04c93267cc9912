/* The program whose start-up bench/startup.c times: built twice from this
 * file, once linked to libfeaccel.so (STARTUP_LINKED=1: it asks for the
 * version string and creates and destroys a /cpu/ref context, what a
 * CPU-only program does first) and once without it (STARTUP_LINKED=0: the
 * same process with no library work), so that the difference between the
 * two is what loading libfeaccel costs. Exits 1 if a libfeaccel call fails. */
#include <stdio.h>

#if STARTUP_LINKED
#include <feaccel.h>
#endif

int main(void) {
#if STARTUP_LINKED
  if (fea_version_string()[0] == '\0') return 1;
  fea_context *ctx = NULL;
  if (fea_context_create("/cpu/ref", &ctx) != FEA_SUCCESS) {
    fprintf(stderr, "startup-child: %s\n", fea_context_last_error(NULL));
    return 1;
  }
  fea_context_destroy(&ctx);
#endif
  return 0;
}
