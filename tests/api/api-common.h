/* Shared by the public-API tests: the backend parameter list, context
 * creation that skips where a backend is not usable, error-checking macros and
 * a host-side reference for the 16-bit formats (decoding and exact encoding
 * from first principles, independent of the library's conversions).
 *
 * These tests see only the public headers and libfeaccel.so. */
#ifndef FEA_TESTS_API_COMMON_H
#define FEA_TESTS_API_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <feaccel.h>

/* One backend to run a test on. The string is held in the struct, not
 * pointed to: Criterion copies each parameter into the test's process (which
 * BoxFort may start afresh, where addresses of the parent do not hold). */
struct backend_param {
  char resource[32];
};

/* Plain static data: Criterion builds the parameter list in the parent
 * process before forking, so no libfeaccel (or CUDA) call may happen there. */
#define FEA_TEST_BACKEND_LIST                       \
  {                                                 \
    {"/cpu/ref"}, {"/cpu/threads"}, { "/gpu/cuda" } \
  }

/* The backend the running test is on ("" outside backend tests), named in
 * the failure messages of OK and EXPECT_FAIL; `--verbose` also logs it. */
static const char *fea_test_backend = "";

/* A test run once per backend; the body sees `const char *resource`. */
#define BACKEND_TEST(Suite, Name)                                     \
  ParameterizedTestParameters(Suite, Name) {                          \
    static struct backend_param backends[] = FEA_TEST_BACKEND_LIST;   \
    return cr_make_param_array(struct backend_param, backends,        \
                               sizeof backends / sizeof backends[0]); \
  }                                                                   \
  static void Suite##_##Name##_body(const char *resource);            \
  ParameterizedTest(struct backend_param *param, Suite, Name) {       \
    fea_test_backend = param->resource;                               \
    cr_log_info("backend %s", param->resource);                       \
    Suite##_##Name##_body(param->resource);                           \
  }                                                                   \
  static void Suite##_##Name##_body(const char *resource)

/* A call that must succeed; on failure the message says why. */
#define OK(expr)                                                                              \
  do {                                                                                        \
    fea_status ok_status_ = (expr);                                                           \
    cr_assert_eq(ok_status_, FEA_SUCCESS, "[%s] %s returned %s: %s", fea_test_backend, #expr, \
                 fea_status_string(ok_status_), fea_context_last_error(NULL));                \
  } while (0)

/* Create a context on resource, or skip the test when the backend was not
 * built or has no usable device here. */
#define OPEN_OR_SKIP(resource, ctxp)                                                         \
  do {                                                                                       \
    fea_status open_status_ = fea_context_create((resource), (ctxp));                        \
    if (open_status_ == FEA_ERR_DEVICE || open_status_ == FEA_ERR_UNSUPPORTED)               \
      cr_skip_test("%s not usable here: %s", (resource), fea_context_last_error(NULL));      \
    cr_assert_eq(open_status_, FEA_SUCCESS, "fea_context_create(\"%s\") returned %s: %s",    \
                 (resource), fea_status_string(open_status_), fea_context_last_error(NULL)); \
    cr_assert_not_null(*(ctxp));                                                             \
  } while (0)

/* Whether msg begins with "NAME(): " for the function called by the
 * expression text expr ("fea_x(args)"): a message names the public function
 * the user called, never an internal helper. Expressions that are not a
 * direct fea_ call are not checked. */
static inline int names_entry(const char *expr, const char *msg) {
  size_t n = strcspn(expr, "( ");
  if (strncmp(expr, "fea_", 4) != 0 || expr[n] != '(') return 1;
  return strncmp(msg, expr, n) == 0 && strncmp(msg + n, "(): ", 4) == 0;
}

/* expr must return `want`, and the message must contain `needle`: on ctx
 * (when not NULL; then also identical to the calling thread's message), else
 * the calling thread's message; it must begin with the called function's
 * name. */
