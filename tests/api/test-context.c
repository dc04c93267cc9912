/* Contexts: creation on each backend, resolution of NULL and family
 * resources, resource options and thread counts. The log callback and
 * fea_context_get_info() are in test-context-info.c. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "api-common.h"

/* The backend that a NULL resource must pick, derived from fea_backend_list():
 * the highest priority among the backends that are built and usable. */
static void best_usable(char *prefix, size_t len) {
  fea_backend_info infos[8];
  for (int i = 0; i < 8; i++) infos[i] = (fea_backend_info)FEA_BACKEND_INFO_INIT;
  size_t n = 0;
  OK(fea_backend_list(infos, 8, &n));
  cr_assert(n >= 1 && n <= 8);
  int best = -1;
  for (size_t i = 0; i < n; i++)
    if (infos[i].built && infos[i].usable && (best < 0 || infos[i].priority > infos[best].priority))
      best = (int)i;
  cr_assert(best >= 0, "no backend is usable");
  snprintf(prefix, len, "%s", infos[best].prefix);
}

static void assert_backend(fea_context *ctx, const char *prefix) {
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  cr_assert_str_eq(info.backend, prefix);
}

BACKEND_TEST(context, create_destroy) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  assert_backend(ctx, resource);
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  cr_assert_str_eq(info.resource, resource, "no options were given, so the resource is the prefix");
  OK(fea_context_destroy(&ctx));
  cr_assert_null(ctx);
}

Test(context, destroy_null) {
  OK(fea_context_destroy(NULL));
  fea_context *ctx = NULL;
  OK(fea_context_destroy(&ctx));
  cr_assert_null(ctx);
}

Test(context, create_null_out) {
  EXPECT_FAIL(fea_context_create("/cpu/ref", NULL), FEA_ERR_INVALID_ARG, NULL, "out");
}

/* Criterion runs each test in its own process, so setenv() stays local. */
BACKEND_TEST(context, env_chooses_backend) {
  cr_assert_eq(setenv("FEACCEL_BACKEND", resource, 1), 0);
  fea_context *ctx = NULL;
  fea_status s = fea_context_create(NULL, &ctx);
  if (s == FEA_ERR_DEVICE || s == FEA_ERR_UNSUPPORTED)
    cr_skip_test("%s not usable here: %s", resource, fea_context_last_error(NULL));
  cr_assert_eq(s, FEA_SUCCESS, "%s", fea_context_last_error(NULL));
  assert_backend(ctx, resource);
  OK(fea_context_destroy(&ctx));
}

Test(context, env_with_options) {
  cr_assert_eq(setenv("FEACCEL_BACKEND", "/cpu/threads:threads=3", 1), 0);
  fea_context *ctx = NULL;
  OK(fea_context_create(NULL, &ctx));
  int nt = 0;
  OK(fea_context_get_num_threads(ctx, &nt));
  cr_assert_eq(nt, 3);
  OK(fea_context_destroy(&ctx));
}

Test(context, env_invalid_is_reported) {
  cr_assert_eq(setenv("FEACCEL_BACKEND", "/tpu/x", 1), 0);
  fea_context *ctx = (fea_context *)&ctx; /* not NULL: the call must clear it */
  EXPECT_FAIL(fea_context_create(NULL, &ctx), FEA_ERR_INVALID_ARG, NULL, "/tpu/x");
  cr_assert_null(ctx);
}

Test(context, explicit_resource_beats_env) {
  cr_assert_eq(setenv("FEACCEL_BACKEND", "/cpu/threads", 1), 0);
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  assert_backend(ctx, "/cpu/ref");
  OK(fea_context_destroy(&ctx));
}

static void check_default(void) {
  char expected[32];
  best_usable(expected, sizeof expected);
  fea_context *ctx = NULL;
  OK(fea_context_create(NULL, &ctx));
  assert_backend(ctx, expected);
  OK(fea_context_destroy(&ctx));
}

