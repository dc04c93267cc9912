/* Univariate B-splines: knot-vector validation, Cox-de Boor values and
 * derivatives, Greville points, and the knot operations of h-, p- and
 * k-refinement with the transfer matrix between nested spaces.
 *
 * References: C. de Boor, A Practical Guide to Splines (2001), ch. IX-X;
 * L. Piegl and W. Tiller, The NURBS Book (1997), ch. 2 and 5. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/blas.h"
#include "bspline.h"
#include "internal/error.h"
#include "base/memory-limit.h"

/* Knots closer than this (relative to the parameter range) are the same
 * knot when nesting is checked, so a knot computed as 3 * 0.1 in one vector
 * matches 0.3 in the other. */
#define NEST_TOL 1e-12

/* Largest knot vector accepted: far above any mesh that fits in memory, and
 * low enough that no size computation below overflows. */
#define MAX_KNOTS ((fea_index)1 << 40)

/* The shortest decimal form that reads back as x, for messages. */
static const char *fmt_knot(char buf[32], double x) {
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, 32, "%.*g", prec, x);
    if (strtod(buf, NULL) == x) break;
  }
  return buf;
}

/* "knot vector" or "knot vector of direction 1". */
static void describe(char what[48], int dir) {
  if (dir >= 0)
    snprintf(what, 48, "knot vector of direction %d", dir);
  else
    snprintf(what, 48, "knot vector");
}

fea_status fea_knots_check(const fea_context *ctx, int dir, int p, fea_index m, const double *t) {
  char what[48], where[32] = "", a[32], b[32];
  describe(what, dir);
  if (dir >= 0) snprintf(where, sizeof where, " in direction %d", dir);
  FEA_CHECK(p >= 1 && p <= FEA_BSPLINE_MAX_DEGREE, ctx, FEA_ERR_INVALID_ARG,
            "degree %d%s is outside 1..%d", p, where, FEA_BSPLINE_MAX_DEGREE);
  FEA_CHECK(t != NULL, ctx, FEA_ERR_INVALID_ARG, "%s is NULL", what);
  FEA_CHECK(m >= 2 * (fea_index)p + 2 && m <= MAX_KNOTS, ctx, FEA_ERR_INVALID_ARG,
            "%s has %lld knots; degree %d needs %lld..%lld (2p + 2 for one element)", what,
            (long long)m, p, (long long)(2 * p + 2), (long long)MAX_KNOTS);
  for (fea_index i = 0; i < m; i++)
    FEA_CHECK(isfinite(t[i]), ctx, FEA_ERR_INVALID_ARG, "%s has a non-finite knot %g at index %lld",
              what, t[i], (long long)i);
  for (fea_index i = 1; i < m; i++)
    FEA_CHECK(t[i] >= t[i - 1], ctx, FEA_ERR_INVALID_ARG,
              "%s is not non-decreasing at index %lld (%s after %s)", what, (long long)i,
              fmt_knot(a, t[i]), fmt_knot(b, t[i - 1]));
  /* Open ends: exactly p + 1 equal knots at each end, so the end functions
   * interpolate and the parameter range is [t[0], t[m-1]]. */
  fea_index first = 1, last = 1;
  while (first < m && t[first] == t[0]) first++;
  while (last < m && t[m - 1 - last] == t[m - 1]) last++;
  FEA_CHECK(first == p + 1, ctx, FEA_ERR_INVALID_ARG,
            "%s is not open: the first knot %s has multiplicity %lld, expected p + 1 = %d", what,
            fmt_knot(a, t[0]), (long long)first, p + 1);
  FEA_CHECK(last == p + 1, ctx, FEA_ERR_INVALID_ARG,
            "%s is not open: the last knot %s has multiplicity %lld, expected p + 1 = %d", what,
            fmt_knot(a, t[m - 1]), (long long)last, p + 1);
  /* An interior knot of multiplicity r lowers the continuity to C^(p-r); r = p + 1
   * would be a C^-1 break that splits the patch into decoupled pieces. */
  for (fea_index i = p + 1; i < m - p - 1;) {
    fea_index j = i + 1;
    while (j < m - p - 1 && t[j] == t[i]) j++;
    FEA_CHECK(j - i <= p, ctx, FEA_ERR_INVALID_ARG,
              "%s: interior knot %s at index %lld has multiplicity %lld, above the degree %d "
              "(p + 1 would split the patch)",
              what, fmt_knot(a, t[i]), (long long)i, (long long)(j - i), p);
    i = j;
  }
  return FEA_SUCCESS;
}

