/* libfeaccel.so's front without its core (lib/front/loader.c, docs/backends.md
 * "The front and the core"). check-front-core.sh runs this program against a
 * copy of the front alone in a folder (FEA_TEST_CORE=absent), beside a core
 * that lacks the public functions (=foreign), and against the build's front
 * and core (=present). Without a usable core: the version is still answered,
 * destroying NULL handles still succeeds, creating a context returns
 * FEA_ERR_BACKEND and leaves the handle NULL, and the reason names the core
 * and why; it stays the same on a second try. With the core: all of it works. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel.h>

static int failures;

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAIL: %s\n", what);
    failures++;
  }
}

int main(void) {
  const char *mode = getenv("FEA_TEST_CORE");
  if (!mode) mode = "present";
  const int present = strcmp(mode, "present") == 0;

  check(strcmp(fea_version_string(), FEA_VERSION_STRING) == 0, "fea_version_string()");
  int major = -1;
  check(fea_version(&major, NULL, NULL) == FEA_SUCCESS && major == FEA_VERSION_MAJOR,
        "fea_version()");
  fea_context *none = NULL;
  check(fea_context_destroy(NULL) == FEA_SUCCESS, "fea_context_destroy(NULL)");
  check(fea_context_destroy(&none) == FEA_SUCCESS, "fea_context_destroy(&NULL)");

  for (int attempt = 0; attempt < 2; attempt++) {
    fea_context *ctx = NULL;
    const fea_status st = fea_context_create("/cpu/ref", &ctx);
    const char *why = fea_context_last_error(NULL);
    if (present) {
      check(st == FEA_SUCCESS && ctx != NULL, "fea_context_create() with the core");
      check(fea_context_destroy(&ctx) == FEA_SUCCESS && ctx == NULL, "fea_context_destroy()");
      continue;
    }
    check(st == FEA_ERR_BACKEND, "fea_context_create() returns FEA_ERR_BACKEND");
    check(ctx == NULL, "the handle stays NULL");
    check(strstr(why, "its core") != NULL, "the reason names the core");
    if (strcmp(mode, "absent") == 0)
      check(strstr(why, "cannot open shared object file") != NULL, "the reason says why");
    if (strcmp(mode, "foreign") == 0)
      check(strstr(why, "has no fea_") != NULL, "the reason names the missing function");
    check(strcmp(fea_status_string(FEA_SUCCESS), why) == 0, "strings give the reason");
    printf("%s core, attempt %d: %s\n", mode, attempt + 1, why);
  }
  printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
  return failures ? 1 : 0;
}
