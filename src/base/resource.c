/* Parsing of resource strings "/family/name:key=value,key=value". */
#include <stdlib.h>
#include <string.h>

#include "internal/backend.h"
#include "internal/error.h"
#include "resource.h"

fea_status fea_resource_parse(const char *resource, char *base, size_t base_len,
                              fea_resource_opts *opts) {
  memset(opts, 0, sizeof *opts);
  const char *colon = strchr(resource, ':');
  size_t blen = colon ? (size_t)(colon - resource) : strlen(resource);
  FEA_CHECK(blen > 0 && resource[0] == '/', NULL, FEA_ERR_INVALID_ARG,
            "resource '%s' does not start with '/' (e.g. \"/cpu/ref\", \"/gpu/cuda:device=0\")",
            resource);
  FEA_CHECK(blen < base_len, NULL, FEA_ERR_INVALID_ARG, "resource '%s' is too long", resource);
  memcpy(base, resource, blen);
  base[blen] = '\0';
  if (blen > 1 && base[blen - 1] == '/') base[blen - 1] = '\0'; /* "/cpu/" means "/cpu" */
  if (!colon) return FEA_SUCCESS;

  const char *p = colon + 1;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    FEA_CHECK(eq && eq > p && (size_t)(eq - p) + 1 < len, NULL, FEA_ERR_INVALID_ARG,
              "resource '%s': option '%.*s' is not of the form key=value", resource, (int)len, p);
    FEA_CHECK(opts->count < FEA_MAX_RESOURCE_OPTS, NULL, FEA_ERR_INVALID_ARG,
              "resource '%s' has more than %d options", resource, FEA_MAX_RESOURCE_OPTS);
    size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
    FEA_CHECK(klen < sizeof opts->key[0] && vlen < sizeof opts->value[0], NULL, FEA_ERR_INVALID_ARG,
              "resource '%s': option '%.*s' is too long", resource, (int)len, p);
    for (int i = 0; i < opts->count; i++)
      FEA_CHECK(strlen(opts->key[i]) != klen || strncmp(opts->key[i], p, klen) != 0, NULL,
                FEA_ERR_INVALID_ARG, "resource '%s' sets option '%.*s' twice", resource, (int)klen,
                p);
    memcpy(opts->key[opts->count], p, klen);
    memcpy(opts->value[opts->count], eq + 1, vlen);
    opts->count++;
    p += len;
    if (*p == ',') p++;
  }
  return FEA_SUCCESS;
}

const char *fea_resource_opt(const fea_resource_opts *opts, const char *key) {
  for (int i = 0; i < opts->count; i++)
    if (strcmp(opts->key[i], key) == 0) return opts->value[i];
  return NULL;
}

fea_status fea_resource_check_keys(const fea_resource_opts *opts, const char *prefix,
                                   const char *const *accepted) {
  for (int i = 0; i < opts->count; i++) {
    int known = 0;
    for (const char *const *k = accepted; k && *k; k++) known |= strcmp(*k, opts->key[i]) == 0;
    FEA_CHECK(known, NULL, FEA_ERR_INVALID_ARG, "backend %s has no option '%s'", prefix,
              opts->key[i]);
  }
  return FEA_SUCCESS;
}

fea_status fea_resource_opt_int(const fea_resource_opts *opts, const char *key, long lo, long hi,
                                long *value) {
  const char *s = fea_resource_opt(opts, key);
  if (!s) return FEA_SUCCESS;
  char *end = NULL;
  long v = strtol(s, &end, 10);
  FEA_CHECK(end != s && *end == '\0' && v >= lo && v <= hi, NULL, FEA_ERR_INVALID_ARG,
            "option %s=%s is not an integer in [%ld, %ld]", key, s, lo, hi);
  *value = v;
  return FEA_SUCCESS;
}
