/* libFuzzer target of the knot-vector checks: the input is decoded into a
 * B-spline descriptor (degrees, element counts or knot vectors whose values
 * include NaN, infinities, subnormals and signed zeros, the box, the struct
 * size), a space is created from it, and knots are inserted and the degree
 * raised on the result. An independent judgement of each knot vector here
 * must agree with the library's, and a refused call must change nothing. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"

#define MAX_DEGREE 8    /* space.h: degrees 1..8 */
#define MAX_INTERIOR 10 /* interior knots per direction: keeps a 3D space small */
#define MAX_KNOTS (2 * (MAX_DEGREE + 1) + MAX_INTERIOR)
#define MAX_N 8 /* elements per direction of open uniform knots */

/* The bytes not read yet; reads past the end give zeros. */
struct input {
  const uint8_t *p;
  size_t left;
};

static uint8_t byte(struct input *in) {
  if (!in->left) return 0;
  in->left--;
  return *in->p++;
}

/* A knot value: mostly small multiples of 1/8 (so that sorted, open vectors
 * with repeated knots come up often), else one of the values that break
 * naive comparisons, else 8 raw bytes. */
static double value(struct input *in) {
  static const double special[] = {NAN,
                                   INFINITY,
                                   -INFINITY,
                                   0.0,
                                   -0.0,
                                   4.9406564584124654e-324,
                                   -4.9406564584124654e-324,
                                   DBL_MIN,
                                   DBL_MAX,
                                   -DBL_MAX,
                                   1e-300,
                                   1e300,
                                   1.0 + DBL_EPSILON,
                                   1.0 - DBL_EPSILON / 2};
  const uint8_t b = byte(in);
  if (b < 200) return (b % 25) / 8.0;
  if (b < 200 + sizeof special / sizeof *special) return special[b - 200];
  double x = 0;
  uint8_t raw[8];
  for (int i = 0; i < 8; i++) raw[i] = byte(in);
  memcpy(&x, raw, sizeof x);
  return x;
}

/* Independent judgement of a knot vector (space.h): finite, non-decreasing,
 * its first and last values exactly degree + 1 times, interior values at
 * most degree times. */
static int knots_valid(int p, fea_index m, const double *t) {
  if (p < 1 || p > MAX_DEGREE || m < 2 * p + 2) return 0;
  for (fea_index i = 0; i < m; i++)
    if (!isfinite(t[i]) || (i > 0 && t[i] < t[i - 1])) return 0;
  fea_index i = 0;
  while (i < m) {
    fea_index j = i;
    while (j < m && t[j] == t[i]) j++;
    const int end = i == 0 || j == m;
    if (end ? j - i != p + 1 : j - i > p) return 0;
    i = j;
  }
  return 1;
}

static fea_index spans(fea_index m, const double *t) {
  fea_index e = 0;
  for (fea_index i = 0; i + 1 < m; i++) e += t[i] < t[i + 1];
  return e;
}

/* Independent judgement of the element sizes (docs/meshes.md): every
 * non-empty span, mapped onto [lower, upper], wider than the rounding of its
 * knots and of the coordinates, and its measure width^dim in [1e-150, 1e150]. */
static int elements_representable(int dim, fea_index m, const double *t, double lower,
                                  double upper) {
  const double range = t[m - 1] - t[0], tmag = fmax(fabs(t[0]), fabs(t[m - 1]));
  const double xmag = fmax(fabs(lower), fabs(upper));
  for (fea_index i = 0; i + 1 < m; i++) {
    if (!(t[i] < t[i + 1])) continue;
    const double w = t[i + 1] - t[i], width = (upper - lower) * (w / range);
    if (!(w > 1e-14 * tmag && width > 1e-14 * xmag)) return 0;
    const double measure = pow(width, dim);
    if (!(measure >= 1e-150 && measure <= 1e150)) return 0;
  }
  return 1;
}

/* The open uniform knots of p and n elements on [0, 1], as the library makes them. */
static fea_index uniform_knots(int p, fea_index n, double *t) {
  const fea_index m = n + 2 * (fea_index)p + 1;
  for (int i = 0; i <= p; i++) t[i] = 0.0, t[m - 1 - i] = 1.0;
  for (fea_index i = 1; i < n; i++) t[p + i] = (double)i / (double)n;
  return m;
}