/* Take ownership of a checked knot array t and index its non-empty spans. */
static fea_status adopt(const fea_context *ctx, int p, fea_index m, double *t, fea_knots *out) {
  fea_index nelem = 0;
  for (fea_index s = p; s < m - p - 1; s++) nelem += t[s] < t[s + 1];
  fea_index *span = malloc((size_t)nelem * sizeof *span);
  if (!span) {
    free(t);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld knot spans", (long long)nelem);
  }
  for (fea_index s = p, e = 0; s < m - p - 1; s++)
    if (t[s] < t[s + 1]) span[e++] = s;
  out->p = p;
  out->m = m;
  out->t = t;
  out->nelem = nelem;
  out->span = span;
  return FEA_SUCCESS;
}

fea_status fea_knots_create(const fea_context *ctx, int p, fea_index m, const double *t,
                            fea_knots *out) {
  memset(out, 0, sizeof *out);
  FEA_CALL(fea_knots_check(ctx, -1, p, m, t));
  double *copy = malloc((size_t)m * sizeof *copy);
  FEA_CHECK(copy, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld knots", (long long)m);
  memcpy(copy, t, (size_t)m * sizeof *copy);
  return adopt(ctx, p, m, copy, out);
}

fea_status fea_knots_uniform(const fea_context *ctx, int p, fea_index nelem, double a, double b,
                             fea_knots *out) {
  memset(out, 0, sizeof *out);
  char sa[32], sb[32];
  FEA_CHECK(p >= 1 && p <= FEA_BSPLINE_MAX_DEGREE, ctx, FEA_ERR_INVALID_ARG,
            "degree %d is outside 1..%d", p, FEA_BSPLINE_MAX_DEGREE);
  FEA_CHECK(nelem >= 1 && nelem <= MAX_KNOTS / 2, ctx, FEA_ERR_INVALID_ARG,
            "%lld elements requested; 1..%lld are possible", (long long)nelem,
            (long long)(MAX_KNOTS / 2));
  FEA_CHECK(isfinite(a) && isfinite(b) && a < b, ctx, FEA_ERR_INVALID_ARG,
            "the parameter range [%s, %s] is not a finite interval with lower < upper",
            fmt_knot(sa, a), fmt_knot(sb, b));
  fea_index m = nelem + 2 * (fea_index)p + 1;
  /* The knots and the element spans, against the memory budget first. */
  char what[64];
  snprintf(what, sizeof what, "a knot vector of %lld knots", (long long)m);
  FEA_CALL(fea_memory_require(ctx, 0, fea_bytes((double)m, sizeof(double) + sizeof(fea_index)),
                              what));
  double *t = malloc((size_t)m * sizeof *t);
  FEA_CHECK(t, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld knots", (long long)m);
  for (int i = 0; i <= p; i++) {
    t[i] = a;
    t[m - 1 - i] = b;
  }
  /* i / nelem is correctly rounded, so a refinement with k * nelem elements
   * reproduces these knots bit for bit (nesting is then exact). */
  for (fea_index i = 1; i < nelem; i++) t[p + i] = a + (b - a) * ((double)i / (double)nelem);
  /* Rounding could merge neighbours of a huge, narrow range: check. */
  fea_status st = fea_knots_check(ctx, -1, p, m, t);
  if (st != FEA_SUCCESS) {
    free(t);
    return st;
  }
  return adopt(ctx, p, m, t, out);
}

void fea_knots_free(fea_knots *k) {
  if (!k) return;
  free(k->t);
  free(k->span);
  memset(k, 0, sizeof *k);
}

fea_index fea_knots_num_functions(const fea_knots *k) { return k->m - k->p - 1; }

fea_index fea_knots_find_span(const fea_knots *k, double x) {
  fea_index n = fea_knots_num_functions(k);
  const double *t = k->t;
  /* Clamp to the parameter range; the right end belongs to the last span. */
  if (!(x > t[k->p])) return k->p;
  if (x >= t[n]) return n - 1;
  /* Invariant: t[lo] <= x < t[hi]. */
  fea_index lo = k->p, hi = n;
  while (hi - lo > 1) {
    fea_index mid = lo + (hi - lo) / 2;
    if (x < t[mid])
      hi = mid;
    else
      lo = mid;
  }
  return lo;
}

void fea_bspline_basis_ders(const fea_knots *k, fea_index s, double x, int nder, double *ders) {
  enum { P1 = FEA_BSPLINE_MAX_DEGREE + 1 };
  const int p = k->p;
  const double *t = k->t;
  /* N[d][j] = N_{s-d+j, d}(x), j = 0..d: the non-zero functions of each
   * degree d on span s. The divisors below are sums of span lengths that
   * include span s, hence positive. */
  double N[P1][P1];
  N[0][0] = 1.0;
  for (int d = 1; d <= p; d++)
    for (int j = 0; j <= d; j++) {
      fea_index i = s - d + j;
      double v = 0.0;
      if (j > 0) v += (x - t[i]) / (t[i + d] - t[i]) * N[d - 1][j - 1];
      if (j < d) v += (t[i + d + 1] - x) / (t[i + d + 1] - t[i + 1]) * N[d - 1][j];
      N[d][j] = v;
    }
  for (int j = 0; j <= p; j++) ders[j] = N[p][j];
  /* The r-th degree derivative rule N'_{i,r} = r N_{i,r-1} / (t_{i+r} - t_i)
   * - r N_{i+1,r-1} / (t_{i+r+1} - t_{i+1}) is linear in the degree-(r-1)
   * functions, so the kd-th derivative is that rule applied kd times to the
   * degree p - kd values, from degree p - kd + 1 up to p. */
  for (int kd = 1; kd <= nder; kd++) {
    double *out = ders + (size_t)kd * (size_t)(p + 1);
    if (kd > p) {
      for (int j = 0; j <= p; j++) out[j] = 0.0;
      continue;
    }
    double v[P1], w[P1];
    for (int j = 0; j <= p - kd; j++) v[j] = N[p - kd][j];
    for (int r = p - kd + 1; r <= p; r++) {
      for (int j = 0; j <= r; j++) {
        fea_index i = s - r + j;
        double d = 0.0;
        if (j > 0) d += v[j - 1] / (t[i + r] - t[i]);
        if (j < r) d -= v[j] / (t[i + r + 1] - t[i + 1]);
        w[j] = r * d;
      }
      memcpy(v, w, (size_t)(r + 1) * sizeof *v);
    }
    memcpy(out, v, (size_t)(p + 1) * sizeof *v);
  }
}

void fea_bspline_basis_ders1_points(const fea_knots *k, fea_index s, int npts, const double *x,
                                    int ld, double *ders) {
  enum { P1 = FEA_BSPLINE_MAX_DEGREE + 1 };
  const int p = k->p;
  const double *t = k->t;
  /* inv[d][j] = 1 / (t[s+j+1] - t[s-d+j+1]): the divisor of the right term
   * of N[d][j] and of the left term of N[d][j+1] (as in
   * fea_bspline_basis_ders), and for d = p those of the derivative rule. */
  double inv[P1][P1];
  for (int d = 1; d <= p; d++)
    for (int j = 0; j < d; j++) inv[d][j] = 1.0 / (t[s + j + 1] - t[s - d + j + 1]);
  for (int q = 0; q < npts; q++) {
    const double xq = x[q];
    double *out = ders + (size_t)q * (size_t)ld;
    double N[P1][P1];
    N[0][0] = 1.0;
    for (int d = 1; d <= p; d++)
      for (int j = 0; j <= d; j++) {
        double v = 0.0;
        if (j > 0) v += (xq - t[s - d + j]) * inv[d][j - 1] * N[d - 1][j - 1];
        if (j < d) v += (t[s + j + 1] - xq) * inv[d][j] * N[d - 1][j];
        N[d][j] = v;
      }
    for (int j = 0; j <= p; j++) {
      out[j] = N[p][j];
      double dv = 0.0;
      if (p > 0 && j > 0) dv += N[p - 1][j - 1] * inv[p][j - 1];
      if (p > 0 && j < p) dv -= N[p - 1][j] * inv[p][j];
      out[p + 1 + j] = p * dv;
    }
  }
}

void fea_knots_greville(const fea_knots *k, double *g) {
  fea_index n = fea_knots_num_functions(k);
  const double *t = k->t;
  for (fea_index i = 0; i < n; i++) {
    /* As an offset from t[i+1], so that p equal knots give that knot exactly. */
    double sum = 0.0;
    for (int j = 2; j <= k->p; j++) sum += t[i + j] - t[i + 1];
    double gi = t[i + 1] + sum / k->p;
    g[i] = fmin(fmax(gi, t[0]), t[k->m - 1]);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

fea_status fea_knots_insert(const fea_context *ctx, const fea_knots *k, fea_index count,
                            const double *x, fea_knots *out) {
  memset(out, 0, sizeof *out);
  char sa[32], sb[32], sc[32];
  const double lo = k->t[0], hi = k->t[k->m - 1];
  FEA_CHECK(count >= 0 && count <= MAX_KNOTS - k->m, ctx, FEA_ERR_INVALID_ARG,
            "knot count %lld is outside 0..%lld", (long long)count, (long long)(MAX_KNOTS - k->m));
  FEA_CHECK(x || count == 0, ctx, FEA_ERR_INVALID_ARG, "the knots to insert are NULL");
  for (fea_index i = 0; i < count; i++)
    FEA_CHECK(x[i] > lo && x[i] < hi, ctx, FEA_ERR_INVALID_ARG,
              "knot %s (entry %lld) is not strictly inside the parameter range (%s, %s)",
              fmt_knot(sa, x[i]), (long long)i, fmt_knot(sb, lo), fmt_knot(sc, hi));
  fea_index m = k->m + count;
  double *add = malloc((size_t)(count > 0 ? count : 1) * sizeof *add);
  double *t = malloc((size_t)m * sizeof *t);
  if (!add || !t) {
    free(add);
    free(t);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld knots", (long long)m);
  }
  if (count) memcpy(add, x, (size_t)count * sizeof *add);
  qsort(add, (size_t)count, sizeof *add, cmp_double);
  for (fea_index i = 0, j = 0, o = 0; o < m; o++)
    t[o] = (j >= count || (i < k->m && k->t[i] <= add[j])) ? k->t[i++] : add[j++];
  free(add);
  /* The old vector was valid, so an interior run above p holds inserted knots. */
  for (fea_index i = k->p + 1; i < m - k->p - 1;) {
    fea_index j = i + 1;
    while (j < m - k->p - 1 && t[j] == t[i]) j++;
    if (j - i > k->p) {
      fea_status st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                                "inserting %s would raise its multiplicity to %lld, above the "
                                "degree %d",
                                fmt_knot(sa, t[i]), (long long)(j - i), k->p);
      free(t);
      return st;
    }
    i = j;
  }
  return adopt(ctx, k->p, m, t, out);
}

fea_status fea_knots_elevate(const fea_context *ctx, const fea_knots *k, int t, fea_knots *out) {
  memset(out, 0, sizeof *out);
  FEA_CHECK(t >= 0 && t <= FEA_BSPLINE_MAX_DEGREE - k->p, ctx, FEA_ERR_INVALID_ARG,
            "raising degree %d by %d gives %lld, outside 1..%d", k->p, t, (long long)k->p + t,
            FEA_BSPLINE_MAX_DEGREE);
  fea_index distinct = 1;
  for (fea_index i = 1; i < k->m; i++) distinct += k->t[i] != k->t[i - 1];
  fea_index m = k->m + (fea_index)t * distinct;
  double *nt = malloc((size_t)m * sizeof *nt);
  FEA_CHECK(nt, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld knots", (long long)m);
  /* Each distinct knot gains t copies: the continuity C^(p-mult) is kept. */
  fea_index o = 0;
  for (fea_index i = 0; i < k->m; i++) {
    nt[o++] = k->t[i];
    if (i + 1 == k->m || k->t[i + 1] != k->t[i])
      for (int r = 0; r < t; r++) nt[o++] = k->t[i];
  }
  return adopt(ctx, k->p + t, m, nt, out);
}

/* The coarse space is contained in the fine one when the fine degree is not
 * lower, the ends agree, and every coarse knot keeps its continuity in the fine
 * vector: multiplicity at least mult + (p_fine - p_coarse). */
fea_status fea_knots_check_nested(const fea_context *ctx, int dir, const fea_knots *c,
                                  const fea_knots *f) {
  char sa[32], where[32] = "";
  if (dir >= 0) snprintf(where, sizeof where, " in direction %d", dir);
  FEA_CHECK(f->p >= c->p, ctx, FEA_ERR_INVALID_ARG,
            "the fine space does not contain the coarse one%s: fine degree %d is below coarse "
            "degree %d",
            where, f->p, c->p);
  double c0 = c->t[0], c1 = c->t[c->m - 1], f0 = f->t[0], f1 = f->t[f->m - 1];
  double tol = NEST_TOL * (c1 - c0);
  FEA_CHECK(fabs(c0 - f0) <= tol && fabs(c1 - f1) <= tol, ctx, FEA_ERR_INVALID_ARG,
            "the fine space does not contain the coarse one%s: parameter ranges [%g, %g] and "
            "[%g, %g] differ",
            where, c0, c1, f0, f1);
  int raise = f->p - c->p;
  fea_index j = 0; /* fine knots below the current coarse knot are skipped */
  for (fea_index i = c->p + 1; i < c->m - c->p - 1;) {
    fea_index i2 = i + 1;
    while (i2 < c->m && c->t[i2] == c->t[i]) i2++;
    double v = c->t[i];
    while (j < f->m && f->t[j] < v - tol) j++;
    fea_index mult = 0;
    while (j + mult < f->m && f->t[j + mult] <= v + tol) mult++;
    FEA_CHECK(mult >= (i2 - i) + raise, ctx, FEA_ERR_INVALID_ARG,
              "the fine space does not contain the coarse one%s: coarse knot %s (index %lld) "
              "appears %lld times in the fine knot vector, nesting needs %lld (multiplicity "
              "%lld + degree raise %d)",
              where, fmt_knot(sa, v), (long long)i, (long long)mult, (long long)(i2 - i + raise),
              (long long)(i2 - i), raise);
    i = i2;
  }
  return FEA_SUCCESS;
}

fea_status fea_knots_greville_solve(const fea_context *ctx, const fea_knots *k, fea_index nrhs,
                                    double *b, fea_index ldb) {
  const fea_index n = fea_knots_num_functions(k);
  const int p = k->p, kl = p, ku = p, ldab = 2 * kl + ku + 1;
  /* LAPACK indexes with its 32-bit integers, also into ab and b. */
  FEA_CHECK(ldb >= n && (fea_index)ldab * n <= FEA_BLAS_MAX_INT && nrhs <= FEA_BLAS_MAX_INT / ldb,
            ctx, FEA_ERR_UNSUPPORTED,
            "%lld functions and %lld right-hand sides exceed the 32-bit integers of this LAPACK",
            (long long)n, (long long)nrhs);
  if (nrhs == 0) return FEA_SUCCESS;
  double *ab = calloc((size_t)ldab * (size_t)n, sizeof *ab);
  double *g = malloc((size_t)n * sizeof *g);
  lapack_int *ipiv = malloc((size_t)n * sizeof *ipiv);
  if (!ab || !g || !ipiv) {
    free(ab);
    free(g);
    free(ipiv);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a %lld x %lld band matrix",
                     (long long)n, (long long)n);
  }
  /* Row i is the point g_i; its non-zero columns span - p..span lie within
   * i - p..i + p (Schoenberg-Whitney: N_i(g_i) > 0), hence kl = ku = p. */
  fea_knots_greville(k, g);
  double vals[FEA_BSPLINE_MAX_DEGREE + 1];
  for (fea_index i = 0; i < n; i++) {
    fea_index s = fea_knots_find_span(k, g[i]);
    fea_bspline_basis_ders(k, s, g[i], 0, vals);
    for (int j = 0; j <= p; j++) {
      fea_index col = s - p + j;
      ab[(size_t)(kl + ku + i - col) + (size_t)col * (size_t)ldab] = vals[j];
    }
  }
  lapack_int info = LAPACKE_dgbsv(LAPACK_COL_MAJOR, (lapack_int)n, kl, ku, (lapack_int)nrhs, ab,
                                  ldab, ipiv, b, (lapack_int)ldb);
  free(ab);
  free(g);
  free(ipiv);
  FEA_CHECK(info == 0, ctx, info > 0 ? FEA_ERR_SINGULAR : FEA_ERR_BACKEND,
            "LAPACK dgbsv failed on the %lld x %lld Greville collocation matrix (info %d)",
            (long long)n, (long long)n, (int)info);
  return FEA_SUCCESS;
}

fea_status fea_knots_transfer_matrix(const fea_context *ctx, const fea_knots *coarse,
                                     const fea_knots *fine, double *T) {
  FEA_CALL(fea_knots_check_nested(ctx, -1, coarse, fine));
  const fea_index nc = fea_knots_num_functions(coarse), nf = fea_knots_num_functions(fine);
  const int pc = coarse->p, pf = fine->p;
  double *g = malloc((size_t)nf * sizeof *g);
  FEA_CHECK(g, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld Greville points", (long long)nf);
  /* Collocation: N_fine(g) T = N_coarse(g) at the fine Greville points g,
   * which determines T because N_fine(g) is nonsingular and every coarse
   * function is a combination of fine ones. */
  memset(T, 0, (size_t)nf * (size_t)nc * sizeof *T);
  fea_knots_greville(fine, g);
  double vals[FEA_BSPLINE_MAX_DEGREE + 1];
  for (fea_index i = 0; i < nf; i++) {
    fea_index s = fea_knots_find_span(coarse, g[i]);
    fea_bspline_basis_ders(coarse, s, g[i], 0, vals);
    for (int j = 0; j <= pc; j++) T[i + (s - pc + j) * nf] = vals[j];
  }
  free(g);
  FEA_CALL(fea_knots_greville_solve(ctx, fine, nc, T, nf));
  /* T_ij is exactly zero unless fine function i's support lies inside coarse
   * function j's (the coefficient is a dual functional of N_j on any one span
   * of that support); clear the rounding noise there. */
  double tol = NEST_TOL * (coarse->t[coarse->m - 1] - coarse->t[0]);
  for (fea_index j = 0; j < nc; j++) {
    double a = coarse->t[j] - tol, b = coarse->t[j + pc + 1] + tol;
    for (fea_index i = 0; i < nf; i++)
      if (fine->t[i] < a || fine->t[i + pf + 1] > b) T[i + j * nf] = 0.0;
  }
  return FEA_SUCCESS;
}

fea_status fea_knots_transfer_apply(const fea_context *ctx, int dir, const fea_knots *coarse,
                                    const fea_knots *fine, fea_index nlines, const double *x,
                                    double *y) {
  FEA_CALL(fea_knots_check_nested(ctx, dir, coarse, fine));
  const fea_index nc = fea_knots_num_functions(coarse), nf = fea_knots_num_functions(fine);
  const int pc = coarse->p;
  double *g = malloc((size_t)nf * sizeof *g);
  double *vals = malloc((size_t)nf * (size_t)(pc + 1) * sizeof *vals);
  fea_index *first = malloc((size_t)nf * sizeof *first);
  if (!g || !vals || !first) {
    free(g);
    free(vals);
    free(first);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld Greville points",
                     (long long)nf);
  }
  /* The same collocation as the matrix, applied to the lines without forming
   * T: y = N_fine(g)^-1 (N_coarse(g) x). */
  fea_knots_greville(fine, g);
  for (fea_index i = 0; i < nf; i++) {
    fea_index s = fea_knots_find_span(coarse, g[i]);
    fea_bspline_basis_ders(coarse, s, g[i], 0, vals + i * (pc + 1));
    first[i] = s - pc;
  }
  for (fea_index l = 0; l < nlines; l++) {
    const double *xl = x + l * nc;
    double *yl = y + l * nf;
    for (fea_index i = 0; i < nf; i++) {
      double sum = 0.0;
      for (int j = 0; j <= pc; j++) sum += vals[i * (pc + 1) + j] * xl[first[i] + j];
      yl[i] = sum;
    }
  }
  free(g);
  free(vals);
  free(first);
  return fea_knots_greville_solve(ctx, fine, nlines, y, nf);
}
