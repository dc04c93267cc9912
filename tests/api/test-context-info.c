/* Contexts: the log callback and fea_context_get_info(), including callers
 * compiled against a smaller fea_context_info, and the BLAS kernel check
 * (fea_context_info.blas_*), also in a child process whose OpenBLAS was
 * loaded with OPENBLAS_CORETYPE=Prescott. */
#define _GNU_SOURCE /* setenv, strcasecmp */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api-common.h"

/* What the log callback saw. */
struct log_record {
  int calls;
  int errors;
  fea_log_level last_level;
  char last[1024];
};

static void record_log(void *user, fea_log_level level, const char *msg) {
  struct log_record *r = user;
  r->calls++;
  r->errors += level == FEA_LOG_ERROR;
  r->last_level = level;
  snprintf(r->last, sizeof r->last, "%s", msg);
}

BACKEND_TEST(context, log_callback_gets_errors) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  struct log_record rec = {0};
  OK(fea_context_set_log_callback(ctx, FEA_LOG_ERROR, record_log, &rec));
  cr_assert_eq(rec.calls, 0);
  fea_vector *v = NULL;
  EXPECT_FAIL(fea_vector_create(ctx, -3, FEA_F64, &v), FEA_ERR_INVALID_ARG, ctx, "-3");
  cr_assert_eq(rec.calls, 1, "the callback ran %d times for one error", rec.calls);
  cr_assert_eq(rec.last_level, FEA_LOG_ERROR);
  cr_assert_str_eq(rec.last, fea_context_last_error(ctx));

  /* Removing the callback stops delivery. */
  OK(fea_context_set_log_callback(ctx, FEA_LOG_DEBUG, NULL, NULL));
  EXPECT_FAIL(fea_vector_create(ctx, -4, FEA_F64, &v), FEA_ERR_INVALID_ARG, ctx, "-4");
  cr_assert_eq(rec.calls, 1);
  OK(fea_context_destroy(&ctx));
}

Test(context, log_levels_filter) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads:threads=1", &ctx));
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  struct log_record rec = {0};

  /* Oversubscription is a warning: not delivered at FEA_LOG_ERROR ... */
  OK(fea_context_set_log_callback(ctx, FEA_LOG_ERROR, record_log, &rec));
  OK(fea_context_set_num_threads(ctx, info.num_pus + 1));
  cr_assert_eq(rec.calls, 0, "got \"%s\" at level %d", rec.last, (int)rec.last_level);

  /* ... delivered at FEA_LOG_WARN, and no info message then. (Installing
   * the callback may bring the machine's BLAS warning, info_blas_kernels's
   * business: not counted here.) */
  OK(fea_context_set_log_callback(ctx, FEA_LOG_WARN, record_log, &rec));
  rec.calls = 0;
  OK(fea_context_set_num_threads(ctx, info.num_pus + 2));
  cr_assert_eq(rec.calls, 1);
  cr_assert_eq(rec.last_level, FEA_LOG_WARN);
  char count[32];
  snprintf(count, sizeof count, "%d", info.num_pus + 2);
  cr_assert(strstr(rec.last, count) != NULL, "warning does not name %s: %s", count, rec.last);

  /* At FEA_LOG_INFO the new thread count is reported. */
  rec.calls = 0;
  OK(fea_context_set_log_callback(ctx, FEA_LOG_INFO, record_log, &rec));
  OK(fea_context_set_num_threads(ctx, 1));
  cr_assert_eq(rec.calls, 1);
  cr_assert_eq(rec.last_level, FEA_LOG_INFO);
  cr_assert(strstr(rec.last, "1 threads") != NULL, "info does not name the count: %s", rec.last);
  cr_assert_eq(rec.errors, 0);
  OK(fea_context_destroy(&ctx));
}

