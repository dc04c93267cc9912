/* Library-wide queries that need no context: fea_backend_list(), versions,
 * status and precision names. */
#include <stdio.h>

#include "api-common.h"

#define NUM_KNOWN_BACKENDS 3

static void init_infos(fea_backend_info *infos, size_t n) {
  for (size_t i = 0; i < n; i++) infos[i] = (fea_backend_info)FEA_BACKEND_INFO_INIT;
}

Test(backend_list, count_query) {
  size_t n = 0;
  OK(fea_backend_list(NULL, 0, &n));
  cr_assert_eq(n, NUM_KNOWN_BACKENDS);
}

Test(backend_list, entries) {
  fea_backend_info infos[NUM_KNOWN_BACKENDS + 2];
  init_infos(infos, NUM_KNOWN_BACKENDS + 2);
  size_t n = 0;
  OK(fea_backend_list(infos, NUM_KNOWN_BACKENDS + 2, &n));
  cr_assert_eq(n, NUM_KNOWN_BACKENDS);
  static const char *const prefixes[] = {"/cpu/ref", "/cpu/threads", "/gpu/cuda"};
  for (int i = 0; i < NUM_KNOWN_BACKENDS; i++) {
    cr_assert_eq(infos[i].size, sizeof infos[i]);
    cr_assert_str_eq(infos[i].prefix, prefixes[i]);
    if (infos[i].usable) {
      cr_assert(infos[i].built, "%s usable but not built", infos[i].prefix);
      cr_assert_str_eq(infos[i].reason, "", "%s is usable yet has a reason", infos[i].prefix);
    } else {
      cr_assert_neq(infos[i].reason[0], '\0', "%s is not usable and says nothing why",
                    infos[i].prefix);
    }
  }
  for (int i = 0; i < 2; i++) {
    cr_assert(infos[i].built && infos[i].usable, "%s: %s", infos[i].prefix, infos[i].reason);
  }
  cr_assert_gt(infos[1].priority, infos[0].priority, "/cpu/threads must win over /cpu/ref");
  /* Entries past the count are left alone. */
  for (int i = NUM_KNOWN_BACKENDS; i < NUM_KNOWN_BACKENDS + 2; i++)
    cr_assert_str_eq(infos[i].prefix, "");
}

/* Whatever fea_backend_list() says of /gpu/cuda, context creation agrees. */
Test(backend_list, agrees_with_create) {
  fea_backend_info infos[NUM_KNOWN_BACKENDS];
  init_infos(infos, NUM_KNOWN_BACKENDS);
  size_t n = 0;
  OK(fea_backend_list(infos, NUM_KNOWN_BACKENDS, &n));
  for (int i = 0; i < NUM_KNOWN_BACKENDS; i++) {
    fea_context *ctx = NULL;
    fea_status s = fea_context_create(infos[i].prefix, &ctx);
    if (!infos[i].built)
      cr_assert_eq(s, FEA_ERR_UNSUPPORTED, "%s: %s", infos[i].prefix, fea_status_string(s));
    else if (!infos[i].usable)
      cr_assert_eq(s, FEA_ERR_DEVICE, "%s: %s", infos[i].prefix, fea_status_string(s));
    else
      cr_assert_eq(s, FEA_SUCCESS, "%s: %s", infos[i].prefix, fea_context_last_error(NULL));
    if (s != FEA_SUCCESS) {
      cr_assert_null(ctx);
      cr_assert_neq(fea_context_last_error(NULL)[0], '\0');
    }
    OK(fea_context_destroy(&ctx));
  }
}

Test(backend_list, short_capacity) {
  fea_backend_info infos[2];
  init_infos(infos, 2);
  size_t n = 0;
  OK(fea_backend_list(infos, 1, &n));
  cr_assert_eq(n, NUM_KNOWN_BACKENDS, "the count is the total, not the capacity");
  cr_assert_str_eq(infos[0].prefix, "/cpu/ref");
  cr_assert_str_eq(infos[1].prefix, "", "entry past the capacity was written");
}

Test(backend_list, mismatched_sizes) {
  fea_backend_info infos[3];
  init_infos(infos, 3);
  infos[2].size = sizeof infos[2] - 8;
  size_t n = 12345;
  EXPECT_FAIL(fea_backend_list(infos, 3, &n), FEA_ERR_INVALID_ARG, NULL, "infos[2].size");
  cr_assert_eq(n, 12345, "count written by a failed call");
  for (int i = 0; i < 3; i++)
    cr_assert_str_eq(infos[i].prefix, "", "entry %d written by a failed call", i);
}