Test(context, null_resource_unset_env) {
  cr_assert_eq(unsetenv("FEACCEL_BACKEND"), 0);
  check_default();
}

Test(context, null_resource_empty_env) {
  cr_assert_eq(setenv("FEACCEL_BACKEND", "", 1), 0);
  check_default();
}

Test(context, null_resource_cpu_only_machine) {
  cr_assert_eq(unsetenv("FEACCEL_BACKEND"), 0);
  char expected[32];
  best_usable(expected, sizeof expected);
  if (strcmp(expected, "/cpu/threads") != 0)
    cr_skip_test("a GPU backend is usable here (%s): not a CPU-only machine", expected);
  fea_context *ctx = NULL;
  OK(fea_context_create(NULL, &ctx));
  assert_backend(ctx, "/cpu/threads");
  OK(fea_context_destroy(&ctx));
}

Test(context, family_resource) {
  static const char *const families[] = {"/cpu", "/cpu/"};
  for (int i = 0; i < 2; i++) {
    fea_context *ctx = NULL;
    OK(fea_context_create(families[i], &ctx));
    assert_backend(ctx, "/cpu/threads");
    OK(fea_context_destroy(&ctx));
  }
}

Test(context, family_with_options) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu:threads=3", &ctx));
  assert_backend(ctx, "/cpu/threads");
  int nt = 0;
  OK(fea_context_get_num_threads(ctx, &nt));
  cr_assert_eq(nt, 3);
  OK(fea_context_destroy(&ctx));
}

Test(context, gpu_family) {
  fea_backend_info infos[3];
  for (int i = 0; i < 3; i++) infos[i] = (fea_backend_info)FEA_BACKEND_INFO_INIT;
  size_t n = 0;
  OK(fea_backend_list(infos, 3, &n));
  cr_assert_str_eq(infos[2].prefix, "/gpu/cuda");
  fea_context *ctx = NULL;
  fea_status s = fea_context_create("/gpu", &ctx);
  if (!infos[2].built) {
    cr_assert_eq(s, FEA_ERR_UNSUPPORTED, "got %s", fea_status_string(s));
    cr_assert_null(ctx);
  } else if (!infos[2].usable) {
    cr_assert_eq(s, FEA_ERR_DEVICE, "got %s", fea_status_string(s));
    cr_assert_null(ctx);
  } else {
    cr_assert_eq(s, FEA_SUCCESS, "%s", fea_context_last_error(NULL));
    assert_backend(ctx, "/gpu/cuda");
    OK(fea_context_destroy(&ctx));
  }
}

Test(context, threads_option) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads:threads=3", &ctx));
  int nt = 0;
  OK(fea_context_get_num_threads(ctx, &nt));
  cr_assert_eq(nt, 3);
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  cr_assert_eq(info.num_threads, 3);
  cr_assert_eq(info.bound, 0);
  cr_assert_str_eq(info.resource, "/cpu/threads:threads=3");
  OK(fea_context_destroy(&ctx));
}

Test(context, bind_none_option) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads:threads=2,bind=none", &ctx));
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  cr_assert_eq(info.num_threads, 2);
  cr_assert_eq(info.bound, 0);
  cr_assert_str_eq(info.resource, "/cpu/threads:threads=2,bind=none");
  OK(fea_context_destroy(&ctx));
}

/* adapt= is kept in the resource; off and load are both accepted. */
Test(context, adapt_option) {
  const char *res[2] = {"/cpu/threads:threads=2,adapt=off", "/cpu/threads:adapt=load"};
  for (int k = 0; k < 2; k++) {
    fea_context *ctx = NULL;
    OK(fea_context_create(res[k], &ctx));
    fea_context_info info = FEA_CONTEXT_INFO_INIT;
    OK(fea_context_get_info(ctx, &info));
    cr_assert_str_eq(info.resource, res[k]);
    OK(fea_context_destroy(&ctx));
  }
}