struct expected {
  int valid;
  int degree[3];
  fea_index num_knots[3], elements[3];
};

/* The descriptor from the input, and what a space made from it must be. */
static void decode(struct input *in, fea_bspline_desc *d, double knots[3][MAX_KNOTS],
                   struct expected *e) {
  const uint8_t flags = byte(in);
  d->dim = 1 + flags % 3;
  if (flags & 0x08) d->dim = (flags & 0x10) ? 0 : 4;                           /* outside 1..3 */
  if (flags & 0x20) d->size = (flags & 0x40) ? sizeof *d + 8 : sizeof(size_t); /* bad sizes */
  e->valid = d->dim >= 1 && d->dim <= 3 && d->size == sizeof *d;
  for (int k = 0; k < 3; k++) {
    const uint8_t b = byte(in);
    d->degree[k] = b % 10; /* 0 and 9 are refused */
    const uint8_t mode = byte(in);
    if (mode & 1) {
      const int p = d->degree[k] < 1 ? 1 : d->degree[k] > MAX_DEGREE ? MAX_DEGREE : d->degree[k];
      const fea_index m = (mode >> 1) % (2 * p + 2 + MAX_INTERIOR + 1);
      /* Cumulative: a non-decreasing run from increments that are often 0. */
      double x = value(in);
      for (fea_index i = 0; i < m; i++) {
        if (mode & 0x80)
          x = value(in);
        else if (i > 0)
          x += (byte(in) % 4) / 4.0;
        knots[k][i] = x;
      }
      d->knots[k] = knots[k];
      d->num_knots[k] = m;
      if (k < d->dim && !knots_valid(d->degree[k], m, knots[k])) e->valid = 0;
      e->num_knots[k] = m;
      e->elements[k] = spans(m, knots[k]);
    } else {
      d->n[k] = (mode >> 1) % (MAX_N + 1) - ((mode & 0x40) ? MAX_N : 0);
      if (mode & 0x20) d->num_knots[k] = 1; /* knots NULL with a count */
      if (k < d->dim && (d->n[k] < 1 || d->num_knots[k] != 0)) e->valid = 0;
      e->num_knots[k] = d->n[k] + 2 * (fea_index)d->degree[k] + 1;
      e->elements[k] = d->n[k];
    }
    if (k < d->dim && (d->degree[k] < 1 || d->degree[k] > MAX_DEGREE)) e->valid = 0;
    e->degree[k] = d->degree[k];
    const uint8_t box = byte(in);
    if (box & 0x80) {
      d->lower[k] = value(in);
      d->upper[k] = value(in);
    }
    if (k < d->dim &&
        !(isfinite(d->lower[k]) && isfinite(d->upper[k]) && d->lower[k] < d->upper[k]))
      e->valid = 0;
  }
  /* Element sizes, once every direction's knots and box are valid. */
  for (int k = 0; k < d->dim && e->valid; k++) {
    double uni[MAX_N + 2 * MAX_DEGREE + 2];
    const double *t = d->knots[k];
    fea_index m = d->num_knots[k];
    if (!t) {
      m = uniform_knots(d->degree[k], d->n[k], uni);
      t = uni;
    }
    if (!elements_representable(d->dim, m, t, d->lower[k], d->upper[k])) e->valid = 0;
  }
  const uint8_t geometry = byte(in);
  if (geometry == 0xff) {
    /* A geometry descriptor whose size no version has is refused (the
     * geometry's own checks are tests/api/test-geometry.c's). */
    static const fea_geometry_desc bad_size = {1, {1, 1, 1}, {NULL, NULL, NULL}, {0, 0, 0}, NULL,
                                               0, NULL};
    d->geometry = &bad_size;
    e->valid = 0;
  }
}

static void get_knots(const fea_space *s, int dir, double *t, fea_index *m) {
  FUZZ_REQUIRE(fea_space_bspline_get_knots(s, dir, MAX_KNOTS * 4, t, m) == FEA_SUCCESS, "knots");
}