Test(context, log_level_invalid) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  struct log_record rec = {0};
  EXPECT_FAIL(fea_context_set_log_callback(ctx, (fea_log_level)7, record_log, &rec),
              FEA_ERR_INVALID_ARG, ctx, "7");
  /* Not installed: the next error reaches no callback. */
  EXPECT_FAIL(fea_context_set_num_threads(ctx, 0), FEA_ERR_INVALID_ARG, ctx, "0");
  cr_assert_eq(rec.calls, 0);
  EXPECT_FAIL(fea_context_set_log_callback(NULL, FEA_LOG_ERROR, record_log, &rec),
              FEA_ERR_INVALID_ARG, NULL, "ctx");
  OK(fea_context_destroy(&ctx));
}

BACKEND_TEST(context, info_values) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  cr_assert_eq(info.size, sizeof info);
  cr_assert_str_eq(info.backend, resource);
  cr_assert(strncmp(info.resource, info.backend, strlen(info.backend)) == 0);
  cr_assert_geq(info.num_cores, 1);
  cr_assert_geq(info.num_pus, info.num_cores);
  cr_assert_geq(info.num_numa_nodes, 1);
  cr_assert_geq(info.num_threads, 1);
  cr_assert(info.bound == 0 || info.bound == 1);
  cr_assert_neq(info.cpu_model[0], '\0');
  /* Which BLAS: test-blas-choice.c, against the build's -Dblas. */
  cr_assert(strstr(info.blas, "(kernels: ") != NULL, "blas: \"%s\"", info.blas);
  int nt = 0;
  OK(fea_context_get_num_threads(ctx, &nt));
  cr_assert_eq(info.num_threads, nt);
  if (strcmp(resource, "/cpu/ref") == 0) cr_assert_eq(info.num_threads, 1);
  if (strncmp(resource, "/cpu/", 5) == 0) {
    cr_assert_str_eq(info.device_name, "");
    cr_assert_eq(info.device_id, -1);
    cr_assert_eq(info.device_cc, 0);
    cr_assert_eq(info.device_memory_bytes, 0);
  } else {
    cr_assert_neq(info.device_name[0], '\0');
    cr_assert_geq(info.device_id, 0);
    cr_assert_geq(info.device_cc, 10);
    cr_assert_gt(info.device_memory_bytes, 0);
  }
  OK(fea_context_destroy(&ctx));
}

Test(context, info_default_threads) {
  cr_assert_eq(unsetenv("OMP_NUM_THREADS"), 0);
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  cr_assert_eq(info.num_threads, info.num_cores, "one thread per core by default");
  OK(fea_context_destroy(&ctx));
}

Test(context, info_size_too_small) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_context_info info;
  memset(&info, 0x5a, sizeof info);
  info.size = sizeof(size_t) + 4;
  char buf[32];
  snprintf(buf, sizeof buf, "%zu", info.size);
  EXPECT_FAIL(fea_context_get_info(ctx, &info), FEA_ERR_INVALID_ARG, ctx, buf);
  cr_assert_eq(info.size, sizeof(size_t) + 4);
  const unsigned char *bytes = (const unsigned char *)&info;
  for (size_t i = sizeof info.size; i < sizeof info; i++)
    cr_assert_eq(bytes[i], 0x5a, "byte %zu written by a failed call", i);
  EXPECT_FAIL(fea_context_get_info(ctx, NULL), FEA_ERR_INVALID_ARG, ctx, "info");
  EXPECT_FAIL(fea_context_get_info(NULL, &info), FEA_ERR_INVALID_ARG, NULL, "ctx");
  OK(fea_context_destroy(&ctx));
}

/* The first version of fea_context_info ends at device_memory_bytes (the
 * BLAS kernel fields came after it): a size that stops inside it, or one
 * larger than the library knows, is refused with the value, and nothing is
 * written. */
BACKEND_TEST(context, info_size_outside_range) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  struct {
    fea_context_info info;
    unsigned char canary[64];
  } buf;
  const size_t sizes[] = {0, offsetof(fea_context_info, cpu_model),
                          offsetof(fea_context_info, device_memory_bytes), sizeof buf};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    memset(&buf, 0xa5, sizeof buf);
    buf.info.size = sizes[k];
    char want[48];
    snprintf(want, sizeof want, "info.size is %zu", sizes[k]);
    EXPECT_FAIL(fea_context_get_info(ctx, &buf.info), FEA_ERR_INVALID_ARG, ctx, want);
    cr_assert_eq(buf.info.size, sizes[k]);
    const unsigned char *bytes = (const unsigned char *)&buf;
    for (size_t i = sizeof buf.info.size; i < sizeof buf; i++)
      cr_assert_eq(bytes[i], 0xa5, "byte %zu written by a failed call (size %zu)", i, sizes[k]);
  }
  OK(fea_context_destroy(&ctx));
}

