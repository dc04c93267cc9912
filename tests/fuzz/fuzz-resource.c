/* libFuzzer target of the resource-string parser: each input, as a C string,
 * goes through the internal fea_resource_parse() (whose result is checked by
 * rebuilding the string from it) and then through fea_context_create(),
 * which must agree with the parser and create or refuse cleanly. */
#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "base/resource.h"

#define BASE_LEN 64 /* what fea_context_create() passes */

/* The parse must lose nothing: base, ':' and the options joined by ',' give
 * the input back, up to the one '/' the parser drops after a family
 * ("/cpu/"); the grammar (docs/backends.md) allows no ',' after the last
 * option, no space and no empty option. */
static void check_parse(const char *s, const char *base, const fea_resource_opts *o) {
  FUZZ_REQUIRE(base[0] == '/', "base '%s' of '%s'", base, s);
  FUZZ_REQUIRE(o->count >= 0 && o->count <= FEA_MAX_RESOURCE_OPTS, "%d options", o->count);
  const char *colon = strchr(s, ':');
  const size_t blen = colon ? (size_t)(colon - s) : strlen(s);
  const size_t got = strlen(base);
  FUZZ_REQUIRE(got < BASE_LEN, "base of %zu bytes", got);
  FUZZ_REQUIRE(strncmp(s, base, got) == 0 &&
                   (got == blen || (got + 1 == blen && blen > 1 && s[got] == '/')),
               "base '%s' of '%s'", base, s);
  if (!colon) {
    FUZZ_REQUIRE(o->count == 0, "%d options without ':' in '%s'", o->count, s);
    return;
  }
  const char *p = colon + 1;
  FUZZ_REQUIRE(o->count >= 1, "':' without an option accepted in '%s'", s);
  for (int i = 0; i < o->count; i++) {
    const size_t kl = strlen(o->key[i]), vl = strlen(o->value[i]);
    FUZZ_REQUIRE(kl > 0 && vl > 0, "option %d of '%s' is '%s=%s'", i, s, o->key[i], o->value[i]);
    FUZZ_REQUIRE(!strpbrk(o->key[i], "=, ") && !strpbrk(o->value[i], ",= "),
                 "option %d of '%s' is '%s=%s'", i, s, o->key[i], o->value[i]);
    for (int j = 0; j < i; j++)
      FUZZ_REQUIRE(strcmp(o->key[i], o->key[j]) != 0, "key '%s' twice in '%s'", o->key[i], s);
    FUZZ_REQUIRE(strncmp(p, o->key[i], kl) == 0 && p[kl] == '=' &&
                     strncmp(p + kl + 1, o->value[i], vl) == 0,
                 "option %d '%s=%s' is not at '%s'", i, o->key[i], o->value[i], p);
    p += kl + 1 + vl;
    if (i + 1 < o->count) {
      FUZZ_REQUIRE(*p == ',', "options %d and %d of '%s' are not joined by ','", i, i + 1, s);
      p++;
    }
    FUZZ_REQUIRE(fea_resource_opt(o, o->key[i]) == o->value[i], "lookup of '%s'", o->key[i]);
  }
  FUZZ_REQUIRE(*p == '\0', "'%s' is left over from '%s'", p, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  FUZZ_REQUIRE(s, "out of memory");
  memcpy(s, data, size);
  s[size] = '\0'; /* an input with a NUL byte is the string up to it */

  char base[BASE_LEN];
  fea_resource_opts opts;
  const fea_status parsed = fea_resource_parse(s, base, sizeof base, &opts);
  FUZZ_REQUIRE(parsed == FEA_SUCCESS || parsed == FEA_ERR_INVALID_ARG, "parse gave %d", parsed);
  long threads = 1;
  if (parsed == FEA_SUCCESS) {
    check_parse(s, base, &opts);
    if (fea_resource_opt_int(&opts, "threads", 1, 1024, &threads) != FEA_SUCCESS) threads = 1;
  } else {
    FUZZ_REQUIRE(strlen(fea_context_last_error(NULL)) > 0, "a parse error without a message");
  }

  /* A context with hundreds of OpenMP threads costs more than an input may
   * take; the option's range itself is what the parse above exercised. */
  if (threads <= 4) {
    fea_context *ctx = (fea_context *)s; /* must be overwritten */
    const fea_status st = fea_context_create(s, &ctx);
    if (st == FEA_SUCCESS) {
      FUZZ_REQUIRE(parsed == FEA_SUCCESS, "'%s' refused by the parser, accepted by create", s);
      FUZZ_REQUIRE(ctx != NULL, "success without a context");
      fea_context_info info = FEA_CONTEXT_INFO_INIT;
      FUZZ_REQUIRE(fea_context_get_info(ctx, &info) == FEA_SUCCESS, "get_info");
      /* The base names the backend or its family. */
      FUZZ_REQUIRE(strncmp(info.backend, base, strlen(base)) == 0, "'%s' made a context on '%s'", s,
                   info.backend);
      fea_context_destroy(&ctx);
    } else {
      FUZZ_REQUIRE(ctx == NULL, "failure %d left the handle set", st);
      FUZZ_REQUIRE(st == FEA_ERR_INVALID_ARG || st == FEA_ERR_UNSUPPORTED || st == FEA_ERR_DEVICE,
                   "'%s' gave %d", s, st);
      FUZZ_REQUIRE(parsed == FEA_SUCCESS || st == FEA_ERR_INVALID_ARG, "'%s' gave %d", s, st);
      FUZZ_REQUIRE(strlen(fea_context_last_error(NULL)) > 0, "'%s' refused without a message", s);
    }
  }
  free(s);
  return 0;
}