/* The space must be what the descriptor says, in every used direction. */
static void check_space(const fea_space *s, const fea_bspline_desc *d, double knots[3][MAX_KNOTS],
                        const struct expected *e) {
  fea_space_info info = FEA_SPACE_INFO_INIT;
  FUZZ_REQUIRE(fea_space_get_info(s, &info) == FEA_SUCCESS, "info");
  FUZZ_REQUIRE(info.dim == d->dim && info.is_bspline == 1, "dim %d, is_bspline %d", info.dim,
               info.is_bspline);
  fea_index dofs = 1, elements = 1, per_element = 1;
  for (int k = 0; k < d->dim; k++) {
    double t[MAX_KNOTS * 4];
    fea_index m = 0;
    get_knots(s, k, t, &m);
    FUZZ_REQUIRE(m == e->num_knots[k], "direction %d: %lld knots, expected %lld", k, (long long)m,
                 (long long)e->num_knots[k]);
    if (d->knots[k])
      FUZZ_REQUIRE(memcmp(t, knots[k], (size_t)m * sizeof *t) == 0, "direction %d: knots differ",
                   k);
    else
      FUZZ_REQUIRE(knots_valid(e->degree[k], m, t), "direction %d: uniform knots are not open", k);
    FUZZ_REQUIRE(info.degree[k] == e->degree[k], "direction %d: degree %d", k, info.degree[k]);
    FUZZ_REQUIRE(info.elements[k] == e->elements[k], "direction %d: %lld elements, expected %lld",
                 k, (long long)info.elements[k], (long long)e->elements[k]);
    dofs *= m - e->degree[k] - 1;
    elements *= e->elements[k];
    per_element *= e->degree[k] + 1;
  }
  FUZZ_REQUIRE(info.num_dofs == dofs, "%lld DoFs, expected %lld", (long long)info.num_dofs,
               (long long)dofs);
  FUZZ_REQUIRE(info.num_elements == elements, "%lld elements, expected %lld",
               (long long)info.num_elements, (long long)elements);
  FUZZ_REQUIRE(info.dofs_per_element == per_element, "%d DoFs per element, expected %lld",
               info.dofs_per_element, (long long)per_element);
}

/* B-splines sum to one everywhere in the box (partition of unity), which
 * holds whatever the knots: evaluated with all coefficients 1 at the box's
 * corners, its centre and the quarter points of its diagonal, the space must
 * give 1. A knot vector or box whose scale the library cannot represent
 * shows up here as an infinity or NaN. */