static int isa_name_known(const char *isa) {
  static const char *names[] = {"sse", "avx", "avx2", "avx512", "unknown"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(isa, names[i]) == 0) return 1;
  return 0;
}

/* The BLAS kernel fields, filled and consistent on this machine. The test
 * environment forces OPENBLAS_CORETYPE=Haswell: then the answer is "no
 * mismatch", and no warning reaches a callback. */
Test(context, info_blas_kernels) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  struct log_record rec = {0};
  OK(fea_context_set_log_callback(ctx, FEA_LOG_WARN, record_log, &rec));
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  cr_assert_neq(info.blas_kernels[0], '\0', "no kernel name with OpenBLAS (blas \"%s\")",
                info.blas);
  char named[64];
  snprintf(named, sizeof named, "(kernels: %s)", info.blas_kernels);
  cr_assert(strstr(info.blas, named) != NULL, "blas \"%s\" does not name kernels %s", info.blas,
            info.blas_kernels);
  cr_assert(isa_name_known(info.blas_isa), "blas_isa \"%s\"", info.blas_isa);
  cr_assert(isa_name_known(info.cpu_isa), "cpu_isa \"%s\"", info.cpu_isa);
#if defined(__x86_64__)
  cr_assert_str_neq(info.cpu_isa, "unknown");
#endif
  cr_assert(info.blas_slow == 0 || info.blas_slow == 1);
  cr_assert_eq(info.blas_slow, info.blas_advice[0] != '\0', "blas_slow %d with advice \"%s\"",
               info.blas_slow, info.blas_advice);
  cr_assert_eq(rec.calls, info.blas_slow, "%d warnings for blas_slow %d: %s", rec.calls,
               info.blas_slow, rec.last);
  /* OPENBLAS_CORETYPE is OpenBLAS's: another BLAS (-Dblas) ignores it. */
  const char *forced = strncmp(info.blas, "OpenBLAS", 8) == 0 ? getenv("OPENBLAS_CORETYPE") : NULL;
  if (forced && *forced) cr_assert(strcasecmp(info.blas_kernels, forced) == 0);
  if (forced && strcasecmp(forced, "Haswell") == 0) {
    cr_assert_str_eq(info.blas_isa, "avx2");
    if (strcmp(info.cpu_isa, "avx2") == 0 || strcmp(info.cpu_isa, "avx512") == 0)
      cr_assert_eq(info.blas_slow, 0, "Haswell kernels on %s flagged: %s", info.cpu_isa,
                   info.blas_advice);
  }
  OK(fea_context_destroy(&ctx));
}

/* The child process: started by blas_kernels_prescott below with
 * FEA_TEST_BLAS_KERNELS_CHILD set, it runs before Criterion's main and
 * prints what a program sees, one "key=value" a line. A callback at
 * FEA_LOG_ERROR comes first: it must not use up the once-per-process
 * warning, which the next callback, at FEA_LOG_WARN, gets. */
__attribute__((constructor)) static void blas_kernels_child(void) {
  if (!getenv("FEA_TEST_BLAS_KERNELS_CHILD")) return;
  fea_context *a = NULL, *b = NULL;
  struct log_record ra = {0}, rb = {0};
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  int ok = fea_context_create("/cpu/ref", &a) == FEA_SUCCESS &&
           fea_context_create("/cpu/ref", &b) == FEA_SUCCESS &&
           fea_context_set_log_callback(a, FEA_LOG_ERROR, record_log, &ra) == FEA_SUCCESS &&
           fea_context_set_log_callback(b, FEA_LOG_WARN, record_log, &rb) == FEA_SUCCESS &&
           fea_context_set_log_callback(a, FEA_LOG_WARN, record_log, &ra) == FEA_SUCCESS &&
           fea_context_get_info(a, &info) == FEA_SUCCESS;
  printf(
      "ok=%d\nblas=%s\nslow=%d\nkernels=%s\nblas_isa=%s\ncpu_isa=%s\nadvice=%s\n"
      "warnings_a=%d\nwarnings_b=%d\nwarning=%s\n",
      ok, info.blas, info.blas_slow, info.blas_kernels, info.blas_isa, info.cpu_isa,
      info.blas_advice, ra.calls, rb.calls, rb.calls ? rb.last : ra.last);
  fflush(stdout);
  fea_context_destroy(&a);
  fea_context_destroy(&b);
  _exit(0);
}