/* Binding to cores: where the container or OS refuses binding, the
 * creation fails with FEA_ERR_BACKEND naming hwloc, and the test skips. */
Test(context, bind_core_option) {
  fea_context *ctx = NULL;
  fea_status s = fea_context_create("/cpu/threads:threads=2,bind=core", &ctx);
  if (s == FEA_ERR_BACKEND)
    cr_skip_test("thread binding refused here: %s", fea_context_last_error(NULL));
  cr_assert_eq(s, FEA_SUCCESS, "%s", fea_context_last_error(NULL));
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  cr_assert_eq(info.bound, 1);
  cr_assert_eq(info.num_threads, 2);
  /* Still bound after a change of thread count. */
  OK(fea_context_set_num_threads(ctx, 3));
  OK(fea_context_get_info(ctx, &info));
  cr_assert_eq(info.bound, 1);
  cr_assert_eq(info.num_threads, 3);
  OK(fea_context_destroy(&ctx));
}

/* Each bad resource fails with FEA_ERR_INVALID_ARG naming the bad part, and
 * leaves *out NULL. */
static void expect_bad_resource(const char *resource, const char *needle) {
  fea_context *ctx = (fea_context *)&ctx;
  EXPECT_FAIL(fea_context_create(resource, &ctx), FEA_ERR_INVALID_ARG, NULL, needle);
  cr_assert_null(ctx, "fea_context_create(\"%s\") left *out set", resource);
}

Test(context, bad_threads_zero) { expect_bad_resource("/cpu/threads:threads=0", "threads=0"); }
Test(context, bad_threads_too_many) {
  expect_bad_resource("/cpu/threads:threads=1025", "threads=1025");
}
Test(context, bad_threads_abc) { expect_bad_resource("/cpu/threads:threads=abc", "threads=abc"); }
Test(context, bad_threads_trailing) {
  expect_bad_resource("/cpu/threads:threads=3x", "threads=3x");
}
Test(context, bad_bind) { expect_bad_resource("/cpu/threads:bind=sideways", "bind=sideways"); }
Test(context, bad_adapt) { expect_bad_resource("/cpu/threads:adapt=maybe", "adapt=maybe"); }
Test(context, bad_adapt_environment) {
  setenv("FEACCEL_THREADS_ADAPT", "maybe", 1);
  expect_bad_resource("/cpu/threads", "FEACCEL_THREADS_ADAPT=maybe");
}
Test(context, bad_unknown_key) { expect_bad_resource("/cpu/ref:foo=1", "foo"); }
Test(context, bad_malformed_option) { expect_bad_resource("/cpu/ref:threads", "threads"); }
Test(context, bad_unknown_resource) { expect_bad_resource("/tpu/x", "/tpu/x"); }
Test(context, bad_no_leading_slash) { expect_bad_resource("cpu/ref", "cpu/ref"); }
Test(context, bad_empty_resource) { expect_bad_resource("", "''"); }
Test(context, bad_unknown_backend_in_family) { expect_bad_resource("/cpu/fast", "/cpu/fast"); }

Test(context, set_num_threads_ref) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  OK(fea_context_set_num_threads(ctx, 1));
  EXPECT_FAIL(fea_context_set_num_threads(ctx, 2), FEA_ERR_UNSUPPORTED, ctx, "2");
  int nt = 0;
  OK(fea_context_get_num_threads(ctx, &nt));
  cr_assert_eq(nt, 1);
  OK(fea_context_destroy(&ctx));
}

