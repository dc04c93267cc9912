/* Resource strings "/family/name:key=value,key=value": the one grammar
 * (docs/backends.md, "Resource strings"), and the check of option values
 * against the spec each backend lists. Nothing is trimmed or skipped: a
 * space, an empty option or a trailing comma is refused with the string and
 * the part that is wrong, never read as something the caller may not have
 * meant. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/backend.h"
#include "internal/error.h"
#include "resource.h"

static int is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

/* key: letters, digits, '_' and '-'. */
static int is_key_char(char c) { return is_name_char(c) && c != '.'; }

/* value: visible ASCII except the separators ',' and '=' (so "threads==4"
 * or "threads=4=5" is a typo, not the value "=4"). */
static int is_value_char(char c) { return c > ' ' && c < 127 && c != ',' && c != '='; }

/* base = "/" | "/" segment { "/" segment } [ "/" ]: an empty segment ("//")
 * or a character outside a name is refused here, so that the message says
 * what is wrong rather than "unknown resource". */
static fea_status check_base(const char *resource, size_t blen) {
  FEA_CHECK(blen > 0 && resource[0] == '/', NULL, FEA_ERR_INVALID_ARG,
            "resource '%s' does not start with '/' (e.g. \"/cpu/ref\", \"/gpu/cuda:device=0\")",
            resource);
  for (size_t i = 1; i < blen; i++) {
    const char c = resource[i];
    FEA_CHECK(c != '/' || resource[i - 1] != '/', NULL, FEA_ERR_INVALID_ARG,
              "resource '%s' has an empty name between two '/' (at byte %zu)", resource, i);
    char what[16];
    if (c == ' ')
      snprintf(what, sizeof what, "a space");
    else if (c > ' ' && c < 127)
      snprintf(what, sizeof what, "'%c'", c);
    else
      snprintf(what, sizeof what, "byte 0x%02x", (unsigned)(unsigned char)c);
    FEA_CHECK(c == '/' || is_name_char(c), NULL, FEA_ERR_INVALID_ARG,
              "resource '%s' has %s at byte %zu of its name; a name holds letters, digits, '_', "
              "'-' and '.'",
              resource, what, i);
  }
  return FEA_SUCCESS;
}

/* option = key "=" value, in p[0, len). */
static fea_status parse_option(const char *resource, const char *p, size_t len,
                               fea_resource_opts *opts) {
  FEA_CHECK(len > 0, NULL, FEA_ERR_INVALID_ARG,
            "resource '%s' has an empty option '' at byte %zu (options are key=value separated by "
            "single commas, with no comma after the last)",
            resource, (size_t)(p - resource));
  const char *eq = memchr(p, '=', len);
  FEA_CHECK(eq && eq > p && (size_t)(eq - p) + 1 < len, NULL, FEA_ERR_INVALID_ARG,
            "resource '%s': option '%.*s' is not of the form key=value", resource, (int)len, p);
  const size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
  for (size_t i = 0; i < klen; i++)
    FEA_CHECK(is_key_char(p[i]), NULL, FEA_ERR_INVALID_ARG,
              "resource '%s': the key of option '%.*s' has '%c'; a key holds letters, digits, '_' "
              "and '-'",
              resource, (int)len, p, p[i] > ' ' && p[i] < 127 ? p[i] : '?');
  for (size_t i = 0; i < vlen; i++)
    FEA_CHECK(is_value_char(eq[1 + i]), NULL, FEA_ERR_INVALID_ARG,
              "resource '%s': the value of option '%.*s' has %s; a value holds visible characters "
              "other than ',' and '='",
              resource, (int)len, p,
              eq[1 + i] == ' '   ? "a space"
              : eq[1 + i] == '=' ? "a second '='"
                                 : "a control byte");
  FEA_CHECK(opts->count < FEA_MAX_RESOURCE_OPTS, NULL, FEA_ERR_INVALID_ARG,
            "resource '%s' has more than %d options", resource, FEA_MAX_RESOURCE_OPTS);
  FEA_CHECK(klen < sizeof opts->key[0] && vlen < sizeof opts->value[0], NULL, FEA_ERR_INVALID_ARG,
            "resource '%s': option '%.*s' is too long (keys up to %zu, values up to %zu bytes)",
            resource, (int)len, p, sizeof opts->key[0] - 1, sizeof opts->value[0] - 1);
  for (int i = 0; i < opts->count; i++)
    FEA_CHECK(strlen(opts->key[i]) != klen || strncmp(opts->key[i], p, klen) != 0, NULL,
              FEA_ERR_INVALID_ARG, "resource '%s' sets option '%.*s' twice", resource, (int)klen,
              p);
  memcpy(opts->key[opts->count], p, klen);
  opts->key[opts->count][klen] = '\0';
  memcpy(opts->value[opts->count], eq + 1, vlen);
  opts->value[opts->count][vlen] = '\0';
  opts->count++;
  return FEA_SUCCESS;
}

