/* /gpu/cuda is loaded only when asked for: through libfeaccel.so alone, a
 * program that stays on the CPU maps no CUDA library (read from
 * /proc/self/maps, which the library does not see), and asking the registry
 * about /gpu/cuda still reports it with a reason where it cannot run.
 *
 * Registered twice (tests/api/meson.build): as api-cuda-lazy, and as
 * api-cuda-module-missing through check-module-missing.sh, which runs it
 * against a copy of libfeaccel.so with no module beside it and sets
 * FEA_TEST_CUDA_MODULE=absent; the tests of that case skip otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api-common.h"

/* The CUDA libraries the backend links; none may be mapped before /gpu/cuda
 * is asked for. */
static const char *const cuda_libraries[] = {"libcublas", "libcusolver", "libcusparse",
                                             "libcudart"};

/* 1 when a mapping of this process names a file containing name. */
static int mapped(const char *name) {
  FILE *maps = fopen("/proc/self/maps", "r");
  cr_assert_not_null(maps, "cannot read /proc/self/maps");
  char line[4096];
  int found = 0;
  while (!found && fgets(line, sizeof line, maps)) found = strstr(line, name) != NULL;
  fclose(maps);
  return found;
}

static void assert_no_cuda_library_mapped(const char *after) {
  for (size_t i = 0; i < sizeof cuda_libraries / sizeof cuda_libraries[0]; i++)
    cr_assert(!mapped(cuda_libraries[i]), "%s is mapped after %s", cuda_libraries[i], after);
  cr_assert(!mapped("libfeaccel-cuda"), "the /gpu/cuda module is mapped after %s", after);
}

static int module_expected_absent(void) {
  const char *v = getenv("FEA_TEST_CUDA_MODULE");
  return v && strcmp(v, "absent") == 0;
}

/* The /gpu/cuda entry of fea_backend_list(). */
static fea_backend_info gpu_cuda_info(void) {
  fea_backend_info infos[8];
  for (int i = 0; i < 8; i++) infos[i] = (fea_backend_info)FEA_BACKEND_INFO_INIT;
  size_t count = 0;
  OK(fea_backend_list(infos, 8, &count));
  for (size_t i = 0; i < count && i < 8; i++)
    if (strcmp(infos[i].prefix, "/gpu/cuda") == 0) return infos[i];
  cr_assert_fail("fea_backend_list() does not list /gpu/cuda (%zu entries)", count);
  return infos[0];
}

Test(cuda_lazy, nothing_of_cuda_is_mapped_after_the_version_string) {
  cr_assert_neq(fea_version_string()[0], '\0');
  assert_no_cuda_library_mapped("fea_version_string()");
}

Test(cuda_lazy, nothing_of_cuda_is_mapped_after_cpu_contexts) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  OK(fea_context_destroy(&ctx));
  assert_no_cuda_library_mapped("creating and destroying a /cpu/ref context");
  /* The /cpu family picks among CPU backends only. */
  OK(fea_context_create("/cpu", &ctx));
  OK(fea_context_destroy(&ctx));
  assert_no_cuda_library_mapped("creating and destroying a /cpu context");
}

Test(cuda_lazy, the_list_reports_gpu_cuda_with_a_reason) {
  fea_backend_info info = gpu_cuda_info();
  if (info.usable) {
    cr_assert(info.built, "/gpu/cuda is usable but not built");
    cr_assert_str_empty(info.reason, "a usable backend has a reason: '%s'", info.reason);
  } else {
    cr_assert_str_not_empty(info.reason, "/gpu/cuda is not usable and says not why");
  }
  /* A built backend whose module loaded is mapped now; one that did not
   * load says so. */
  if (info.built && !strstr(info.reason, "module"))
    cr_assert(mapped("libfeaccel-cuda.so"),
              "/gpu/cuda is listed as built (%s) but its module "
              "is not mapped",
              info.usable ? "usable" : info.reason);
}

Test(cuda_lazy, creating_gpu_cuda_fails_with_a_reason_or_succeeds) {
  fea_context *ctx = NULL;
  fea_status st = fea_context_create("/gpu/cuda", &ctx);
  if (st == FEA_SUCCESS) {
    OK(fea_context_destroy(&ctx));
    return;
  }
  const char *msg = fea_context_last_error(NULL);
  cr_assert(st == FEA_ERR_DEVICE || st == FEA_ERR_UNSUPPORTED,
            "expected FEA_ERR_DEVICE or FEA_ERR_UNSUPPORTED, got %s: %s", fea_status_string(st),
            msg);
  cr_assert_null(ctx, "the context is not NULL after a failed create");
  cr_assert(strstr(msg, "/gpu/cuda") != NULL, "the message does not name the backend: '%s'", msg);
  const char *reason = strstr(msg, "/gpu/cuda is ");
  cr_assert(reason && strlen(reason) > strlen("/gpu/cuda is not usable here: "),
            "the message gives no reason: '%s'", msg);
}

Test(cuda_lazy, a_missing_module_is_reported_by_the_list) {
  if (!module_expected_absent()) cr_skip_test("runs as api-cuda-module-missing only");
  fea_backend_info info = gpu_cuda_info();
  cr_assert(info.built, "/gpu/cuda was built into this library: %s", info.reason);
  cr_assert(!info.usable, "/gpu/cuda is usable without its module");
  cr_assert(strstr(info.reason, "libfeaccel-cuda.so") != NULL,
            "the reason does not name the module: '%s'", info.reason);
  cr_assert(strstr(info.reason, "cannot open shared object file") != NULL,
            "the reason does not carry the dynamic linker's message: '%s'", info.reason);
}

Test(cuda_lazy, a_missing_module_is_reported_by_create) {
  if (!module_expected_absent()) cr_skip_test("runs as api-cuda-module-missing only");
  fea_context *ctx = NULL;
  fea_status st = fea_context_create("/gpu/cuda", &ctx);
  const char *msg = fea_context_last_error(NULL);
  cr_assert_eq(st, FEA_ERR_DEVICE, "expected FEA_ERR_DEVICE, got %s: %s", fea_status_string(st),
               msg);
  cr_assert_null(ctx);
  cr_assert(strstr(msg, "libfeaccel-cuda.so") != NULL, "the message does not name the module: %s",
            msg);
  /* The best usable backend is still found, among the ones that load. */
  OK(fea_context_create(NULL, &ctx));
  fea_context_info ci = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &ci));
  cr_assert_str_eq(ci.backend, "/cpu/threads");
  OK(fea_context_destroy(&ctx));
  /* The /gpu family has nothing else: the module's failure explains it. */
  st = fea_context_create("/gpu", &ctx);
  cr_assert_eq(st, FEA_ERR_DEVICE, "/gpu gave %s: %s", fea_status_string(st),
               fea_context_last_error(NULL));
  cr_assert(strstr(fea_context_last_error(NULL), "libfeaccel-cuda.so") != NULL, "%s",
            fea_context_last_error(NULL));
}