Test(context, set_num_threads_threads) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads:threads=3", &ctx));
  EXPECT_FAIL(fea_context_set_num_threads(ctx, 0), FEA_ERR_INVALID_ARG, ctx, "count 0 ");
  EXPECT_FAIL(fea_context_set_num_threads(ctx, -4), FEA_ERR_INVALID_ARG, ctx, "-4");
  EXPECT_FAIL(fea_context_set_num_threads(ctx, 5000), FEA_ERR_INVALID_ARG, ctx, "5000");
  int nt = 0;
  OK(fea_context_get_num_threads(ctx, &nt));
  cr_assert_eq(nt, 3, "a failed call changed the thread count to %d", nt);
  OK(fea_context_set_num_threads(ctx, 2));
  OK(fea_context_get_num_threads(ctx, &nt));
  cr_assert_eq(nt, 2);
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  cr_assert_eq(info.num_threads, 2);
  OK(fea_context_destroy(&ctx));
}

BACKEND_TEST(context, thread_count_null_args) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  EXPECT_FAIL(fea_context_get_num_threads(ctx, NULL), FEA_ERR_INVALID_ARG, ctx, "nthreads");
  int nt = -1;
  EXPECT_FAIL(fea_context_get_num_threads(NULL, &nt), FEA_ERR_INVALID_ARG, NULL, "ctx");
  cr_assert_eq(nt, -1);
  EXPECT_FAIL(fea_context_set_num_threads(NULL, 1), FEA_ERR_INVALID_ARG, NULL, "ctx");
  OK(fea_context_destroy(&ctx));
}

/* A family resource reports why its preferred backend refused, not the
 * objection of a lower one that only lacks the option. */
Test(context, family_reports_preferred_backend_error) {
  fea_context *ctx = NULL;
  EXPECT_FAIL(fea_context_create("/cpu:threads=0", &ctx), FEA_ERR_INVALID_ARG, NULL, "threads=0");
  cr_assert_null(ctx);
  EXPECT_FAIL(fea_context_create("/cpu:bind=sideways", &ctx), FEA_ERR_INVALID_ARG, NULL,
              "sideways");
}

/* ---- the resource grammar (docs/backends.md, "Resource strings") ------------- */

/* Nothing is trimmed or skipped: a space, an empty option, a trailing comma
 * or a ':' without an option is refused, naming the string and the part. */
Test(context, grammar_spaces) {
  expect_bad_resource("/cpu/threads:threads= 4", "'threads= 4' has a space");
  expect_bad_resource("/cpu/threads:threads=4 ", "'threads=4 ' has a space");
  expect_bad_resource("/cpu/threads: threads=4", "' threads=4'");
  expect_bad_resource("/cpu/threads :threads=4", "a space at byte 12");
  expect_bad_resource(" /cpu/threads", "does not start with '/'");
}

Test(context, grammar_empty_options) {
  expect_bad_resource("/cpu/threads:threads=4,", "empty option");
  expect_bad_resource("/cpu/threads:,", "empty option");
  expect_bad_resource("/cpu/threads:,threads=4", "empty option");
  expect_bad_resource("/cpu/threads:threads=4,,bind=none", "empty option");
  expect_bad_resource("/cpu/threads:", "ends with ':'");
  expect_bad_resource("/cpu/threads:threads=", "'threads='");
  expect_bad_resource("/cpu/threads:=4", "'=4'");
  expect_bad_resource("/cpu/threads:threads==4", "a second '='");
  expect_bad_resource("/cpu//threads", "empty name");
}

Test(context, grammar_keys) {
  expect_bad_resource("/cpu/threads:threads=2,threads=3", "'threads' twice");
  expect_bad_resource("/cpu/threads:thread=2", "no option 'thread'");
  expect_bad_resource("/cpu/threads:Threads=2", "no option 'Threads'");
  expect_bad_resource("/cpu/ref:threads=2", "/cpu/ref has no option 'threads'");
}

Test(context, grammar_values) {
  expect_bad_resource("/cpu/threads:threads=+4", "threads=+4");
  expect_bad_resource("/cpu/threads:threads=04x", "threads=04x");
  expect_bad_resource("/cpu/threads:threads=-1", "threads=-1");
  expect_bad_resource("/cpu/threads:threads=99999999999999999999", "threads=9999");
  expect_bad_resource("/cpu/threads:bind=Core", "bind=Core");
  expect_bad_resource("/cpu/threads:adapt=of", "adapt=of");
}