fea_status fea_resource_parse(const char *resource, char *base, size_t base_len,
                              fea_resource_opts *opts) {
  memset(opts, 0, sizeof *opts);
  const char *colon = strchr(resource, ':');
  size_t blen = colon ? (size_t)(colon - resource) : strlen(resource);
  FEA_CALL(check_base(resource, blen));
  FEA_CHECK(blen < base_len, NULL, FEA_ERR_INVALID_ARG, "resource '%s' is too long", resource);
  /* resource = base [ ":" option { "," option } ]: a ':' promises an option. */
  FEA_CHECK(!colon || colon[1] != '\0', NULL, FEA_ERR_INVALID_ARG,
            "resource '%s' ends with ':' but no option follows", resource);
  fea_resource_opts parsed;
  memset(&parsed, 0, sizeof parsed);
  for (const char *p = colon ? colon + 1 : NULL; p;) {
    const char *end = strchr(p, ',');
    const size_t len = end ? (size_t)(end - p) : strlen(p);
    FEA_CALL(parse_option(resource, p, len, &parsed));
    p = end ? end + 1 : NULL; /* after a ',' an option must follow: "a=1," is refused */
  }
  /* Written only once the whole string is known to be good. */
  memcpy(base, resource, blen);
  base[blen] = '\0';
  if (blen > 1 && base[blen - 1] == '/') base[blen - 1] = '\0'; /* "/cpu/" means "/cpu" */
  *opts = parsed;
  return FEA_SUCCESS;
}

const char *fea_resource_opt(const fea_resource_opts *opts, const char *key) {
  for (int i = 0; i < opts->count; i++)
    if (strcmp(opts->key[i], key) == 0) return opts->value[i];
  return NULL;
}

/* A whole decimal integer: an optional '-', digits, nothing else (no
 * space, no '+', no overflow). */
static int parse_long(const char *s, long *value) {
  const char *d = s[0] == '-' ? s + 1 : s;
  if (*d < '0' || *d > '9') return 0;
  char *end = NULL;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0') return 0;
  *value = v;
  return 1;
}

/* A spec's key ("threads=1..1024" -> "threads") has length klen. */
static size_t spec_key_len(const char *spec) { return strcspn(spec, "="); }

/* Whether value meets the part of spec after '=': "a|b|c" (one of the
 * words), "LO..HI" or "LO.." (an integer in range); no '=' accepts any
 * value the grammar does. */
static int value_meets(const char *spec, const char *value) {
  const char *rule = strchr(spec, '=');
  if (!rule) return 1;
  rule++;
  const char *dots = strstr(rule, "..");
  if (dots) {
    long v, lo = strtol(rule, NULL, 10);
    if (!parse_long(value, &v) || v < lo) return 0;
    return dots[2] == '\0' || v <= strtol(dots + 2, NULL, 10);
  }
  const size_t vlen = strlen(value);
  for (const char *w = rule; *w;) {
    const size_t wlen = strcspn(w, "|");
    if (wlen == vlen && strncmp(w, value, vlen) == 0) return 1;
    w += wlen + (w[wlen] == '|');
  }
  return 0;
}

/* The accepted spec of key, or NULL. */
static const char *find_spec(const char *const *accepted, const char *key) {
  for (const char *const *k = accepted; k && *k; k++)
    if (spec_key_len(*k) == strlen(key) && strncmp(*k, key, spec_key_len(*k)) == 0) return *k;
  return NULL;
}

int fea_resource_knows_keys(const fea_resource_opts *opts, const char *const *accepted) {
  for (int i = 0; i < opts->count; i++)
    if (!find_spec(accepted, opts->key[i])) return 0;
  return 1;
}

fea_status fea_resource_check_keys(const fea_resource_opts *opts, const char *prefix,
                                   const char *const *accepted) {
  for (int i = 0; i < opts->count; i++) {
    const char *spec = find_spec(accepted, opts->key[i]);
    FEA_CHECK(spec, NULL, FEA_ERR_INVALID_ARG, "backend %s has no option '%s'", prefix,
              opts->key[i]);
    if (value_meets(spec, opts->value[i])) continue;
    const char *rule = strchr(spec, '=') + 1, *dots = strstr(rule, "..");
    if (!dots)
      return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG, "backend %s: option %s=%s is not one of %s",
                       prefix, opts->key[i], opts->value[i], rule);
    if (dots[2] == '\0')
      return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG,
                       "backend %s: option %s=%s is not an integer >= %.*s", prefix, opts->key[i],
                       opts->value[i], (int)(dots - rule), rule);
    return FEA_ERROR(NULL, FEA_ERR_INVALID_ARG,
                     "backend %s: option %s=%s is not an integer in [%.*s, %s]", prefix,
                     opts->key[i], opts->value[i], (int)(dots - rule), rule, dots + 2);
  }
  return FEA_SUCCESS;
}

fea_status fea_resource_opt_int(const fea_resource_opts *opts, const char *key, long lo, long hi,
                                long *value) {
  const char *s = fea_resource_opt(opts, key);
  if (!s) return FEA_SUCCESS;
  long v;
  FEA_CHECK(parse_long(s, &v) && v >= lo && v <= hi, NULL, FEA_ERR_INVALID_ARG,
            "option %s=%s is not an integer in [%ld, %ld]", key, s, lo, hi);
  *value = v;
  return FEA_SUCCESS;
}
