/* The library's environment variables (environment.h): one parser each,
 * all refusing what they do not recognize with the variable's name and
 * value, so that a typo never reads as the default. */
#include "environment.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"

/* The value, or NULL when unset or empty. */
static const char *env_value(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

const char *fea_env_backend(void) { return env_value("FEACCEL_BACKEND"); }

fea_status fea_env_threads_adapt(int *set, fea_thread_adapt *adapt) {
  *set = 0;
  const char *v = env_value("FEACCEL_THREADS_ADAPT");
  if (!v) return FEA_SUCCESS;
  const int load = strcmp(v, "load") == 0, off = strcmp(v, "off") == 0;
  FEA_CHECK(load || off, NULL, FEA_ERR_INVALID_ARG,
            "environment variable FEACCEL_THREADS_ADAPT=%s is not 'load' or 'off'", v);
  *adapt = load ? FEA_THREADS_ADAPT_LOAD : FEA_THREADS_ADAPT_OFF;
  *set = 1;
  return FEA_SUCCESS;
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

fea_status fea_env_omp_num_threads(long *first) {
  *first = 0;
  const char *v = env_value("OMP_NUM_THREADS");
  if (!v) return FEA_SUCCESS;
  long head = 0;
  int ok = 1;
  for (const char *p = v; ok;) {
    while (is_blank(*p)) p++;
    char *end = NULL;
    errno = 0;
    const long n = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : 0;
    ok = end && errno == 0 && n >= 1;
    if (!ok) break;
    if (!head) head = n;
    p = end;
    while (is_blank(*p)) p++;
    if (*p == '\0') break;
    ok = *p == ',';
    p++;
  }
  FEA_CHECK(ok, NULL, FEA_ERR_INVALID_ARG,
            "environment variable OMP_NUM_THREADS=%s is not a list of positive thread counts "
            "(e.g. 4, or 4,2 for nested levels)",
            v);
  *first = head;
  return FEA_SUCCESS;
}

fea_status fea_env_tsx_force_abort(int *on) {
  *on = 0;
  const char *v = env_value("FEACCEL_TSX_FORCE_ABORT");
  if (!v) return FEA_SUCCESS;
  FEA_CHECK(strcmp(v, "0") == 0 || strcmp(v, "1") == 0, NULL, FEA_ERR_INVALID_ARG,
            "environment variable FEACCEL_TSX_FORCE_ABORT=%s is not 0 or 1", v);
  *on = v[0] == '1';
  return FEA_SUCCESS;
}

fea_status fea_env_check(void) {
  int set, on;
  fea_thread_adapt adapt;
  long first;
  FEA_CALL(fea_env_threads_adapt(&set, &adapt));
  FEA_CALL(fea_env_omp_num_threads(&first));
  return fea_env_tsx_force_abort(&on);
}