/* What the grammar accepts: the forms the docs show, at their limits. */
Test(context, grammar_accepted) {
  static const char *const good[] = {"/cpu/threads:threads=1", "/cpu/threads:threads=1024",
                                     "/cpu/threads:bind=none,threads=2,adapt=off",
                                     "/cpu/threads/:threads=2", "/cpu/:threads=2"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    fea_context *ctx = NULL;
    fea_status s = fea_context_create(good[i], &ctx);
    cr_assert_eq(s, FEA_SUCCESS, "%s: %s", good[i], fea_context_last_error(NULL));
    OK(fea_context_destroy(&ctx));
  }
}

/* The options of /gpu/cuda are checked before its device is looked for: on
 * a machine without a GPU (or without the module) a bad value is the
 * caller's mistake, FEA_ERR_INVALID_ARG naming it, not FEA_ERR_DEVICE. */
Test(context, cuda_options_before_device) {
  fea_backend_info infos[3];
  for (int i = 0; i < 3; i++) infos[i] = (fea_backend_info)FEA_BACKEND_INFO_INIT;
  size_t n = 0;
  OK(fea_backend_list(infos, 3, &n));
  cr_assert_str_eq(infos[2].prefix, "/gpu/cuda");
  if (!infos[2].built) cr_skip_test("/gpu/cuda is not built: %s", infos[2].reason);
  if (strstr(infos[2].reason, "cannot load its module"))
    cr_skip_test("/gpu/cuda's module cannot be loaded here: %s", infos[2].reason);
  expect_bad_resource("/gpu/cuda:device=-1", "device=-1");
  expect_bad_resource("/gpu/cuda:streams=9", "streams=9");
  expect_bad_resource("/gpu/cuda:streams=0", "streams=0");
  expect_bad_resource("/gpu/cuda:leaves=disk", "leaves=disk");
  expect_bad_resource("/gpu/cuda:scatter=maybe", "scatter=maybe");
  expect_bad_resource("/gpu/cuda:device=0,colour=red", "no option 'colour'");
  expect_bad_resource("/gpu:streams=9", "streams=9");
}

/* ---- environment variables (docs/backends.md, "Environment variables") ------- */

/* Each test sets one variable in its own process and restores it. */
static void with_env(const char *name, const char *value) {
  cr_assert_eq(setenv(name, value, 1), 0);
}

/* A typo in FEACCEL_THREADS_ADAPT is refused for every resource, including
 * the NULL and family ones whose preferred backend reads it: before, these
 * fell back to a one-thread /cpu/ref context and reported success. */
Test(context, env_adapt_typo_refused_everywhere) {
  cr_assert_eq(unsetenv("FEACCEL_BACKEND"), 0);
  with_env("FEACCEL_THREADS_ADAPT", "of");
  static const char *const res[] = {NULL, "/cpu", "/cpu/threads", "/cpu/ref"};
  for (size_t i = 0; i < sizeof res / sizeof res[0]; i++) {
    fea_context *ctx = (fea_context *)&ctx;
    fea_status s = fea_context_create(res[i], &ctx);
    cr_assert_eq(s, FEA_ERR_INVALID_ARG, "%s: %s", res[i] ? res[i] : "NULL", fea_status_string(s));
    cr_assert_null(ctx);
    cr_assert(strstr(fea_context_last_error(NULL), "FEACCEL_THREADS_ADAPT=of"), "%s",
              fea_context_last_error(NULL));
  }
  cr_assert_eq(unsetenv("FEACCEL_THREADS_ADAPT"), 0);
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu", &ctx));
  OK(fea_context_destroy(&ctx));
}

