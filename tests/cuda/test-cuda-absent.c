/* What /gpu/cuda says about itself on any machine: with no usable GPU it fails
 * cleanly with FEA_ERR_DEVICE and a reason; with one, it describes the device.
 * Registered in the cpu suite, because it must pass where there is no GPU. */
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

Test(cuda_absent, create_fails_cleanly_or_describes_the_device) {
  static int sentinel;
  fea_context *ctx = (fea_context *)(void *)&sentinel; /* must be overwritten either way */
  fea_status st = fea_context_create("/gpu/cuda", &ctx);

  if (st != FEA_SUCCESS) {
    const char *msg = fea_context_last_error(NULL);
    cr_assert_eq(st, FEA_ERR_DEVICE, "expected FEA_ERR_DEVICE, got %s: %s", fea_status_string(st),
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
  /* Without a GPU the probe fails first; with one, the option is refused. */
  cr_assert(st == FEA_ERR_DEVICE || st == FEA_ERR_INVALID_ARG, "got %s: %s", fea_status_string(st),
            fea_context_last_error(NULL));
  cr_assert_null(ctx);
  if (st == FEA_ERR_INVALID_ARG)
    cr_assert(strstr(fea_context_last_error(NULL), "banana") != NULL,
              "the message does not name the value: %s", fea_context_last_error(NULL));

  st = fea_context_create("/gpu/cuda:device=4096", &ctx);
  cr_assert(st == FEA_ERR_DEVICE || st == FEA_ERR_INVALID_ARG, "got %s: %s", fea_status_string(st),
            fea_context_last_error(NULL));
  cr_assert_null(ctx);
  if (st == FEA_ERR_INVALID_ARG)
    cr_assert(strstr(fea_context_last_error(NULL), "4096") != NULL,
              "the message does not name the value: %s", fea_context_last_error(NULL));
}