static void check_partition_of_unity(fea_space *s, const fea_bspline_desc *d, fea_index dofs) {
  double *ones = malloc((size_t)dofs * sizeof *ones);
  FUZZ_REQUIRE(ones, "out of memory");
  for (fea_index i = 0; i < dofs; i++) ones[i] = 1.0;
  static const double at[] = {0.0, 0.25, 0.5, 0.75, 1.0};
  enum { NP = sizeof at / sizeof *at };
  double points[NP * 3], values[NP];
  for (int i = 0; i < NP; i++)
    for (int k = 0; k < d->dim; k++) /* lower (1 - f) + upper f cannot overflow */
      points[i * d->dim + k] = d->lower[k] * (1.0 - at[i]) + d->upper[k] * at[i];
  const fea_status st = fea_space_evaluate(s, ones, NP, points, values, NULL);
  FUZZ_REQUIRE(st == FEA_SUCCESS, "evaluation inside the box gave %d", st);
  for (int i = 0; i < NP; i++)
    FUZZ_REQUIRE(fabs(values[i] - 1.0) <= 1e-10, "the basis sums to %.17g at point %d (f = %g)",
                 values[i], i, at[i]);
  free(ones);
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Knots inserted in one direction: accepted exactly when each lies strictly
 * inside the range, no interior multiplicity exceeds the degree and the
 * elements stay representable; the space is unchanged either way. */
static void insert_knots(const fea_space *s, const fea_bspline_desc *d, int dir, int p,
                         struct input *in) {
  double old[MAX_KNOTS * 4], now[MAX_KNOTS * 4], add[8];
  fea_index m = 0, m2 = 0;
  get_knots(s, dir, old, &m);
  const fea_index count = byte(in) % 9;
  for (fea_index i = 0; i < count; i++) {
    const uint8_t b = byte(in);
    /* Mostly a knot already there or a midpoint, so multiplicities rise. */
    add[i] = b < 128 ? old[b % m] : b < 224 ? 0.5 * (old[b % m] + old[(b + 1) % m]) : value(in);
  }
  int valid = 1;
  for (fea_index i = 0; i < count; i++) {
    if (!(add[i] > old[0] && add[i] < old[m - 1])) valid = 0;
    fea_index mult = 0;
    for (fea_index j = 0; j < m; j++) mult += old[j] == add[i];
    for (fea_index j = 0; j < count; j++) mult += add[j] == add[i];
    if (mult > p) valid = 0;
  }
  if (valid) {
    double merged[MAX_KNOTS * 4 + 8];
    memcpy(merged, old, (size_t)m * sizeof *old);
    memcpy(merged + m, add, (size_t)count * sizeof *add);
    qsort(merged, (size_t)(m + count), sizeof *merged, cmp_double);
    valid = elements_representable(d->dim, m + count, merged, d->lower[dir], d->upper[dir]);
  }
  fea_space *fine = (fea_space *)in;
  const fea_status st = fea_space_bspline_insert_knots(s, dir, count, add, &fine);
  FUZZ_REQUIRE((st == FEA_SUCCESS) == valid, "inserting %lld knots gave %d, expected %s",
               (long long)count, st, valid ? "success" : "a refusal");
  get_knots(s, dir, now, &m2);
  FUZZ_REQUIRE(m2 == m && memcmp(old, now, (size_t)m * sizeof *old) == 0,
               "knot insertion changed the coarse space");
  if (st != FEA_SUCCESS) {
    FUZZ_REQUIRE(st == FEA_ERR_INVALID_ARG && fine == NULL, "refusal %d", st);
    return;
  }
  get_knots(fine, dir, now, &m2);
  FUZZ_REQUIRE(m2 == m + count && knots_valid(p, m2, now), "%lld knots after inserting %lld",
               (long long)m2, (long long)count);
  fea_space_destroy(&fine);
}

static void elevate(const fea_space *s, int dir, int p, struct input *in) {
  const int t = byte(in) % 4;
  fea_space *high = (fea_space *)in;
  const fea_status st = fea_space_bspline_elevate_degree(s, dir, t, &high);
  FUZZ_REQUIRE((st == FEA_SUCCESS) == (p + t <= MAX_DEGREE), "raising %d by %d gave %d", p, t, st);
  if (st != FEA_SUCCESS) {
    FUZZ_REQUIRE(high == NULL, "refusal left the handle set");
    return;
  }
  fea_space_info info = FEA_SPACE_INFO_INIT;
  FUZZ_REQUIRE(fea_space_get_info(high, &info) == FEA_SUCCESS, "info");
  FUZZ_REQUIRE(info.degree[dir] == p + t, "degree %d after raising %d by %d", info.degree[dir], p,
               t);
  fea_space_destroy(&high);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fea_context *ctx = fuzz_context();
  struct input in = {data, size};
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  double knots[3][MAX_KNOTS];
  struct expected e;
  memset(&e, 0, sizeof e);
  decode(&in, &d, knots, &e);

  fea_space *s = (fea_space *)&in;
  const fea_status st = fea_space_create_bspline(ctx, &d, &s);
  FUZZ_REQUIRE((st == FEA_SUCCESS) == e.valid, "creation gave %d (%s), expected %s", st,
               fea_context_last_error(ctx), e.valid ? "success" : "a refusal");
  if (st != FEA_SUCCESS) {
    FUZZ_REQUIRE(s == NULL, "refusal left the handle set");
    FUZZ_REQUIRE(st == FEA_ERR_INVALID_ARG || st == FEA_ERR_UNSUPPORTED, "refusal %d", st);
    FUZZ_REQUIRE(strlen(fea_context_last_error(ctx)) > 0, "refusal without a message");
    return 0;
  }
  check_space(s, &d, knots, &e);
  fea_space_info info = FEA_SPACE_INFO_INIT;
  FUZZ_REQUIRE(fea_space_get_info(s, &info) == FEA_SUCCESS, "info");
  check_partition_of_unity(s, &d, info.num_dofs);
  const int dir = byte(&in) % d.dim;
  insert_knots(s, &d, dir, e.degree[dir], &in);
  elevate(s, dir, e.degree[dir], &in);
  fea_space_destroy(&s);
  return 0;
}