/* The values it takes, and the option over it. */
Test(context, env_adapt_values) {
  static const char *const ok[] = {"load", "off", ""};
  for (size_t i = 0; i < 3; i++) {
    with_env("FEACCEL_THREADS_ADAPT", ok[i]);
    fea_context *ctx = NULL;
    OK(fea_context_create("/cpu/threads:adapt=load", &ctx));
    OK(fea_context_destroy(&ctx));
    OK(fea_context_create("/cpu/threads", &ctx));
    OK(fea_context_destroy(&ctx));
  }
  static const char *const bad[] = {"LOAD", "off ", "0", "yes"};
  for (size_t i = 0; i < 4; i++) {
    with_env("FEACCEL_THREADS_ADAPT", bad[i]);
    char needle[64];
    snprintf(needle, sizeof needle, "FEACCEL_THREADS_ADAPT=%s", bad[i]);
    expect_bad_resource("/cpu/threads:adapt=off", needle);
  }
  cr_assert_eq(unsetenv("FEACCEL_THREADS_ADAPT"), 0);
}

/* OMP_NUM_THREADS: OpenMP's list of positive counts; /cpu/threads takes the
 * first, within its 1..1024. Anything else was ignored before (one thread
 * per core, silently). */
Test(context, env_omp_num_threads) {
  cr_assert_eq(unsetenv("FEACCEL_BACKEND"), 0);
  static const struct {
    const char *value;
    int threads;
  } ok[] = {{"3", 3}, {"2,1", 2}, {" 3 , 2 ", 3}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    with_env("OMP_NUM_THREADS", ok[i].value);
    fea_context *ctx = NULL;
    OK(fea_context_create("/cpu/threads", &ctx));
    int nt = 0;
    OK(fea_context_get_num_threads(ctx, &nt));
    cr_assert_eq(nt, ok[i].threads, "OMP_NUM_THREADS='%s' gave %d threads", ok[i].value, nt);
    OK(fea_context_destroy(&ctx));
    /* The option wins over it. */
    OK(fea_context_create("/cpu/threads:threads=1", &ctx));
    OK(fea_context_get_num_threads(ctx, &nt));
    cr_assert_eq(nt, 1);
    OK(fea_context_destroy(&ctx));
  }
  static const char *const bad[] = {"abc", "0", "4,", "4x", "-2", "2,,1", " "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    with_env("OMP_NUM_THREADS", bad[i]);
    char needle[64];
    snprintf(needle, sizeof needle, "OMP_NUM_THREADS=%s", bad[i]);
    expect_bad_resource("/cpu/threads", needle);
    expect_bad_resource("/cpu/ref", needle);
  }
  /* A count /cpu/threads cannot run: refused where it is read, NULL
   * resource included (no fallback to /cpu/ref). */
  with_env("OMP_NUM_THREADS", "2000");
  expect_bad_resource("/cpu/threads", "OMP_NUM_THREADS=2000");
  fea_context *ctx = (fea_context *)&ctx;
  EXPECT_FAIL(fea_context_create(NULL, &ctx), FEA_ERR_INVALID_ARG, NULL, "OMP_NUM_THREADS=2000");
  cr_assert_null(ctx);
  cr_assert_eq(unsetenv("OMP_NUM_THREADS"), 0);
}

/* FEACCEL_TSX_FORCE_ABORT: 0 or 1, checked at every context creation. */
Test(context, env_tsx_force_abort) {
  static const char *const ok[] = {"0", "1", ""};
  for (size_t i = 0; i < 3; i++) {
    with_env("FEACCEL_TSX_FORCE_ABORT", ok[i]);
    fea_context *ctx = NULL;
    OK(fea_context_create("/cpu/ref", &ctx));
    OK(fea_context_destroy(&ctx));
  }
  with_env("FEACCEL_TSX_FORCE_ABORT", "yes");
  expect_bad_resource("/cpu/ref", "FEACCEL_TSX_FORCE_ABORT=yes");
  cr_assert_eq(unsetenv("FEACCEL_TSX_FORCE_ABORT"), 0);
}

