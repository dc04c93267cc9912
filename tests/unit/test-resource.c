/* Resource strings (src/base/resource.c): "/family/name:key=value,...". */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "base/resource.h"

static fea_resource_opts opts;
static char base[64];

static void parse_ok(const char *resource) {
  memset(base, 'x', sizeof base);
  fea_status s = fea_resource_parse(resource, base, sizeof base, &opts);
  cr_assert_eq(s, FEA_SUCCESS, "\"%s\": %s", resource, fea_context_last_error(NULL));
}

static void parse_fails(const char *resource, const char *needle) {
  fea_status s = fea_resource_parse(resource, base, sizeof base, &opts);
  cr_assert_eq(s, FEA_ERR_INVALID_ARG, "\"%s\" parsed (%s)", resource, fea_status_string(s));
  const char *msg = fea_context_last_error(NULL);
  cr_assert(strstr(msg, needle) != NULL, "\"%s\": message does not contain '%s': %s", resource,
            needle, msg);
}

Test(resource, plain) {
  parse_ok("/cpu/ref");
  cr_assert_str_eq(base, "/cpu/ref");
  cr_assert_eq(opts.count, 0);
  parse_ok("/gpu/cuda");
  cr_assert_str_eq(base, "/gpu/cuda");
}

Test(resource, family) {
  parse_ok("/cpu");
  cr_assert_str_eq(base, "/cpu");
}

Test(resource, trailing_slash) {
  parse_ok("/cpu/");
  cr_assert_str_eq(base, "/cpu");
  parse_ok("/cpu/threads/");
  cr_assert_str_eq(base, "/cpu/threads");
  parse_ok("/cpu/:threads=2");
  cr_assert_str_eq(base, "/cpu");
  cr_assert_eq(opts.count, 1);
  parse_ok("/");
  cr_assert_str_eq(base, "/", "a lone slash is kept (and later reported as unknown)");
}

Test(resource, options) {
  parse_ok("/cpu/threads:threads=4,bind=core");
  cr_assert_str_eq(base, "/cpu/threads");
  cr_assert_eq(opts.count, 2);
  cr_assert_str_eq(opts.key[0], "threads");
  cr_assert_str_eq(opts.value[0], "4");
  cr_assert_str_eq(opts.key[1], "bind");
  cr_assert_str_eq(opts.value[1], "core");
  cr_assert_str_eq(fea_resource_opt(&opts, "bind"), "core");
  cr_assert_str_eq(fea_resource_opt(&opts, "threads"), "4");
  cr_assert_null(fea_resource_opt(&opts, "thread"));
  cr_assert_null(fea_resource_opt(&opts, "device"));
}

Test(resource, previous_options_cleared) {
  parse_ok("/cpu/threads:threads=4");
  parse_ok("/cpu/ref");
  cr_assert_eq(opts.count, 0);
  cr_assert_null(fea_resource_opt(&opts, "threads"));
}

Test(resource, max_options) {
  parse_ok("/x/y:a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8");
  cr_assert_eq(opts.count, FEA_MAX_RESOURCE_OPTS);
  cr_assert_str_eq(fea_resource_opt(&opts, "h"), "8");
  parse_fails("/x/y:a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9", "more than 8 options");
}

Test(resource, duplicate_option) {
  parse_fails("/cpu/threads:threads=1,threads=2", "'threads' twice");
  parse_fails("/cpu/threads:threads=1,bind=core,threads=1", "'threads' twice");
  /* A key that is a prefix of another is not a duplicate. */
  parse_ok("/x/y:th=1,threads=2");
  cr_assert_eq(opts.count, 2);
}

Test(resource, malformed_options) {
  parse_fails("/cpu/ref:threads", "'threads'");
  parse_fails("/cpu/ref:=3", "'=3'");
  parse_fails("/cpu/ref:threads=", "'threads='");
  parse_fails("/cpu/ref:,threads=1", "''");
  parse_fails("/cpu/ref:a=1,,b=2", "''");
  parse_fails("/cpu/ref:a=1,b", "'b'");
}