/* The value of "key=" in the child's answer, "" when absent. */
static const char *answer(const char *out, const char *key, char *buf, size_t len) {
  buf[0] = '\0';
  size_t klen = strlen(key);
  for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
      const char *v = p + klen + 1, *end = strchr(v, '\n');
      size_t n = end ? (size_t)(end - v) : strlen(v);
      snprintf(buf, len, "%.*s", (int)n, v);
      break;
    }
  return buf;
}

/* The real detection: OpenBLAS reads OPENBLAS_CORETYPE when it is loaded, so
 * the Prescott kernels run only in a process started with it: this test
 * binary again, whose constructor above answers and exits. */
Test(context, blas_kernels_prescott) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    setenv("OPENBLAS_CORETYPE", "Prescott", 1);
    setenv("FEA_TEST_BLAS_KERNELS_CHILD", "1", 1);
    execl("/proc/self/exe", "test-api-context-info", (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  char out[4096] = "";
  size_t used = 0;
  ssize_t got;
  while (used + 1 < sizeof out && (got = read(fds[0], out + used, sizeof out - 1 - used)) > 0)
    used += (size_t)got;
  out[used] = '\0';
  close(fds[0]);
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status %d): %s",
            status, out);
  char v[512];
  cr_assert_str_eq(answer(out, "ok", v, sizeof v), "1", "a call failed in the child: %s", out);
  /* The BLAS's own description says which kernels run, apart from the check. */
  if (strncmp(answer(out, "blas", v, sizeof v), "OpenBLAS", 8) != 0)
    cr_skip("the library runs another BLAS (-Dblas): %s", v);
  if (!strstr(answer(out, "blas", v, sizeof v), "(kernels: Prescott)"))
    cr_skip("OpenBLAS ignored OPENBLAS_CORETYPE=Prescott (not a DYNAMIC_ARCH build?): %s", v);
  cr_assert_str_eq(answer(out, "kernels", v, sizeof v), "Prescott");
  cr_assert_str_eq(answer(out, "blas_isa", v, sizeof v), "sse");
  char cpu[32];
  answer(out, "cpu_isa", cpu, sizeof cpu);
  int want = strcmp(cpu, "avx") == 0 || strcmp(cpu, "avx2") == 0 || strcmp(cpu, "avx512") == 0;
  cr_assert_eq(atoi(answer(out, "slow", v, sizeof v)), want,
               "Prescott kernels on a CPU with %s: blas_slow %s", cpu, v);
  const char *fix = strcmp(cpu, "avx512") == 0 ? "OPENBLAS_CORETYPE=SkylakeX"
                    : strcmp(cpu, "avx2") == 0 ? "OPENBLAS_CORETYPE=Haswell"
                                               : "OPENBLAS_CORETYPE=Sandybridge";
  answer(out, "advice", v, sizeof v);
  cr_assert_eq(strstr(v, fix) != NULL, want, "advice \"%s\" on a CPU with %s", v, cpu);
  cr_assert_str_eq(answer(out, "warnings_a", v, sizeof v), "0",
                   "the callback at FEA_LOG_ERROR, or a second one, got the warning: %s", out);
  cr_assert_eq(atoi(answer(out, "warnings_b", v, sizeof v)), want, "%s warnings: %s", v, out);
  if (!want) return;
  answer(out, "warning", v, sizeof v);
  cr_assert(strstr(v, "Prescott") && strstr(v, cpu) && strstr(v, fix),
            "the warning does not name the kernels, the CPU and the fix: %s", v);
}