/* FEACCEL_BACKEND: a refusal of the resource it holds names the variable. */
Test(context, env_backend_named_in_errors) {
  static const char *const bad[] = {"/cpu/threads:threads=x", "/cpu/threads:", "cpu", "/tpu/x"};
  for (size_t i = 0; i < 4; i++) {
    with_env("FEACCEL_BACKEND", bad[i]);
    char needle[96];
    snprintf(needle, sizeof needle, "FEACCEL_BACKEND=%s", bad[i]);
    fea_context *ctx = (fea_context *)&ctx;
    EXPECT_FAIL(fea_context_create(NULL, &ctx), FEA_ERR_INVALID_ARG, NULL, needle);
    cr_assert_null(ctx);
  }
  cr_assert_eq(unsetenv("FEACCEL_BACKEND"), 0);
}

/* fea_backend_list's capacity and stride describe one array: a capacity no
 * array of infos[0].size-byte entries can have is refused, not trusted. */
Test(context, backend_list_huge_capacity) {
  fea_backend_info infos[3];
  for (int i = 0; i < 3; i++) infos[i] = (fea_backend_info)FEA_BACKEND_INFO_INIT;
  size_t n = 99;
  EXPECT_FAIL(fea_backend_list(infos, SIZE_MAX / 2, &n), FEA_ERR_OUT_OF_MEMORY, NULL, "capacity");
  cr_assert_eq(n, 99, "a refused call wrote the count");
  cr_assert_str_eq(infos[0].prefix, "", "a refused call wrote an entry");
  OK(fea_backend_list(infos, 3, &n));
  cr_assert_eq(n, 3);
}

/* An environment variable that overrides what the caller asked for says so
 * at FEA_LOG_WARN: FEACCEL_TSX_FORCE_ABORT=1 with the TSX strategy. */
Test(context, env_override_is_logged) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  warnings w = {0, "", ""};
  OK(fea_context_set_log_callback(ctx, FEA_LOG_WARN, keep_warning, &w));
  fea_bspline_desc sd = FEA_BSPLINE_DESC_INIT;
  sd.n[0] = sd.n[1] = 3;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &sd, &s));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(s, &pd, &pb));
  fea_matrix *A = NULL;
  OK(fea_matrix_create_pattern(pb, &A));
  double b[4];
  fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
  d.strategy = FEA_UPDATE_TSX;
  /* Unset: no line (whether this CPU has TSX does not matter here). */
  cr_assert_eq(unsetenv("FEACCEL_TSX_FORCE_ABORT"), 0);
  fea_status st = fea_problem_assemble(pb, A, b, &d, NULL);
  cr_assert(st == FEA_SUCCESS || st == FEA_ERR_UNSUPPORTED, "%s", fea_context_last_error(ctx));
  cr_assert_eq(w.count, 0, "a warning without the variable: %s", w.last);
  with_env("FEACCEL_TSX_FORCE_ABORT", "1");
  st = fea_problem_assemble(pb, A, b, &d, NULL);
  cr_assert(st == FEA_SUCCESS || st == FEA_ERR_UNSUPPORTED, "%s", fea_context_last_error(ctx));
  cr_assert_eq(w.count, 1);
  cr_assert(strstr(w.last, "FEACCEL_TSX_FORCE_ABORT=1"), "%s", w.last);
  /* Another strategy is not overridden: no line. */
  d.strategy = FEA_UPDATE_SERIAL;
  OK(fea_problem_assemble(pb, A, b, &d, NULL));
  cr_assert_eq(w.count, 1);
  cr_assert_eq(unsetenv("FEACCEL_TSX_FORCE_ABORT"), 0);
  OK(fea_matrix_destroy(&A));
  OK(fea_problem_destroy(&pb));
  OK(fea_space_destroy(&s));
  OK(fea_context_destroy(&ctx));
}