Test(resource, no_leading_slash) {
  parse_fails("cpu/ref", "'cpu/ref'");
  parse_fails("", "''");
  parse_fails(":threads=1", "':threads=1'");
}

Test(resource, too_long) {
  char small[8];
  fea_status s = fea_resource_parse("/cpu/threads", small, sizeof small, &opts);
  cr_assert_eq(s, FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(NULL), "too long") != NULL);
  s = fea_resource_parse("/cpu/ref", small, sizeof small, &opts); /* 8 chars + NUL do not fit */
  cr_assert_eq(s, FEA_ERR_INVALID_ARG);
  s = fea_resource_parse("/cpu/re", small, sizeof small, &opts);
  cr_assert_eq(s, FEA_SUCCESS);
  cr_assert_str_eq(small, "/cpu/re");

  char key[40], value[80], res[160];
  memset(key, 'k', 31);
  key[31] = '\0';
  memset(value, 'v', 63);
  value[63] = '\0';
  snprintf(res, sizeof res, "/x/y:%s=%s", key, value); /* longest key and value that fit */
  parse_ok(res);
  cr_assert_str_eq(opts.key[0], key);
  cr_assert_str_eq(opts.value[0], value);
  snprintf(res, sizeof res, "/x/y:%sk=1", key);
  parse_fails(res, "too long");
  snprintf(res, sizeof res, "/x/y:a=%sv", value);
  parse_fails(res, "too long");
}

Test(resource, check_keys) {
  static const char *const accepted[] = {"threads", "bind", NULL};
  parse_ok("/cpu/threads:threads=2,bind=none");
  cr_assert_eq(fea_resource_check_keys(&opts, "/cpu/threads", accepted), FEA_SUCCESS);
  parse_ok("/cpu/threads:threads=2,binding=none");
  cr_assert_eq(fea_resource_check_keys(&opts, "/cpu/threads", accepted), FEA_ERR_INVALID_ARG);
  const char *msg = fea_context_last_error(NULL);
  cr_assert(strstr(msg, "'binding'") && strstr(msg, "/cpu/threads"), "%s", msg);
  /* A backend without options (NULL list) accepts none. */
  cr_assert_eq(fea_resource_check_keys(&opts, "/cpu/ref", NULL), FEA_ERR_INVALID_ARG);
  parse_ok("/cpu/ref");
  cr_assert_eq(fea_resource_check_keys(&opts, "/cpu/ref", NULL), FEA_SUCCESS);
}

Test(resource, opt_int) {
  long v = -99;
  parse_ok("/cpu/threads:threads=12,neg=-3,bad=12abc,word=abc,big=99999999999999999999999");
  cr_assert_eq(fea_resource_opt_int(&opts, "threads", 1, 1024, &v), FEA_SUCCESS);
  cr_assert_eq(v, 12);
  cr_assert_eq(fea_resource_opt_int(&opts, "neg", -5, 5, &v), FEA_SUCCESS);
  cr_assert_eq(v, -3);

  v = -99;
  cr_assert_eq(fea_resource_opt_int(&opts, "absent", 1, 2, &v), FEA_SUCCESS);
  cr_assert_eq(v, -99, "an absent key leaves the value alone");

  static const struct {
    const char *key;
    long lo, hi;
    const char *needle;
  } bad[] = {
      {"threads", 1, 11, "threads=12"}, {"threads", 13, 20, "threads=12"},
      {"neg", 0, 5, "neg=-3"},          {"bad", 1, 1024, "bad=12abc"},
      {"word", 1, 1024, "word=abc"},    {"big", 1, 1024, "big=9999"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    v = -99;
    cr_assert_eq(fea_resource_opt_int(&opts, bad[i].key, bad[i].lo, bad[i].hi, &v),
                 FEA_ERR_INVALID_ARG, "%s accepted", bad[i].key);
    cr_assert_eq(v, -99, "%s: value written by a failed call", bad[i].key);
    cr_assert(strstr(fea_context_last_error(NULL), bad[i].needle) != NULL, "%s",
              fea_context_last_error(NULL));
  }
}