#define EXPECT_FAIL(expr, want, ctx, needle)                                                   \
  do {                                                                                         \
    fea_status fail_status_ = (expr);                                                          \
    cr_assert_eq(fail_status_, (want), "[%s] %s returned %s, expected %s (message: %s)",       \
                 fea_test_backend, #expr, fea_status_string(fail_status_),                     \
                 fea_status_string(want), fea_context_last_error(NULL));                       \
    const fea_context *fail_ctx_ = (ctx);                                                      \
    const char *fail_msg_ = fea_context_last_error(fail_ctx_);                                 \
    cr_assert(strstr(fail_msg_, (needle)) != NULL,                                             \
              "[%s] the message of %s does not contain '%s': \"%s\"", fea_test_backend, #expr, \
              (needle), fail_msg_);                                                            \
    cr_assert(names_entry(#expr, fail_msg_),                                                   \
              "[%s] the message of %s does not begin with its name: \"%s\"", fea_test_backend, \
              #expr, fail_msg_);                                                               \
    if (fail_ctx_)                                                                             \
      cr_assert_str_eq(fail_msg_, fea_context_last_error(NULL),                                \
                       "context and thread messages differ after %s", #expr);                  \
  } while (0)

/* Unit roundoff of each storage format (half the distance from 1 to the next value). */
static inline double unit_roundoff(fea_precision p) {
  switch (p) {
  case FEA_F64: return 0x1p-53;
  case FEA_F32: return 0x1p-24;
  case FEA_F16: return 0x1p-11;
  case FEA_BF16: return 0x1p-8;
  }
  return NAN;
}

/* Unit roundoff of the arithmetic: f16 and bf16 are computed on in f32. */
static inline double compute_roundoff(fea_precision p) { return p == FEA_F64 ? 0x1p-53 : 0x1p-24; }

/* Half the smallest positive (subnormal) value: the absolute error of rounding near zero. */
static inline double underflow_error(fea_precision p) {
  switch (p) {
  case FEA_F64: return 0x1p-1074; /* half of it is not a double */
  case FEA_F32: return 0x1p-150;
  case FEA_F16: return 0x1p-25;
  case FEA_BF16: return 0x1p-134;
  }
  return NAN;
}

static inline size_t elem_bytes(fea_precision p) { return p == FEA_F64 ? 8 : p == FEA_F32 ? 4 : 2; }

/* Binary16 (mbits 10, bias 15) and bfloat16 (mbits 7, bias 127) from their definition. */
static inline double decode16(uint16_t h, int mbits, int bias) {
  int ebits = 15 - mbits;
  unsigned e = (h >> mbits) & ((1u << ebits) - 1u), f = h & ((1u << mbits) - 1u);
  double s = (h & 0x8000u) ? -1.0 : 1.0;
  if (e == (1u << ebits) - 1u) return f ? NAN : s * INFINITY;
  if (e == 0) return s * ldexp((double)f, 1 - bias - mbits);
  return s * ldexp((double)(f | (1u << mbits)), (int)e - bias - mbits);
}

/* Encoding of v, which must be exactly representable (or infinite, or zero). */
static inline uint16_t encode16_exact(double v, int mbits, int bias) {
  uint16_t sign = signbit(v) ? 0x8000u : 0;
  uint16_t expmask = (uint16_t)(((1u << (15 - mbits)) - 1u) << mbits);
  double a = fabs(v);
  if (a == 0) return sign;
  if (isinf(a)) return sign | expmask;
  if (isnan(a)) return sign | expmask | (uint16_t)(1u << (mbits - 1)); /* a quiet NaN */
  int e2;
  frexp(a, &e2); /* a = f 2^e2, f in [0.5, 1): the unbiased exponent is e2 - 1 */
  int ub = e2 - 1;
  double q;
  uint16_t bits;
  if (ub + bias >= 1) {
    q = ldexp(a, mbits - ub); /* in [2^mbits, 2^(mbits+1)) */
    bits = (uint16_t)((unsigned)(ub + bias) << mbits) | (uint16_t)((unsigned)q - (1u << mbits));
  } else {
    q = ldexp(a, mbits + bias - 1); /* subnormal: units of 2^(1 - bias - mbits) */
    bits = (uint16_t)q;
  }
  cr_assert(q == floor(q) && ub + bias < (1 << (15 - mbits)) - 1,
            "%a is not exactly representable with %d fraction bits", v, mbits);
  return sign | bits;
}

/* Host arrays in any precision, built from and read back as doubles. */
static inline void host_store(fea_precision p, void *buf, size_t i, double v) {
  switch (p) {
  case FEA_F64: ((double *)buf)[i] = v; break;
  case FEA_F32: ((float *)buf)[i] = (float)v; break;
  case FEA_F16: ((uint16_t *)buf)[i] = encode16_exact(v, 10, 15); break;
  case FEA_BF16: ((uint16_t *)buf)[i] = encode16_exact(v, 7, 127); break;
  }
}

static inline double host_load(fea_precision p, const void *buf, size_t i) {
  switch (p) {
  case FEA_F64: return ((const double *)buf)[i];
  case FEA_F32: return ((const float *)buf)[i];
  case FEA_F16: return decode16(((const uint16_t *)buf)[i], 10, 15);
  case FEA_BF16: return decode16(((const uint16_t *)buf)[i], 7, 127);
  }
  return NAN;
}

static const fea_precision all_precisions[] = {FEA_F64, FEA_F32, FEA_F16, FEA_BF16};
#define NUM_PRECISIONS 4

/* What a context's log callback received at FEA_LOG_WARN: install with
 * fea_context_set_log_callback(ctx, FEA_LOG_WARN, keep_warning, &w). The
 * once-per-process warning about the machine's BLAS ("the BLAS runs ...
 * kernels", test-context-info.c checks it) is about the machine, not the
 * input under test: it is left out, so that a build whose BLAS runs slow
 * kernels here (-Dblas=blis on a CPU BLIS does not know) counts the same. */
typedef struct warnings {
  int count;
  char first[1024], last[1024];
} warnings;

static inline void keep_warning(void *user, fea_log_level level, const char *msg) {
  warnings *w = user;
  if (level != FEA_LOG_WARN || strncmp(msg, "the BLAS runs ", 14) == 0) return;
  if (w->count++ == 0) snprintf(w->first, sizeof w->first, "%s", msg);
  snprintf(w->last, sizeof w->last, "%s", msg);
}

/* A field of /proc/self/status in KiB (VmHWM, VmRSS, ...), -1 when absent. */
static inline long long proc_status_kib(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long long v = -1;
  const size_t k = strlen(key);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, k) == 0 && line[k] == ':') v = atoll(line + k + 1);
  fclose(f);
  return v;
}

/* Built with AddressSanitizer (its shadow memory is resident and it
 * reserves terabytes of address space: memory figures do not hold). */
#if defined(__SANITIZE_ADDRESS__)
#define FEA_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FEA_TEST_ASAN 1
#endif
#endif

#endif
