/* What /gpu/cuda says about itself on any machine: with no usable GPU it fails
 * cleanly with FEA_ERR_DEVICE and a reason; with one, it describes the device;
 * in a library configured without CUDA, FEA_ERR_UNSUPPORTED saying "not built".
 * Registered in the cpu suite, because it must pass where there is no GPU, and
 * twice (tests/meson.build): through libfeaccel.so, which loads the backend's
 * module, and through the internal archive, which links the backend in. */
#include <ctype.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

static int contains_nocase(const char *text, const char *word) {
  size_t n = strlen(word);
  for (; *text; text++) {
    size_t i = 0;
    while (i < n && text[i] && tolower((unsigned char)text[i]) == tolower((unsigned char)word[i]))
      i++;
    if (i == n) return 1;
  }
  return 0;
}

/* Whether this library was built with /gpu/cuda, as fea_backend_list() says. */
static int cuda_built(void) {
  fea_backend_info infos[8];
  for (int i = 0; i < 8; i++) infos[i] = (fea_backend_info)FEA_BACKEND_INFO_INIT;
  size_t count = 0;
  cr_assert_eq(fea_backend_list(infos, 8, &count), FEA_SUCCESS, "%s", fea_context_last_error(NULL));
  for (size_t i = 0; i < count && i < 8; i++)
    if (strcmp(infos[i].prefix, "/gpu/cuda") == 0) return infos[i].built;
  cr_assert_fail("fea_backend_list() does not list /gpu/cuda");
  return 0;
}

/* The status a failed /gpu/cuda creation must have in this build. */
static fea_status expected_failure(void) {
  return cuda_built() ? FEA_ERR_DEVICE : FEA_ERR_UNSUPPORTED;
}

Test(cuda_absent, create_fails_cleanly_or_describes_the_device) {
  static int sentinel;
  fea_context *ctx = (fea_context *)(void *)&sentinel; /* must be overwritten either way */
  fea_status st = fea_context_create("/gpu/cuda", &ctx);

  if (st != FEA_SUCCESS) {
    const char *msg = fea_context_last_error(NULL);
    fea_status want = expected_failure();
    cr_assert_eq(st, want, "expected %s, got %s: %s", fea_status_string(want),
                 fea_status_string(st), msg);
    if (want == FEA_ERR_UNSUPPORTED)
      cr_assert(strstr(msg, "not built") != NULL, "the message does not say 'not built': '%s'",
                msg);
    cr_assert_null(ctx, "the context is not NULL after a failed create");
    cr_assert(contains_nocase(msg, "cuda"), "the message does not mention CUDA: '%s'", msg);
    /* "file.c:LINE func(): reason": the reason part must say something. */
    const char *reason = strstr(msg, "(): ");
    reason = reason ? reason + 4 : msg;
    cr_assert(strlen(reason) > 0, "the message gives no reason: '%s'", msg);
    return;
  }

  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  cr_assert_eq(fea_context_get_info(ctx, &info), FEA_SUCCESS, "%s", fea_context_last_error(ctx));
  cr_assert_str_eq(info.backend, "/gpu/cuda");
  cr_assert(info.device_name[0] != '\0', "device_name is empty");
  cr_assert_gt(info.device_memory_bytes, 0, "device_memory_bytes is 0");
  cr_assert_geq(info.device_id, 0, "device_id is %d", info.device_id);
  cr_assert_gt(info.device_cc, 0, "device_cc is %d", info.device_cc);
  cr_assert_eq(fea_context_destroy(&ctx), FEA_SUCCESS);
  cr_assert_null(ctx);
}

Test(cuda_absent, bad_device_option_is_an_invalid_argument) {
  fea_context *ctx = NULL;
  fea_status st = fea_context_create("/gpu/cuda:device=banana", &ctx);
  /* Without a GPU (or without the backend) that fails first; with one, the
   * option is refused. */
  fea_status unusable = expected_failure();
  cr_assert(st == unusable || st == FEA_ERR_INVALID_ARG, "got %s: %s", fea_status_string(st),
            fea_context_last_error(NULL));
  cr_assert_null(ctx);
  if (st == FEA_ERR_INVALID_ARG)
    cr_assert(strstr(fea_context_last_error(NULL), "banana") != NULL,
              "the message does not name the value: %s", fea_context_last_error(NULL));

  st = fea_context_create("/gpu/cuda:device=4096", &ctx);
  cr_assert(st == unusable || st == FEA_ERR_INVALID_ARG, "got %s: %s", fea_status_string(st),
            fea_context_last_error(NULL));
  cr_assert_null(ctx);
  if (st == FEA_ERR_INVALID_ARG)
    cr_assert(strstr(fea_context_last_error(NULL), "4096") != NULL,
              "the message does not name the value: %s", fea_context_last_error(NULL));
}

/* streams=N (1..8), leaves=device|host and scatter=protected|unprotected:
 * other values refused, naming
 * option and value, where the GPU is usable (elsewhere the probe fails
 * first); good ones accepted. */
Test(cuda_absent, bad_streams_leaves_or_scatter_option_is_an_invalid_argument) {
  const char *bad[] = {"/gpu/cuda:streams=0",   "/gpu/cuda:streams=9",   "/gpu/cuda:streams=two",
                       "/gpu/cuda:streams=",    "/gpu/cuda:streams=-1",  "/gpu/cuda:leaves=gpu",
                       "/gpu/cuda:leaves=Host", "/gpu/cuda:scatter=max", "/gpu/cuda:scatter="};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    fea_context *ctx = NULL;
    fea_status st = fea_context_create(bad[i], &ctx);
    cr_assert(st == FEA_ERR_INVALID_ARG || st == expected_failure(), "%s: got %s: %s", bad[i],
              fea_status_string(st), fea_context_last_error(NULL));
    cr_assert_null(ctx);
    if (st == FEA_ERR_INVALID_ARG)
      cr_assert(strstr(fea_context_last_error(NULL), strchr(bad[i], ':') + 1) != NULL,
                "%s: the message does not name the option and value: %s", bad[i],
                fea_context_last_error(NULL));
  }
  const char *good[] = {"/gpu/cuda:streams=1", "/gpu/cuda:streams=8",
                        "/gpu/cuda:leaves=host,streams=2", "/gpu/cuda:scatter=unprotected"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    fea_context *ctx = NULL;
    fea_status st = fea_context_create(good[i], &ctx);
    cr_assert(st == FEA_SUCCESS || st == expected_failure(), "%s: got %s: %s", good[i],
              fea_status_string(st), fea_context_last_error(NULL));
    if (st == FEA_SUCCESS) cr_assert_eq(fea_context_destroy(&ctx), FEA_SUCCESS);
  }
}