Test(backend_list, size_too_small) {
  fea_backend_info infos[2];
  init_infos(infos, 2);
  infos[0].size = infos[1].size = 4;
  size_t n = 12345;
  EXPECT_FAIL(fea_backend_list(infos, 2, &n), FEA_ERR_INVALID_ARG, NULL, "size is 4");
  cr_assert_eq(n, 12345);
  cr_assert_str_eq(infos[0].prefix, "");
}

Test(backend_list, null_arguments) {
  fea_backend_info infos[1];
  init_infos(infos, 1);
  EXPECT_FAIL(fea_backend_list(infos, 1, NULL), FEA_ERR_INVALID_ARG, NULL, "count");
  cr_assert_str_eq(infos[0].prefix, "");
  size_t n = 0;
  EXPECT_FAIL(fea_backend_list(NULL, 2, &n), FEA_ERR_INVALID_ARG, NULL, "capacity is 2");
}

Test(version, runtime_matches_headers) {
  int major = -1, minor = -1, patch = -1;
  OK(fea_version(&major, &minor, &patch));
  cr_assert_eq(major, FEA_VERSION_MAJOR);
  cr_assert_eq(minor, FEA_VERSION_MINOR);
  cr_assert_eq(patch, FEA_VERSION_PATCH);
  cr_assert_str_eq(fea_version_string(), FEA_VERSION_STRING);
  char built[32];
  snprintf(built, sizeof built, "%d.%d.%d", major, minor, patch);
  cr_assert_str_eq(fea_version_string(), built);
  cr_assert_eq(FEA_VERSION_NUMBER, major * 10000 + minor * 100 + patch);
  /* Each output may be NULL. */
  int only = -1;
  OK(fea_version(NULL, &only, NULL));
  cr_assert_eq(only, FEA_VERSION_MINOR);
  OK(fea_version(NULL, NULL, NULL));
}

Test(names, status_strings) {
  static const struct {
    fea_status s;
    const char *name;
  } all[] = {
      {FEA_SUCCESS, "FEA_SUCCESS"},
      {FEA_WARN_NOT_CONVERGED, "FEA_WARN_NOT_CONVERGED"},
      {FEA_ERR_INVALID_ARG, "FEA_ERR_INVALID_ARG"},
      {FEA_ERR_DIMENSION, "FEA_ERR_DIMENSION"},
      {FEA_ERR_STATE, "FEA_ERR_STATE"},
      {FEA_ERR_OUT_OF_MEMORY, "FEA_ERR_OUT_OF_MEMORY"},
      {FEA_ERR_UNSUPPORTED, "FEA_ERR_UNSUPPORTED"},
      {FEA_ERR_BACKEND, "FEA_ERR_BACKEND"},
      {FEA_ERR_DEVICE, "FEA_ERR_DEVICE"},
      {FEA_ERR_NOT_POSDEF, "FEA_ERR_NOT_POSDEF"},
      {FEA_ERR_IO, "FEA_ERR_IO"},
      {FEA_ERR_SINGULAR, "FEA_ERR_SINGULAR"},
      {FEA_ERR_CANCELLED, "FEA_ERR_CANCELLED"},
  };
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    cr_assert_str_eq(fea_status_string(all[i].s), all[i].name);
  cr_assert_str_eq(fea_status_string((fea_status)42), "unknown status");
  cr_assert_str_eq(fea_status_string((fea_status)-12), "unknown status");
}

Test(names, precisions) {
  static const struct {
    fea_precision p;
    const char *name;
    size_t bytes;
  } all[] = {{FEA_F64, "f64", 8}, {FEA_F32, "f32", 4}, {FEA_F16, "f16", 2}, {FEA_BF16, "bf16", 2}};
  for (size_t i = 0; i < 4; i++) {
    cr_assert_str_eq(fea_precision_name(all[i].p), all[i].name);
    size_t bytes = 0;
    OK(fea_precision_size(all[i].p, &bytes));
    cr_assert_eq(bytes, all[i].bytes);
  }
}

Test(names, unknown_precision) {
  cr_assert_null(fea_precision_name((fea_precision)7));
  cr_assert_null(fea_precision_name((fea_precision)-1));
  size_t bytes = 99;
  EXPECT_FAIL(fea_precision_size((fea_precision)7, &bytes), FEA_ERR_INVALID_ARG, NULL,
              "precision 7");
  cr_assert_eq(bytes, 99);
  EXPECT_FAIL(fea_precision_size(FEA_F32, NULL), FEA_ERR_INVALID_ARG, NULL, "bytes");
}
