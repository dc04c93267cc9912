/* Contexts: the log callback and fea_context_get_info(), including callers
 * compiled against a smaller fea_context_info. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

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

  /* ... delivered at FEA_LOG_WARN, and no info message then. */
  OK(fea_context_set_log_callback(ctx, FEA_LOG_WARN, record_log, &rec));
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
  cr_assert(strstr(info.blas, "OpenBLAS") != NULL, "blas: \"%s\"", info.blas);
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

/* The first version of fea_context_info is the whole struct: a size that
 * stops inside it, or one larger than the library knows, is refused with
 * the value, and nothing is written. */
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
