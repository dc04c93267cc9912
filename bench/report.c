/* feaccel-bench records and their two writers: a readable table, and one JSON
 * object per line with the schema of docs/benchmarks.md, "Output schema":
 *   {"case", "backend", "threads", "params", "metrics", "peers", "machine"}. */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "report.h"

/* ------------------------------------------------------------------------ */
/* Command-line helpers                                                      */

int bench_option_value(int argc, char **argv, int *i, const char *name, const char **value) {
  const char *arg = argv[*i];
  size_t len = strlen(name);
  if (strncmp(arg, name, len) != 0) return 0;
  if (arg[len] == '=') {
    *value = arg + len + 1;
    return 1;
  }
  if (arg[len] != '\0') return 0;
  if (*i + 1 >= argc) {
    fprintf(stderr, "feaccel-bench: option %s needs a value\n", name);
    return -1;
  }
  *value = argv[++*i];
  return 1;
}

int bench_parse_ll(const char *who, const char *opt, const char *text, long long min, long long max,
                   long long *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno || end == text || *end != '\0' || v < min || v > max) {
    fprintf(stderr, "feaccel-bench: %s%s%s '%s' is not a whole number in [%lld, %lld]\n",
            who ? who : "", who ? ": " : "", opt, text, min, max);
    return -1;
  }
  *out = v;
  return 0;
}

int bench_fail(const char *what, fea_status status) {
  const char *msg = fea_context_last_error(NULL);
  fprintf(stderr, "feaccel-bench: %s failed (%s): %s\n", what, fea_status_string(status),
          msg && *msg ? msg : "no message");
  return BENCH_FAILED;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */

fea_status bench_machine_get(const fea_context *ctx, bench_machine *m) {
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  fea_status s = fea_context_get_info(ctx, &info);
  if (s < 0) return s;
  memset(m, 0, sizeof *m);
  snprintf(m->cpu_model, sizeof m->cpu_model, "%s", info.cpu_model);
  m->cores = info.num_cores;
  m->pus = info.num_pus;
  snprintf(m->blas, sizeof m->blas, "%s", info.blas);
  snprintf(m->gpu, sizeof m->gpu, "%s", info.device_name);
  return FEA_SUCCESS;
}

void bench_record_init_with(bench_record *r, const char *case_name, const char *backend,
                            int threads, const bench_machine *m) {
  memset(r, 0, sizeof *r);
  r->case_name = case_name;
  snprintf(r->backend, sizeof r->backend, "%s", backend);
  r->threads = threads;
  if (m) r->machine = *m;
}

/* The resource string with options ("/gpu/cuda:streams=1") that
 * bench_open_context last opened, so that records of runs that differ only
 * in a backend option can be told apart. */
static char opened_resource[128];

fea_status bench_record_init(bench_record *r, const char *case_name, const fea_context *ctx) {
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  bench_machine m;
  fea_status s = fea_context_get_info(ctx, &info);
  if (s < 0) return s;
  s = bench_machine_get(ctx, &m);
  if (s < 0) return s;
  bench_record_init_with(r, case_name, info.backend, info.num_threads, &m);
  const size_t len = strlen(info.backend);
  if (strncmp(opened_resource, info.backend, len) == 0 && opened_resource[len] == ':')
    bench_param_str(r, "resource", opened_resource);
  return FEA_SUCCESS;
}

static bench_field *add_field(bench_fields *fs, const char *key, bench_kind kind) {
  /* A case that needs more fields raises BENCH_MAX_FIELDS: a programming error. */
  assert(fs->count < BENCH_MAX_FIELDS);
  bench_field *f = &fs->f[fs->count++];
  memset(f, 0, sizeof *f);
  f->key = key;
  f->kind = kind;
  return f;
}

static const char *keep_string(bench_record *r, const char *s) {
  size_t room = sizeof r->strings - r->strings_used;
  assert(room > 0);
  char *dst = r->strings + r->strings_used;
  size_t len = strlen(s);
  if (len >= room) len = room - 1; /* truncated rather than lost */
  memcpy(dst, s, len);
  dst[len] = '\0';
  r->strings_used += len + 1;
  return dst;
}

void bench_param_int(bench_record *r, const char *key, long long value) {
  add_field(&r->params, key, BENCH_INT)->i = value;
}

void bench_param_str(bench_record *r, const char *key, const char *value) {
  add_field(&r->params, key, BENCH_STR)->s = keep_string(r, value);
}

void bench_metric(bench_record *r, const char *key, double value) {
  add_field(&r->metrics, key, BENCH_NUM)->d = value;
}

int bench_peer(bench_record *r, const char *name) {
  assert(r->npeers < BENCH_MAX_PEERS);
  r->peer_name[r->npeers] = keep_string(r, name);
  return r->npeers++;
}

void bench_peer_metric(bench_record *r, int peer, const char *key, double value) {
  assert(peer >= 0 && peer < r->npeers);
  add_field(&r->peer[peer], key, BENCH_NUM)->d = value;
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */

/* Length of the well-formed UTF-8 sequence at p (no overlongs, surrogates or
 * code points above U+10FFFF), or 0. */
static size_t utf8_length(const unsigned char *p) {
  unsigned c = p[0];
  size_t n;
  uint32_t cp, min;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, cp = c & 0x1fu, min = 0x80;
  else if ((c & 0xf0u) == 0xe0)
    n = 3, cp = c & 0x0fu, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, cp = c & 0x07u, min = 0x10000;
  else
    return 0;
  for (size_t k = 1; k < n; k++) {
    if ((p[k] & 0xc0u) != 0x80) return 0; /* also stops at the terminating NUL */
    cp = cp << 6 | (p[k] & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

/* A JSON string literal (RFC 8259): quote and backslash escaped, control
 * characters as short escapes or \u00XX, valid UTF-8 copied, each invalid byte
 * replaced by U+FFFD so that the line stays valid JSON. */
static void json_string(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  fputc('"', f);
  while (*p) {
    unsigned c = *p;
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc((int)c, f);
      p++;
    } else if (c < 0x20) {
      switch (c) {
      case '\b': fputs("\\b", f); break;
      case '\f': fputs("\\f", f); break;
      case '\n': fputs("\\n", f); break;
      case '\r': fputs("\\r", f); break;
      case '\t': fputs("\\t", f); break;
      default: fprintf(f, "\\u%04x", c); break;
      }
      p++;
    } else if (c < 0x80) {
      fputc((int)c, f);
      p++;
    } else {
      size_t n = utf8_length(p);
      if (n) {
        fwrite(p, 1, n, f);
        p += n;
      } else {
        fputs("\\ufffd", f);
        p++;
      }
    }
  }
  fputc('"', f);
}

/* JSON has no NaN or infinity: those become null. */
static void json_number(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.6g", v);
  else
    fputs("null", f);
}

static void json_fields(FILE *f, const bench_fields *fs) {
  fputc('{', f);
  for (int k = 0; k < fs->count; k++) {
    const bench_field *x = &fs->f[k];
    if (k) fputs(", ", f);
    json_string(f, x->key);
    fputs(": ", f);
    switch (x->kind) {
    case BENCH_INT: fprintf(f, "%lld", x->i); break;
    case BENCH_NUM: json_number(f, x->d); break;
    case BENCH_STR: json_string(f, x->s); break;
    }
  }
  fputc('}', f);
}

static void json_record(FILE *f, const bench_record *r) {
  fputs("{\"case\": ", f);
  json_string(f, r->case_name);
  fputs(", \"backend\": ", f);
  json_string(f, r->backend);
  fprintf(f, ", \"threads\": %d, \"params\": ", r->threads);
  json_fields(f, &r->params);
  fputs(", \"metrics\": ", f);
  json_fields(f, &r->metrics);
  fputs(", \"peers\": {", f);
  for (int k = 0; k < r->npeers; k++) {
    if (k) fputs(", ", f);
    json_string(f, r->peer_name[k]);
    fputs(": ", f);
    json_fields(f, &r->peer[k]);
  }
  fputs("}, \"machine\": {\"cpu_model\": ", f);
  json_string(f, r->machine.cpu_model);
  fprintf(f, ", \"cores\": %d, \"pus\": %d, \"blas\": ", r->machine.cores, r->machine.pus);
  json_string(f, r->machine.blas);
  fputs(", \"gpu\": ", f);
  json_string(f, r->machine.gpu);
  fputs("}}\n", f);
}

/* ------------------------------------------------------------------------ */
/* Table                                                                     */

#define TABLE_PARAMS_WIDTH 56

/* Four significant digits, but no exponent for figures in the thousands. */
static int table_number(char *buf, size_t len, double v) {
  if (!isfinite(v)) return snprintf(buf, len, "n/a");
  if (fabs(v) >= 1000.0) return snprintf(buf, len, "%.0f", v);
  return snprintf(buf, len, "%.4g", v);
}

/* "k=v k=v" into buf (truncated to len). */
static void table_fields(char *buf, size_t len, const bench_fields *fs, const char *sep) {
  size_t used = 0;
  buf[0] = '\0';
  for (int k = 0; k < fs->count && used < len; k++) {
    const bench_field *x = &fs->f[k];
    char value[64];
    switch (x->kind) {
    case BENCH_INT: snprintf(value, sizeof value, "%lld", x->i); break;
    case BENCH_NUM: table_number(value, sizeof value, x->d); break;
    case BENCH_STR: snprintf(value, sizeof value, "%s", x->s); break;
    }
    int w = snprintf(buf + used, len - used, "%s%s=%s", k ? sep : "", x->key, value);
    if (w < 0) break;
    used += (size_t)w;
  }
}

static void table_header(bench_report *rep, const bench_record *r) {
  const char *coretype = getenv("OPENBLAS_CORETYPE");
  fprintf(rep->out, "case: %s\n", r->case_name);
  fprintf(rep->out, "cpu:  %s, %d cores, %d PUs\n", r->machine.cpu_model, r->machine.cores,
          r->machine.pus);
  fprintf(rep->out, "blas: %s; OPENBLAS_CORETYPE%s%s\n", r->machine.blas, coretype ? "=" : " unset",
          coretype ? coretype : "");
  fprintf(rep->out, "\n%-14s %7s  %-*s  %s\n", "backend", "threads", TABLE_PARAMS_WIDTH, "params",
          "metrics");
  rep->header_done = 1;
}

static void table_gpu_line(bench_report *rep, const bench_record *r) {
  if (r->machine.gpu[0] && strcmp(r->machine.gpu, rep->shown_gpu) != 0) {
    fprintf(rep->out, "%-14s gpu: %s\n", "", r->machine.gpu);
    snprintf(rep->shown_gpu, sizeof rep->shown_gpu, "%s", r->machine.gpu);
  }
}

static void table_row(bench_report *rep, const bench_record *r) {
  /* 16 fields of up to ~30 characters each fit: a row is never cut. */
  char params[512], metrics[512], peer[512];
  if (!rep->header_done) table_header(rep, r);
  table_gpu_line(rep, r);
  table_fields(params, sizeof params, &r->params, " ");
  table_fields(metrics, sizeof metrics, &r->metrics, "  ");
  fprintf(rep->out, "%-14s %7d  %-*s  %s\n", r->backend, r->threads, TABLE_PARAMS_WIDTH, params,
          metrics);
  for (int k = 0; k < r->npeers; k++) {
    table_fields(peer, sizeof peer, &r->peer[k], "  ");
    fprintf(rep->out, "%-14s %7s  %-*s  %s\n", "", "", TABLE_PARAMS_WIDTH, r->peer_name[k], peer);
  }
}

/* ------------------------------------------------------------------------ */
/* Writers                                                                   */

void bench_report_init(bench_report *rep, const bench_options *opts) {
  memset(rep, 0, sizeof *rep);
  rep->out = opts->out ? opts->out : stdout;
  rep->json = opts->json;
}

void bench_report_emit(bench_report *rep, const bench_record *r) {
  if (rep->json)
    json_record(rep->out, r);
  else
    table_row(rep, r);
  fflush(rep->out);
}

void bench_report_skip(bench_report *rep, const char *case_name, const char *backend,
                       const char *why, const bench_machine *m) {
  bench_record r;
  bench_record_init_with(&r, case_name, backend, 0, m);
  bench_param_str(&r, "skipped", why && *why ? why : "no reason given");
  if (rep->json) {
    json_record(rep->out, &r);
  } else {
    if (!rep->header_done) table_header(rep, &r);
    fprintf(rep->out, "%-14s %7s  skipped: %s\n", backend, "-", r.params.f[0].s);
  }
  fflush(rep->out);
}

void bench_report_note(bench_report *rep, const char *fmt, ...) {
  if (rep->json) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(rep->out, fmt, ap);
  va_end(ap);
  fputc('\n', rep->out);
}

int bench_open_context(const bench_options *opts, const char *default_resource, fea_context **ctx) {
  *ctx = NULL;
  const char *resource = opts->backend ? opts->backend : default_resource;
  fea_status s = fea_context_create(resource, ctx);
  if (s == FEA_SUCCESS) snprintf(opened_resource, sizeof opened_resource, "%s", resource);
  if (s == FEA_SUCCESS && opts->threads > 0) s = fea_context_set_num_threads(*ctx, opts->threads);
  if (s >= 0) {
    bench_progress_bar_attach(*ctx); /* a bar on a terminal's stderr, else nothing */
    return BENCH_OK;
  }
  int rc = bench_fail(*ctx ? "fea_context_set_num_threads" : "fea_context_create", s);
  fea_context_destroy(ctx);
  return s == FEA_ERR_INVALID_ARG ? BENCH_USAGE : rc;
}
